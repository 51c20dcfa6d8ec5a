import Datastore

/// Unread tracking: each person's read position per thread is kept by the datastore, private to
/// them. A thread's unread count is the comments after that position that are not theirs, plus
/// the thread itself while they have never opened someone else's thread.
extension Board {
  /// `threads` with their unread counts filled in, in one look at the read positions; each count
  /// stops at `limit` (1 says only whether anything is unread, without walking the comments).
  func withUnread(_ threads: [ForumThread], countUpTo limit: Int = UnreadState.countLimit) throws
    -> [ForumThread]
  {
    guard !threads.isEmpty, client.userId != nil else { return threads }
    return Board.applying(
      try client.unread(Board.threadClass, objectIds: threads.map(\.objectId), countUpTo: limit),
      to: threads)
  }

  /// The first `pageSize` threads `query` finds, with their unread counts, how many it found
  /// (a page is asked with one more, to know there are more), and how many match when
  /// `counted`: over https one request.
  func threadsWithUnread(
    _ query: Query, counted: Bool = false, countUpTo limit: Int = UnreadState.countLimit
  ) throws -> (threads: [ForumThread], found: Int, count: Int?) {
    let found = try client.findWithUnread(
      query, counted: counted, countUpTo: limit, statesOfFirst: Board.pageSize)
    let threads = found.objects.prefix(Board.pageSize).map { ForumThread($0, viewer: myId) }
    return (Board.applying(found.unread, to: threads), found.objects.count, found.count)
  }

  private static func applying(_ states: [String: UnreadState], to threads: [ForumThread])
    -> [ForumThread]
  {
    threads.map { thread in
      var thread = thread
      let state = states[thread.objectId]
      thread.unread =
        (state?.unreadChildren ?? 0)
        + (state?.position == nil && !thread.isMine && thread.moderatedDate == nil ? 1 : 0)
      thread.readPosition = state?.position.map { Int($0) }
      return thread
    }
  }

  /// Threads with something unread, by latest activity, `pageSize` a page.
  public func unreadThreads(page: Int) throws -> Page<ForumThread> {
    let skip = try Board.offset(page: page)
    var found: [ForumThread] = []
    var hasMore = false
    var seen = 0
    var offset = 0
    let muted = try marks().muted
    // The engine's prefilter can let through a thread whose only new comments are your own:
    // read in batches and keep the ones with a count.
    while true {
      var query = Query(
        className: Board.threadClass, order: ["-lastActivity"], limit: 100, skip: offset,
        include: ["user"], includeKeys: User.shownFields)
      query.unreadOnly = true
      let batch = try client.find(query)
      let threads = try withUnread(batch.map { ForumThread($0, viewer: myId) })
      for thread in threads where thread.unread > 0 && !muted.contains(thread.number) {
        seen += 1
        if seen > skip + Board.pageSize {
          hasMore = true
          break
        }
        if seen > skip { found.append(thread) }
      }
      if hasMore || batch.count < 100 { break }
      offset += batch.count
    }
    return Page(items: found, number: page, hasMore: hasMore)
  }

  /// The most recently active thread with something unread, if any.
  public func nextUnreadThread() throws -> ForumThread? {
    try unreadThreads(page: 1).items.first
  }

  /// The page holding the first comment after your read position (1 when you never opened
  /// the thread or have read it all).
  public func firstUnreadPage(of thread: ForumThread) throws -> Int {
    guard thread.unread > 0, let position = thread.readPosition, position > 0 else { return 1 }
    let last = try lastPage(of: thread)
    // While no comment was deleted, comment n is the n-th: the page needs no count.
    if thread.lastCommentNumber == thread.commentCount {
      return min(position / Board.pageSize + 1, last)
    }
    var before = Query(
      className: Board.commentClass, equalTo: ["thread": Board.pointer(to: thread.objectId)])
    before.lessThan = ["number": Int64(position) + 1]
    let read = try client.count(before)
    return min(read / Board.pageSize + 1, last)
  }

  /// Marks `thread` read up to comment `number` (never back). A thread read from its row with
  /// its position already there needs no write: re-reading a page takes no write lock.
  public func markRead(_ thread: ForumThread, upTo number: Int) throws {
    if let position = thread.readPosition, position >= number { return }
    try client.markRead(Board.threadClass, objectId: thread.objectId, upTo: Int64(max(0, number)))
  }

  /// Marks every thread you can read as read.
  public func markAllRead() throws {
    try client.markAllRead(Board.threadClass)
  }

  /// After your own comment: when you had read everything before it, you have read it too, so
  /// the thread does not come back as unread for your own words.
  func keepCaughtUp(thread objectId: String, after comment: DataObject) throws {
    guard let number = comment["number"]?.intValue else { return }
    try client.advanceRead(Board.threadClass, objectId: objectId, to: number)
  }
}

extension Board {
  /// Marks a conversation read up to message `number` (never back).
  public func markRead(_ conversation: ForumConversation, upTo number: Int) throws {
    try client.markRead(
      Board.conversationClass, objectId: conversation.objectId, upTo: Int64(max(0, number)))
  }
}

extension Board {
  /// Your read position in the conversation `objectId` (nil when you never read it): a live
  /// room marks what it shows only when nothing before it is unread.
  public func readPosition(inConversation objectId: String) throws -> Int? {
    try client.unread(Board.conversationClass, objectIds: [objectId], countUpTo: 1)[objectId]?
      .position.map { Int($0) }
  }

  /// Marks the conversation `objectId` read up to message `number` (never back).
  public func markRead(conversation objectId: String, upTo number: Int) throws {
    try client.markRead(Board.conversationClass, objectId: objectId, upTo: Int64(number))
  }
}
