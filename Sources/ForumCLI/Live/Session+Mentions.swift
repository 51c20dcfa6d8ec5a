import Datastore
import Forum

/// Notices of comments elsewhere on the board that speak to you: a reply to one of your
/// comments, or your `@handle`. Comments in the thread you are reading already appear there.
extension Session {
  /// How many such notices are printed at once; the rest are counted.
  static let liveAddressedLimit = 3

  func addressedNotices(_ changes: [Change]) throws -> [String] {
    let here = navigation.watched.flatMap { $0.number == currentThread ? $0.objectId : nil }
    var ids: [String] = []
    for change in changes
    where change.kind == .created && change.parentId != here && !ids.contains(change.objectId) {
      ids.append(change.objectId)
    }
    let muted = mutedThreads
    let addressed = try board.commentsAddressedToMe(objectIds: ids).filter {
      !muted.contains($0.comment.threadNumber)
    }
    live.addressedNow = Set(addressed.map(\.comment.objectId))
    var lines: [String] = []
    for item in addressed.prefix(Session.liveAddressedLimit) {
      let comment = item.comment
      let reference = "\(comment.threadNumber)/\(comment.number)"
      let who =
        SafeText.truncate(SafeText.sanitize(comment.authorName), to: 24) + " @"
        + SafeText.sanitize(comment.authorUserName)
      let flat = SafeText.sanitize(comment.text).split(whereSeparator: \.isNewline).joined(
        separator: " ")
      let room = max(10, terminal.width - SafeText.width(who) - 40)
      let text = SafeText.truncate(flat, to: room)
      switch item.reason {
      case .reply(let number):
        lines.append(
          style.bold(
            messages.replyNotice(
              who, reference: reference, yours: "\(comment.threadNumber)/\(number)", text: text)))
      case .mention:
        lines.append(style.bold(messages.mentionNotice(who, reference: reference, text: text)))
      }
    }
    if addressed.count > Session.liveAddressedLimit {
      lines.append(
        style.bold(messages.moreAddressed(addressed.count - Session.liveAddressedLimit)))
    }
    return lines
  }
}

extension Session {
  /// After a post: each `@Name` in it that reaches nobody because several people are called
  /// Name, said on stderr (the post stands).
  func sayWhomMentionsMiss(_ text: String) {
    // Its bytes first: walking a line's characters for one was 10,000 instructions a comment.
    guard text.utf8.contains(UInt8(ascii: "@")), text.contains("@"),
      let names = try? board.ambiguousMentions(in: text)
    else { return }
    for name in names {
      ForumMain.writeError(
        "forum: " + messages.mentionReachesNobody(SafeText.sanitize(name.name), count: name.count))
    }
  }
}
