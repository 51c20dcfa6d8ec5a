#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

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

  /// A number, whole or not.
  public var doubleValue: Double? {
    switch self {
    case .int(let value): return Double(value)
    case .double(let value): return value
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
    String(decoding: jsonBytes(), as: UTF8.self)
  }

  /// `jsonText()`'s UTF-8 bytes, written directly (a server's answer is bytes).
  public func jsonBytes() -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(256)
    write(to: &out)
    return out
  }

  func write(to out: inout [UInt8]) {
    switch self {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
    case .int(let value): out.append(contentsOf: String(value).utf8)
    case .double(let value): out.append(contentsOf: (value.isFinite ? "\(value)" : "null").utf8)
    case .string(let value): JSONValue.writeString(value, to: &out)
    case .array(let values):
      out.append(UInt8(ascii: "["))
      for (index, value) in values.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        value.write(to: &out)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let fields):
      out.append(UInt8(ascii: "{"))
      for (index, key) in fields.keys.sorted().enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        JSONValue.writeString(key, to: &out)
        out.append(UInt8(ascii: ":"))
        fields[key]!.write(to: &out)
      }
      out.append(UInt8(ascii: "}"))
    }
  }

  /// Copies runs of UTF-8 that need no escaping whole. Escaped: `"`, `\`, controls, C1
  /// controls, line separators and bidi controls, so that JSON printed to a terminal can neither
  /// drive it nor reorder what is read. Those outside ASCII are found by their lead bytes: C2
  /// (U+0080–U+009F), D8 (U+061C), E2 (U+200E–U+200F, U+2028–U+202E, U+2066–U+2069).
  static func writeString(_ string: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    var string = string
    let table = JSONValue.mayEscape
    string.withUTF8 { bytes in
      var runStart = 0
      var index = 0
      let count = bytes.count
      while index < count {
        // Most bytes need nothing: a table says which may (one load a byte, not a switch).
        if table[Int(bytes[index])] == 0 {
          index += 1
          continue
        }
        let byte = bytes[index]
        var length = 0
        var scalar: UInt32 = 0
        switch byte {
        case 0x00..<0x20, 0x22, 0x5C, 0x7F:
          length = 1
          scalar = UInt32(byte)
        case 0xC2 where index + 1 < count && (0x80...0x9F).contains(bytes[index + 1]):
          length = 2
          scalar = UInt32(bytes[index + 1])
        case 0xD8 where index + 1 < count && bytes[index + 1] == 0x9C:
          length = 2
          scalar = 0x061C
        case 0xE2 where index + 2 < count:
          let (second, third) = (bytes[index + 1], bytes[index + 2])
          if (second == 0x80 && (third == 0x8E || third == 0x8F || (0xA8...0xAE).contains(third)))
            || (second == 0x81 && (0xA6...0xA9).contains(third))
          {
            length = 3
            scalar = 0x2000 | (UInt32(second & 0x3F) << 6) | UInt32(third & 0x3F)
          }
        default: break
        }
        guard length > 0 else {
          index += 1
          continue
        }
        if runStart < index { out.append(contentsOf: bytes[runStart..<index]) }
        appendEscape(scalar, to: &out)
        index += length
        runStart = index
      }
      if runStart < count { out.append(contentsOf: bytes[runStart..<count]) }
    }
    out.append(UInt8(ascii: "\""))
  }

  /// 1 for the bytes `writeString` looks at: those it escapes and the lead bytes of the
  /// escaped characters outside ASCII.
  static let mayEscape: [UInt8] = (0..<256).map { byte in
    switch byte {
    case 0x00..<0x20, 0x22, 0x5C, 0x7F, 0xC2, 0xD8, 0xE2: 1
    default: 0
    }
  }

  private static func appendEscape(_ scalar: UInt32, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\\"))
    switch scalar {
    case 0x22: out.append(UInt8(ascii: "\""))
    case 0x5C: out.append(UInt8(ascii: "\\"))
    case 0x0A: out.append(UInt8(ascii: "n"))
    case 0x0D: out.append(UInt8(ascii: "r"))
    case 0x09: out.append(UInt8(ascii: "t"))
    default:
      let digits = Array("0123456789abcdef".utf8)
      out.append(UInt8(ascii: "u"))
      for shift in [12, 8, 4, 0] { out.append(digits[Int((scalar >> UInt32(shift)) & 0xF)]) }
    }
  }

  /// Parses stored JSON text. Every object read from the database comes through here, so it is
  /// a direct reader over the UTF-8 bytes rather than JSONDecoder, whose `try?` probing for each
  /// value's type costs a thrown error per miss.
  public static func parse(_ text: String) throws -> JSONValue {
    var text = text
    let value = text.withUTF8 { bytes -> JSONValue? in
      var reader = JSONReader(bytes: bytes)
      return reader.document()
    }
    guard let value else { throw DatastoreError(.systemError, detail: "stored JSON is damaged") }
    return value
  }
}

