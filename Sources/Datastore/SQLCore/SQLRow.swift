/// A row of an answer, read by column name: the one way the SQL core decodes what either engine
/// returns (as GRDB's `Row["name"]`). Each engine gives the positions (`position(of:)`, looked
/// up once per statement) and its cells; the names are the columns' aliases in the statements
/// the core writes, spelled the same for both engines (snake_case, which PostgreSQL keeps).
protocol SQLRow {
  /// Where the column named `name` stands in the answer, nil when it has none.
  func position(of name: String) -> Int?
  func isNull(at position: Int) -> Bool
  func int(at position: Int) -> Int64
  /// The text of a cell, bytes that are not UTF-8 shown as U+FFFD (a row someone wrote by hand
  /// must not make a whole listing unreadable); nil for NULL.
  func text(at position: Int) -> String?
  /// A blob (SQLite) or bytea (PostgreSQL) cell; nil for NULL.
  func bytes(at position: Int) -> [UInt8]?
}

extension SQLRow {
  /// The column's position; a name the statement does not select is the core's own mistake.
  private func column(_ name: String) -> Int? {
    let found = position(of: name)
    assert(found != nil, "no column \(name) in the answer")
    return found
  }

  func isNull(_ name: String) -> Bool { column(name).map(isNull(at:)) ?? true }

  /// An integer; 0 for NULL.
  func int(_ name: String) -> Int64 { column(name).map(int(at:)) ?? 0 }

  /// An integer, or nil for NULL.
  func optionalInt(_ name: String) -> Int64? {
    guard let at = column(name), !isNull(at: at) else { return nil }
    return int(at: at)
  }

  func text(_ name: String) -> String? { column(name).flatMap(text(at:)) }

  func bytes(_ name: String) -> [UInt8]? { column(name).flatMap(bytes(at:)) }
}
