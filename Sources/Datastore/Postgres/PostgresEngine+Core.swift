/// PostgreSQL as the SQL core runs it (`SQLCoreEngine`): statements rendered with `$1`, `$2`…,
/// rows read by name through the result's field names.
extension PostgresEngine: SQLCoreEngine, SQLFiles, SQLFinding {
  static var dialect: SQLDialect { .postgres }

  func rows<T>(_ statement: SQL, _ decode: (any SQLRow) throws -> T) throws -> [T] {
    let result = try run(sql: statement)
    let positions = result.columnPositions
    return try result.rows {
      try decode(PostgresRow(result: result, row: $0, positions: positions))
    }
  }

  static func principals(ofColumn text: String?) -> Set<String> {
    Set(PostgresEngine.parseArray(text))
  }
}

/// One row of a `PostgresResult`, read by name.
struct PostgresRow: SQLRow {
  let result: PostgresResult
  let row: Int
  let positions: [String: Int]

  func position(of name: String) -> Int? { positions[name] }
  func isNull(at position: Int) -> Bool { result.isNull(row, position) }
  func int(at position: Int) -> Int64 { result.int(row, position) }
  func text(at position: Int) -> String? { result.text(row, position) }
  func bytes(at position: Int) -> [UInt8]? { result.bytes(row, position) }
}
