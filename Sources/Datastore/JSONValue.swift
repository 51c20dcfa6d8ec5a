import Foundation

/// A field value as the backend stores it: JSON.
public enum JSONValue: Equatable, Sendable {
  case null
  case bool(Bool)
  case int(Int64)
  case double(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  /// A pointer to another object, as the backend writes it.
  public static func pointer(className: String, objectId: String) -> JSONValue {
    .object([
      "__type": .string("Pointer"), "className": .string(className),
      "objectId": .string(objectId),
    ])
  }

  /// The objectId of a pointer value.
  public var pointerId: String? {
    guard case .object(let fields) = self, fields["__type"] == .string("Pointer"),
      case .string(let id)? = fields["objectId"]
    else { return nil }
    return id
  }

  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  public var intValue: Int64? {
    switch self {
    case .int(let value): return value
    case .double(let value) where value == value.rounded(): return Int64(exactly: value)
    default: return nil
    }
  }

  public var objectValue: [String: JSONValue]? {
    if case .object(let value) = self { return value }
    return nil
  }
}

extension JSONValue: Codable {
  public init(from decoder: Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let bool = try? container.decode(Bool.self) {
      self = .bool(bool)
    } else if let int = try? container.decode(Int64.self) {
      self = .int(int)
    } else if let double = try? container.decode(Double.self) {
      self = .double(double)
    } else if let string = try? container.decode(String.self) {
      self = .string(string)
    } else if let array = try? container.decode([JSONValue].self) {
      self = .array(array)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  public func encode(to encoder: Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .int(let value): try container.encode(value)
    case .double(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }
}

extension JSONValue {
  /// Compact JSON text with sorted keys, as stored in the database.
  public func jsonText() -> String {
    var out = ""
    write(to: &out)
    return out
  }

  private func write(to out: inout String) {
    switch self {
    case .null: out += "null"
    case .bool(let value): out += value ? "true" : "false"
    case .int(let value): out += String(value)
    case .double(let value): out += value.isFinite ? "\(value)" : "null"
    case .string(let value): JSONValue.writeString(value, to: &out)
    case .array(let values):
      out += "["
      for (index, value) in values.enumerated() {
        if index > 0 { out += "," }
        value.write(to: &out)
      }
      out += "]"
    case .object(let fields):
      out += "{"
      for (index, key) in fields.keys.sorted().enumerated() {
        if index > 0 { out += "," }
        JSONValue.writeString(key, to: &out)
        out += ":"
        fields[key]!.write(to: &out)
      }
      out += "}"
    }
  }

  private static func writeString(_ string: String, to out: inout String) {
    out += "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      // Controls, C1 controls, line separators and bidi overrides are escaped so JSON printed
      // to a terminal can neither drive it nor reorder what is read.
      case _
      where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
        || (0x2028...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        || scalar.value == 0x200E || scalar.value == 0x200F || scalar.value == 0x061C:
        out += String(format: "\\u%04x", scalar.value)
      default: out.unicodeScalars.append(scalar)
      }
    }
    out += "\""
  }

  /// Parses stored JSON text.
  public static func parse(_ text: String) throws -> JSONValue {
    do {
      return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    } catch {
      throw DatastoreError(.systemError, detail: "stored JSON is damaged")
    }
  }
}
