import Datastore

extension ObjectsController {
  /// forum's remote engine's writes on NCMB's own calls (`X-Forum-Wire: 1`): `POST classes/C`,
  /// `PUT classes/C/ID`, `DELETE classes/C/ID` and a user's `PUT`/`DELETE users/ID`, each run
  /// as the engine's own insert, update or delete, as on a local board. The body holds the
  /// values as the engine holds them (no pointer rewritten), as deep and as big as the engine
  /// takes (`ForumExtensionsController.largestBody`); no default ACL is added, the engine
  /// refuses what it refuses with its reason (`NCMBService`'s wire refusal), and a written
  /// object is answered whole, its rules' fields too (NCMB answers only its id and a date).
  /// Anyone with the keys may send the header: the application's limits hold all the same
  /// (`NCMBPolicy.engineObject`), and the storage per user (`withinStorage`).
  static func engineWrite(_ call: NCMBCall, _ className: String, _ objectId: String?) throws
    -> HTTPResponse
  {
    let client = call.client
    switch (call.method, objectId) {
    case ("POST", nil):
      var fields = try wireBody(call)
      let acl = try fields.removeValue(forKey: "acl").map(ACL.init(json:))
      fields = try engineChecked(call, className, fields, nil)
      let object = try withinStorage(call) {
        try client.create(className, fields: fields, acl: acl)
      }
      return NCMBService.json(object.wire, status: 201)
    case ("PUT", let id?):
      var update = try NCMBUpdate(body: try wireBody(call), stored: { $0 })
      try check(
        &update, stored: { try client.get(className, objectId: id) },
        policy: { try engineChecked(call, className, $0, id) })
      let object = try withinStorage(call) {
        try client.update(
          className, objectId: id, set: update.set, increment: update.increments,
          arrays: update.arrays, acl: update.acl)
      }
      return NCMBService.json(object.wire)
    case ("DELETE", let id?):
      try client.delete(className, objectId: id)
      return NCMBService.deleted
    default:
      throw NCMBError.method
    }
  }

  /// `fields` of an object of `className` as the application's checks on forum's remote
  /// engine leave them (`NCMBPolicy.engineObject`).
  static func engineChecked(
    _ call: NCMBCall, _ className: String, _ fields: [String: JSONValue], _ objectId: String?
  ) throws -> [String: JSONValue] {
    try call.policy.checkedEngineObject(className, fields, objectId, call.client)
  }

  /// A write's body in the board's wire (`Wire.parse`: the engine's depth, not NCMB's 32).
  private static func wireBody(_ call: NCMBCall) throws -> [String: JSONValue] {
    let body = call.request.body
    if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return [:] }
    guard case .object(let fields)? = try? Wire.parse(body) else { throw NCMBError.invalidJSON }
    return fields
  }
}
