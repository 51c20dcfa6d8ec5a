#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Shapes of identifiers and values the backend accepts.
enum Validation {
  static let objectIdLength = 16
  private static let alphanumerics = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

  static func isObjectId(_ text: some StringProtocol) -> Bool {
    text.utf8.count == objectIdLength && text.utf8.allSatisfy(isAlphanumeric)
  }

  /// Class and field names: a letter, then letters, digits or `_`, at most 64.
  static func isName(_ text: some StringProtocol) -> Bool {
    let bytes = Array(text.utf8)
    guard let first = bytes.first, bytes.count <= 64, isLetter(first) else { return false }
    return bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
  }

  static func isRoleName(_ text: some StringProtocol) -> Bool {
    let bytes = Array(text.utf8)
    return !bytes.isEmpty && bytes.count <= 64
      && bytes.allSatisfy {
        isAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
      }
  }

  /// Anonymous secrets: 16 to 128 letters, digits, `-` or `_` (a fresh secret, or the UUID a
  /// profile of the previous version used).
  static func isSecret(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    return (16...128).contains(bytes.count)
      && bytes.allSatisfy {
        isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
      }
  }

  /// File names: `[A-Za-z0-9._-]`, at most 200 bytes, not `.` or `..`.
  static func isFileName(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    guard !bytes.isEmpty, bytes.count <= 200, text != ".", text != ".." else { return false }
    return bytes.allSatisfy {
      isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_")
        || $0 == UInt8(ascii: "-")
    }
  }

  /// Random `[A-Za-z0-9]` text from the system generator, eight random bytes a call rather than
  /// a call a character (each call is a system call). Bytes at or above 248 are dropped so every
  /// character is equally likely (248 = 4 × 62).
  static func randomId(length: Int = objectIdLength) -> String {
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(length)
    while bytes.count < length {
      var word = generator.next()
      for _ in 0..<8 where bytes.count < length {
        let byte = UInt8(truncatingIfNeeded: word)
        word >>= 8
        if byte < 248 { bytes.append(alphanumerics[Int(byte) % alphanumerics.count]) }
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func isLetter(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
      || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
  }

  private static func isAlphanumeric(_ byte: UInt8) -> Bool {
    isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
  }
}

/// Turns bytes from outside (a terminal, a pipe, a file) into text, refusing invalid UTF-8.
public func decodeUTF8(_ bytes: some Collection<UInt8>, field: String) throws -> String {
  guard let text = String(validating: bytes, as: UTF8.self) else {
    throw DatastoreError(.invalid, field: field, reason: StoreReason.notUTF8)
  }
  return text
}

/// The backend's date format, `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` in UTC.
public enum BackendDate {
  /// `yyyy-MM-ddTHH:mm:ss.SSSZ`. Every date of every object a server lists comes through here,
  /// so the years 1970–9999 are written straight from the count of days (the proleptic Gregorian
  /// calendar's arithmetic, as `gmtime` does it); others go through `gmtime`.
  public static func string(milliseconds: Int64) -> String {
    guard milliseconds >= 0, milliseconds < 253_402_300_800_000 else {
      return gmtimeString(milliseconds: milliseconds)
    }
    return String(unsafeUninitializedCapacity: 24) { buffer in
      writeFourDigitYear(milliseconds, into: buffer.baseAddress!)
      return 24
    }
  }

  /// `string(milliseconds:)`'s bytes appended to `out`, with no string made in between (a
  /// server writes two or more of them for every object it lists).
  public static func write(milliseconds: Int64, to out: inout [UInt8]) {
    guard milliseconds >= 0, milliseconds < 253_402_300_800_000 else {
      out.append(contentsOf: gmtimeString(milliseconds: milliseconds).utf8)
      return
    }
    var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
    withUnsafeMutableBytes(of: &text) { raw in
      let bytes = raw.bindMemory(to: UInt8.self)
      writeFourDigitYear(milliseconds, into: bytes.baseAddress!)
      out.append(contentsOf: UnsafeBufferPointer(bytes))
    }
  }

  /// The 24 bytes of a date in the years 1970–9999 at `buffer`.
  private static func writeFourDigitYear(
    _ milliseconds: Int64, into buffer: UnsafeMutablePointer<UInt8>
  ) {
    let seconds = milliseconds / 1000
    let (days, second) = (seconds / 86_400, Int(seconds % 86_400))
    // Days since 0000-03-01, in eras of 400 years (146,097 days).
    let z = Int(days) + 719_468
    let era = z / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthFromMarch = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
    let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    func digits(_ value: Int, _ width: Int, at offset: Int) {
      var value = value
      for place in stride(from: offset + width - 1, through: offset, by: -1) {
        buffer[place] = UInt8(truncatingIfNeeded: 0x30 + value % 10)
        value /= 10
      }
    }
    digits(year, 4, at: 0)
    buffer[4] = UInt8(ascii: "-")
    digits(month, 2, at: 5)
    buffer[7] = UInt8(ascii: "-")
    digits(day, 2, at: 8)
    buffer[10] = UInt8(ascii: "T")
    digits(second / 3600, 2, at: 11)
    buffer[13] = UInt8(ascii: ":")
    digits(second / 60 % 60, 2, at: 14)
    buffer[16] = UInt8(ascii: ":")
    digits(second % 60, 2, at: 17)
    buffer[19] = UInt8(ascii: ".")
    digits(Int(milliseconds % 1000), 3, at: 20)
    buffer[23] = UInt8(ascii: "Z")
  }

  static func gmtimeString(milliseconds: Int64) -> String {
    var seconds = time_t(milliseconds / 1000)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ value: Int32) -> String { zeroPadded(value, width: 2) }
    return zeroPadded(parts.tm_year + 1900, width: 4) + "-\(two(parts.tm_mon + 1))-"
      + "\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))."
      + zeroPadded(milliseconds % 1000, width: 3) + "Z"
  }

  public static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}

extension DataObject {
  /// A new object id as the engines make them, for tools that write rows themselves.
  public static func newObjectId() -> String { Validation.randomId() }
}
