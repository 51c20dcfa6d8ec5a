/// Objects and files on SQLite: every write is one conditional statement; when it touches no row,
/// a second look tells "you may not" (`E403001`, the caller can read the row) from "there is
/// none" (`E404001`).
extension SQLiteEngine {
  // MARK: Objects

  func insert(_ className: String, fields: [String: JSONValue], acl: ACL, as caller: Principals)
    throws -> DataObject
  {
    try transaction {
      try refuseBanned(caller)
      var fields = fields
      // Numbers and counters are the engine's to write, whatever was passed.
      for field in rules.managedFields(of: className)
      where field != rules.owner(of: className)?.field {
        fields[field] = nil
      }
      var acl = acl
      if let pair = rules.pairRule(of: className) {
        acl = try pairACL(pair, &fields, as: caller)
      }
      for rule in rules.parentRules(of: className) {
        guard let field = rule.fileField, let name = fields[field]?.stringValue else { continue }
        try checkWritableFile(name, as: caller)
      }
      // One statement writes the row whole (`SQLiteRules.newRow`); a child is inserted from
      // its parent's row, which must be there and readable, else `E404001`.
      let child = rules.childRule(of: className)
      let template = insertTemplate(className, child: child, caller: caller)
      let parentId = SQLValue.text(child.flatMap { fields[$0.parentField]?.pointerId } ?? "")
      let noParent = DatastoreError(
        .notFound, reason: StoreReason.noSuchParent(field: child?.parentField ?? "parent"))
      var parentRow = SQLValue.null
      if let select = template.parent {
        let values = select.values.map { value -> SQLValue in
          if case .constant(let constant) = value { return constant }
          return parentId
        }
        guard let row = try connection.prepare(select.sql).firstRow(values, { $0.int(0) })
        else { throw noParent }
        parentRow = .integer(row)
      }
      let objectId = Validation.randomId()
      let values = template.insert.values.map { value -> SQLValue in
        switch value {
        case .constant(let constant): constant
        case .slot(.objectId): .text(objectId)
        case .slot(.readers): .text(ACL.column(acl.readers))
        case .slot(.writers): .text(ACL.column(acl.writers))
        case .slot(.data): .text(JSONValue.object(fields).jsonText())
        case .slot(.parentId): parentId
        case .slot(.parentRow): parentRow
        }
      }
      try connection.prepare(template.insert.sql).run(values)
      // Read back by its rowid (`RETURNING` kept the row in a table of its own first), once
      // the INSERT wrote it: one that writes nothing and says nothing (a trigger put on the
      // file that ignores it) leaves the rowid of the connection's last row, someone else's.
      guard connection.changes == 1,
        let object = try connection.prepare(SQLiteEngine.insertedRow).firstRow(
          [.integer(connection.lastInsertRowid)], object),
        object.objectId == objectId
      else { throw noParent }
      return object
    }
  }

  /// The row an INSERT just wrote, by its rowid.
  private static let insertedRow =
    "SELECT \(returnedColumns.rendered(.sqlite).sql) FROM objects WHERE id = ?"

  /// The INSERT of a `className` row by `caller`, built the first time and kept (building it
  /// was some 80,000 instructions a comment): its text, and each of its values either fixed
  /// by the class and the caller or the row's own (`InsertTemplate.Slot`). A child's parent is
  /// found first (the caller may read it) and its columns read by its rowid inside the
  /// INSERT's `VALUES`, as stored: an `INSERT … SELECT` into a table with triggers copies
  /// what it selects into a table of its own first (SQLite's rule), 20,000 instructions a
  /// comment.
  func insertTemplate(_ className: String, child: ChildRule?, caller: Principals)
    -> InsertTemplate
  {
    if let last = lastInsertTemplate, last.className == className, last.caller == caller {
      return last.template
    }
    let template = keptInsertTemplate(className, child: child, caller: caller)
    lastInsertTemplate = (className, caller, template)
    return template
  }

  private func keptInsertTemplate(_ className: String, child: ChildRule?, caller: Principals)
    -> InsertTemplate
  {
    let key =
      caller.isMaster
      ? className + "\u{0}master\u{0}" + (caller.userId ?? "")
      : ([className, caller.userId ?? ""] + caller.names.sorted()).joined(separator: "\u{0}")
    if let template = insertTemplates[key] { return template }
    func parentColumn(_ name: String) -> SQL {
      let row = InsertTemplate.Slot.parentRow.rawValue
      return "(SELECT \(sql: SQL(verbatim: name)) FROM objects WHERE id = \(named: row))"
    }
    let parentColumns = SQLiteRules.ParentColumns(
      readers: parentColumn("readers"), objectId: parentColumn("objectId"),
      counts: parentColumn("counts"))
    let row = SQLiteRules.newRow(
      className, rules, data: "\(named: InsertTemplate.Slot.data.rawValue)",
      parentId: "\(named: InsertTemplate.Slot.parentId.rawValue)", now: SQLiteRules.now,
      parent: parentColumns)
    let now = SQL(verbatim: SQLiteRules.now)
    let readers = row.readers ?? "\(named: InsertTemplate.Slot.readers.rawValue)"
    let first: SQL = """
      \(className), \(named: InsertTemplate.Slot.objectId.rawValue), \(sql: now), \(sql: now), \
      \(sql: readers), \(named: InsertTemplate.Slot.writers.rawValue), \(sql: row.data), \
      \(caller.userId.map(SQLValue.text) ?? .null), \(sql: row.counts ?? "NULL")
      """
    let insert: SQL = """
      INSERT INTO objects(\(sql: SQLiteEngine.insertedColumns), creator, counts)
      VALUES (\(sql: first))
      """
    let parent = row.parentCondition.map { condition -> SQL in
      """
      SELECT p.id FROM objects p \
      WHERE \(sql: condition) AND \(sql: SQLiteEngine.aclTest("p.readers", caller))
      """
    }
    let template = InsertTemplate(
      insert: InsertTemplate.Statement(insert), parent: parent.map(InsertTemplate.Statement.init))
    // A server's callers are many: the kept ones are bounded.
    if insertTemplates.count >= 256 { insertTemplates.removeAll(keepingCapacity: true) }
    insertTemplates[key] = template
    return template
  }

