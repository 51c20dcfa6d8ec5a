import Testing

@testable import Datastore

/// `JSONValue.jsonText()` writes UTF-8 bytes directly; it must give exactly what a writer that
/// goes scalar by scalar gives (the reference below), for every character it escapes and its
/// neighbours, in any mix.
@Suite("JSON writer")
struct JSONWriterTests {
  /// The writer as it was before: each scalar looked at on its own.
  static func reference(_ value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool(let value): return value ? "true" : "false"
    case .int(let value): return String(value)
    case .double(let value): return value.isFinite ? "\(value)" : "null"
    case .string(let text): return referenceString(text)
    case .array(let values): return "[" + values.map(reference).joined(separator: ",") + "]"
    case .object(let fields):
      return "{"
        + fields.keys.sorted().map { referenceString($0) + ":" + reference(fields[$0]!) }
        .joined(separator: ",") + "}"
    }
  }

  static func referenceString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x22: out += "\\\""
      case 0x5C: out += "\\\\"
      case 0x0A: out += "\\n"
      case 0x0D: out += "\\r"
      case 0x09: out += "\\t"
      case 0x00..<0x20, 0x7F...0x9F, 0x2028...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  /// Every escaped scalar, the scalars just around each range, and ordinary text of several
  /// widths (ASCII, Latin, kana, emoji).
  static let pool: [Unicode.Scalar] = {
    var values: [UInt32] = Array(0x00...0x23) + [0x2F, 0x41, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F]
    values += Array(0x80...0xA1) + [0xC0, 0xFF, 0x100, 0x7FF, 0x800]
    values += [0x061B, 0x061C, 0x061D, 0x0600, 0x06FF]
    values += Array(0x200C...0x2030) + Array(0x2064...0x206A) + [0x2000, 0x20AC, 0x2100]
    values += [0x3042, 0x30A2, 0x4E00, 0xFEFF, 0xFFFD, 0x1F600, 0x1F1EF, 0x10FFFF]
    return values.compactMap(Unicode.Scalar.init)
  }()

  static func randomText(_ generator: inout some RandomNumberGenerator) -> String {
    var text = String.UnicodeScalarView()
    for _ in 0..<Int.random(in: 0...12, using: &generator) {
      text.append(pool.randomElement(using: &generator)!)
    }
    return String(text)
  }

  @Test func everyEscapedCharacterAndItsNeighbours() throws {
    for scalar in JSONWriterTests.pool {
      for text in ["\(scalar)", "a\(scalar)b", "\(scalar)\(scalar)", "ab\(scalar)"] {
        let value = JSONValue.string(text)
        #expect(value.jsonText() == JSONWriterTests.reference(value), "U+\(scalar.value)")
        #expect(try JSONValue.parse(value.jsonText()) == value)
      }
    }
  }

  @Test func randomDocuments() {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2_000 {
      var fields: [String: JSONValue] = [:]
      for _ in 0..<Int.random(in: 0...5, using: &generator) {
        let key = JSONWriterTests.randomText(&generator)
        fields[key] = .array([
          .string(JSONWriterTests.randomText(&generator)),
          .int(Int64.random(in: Int64.min...Int64.max, using: &generator)), .bool(true), .null,
          .double(Double.random(in: -1e9...1e9, using: &generator)),
          .object(["k": .string(JSONWriterTests.randomText(&generator))]),
        ])
      }
      let value = JSONValue.object(fields)
      #expect(value.jsonText() == JSONWriterTests.reference(value))
      #expect(value.jsonBytes() == Array(value.jsonText().utf8))
    }
  }
}

/// `BackendDate.string` computes the calendar itself; `gmtime` is the oracle.
@Suite("Backend dates")
struct BackendDateTests {
  @Test func everyDayAndRandomMomentsAgreeWithGmtime() {
    // Every day from 1970 to 2200 at a moment of its own, then random moments to the year 9999.
    var moments: [Int64] = [0, 999, 1000, 86_399_999, 951_782_400_000, 253_402_300_799_999]
    for day in Int64(0)...84_000 {
      moments.append(day * 86_400_000 + (day * 7_919_113) % 86_400_000)
    }
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<20_000 {
      moments.append(Int64.random(in: 0..<253_402_300_800_000, using: &generator))
    }
    for moment in moments {
      #expect(
        BackendDate.string(milliseconds: moment) == BackendDate.gmtimeString(milliseconds: moment),
        "\(moment)")
    }
    #expect(BackendDate.string(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
  }
}
