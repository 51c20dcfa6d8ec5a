import Datastore

/// "What happened since I was last here": what is new since the person last left the prompt
/// (or joined) and still unread. Its cost follows the activity since then, not the board's
/// size: one walk of the `lastActivity` index from that moment, the read positions of those
/// threads, and the person's own conversations.
extension Board {
  /// Counts for the start-up line and `unread --count`.
  public struct UnreadSummary: Equatable, Sendable {
    /// Threads started since then by others that you never opened.
    public var newThreads = 0
    /// Comments by others after your read position, in threads you have opened.
    public var newComments = 0
    /// The threads those comments are in.
    public var threadsWithComments = 0
    /// Messages to you that you have not read, in conversations active since then.
    public var messages = 0
    /// The counts stopped at a limit (`threadLimit` threads active since then): "at least".
    public var more = false
    /// The moment counted from (milliseconds).
    public var since: Int64 = 0

    public var isEmpty: Bool { newThreads == 0 && newComments == 0 && messages == 0 }
    public var total: Int { newThreads + newComments + messages }

    public init() {}
  }

  /// How many threads active since the horizon are looked at.
  public static let summaryThreadLimit = 1000

  public func unreadSummary() throws -> UnreadSummary {
    var summary = UnreadSummary()
    guard let myId = client.userId else { return summary }
    let marks = try marks()
    let horizon = marks.lastLeft ?? me.object.createDate
    summary.since = horizon
    var query = Query(
      className: Board.threadClass, order: ["-lastActivity"], limit: Board.summaryThreadLimit)
    query.greaterThan = ["lastActivity": horizon]
    query.unreadOnly = true
    let found = try client.find(query)
    summary.more = found.count == Board.summaryThreadLimit
    let threads = try withUnread(
      found.map { ForumThread($0, viewer: myId) }.filter { !marks.muted.contains($0.number) })
    for thread in threads where thread.unread > 0 {
      if thread.readPosition == nil {
        if thread.createDate > horizon { summary.newThreads += 1 }
      } else {
        summary.newComments += thread.unread
        summary.threadsWithComments += 1
      }
    }
    summary.messages = try unreadMessageCount(since: horizon)
    return summary
  }

  /// Unread messages in the conversations active since `horizon` (both index walks of the
  /// inbox, without the last messages it shows).
  private func unreadMessageCount(since horizon: Int64) throws -> Int {
    guard let myId = client.userId else { return 0 }
    var ids: [String] = []
    for side in ["user", "partner"] {
      var query = Query(
        className: Board.conversationClass,
        equalTo: [side: .pointer(className: User.className, objectId: myId)],
        order: ["-lastActivity"], limit: 100)
      query.greaterThan = ["lastActivity": horizon]
      ids += try client.find(query).map(\.objectId)
    }
    guard !ids.isEmpty else { return 0 }
    return try client.unread(Board.conversationClass, objectIds: ids).values.reduce(0) {
      $0 + $1.unreadChildren
    }
  }
}
