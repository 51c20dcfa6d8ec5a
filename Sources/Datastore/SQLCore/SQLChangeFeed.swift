/// The change feed, once for both SQL engines: the top read first, then the rows the caller may
/// read up to it, decoded by name. Each engine says where its feed lives and how it is read
/// (`feedEdges`, `readableChanges`); what it answers is decided here.
protocol SQLChangeFeed: SQLCoreEngine {
  /// The feed's last number and the number through which its rows were pruned. Read before
  /// the rows: every row up to the top is committed (SQLite has one writer; PostgreSQL numbers
  /// at commit), so the next read can start above it without missing one committed meanwhile.
  func feedEdges() throws -> (top: Int64, pruned: Int64)

  /// The changes numbered in (`since`, `top`] that `caller` may read, in order, at most
  /// `limit`, as the columns `seq`, `class_name`, `object_id`, `kind`, `parent_id`, `number`.
  func readableChanges(since: Int64, top: Int64, limit: Int, as caller: Principals) -> SQL

  /// True when the feed's numbers can go back (SQLite reclaims them after a row written by
  /// hand, `reclaimFeedNumbers`); PostgreSQL's sequence never does.
  var feedNumbersGoBack: Bool { get }
}

extension SQLChangeFeed {
  func changes(since: Int64, limit: Int, as caller: Principals) throws -> ChangeBatch {
    try act(as: caller)
    let (top, pruned) = try feedEdges()
    let rows = try self.rows(readableChanges(since: since, top: top, limit: limit, as: caller)) {
      Change(row: $0)
    }
    let full = rows.count == limit
    // A cursor above the top saw numbers taken back: it comes back to the top, or it would wait
    // for ever above every new change. Rows after `since` were pruned: the reader is told (the
    // window, `Change.window`).
    let next = full ? rows.last!.sequence : feedNumbersGoBack ? top : max(top, since)
    return ChangeBatch(changes: rows, next: next, hasMore: full, missed: since < pruned)
  }
}

extension Change {
  /// A row of `SQLChangeFeed.readableChanges`.
  init(row: any SQLRow) {
    self.init(
      sequence: row.int("seq"), className: row.text("class_name") ?? "",
      objectId: row.text("object_id") ?? "",
      kind: Change.Kind(rawValue: Int(row.int("kind"))) ?? .updated,
      parentId: row.text("parent_id"), number: row.optionalInt("number"))
  }
}
