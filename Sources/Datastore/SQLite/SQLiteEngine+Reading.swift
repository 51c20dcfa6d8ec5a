/// Read positions, revisions, moderation and roles on SQLite. Read positions are keyed by the
/// caller's user id; revisions are written by the triggers of `SQLiteRules` and read through the
/// object's own readers.
extension SQLiteEngine {
  private func userId(_ caller: Principals) throws -> String {
    guard let userId = caller.userId else { throw DatastoreError(.authentication) }
    return userId
  }

  private func childRule(_ parentClass: String) throws -> ChildRule {
    guard let rule = rules.parentRules(of: parentClass).first else {
      throw DatastoreError.invalid("className", "\(parentClass) has no children")
    }
    return rule
  }

  func markRead(_ parentClass: String, objectId: String, upTo number: Int64, as caller: Principals)
    throws
  {
    var values: [SQLValue] = [.text(try userId(caller)), .integer(number), .text(objectId)]
    values.append(.text(parentClass))
    let readable = SQLiteEngine.aclTest("o.readers", caller).spliced(into: &values)
    try guarded {
      try connection.transaction {
        let marked = try connection.prepare(
          """
          INSERT INTO read_positions(userId, object, position)
          SELECT ?, o.objectId, ? FROM objects o WHERE o.objectId = ? AND o.class = ? AND \(readable)
          ON CONFLICT(userId, object) DO UPDATE SET position = max(position, excluded.position)
          RETURNING 1
          """
        ).firstRow(values) { $0.int(0) }
        if marked == nil { throw DatastoreError.notFound }
      }
    }
  }

  /// One statement: a position that is not there, or not `number - 1`, is left alone.
  func advanceRead(
    _ parentClass: String, objectId: String, to number: Int64, as caller: Principals
  ) throws {
    let values: [SQLValue] = [
      .integer(number), .text(try userId(caller)), .text(objectId), .integer(number - 1),
    ]
    try guarded {
      try connection.run(
        "UPDATE read_positions SET position = ? WHERE userId = ? AND object = ? AND position = ?",
        values)
    }
  }

  func markAllRead(_ parentClass: String, as caller: Principals) throws {
    let rule = try childRule(parentClass)
    var values: [SQLValue] = [.text(try userId(caller)), .text(parentClass)]
    let readable = SQLiteEngine.aclTest("o.readers", caller).spliced(into: &values)
    try guarded {
      try connection.transaction {
        try connection.run(
          """
          INSERT INTO read_positions(userId, object, position)
          SELECT ?, o.objectId, coalesce(json_extract(o.data, \(SQLiteRules.path(rule.lastNumberField))), 0)
          FROM objects o WHERE o.class = ? AND \(readable)
          ON CONFLICT(userId, object) DO UPDATE SET position = max(position, excluded.position)
          """, values)
      }
    }
  }

  func unread(
    _ parentClass: String, objectIds: [String], countUpTo limit: Int, as caller: Principals
  )
    throws -> [String: UnreadState]
  {
    let rule = try childRule(parentClass)
    let me = try userId(caller)
    let last = "coalesce(json_extract(p.data, \(SQLiteRules.path(rule.lastNumberField))), 0)"
    let position = "coalesce(rp.position, 0)"
    let parent = SQLiteRules.pointer(parentClass, "p.objectId")
    let afterPosition = """
      json_extract(c.data, \(SQLiteRules.path(rule.parentField))) = \(parent)
        AND json_extract(c.data, \(SQLiteRules.path(rule.numberField))) > \(position)
      """
    // The caller's own children after the position, counted in the owner index (no row read).
    var mine = "0"
    var values: [SQLValue] = []
    if let owner = rules.owner(of: rule.childClass) {
      mine = """
        (SELECT count(*) FROM objects c WHERE c.class = \(SQLiteRules.literal(rule.childClass))
           AND json_extract(c.data, '$.\(owner.field).objectId') = ? AND \(afterPosition))
        """
      values += [.text(me)]
    }
    values += [.text(me), .text(parentClass)] + objectIds.map { .text($0) }
    let marks = Array(repeating: "?", count: objectIds.count).joined(separator: ", ")
    let readable = SQLiteEngine.aclTest("p.readers", caller).spliced(into: &values)
    // Caught up (the usual case) costs no look at the children. `+p.class`: the ids pick the
    // rows; without it SQLite may walk a class index over every thread (seen on 100,000).
    let sql = """
      SELECT p.objectId, rp.position, \(position) >= \(last),
        CASE WHEN \(position) >= \(last) THEN 0 ELSE \(mine) END
      FROM objects p LEFT JOIN read_positions rp ON rp.userId = ? AND rp.object = p.objectId
      WHERE +p.class = ? AND p.objectId IN (\(marks)) AND \(readable)
      """
    // All children after the position, in the (parent, number) index, up to `limit` beyond the
    // caller's own: what is left after taking those away is the count, or at least `limit`.
    let all = """
      SELECT count(*) FROM (SELECT 1 FROM objects c WHERE c.class = \(SQLiteRules.literal(rule.childClass))
        AND json_extract(c.data, \(SQLiteRules.path(rule.parentField)))
          = \(SQLiteRules.pointer(parentClass, "?"))
        AND json_extract(c.data, \(SQLiteRules.path(rule.numberField))) > ? LIMIT ?)
      """
    // One snapshot and one lock for the parents and each of their counts.
    return try guarded {
      try connection.reading {
        try unreadStates(sql: sql, values: values, counting: all, rule: rule, limit: limit)
      }
    }
  }

