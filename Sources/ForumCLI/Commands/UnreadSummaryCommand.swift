import Datastore
import Forum

/// `unread --count` for a shell prompt or a status bar, and the line the prompt starts with:
/// what is new since you last left the prompt and still unread (`Board.unreadSummary`).
enum UnreadSummary {
  /// `unread --count`: the number alone (0 when nothing is new); with `--json` its parts.
  static func printCount(in session: Session) throws {
    let summary = try session.board.unreadSummary()
    if session.json {
      session.emit(
        .object([
          "total": .int(Int64(summary.total)), "threads": .int(Int64(summary.newThreads)),
          "comments": .int(Int64(summary.newComments)),
          "commentThreads": .int(Int64(summary.threadsWithComments)),
          "messages": .int(Int64(summary.messages)), "more": .bool(summary.more),
          "since": Board.dateJSON(summary.since),
        ]))
      return
    }
    print(String(summary.total) + (summary.more ? "+" : ""))
  }

  /// The prompt's first line after the banner; nothing when nothing is new. A failure here
  /// must not keep anyone from the prompt: it is left unsaid.
  static func startLine(in session: Session) -> String? {
    guard let summary = try? session.board.unreadSummary() else { return nil }
    return session.messages.summaryLine(
      threads: summary.newThreads, comments: summary.newComments,
      inThreads: summary.threadsWithComments, messages: summary.messages, more: summary.more
    ).map { session.style.bold($0) }
  }

  /// When the prompt ends: the next start counts from here.
  static func recordLeaving(in session: Session) {
    try? session.board.recordLeaving()
  }
}
