/// Read positions, revisions, moderation and roles on SQLite. Read positions are keyed by the
/// caller's user id; revisions are written by the triggers of `SQLiteRules` and read through the
/// object's own readers.
extension SQLiteEngine: SQLReading {
  private func userId(_ caller: Principals) throws -> String {
    guard let userId = caller.userId else { throw DatastoreError(.authentication) }
    return userId
  }

  func markRead(_ parentClass: String, objectId: String, upTo number: Int64, as caller: Principals)
    throws
  {
    let me = try userId(caller)
    let statement: SQL = """
      INSERT INTO read_positions(userId, object, position)
      SELECT \(me), o.objectId, \(number) FROM objects o
      WHERE o.objectId = \(objectId) AND o.class = \(parentClass) \
      AND \(sql: SQLiteEngine.aclTest("o.readers", caller))
      ON CONFLICT(userId, object) DO UPDATE SET position = max(position, excluded.position)
      RETURNING 1
      """
    let (sql, values) = statement.rendered(.sqlite)
    try guarded {
      try connection.transaction {
        let marked = try connection.prepare(sql).firstRow(values) { $0.int(0) }
        if marked == nil { throw DatastoreError.notFound }
      }
    }
  }

  /// One statement: a position that is not there, or not `number - 1`, is left alone.
  func advanceRead(
    _ parentClass: String, objectId: String, to number: Int64, as caller: Principals
  ) throws {
    let me = try userId(caller)
    let statement: SQL = """
      UPDATE read_positions SET position = \(number) \
      WHERE userId = \(me) AND object = \(objectId) AND position = \(number - 1)
      """
    try guarded { try connection.run(sql: statement) }
  }

  func markAllRead(_ parentClass: String, as caller: Principals) throws {
    let rule = try childRule(of: parentClass)
    let me = try userId(caller)
    let statement: SQL = """
      INSERT INTO read_positions(userId, object, position)
      SELECT \(me), o.objectId, \
      coalesce(json_extract(o.counts, \(literal: "$." + rule.lastNumberField)), 0)
      FROM objects o WHERE o.class = \(parentClass) AND \(sql: SQLiteEngine.aclTest("o.readers", caller))
      ON CONFLICT(userId, object) DO UPDATE SET position = max(position, excluded.position)
      """
    let (sql, values) = statement.rendered(.sqlite)
    try guarded { try connection.transaction { try connection.run(sql, values) } }
  }

  func unread(
    _ parentClass: String, objectIds: [String], countUpTo limit: Int, as caller: Principals
  )
    throws -> [String: UnreadState]
  {
    let rule = try childRule(of: parentClass)
    let me = try userId(caller)
    let last: SQL = "coalesce(json_extract(p.counts, \(literal: "$." + rule.lastNumberField)), 0)"
    let position: SQL = "coalesce(rp.position, 0)"
    let afterPosition: SQL = """
      json_extract(c.data, \(literal: "$." + rule.parentField)) \
      = \(sql: SQLiteRules.pointer(parentClass, id: "p.objectId"))
        AND json_extract(c.data, \(literal: "$." + rule.numberField)) > \(sql: position)
      """
    // The caller's own children after the position, counted in the owner index (no row read).
    var mine: SQL = "0"
    if let owner = rules.owner(of: rule.childClass) {
      mine = """
        (SELECT count(*) FROM objects c WHERE c.class = \(literal: rule.childClass)
           AND json_extract(c.data, \(literal: "$." + owner.field + ".objectId")) = \(me) \
        AND \(sql: afterPosition))
        """
    }
    let ids = SQL.joined(objectIds.map { "\($0)" as SQL }, separator: ", ")
    // Caught up (the usual case) costs no look at the children. `+p.class`: the ids pick the
    // rows; without it SQLite may walk a class index over every thread (seen on 100,000).
    let parents: SQL = """
      SELECT p.objectId AS object_id, rp.position, \(sql: position) >= \(sql: last) AS caught_up,
        CASE WHEN \(sql: position) >= \(sql: last) THEN 0 ELSE \(sql: mine) END AS mine,
        instr(p.readers, ' * ') = 0 AS is_private
      FROM objects p LEFT JOIN read_positions rp ON rp.userId = \(me) AND rp.object = p.objectId
      WHERE +p.class = \(parentClass) AND p.objectId IN (\(sql: ids)) \
      AND \(sql: SQLiteEngine.aclTest("p.readers", caller))
      """
    let counting = SQLiteEngine.unreadCounting(rule, parentClass: parentClass, caller: caller)
    // One snapshot and one lock for the parents and each of their counts.
    return try guarded {
      try connection.reading {
        try unreadStates(parents, counting: counting, limit: limit)
      }
    }
  }

