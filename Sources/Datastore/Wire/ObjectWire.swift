/// `DataObject` and `FileInfo` on the wire: every field as the engine holds it (dates in
/// milliseconds, the ACL in NCMB's shape, included objects nested), so an object read through
/// the remote engine equals the one the server's engine read.
extension DataObject {
  public var wire: JSONValue {
    var body: [String: JSONValue] = [
      "className": .string(className), "objectId": .string(objectId),
      "createDate": .int(createDate), "updateDate": .int(updateDate), "acl": acl.json,
      "fields": .object(fields),
    ]
    if !included.isEmpty { body["included"] = .object(included.mapValues(\.wire)) }
    if isDamaged { body["damaged"] = .bool(true) }
    return .object(body)
  }

  public init(wire value: JSONValue) throws {
    try self.init(wire: value, depth: 0)
  }

  private init(wire value: JSONValue, depth: Int) throws {
    let object = try WireObject(value, "object")
    guard depth <= DatastoreClient.maximumIncludeDepth else { throw Wire.malformed("included") }
    self.init(
      className: try object.string("className"), objectId: try object.string("objectId"),
      createDate: try object.int("createDate"), updateDate: try object.int("updateDate"),
      acl: try ACL(json: object["acl"] ?? .null), fields: try object.object("fields"))
    if let included = object["included"] {
      guard case .object(let nested) = included else { throw Wire.malformed("included") }
      self.included = try nested.mapValues { try DataObject(wire: $0, depth: depth + 1) }
    }
    isDamaged = object["damaged"] == .bool(true)
  }

  /// A list of objects.
  public static func wire(_ objects: [DataObject]) -> JSONValue {
    .object(["results": .array(objects.map(\.wire))])
  }

  public static func list(wire value: JSONValue) throws -> [DataObject] {
    try WireObject(value, "answer").array("results").map(DataObject.init(wire:))
  }
}

extension FileInfo {
  public var wire: JSONValue {
    .object([
      "fileName": .string(fileName), "mimeType": .string(mimeType),
      "fileSize": .int(Int64(fileSize)), "createDate": .int(createDate),
      "updateDate": .int(updateDate), "acl": acl.json,
    ])
  }

  public init(wire value: JSONValue) throws {
    let object = try WireObject(value, "file")
    self.init(
      fileName: try object.string("fileName"), mimeType: try object.string("mimeType"),
      fileSize: try object.count("fileSize"), createDate: try object.int("createDate"),
      updateDate: try object.int("updateDate"), acl: try ACL(json: object["acl"] ?? .null))
  }
}
