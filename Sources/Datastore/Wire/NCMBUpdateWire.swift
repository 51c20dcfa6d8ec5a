/// An update as NCMB's `PUT classes/C/ID` says it: each field set to its value, or to one of
/// NCMB's operators (`{"__op":"Increment","amount":N}`, `Delete`, `Add`, `AddUnique`, `Remove`,
/// `AddRelation`, `RemoveRelation`), and the ACL beside them. The server reads apps' updates
/// and forum's remote engine's with `init(body:stored:)`; the engine writes its own with
/// `body(set:increment:arrays:acl:)`, so the two cannot drift.
public struct NCMBUpdate {
  public var set: [String: JSONValue] = [:]
  public var increments: [String: Int64] = [:]
  public var arrays: [String: ArrayChange] = [:]
  public var acl: ACL?

  /// Reads `body` (`acl` and each field); `stored` turns a value as sent into the value
  /// stored (apps' pointers reduced; the engine's values are already as stored).
  public init(body: [String: JSONValue], stored: (JSONValue) throws -> JSONValue) throws {
    var fields = body
    acl = try fields.removeValue(forKey: "acl").map(ACL.init(json:))
    for (key, value) in fields {
      guard case .object(let operation) = value, let name = operation["__op"]?.stringValue else {
        set[key] = try stored(value)
        continue
      }
      switch name {
      case "Increment":
        guard let amount = operation["amount"]?.intValue else {
          throw DatastoreError.invalid(key, "Increment needs a whole amount")
        }
        increments[key] = amount
      case "Delete": set[key] = .null
      case "Add", "AddUnique", "Remove":
        guard case .array(let objects)? = operation["objects"], !objects.isEmpty else {
          throw DatastoreError.invalid(key, "\(name) takes objects: an array of values")
        }
        let values = try objects.map(stored)
        arrays[key] =
          name == "Add" ? .add(values) : name == "AddUnique" ? .addUnique(values) : .remove(values)
      case "AddRelation", "RemoveRelation":
        guard case .array(let objects)? = operation["objects"], !objects.isEmpty else {
          throw DatastoreError.invalid(key, "\(name) takes objects: an array of pointers")
        }
        var related: String?
        var ids: [String] = []
        for object in objects {
          guard case .object(let pointer) = try stored(object),
            let className = pointer["className"]?.stringValue,
            let id = pointer["objectId"]?.stringValue, related == nil || related == className
          else { throw DatastoreError.invalid(key, "a relation holds pointers of one class") }
          related = className
          ids.append(id)
        }
        arrays[key] =
          name == "AddRelation"
          ? .addRelation(className: related!, objectIds: ids)
          : .removeRelation(className: related!, objectIds: ids)
      default: throw DatastoreError.invalid(key, "\(name) is not supported")
      }
    }
  }

  /// The body of an update. A value to set that is itself an object with a text `__op`
  /// would read back as an operator: refused, as NCMB's API cannot say it.
  public static func body(
    set fields: [String: JSONValue], increment increments: [String: Int64],
    arrays: [String: ArrayChange], acl: ACL?
  ) throws -> JSONValue {
    var body: [String: JSONValue] = [:]
    for (key, value) in fields {
      if case .object(let object) = value, object["__op"]?.stringValue != nil {
        throw DatastoreError.invalid(key, "an object with a text __op cannot be set over https")
      }
      body[key] = value
    }
    for (key, amount) in increments {
      body[key] = .object(["__op": .string("Increment"), "amount": .int(amount)])
    }
    for (key, change) in arrays {
      let name =
        switch change {
        case .add: "Add"
        case .addUnique: "AddUnique"
        case .remove: "Remove"
        case .addRelation: "AddRelation"
        case .removeRelation: "RemoveRelation"
        }
      body[key] = .object(["__op": .string(name), "objects": .array(change.values)])
    }
    if let acl { body["acl"] = acl.json }
    return .object(body)
  }
}