  /// The statements that count a parent's children after a position, up to a limit (named
  /// `parent`, `position`, `limit`), reading only children the caller may read, through the
  /// indexes that hold nothing else (issue 28): a public parent's in the public (parent,
  /// number) index; a private parent's among the caller's own private rows (`object_readers`).
  /// Counting in an index of every row of the class walked all of them for each parent a new
  /// member had not read (2 s for `list` on the million-post board). One text for every
  /// parent, rendered and prepared once, run with each parent's values.
  static func unreadCounting(_ rule: ChildRule, parentClass: String, caller: Principals)
    -> (public: SQL, private: SQL)
  {
    let after: SQL = """
      json_extract(c.data, \(literal: "$." + rule.parentField)) \
      = \(sql: SQLiteRules.pointer(parentClass, id: "\(named: "parent")")) \
      AND json_extract(c.data, \(literal: "$." + rule.numberField)) > \(named: "position")
      """
    let everyone: SQL = """
      SELECT count(*) FROM (SELECT 1 FROM objects c \
      WHERE c.public_class = \(literal: rule.childClass) AND \(sql: after) LIMIT \(named: "limit"))
      """
    guard !caller.isMaster else {
      let others: SQL = """
        SELECT count(*) FROM (SELECT 1 FROM objects c WHERE c.class = \(literal: rule.childClass) \
        AND \(sql: after) LIMIT \(named: "limit"))
        """
      return (everyone, others)
    }
    let principals = caller.names.subtracting(["*"]).sorted()
    let marks = SQL.joined(principals.map { "\($0)" as SQL }, separator: ", ")
    let some: SQL = """
      SELECT count(*) FROM (SELECT DISTINCT c.id FROM object_readers r \
      CROSS JOIN objects c ON c.id = r.object \
      WHERE r.principal IN (\(sql: principals.isEmpty ? "NULL" : marks)) \
      AND r.class = \(literal: rule.childClass) AND \(sql: after) LIMIT \(named: "limit"))
      """
    return (everyone, some)
  }

  private func unreadStates(_ statement: SQL, counting: (public: SQL, private: SQL), limit: Int)
    throws -> [String: UnreadState]
  {
    let parents = try rows(statement) { row in
      (
        objectId: row.text("object_id") ?? "", position: row.optionalInt("position"),
        caughtUp: row.int("caught_up") != 0, mine: row.int("mine"),
        isPrivate: row.int("is_private") != 0
      )
    }
    let countPublic = try connection.prepare(counting.public.rendered(.sqlite).sql)
    let countPrivate = try connection.prepare(counting.private.rendered(.sqlite).sql)
    var states: [String: UnreadState] = [:]
    for parent in parents where states[parent.objectId] == nil {
      var unread = 0
      if !parent.caughtUp {
        let statement = parent.isPrivate ? counting.private : counting.public
        let values = statement.values([
          "parent": .text(parent.objectId), "position": .integer(parent.position ?? 0),
          "limit": .integer(Int64(limit) + parent.mine),
        ])
        let count = parent.isPrivate ? countPrivate : countPublic
        let after = try count.firstRow(values) { $0.int(0) }
        unread = Int(min(Int64(limit), max(0, (after ?? 0) - parent.mine)))
      }
      states[parent.objectId] = UnreadState(position: parent.position, unreadChildren: unread)
    }
    return states
  }

  func revisionTotals(_ className: String, objectId: String) -> SQL {
    """
    SELECT count(*) AS total, (SELECT number FROM revisions WHERE object = \(objectId) \
    ORDER BY id DESC LIMIT 1) AS last
    FROM revisions WHERE object = \(objectId)
    """
  }

