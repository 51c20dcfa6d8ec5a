/// Read positions, revisions, moderation and roles on PostgreSQL. The server decides: read
/// positions are the caller's own rows (no member grant on the table: `forum.read_positions_of`,
/// `forum.my_read_positions` and `forum.mark_read` reach the caller's own only), revisions are
/// readable where their object is, and moderation and roles go through the owner's functions,
/// which check the caller's roles themselves.
extension PostgresEngine: SQLReading {
  private static let me = "(SELECT forum.caller_id())"

  func markRead(_ parentClass: String, objectId: String, upTo number: Int64, as caller: Principals)
    throws
  {
    try act(as: caller)
    _ = try childRule(of: parentClass)
    let from = PostgresEngine.source(
      parentClass, privateClasses: privateClasses, keyColumns: keyColumns, ids: [objectId])
    let statement: SQL = """
      WITH readable AS (
        SELECT o.object_id FROM \(sql: from)
        WHERE o.object_id = \(objectId) AND o.class = \(literal: parentClass)\
      \(sql: PostgresEngine.readFilter(caller)))
      SELECT count(*), forum.mark_read(array_agg(object_id), array_agg(\(number)::bigint))
      FROM readable
      """
    let (sql, values) = statement.postgres
    try write {
      // Positions are written by the server's function only (members cannot read the table).
      if try run(sql, values).int(0, 0) == 0 { throw DatastoreError.notFound }
    }
  }

  func markAllRead(_ parentClass: String, as caller: Principals) throws {
    try act(as: caller)
    let rule = try childRule(of: parentClass)
    let from = PostgresEngine.source(
      parentClass, privateClasses: privateClasses, keyColumns: keyColumns)
    let statement: SQL = """
      WITH readable AS (
        SELECT o.object_id, coalesce((o.data->>\(literal: rule.lastNumberField))::bigint, 0) AS last
        FROM \(sql: from) WHERE o.class = \(literal: parentClass)\
      \(sql: PostgresEngine.readFilter(caller)))
      SELECT forum.mark_read(array_agg(object_id), array_agg(last)) FROM readable
      """
    let (sql, values) = statement.postgres
    try write { _ = try run(sql, values) }
  }

  func unread(
    _ parentClass: String, objectIds: [String], countUpTo limit: Int, as caller: Principals
  )
    throws -> [String: UnreadState]
  {
    try act(as: caller)
    let rule = try childRule(of: parentClass)
    let ids = PostgresEngine.arrayValue(objectIds)
    let parents = PostgresEngine.source(
      parentClass, privateClasses: privateClasses, keyColumns: keyColumns, ids: objectIds,
      alias: "p")
    // A child lives where its parent does: a private parent's children are the caller's own
    // private rows under it, which the caller may read as it may the parent.
    let privateChildren: SQL =
      "forum.private_rows(\(literal: rule.childClass), p.object_id, NULL) c"
    let pointer: SQL = """
      jsonb_build_object('__type', 'Pointer', 'className', \(literal: parentClass), \
      'objectId', p.object_id)
      """
    // The key column (text equality, leakproof) lets row-level security keep the index.
    let key = PostgresSchema.keyColumn(for: rule.parentField).flatMap {
      keyColumns.contains($0) ? $0 : nil
    }
    let sameParent: SQL =
      key.map { column -> SQL in "c.\(column: column) = (\(sql: pointer) #>> '{}')" }
      ?? "c.data->\(literal: rule.parentField) = \(sql: pointer)"
    let mine: SQL =
      rules.owner(of: rule.childClass).map { owner -> SQL in
        """
         AND (c.data->\(literal: owner.field)->>'objectId') IS DISTINCT FROM \
        \(sql: SQL(verbatim: PostgresEngine.me))
        """
      } ?? ""
    let last: SQL = "coalesce((p.data->>\(literal: rule.lastNumberField))::bigint, 0)"
    func count(_ children: SQL) -> SQL {
      """
      (SELECT count(*) FROM (SELECT 1 FROM \(sql: children)
         WHERE c.class = \(literal: rule.childClass) AND \(sql: sameParent)
         AND (c.data->>\(literal: rule.numberField))::bigint > coalesce(rp.position, 0)\(sql: mine)
         LIMIT \(limit)::bigint) AS unread)
      """
    }
    let unread: SQL =
      privateClasses.contains(rule.childClass)
      ? count(privateChildren)
      : """
      CASE WHEN p.in_private THEN \(sql: count(privateChildren)) \
      ELSE \(sql: count("forum.objects c")) END
      """
    let statement: SQL = """
      SELECT p.object_id, rp.position,
        CASE WHEN coalesce(rp.position, 0) >= \(sql: last) THEN 0 ELSE \(sql: unread) END AS unread
      FROM \(sql: parents)
      LEFT JOIN forum.read_positions_of(\(ids)::text[]) rp ON rp.object_id = p.object_id
      WHERE p.class = \(literal: parentClass) AND p.object_id = ANY(\(ids)::text[])\
      \(sql: PostgresEngine.readFilter(caller, table: "p"))
      """
    var states: [String: UnreadState] = [:]
    for (objectId, state) in try rows(
      statement, { ($0.text("object_id") ?? "", UnreadState(row: $0)) })
    {
      states[objectId] = state
    }
    return states
  }

