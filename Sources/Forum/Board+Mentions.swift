import Datastore

/// Comments that speak to someone: a reply to one of their comments, or their name in the text
/// as `dm` takes it (`@handle` in any case, or `@Name` when they are the only one called Name).
/// The live prompt tells them, wherever they are on the board.
extension Board {
  /// Among the comments with these ids (new ones, from the change feed), those by others that
  /// reply to one of the signed-in person's comments or mention them, oldest first.
  /// Unreadable or deleted ones do not exist here, like everywhere else.
  public func commentsAddressedToMe(objectIds: [String]) throws -> [AddressedComment] {
    guard !objectIds.isEmpty else { return [] }
    let objects = try client.get(
      Board.commentClass, objectIds: objectIds, include: ["user"], includeKeys: User.shownFields
    )
    .filter { $0["user"]?.pointerId != myId }
    guard !objects.isEmpty else { return [] }
    let threadIds = Array(Set(objects.compactMap { $0["thread"]?.pointerId }))
    let threads = Dictionary(
      try threads(objectIds: threadIds).map { ($0.objectId, $0) },
      uniquingKeysWith: { first, _ in first })
    var addressed: [AddressedComment] = []
    var nameIsMine: Bool?
    for object in objects {
      guard let threadId = object["thread"]?.pointerId, let thread = threads[threadId] else {
        continue
      }
      let comment = ForumComment(object, threadNumber: thread.number, viewer: myId)
      if let number = comment.replyTo, try commentIsMine(number, in: thread) {
        addressed.append(AddressedComment(comment: comment, reason: .reply(to: number)))
      } else if try mentionsMe(comment.text, nameIsMine: &nameIsMine) {
        addressed.append(AddressedComment(comment: comment, reason: .mention))
      }
    }
    return addressed.sorted {
      ($0.comment.createDate, $0.comment.number) < ($1.comment.createDate, $1.comment.number)
    }
  }

  /// Whether `text` mentions the signed-in person: their handle in any case, or their display
  /// name when nobody else is called it (`nameIsMine` keeps that answer for the next text).
  func mentionsMe(_ text: String, nameIsMine: inout Bool?) throws -> Bool {
    if Board.text(text, mentions: me.userName) { return true }
    let name = me.displayName
    guard name.lowercased() != me.userName.lowercased(), Board.text(text, mentions: name) else {
      return false
    }
    if nameIsMine == nil {
      if case .one(let user) = try user(looselyNamed: name) {
        nameIsMine = user.objectId == myId
      } else {
        nameIsMine = false
      }
    }
    return nameIsMine == true
  }

  /// True when `text` holds `@name` in any case as a word: not inside an address (`x@name`)
  /// nor the start of a longer word of ASCII letters and digits (`@names`).
  static func text(_ text: String, mentions name: String) -> Bool {
    let needle = Array(("@" + name.lowercased()).utf8)
    guard needle.count > 1, !name.allSatisfy(\.isWhitespace) else { return false }
    let bytes = Array(text.lowercased().utf8)
    var start = 0
    while start + needle.count <= bytes.count {
      if bytes[start..<start + needle.count].elementsEqual(needle) {
        let before = start == 0 || !isWordByte(bytes[start - 1])
        let end = start + needle.count
        let after = end == bytes.count || !isWordByte(bytes[end])
        if before && after { return true }
      }
      start += 1
    }
    return false
  }

  private static func isWordByte(_ byte: UInt8) -> Bool {
    (byte >= 48 && byte <= 57) || (byte | 0x20 >= 97 && byte | 0x20 <= 122)
  }

  /// The `@Name`s in `text` that reach nobody because several people are called Name and it is
  /// nobody's handle, each once with how many are: what a writer is told after posting.
  public func ambiguousMentions(in text: String) throws -> [AmbiguousName] {
    var names: [String] = []
    let characters = Array(text)
    for (index, character) in characters.enumerated() where character == "@" {
      if index > 0, let previous = characters[index - 1].asciiValue,
        Board.isWordByte(previous)
      {
        continue
      }
      let word = characters[(index + 1)...].prefix {
        $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-"
      }
      guard !word.isEmpty, word.count <= User.maximumDisplayNameLength else { continue }
      let name = String(word)
      if !names.contains(where: { $0.lowercased() == name.lowercased() }) { names.append(name) }
    }
    guard !names.isEmpty else { return [] }
    let users = try usersToMatch()
    return names.prefix(20).compactMap { name in
      if case .several(_, let count) = Board.match(name, among: users) {
        return AmbiguousName(name: name, count: count)
      }
      return nil
    }
  }

  /// Whether comment `number` of `thread` is the signed-in person's.
  private func commentIsMine(_ number: Int, in thread: ForumThread) throws -> Bool {
    let query = Query(
      className: Board.commentClass,
      equalTo: [
        "thread": Board.pointer(to: thread.objectId), "number": .int(Int64(number)),
        "user": .pointer(className: User.className, objectId: myId),
      ], limit: 1)
    return try client.count(query) > 0
  }
}

/// A comment that speaks to the signed-in person, and how.
public struct AddressedComment: Sendable {
  public enum Reason: Equatable, Sendable {
    /// It replies to the person's comment with this number.
    case reply(to: Int)
    /// It names the person (`@handle` in any case, or `@Name`, theirs alone).
    case mention
  }

  public let comment: ForumComment
  public let reason: Reason
}

/// A name several people go by, so it reaches none of them.
public struct AmbiguousName: Sendable, Equatable {
  public let name: String
  public let count: Int
}
