import Datastore
import Forum

/// The board's own live notices at the prompt: new threads anywhere; in the current thread, new
/// comments (a burst as a gap that points at its page), edits and deletions; the current thread
/// deleted under you, which you then leave.
extension Session {
  /// How many new comments the live view prints at once; the rest are said as a gap.
  static let liveCommentLimit = 10
  /// How many new threads are named at once; the rest are counted.
  static let liveThreadLimit = 3

  /// Installs the board's handlers (once, when the prompt starts).
  func startLiveView() {
    // First: a mark made at another prompt counts for the changes read with it.
    startFollowing()
    live.setHandler(for: Board.threadClassName) { changes, session in
      try session.threadNotices(changes)
    }
    live.setHandler(for: Board.commentClassName) { changes, session in
      try session.commentNotices(changes) + session.addressedNotices(changes)
        + session.followNotices(changes)
    }
    live.setHandler(for: Board.messageClassName) { changes, session in
      try session.messageNotices(changes)
    }
  }

  /// Lines for what happened since the last check (see `LiveFeed.check`).
  func liveLines(force: Bool) -> [String] {
    live.check(self, force: force)
  }

  /// The current thread as the live view knows it, read again when the prompt moved to another.
  func watchedThread() throws -> ForumThread? {
    guard let number = currentThread else { return nil }
    if let watched = navigation.watched, watched.number == number { return watched }
    let thread = try board.thread(number)
    navigation.watch(thread)
    return thread
  }

  private func threadNotices(_ changes: [Change]) throws -> [String] {
    var lines: [String] = []
    if let current = currentThread,
      changes.contains(where: { $0.kind == .deleted && $0.number == Int64(current) })
    {
      navigation.leave()
      lines.append(style.dim(messages.currentThreadGone(current)))
    }
    let gone = Set(changes.filter { $0.kind == .deleted }.map(\.objectId))
    let created = changes.filter { $0.kind == .created && !gone.contains($0.objectId) }
    var ids: [String] = []
    for change in created where !ids.contains(change.objectId) { ids.append(change.objectId) }
    let fresh = try board.threads(objectIds: ids).filter { !$0.isMine }
    for thread in fresh.prefix(Session.liveThreadLimit) {
      let title = SafeText.truncate(SafeText.sanitize(thread.title), to: 50)
      let author = SafeText.truncate(SafeText.sanitize(thread.authorName), to: 30)
      lines.append(style.dim(messages.newThread(thread.number, title: title, author: author)))
    }
    if fresh.count > Session.liveThreadLimit {
      lines.append(style.dim(messages.moreNewThreads(fresh.count - Session.liveThreadLimit)))
    }
    // An edit of the current thread's title or text by someone else (a comment moves no date
    // of its thread and adds no change of it, on every engine; a take-down is said as one).
    if let watched = navigation.watched, watched.number == currentThread,
      changes.contains(where: { $0.kind == .updated && $0.objectId == watched.objectId }),
      let now = try board.threads(objectIds: [watched.objectId]).first
    {
      if now.title != watched.title || now.description != watched.description, !now.isMine {
        let title = SafeText.truncate(SafeText.sanitize(now.title), to: 60)
        lines.append(style.dim(messages.threadEdited(now.number, title: title)))
      }
      navigation.watch(now)
    }
    return lines
  }

  private func commentNotices(_ changes: [Change]) throws -> [String] {
    guard let seen = navigation.newestSeenComment, let thread = try watchedThread() else {
      return []
    }
    let here = changes.filter { $0.parentId == thread.objectId }
    guard !here.isEmpty else { return [] }
    var lines: [String] = []
    // Deletions of comments that were there to see, unless this session deleted them.
    let deleted = Set(here.filter { $0.kind == .deleted }.compactMap(\.number).map(Int.init))
      .filter { $0 <= seen && !live.deletedHere.contains("\(thread.number)/\($0)") }.sorted()
    for number in deleted {
      lines.append(style.dim(messages.commentDeleted("\(thread.number)/\(number)")))
    }
    // Edits of comments already there (a comment made and set up in one write is not edited).
    let created = Set(here.filter { $0.kind == .created }.map(\.objectId))
    let updated = here.filter { $0.kind == .updated && !created.contains($0.objectId) }
    if !updated.isEmpty {
      let edited = try board.comments(objectIds: updated.map(\.objectId), of: thread).filter {
        $0.number <= seen && $0.updateDate > $0.createDate && !$0.isMine
      }
      for comment in edited {
        lines.append(style.dim(messages.commentEdited("\(thread.number)/\(comment.number)")))
        lines += renderer.commentLines([comment])
      }
    }
    guard !created.isEmpty else { return lines }
    let (newest, total) = try board.comments(
      of: thread, after: seen, limit: Session.liveCommentLimit)
    guard let last = newest.last else { return lines }
    navigation.saw(upTo: last.number, in: thread.number)
    // What the live view printed is read, when nothing before it was left out.
    let position = max(thread.readPosition ?? 0, navigation.readUpTo[thread.objectId] ?? 0)
    if total == newest.count, position >= seen,
      (try? board.markRead(thread, upTo: last.number)) != nil
    {
      navigation.markedRead(thread, upTo: last.number)
    }
    if total > newest.count {
      lines.append(style.dim(try gapLine(total - newest.count, after: seen, in: thread)))
    }
    lines += renderer.commentLines(newest.filter { !$0.isMine })
    return lines
  }

  /// "… 16 more since comment 20: next", with `next` made to open the page the gap starts on.
  private func gapLine(_ count: Int, after seen: Int, in thread: ForumThread) throws -> String {
    let page = try board.page(ofComment: seen + 1, in: thread)
    if page > 1 {
      navigation.listed(.thread(number: thread.number, page: page - 1))
      return messages.commentGap(count, since: seen, command: "next")
    }
    return messages.commentGap(count, since: seen, command: "show \(thread.number)")
  }

  /// Before a command runs at the prompt: a current thread that is gone is said and left, so
  /// the command is not refused for a reason the person cannot see.
  func leaveCurrentThreadIfGone() {
    guard let number = currentThread else { return }
    do {
      _ = try board.thread(number)
    } catch let error as DatastoreError where error.reason == .board(.noThread(number)) {
      navigation.leave()
      print(style.dim(messages.currentThreadGone(number)))
    } catch {}
  }
}