  func revisionPage(_ className: String, objectId: String, skip: Int, limit: Int) -> SQL {
    """
    SELECT date, data, number FROM revisions WHERE object = \(objectId) \
    ORDER BY id LIMIT \(limit) OFFSET \(skip)
    """
  }

  func moderate(_ className: String, objectId: String, as caller: Principals) throws {
    guard let rule = rules.moderationRule(of: className) else { throw DatastoreError.noAccess }
    let me = try userId(caller)
    try transaction {
      try guarded {
        try refuseBanned(caller)  // as PostgreSQL's trigger refuses the take-down's row
        guard try isMember(me, of: rule.role) else { throw DatastoreError.noAccess }
        let file =
          rule.fileField.map { field -> SQL in
            "json_extract(o.data, \(sql: SQLiteEngine.jsonPath(field)))"
          }
          ?? "NULL"
        let mark = SQLiteEngine.jsonPath(rule.markField)
        let target: SQL = """
          \(sql: publicRow(className, objectId)) AND json_type(o.data, \(sql: mark)) IS NULL
          """
        // The file's name, read before the update takes it away.
        let found = try connection.firstRow(
          "SELECT \(sql: file) FROM objects o WHERE \(sql: target)"
        ) {
          try $0.text(0)
        }
        guard let found else { throw DatastoreError.notFound }
        let removed = SQL.joined(rule.contentFields.map(SQLiteEngine.jsonPath), separator: ", ")
        let data: SQL =
          rule.contentFields.isEmpty ? "o.data" : "json_remove(o.data, \(sql: removed))"
        try dated(target, data: "json_set(\(sql: data), \(sql: mark), \(sql: SQLiteEngine.now))")
        try connection.run(sql: "DELETE FROM revisions WHERE object = \(objectId)")
        if let name = found {
          try connection.run(sql: "DELETE FROM files WHERE name = \(name)")
        }
      }
    }
  }

  func setFlag(_ rule: FlagRule, objectId: String, on: Bool, as caller: Principals) throws {
    let me = try userId(caller)
    try transaction {
      try guarded {
        try refuseBanned(caller)
        guard try isMember(me, of: rule.role) || isBoardOwner(caller) else {
          throw DatastoreError.noAccess
        }
        let field = SQLiteEngine.jsonPath(rule.field)
        let target = publicRow(rule.className, objectId)
        let isSet = try connection.firstRow(
          "SELECT json_type(o.data, \(sql: field)) IS NOT NULL FROM objects o WHERE \(sql: target)"
        ) { $0.int(0) != 0 }
        guard let isSet else { throw DatastoreError.notFound }
        guard isSet != on else { return }
        let now = SQLiteEngine.now
        try dated(
          target,
          data: on
            ? "json_set(o.data, \(sql: field), \(sql: now))" : "json_remove(o.data, \(sql: field))")
      }
    }
  }

  private static let now = SQL(verbatim: SQLiteRules.now)

  /// The public object `objectId` of `className` (only public objects are moderated or flagged).
  private func publicRow(_ className: String, _ objectId: String) -> SQL {
    "o.objectId = \(objectId) AND o.class = \(literal: className) AND instr(o.readers, ' * ') > 0"
  }

  private func isMember(_ userId: String, of role: String) throws -> Bool {
    let statement: SQL = "SELECT 1 FROM role_members WHERE role = \(role) AND userId = \(userId)"
    return try connection.firstRow(statement) { $0.int(0) } != nil
  }

  /// A moderator's write of the `target` row's `data`, dating it as a client's write would.
  private func dated(_ target: SQL, data: SQL) throws {
    try connection.run(
      sql: """
        UPDATE objects AS o SET data = \(sql: data),
          updateDate = max(o.updateDate + 1, \(sql: SQLiteEngine.now))
        WHERE \(sql: target)
        """)
  }

  func currentPrincipals(of caller: Principals) throws -> Principals {
    let userId = try userId(caller)
    return try guarded {
      Principals(
        userId: userId,
        roles: try connection.rows(
          "SELECT role FROM role_members WHERE userId = \(userId) ORDER BY role"
        ) { try $0.text(0) ?? "" })
    }
  }