  /// A member of the banned role (`StewardRule`) writes nothing: read in the write's own
  /// transaction, so a ban counts from the next write, whatever the caller's principals say.
  func refuseBanned(_ caller: Principals) throws {
    guard let role = rules.bannedRole, let me = caller.userId else { return }
    // Its text fixed, its statement found at once (at each write of a script's comments).
    let banned = try connection.prepare(
      "SELECT 1 FROM role_members WHERE role = ? AND userId = ?"
    ).firstRow([.text(role), .text(me)]) { $0.int(0) }
    if banned != nil { throw DatastoreError(.noAccess, reason: StoreReason.banned) }
  }

  /// A step of the full-text index's upkeep in its own transaction: a batch of the rows
  /// commits queued (`SQLiteSearch.indexPending`; between two writes only once there are
  /// `pendingBusyMinimum` of them), else a merge step (`SQLiteSearch.mergeStep`).
  func tidy(idle: Bool) throws -> Bool {
    let tidied = try tidySearch(idle: idle)
    // The log the commits left, copied into the database here rather than inside a commit
    // (`Connection.checkpointsBetweenWrites`): once it is long, or whatever it holds when idle;
    // or by another connection (a server's, or a script's told that there is something to copy,
    // `checkpointNote`), this one starting a long log again.
    let pages = connection.logPages
    if checkpointsApart || checkpointNote != nil {
      connection.restartLongLog()
      if pages > 0 { checkpointNote?() }
    } else if pages >= SQLiteEngine.checkpointPages || (idle && pages > 0) {
      try guarded { try connection.checkpoint() }
    }
    return tidied
  }

  private func tidySearch(idle: Bool) throws -> Bool {
    try guarded {
      try connection.transaction {
        let before = connection.totalChanges
        let queued = try connection.prepare(
          "SELECT id FROM search_pending ORDER BY id LIMIT \(SQLiteSearch.pendingBatch)"
        ).rows { $0.int(0) }
        if let last = queued.last, !textFields.isEmpty,
          idle || queued.count >= SQLiteSearch.pendingBusyMinimum
        {
          // Rows queued are in no answer's cache as missing: a search read them directly.
          try SQLiteSearch.indexPending(through: last, fields: textFields, on: connection)
        } else {
          try connection.prepare(SQLiteSearch.mergeStep).run()
        }
        guard connection.totalChanges - before >= 2 else { return false }
        // A commit that changes no answer, said so to servers' read caches (`StateMark.quiet`).
        try connection.execute("UPDATE write_clocks SET n = n + 1 WHERE name = 'quiet'")
        return true
      }
    }
  }

  func storedBytes(as caller: Principals) throws -> Int? {
    guard let userId = caller.userId else { return nil }
    let bytes = try connection.firstRow(
      "SELECT bytes FROM storage WHERE userId = \(userId)"
    ) { $0.int(0) }
    return Int(bytes ?? 0)
  }

  private static let insertedColumns: SQL =
    "class, objectId, createDate, updateDate, readers, writers, data"
  /// The new or updated row, as the SQL core decodes it (`StoredObject`).
  private static let returnedColumns = aliasedObjectColumns(storedObjectColumns(""))

  /// An object's JSON as clients see it, in SQL (`forum import` compares it with what it is
  /// given; a read merges in Swift, `StoredObject.merge`): `data` with a parent's counters
  /// (`counts`, `SQLiteRules.counterColumn`) merged in. A row whose `data` or `counts` is not a JSON object
  /// (written past the engine) is read as its `data` alone, damaged or not as before, rather
  /// than failing the listing it is in (`CASE` tests in order: no JSON function sees a text
  /// that is not JSON).
  static func mergedData(_ table: String?) -> String {
    let (data, counts) = table.map { ($0 + ".data", $0 + ".counts") } ?? ("data", "counts")
    return """
      CASE WHEN \(counts) IS NULL OR NOT json_valid(\(data)) OR NOT json_valid(\(counts)) \
      THEN \(data) WHEN json_type(\(data)) = 'object' AND json_type(\(counts)) = 'object' \
      THEN json_patch(\(data), \(counts)) ELSE \(data) END
      """
  }

