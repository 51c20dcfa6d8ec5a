import Datastore

/// JSON in and out of the API.
enum NCMBJSON {
  /// Nesting an app's object may have (NCMB objects are shallow; deeper is refused before it
  /// reaches the datastore).
  static let maximumDepth = 32

  /// A request's JSON: invalid UTF-8, malformed JSON or nesting deeper than `maximumDepth` is
  /// `E400001`.
  static func parse(_ bytes: [UInt8]) throws -> JSONValue {
    guard let text = String(validating: bytes, as: UTF8.self) else { throw NCMBError.invalidJSON }
    // The reader refuses nesting past 512 without recursing further, so this is cheap.
    guard let value = try? JSONValue.parse(text), depth(of: value) <= maximumDepth else {
      throw NCMBError.invalidJSON
    }
    return value
  }

  private static func depth(of value: JSONValue) -> Int {
    switch value {
    case .array(let values): return 1 + (values.map(depth).max() ?? 0)
    case .object(let fields): return 1 + (fields.values.map(depth).max() ?? 0)
    default: return 0
    }
  }

  /// A body that must be a JSON object (an empty body is `{}`).
  static func object(_ bytes: [UInt8]) throws -> [String: JSONValue] {
    if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return [:] }
    guard case .object(let fields) = try parse(bytes) else { throw NCMBError.invalidJSON }
    return fields
  }

  static func date(_ milliseconds: Int64) -> JSONValue {
    .string(BackendDate.string(milliseconds: milliseconds))
  }

  /// A value as stored: pointers reduced to the three keys the backend compares.
  static func stored(_ value: JSONValue) throws -> JSONValue {
    guard case .object(let object) = value, object["__type"] == .string("Pointer") else {
      return value
    }
    guard let className = object["className"]?.stringValue,
      let objectId = object["objectId"]?.stringValue
    else { throw NCMBError.invalid("pointer") }
    return .pointer(className: className, objectId: objectId)
  }

  /// An object as NCMB returns it, in the shape the application gives its objects
  /// (`NCMBPolicy.shape`: the board's, the same as `forum --json`), without what only the
  /// datastore may know (a user's `authData`) or lists elsewhere (a relation's members).
  static func object(_ object: DataObject, _ policy: NCMBPolicy) -> JSONValue {
    policy.shape.json(object)
  }
}