  /// The board's owner on SQLite is its first user: whoever made the board. First made, not
  /// oldest: an import brings users with their own (older) dates, and the oldest of them took
  /// the board.
  func isBoardOwner(_ caller: Principals) throws -> Bool {
    guard let userId = caller.userId else { return false }
    let first = try guarded {
      try connection.firstRow(
        "SELECT objectId FROM objects WHERE class = \(User.className) ORDER BY id LIMIT 1"
      ) { try $0.text(0) }
    }
    return first == userId
  }

  func setRole(_ role: String, userId target: String, member: Bool, as caller: Principals) throws {
    let owner = try isBoardOwner(caller)
    // A steward keeps others' roles, never their own (a banned moderator stays banned).
    guard try owner || (isSteward(caller, keeping: role) && target != caller.userId) else {
      throw DatastoreError.noAccess
    }
    noteIdentityWrite()
    try guarded {
      try connection.transaction {
        let exists = try connection.firstRow(
          "SELECT 1 FROM objects WHERE objectId = \(target) AND class = \(User.className)"
        ) { $0.int(0) }
        guard exists != nil else { throw DatastoreError.notFound }
        // Nobody bans the board's owner.
        if role == rules.bannedRole, member,
          try isBoardOwner(Principals(userId: target, roles: []))
        {
          throw DatastoreError.noAccess
        }
        try connection.run(
          sql: member
            ? "INSERT OR IGNORE INTO role_members(role, userId) VALUES (\(role), \(target))"
            : "DELETE FROM role_members WHERE role = \(role) AND userId = \(target)")
      }
    }
  }

  /// True when the caller is in a role that keeps `role` (`EngineRules.keeps`), read now.
  private func isSteward(_ caller: Principals, keeping role: String) throws -> Bool {
    guard let me = caller.userId else { return false }
    for steward in rules.stewards where rules.keeps(role, role: steward.role) {
      let found = try guarded {
        try connection.firstRow(
          "SELECT 1 FROM role_members WHERE role = \(steward.role) AND userId = \(me)"
        ) { $0.int(0) }
      }
      if found != nil { return true }
    }
    return false
  }

  func setting(_ name: String, as caller: Principals) throws -> String? {
    try guarded {
      try connection.firstRow("SELECT value FROM meta WHERE key = \("setting." + name)") {
        try $0.text(0)
      } ?? nil
    }
  }

  func setSetting(_ name: String, value: String?, as caller: Principals) throws {
    guard let rule = rules.stewardRule(ofSetting: name) else {
      throw DatastoreError.invalid("setting")
    }
    guard try isBoardOwner(caller) || isSteward(caller, keeping: rule.bannedRole) else {
      throw DatastoreError.noAccess
    }
    try guarded {
      try connection.transaction {
        if let value {
          try connection.run(
            sql: "INSERT OR REPLACE INTO meta(key, value) VALUES (\("setting." + name), \(value))")
        } else {
          try connection.run(sql: "DELETE FROM meta WHERE key = \("setting." + name)")
        }
      }
    }
  }

  func members(ofRole role: String, as caller: Principals) throws -> [String] {
    guard try isBoardOwner(caller) || isSteward(caller, keeping: role) else {
      throw DatastoreError.noAccess
    }
    return try guarded {
      try connection.rows("SELECT userId FROM role_members WHERE role = \(role) ORDER BY userId") {
        try $0.text(0) ?? ""
      }
    }
  }

  /// `find`'s `unreadOnly`: parents with a child above the caller's position, or never opened
  /// and not the caller's.
  static func unreadFilter(_ query: Query, _ caller: Principals, rules: EngineRules) -> SQL? {
    guard query.unreadOnly else { return nil }
    guard let rule = rules.parentRules(of: query.className).first, let me = caller.userId else {
      return "0"
    }
    let last: SQL = "coalesce(json_extract(o.counts, \(literal: "$." + rule.lastNumberField)), 0)"
    var neverOpened: SQL = "\(sql: last) > 0"
    if let owner = rules.owner(of: query.className) {
      neverOpened =
        "(json_extract(o.data, \(literal: "$." + owner.field + ".objectId")) IS NOT \(me) OR \(sql: last) > 0)"
    }
    return """
      coalesce(\(sql: last) > (SELECT rp.position FROM read_positions rp WHERE rp.userId = \(me) \
      AND rp.object = o.objectId), \(sql: neverOpened))
      """
  }
}