  /// A pair's object (`PairRule`): the caller and an existing other user, the pair's key, and
  /// the ACL the rule fixes (the two read, nobody writes), whatever the client asked.
  private func pairACL(_ rule: PairRule, _ fields: inout [String: JSONValue], as caller: Principals)
    throws -> ACL
  {
    guard let me = caller.userId else { throw DatastoreError(.authentication) }
    guard let partner = fields[rule.partnerField]?.pointerId,
      fields[rule.partnerField] == .pointer(className: User.className, objectId: partner)
    else { throw DatastoreError.invalid(rule.partnerField) }
    guard partner != me else {
      throw DatastoreError.invalid(rule.partnerField, "a conversation needs someone else")
    }
    let exists = try connection.firstRow(
      "SELECT 1 FROM objects WHERE class = \(User.className) AND objectId = \(partner)"
    ) { $0.int(0) }
    guard exists != nil else { throw DatastoreError(.notFound, reason: StoreReason.noSuchUser) }
    let pairKey = PairRule.pairKey(me, partner)
    let taken = try connection.firstRow(
      """
      SELECT 1 FROM objects o WHERE o.class = \(literal: rule.className) \
      AND \(sql: SQL(verbatim: SQLiteEngine.expression(for: rule.pairField))) = \(pairKey)
      """
    ) { $0.int(0) }
    guard taken == nil else {
      throw DatastoreError(.invalid, field: rule.pairField, reason: StoreReason.alreadyExists)
    }
    fields[rule.ownerField] = .pointer(className: User.className, objectId: me)
    fields[rule.pairField] = .string(pairKey)
    return ACL(readers: [me, partner], writers: [])
  }

  /// A file a parent may name: it exists for the caller (`E404001`) and the caller may write it
  /// (`E403001`), so deleting the parent can only ever take the caller's own file along.
  private func checkWritableFile(_ name: String, as caller: Principals) throws {
    let found = try connection.firstRow(
      """
      SELECT \(sql: SQLiteEngine.aclTest("f.readers", caller)), \
      \(sql: SQLiteEngine.aclTest("f.writers", caller)) FROM files f WHERE f.name = \(name)
      """
    ) { ($0.int(0) != 0, $0.int(1) != 0) }
    guard let found, found.0 || found.1 else {
      throw DatastoreError(.notFound, reason: StoreReason.noSuchFile(name))
    }
    guard found.1 else { throw DatastoreError.noAccess }
  }

  func readableObject(_ className: String, _ objectId: String, _ caller: Principals, columns: SQL)
    -> SQL
  {
    SQLiteEngine.getStatement(className, objectId: objectId, readableBy: caller, columns: columns)
  }

  /// The SELECT that `get` runs (tests explain its query plan): one row by its unique id.
  static func getStatement(
    _ className: String, objectId: String, readableBy caller: Principals,
    columns: SQL = objectColumns
  ) -> SQL {
    """
    SELECT \(sql: columns) FROM objects o
    WHERE o.objectId = \(objectId) AND o.class = \(className) AND \(sql: SQLiteEngine.aclTest("o.readers", caller))
    """
  }

  func readableObjects(_ objectIds: [String], _ caller: Principals) -> SQL {
    let ids = SQL.joined(objectIds.map { "\($0)" as SQL }, separator: ",")
    return """
      SELECT \(sql: SQLiteEngine.objectColumns) FROM objects o
      WHERE o.objectId IN (\(sql: ids)) AND \(sql: SQLiteEngine.aclTest("o.readers", caller))
      """
  }

  /// `findSQL`, built once for each shape of query (`FindShape`), then filled with each query's
  /// own values and its caller's principals.
  func findStatement(_ query: Query, _ caller: Principals) -> SQL {
    templated(query, caller, kind: "find", build: SQLiteEngine.findSQL)
  }

  /// The statement `build` gives for `query`, from the template kept for its shape (`FindShape`)
  /// when there is one: each shape's SQL is built once, then filled with each query's values.
  private func templated(
    _ query: Query, _ caller: Principals, kind: String,
    build: (Query, Principals, EngineRules, SQLiteIndexLeads) -> SQL
  ) -> SQL {
    guard let shape = FindShape(query, caller) else {
      return build(query, caller, rules, indexLeads())
    }
    // A find's key is its shape's own (tests look it up); another kind's is prefixed.
    let key = kind == "find" ? shape.key : kind + "\n" + shape.key
    if let template = findTemplates[key] { return template.filled(shape.values) }
    let leads = indexLeads()
    let statement = build(query, caller, rules, leads)
    // A shape whose values the SQL does not bind as they are is not probed again.
    guard !unkeptShapes.contains(key), let probing = FindShape(query, caller, probing: true)
    else { return statement }
    // Kept only when it gives, filled with this query's values, the SQL built for it.
    let template = FindTemplate(
      probe: build(probing.probe, probing.probeCaller, rules, leads), markers: probing.markers)
    guard template.filled(shape.values).rendered(.sqlite) == statement.rendered(.sqlite) else {
      if unkeptShapes.count >= 256 { unkeptShapes.removeAll(keepingCapacity: true) }
      unkeptShapes.insert(key)
      return statement
    }
    if findTemplates.count >= 256 { findTemplates.removeAll(keepingCapacity: true) }
    findTemplates[key] = template
    return statement
  }

  /// `findSQL` rendered (tests explain its query plan).
  static func findStatement(
    _ query: Query, readableBy caller: Principals, rules: EngineRules = EngineRules(),
    leads: SQLiteIndexLeads = SQLiteIndexLeads()
  ) -> (sql: String, values: [SQLValue]) {
    findSQL(query, readableBy: caller, rules: rules, leads: leads).rendered(.sqlite)
  }