  private func unreadStates(
    sql: String, values: [SQLValue], counting all: String, rule: ChildRule, limit: Int
  ) throws -> [String: UnreadState] {
    let parents = try connection.prepare(sql).rows(values) { row in
      (
        objectId: row.lossyText(0) ?? "", position: row.isNull(1) ? nil : row.int(1),
        caughtUp: row.int(2) != 0, mine: row.int(3)
      )
    }
    let counting = try connection.prepare(all)
    var states: [String: UnreadState] = [:]
    for parent in parents where states[parent.objectId] == nil {
      var unread = 0
      if !parent.caughtUp {
        let after = try counting.firstRow([
          .text(parent.objectId), .integer(parent.position ?? 0),
          .integer(Int64(limit) + parent.mine),
        ]) { $0.int(0) }
        unread = Int(min(Int64(limit), max(0, (after ?? 0) - parent.mine)))
      }
      states[parent.objectId] = UnreadState(position: parent.position, unreadChildren: unread)
    }
    return states
  }

  func revisions(
    _ className: String, objectId: String, skip: Int, limit: Int, as caller: Principals
  ) throws -> RevisionPage {
    _ = try get(className, objectId: objectId, as: caller)  // readable, or E404001
    return try guarded {
      let (count, last) =
        try connection.prepare(
          """
          SELECT count(*), (SELECT number FROM revisions WHERE object = ?1 ORDER BY id DESC LIMIT 1)
          FROM revisions WHERE object = ?1
          """
        ).firstRow([.text(objectId)]) { (Int($0.int(0)), Int($0.int(1))) } ?? (0, 0)
      let rows = try connection.prepare(
        "SELECT date, data, number FROM revisions WHERE object = ? ORDER BY id LIMIT ? OFFSET ?"
      ).rows([.text(objectId), .integer(Int64(limit)), .integer(Int64(skip))]) { row in
        // A revision written by hand that cannot be read shows as one with no fields.
        Revision(
          number: Int(row.int(2)), date: row.int(0),
          fields: JSONValue.storedFields(row.lossyText(1) ?? "{}").fields)
      }
      return RevisionPage(revisions: rows, count: count, lastNumber: last)
    }
  }

  func moderate(_ className: String, objectId: String, as caller: Principals) throws {
    guard let rule = rules.moderationRule(of: className) else { throw DatastoreError.noAccess }
    let me = try userId(caller)
    try transaction {
      try guarded {
        let isModerator = try connection.prepare(
          "SELECT 1 FROM role_members WHERE role = ? AND userId = ?"
        ).firstRow([.text(rule.role), .text(me)]) { $0.int(0) }
        guard isModerator != nil else { throw DatastoreError.noAccess }
        let file = rule.fileField.map { "json_extract(o.data, \(SQLiteRules.path($0)))" } ?? "NULL"
        let target = """
          o.objectId = ? AND o.class = ? AND instr(o.readers, ' * ') > 0
            AND json_type(o.data, \(SQLiteRules.path(rule.markField))) IS NULL
          """
        // The file's name, read before the update takes it away.
        let found = try connection.prepare("SELECT \(file) FROM objects o WHERE \(target)")
          .firstRow([.text(objectId), .text(className)]) { try $0.text(0) }
        guard let found else { throw DatastoreError.notFound }
        let removed = rule.contentFields.map(SQLiteRules.path).joined(separator: ", ")
        let data = removed.isEmpty ? "o.data" : "json_remove(o.data, \(removed))"
        try connection.run(
          """
          UPDATE objects AS o SET
            data = json_set(\(data), \(SQLiteRules.path(rule.markField)), \(SQLiteRules.now)),
            updateDate = max(o.updateDate + 1, \(SQLiteRules.now))
          WHERE \(target)
          """, [.text(objectId), .text(className)])
        try connection.run("DELETE FROM revisions WHERE object = ?", [.text(objectId)])
        if let name = found {
          try connection.run("DELETE FROM files WHERE name = ?", [.text(name)])
        }
      }
    }
  }