extension JSONValue {
  /// A stored row's fields, and whether any of it could not be read. A row written by another
  /// program may be no JSON object at all (nothing is kept), or nest deeper than the reader goes
  /// in one field (that field is left out, the others kept): the board shows such a row as
  /// damaged, and needs its number, parent and author for that.
  public static func storedFields(_ text: String) -> (fields: [String: JSONValue], damaged: Bool) {
    if let fields = (try? parse(text))?.objectValue { return (fields, false) }
    var text = text
    let fields = text.withUTF8 { bytes -> [String: JSONValue] in
      var reader = JSONReader(bytes: bytes)
      return reader.salvagedObject()
    }
    return (fields, true)
  }
}

extension JSONValue {
  /// What building a stored object's values costs a reader, about: its bytes, and
  /// `nodeCost` for each array, object and element it holds (each a value built, some 60 bytes
  /// however small: 1 MB of `[[0],[0],…]` builds 23 MB). Counted without building anything.
  /// Strings are stepped over with libc's `memchr` (their closing quote is the first one after
  /// an even run of backslashes), as every row of an answer is weighed before any is built.
  public static func readingCost(_ text: String) -> Int {
    var text = text
    return text.withUTF8 { bytes -> Int in
      guard let base = bytes.baseAddress else { return 0 }
      let count = bytes.count
      let quote = Int32(UInt8(ascii: "\""))
      func next(_ from: Int) -> Int {
        guard from < count, let found = memchr(base + from, quote, count - from) else {
          return count
        }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
      }
      var nodes = 0
      var index = 0
      while index < count {
        let opening = next(index)
        for byte in UnsafeBufferPointer(rebasing: bytes[index..<opening]) {
          switch byte {
          case UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ","): nodes += 1
          default: break
          }
        }
        // The string's end: a quote after an even run of backslashes (each escapes one byte).
        var closing = next(opening + 1)
        while closing < count {
          var backslashes = 0
          while closing - backslashes - 1 > opening,
            bytes[closing - backslashes - 1] == UInt8(ascii: "\\")
          {
            backslashes += 1
          }
          if backslashes % 2 == 0 { break }
          closing = next(closing + 1)
        }
        index = closing + 1
      }
      return count + nodes * nodeCost
    }
  }

  public static let nodeCost = 64

  /// The top-level fields of a stored object named in `keys`, the others stepped over without
  /// being built (`storedFields` when `keys` is nil).
  public static func storedFields(_ text: String, keys: Set<String>?) -> (
    fields: [String: JSONValue], damaged: Bool
  ) {
    guard let keys else { return storedFields(text) }
    var text = text
    let fields = text.withUTF8 { bytes -> [String: JSONValue]? in
      var reader = JSONReader(bytes: bytes)
      return reader.projectedObject(keys)
    }
    return fields.map { ($0, false) } ?? (
      storedFields(text).fields.filter { keys.contains($0.key) }, true
    )
  }
}

/// A strict RFC 8259 reader: nil for anything that is not exactly one JSON value.
private struct JSONReader {
  let bytes: UnsafeBufferPointer<UInt8>
  var index = 0
  var depth = 0

  init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  mutating func document() -> JSONValue? {
    guard let value = value() else { return nil }
    skipSpace()
    return index == bytes.count ? value : nil
  }