  /// The SELECT that `find` runs.
  ///
  /// Private by construction (DESIGN §7, issue 28): the query's terms are only ever evaluated on
  /// rows the caller may read. Public rows come from the indexes keyed by `public_class`, which
  /// hold no other row; the caller's private rows from `object_readers`, keyed by the reader,
  /// each then read by its rowid (`CROSS JOIN` fixes that order). The two are merged in the
  /// query's order, each walking its own index or sorting its own rows. So neither the answer,
  /// its count, its order nor the work it takes depends on a row the caller cannot read.
  static func findSQL(
    _ query: Query, readableBy caller: Principals, rules: EngineRules, leads: SQLiteIndexLeads
  ) -> SQL {
    let walks = leads.walkable(query, rules: rules)
    let presence = rules.presenceOrdered(query.className)
    let page: SQL = "LIMIT \(query.limit) OFFSET \(query.skip)"
    let keys = QuerySQL.orderKeys(
      query.order, presence: presence, nearest: query.nearest,
      SQLiteLeaves(counters: rules.counterFields(of: query.className)))
    let keyColumns = SQL.joined(keys.map(\.expression), separator: ", ")
    // The private arm's rowid key is its reader row's (`m.id`, the same number as `o.id`): read
    // for one principal, `object_readers`' key hands its rows in that order, where `o.id` made
    // SQLite sort them in a temporary table (at every lookup of a row by its fields).
    let privateKeyColumns = SQL.joined(
      keys.dropLast().map(\.expression) + ["m.id"], separator: ", ")
    let arms = readableArms(query, caller, rules: rules, walks: walks).enumerated().map {
      index, arm in
      let keys = index == 1 && !caller.isMaster ? privateKeyColumns : keyColumns
      return "SELECT \(sql: objectColumns), \(sql: keys) \(sql: arm)" as SQL
    }
    // The merged order names the key columns by position, after the object's.
    let positions = keys.enumerated().map { offset, key -> SQL in
      let position = SQL(verbatim: String(objectColumnCount + 1 + offset))
      return key.descending ? "\(sql: position) DESC" : position
    }
    guard query.skip > 0 else {
      let statement: SQL = """
        \(sql: SQL.joined(arms, separator: " UNION ALL ")) \
        ORDER BY \(sql: SQL.joined(positions, separator: ", ")) \(sql: page)
        """
      return statement
    }
    // A page past the first (issue 33): the rows it steps over are walked as their keys only
    // (what the listing's index holds: no row of `objects` read for them), and only the page's
    // rows are then read whole by rowid. The keys end in the rowid, so the order is total and
    // the page the same as read whole.
    let keyNames = keys.indices.map { SQL(verbatim: "page_k\($0)") }
    let keyed = SQL.joined(
      zip(keys, keyNames).map { key, name in "\(sql: key.expression) AS \(sql: name)" as SQL },
      separator: ", ")
    let keyArms = readableArms(query, caller, rules: rules, walks: walks).map {
      "SELECT o.id AS page_id, \(sql: keyed) \(sql: $0)" as SQL
    }
    let keyPositions = keys.enumerated().map { offset, key -> SQL in
      let position = SQL(verbatim: String(2 + offset))
      return key.descending ? "\(sql: position) DESC" : position
    }
    let pageKeys = SQL.joined(keyNames.map { "p.\(sql: $0)" as SQL }, separator: ", ")
    let keyOrder = SQL.joined(keyPositions, separator: ", ")
    var merged: SQL = """
      \(sql: SQL.joined(keyArms, separator: " UNION ALL ")) ORDER BY \(sql: keyOrder) \(sql: page)
      """
    if keyArms.count == 2, !caller.isMaster {
      // SQLite (3.40) reads a row to compute an indexed expression, so every row the merge
      // steps over cost a read of `objects`. The public part alone steps over its rows in its
      // index without computing them (its OFFSET is taken before its columns). At most `mine`
      // private rows come before the page (the caller's, counted no further than the skip),
      // so the page's public rows are among the public part's rows `start ..< skip + limit`
      // (`start` = skip - mine); merged with the private rows, the page follows the first
      // `skip - start` of them.
      let privateArm = readableArms(query, caller, rules: rules, walks: walks)[1]
      let mine: SQL =
        "(SELECT count(*) FROM (SELECT 1 \(sql: privateArm) LIMIT \(query.skip)))"
      let start: SQL = "max(0, \(query.skip) - \(sql: mine))"
      merged = """
        SELECT * FROM (\(sql: keyArms[0]) ORDER BY \(sql: keyOrder) \
        LIMIT \(query.limit) + \(query.skip) - \(sql: start) OFFSET \(sql: start)) \
        UNION ALL \(sql: keyArms[1]) ORDER BY \(sql: keyOrder) \
        LIMIT \(query.limit) OFFSET \(query.skip) - \(sql: start)
        """
    }
    let statement: SQL = """
      SELECT \(sql: objectColumns), \(sql: pageKeys) FROM (\(sql: merged)) p \
      CROSS JOIN objects o ON o.id = p.page_id \
      ORDER BY \(sql: SQL.joined(positions, separator: ", "))
      """
    return statement
  }

