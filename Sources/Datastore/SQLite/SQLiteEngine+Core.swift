import CSQLite

/// SQLite as the SQL core runs it (`SQLCoreEngine`): statements rendered with `?`, rows read
/// by name through the statement's column names.
extension SQLiteEngine: SQLCoreEngine, SQLFiles, SQLFinding {
  static var dialect: SQLDialect { .sqlite }

  func rows<T>(_ statement: SQL, _ decode: (any SQLRow) throws -> T) throws -> [T] {
    try guarded { try connection.rows(statement) { try decode($0) } }
  }

  /// Each statement tests the caller's principals itself.
  func act(as caller: Principals) throws {}

  static func principals(ofColumn text: String?) -> Set<String> { ACL.parseColumn(text ?? "") }
}

extension Row: SQLRow {
  func position(of name: String) -> Int? { statement.columnPositions[name] }
  func isNull(at position: Int) -> Bool { isNull(Int32(position)) }
  func int(at position: Int) -> Int64 { int(Int32(position)) }
  func text(at position: Int) -> String? { lossyText(Int32(position)) }
  func bytes(at position: Int) -> [UInt8]? { isNull(at: position) ? nil : blob(Int32(position)) }
}

extension Statement {
  /// Each column's position by its name (its alias, or the column's own), read once: a
  /// statement is prepared once and kept (`Connection.prepare`).
  var columnPositions: [String: Int] {
    if let known = namedColumns { return known }
    var positions: [String: Int] = [:]
    for column in 0..<sqlite3_column_count(handle) {
      if let name = sqlite3_column_name(handle, column) {
        positions[String(cString: name)] = Int(column)
      }
    }
    namedColumns = positions
    return positions
  }
}
