import CSQLite

/// Full-text search on SQLite. Terms of three or more characters go to the trigram index
/// (`search_text MATCH`), which narrows the rows; so do one- and two-character terms (天気), as
/// any of the index's trigrams they begin (the indexed text ends in two newlines, so every short
/// substring begins one). Every term is then checked with LIKE on the object's own fields, which
/// makes the rule exact (a substring, ASCII case ignored, within one field). Each target class
/// is filtered by the same WHERE clause `find` uses, the caller's readability included.
extension SQLiteEngine {
  /// Above this many readable matches, results come newest first (the index streams them in that
  /// order and stops at the page) instead of ranked by bm25 (which must score every match).
  static let rankedMatchLimit = 2000

  /// A short term that begins more trigrams than this is in so many posts that walking the
  /// newest ones finds a page sooner than a query of that many trigrams would.
  static let shortTermTrigramLimit = 200

  func search(_ search: TextSearch, as caller: Principals) throws -> [DataObject] {
    let statement = try searchStatement(search, as: caller)
    return try guarded { try connection.prepare(statement.sql).rows(statement.values, object) }
  }

  /// The SELECT `search` runs and its parameters (forum-bench runs it raw beside the API).
  func searchStatement(_ search: TextSearch, as caller: Principals) throws -> (
    sql: String, values: [SQLValue]
  ) {
    var shortTerms: [[String]] = []
    // False when a term begins no trigram of the index: no indexed post holds it (a queued one
    // may).
    var indexMayMatch = true
    for term in search.terms where term.unicodeScalars.count < 3 {
      guard let trigrams = try trigrams(startingWith: term) else { continue }
      if trigrams.isEmpty { indexMayMatch = false }
      shortTerms.append(trigrams)
    }
    let match = SQLiteSearch.matchExpression(search.terms, shortTerms: shortTerms)
    // Ranked only by the words of three or more characters, as before short words had an index.
    let rankable = search.terms.contains { $0.unicodeScalars.count >= 3 }
    var branches: [SQL] = []
    for target in search.targets {
      guard let fields = textFields[target.className] else {
        throw DatastoreError.invalid("className", "\(target.className) has no text index")
      }
      let query = Query(className: target.className, equalTo: target.equalTo)
      var clause = SQLiteEngine.whereTerms(query, caller, rules: rules)
      for term in search.terms {
        let pattern = SQL.likePattern(term)
        let tests = fields.map { field -> SQL in
          "\(sql: SQL(verbatim: SQLiteEngine.expression(for: field))) LIKE \(pattern) ESCAPE '\\'"
        }
        clause.append(" AND (\(sql: SQL.joined(tests, separator: " OR ")))")
      }
      branches.append("(\(sql: clause))")
    }
    guard !branches.isEmpty else { return ("SELECT NULL WHERE 0", []) }
    let filter = SQL.joined(branches, separator: " OR ")
    let columns = SQLiteEngine.objectColumns
    guard let match else {
      // Newest first by walking the table backwards, stopping at the page: through the class
      // indexes (the planner's choice for the OR of classes) every row would be read and sorted.
      let statement: SQL = """
        SELECT \(sql: columns) FROM objects o NOT INDEXED WHERE (\(sql: filter)) \
        ORDER BY o.id DESC LIMIT \(search.limit) OFFSET \(search.skip)
        """
      return statement.rendered(.sqlite)
    }
    // Two arms: the indexed rows through FTS5, and the rows commits queued for it
    // (`search_pending`, bounded by `SQLiteSearch.pendingLimit`) tested by the same filter,
    // whose LIKE tests make the rule exact on their own (CROSS JOIN: the queue first, as the
    // planner knows nothing of its size). A row is in one of the two, never both.
    let indexed: SQL = """
      FROM search_text s JOIN objects o ON o.id = s.rowid \
      WHERE search_text MATCH \(match) AND (\(sql: filter))
      """
    let queued: SQL =
      "FROM search_pending q CROSS JOIN objects o ON o.id = q.id WHERE (\(sql: filter))"
    let arms = indexMayMatch ? [indexed, queued] : [queued]
    let ranked =
      try rankable
      && matchCount(arms, above: SQLiteEngine.rankedMatchLimit)
    // Each arm gives the object's columns, then its rank and its id.
    let rank: SQL =
      ranked ? SQLiteEngine.relevance(search, textFields: textFields) : "0"
    let selects = zip(arms, indexMayMatch ? ["s.rowid", "q.id"] : ["q.id"]).map {
      arm, id -> SQL in
      "SELECT \(sql: columns), \(sql: rank), \(sql: SQL(verbatim: id)) \(sql: arm)"
    }
    // Unranked, each arm streams newest first (FTS5 by rowid, the queue by its key) and the
    // two merge, stopping at the page.
    let (rankPosition, idPosition) = (
      SQL(verbatim: String(SQLiteEngine.objectColumnCount + 1)),
      SQL(verbatim: String(SQLiteEngine.objectColumnCount + 2))
    )
    let order: SQL =
      ranked
      ? "ORDER BY \(sql: rankPosition) DESC, \(sql: idPosition) DESC"
      : "ORDER BY \(sql: idPosition) DESC"
    let statement: SQL = """
      \(sql: SQL.joined(selects, separator: " UNION ALL ")) \
      \(sql: order) LIMIT \(search.limit) OFFSET \(search.skip)
      """
    return statement.rendered(.sqlite)
  }