  /// The `FROM … WHERE …` of each part of a listing the caller may read: its public rows, and,
  /// for a caller with a session or a role, its private rows (`findStatement`).
  private static func readableArms(
    _ query: Query, _ caller: Principals, rules: EngineRules, walks: Bool
  ) -> [SQL] {
    let publicTerms = terms(query, caller, rules: rules, in: "o.public_class", walks: walks)
    let publicArm: SQL = "FROM objects o WHERE \(sql: publicTerms)"
    if caller.isMaster {
      // Every row: the public ones as anyone reads them, then the others.
      let others: SQL = """
        FROM objects o WHERE \(sql: terms(query, caller, rules: rules, in: "o.class")) \
        AND instr(o.readers, ' * ') = 0
        """
      return [publicArm, others]
    }
    let principals = caller.names.subtracting(["*"]).sorted()
    guard !principals.isEmpty else { return [publicArm] }
    let marks = SQL.joined(principals.map { "\($0)" as SQL }, separator: ", ")
    // Several principals may read one row: it is listed once.
    let distinct: SQL = principals.count > 1 ? "DISTINCT " : ""
    let privateArm: SQL = """
      FROM (SELECT \(sql: distinct)r.object AS id FROM object_readers r \
      WHERE r.principal IN (\(sql: marks)) AND r.class = \(literal: query.className)) m \
      CROSS JOIN objects o ON o.id = m.id \
      WHERE \(sql: terms(query, caller, rules: rules, in: nil))
      """
    return [publicArm, privateArm]
  }

  /// The query's terms, after the class test on `classColumn` (a literal class, so that the
  /// planner uses the indexes partial to it; none for rows already known to be of the class).
  /// `walks`: the public rows' class term is said to hold for most rows (`SQLiteIndexLeads`).
  private static func terms(
    _ query: Query, _ caller: Principals, rules: EngineRules, in classColumn: String?,
    walks: Bool = false
  ) -> SQL {
    var terms: [SQL] = []
    if let classColumn {
      let equal: SQL = "\(sql: SQL(verbatim: classColumn)) = \(literal: query.className)"
      terms.append(walks ? "likelihood(\(sql: equal), 0.9)" : equal)
    }
    terms += QuerySQL.fieldTerms(
      query, SQLiteLeaves(counters: rules.counterFields(of: query.className)))
    if let unread = unreadFilter(query, caller, rules: rules) { terms.append(unread) }
    return terms.isEmpty ? "1" : SQL.joined(terms, separator: " AND ")
  }

  func countStatement(_ query: Query, _ caller: Principals) -> SQL {
    if query.equalTo.isEmpty && query.greaterThan.isEmpty && query.lessThan.isEmpty
      && query.conditions.isEmpty && !caller.isMaster && !query.unreadOnly
    {
      return SQLiteEngine.classCount(query.className, caller)
    }
    return templated(query, caller, kind: "count", build: SQLiteEngine.countSQL)
  }

  /// The SELECT that `count` runs when the query has conditions, and its parameters.
  static func countStatement(
    _ query: Query, readableBy caller: Principals, rules: EngineRules = EngineRules(),
    leads: SQLiteIndexLeads = SQLiteIndexLeads()
  ) -> (sql: String, values: [SQLValue]) {
    countSQL(query, readableBy: caller, rules: rules, leads: leads).rendered(.sqlite)
  }

  static func countSQL(
    _ query: Query, readableBy caller: Principals, rules: EngineRules, leads: SQLiteIndexLeads
  ) -> SQL {
    let walks = leads.walkable(query, rules: rules)
    let arms = readableArms(query, caller, rules: rules, walks: walks).map {
      "SELECT 1 \(sql: $0)" as SQL
    }
    return "SELECT count(*) FROM (\(sql: SQL.joined(arms, separator: " UNION ALL ")))"
  }

  /// Rows of a class the caller may read, without walking them: the public count the triggers
  /// keep, plus the caller's private rows from `object_readers` (a private row is there once per
  /// reader principal, so it is counted once however many of the caller's principals read it).
  private static func classCount(_ className: String, _ caller: Principals) -> SQL {
    var statement: SQL =
      "SELECT coalesce((SELECT public FROM class_counts WHERE class = \(className)), 0)"
    let principals = caller.names.subtracting(["*"]).sorted()
    if !principals.isEmpty {
      let names = SQL.joined(principals.map { "\($0)" as SQL }, separator: ", ")
      statement.append(
        """
         + (SELECT count(DISTINCT object) FROM object_readers \
        WHERE principal IN (\(sql: names)) AND class = \(className))
        """)
    }
    return statement
  }