  private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  /// The top-level fields of an object that `document()` refused: a field whose value cannot be
  /// read (nested too deep) is stepped over; reading stops at the first error of syntax.
  mutating func salvagedObject() -> [String: JSONValue] {
    var fields: [String: JSONValue] = [:]
    guard consume(UInt8(ascii: "{")), !consume(UInt8(ascii: "}")) else { return fields }
    depth = 1
    repeat {
      skipSpace()
      guard current == UInt8(ascii: "\""), let key = string(), consume(UInt8(ascii: ":"))
      else { return fields }
      skipSpace()
      let start = index
      if let value = value() {
        fields[key] = value
      } else {
        index = start
        guard skipValue() else { return fields }
      }
    } while consume(UInt8(ascii: ","))
    return fields
  }

  /// The top-level fields of an object named in `keys`; the others are stepped over unbuilt.
  /// nil when the text is not one well-formed object.
  mutating func projectedObject(_ keys: Set<String>) -> [String: JSONValue]? {
    var fields: [String: JSONValue] = [:]
    guard consume(UInt8(ascii: "{")) else { return nil }
    depth = 1
    if !consume(UInt8(ascii: "}")) {
      repeat {
        skipSpace()
        guard current == UInt8(ascii: "\""), let key = string(), consume(UInt8(ascii: ":"))
        else { return nil }
        skipSpace()
        if keys.contains(key) {
          guard let value = value() else { return nil }
          fields[key] = value
        } else {
          guard skipValue() else { return nil }
        }
      } while consume(UInt8(ascii: ","))
      guard consume(UInt8(ascii: "}")) else { return nil }
    }
    skipSpace()
    return index == bytes.count ? fields : nil
  }

  /// Steps over one value of any depth without building it (a counter, not recursion).
  private mutating func skipValue() -> Bool {
    var open = 0
    repeat {
      skipSpace()
      guard let byte = current else { return false }
      switch byte {
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        open += 1
        index += 1
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        guard open > 0 else { return false }
        open -= 1
        index += 1
      case UInt8(ascii: "\""):
        guard skipString() else { return false }
      case UInt8(ascii: ","), UInt8(ascii: ":"):
        guard open > 0 else { return false }
        index += 1
      default:
        // A number or a literal, stepped over by its bytes: nothing is built (a skipped field
        // of a million numbers would otherwise make a String for each).
        let start = index
        while let byte = current, byte > 0x20, byte != UInt8(ascii: ","),
          byte != UInt8(ascii: "]"), byte != UInt8(ascii: "}"), byte != UInt8(ascii: ":")
        {
          index += 1
        }
        guard index > start else { return false }
      }
    } while open > 0
    return true
  }

  /// Steps over a string at its opening quote without building it.
  private mutating func skipString() -> Bool {
    index += 1
    while let byte = current {
      index += 1
      switch byte {
      case UInt8(ascii: "\""): return true
      case UInt8(ascii: "\\"): index += 1
      case 0..<0x20: return false
      default: break
      }
    }
    return false
  }

