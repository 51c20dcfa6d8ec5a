/// Full-text search on SQLite. Terms of three or more characters go to the trigram index
/// (`search_text MATCH`), which narrows the rows; every term is then checked with LIKE on the
/// object's own fields, which makes the rule exact (a substring, ASCII case ignored, within one
/// field) and serves the one- and two-character terms trigrams cannot (天気). Each target class
/// is filtered by the same WHERE clause `find` uses, the caller's readability included. Newest
/// first, as on PostgreSQL.
extension SQLiteEngine {
  func search(_ search: TextSearch, as caller: Principals) throws -> [DataObject] {
    let statement = try searchStatement(search, as: caller)
    return try guarded { try connection.prepare(statement.sql).rows(statement.values, object) }
  }

  /// The SELECT `search` runs and its parameters (forum-bench runs it raw beside the API).
  func searchStatement(_ search: TextSearch, as caller: Principals) throws -> (
    sql: String, values: [SQLValue]
  ) {
    var values: [SQLValue] = []
    let match = SQLiteSearch.matchExpression(search.terms)
    var branches: [String] = []
    for target in search.targets {
      guard let fields = textFields[target.className] else {
        throw DatastoreError.invalid("className", "\(target.className) has no text index")
      }
      let query = Query(className: target.className, equalTo: target.equalTo)
      var clause = String(
        SQLiteEngine.whereClause(query, caller, values: &values).dropFirst("WHERE ".count))
      for term in search.terms {
        let pattern = SQLiteSearch.likePattern(term)
        let tests = fields.map { field -> String in
          values.append(.text(pattern))
          return "\(SQLiteEngine.expression(for: field)) LIKE ? ESCAPE '\\'"
        }
        clause += " AND (" + tests.joined(separator: " OR ") + ")"
      }
      branches.append("(\(clause))")
    }
    guard !branches.isEmpty else { return ("SELECT NULL WHERE 0", []) }
    let filter = branches.joined(separator: " OR ")
    let order: String
    let from: String
    if let match {
      // Newest first, as on PostgreSQL: the index streams matches in that order and stops at
      // the page, and one order on every engine pages the same.
      from = "search_text s JOIN objects o ON o.id = s.rowid"
      order = "ORDER BY s.rowid DESC"
      values.insert(.text(match), at: 0)
    } else {
      // Newest first by walking the table backwards, stopping at the page: through the class
      // indexes (the planner's choice for the OR of classes) every row would be read and sorted.
      from = "objects o NOT INDEXED"
      order = "ORDER BY o.id DESC"
    }
    let condition = match == nil ? "WHERE (\(filter))" : "WHERE search_text MATCH ? AND (\(filter))"
    values += [.integer(Int64(search.limit)), .integer(Int64(search.skip))]
    return (
      "SELECT \(SQLiteEngine.objectColumns) FROM \(from) \(condition) \(order) LIMIT ? OFFSET ?",
      values
    )
  }
}
