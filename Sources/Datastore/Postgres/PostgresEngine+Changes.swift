/// The change feed on PostgreSQL: `forum.changes`, written at commit by `forum.objects_feed()`,
/// read under row-level security; wake-ups by `LISTEN forum_changes` on this connection, whose
/// socket the prompt polls.
extension PostgresEngine: SQLChangeFeed {
  func latestChange() throws -> Int64 {
    try feedQuery { try connection.query("SELECT forum.latest_change()").int(0, 0) }
  }

  func feedEdges() throws -> (top: Int64, pruned: Int64) {
    try feedQuery {
      let edges = try connection.query(
        "SELECT forum.latest_change(), forum.changes_pruned_through()")
      return (edges.int(0, 0), edges.int(0, 1))
    }
  }

  /// The public feed, and the private one from the caller's own readers up.
  func readableChanges(since: Int64, top: Int64, limit: Int, as caller: Principals) -> SQL {
    """
    SELECT c.seq, c.class AS class_name, c.object_id, c.kind, c.parent_id, c.number
    FROM (SELECT seq, class, object_id, kind, parent_id, number, readers FROM forum.changes
          WHERE seq > \(since)::bigint AND seq <= \(top)::bigint
          UNION ALL
          SELECT * FROM forum.private_changes(\(since)::bigint, \(top)::bigint,
                                              \(limit)::bigint)) c
    WHERE true\(sql: PostgresEngine.readFilter(caller, table: "c"))
    ORDER BY c.seq LIMIT \(limit)::bigint
    """
  }

  var feedNumbersGoBack: Bool { false }

  func wakeFileDescriptor() throws -> Int32? {
    try startListening()
    let socket = connection.socket
    return socket >= 0 ? socket : nil
  }

  /// The socket is what wakes the prompt; this is a fallback for notifications libpq took
  /// in while it read a statement's result (they wait in its buffer, not on the socket).
  var wakePollInterval: Double { 0.25 }

  /// Several servers and members share the database, and what tells their commits apart is a
  /// query: nothing is kept (sessions are looked up and every read runs, each request).
  func stateMark() throws -> StateMark? { nil }

  func hasPendingWakeup() throws -> Bool {
    try startListening()
    do {
      return try connection.drainNotifications() > 0
    } catch let error as PostgresError {
      throw DatastoreError(
        .systemError,
        reason: BoardAccessReason.connectionLost(error: error.message))
    }
  }

  private func startListening() throws {
    guard !listening else { return }
    try feedQuery { try connection.execute("LISTEN forum_changes") }
    listening = true
  }

  private func feedQuery<T>(_ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as PostgresError {
      throw error.datastoreError
    }
  }
}