  private mutating func skipSpace() {
    while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
      index += 1
    }
  }

  private mutating func consume(_ byte: UInt8) -> Bool {
    skipSpace()
    guard current == byte else { return false }
    index += 1
    return true
  }

  private mutating func value() -> JSONValue? {
    skipSpace()
    guard let byte = current else { return nil }
    switch byte {
    case UInt8(ascii: "{"): return object()
    case UInt8(ascii: "["): return array()
    case UInt8(ascii: "\""): return string().map(JSONValue.string)
    case UInt8(ascii: "t"): return word("true", .bool(true))
    case UInt8(ascii: "f"): return word("false", .bool(false))
    case UInt8(ascii: "n"): return word("null", .null)
    default: return number()
    }
  }

  private mutating func word(_ text: StaticString, _ value: JSONValue) -> JSONValue? {
    let count = text.utf8CodeUnitCount
    guard index + count <= bytes.count,
      memcmp(bytes.baseAddress! + index, text.utf8Start, count) == 0
    else { return nil }
    index += count
    return value
  }

  private mutating func object() -> JSONValue? {
    depth += 1
    defer { depth -= 1 }
    guard depth <= 512 else { return nil }
    index += 1
    var fields: [String: JSONValue] = [:]
    if consume(UInt8(ascii: "}")) { return .object(fields) }
    fields.reserveCapacity(8)  // a stored object has a handful of fields; skip the regrowths
    repeat {
      skipSpace()
      guard current == UInt8(ascii: "\""), let key = string(), consume(UInt8(ascii: ":")),
        let value = value()
      else { return nil }
      fields[key] = value
    } while consume(UInt8(ascii: ","))
    return consume(UInt8(ascii: "}")) ? .object(fields) : nil
  }

  private mutating func array() -> JSONValue? {
    depth += 1
    defer { depth -= 1 }
    guard depth <= 512 else { return nil }
    index += 1
    var values: [JSONValue] = []
    if consume(UInt8(ascii: "]")) { return .array(values) }
    repeat {
      guard let value = value() else { return nil }
      values.append(value)
    } while consume(UInt8(ascii: ","))
    return consume(UInt8(ascii: "]")) ? .array(values) : nil
  }

  /// A string at the opening quote. Runs without escapes are copied whole.
  private mutating func string() -> String? {
    index += 1
    var start = index
    var escaped: [UInt8]?
    while let byte = current {
      switch byte {
      case UInt8(ascii: "\""):
        let run = UnsafeBufferPointer(rebasing: bytes[start..<index])
        index += 1
        guard escaped != nil else { return String(decoding: run, as: UTF8.self) }
        escaped!.append(contentsOf: run)
        return String(decoding: escaped!, as: UTF8.self)
      case UInt8(ascii: "\\"):
        // Appended in place: copying the buffer per escape would make long texts quadratic.
        if escaped == nil { escaped = [] }
        escaped!.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        index += 1
        guard let scalar = escape() else { return nil }
        UTF8.encode(scalar) { escaped!.append($0) }
        start = index
      case 0..<0x20: return nil
      default: index += 1
      }
    }
    return nil
  }

  /// The character after a backslash (and its `\uXXXX` pair for surrogates).
  private mutating func escape() -> Unicode.Scalar? {
    guard let byte = current else { return nil }
    index += 1
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(byte)
    case UInt8(ascii: "b"): return "\u{08}"
    case UInt8(ascii: "f"): return "\u{0C}"
    case UInt8(ascii: "n"): return "\n"
    case UInt8(ascii: "r"): return "\r"
    case UInt8(ascii: "t"): return "\t"
    case UInt8(ascii: "u"):
      guard let high = hex4() else { return nil }
      guard (0xD800...0xDBFF).contains(high) else { return Unicode.Scalar(high) }
      guard current == UInt8(ascii: "\\"), index + 1 < bytes.count,
        bytes[index + 1] == UInt8(ascii: "u")
      else { return nil }
      index += 2
      guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
      return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    default: return nil
    }
  }

  private mutating func hex4() -> UInt32? {
    guard index + 4 <= bytes.count else { return nil }
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard let digit = Character(Unicode.Scalar(bytes[index])).hexDigitValue else { return nil }
      value = value << 4 | UInt32(digit)
      index += 1
    }
    return value
  }

  /// `-? int frac? exp?`: an integer when it has neither fraction nor exponent and fits.
  private mutating func number() -> JSONValue? {
    let start = index
    func digits() -> Int {
      let first = index
      while let byte = current, (0x30...0x39).contains(byte) { index += 1 }
      return index - first
    }
    if current == UInt8(ascii: "-") { index += 1 }
    let leadingZero = current == UInt8(ascii: "0")
    let whole = digits()
    guard whole > 0, !(leadingZero && whole > 1) else { return nil }
    var integral = true
    if current == UInt8(ascii: ".") {
      index += 1
      integral = false
      guard digits() > 0 else { return nil }
    }
    if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
      index += 1
      integral = false
      if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
      guard digits() > 0 else { return nil }
    }
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    if integral, let int = Int64(text) { return .int(int) }
    // 1e999 would read as infinity, which JSON cannot write back (found by fuzzing).
    guard let double = Double(text), double.isFinite else { return nil }
    return .double(double)
  }
}
