import Datastore
import Foundation

/// What the board accepts as a title, a body or a display name.
public enum PostRules {
  public static let titleLimit = 200
  public static let bodyLimit = 10_000

  /// A title: one line, 1 to 200 characters after trimming.
  public static func title(_ raw: String) throws -> String {
    let text = try clean(raw, field: "title", limit: titleLimit, multiline: false)
    guard !text.isEmpty else { throw DatastoreError(.empty, field: "title") }
    return text
  }

  /// A thread's description: may be empty, up to 10,000 characters, several lines.
  public static func description(_ raw: String) throws -> String {
    try clean(raw, field: "description", limit: bodyLimit, multiline: true)
  }

  /// A comment: 1 to 10,000 characters, several lines.
  public static func comment(_ raw: String) throws -> String {
    let text = try clean(raw, field: "text", limit: bodyLimit, multiline: true)
    guard !text.isEmpty else { throw DatastoreError(.empty, field: "text") }
    return text
  }

  /// Trims surrounding whitespace, turns CRLF into LF, and refuses control characters (NUL,
  /// escape, …) that no person means to post; tabs and, in bodies, newlines are kept.
  static func clean(_ raw: String, field: String, limit: Int, multiline: Bool) throws -> String {
    let text = raw.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(
      in: .whitespacesAndNewlines)
    for scalar in text.unicodeScalars where scalar.properties.generalCategory == .control {
      if scalar == "\t" || (multiline && scalar == "\n") { continue }
      let what = scalar == "\n" ? "a line break" : "control characters"
      throw DatastoreError(.invalid, field: field, detail: "\(field) must not contain \(what)")
    }
    guard text.count <= limit else {
      throw DatastoreError(
        .invalid, field: field,
        detail: "\(field) is \(text.count) characters; the limit is \(limit)")
    }
    return text
  }
}
