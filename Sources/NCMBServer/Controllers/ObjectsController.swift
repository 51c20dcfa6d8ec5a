import Datastore

/// `classes/CLASS[/ID]`: an app's objects (find, create, get, update, delete).
struct ObjectsController: NCMBController {
  /// NCMB's own classes, reached through their own paths only.
  static let systemClasses: Set<String> = ["user", "role", "file", "installation", "push"]

  /// Fields an app sends that are the datastore's: dropped as NCMB did (the Python SDK sends
  /// `createDate` back on every update).
  static let systemFields: Set<String> = ["objectId", "createDate", "updateDate"]

  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let className = call.route.names[0]
    guard !ObjectsController.systemClasses.contains(className) else { throw NCMBError.notFound }
    let objectId = call.route.names.count == 2 ? call.route.names[1] : nil
    if call.answersInWire, call.method != "GET" {
      return try ObjectsController.engineWrite(call, className, objectId)
    }
    let client = call.client
    switch (call.method, objectId) {
    case ("GET", nil):
      return try ObjectsController.search(call, className)
    case ("POST", nil):
      return try create(call, className)
    case ("GET", let id?):
      let parameters = try call.parameters.values()
      let include = parameters["include"].map { $0.split(separator: ",").map(String.init) } ?? []
      guard include.isEmpty else {
        guard let object = try client.get(className, objectIds: [id], include: include).first
        else { throw NCMBError.notFound }
        return NCMBService.json(ObjectsController.shape(object, call))
      }
      var body: [UInt8] = []
      if call.answersInWire {
        body = try client.get(className, objectId: id).wire.jsonBytes()
      } else {
        try client.get(className, objectId: id, writing: call.policy.shape, to: &body)
      }
      return NCMBService.json(bytes: body)
    case ("PUT", let id?):
      return try update(call, className, id)
    case ("DELETE", let id?):
      try client.delete(className, objectId: id)
      return NCMBService.deleted
    default:
      throw NCMBError.method
    }
  }

  /// A find (`where`, `order`, `limit`, `skip`, `count`, `include`) over `className`.
  static func search(_ call: NCMBCall, _ className: String) throws -> HTTPResponse {
    let parameters = try call.parameters.values()
    let client = call.client
    let policy = call.policy
    let subqueries = NCMBQuery.Subqueries(
      find: { try client.find($0) },
      get: { className, objectId in
        do {
          return try client.get(className, objectId: objectId)
        } catch let error as DatastoreError where error.code == .notFound {
          return nil
        }
      },
      dates: { policy.millisecondDates($0) })
    let search = try NCMBQuery.query(
      className: className, parameters, dates: call.policy.millisecondDates(className),
      subqueries: subqueries)
    // The objects written as they are read, straight from their stored text where they can be
    // (`DatastoreClient.find(_:writing:to:)`).
    var results: [UInt8] = []
    let found: [String]
    if search.listsNothing {
      found = []
    } else if call.answersInWire {
      let objects = try client.find(search.query)
      results = Array(JSONValue.array(objects.map(\.wire)).jsonBytes().dropFirst().dropLast())
      found = objects.map(\.objectId)
    } else {
      // Room for a usual page; a `limit=1000` that finds little reserves no half-megabyte.
      results.reserveCapacity(min(search.query.limit, 100) * 512)
      found = try client.find(search.query, writing: policy.shape, to: &results)
    }
    let count = search.withCount ? try call.client.count(search.query) : nil
    let unread = try search.unreadUpTo.map { limit in
      try call.client.unread(className, objectIds: found, countUpTo: limit)
    }
    // Written as `JSONValue.jsonBytes` would write the answer (its keys sorted: count, results,
    // unread).
    var body: [UInt8] = []
    body.reserveCapacity(64 + results.count)
    body.append(contentsOf: "{".utf8)
    if let count { body.append(contentsOf: "\"count\":\(count),".utf8) }
    body.append(contentsOf: "\"results\":[".utf8)
    body.append(contentsOf: results)
    body.append(UInt8(ascii: "]"))
    if let unread {
      body.append(contentsOf: ",\"unread\":".utf8)
      body.append(contentsOf: JSONValue.object(unread.mapValues(\.wire)).jsonBytes())
    }
    body.append(UInt8(ascii: "}"))
    // The read cache counts what a body holds room for: many small objects leave much unused.
    if body.capacity > body.count + body.count / 4 { body = Array(body[...]) }
    return NCMBService.json(bytes: body)
  }

  /// An object as the caller reads it: NCMB's shape for an app, the board's wire shape for
  /// forum's remote engine (`NCMBCall.answersInWire`).
  static func shape(_ object: DataObject, _ call: NCMBCall) -> JSONValue {
    call.answersInWire ? object.wire : NCMBJSON.object(object, call.policy)
  }

  private func create(_ call: NCMBCall, _ className: String) throws -> HTTPResponse {
    let client = call.client
    var fields = try NCMBJSON.object(call.request.body)
    let acl = try fields.removeValue(forKey: "acl").map(ACL.init(json:))
    for field in ObjectsController.systemFields { fields[field] = nil }
    fields = try fields.mapValues(NCMBJSON.stored)
    fields = try call.policy.checkedObject(className, fields, nil, client)
    // A class whose objects have an author: unless the app says otherwise, everyone reads and
    // the author alone writes (the backend's public read and write would be refused).
    var given = acl
    if given == nil, client.store.rules.owner(of: className) != nil, let userId = client.userId {
      given = .publicRead(owner: userId)
    }
    let object = try ObjectsController.withinStorage(call) {
      try client.create(className, fields: fields, acl: given)
    }
    return NCMBService.json(
      .object([
        "objectId": .string(object.objectId), "createDate": NCMBJSON.date(object.createDate),
      ]), status: 201)
  }

  private func update(_ call: NCMBCall, _ className: String, _ objectId: String) throws
    -> HTTPResponse
  {
    var fields = try NCMBJSON.object(call.request.body)
    for field in ObjectsController.systemFields { fields[field] = nil }
    var update = try NCMBUpdate(body: fields, stored: NCMBJSON.stored)
    try ObjectsController.check(
      &update, stored: { try call.client.get(className, objectId: objectId) },
      policy: { fields in
        try call.policy.checkedObject(className, fields, objectId, call.client)
      })
    let object = try ObjectsController.withinStorage(call) {
      try call.client.update(
        className, objectId: objectId, set: update.set, increment: update.increments,
        arrays: update.arrays, acl: update.acl)
    }
    return NCMBService.json(.object(["updateDate": NCMBJSON.date(object.updateDate)]))
  }

  /// The application checks an update's array changes as if their values were the field's (its
  /// rules of types and sizes), and keeps only what it says of the fields set. An array that
  /// grows is given as the stored one with the values added (`stored`, read only then), so
  /// that adding a little at a time does not take an object past the application's limits.
  static func check(
    _ update: inout NCMBUpdate, stored: () throws -> DataObject,
    policy: ([String: JSONValue]) throws -> [String: JSONValue]
  ) throws {
    let arrays = update.arrays
    var given = update.set.merging(arrays.mapValues { .array($0.values) }) { first, _ in first }
    var object: DataObject?
    for (field, change) in arrays {
      switch change {
      case .add(let values), .addUnique(let values):
        if object == nil { object = try stored() }
        guard case .array(let held)? = object?[field] else { continue }
        given[field] = .array(held + values)
      default: break
      }
    }
    update.set = try policy(given).filter { arrays[$0.key] == nil }
  }

  /// Runs `write` and refuses it (E413002; its savepoint undoes it) when it grew the bytes the
  /// caller's objects hold past the storage per user: `ServeLimits.storageBytesPerUser` or the
  /// board's bound per member (the owner's `mod storage-per-member`), the smaller. The board's
  /// is read at each write that grows them, so a change counts from the next. A write that
  /// leaves them no bigger passes, so a user over the limit may still shrink or delete. Writes
  /// run one at a time in the server's write queue, so the two reads see no other write
  /// between them.
  static func withinStorage<T>(_ call: NCMBCall, _ write: () throws -> T) throws -> T {
    guard let before = try call.client.storedBytes() else { return try write() }
    let result = try write()
    let after = try call.client.storedBytes() ?? 0
    guard after > before else { return result }
    let bounds = [call.limits.storageBytesPerUser, try call.client.memberStorageBytes() ?? 0]
    if let limit = bounds.filter({ $0 > 0 }).min(), after > limit {
      throw NCMBError.tooLarge.because(
        Reason.store(.memberStorageFull(bytes: after, limit: limit)))
    }
    return result
  }
}
