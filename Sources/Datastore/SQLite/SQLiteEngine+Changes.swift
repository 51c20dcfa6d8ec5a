/// The change feed on SQLite: rows written by `SQLiteRules.changeTriggers`, read through the
/// caller's ACL; wake-ups from `PRAGMA data_version` (a counter in the shared WAL index that
/// moves when another connection commits: no table is read).
extension SQLiteEngine: SQLChangeFeed {
  func latestChange() throws -> Int64 {
    try guarded {
      noteDataVersion(try dataVersion())
      return try connection.prepare("SELECT coalesce(max(seq), 0) FROM changes").firstRow {
        $0.int(0)
      } ?? 0
    }
  }

  func feedEdges() throws -> (top: Int64, pruned: Int64) {
    try guarded {
      noteDataVersion(try dataVersion())
      return try connection.prepare(
        "SELECT coalesce(max(seq), 0), \(SQLiteSchema.prunedThrough) FROM changes"
      ).firstRow { ($0.int(0), $0.int(1)) } ?? (0, 0)
    }
  }

  func readableChanges(since: Int64, top: Int64, limit: Int, as caller: Principals) -> SQL {
    """
    SELECT c.seq, c.class AS class_name, c.objectId AS object_id, c.kind, \
    c.parentId AS parent_id, c.number
    FROM changes c
    WHERE c.seq > \(since) AND c.seq <= \(top) AND \(sql: SQLiteEngine.aclTest("c.readers", caller))
    ORDER BY c.seq LIMIT \(limit)
    """
  }

  var feedNumbersGoBack: Bool { true }

  func wakeFileDescriptor() throws -> Int32? { nil }

  /// Twenty checks a second: each is a look at shared memory and a `stat`, microseconds.
  var wakePollInterval: Double { 0.05 }

  func hasPendingWakeup() throws -> Bool {
    if connection.fileHasMoved {
      throw DatastoreError(
        .systemError,
        reason: BoardAccessReason.movedOrDeleted(path: location, nothingWritten: false))
    }
    let version = try guarded { try dataVersion() }
    defer { noteDataVersion(version) }
    return lastDataVersion.map { $0 != version } ?? true
  }

  /// `PRAGMA data_version` moves when another connection commits, the connection's own count
  /// of changed rows when it writes itself: together they move on every commit that changes a
  /// row. A file moved or deleted under the connection is an error, not a state.
  /// The clocks (`StateMark.feed` and the rest) are read again only when one of the two moved.
  func stateMark() throws -> StateMark? {
    try checkInPlace()
    let version = try guarded { try dataVersion() }
    let own = connection.totalChanges
    if let last = lastMark, last.external == version, last.own == own { return last }
    let (clocks, schema) = try guarded { try writeClocksAndSchema() }
    let mark = StateMark(external: version, own: own, clocks: clocks)
    // An index made elsewhere moves `meta` (`ensureIndexes`); one dropped or made by hand
    // (sqlite3), only the schema's version.
    if let last = lastMark, last.meta != mark.meta || lastSchemaVersion != schema {
      forgetIndexLeads()
    }
    lastSchemaVersion = schema
    lastMark = mark
    return mark
  }

  /// The feed's last number and the clocks of `write_clocks` (SQLiteSchema version 22).
  func writeClocks() throws -> StateMark { try writeClocksAndSchema().clocks }

  /// The clocks, and `PRAGMA schema_version` read in the same statement.
  private func writeClocksAndSchema() throws -> (clocks: StateMark, schema: Int64) {
    try connection.prepare(
      """
      SELECT (SELECT coalesce(max(seq), 0) FROM changes),
        (SELECT n FROM write_clocks WHERE name = 'identity'),
        (SELECT n FROM write_clocks WHERE name = 'meta'),
        (SELECT n FROM write_clocks WHERE name = 'files'),
        (SELECT n FROM write_clocks WHERE name = 'quiet'),
        (SELECT schema_version FROM pragma_schema_version)
      """
    ).firstRow {
      (
        StateMark(
          feed: $0.int(0), identity: $0.int(1), meta: $0.int(2), files: $0.int(3),
          quiet: $0.int(4)), $0.int(5)
      )
    } ?? (StateMark(feed: 0, identity: 0, meta: 0, files: 0, quiet: 0), 0)
  }

  func writtenObjects(after sequence: Int64, limit: Int) throws -> [WrittenObject]? {
    try guarded {
      let pruned =
        try connection.prepare("SELECT \(SQLiteSchema.prunedThrough)").firstRow { $0.int(0) } ?? 0
      guard sequence >= pruned else { return nil }
      let rows = try connection.prepare(
        "SELECT seq, class, objectId, kind, parentId FROM changes WHERE seq > ? ORDER BY seq LIMIT ?"
      ).rows([.integer(sequence), .integer(Int64(limit) + 1)]) { row in
        WrittenObject(
          sequence: row.int(0), className: row.lossyText(1) ?? "",
          objectId: row.lossyText(2) ?? "", parentId: row.lossyText(4),
          kind: Change.Kind(rawValue: Int(row.int(3))) ?? .updated)
      }
      return rows.count > limit ? nil : rows
    }
  }

  func checkInPlace() throws {
    if connection.fileHasMoved {
      throw DatastoreError(
        .systemError,
        reason: BoardAccessReason.movedOrDeleted(path: location, nothingWritten: false))
    }
  }

  func dataVersion() throws -> Int64 {
    try connection.prepare("PRAGMA data_version").firstRow { $0.int(0) } ?? 0
  }
}
