import Datastore

/// Comments that speak to someone: a reply to one of their comments, or their `@handle` in the
/// text. The live prompt tells them, wherever they are on the board.
extension Board {
  /// Among the comments with these ids (new ones, from the change feed), those by others that
  /// reply to one of the signed-in person's comments or name their `@handle`, oldest first.
  /// Unreadable or deleted ones do not exist here, like everywhere else.
  public func commentsAddressedToMe(objectIds: [String]) throws -> [AddressedComment] {
    guard !objectIds.isEmpty else { return [] }
    let objects = try client.get(
      Board.commentClass, objectIds: objectIds, include: ["user"], includeKeys: User.shownFields
    )
    .filter { $0["user"]?.pointerId != me.objectId }
    guard !objects.isEmpty else { return [] }
    let threadIds = Array(Set(objects.compactMap { $0["thread"]?.pointerId }))
    let threads = Dictionary(
      try threads(objectIds: threadIds).map { ($0.objectId, $0) },
      uniquingKeysWith: { first, _ in first })
    var addressed: [AddressedComment] = []
    for object in objects {
      guard let threadId = object["thread"]?.pointerId, let thread = threads[threadId] else {
        continue
      }
      let comment = ForumComment(object, threadNumber: thread.number, viewer: me.objectId)
      if let number = comment.replyTo, try commentIsMine(number, in: thread) {
        addressed.append(AddressedComment(comment: comment, reason: .reply(to: number)))
      } else if Board.text(comment.text, mentions: me.userName) {
        addressed.append(AddressedComment(comment: comment, reason: .mention))
      }
    }
    return addressed.sorted {
      ($0.comment.createDate, $0.comment.number) < ($1.comment.createDate, $1.comment.number)
    }
  }

  /// True when `text` holds `@handle` as a word: not inside a longer handle or an address
  /// (`x@handle`, `@handles`). Handles are ASCII letters and digits.
  static func text(_ text: String, mentions handle: String) -> Bool {
    guard Board.isHandle(handle) else { return false }
    let bytes = Array(text.utf8)
    let needle = Array(("@" + handle).utf8)
    func isHandleByte(_ byte: UInt8) -> Bool {
      (byte >= 48 && byte <= 57) || (byte | 0x20 >= 97 && byte | 0x20 <= 122)
    }
    var start = 0
    while start + needle.count <= bytes.count {
      if bytes[start..<start + needle.count].elementsEqual(needle) {
        let before = start == 0 || !isHandleByte(bytes[start - 1])
        let end = start + needle.count
        let after = end == bytes.count || !isHandleByte(bytes[end])
        if before && after { return true }
      }
      start += 1
    }
    return false
  }

  /// Whether comment `number` of `thread` is the signed-in person's.
  private func commentIsMine(_ number: Int, in thread: ForumThread) throws -> Bool {
    let query = Query(
      className: Board.commentClass,
      equalTo: [
        "thread": Board.pointer(to: thread.objectId), "number": .int(Int64(number)),
        "user": .pointer(className: User.className, objectId: me.objectId),
      ], limit: 1)
    return try client.count(query) > 0
  }
}

/// A comment that speaks to the signed-in person, and how.
public struct AddressedComment: Sendable {
  public enum Reason: Equatable, Sendable {
    /// It replies to the person's comment with this number.
    case reply(to: Int)
    /// It names the person's `@handle`.
    case mention
  }

  public let comment: ForumComment
  public let reason: Reason
}
