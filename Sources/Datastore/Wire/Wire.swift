/// The board's wire: how the values the engines exchange are written as JSON between `forum
/// serve` and forum's remote engine (`RemoteEngine`). Both sides use these same functions, so
/// the two cannot drift. Every reader here takes hostile input (a server or a client nobody
/// here wrote): a wrong shape is `Wire.malformed`, never a crash.
public enum Wire {
  /// Nesting a wire value may have: an object as deep as the engines take
  /// (`DatastoreClient.maximumObjectDepth`) within the request around it (a `perform`'s steps
  /// and operands). Deeper is refused before it is walked.
  public static let maximumDepth = DatastoreClient.maximumObjectDepth + 16

  /// The largest body of a request to the board's own endpoints: a file at the board's limit
  /// in base64 with an object at the engines' limit beside it (a thread and its image are one
  /// `forum/perform`). NCMB's own paths keep NCMB's 1 MiB (`NCMBService.maximumJSONBytes`).
  public static let maximumBodyBytes =
    (Datastore.defaultFileSizeLimit + 2) / 3 * 4 + DatastoreClient.maximumObjectBytes + (64 << 10)

  /// A value that is not what the wire says at `what`.
  public static func malformed(_ what: String) -> DatastoreError {
    DatastoreError(.invalid, field: what, detail: "not the board's wire format")
  }

  /// Parses wire JSON: invalid UTF-8, malformed JSON or nesting past `maximumDepth` is
  /// `malformed`.
  public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
    guard let text = String(validating: bytes, as: UTF8.self),
      let value = try? JSONValue.parse(text), depth(of: value) <= maximumDepth
    else { throw malformed("body") }
    return value
  }

  static func depth(of value: JSONValue) -> Int {
    switch value {
    case .array(let values): return 1 + (values.map(depth).max() ?? 0)
    case .object(let fields): return 1 + (fields.values.map(depth).max() ?? 0)
    default: return 0
    }
  }
}

/// Typed reads of a wire object's members.
public struct WireObject {
  public let fields: [String: JSONValue]
  let what: String

  public init(_ value: JSONValue?, _ what: String) throws {
    guard let fields = value?.objectValue else { throw Wire.malformed(what) }
    self.fields = fields
    self.what = what
  }

  public subscript(key: String) -> JSONValue? { fields[key] }

  public func string(_ key: String) throws -> String {
    guard let value = fields[key]?.stringValue else { throw Wire.malformed("\(what).\(key)") }
    return value
  }

  public func optionalString(_ key: String) throws -> String? {
    guard let value = fields[key], value != .null else { return nil }
    guard let string = value.stringValue else { throw Wire.malformed("\(what).\(key)") }
    return string
  }

  public func int(_ key: String) throws -> Int64 {
    guard case .int(let value)? = fields[key] else { throw Wire.malformed("\(what).\(key)") }
    return value
  }

  public func optionalInt(_ key: String) throws -> Int64? {
    guard let value = fields[key], value != .null else { return nil }
    guard case .int(let int) = value else { throw Wire.malformed("\(what).\(key)") }
    return int
  }

  public func count(_ key: String) throws -> Int {
    let value = try int(key)
    guard value >= 0, value <= Int64(Int32.max) else { throw Wire.malformed("\(what).\(key)") }
    return Int(value)
  }

  public func bool(_ key: String) throws -> Bool {
    guard case .bool(let value)? = fields[key] else { throw Wire.malformed("\(what).\(key)") }
    return value
  }

  public func array(_ key: String) throws -> [JSONValue] {
    guard case .array(let values)? = fields[key] else { throw Wire.malformed("\(what).\(key)") }
    return values
  }

  public func object(_ key: String) throws -> [String: JSONValue] {
    guard case .object(let value)? = fields[key] else { throw Wire.malformed("\(what).\(key)") }
    return value
  }

  public func strings(_ key: String) throws -> [String] {
    try array(key).map {
      guard let string = $0.stringValue else { throw Wire.malformed("\(what).\(key)") }
      return string
    }
  }
}

extension JSONValue {
  static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }
}