  func setFlag(_ rule: FlagRule, objectId: String, on: Bool, as caller: Principals) throws {
    let me = try userId(caller)
    try transaction {
      try guarded {
        let inRole = try connection.prepare(
          "SELECT 1 FROM role_members WHERE role = ? AND userId = ?"
        ).firstRow([.text(rule.role), .text(me)]) { $0.int(0) }
        guard try inRole != nil || isBoardOwner(caller) else { throw DatastoreError.noAccess }
        let field = SQLiteRules.path(rule.field)
        let target = """
          o.objectId = ? AND o.class = \(SQLiteRules.literal(rule.className))
            AND instr(o.readers, ' * ') > 0
          """
        let isSet = try connection.prepare(
          "SELECT json_type(o.data, \(field)) IS NOT NULL FROM objects o WHERE \(target)"
        ).firstRow([.text(objectId)]) { $0.int(0) != 0 }
        guard let isSet else { throw DatastoreError.notFound }
        guard isSet != on else { return }
        let data =
          on ? "json_set(o.data, \(field), \(SQLiteRules.now))" : "json_remove(o.data, \(field))"
        try connection.run(
          """
          UPDATE objects AS o SET data = \(data),
            updateDate = max(o.updateDate + 1, \(SQLiteRules.now))
          WHERE \(target)
          """, [.text(objectId)])
      }
    }
  }

  func currentPrincipals(of caller: Principals) throws -> Principals {
    let userId = try userId(caller)
    return try guarded {
      Principals(
        userId: userId,
        roles: try connection.prepare(
          "SELECT role FROM role_members WHERE userId = ? ORDER BY role"
        ).rows([.text(userId)]) { try $0.text(0) ?? "" })
    }
  }

  /// The board's owner on SQLite is its first user: whoever made the board.
  func isBoardOwner(_ caller: Principals) throws -> Bool {
    guard let userId = caller.userId else { return false }
    let first = try guarded {
      try connection.prepare(
        "SELECT objectId FROM objects WHERE class = ? ORDER BY createDate, id LIMIT 1"
      ).firstRow([.text(User.className)]) { try $0.text(0) }
    }
    return first == userId
  }

  func setRole(_ role: String, userId target: String, member: Bool, as caller: Principals) throws {
    guard try isBoardOwner(caller) else { throw DatastoreError.noAccess }
    noteIdentityWrite()
    try guarded {
      try connection.transaction {
        let exists = try connection.prepare(
          "SELECT 1 FROM objects WHERE objectId = ? AND class = ?"
        ).firstRow([.text(target), .text(User.className)]) { $0.int(0) }
        guard exists != nil else { throw DatastoreError.notFound }
        try connection.run(
          member
            ? "INSERT OR IGNORE INTO role_members(role, userId) VALUES (?, ?)"
            : "DELETE FROM role_members WHERE role = ? AND userId = ?",
          [.text(role), .text(target)])
      }
    }
  }

  func members(ofRole role: String, as caller: Principals) throws -> [String] {
    guard try isBoardOwner(caller) else { throw DatastoreError.noAccess }
    return try guarded {
      try connection.prepare("SELECT userId FROM role_members WHERE role = ? ORDER BY userId")
        .rows([.text(role)]) { try $0.text(0) ?? "" }
    }
  }

  /// `find`'s `unreadOnly`: parents with a child above the caller's position, or never opened
  /// and not the caller's.
  static func unreadFilter(_ query: Query, _ caller: Principals, rules: EngineRules) -> SQL? {
    guard query.unreadOnly else { return nil }
    guard let rule = rules.parentRules(of: query.className).first, let me = caller.userId else {
      return "0"
    }
    let last: SQL = "coalesce(json_extract(o.data, \(literal: "$." + rule.lastNumberField)), 0)"
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