  /// A post's relevance from the post alone: BM25's term-frequency part with every word weighed
  /// alike and a fixed typical length in place of the average. FTS5's bm25 weighs words by how
  /// many rows of the whole index hold them and by the index's average length, private rows
  /// included, so the order of a search told a third person whether others' messages held a
  /// word. Words are counted as search matches them: substrings, ASCII case ignored (SQLite's
  /// `lower` folds ASCII only).
  static func relevance(_ search: TextSearch, textFields: [String: [String]]) -> SQL {
    let cases = search.targets.map(\.className).filter { textFields[$0] != nil }.map {
      "WHEN \(literal: $0) THEN \(sql: SQL(verbatim: SQLiteSearch.body("o", fields: textFields[$0]!)))"
        as SQL
    }
    let body: SQL = "lower(CASE o.class \(sql: SQL.joined(cases, separator: " ")) ELSE '' END)"
    let saturation: SQL = "(1.2 * (0.25 + 0.75 * length(\(sql: body)) / 256.0))"
    let parts = search.terms.map { term -> SQL in
      let folded = TextSearch.foldedASCII(term)
      let frequency: SQL = """
        ((length(\(sql: body)) - length(replace(\(sql: body), \(folded), ''))) * 1.0 / length(\(folded)))
        """
      return "(\(sql: frequency) / (\(sql: frequency) + \(sql: saturation)))"
    }
    return "(\(sql: SQL.joined(parts, separator: " + ")))"
  }

  /// The index's terms that begin with `term` (one or two characters, folded as the trigram
  /// tokenizer folds them), read from `search_terms` (fts5vocab) one seek each; nil when there
  /// are more than `shortTermTrigramLimit` of them or the tokenizer's folding cannot be read.
  func trigrams(startingWith term: String) throws -> [String]? {
    let pad = 3 - term.unicodeScalars.count
    // The tokenizer's first trigram of the term and its padding is the folded term and `pad`
    // newlines.
    let text = Array((term + "\n\n").utf8CString)
    var token = [CChar](repeating: 0, count: 32)
    let length = text.withUnsafeBufferPointer { text in
      token.withUnsafeMutableBufferPointer { out in
        forum_trigram_first_token(
          connection.handle, text.baseAddress, Int32(text.count - 1), out.baseAddress,
          Int32(out.count))
      }
    }
    guard length > pad else { return nil }
    let bytes = token[0..<Int(length)].map { UInt8(bitPattern: $0) }
    guard bytes.suffix(pad).allSatisfy({ $0 == 10 }),
      let prefix = String(validating: bytes.dropLast(pad), as: UTF8.self)
    else { return nil }
    // The next term at or after `from`, no further than the last one beginning with `prefix`.
    let next = try connection.prepare(
      "SELECT term FROM search_terms WHERE term >= ? AND term <= ? LIMIT 1")
    let last = prefix + "\u{10FFFF}"
    var found: [String] = []
    var from = prefix
    while let term = try guarded({
      try next.firstRow([.text(from), .text(last)]) { try $0.text(0) }
    }) ?? nil, term.utf8.starts(with: prefix.utf8) {
      if found.count == SQLiteEngine.shortTermTrigramLimit { return nil }
      found.append(term)
      // The least text after `term` (`term > ?` would step through its every instance).
      from = term + "\u{1}"
    }
    return found
  }

  /// True when at most `limit` posts that the arms (`searchStatement`) let through (the
  /// caller's readable matches) match, counted no further than that. Only readable posts
  /// count: counting every match would let the order tell a third person whether someone's
  /// private messages hold the words.
  private func matchCount(_ arms: [SQL], above limit: Int) throws -> Bool {
    let counts = arms.map { arm -> SQL in
      "(SELECT count(*) FROM (SELECT 1 \(sql: arm) LIMIT \(limit + 1)))"
    }
    let statement: SQL = "SELECT \(sql: SQL.joined(counts, separator: " + "))"
    let (sql, values) = statement.rendered(.sqlite)
    let count = try guarded { try connection.prepare(sql).firstRow(values) { $0.int(0) } ?? 0 }
    return count <= limit
  }
}
