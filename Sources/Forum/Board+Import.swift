import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How an NCMB app's own bulletin board becomes this board's threads and comments on import
/// (`forum import ncmb`): the seed app's `Thread` (`title`, `description`, `fileName` of its
/// picture in the file store) and `Comment` (`text`, a pointer to its `Thread`), each written
/// by one user (its ACL's one user writer, or a `user` pointer). Their objectIds, dates and
/// ACLs stay; the board adds what it keeps itself: numbers in date order, the author's
/// pointer, a thread's counts, last activity and picture facts.
public enum BoardImport {
  public static let threadClass = Board.threadClass
  public static let commentClass = Board.commentClass
  /// The counter thread numbers come from.
  public static let threadSequence = Board.threadSequence

  static let threadFields: Set<String> = ["title", "description", "fileName", "user"]
  static let commentFields: Set<String> = ["text", "thread", "user"]

  /// The first field that keeps `fields` (an exported Thread's, without objectId, dates and
  /// ACL) from being one of the board's threads; nil when it is one.
  public static func threadMismatch(_ fields: [String: JSONValue]) -> String? {
    for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
      guard threadFields.contains(name) else { return name }
      switch name {
      case "fileName": if value != .null && value.stringValue == nil { return name }
      case "user": if !isPointer(value, to: User.className) { return name }
      default: if value.stringValue == nil { return name }
      }
    }
    return fields["title"] == nil ? "title" : nil
  }

  /// The same for an exported Comment: `text` and a pointer to a `Thread`.
  public static func commentMismatch(_ fields: [String: JSONValue]) -> String? {
    for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
      guard commentFields.contains(name) else { return name }
      switch name {
      case "thread": if !isPointer(value, to: threadClass) { return name }
      case "user": if !isPointer(value, to: User.className) { return name }
      default: if value.stringValue == nil { return name }
      }
    }
    if fields["text"] == nil { return "text" }
    return fields["thread"] == nil ? "thread" : nil
  }

  static func isPointer(_ value: JSONValue, to className: String) -> Bool {
    value.pointerId != nil && value.objectValue?["className"] == .string(className)
  }

  /// Who wrote an exported post: its `user` pointer, else its ACL's one user writer.
  public static func author(_ fields: [String: JSONValue], acl: ACL) -> String? {
    if let id = fields["user"]?.pointerId { return id }
    let users = acl.writers.filter { $0 != "*" && !$0.hasPrefix("role:") }
    return users.count == 1 ? users.first : nil
  }

  /// The picture facts a thread keeps (`image`), from its file's bytes as they are stored.
  public static func imageFacts(fileName: String, bytes: [UInt8]) throws -> JSONValue {
    ImageSummary(fileName: fileName, image: try ImagePreparer.prepare(Data(bytes))).json
  }

  /// A thread's fields as the board keeps them; its title and description checked as the
  /// prompt's are (`DatastoreError` naming the field).
  public static func thread(
    _ fields: [String: JSONValue], author: String, number: Int64, comments: Int64,
    lastActivity: Int64, image: JSONValue?
  ) throws -> [String: JSONValue] {
    var kept: [String: JSONValue] = [
      "title": .string(try PostRules.title(fields["title"]?.stringValue ?? "")),
      "description": .string(try PostRules.description(fields["description"]?.stringValue ?? "")),
      "user": .pointer(className: User.className, objectId: author),
      "number": .int(number), "commentCount": .int(comments),
      "lastCommentNumber": .int(comments), "lastActivity": .int(lastActivity),
    ]
    if let name = fields["fileName"]?.stringValue, let image {
      kept["fileName"] = .string(name)
      kept["image"] = image
    }
    return kept
  }

  /// A comment's fields as the board keeps them, its text checked as the prompt's is.
  public static func comment(
    _ fields: [String: JSONValue], author: String, threadId: String, number: Int64
  ) throws -> [String: JSONValue] {
    [
      "text": .string(try PostRules.comment(fields["text"]?.stringValue ?? "")),
      "thread": .pointer(className: threadClass, objectId: threadId),
      "user": .pointer(className: User.className, objectId: author), "number": .int(number),
    ]
  }
}
