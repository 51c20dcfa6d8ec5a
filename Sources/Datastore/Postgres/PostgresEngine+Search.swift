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
    var branches: [SQL] = []
    // Private classes are read from the caller's own rows, each in a SELECT of its own.
    var privateParts: [SQL] = []
    let columns = PostgresEngine.objectColumns
    for target in search.targets {
      guard let fields = textFields[target.className] else {
        throw DatastoreError.invalid("className", "\(target.className) has no text index")
      }
      let query = Query(className: target.className, equalTo: target.equalTo)
      let isPrivate = privateClasses.contains(target.className)
      // The caller's own private rows of the class (all of a private class's rows; a public
      // class's private threads and the like), matched by the caller's own candidates.
      let mine = PostgresEngine.privateRows(
        target.className, parent: PostgresEngine.parentNamed(query, rules: rules))
      var clause = PostgresEngine.whereTerms(query, caller, keyColumns: keyColumns)
      var publicClause: SQL = ""
      var privateClause: SQL = ""
      for term in search.terms {
        let pattern = SQL.likePattern(TextSearch.foldedASCII(term))
        let tests = fields.map { field -> SQL in
          let text = SQL(verbatim: PostgresSearch.folded("o.data->>" + SQL.quotedLiteral(field)))
          return "\(sql: text) LIKE \(pattern)"
        }
        clause.append(" AND (\(sql: SQL.joined(tests, separator: " OR ")))")
        // Three characters or more: the trigram index, through the class's function, gives
        // the candidates (readable ones only), which the member's own policies then filter.
        if term.unicodeScalars.count >= 3 && indexedClasses.contains(target.className) {
          let candidates = SQL(verbatim: PostgresSearch.candidatesFunction)
          let privateCandidates = SQL(verbatim: PostgresSearch.privateCandidatesFunction)
          publicClause.append(
            " AND o.id IN (SELECT \(sql: candidates)(\(literal: target.className), \(pattern)))")
          privateClause.append(
            """
             AND o.id IN (SELECT \(sql: privateCandidates)(\(literal: target.className), \
            \(pattern)))
            """)
        }
      }
      privateParts.append(
        """
        SELECT \(sql: columns), o.create_date, 1, o.id FROM \(sql: mine) o \
        WHERE \(sql: clause)\(sql: privateClause)
        """)
      if !isPrivate {
        branches.append("(\(sql: clause)\(sql: publicClause))")
      }
    }
    guard !branches.isEmpty || !privateParts.isEmpty else {
      return ("SELECT NULL WHERE false", [])
    }
    let anyBranch = SQL.joined(branches, separator: " OR ")
    let page: SQL = "LIMIT \(search.limit) OFFSET \(search.skip)"
    guard privateParts.isEmpty else {
      // Two tables, two id sequences: newest first by date, the table then the id breaking ties.
      var parts = privateParts
      let names = SQL(verbatim: StoredObject.names.joined(separator: ", "))
      if !branches.isEmpty {
        parts.insert(
          "SELECT \(sql: columns), o.create_date, 0, o.id FROM forum.objects o WHERE \(sql: anyBranch)",
          at: 0)
      }
      let statement: SQL = """
        SELECT * FROM (\(sql: SQL.joined(parts, separator: " UNION ALL "))) AS found(\
        \(sql: names), sort_date, sort_table, sort_id)
        ORDER BY sort_date DESC, sort_table DESC, sort_id DESC
        \(sql: page)
        """
      return statement.postgres
    }
    let statement: SQL = """
      SELECT \(sql: columns) FROM forum.objects o WHERE \(sql: anyBranch)
      ORDER BY o.id DESC \(sql: page)
      """
    return statement.postgres
  }
}
