import Datastore

/// What happened on the board since a point in the change feed, for the live prompt: the feed's
/// ids, and the threads and comments they name read again through the ACL.
extension Board {
  /// The classes whose changes the board's own live view follows.
  public static let threadClassName = threadClass
  public static let commentClassName = commentClass

  /// The newest change: a cursor that starts here sees what happens from now on.
  public func latestChange() throws -> Int64 { try client.latestChange() }

  /// Changes after `since` that the signed-in person may read, oldest first.
  public func changes(since: Int64, limit: Int = 500) throws -> ChangeBatch {
    try client.changes(since: since, limit: limit)
  }

  /// A descriptor to wait on with stdin (PostgreSQL), or nil to ask `hasPendingWakeup` every
  /// `wakePollInterval` seconds (SQLite).
  public func wakeFileDescriptor() throws -> Int32? { try client.wakeFileDescriptor() }
  public var wakePollInterval: Double { client.wakePollInterval }
  /// Cheap: true when another process may have written since the feed was last read.
  public func hasPendingWakeup() throws -> Bool { try client.hasPendingWakeup() }

  /// The threads with these ids that still exist and may be read, by number.
  public func threads(objectIds: [String]) throws -> [ForumThread] {
    try client.get(
      Board.threadClass, objectIds: objectIds, include: ["user"], includeKeys: User.shownFields
    )
    .map { ForumThread($0, viewer: myId) }.sorted { $0.number < $1.number }
  }

  /// The comments of `thread` with these ids that still exist, by number.
  public func comments(objectIds: [String], of thread: ForumThread) throws -> [ForumComment] {
    // With their quotes, as a page shows them: a live reply said its quote was gone.
    try withQuotes(
      client.get(
        Board.commentClass, objectIds: objectIds, include: ["user"], includeKeys: User.shownFields
      )
      .filter { $0["thread"]?.pointerId == thread.objectId }
      .map { ForumComment($0, threadNumber: thread.number, viewer: myId) }
      .sorted { $0.number < $1.number }, of: thread)
  }

  /// The newest comments of `thread` after comment `after`, at most `limit` of them (oldest
  /// first), and how many there are after `after` in all.
  public func comments(of thread: ForumThread, after: Int, limit: Int) throws -> (
    comments: [ForumComment], total: Int
  ) {
    let pointer = Board.pointer(to: thread.objectId)
    var query = Query(
      className: Board.commentClass, equalTo: ["thread": pointer], order: ["-number"],
      limit: limit, include: ["user"], includeKeys: User.shownFields)
    query.greaterThan = ["number": Int64(after)]
    var counting = Query(className: Board.commentClass, equalTo: ["thread": pointer])
    counting.greaterThan = ["number": Int64(after)]
    let newest = try withQuotes(
      client.find(query).reversed().map {
        ForumComment($0, threadNumber: thread.number, viewer: myId)
      }, of: thread)
    let total =
      newest.count < limit
      ? newest.count
      : try client.count(counting)
    return (newest, total)
  }

  /// The page of `thread` (as `comments(of:page:)` counts them) that comment `number` is on, or
  /// would be on when it comes after the last.
  public func page(ofComment number: Int, in thread: ForumThread) throws -> Int {
    var query = Query(
      className: Board.commentClass, equalTo: ["thread": Board.pointer(to: thread.objectId)])
    query.lessThan = ["number": Int64(number)]
    let before = try client.count(query)
    return before / Board.pageSize + 1
  }
}
