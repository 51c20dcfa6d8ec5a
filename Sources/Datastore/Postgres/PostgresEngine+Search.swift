/// Full-text search on PostgreSQL: each term is looked for in the object's own text fields
/// (ASCII letters folded to lower case on both sides), under row-level security and the same
/// WHERE clause `find` uses. Terms of three or more characters first take their candidates from
/// the trigram index (`PostgresSearch`); shorter ones are checked on the rows the other
/// conditions leave. Newest first.
extension PostgresEngine {
  func search(_ search: TextSearch, as caller: Principals) throws -> [DataObject] {
    try act(as: caller)
    let (sql, values) = try searchStatement(search, as: caller)
    return try objects(run(sql, values))
  }

  /// The SELECT `search` runs and its parameters.
  func searchStatement(_ search: TextSearch, as caller: Principals) throws -> (
    sql: String, values: [PostgresValue]
  ) {
    var values: [PostgresValue] = []
    var branches: [String] = []
    // Private classes are read from the caller's own rows, each in a SELECT of its own.
    var privateParts: [String] = []
    for target in search.targets {
      guard let fields = textFields[target.className] else {
        throw DatastoreError.invalid("className", "\(target.className) has no text index")
      }
      let query = Query(className: target.className, equalTo: target.equalTo)
      let isPrivate = privateClasses.contains(target.className)
      // The caller's own private rows of the class (all of a private class's rows; a public
      // class's private threads and the like), matched by the caller's own candidates.
      let mine = PostgresEngine.privateRows(
        target.className, parent: PostgresEngine.parentNamed(query, rules: rules)
      ).spliced(into: &values)
      var clause = String(
        PostgresEngine.whereClause(query, caller, keyColumns: keyColumns)
          .spliced(into: &values).dropFirst("WHERE ".count))
      var publicClause = ""
      var privateClause = ""
      for term in search.terms {
        values.append(.text(PostgresSearch.likePattern(TextSearch.foldedASCII(term))))
        let mark = "$\(values.count)"
        let tests = fields.map { "\(PostgresSearch.folded("o.data->>'\($0)'")) LIKE \(mark)" }
        clause += " AND (" + tests.joined(separator: " OR ") + ")"
        // Three characters or more: the trigram index, through the class's function, gives
        // the candidates (readable ones only), which the member's own policies then filter.
        if term.unicodeScalars.count >= 3 && indexedClasses.contains(target.className) {
          publicClause +=
            " AND o.id IN (SELECT \(PostgresSearch.candidatesFunction)('\(target.className)', \(mark)))"
          privateClause +=
            " AND o.id IN (SELECT \(PostgresSearch.privateCandidatesFunction)('\(target.className)', \(mark)))"
        }
      }
      privateParts.append(
        "SELECT \(PostgresEngine.columns), o.create_date, 1, o.id FROM \(mine) o WHERE \(clause)\(privateClause)"
      )
      if !isPrivate {
        branches.append("(\(clause)\(publicClause))")
      }
    }
    guard !branches.isEmpty || !privateParts.isEmpty else {
      return ("SELECT NULL WHERE false", [])
    }
    values += [.text(String(search.limit)), .text(String(search.skip))]
    if !privateParts.isEmpty {
      // Two tables, two id sequences: newest first by date, the table then the id breaking ties.
      var parts = privateParts
      if !branches.isEmpty {
        parts.insert(
          "SELECT \(PostgresEngine.columns), o.create_date, 0, o.id FROM forum.objects o WHERE "
            + branches.joined(separator: " OR "), at: 0)
      }
      let sql = """
        SELECT * FROM (\(parts.joined(separator: " UNION ALL "))) AS found(c1, c2, c3, c4, c5, c6,
          c7, sort_date, sort_table, sort_id)
        ORDER BY sort_date DESC, sort_table DESC, sort_id DESC
        LIMIT $\(values.count - 1) OFFSET $\(values.count)
        """
      return (sql, values)
    }
    let sql = """
      SELECT \(PostgresEngine.columns) FROM forum.objects o WHERE \(branches.joined(separator: " OR "))
      ORDER BY o.id DESC LIMIT $\(values.count - 1) OFFSET $\(values.count)
      """
    return (sql, values)
  }
}