  func update(
    _ className: String, objectId: String, set fields: [String: JSONValue],
    increment increments: [String: Int64], arrays: [String: ArrayChange], acl: ACL?,
    as caller: Principals
  ) throws -> DataObject {
    // A parent's counters are written where they are kept (only the master key sets them).
    let counters = rules.counterFields(of: className)
    func isCounter(_ key: String) -> Bool {
      SQLiteEngine.column(of: key, counters) == SQLiteRules.counterColumn
    }
    // A counter removed goes from `data` too: the copy an older board keeps there
    // (`SQLiteRules.counterMoves`) would otherwise show through the merge again.
    let data = Self.written(
      "o.data", fields.filter { !isCounter($0.key) || $0.value == .null },
      increments.filter { !isCounter($0.key) }, arrays)
    // Every update moves updateDate, by a millisecond when the clock has not: the change feed
    // records the updates that move it (not the rules' bookkeeping, which leaves it).
    var assignments: [SQL] = [
      "data = \(sql: data)",
      "updateDate = max(o.updateDate + 1, \(sql: SQL(verbatim: SQLiteRules.now)))",
    ]
    if fields.keys.contains(where: isCounter) || increments.keys.contains(where: isCounter) {
      let counts = Self.written(
        "coalesce(o.counts, '{}')", fields.filter { isCounter($0.key) },
        increments.filter { isCounter($0.key) }, [:])
      assignments.append("counts = \(sql: counts)")
    }
    let isChild = rules.childRule(of: className) != nil
    if let acl {
      // A child's readers are its parent's; only its writers are the caller's to set.
      if !isChild { assignments.append("readers = \(ACL.column(acl.readers))") }
      assignments.append("writers = \(ACL.column(acl.writers))")
    }
    let conditions =
      [SQLiteEngine.aclTest("o.writers", caller)] + updateConditions(className, increments, acl)
      + arrays.keys.sorted().map { Self.holdsArray($0, arrays[$0]!) }
    let statement: SQL = """
      UPDATE objects AS o SET \(sql: SQL.joined(assignments, separator: ", "))
      WHERE o.objectId = \(objectId) AND o.class = \(className) \
      AND \(sql: SQL.joined(conditions, separator: " AND "))
      RETURNING \(sql: SQLiteEngine.returnedColumns)
      """
    return try transaction {
      try refuseBanned(caller)
      if let updated = try connection.firstRow(statement, object) { return updated }
      if let field = try arrays.keys.sorted().first(where: { key in
        try connection.firstRow(
          """
          SELECT \(sql: Self.holdsArray(key, arrays[key]!)) FROM objects o
          WHERE o.objectId = \(objectId) AND o.class = \(className) \
          AND \(sql: SQLiteEngine.aclTest("o.writers", caller))
          """
        ) { $0.int(0) == 0 } == true
      }) {
        let what = arrays[field]!.relationClass.map { "a relation to \($0)" } ?? "an array"
        throw DatastoreError.invalid(field, "holds something else than \(what)")
      }
      throw try refusal(className, objectId, increments, acl, as: caller)
    }
  }

  /// Where an array change reads its array: the field, or a relation's `objects`.
  private static func arrayPath(_ field: String, _ change: ArrayChange) -> String {
    change.relationClass == nil ? field : field + ".objects"
  }

  /// The field may take the change: missing, null, an array, or (for a relation) a relation
  /// to the same class.
  private static func holdsArray(_ field: String, _ change: ArrayChange) -> SQL {
    let type: SQL = "json_type(o.data, \(sql: jsonPath(field)))"
    guard let related = change.relationClass else {
      return "coalesce(\(sql: type) IN ('array', 'null'), 1)"
    }
    return """
      coalesce(\(sql: type) = 'null' OR (json_extract(o.data, \(sql: jsonPath(field + ".__type"))) \
      = 'Relation' AND json_extract(o.data, \(sql: jsonPath(field + ".className"))) = \(related) \
      AND coalesce(json_type(o.data, \(sql: jsonPath(field + ".objects"))), 'array') = 'array'), 1)
      """
  }

  /// The field's new value after `change`, computed from the stored row in the UPDATE itself:
  /// the elements kept in their order (`json_each`'s ids), then those added.
  private static func changed(_ field: String, _ change: ArrayChange) -> SQL {
    let path = jsonPath(arrayPath(field, change))
    let array: SQL = """
      (CASE WHEN json_type(o.data, \(sql: path)) = 'array' THEN json_extract(o.data, \(sql: path)) \
      ELSE '[]' END)
      """
    let leaves = SQLiteLeaves()
    let element: SQL = """
      CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN 'null' \
      WHEN 'text' THEN json_quote(j.value) ELSE CAST(j.value AS TEXT) END
      """
    var arms: [SQL] = []
    if change.adds {
      arms.append(
        "SELECT 0 AS arm, j.id AS k, \(sql: element) AS v FROM json_each(\(sql: array)) j")
      let added = change.isUnique ? change.distinctValues : change.values
      for (offset, value) in added.enumerated() {
        let absent: SQL =
          change.isUnique
          ? " WHERE NOT EXISTS (SELECT 1 FROM json_each(\(sql: array)) j WHERE \(sql: leaves.elementEquals(value)))"
          : ""
        arms.append("SELECT 1, \(Int64(offset)), \(value.jsonText())\(sql: absent)")
      }
    } else {
      let removed = SQL.balanced(change.values.map(leaves.elementEquals), separator: " OR ")
      arms.append(
        """
        SELECT 0 AS arm, j.id AS k, \(sql: element) AS v FROM json_each(\(sql: array)) j \
        WHERE NOT (\(sql: removed))
        """)
    }
    let result: SQL = """
      (SELECT json_group_array(json(e.v)) FROM (\(sql: SQL.joined(arms, separator: " UNION ALL ")) \
      ORDER BY 1, 2) e)
      """
    guard let related = change.relationClass else { return "json(\(sql: result))" }
    return """
      json_object('__type', 'Relation', 'className', \(related), 'objects', json(\(sql: result)))
      """
  }

  /// A field's JSON path as an SQL literal (`'$.title'`), as the expression indexes spell it.
  static func jsonPath(_ field: String) -> SQL { "\(literal: "$." + field)" }

