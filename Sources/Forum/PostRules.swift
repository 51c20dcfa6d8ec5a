import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// What the board accepts as a title, a body or a display name. Every field is limited in
/// characters, in bytes, and in what one character may be made of: a character can carry any
/// number of combining marks or joined code points, so a "one-character" name could otherwise
/// be 120 KB on screen and in JSON.
public enum PostRules {
  public static let titleLimit = 200
  public static let bodyLimit = 10_000
  public static let nameLimit = User.maximumDisplayNameLength
  /// Bytes of UTF-8: four per character, what an ordinary character of any script needs.
  public static let titleByteLimit = 4 * titleLimit
  public static let bodyByteLimit = 4 * bodyLimit
  public static let nameByteLimit = 4 * nameLimit
  /// Combining marks on one character (accents, Zalgo), and code points in one character
  /// (the longest emoji sequences have 10).
  public static let marksPerCharacter = 8
  public static let scalarsPerCharacter = 16

  /// A title: one line, 1 to 200 characters after trimming.
  public static func title(_ raw: String) throws -> String {
    let text = try clean(
      raw, field: "title", limit: titleLimit, byteLimit: titleByteLimit, multiline: false)
    guard !text.isEmpty else { throw DatastoreError(.empty, field: "title") }
    return text
  }

  /// A thread's description: may be empty, up to 10,000 characters, several lines.
  public static func description(_ raw: String) throws -> String {
    try clean(
      raw, field: "description", limit: bodyLimit, byteLimit: bodyByteLimit, multiline: true)
  }

  /// A comment: 1 to 10,000 characters, several lines.
  public static func comment(_ raw: String) throws -> String {
    let text = try clean(
      raw, field: "text", limit: bodyLimit, byteLimit: bodyByteLimit, multiline: true)
    guard !text.isEmpty else { throw DatastoreError(.empty, field: "text") }
    return text
  }

  /// A direct message: what a comment may be.
  public static func message(_ raw: String) throws -> String { try comment(raw) }

  /// A display name: the byte and per-character limits here, then the datastore's (1 to 40
  /// characters, no control characters: `User.checkedDisplayName`), so that a name written
  /// without `setDisplayName` (an app's, a remote engine's) is held to them too.
  public static func displayName(_ raw: String) throws -> String {
    let name = raw.trimmingWhiteSpace()
    try checkCharacters(name, field: "displayName")
    try checkBytes(name, field: "displayName", byteLimit: nameByteLimit)
    return try User.checkedDisplayName(name)
  }

  /// Refuses a character carrying more than `marksPerCharacter` combining marks or made of more
  /// than `scalarsPerCharacter` code points.
  static func checkCharacters(_ text: String, field: String) throws {
    for character in text where character.unicodeScalars.count > 1 {
      let scalars = character.unicodeScalars
      let marks = scalars.filter {
        switch $0.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
      }.count
      if marks > marksPerCharacter {
        throw DatastoreError(
          .invalid, field: field,
          reason: BoardReason.tooManyMarks(field: field, marks: marks, limit: marksPerCharacter))
      }
      if scalars.count > scalarsPerCharacter {
        throw DatastoreError(
          .invalid, field: field,
          reason: BoardReason.tooManyCodePoints(
            field: field, codePoints: scalars.count, limit: scalarsPerCharacter))
      }
    }
  }

  static func checkBytes(_ text: String, field: String, byteLimit: Int) throws {
    let bytes = text.utf8.count
    guard bytes <= byteLimit else {
      throw DatastoreError(
        .invalid, field: field,
        reason: BoardReason.tooManyBytes(field: field, bytes: bytes, limit: byteLimit))
    }
  }

  /// Trims surrounding whitespace, turns CRLF into LF, and refuses control characters (NUL,
  /// escape, …) that no person means to post; tabs and, in bodies, newlines are kept.
  static func clean(
    _ raw: String, field: String, limit: Int, byteLimit: Int, multiline: Bool
  ) throws -> String {
    let text = (raw.utf8.contains(UInt8(ascii: "\r")) ? raw.replacing("\r\n", with: "\n") : raw)
      .trimmingWhiteSpace()
    // Control characters (general category Cc) are U+0000–U+001F and U+007F–U+009F: in UTF-8,
    // bytes below 0x20, 0x7F, and 0xC2 followed by 0x80–0x9F. Found by bytes, without the
    // Unicode property lookup of every scalar (a piped comment's largest cost in Swift).
    var previous: UInt8 = 0
    for byte in text.utf8 {
      defer { previous = byte }
      let control =
        byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F)
      guard control, !(byte == UInt8(ascii: "\t") || (multiline && byte == UInt8(ascii: "\n")))
      else { continue }
      throw DatastoreError(
        .invalid, field: field,
        reason: byte == UInt8(ascii: "\n")
          ? BoardReason.containsLineBreak(field: field)
          : BoardReason.containsControlCharacters(field: field))
    }
    // ASCII without control characters is one code point a character (CR LF is gone).
    if !text.utf8.allSatisfy({ $0 < 0x80 }) { try checkCharacters(text, field: field) }
    // No more characters than bytes: counting them (grapheme breaking) only when it may matter.
    guard text.utf8.count <= limit || text.count <= limit else {
      throw DatastoreError(
        .invalid, field: field,
        reason: BoardReason.tooLong(field: field, characters: text.count, limit: limit))
    }
    try checkBytes(text, field: field, byteLimit: byteLimit)
    return text
  }
}
