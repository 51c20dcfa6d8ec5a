#if canImport(FoundationEssentials)
  import Glibc
#else
  import Foundation
#endif

/// Stored JSON text written as `JSONValue.parse` then `write` would write it, straight from its
/// bytes, building no value: whitespace left out, each object's members in key order. It takes
/// only what it can write byte for byte as that round trip: keys in printable ASCII without
/// escapes, whole numbers of at most 18 digits (not `-0`), the escapes `writeString` itself
/// writes, no duplicate key, at most `maximumDepth` levels. Anything else (a fraction, `\/`, a
/// key outside ASCII, text that is not JSON) is refused (nil), and the caller builds the value:
/// a row someone wrote by hand reads as it always did, only slower.
struct CanonicalJSON {
  var bytes: UnsafeBufferPointer<UInt8>
  /// The members of the objects being read, innermost last (one array for all of them).
  private var spans: [(key: Range<Int>, written: Range<Int>)] = []

  init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  static let maximumDepth = 32

  /// An object's member: where its key's bytes (between the quotes) and its value stand in the
  /// text, and where its value was written (`members(at:depth:into:)`).
  struct Member {
    let key: Range<Int>
    let value: Int
    let written: Range<Int>
  }

  /// 1 for the bytes a string's scan stops at (`JSONValue.mayEscape`), as a pointer that is
  /// read without an array's checks (the scan's inner loop).
  nonisolated(unsafe) private static let stops: UnsafePointer<UInt8> = {
    let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
    for byte in 0..<256 { table[byte] = JSONValue.mayEscape[byte] }
    return UnsafePointer(table)
  }()

  /// The byte at `index`; 0 past the end, which no well-formed text holds where it is looked at.
  @inline(__always) func at(_ index: Int) -> UInt8 { index < bytes.count ? bytes[index] : 0 }

  func skipSpace(_ index: Int) -> Int {
    var index = index
    while true {
      switch at(index) {
      case 0x20, 0x0A, 0x0D, 0x09: index += 1
      default: return index
      }
    }
  }

  /// Whether the key at `a` sorts before the one at `b`, as `String`'s `<` sorts ASCII.
  func precedes(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
    CanonicalJSON.precedes(bytes, a, bytes, b)
  }

  static func precedes(
    _ first: UnsafeBufferPointer<UInt8>, _ a: Range<Int>,
    _ second: UnsafeBufferPointer<UInt8>, _ b: Range<Int>
  ) -> Bool {
    precedes(UnsafeBufferPointer(rebasing: first[a]), UnsafeBufferPointer(rebasing: second[b]))
  }