  /// `column` (SQL) with `fields` set (NULL removes), `increments` added and `arrays` changed.
  private static func written(
    _ column: SQL, _ fields: [String: JSONValue], _ increments: [String: Int64],
    _ arrays: [String: ArrayChange]
  ) -> SQL {
    var value = column
    let removed = fields.filter { $0.value == .null }.keys.sorted()
    if !removed.isEmpty {
      let paths = SQL.joined(removed.map(SQLiteEngine.jsonPath), separator: ", ")
      value = "json_remove(\(sql: value), \(sql: paths))"
    }
    var pairs: [SQL] = []
    for key in fields.keys.sorted() where fields[key] != .null {
      pairs.append("\(sql: SQLiteEngine.jsonPath(key)), json(\(fields[key]!.jsonText()))")
    }
    for key in increments.keys.sorted() {
      let path = SQLiteEngine.jsonPath(key)
      pairs.append(
        "\(sql: path), coalesce(json_extract(\(sql: column), \(sql: path)), 0) + \(increments[key]!)"
      )
    }
    for key in arrays.keys.sorted() {
      pairs.append("\(sql: SQLiteEngine.jsonPath(key)), \(sql: Self.changed(key, arrays[key]!))")
    }
    guard !pairs.isEmpty else { return value }
    return "json_set(\(sql: value), \(sql: SQL.joined(pairs, separator: ", ")))"
  }

  /// What an update needs beside write access: the fields it adds to hold integers, and, for an
  /// owned class, an ACL whose writers are still the owner (plus the rule's extra writers).
  private func updateConditions(
    _ className: String, _ increments: [String: Int64], _ acl: ACL?
  ) -> [SQL] {
    let counters = rules.counterFields(of: className)
    var conditions = increments.keys.sorted().map { key -> SQL in
      let column = SQL(verbatim: "o." + SQLiteEngine.column(of: key, counters))
      return
        "coalesce(json_type(\(sql: column), \(sql: SQLiteEngine.jsonPath(key))), 'integer') = 'integer'"
    }
    conditions += Self.rangeConditions(increments, counters)
    if let acl, let owner = rules.owner(of: className) {
      let writers = acl.writers.subtracting(owner.additionalWriters)
      if writers.count == 1, let writer = writers.first {
        conditions.append(
          "json_extract(o.data, \(sql: SQLiteEngine.jsonPath(owner.field + ".objectId"))) = \(writer)"
        )
      } else {
        conditions.append("0")
      }
    }
    return conditions
  }

  /// The sums stay 64-bit integers: SQLite would make a sum past 2^63 − 1 a float.
  private static func rangeConditions(_ increments: [String: Int64], _ counters: Set<String>)
    -> [SQL]
  {
    increments.keys.sorted().compactMap { key -> SQL? in
      let delta = increments[key]!
      let column = SQL(verbatim: "o." + SQLiteEngine.column(of: key, counters))
      let value: SQL =
        "coalesce(json_extract(\(sql: column), \(sql: SQLiteEngine.jsonPath(key))), 0)"
      if delta > 0 { return "\(sql: value) <= \(Int64.max - delta)" }
      if delta < 0 { return "\(sql: value) >= \(Int64.min - delta)" }
      return nil
    }
  }

  /// Why a conditional update touched nothing.
  private func refusal(
    _ className: String, _ objectId: String, _ increments: [String: Int64], _ acl: ACL?,
    as caller: Principals
  ) throws -> DatastoreError {
    let ranges = Self.rangeConditions(increments, rules.counterFields(of: className))
    let integers = updateConditions(className, increments, nil).filter { !ranges.contains($0) }
    let numbers = integers.isEmpty ? "1" : SQL.joined(integers, separator: " AND ")
    let inRange = ranges.isEmpty ? "1" : SQL.joined(ranges, separator: " AND ")
    let found = try connection.firstRow(
      """
      SELECT \(sql: SQLiteEngine.aclTest("o.readers", caller)), \
      \(sql: SQLiteEngine.aclTest("o.writers", caller)), \(sql: numbers), \(sql: inRange)
      FROM objects o WHERE o.objectId = \(objectId) AND o.class = \(className)
      """
    ) { ($0.int(0) != 0, $0.int(1) != 0, $0.int(2) != 0, $0.int(3) != 0) }
    guard let (canRead, canWrite, holdsIntegers, staysInRange) = found, canRead || canWrite
    else {
      return .notFound
    }
    guard canWrite else { return .noAccess }
    let field = increments.keys.sorted().first ?? "value"
    guard holdsIntegers else {
      return DatastoreError.invalid(field, "cannot add to a value that is not a number")
    }
    guard staysInRange else {
      return DatastoreError.invalid(field, "the sum would pass a 64-bit integer's range")
    }
    if acl != nil, rules.owner(of: className) != nil {
      return DatastoreError(.noAccess, reason: StoreReason.writersMustStayTheAuthor)
    }
    return DatastoreError(.systemError, detail: "the update touched no row")
  }

  func delete(_ className: String, objectId: String, as caller: Principals) throws {
    let statement: SQL = """
      DELETE FROM objects AS o WHERE o.objectId = \(objectId) AND o.class = \(className) \
      AND \(sql: SQLiteEngine.aclTest("o.writers", caller)) RETURNING id
      """
    try transaction {
      let deleted = try connection.firstRow(statement) { $0.int(0) }
      if deleted == nil { throw try refusal(className, objectId, [:], nil, as: caller) }
      if className == User.className {
        // A deleted user's sessions end with it, and its anonymous id may sign up anew.
        noteIdentityWrite()
        try connection.run(sql: "DELETE FROM sessions WHERE userId = \(objectId)")
        try connection.run(sql: "DELETE FROM identities WHERE userId = \(objectId)")
        try connection.run(sql: "DELETE FROM passwords WHERE userId = \(objectId)")
      }
    }
  }

  /// `WHERE` the class (a literal: the planner then uses the indexes partial to it), the
  /// query's equalities, bounds and conditions, and what the caller may read.
  static func whereClause(_ query: Query, _ caller: Principals, rules: EngineRules) -> SQL {
    "WHERE \(sql: whereTerms(query, caller, rules: rules))"
  }