  // Members read revisions only through the server's functions, which find the object among
  // what the caller may read first (issue 22).
  func revisionTotals(_ className: String, objectId: String) -> SQL {
    "SELECT total, last FROM forum.revision_totals(\(className), \(objectId))"
  }

  func revisionPage(_ className: String, objectId: String, skip: Int, limit: Int) -> SQL {
    """
    SELECT date, data::text AS data, number
    FROM forum.revisions_of(\(className), \(objectId), \(skip)::bigint, \(limit)::bigint)
    """
  }

  func moderate(_ className: String, objectId: String, as caller: Principals) throws {
    try act(as: caller)
    try write { _ = try run(sql: "SELECT forum.moderate(\(className), \(objectId))") }
  }

  func setFlag(_ rule: FlagRule, objectId: String, on: Bool, as caller: Principals) throws {
    try act(as: caller)
    try write {
      _ = try run(
        sql: """
          SELECT forum.set_flag(\(rule.className), \(objectId), \(rule.field), \
          \(on ? "true" : "false")::boolean)
          """)
    }
  }

  func currentPrincipals(of caller: Principals) throws -> Principals {
    try act(as: caller)
    guard isServer else { return try serverPrincipals(userId: caller.userId ?? "") }
    // An app user's roles are rows of forum.app_role_members (a moderator at the ssh door).
    let names = PostgresEngine.parseArray(try run("SELECT forum.principals()::text").text(0, 0))
    return Principals(
      userId: caller.userId,
      roles: names.filter { $0.hasPrefix("role:") }.map { String($0.dropFirst(5)) }.sorted(),
      isMaster: caller.isMaster, sessionHash: caller.sessionHash)
  }

  func isBoardOwner(_ caller: Principals) throws -> Bool {
    try run("SELECT forum.is_board_owner()").bool(0, 0)
  }

  func setRole(_ role: String, userId: String, member: Bool, as caller: Principals) throws {
    try act(as: caller)
    try write {
      _ = try run(
        sql: """
          SELECT forum.set_board_role(\(role), \(userId), \(member ? "true" : "false")::boolean)
          """)
    }
  }

  func setting(_ name: String, as caller: Principals) throws -> String? {
    try act(as: caller)
    return try run(sql: "SELECT forum.board_setting(\(name))").text(0, 0)
  }

  func setSetting(_ name: String, value: String?, as caller: Principals) throws {
    try act(as: caller)
    try write {
      _ = try run(
        sql: "SELECT forum.set_board_setting(\(name), \(value.map(SQLValue.text) ?? .null))")
    }
  }

  func members(ofRole role: String, as caller: Principals) throws -> [String] {
    try act(as: caller)
    let result = try run(sql: "SELECT forum.board_role_members(\(role))")
    return result.rows { result.text($0, 0) ?? "" }
  }

  /// `find`'s `unreadOnly` on the server: the caller's own positions, from their own rows.
  /// Unread is "not yours with nothing in it, and no position at the last child": all of the
  /// caller's positions (`forum.my_read_positions()`, schema step 14) hashed once, looked up
  /// by each row of the ordered index walk. (A join would lose the walk's order: a hash join's
  /// output counts as unordered, and a nested loop scans every position for every row.) A
  /// position past the last child is only ever written by hand; such a thread passes this
  /// prefilter and `unread` counts nothing in it.
  static func unreadFilter(_ query: Query, rules: EngineRules) -> SQL? {
    guard query.unreadOnly else { return nil }
    guard let rule = rules.parentRules(of: query.className).first else { return "false" }
    let last: SQL = "coalesce((o.data->>\(literal: rule.lastNumberField))::bigint, 0)"
    var notEmpty: SQL = "\(sql: last) > 0"
    if let owner = rules.owner(of: query.className) {
      notEmpty = """
        ((o.data->\(literal: owner.field)->>'objectId') IS DISTINCT FROM \
        \(sql: SQL(verbatim: me)) OR \(sql: last) > 0)
        """
    }
    return """
      \(sql: notEmpty) AND (o.object_id, \(sql: last)) NOT IN (
        SELECT rp.object_id, rp.position FROM forum.my_read_positions() rp)
      """
  }
}