  static func precedes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    let common = min(a.count, b.count)
    if common > 0 {
      let order = memcmp(a.baseAddress!, b.baseAddress!, common)
      if order != 0 { return order < 0 }
    }
    return a.count < b.count
  }

  /// The value at `index` (after any space), written to `out`; the index after it,
  /// or nil when it is not taken.
  mutating func value(at index: Int, depth: Int, to out: inout [UInt8]) -> Int? {
    let index = skipSpace(index)
    switch at(index) {
    case UInt8(ascii: "{"): return object(at: index, depth: depth + 1, to: &out)
    case UInt8(ascii: "["): return array(at: index, depth: depth + 1, to: &out)
    case UInt8(ascii: "\""): return string(at: index, to: &out)
    case UInt8(ascii: "t"): return word("true", at: index, to: &out)
    case UInt8(ascii: "f"): return word("false", at: index, to: &out)
    case UInt8(ascii: "n"): return word("null", at: index, to: &out)
    default:
      guard let end = wholeNumber(at: index) else { return nil }
      out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
      return end
    }
  }

  private func word(_ text: StaticString, at index: Int, to out: inout [UInt8]) -> Int? {
    let count = text.utf8CodeUnitCount
    guard index + count <= bytes.count,
      memcmp(bytes.baseAddress! + index, text.utf8Start, count) == 0
    else { return nil }
    out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: count))
    return index + count
  }

  /// The end of a whole number at `index` that `JSONValue.write` writes as it stands: nil for a
  /// fraction, an exponent, `-0`, a leading zero or more than 18 digits.
  func wholeNumber(at index: Int) -> Int? {
    var end = index
    if at(end) == UInt8(ascii: "-") { end += 1 }
    let first = end
    while (0x30...0x39).contains(at(end)) { end += 1 }
    let digits = end - first
    guard digits > 0, digits <= 18 else { return nil }
    // A leading zero is no JSON; `-0` is read as 0 and written so.
    if at(first) == UInt8(ascii: "0") && (digits > 1 || first > index) { return nil }
    switch at(end) {
    case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
    default: return end
    }
  }

  /// The whole number `wholeNumber` found between `index` and `end`.
  func integer(_ index: Int, _ end: Int) -> Int64 {
    var value: Int64 = 0
    let negative = at(index) == UInt8(ascii: "-")
    for position in (negative ? index + 1 : index)..<end {
      value = value * 10 + Int64(bytes[position] - 0x30)
    }
    return negative ? -value : value
  }

  /// A string whose every byte `writeString` writes as it stands, and whose escapes are the
  /// ones it writes (`\"`, `\\`, `\n`, `\r`, `\t`, `\u00xx` for other controls and C1).
  private func string(at index: Int, to out: inout [UInt8]) -> Int? {
    let stops = CanonicalJSON.stops
    var end = index + 1
    while true {
      let byte = at(end)
      if stops[Int(byte)] == 0 {
        end += 1
        continue
      }
      switch byte {
      case UInt8(ascii: "\""):
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index...end]))
        return end + 1
      case UInt8(ascii: "\\"):
        switch at(end + 1) {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"),
          UInt8(ascii: "t"):
          end += 2
        case UInt8(ascii: "u"):
          guard let scalar = lowercaseHex(at: end + 2),
            (scalar < 0x20 && scalar != 0x09 && scalar != 0x0A && scalar != 0x0D)
              || (0x7F...0x9F).contains(scalar)
          else { return nil }
          end += 6
        default: return nil
        }
      case 0xC2:
        guard !(0x80...0x9F).contains(at(end + 1)) else { return nil }
        end += 1
      case 0xD8:
        guard at(end + 1) != 0x9C else { return nil }
        end += 1
      case 0xE2:
        let (second, third) = (at(end + 1), at(end + 2))
        if (second == 0x80 && (third == 0x8E || third == 0x8F || (0xA8...0xAE).contains(third)))
          || (second == 0x81 && (0xA6...0xA9).contains(third))
        {
          return nil
        }
        end += 1
      default:
        // A control, DEL, or the end of the text.
        return nil
      }
    }
  }

  private func lowercaseHex(at index: Int) -> UInt32? {
    var value: UInt32 = 0
    for position in index..<index + 4 {
      let byte = at(position)
      switch byte {
      case 0x30...0x39: value = value << 4 | UInt32(byte - 0x30)
      case 0x61...0x66: value = value << 4 | UInt32(byte - 0x61 + 10)
      default: return nil
      }
    }
    return value
  }

  /// A key at its opening quote: printable ASCII, no escape; the range of its bytes.
  func key(at index: Int) -> Range<Int>? {
    guard at(index) == UInt8(ascii: "\"") else { return nil }
    var end = index + 1
    while true {
      let byte = at(end)
      if byte == UInt8(ascii: "\"") { return index + 1..<end }
      guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
      end += 1
    }
  }

  private mutating func array(at index: Int, depth: Int, to out: inout [UInt8]) -> Int? {
    guard depth <= CanonicalJSON.maximumDepth else { return nil }
    out.append(UInt8(ascii: "["))
    var next = skipSpace(index + 1)
    if at(next) == UInt8(ascii: "]") {
      out.append(UInt8(ascii: "]"))
      return next + 1
    }
    while true {
      guard let end = value(at: next, depth: depth, to: &out) else { return nil }
      next = skipSpace(end)
      switch at(next) {
      case UInt8(ascii: ","):
        out.append(UInt8(ascii: ","))
        next += 1
      case UInt8(ascii: "]"):
        out.append(UInt8(ascii: "]"))
        return next + 1
      default: return nil
      }
    }
  }

  /// An object, its members written as they stand, then put in key order when they were not
  /// (the board writes them in order; PostgreSQL's `jsonb` shortest key first).
  private mutating func object(at index: Int, depth: Int, to out: inout [UInt8]) -> Int? {
    guard depth <= CanonicalJSON.maximumDepth else { return nil }
    let mark = out.count
    out.append(UInt8(ascii: "{"))
    var next = skipSpace(index + 1)
    if at(next) == UInt8(ascii: "}") {
      out.append(UInt8(ascii: "}"))
      return next + 1
    }
    // Each member is read once, written as it comes; where each one's `"key":value` landed is
    // kept, and if the keys were out of order those spans are put in order at the end. (Reading
    // an out-of-order object again nested the cost: 2^depth.)
    let first = spans.count
    defer { spans.removeSubrange(first...) }
    var ordered = true
    while true {
      guard let key = key(at: next) else { return nil }
      if spans.count > first, !precedes(spans[spans.count - 1].key, key) { ordered = false }
      next = skipSpace(key.upperBound + 1)
      guard at(next) == UInt8(ascii: ":") else { return nil }
      if spans.count > first { out.append(UInt8(ascii: ",")) }
      let start = out.count
      appendKey(key, to: &out)
      guard let end = value(at: next + 1, depth: depth, to: &out) else { return nil }
      spans.append((key, start..<out.count))
      next = skipSpace(end)
      switch at(next) {
      case UInt8(ascii: ","): next = skipSpace(next + 1)
      case UInt8(ascii: "}"):
        if !ordered {
          let bytes = self.bytes
          spans[first...].sort { CanonicalJSON.precedes(bytes, $0.key, bytes, $1.key) }
          let members = spans[first...]
          for (one, other) in zip(members, members.dropFirst()) where !precedes(one.key, other.key)
          {
            return nil  // a key twice: the reader keeps the last, the caller builds it
          }
          var sorted: [UInt8] = []
          sorted.reserveCapacity(out.count - mark)
          for (position, member) in members.enumerated() {
            if position > 0 { sorted.append(UInt8(ascii: ",")) }
            sorted.append(contentsOf: out[member.written])
          }
          out.removeSubrange((mark + 1)...)
          out.append(contentsOf: sorted)
        }
        out.append(UInt8(ascii: "}"))
        return next + 1
      default: return nil
      }
    }
  }

  /// `"key":`, the key's bytes as they stand (`key(at:)` took them so).
  func appendKey(_ key: Range<Int>, to out: inout [UInt8]) {
    out.append(
      contentsOf: UnsafeBufferPointer(rebasing: bytes[key.lowerBound - 1...key.upperBound]))
    out.append(UInt8(ascii: ":"))
  }

  /// The members of the object at `index` (its `{`) in the text's order, each value written
  /// to `written`; and the index after the object. `depth` is the object's own.
  mutating func members(at index: Int, depth: Int, into written: inout [UInt8])
    -> (members: [Member], end: Int)?
  {
    guard depth <= CanonicalJSON.maximumDepth, at(index) == UInt8(ascii: "{") else { return nil }
    var members: [Member] = []
    var next = skipSpace(index + 1)
    if at(next) == UInt8(ascii: "}") { return (members, next + 1) }
    while true {
      guard let key = key(at: next) else { return nil }
      next = skipSpace(key.upperBound + 1)
      guard at(next) == UInt8(ascii: ":") else { return nil }
      let start = skipSpace(next + 1)
      let from = written.count
      guard let end = value(at: start, depth: depth, to: &written) else { return nil }
      members.append(Member(key: key, value: start, written: from..<written.count))
      next = skipSpace(end)
      switch at(next) {
      case UInt8(ascii: ","): next = skipSpace(next + 1)
      case UInt8(ascii: "}"): return (members, next + 1)
      default: return nil
      }
    }
  }
}