  /// `whereClause` without its `WHERE`: the terms joined by `AND` (search adds its own).
  static func whereTerms(_ query: Query, _ caller: Principals, rules: EngineRules) -> SQL {
    var terms: [SQL] = ["o.class = \(literal: query.className)"]
    terms += QuerySQL.fieldTerms(
      query, SQLiteLeaves(counters: rules.counterFields(of: query.className)))
    if !caller.isMaster { terms.append(listingFilter(query.className, caller)) }
    return SQL.joined(terms, separator: " AND ")
  }

  /// Rows of `className` the caller may read, for listings: a public row by its flag in the row
  /// the listing walks anyway; any other through `object_readers`, whose primary key gives the
  /// caller's readable private objects of the class in one range per principal.
  private static func listingFilter(_ className: String, _ caller: Principals) -> SQL {
    let principals = caller.names.subtracting(["*"]).sorted()
    guard !principals.isEmpty else { return "instr(o.readers, ' * ') > 0" }
    let marks = SQL.joined(principals.map { "\($0)" as SQL }, separator: ", ")
    return """
      (instr(o.readers, ' * ') > 0 OR o.id IN (SELECT r.object FROM object_readers r \
      WHERE r.principal IN (\(sql: marks)) AND r.class = \(className)))
      """
  }

  // MARK: Files

  static var leaves: SQLiteLeaves { SQLiteLeaves() }

  static let storedFileColumns: KeyValuePairs = [
    "file_name": "name", "mime_type": "mimeType", "file_size": "fileSize",
    "create_date": "createDate", "update_date": "updateDate", "readers": "readers",
    "writers": "writers",
  ]

  func insertFile(
    name: String, bytes: [UInt8], mimeType: String, acl: ACL, as caller: Principals
  ) throws -> FileInfo {
    let now = SQL(verbatim: SQLiteRules.now)
    let statement: SQL = """
      INSERT INTO files(name, mimeType, fileSize, createDate, updateDate, readers, writers, data,
        creator)
      VALUES (\(name), \(mimeType), \(bytes.count), \(sql: now), \(sql: now), \
      \(ACL.column(acl.readers)), \(ACL.column(acl.writers)), \(.blob(bytes)), \
      \(caller.userId.map(SQLValue.text) ?? .null))
      ON CONFLICT(name) DO NOTHING
      RETURNING \(sql: SQLiteEngine.fileColumns(nil))
      """
    return try transaction {
      try refuseBanned(caller)
      guard let inserted = try firstRow(statement, fileInfo(row:)) else {
        throw DatastoreError.invalid("fileName", "a file named \(name) already exists")
      }
      return inserted
    }
  }

  func readableFile(_ name: String, _ caller: Principals, columns: SQL) -> SQL {
    """
    SELECT \(sql: columns) FROM files f \
    WHERE f.name = \(name) AND \(sql: SQLiteEngine.aclTest("f.readers", caller))
    """
  }

  /// The files table seen as objects (`o.objectId`, the dates, `o.data` holding the metadata).
  static let filesAsObjects = SQL(
    verbatim: """
      (SELECT rowid AS id, name AS objectId, name, mimeType, fileSize, createDate, updateDate,
         readers, writers,
         json_object('fileName', name, 'mimeType', mimeType, 'fileSize', fileSize) AS data
       FROM files) o
      """)

  /// What the caller may read, and only then (`CASE` evaluates in order) the search's
  /// conditions, so that no condition is evaluated on, and no index seeked for, a file the
  /// caller cannot read (issue 28).
  static func fileSearchWhere(_ query: Query, _ caller: Principals) -> SQL {
    let readable = aclTest("o.readers", caller)
    let terms = query.conditions.map { QuerySQL.condition($0, SQLiteLeaves()) }
    guard !terms.isEmpty else { return "WHERE \(sql: readable)" }
    return """
      WHERE \(sql: readable) AND CASE WHEN \(sql: readable) \
      THEN \(sql: SQL.joined(terms, separator: " AND ")) ELSE 0 END
      """
  }

  /// `filesStatement` rendered.
  static func findFilesStatement(_ query: Query, readableBy caller: Principals)
    -> (sql: String, values: [SQLValue])
  {
    filesStatement(query, readableBy: caller).rendered(.sqlite)
  }

  func updateFile(name: String, acl: ACL, as caller: Principals) throws -> FileInfo {
    let statement: SQL = """
      UPDATE files AS f SET readers = \(ACL.column(acl.readers)), \
      writers = \(ACL.column(acl.writers)),
        updateDate = max(\(sql: SQL(verbatim: SQLiteRules.now)), f.updateDate + 1)
      WHERE f.name = \(name) AND \(sql: SQLiteEngine.aclTest("f.writers", caller))
      RETURNING \(sql: SQLiteEngine.fileColumns(nil))
      """
    return try transaction {
      try refuseBanned(caller)
      if let updated = try firstRow(statement, fileInfo(row:)) { return updated }
      throw try fileRefusal(name, caller)
    }
  }

  func deleteFile(name: String, as caller: Principals) throws {
    let statement: SQL = """
      DELETE FROM files AS f \
      WHERE f.name = \(name) AND \(sql: SQLiteEngine.aclTest("f.writers", caller)) RETURNING 1
      """
    try transaction {
      guard try connection.firstRow(statement, { $0.int(0) }) == nil else { return }
      throw try fileRefusal(name, caller)
    }
  }
}
