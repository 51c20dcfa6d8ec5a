import Datastore
import Forum

/// Threads followed and muted at the live prompt: a followed thread's new comments are told
/// wherever you are (`#12/14`, with the command that opens them); a muted one's replies and
/// mentions are not.
extension Session {
  /// How many follow notices are printed at once; the rest are counted.
  static let liveFollowLimit = 5

  func startFollowing() {
    live.marks = try? board.marks()
    live.setHandler(for: Board.preferenceClassName) { _, session in
      session.live.marks = try session.board.marks()
      return []
    }
  }

  var mutedThreads: Set<Int> { live.marks?.muted ?? [] }

  func followNotices(_ changes: [Change]) throws -> [String] {
    guard let followed = live.marks?.followed, !followed.isEmpty else { return [] }
    let here = navigation.watched.flatMap { $0.number == currentThread ? $0.objectId : nil }
    var ids: [String] = []
    for change in changes
    where change.kind == .created && change.parentId != here && !ids.contains(change.objectId)
      && !live.addressedNow.contains(change.objectId)
    {
      ids.append(change.objectId)
    }
    let found = try board.comments(objectIds: ids, inThreads: followed)
    var lines: [String] = []
    for (comment, thread) in found.prefix(Session.liveFollowLimit) {
      let who =
        SafeText.truncate(SafeText.sanitize(comment.authorName), to: 24) + " @"
        + SafeText.sanitize(comment.authorUserName)
      let title = SafeText.truncate(SafeText.sanitize(thread.title), to: 30)
      let flat = SafeText.sanitize(comment.text).split(whereSeparator: \.isNewline).joined(
        separator: " ")
      let room = max(10, terminal.width - SafeText.width(who) - SafeText.width(title) - 30)
      lines.append(
        style.bold(
          messages.followNotice(
            who, reference: "\(thread.number)/\(comment.number)", title: title,
            text: SafeText.truncate(flat, to: room))))
    }
    if found.count > Session.liveFollowLimit {
      lines.append(style.bold(messages.moreFollowed(found.count - Session.liveFollowLimit)))
    }
    return lines
  }
}
