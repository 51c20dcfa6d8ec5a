/// Objects and files on SQLite: every write is one conditional statement; when it touches no row,
/// a second look tells "you may not" (`E403001`, the caller can read the row) from "there is
/// none" (`E404001`).
extension SQLiteEngine {
  // MARK: Objects

  func insert(_ className: String, fields: [String: JSONValue], acl: ACL, as caller: Principals)
    throws -> DataObject
  {
    try transaction {
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
      // One statement writes the row whole and returns it (`SQLiteRules.newRow`); a child is
      // inserted from its parent's row, which must be there and readable, else `E404001`.
      let row = SQLiteRules.newRow(className, rules, data: "?", now: SQLiteRules.now)
      var values: [SQLValue] = [.text(className), .text(Validation.randomId())]
      if row.readers == nil { values.append(.text(ACL.column(acl.readers))) }
      values += [.text(ACL.column(acl.writers)), .text(JSONValue.object(fields).jsonText())]
      let columns = "class, objectId, createDate, updateDate, readers, writers, data"
      let returning = "RETURNING \(columns)"
      let sql: String
      if let parent = row.parentCondition, let child = rules.childRule(of: className) {
        values.append(.text(fields[child.parentField]?.pointerId ?? ""))
        let readable = SQLiteEngine.aclTest("p.readers", caller, values: &values)
        sql = """
          INSERT INTO objects(\(columns))
          SELECT ?, ?, \(SQLiteRules.now), \(SQLiteRules.now), \(row.readers ?? "?"), ?, \(row.data)
          FROM objects p WHERE \(parent) AND \(readable) \(returning)
          """
      } else {
        sql = """
          INSERT INTO objects(\(columns))
          VALUES (?, ?, \(SQLiteRules.now), \(SQLiteRules.now), ?, ?, \(row.data)) \(returning)
          """
      }
      guard let object = try connection.prepare(sql).firstRow(values, object) else {
        let parentField = rules.childRule(of: className)?.parentField ?? "parent"
        throw DatastoreError(.notFound, reason: StoreReason.noSuchParent(field: parentField))
      }
      return object
    }
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
    let exists = try connection.prepare(
      "SELECT 1 FROM objects WHERE class = ? AND objectId = ?"
    ).firstRow([.text(User.className), .text(partner)]) { $0.int(0) }
    guard exists != nil else { throw DatastoreError(.notFound, reason: StoreReason.noSuchUser) }
    let pairKey = PairRule.pairKey(me, partner)
    let taken = try connection.prepare(
      "SELECT 1 FROM objects o WHERE o.class = \(SQLiteRules.literal(rule.className)) AND "
        + "\(SQLiteEngine.expression(for: rule.pairField)) = ?"
    ).firstRow([.text(pairKey)]) { $0.int(0) }
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
    var values: [SQLValue] = []
    let readable = SQLiteEngine.aclTest("f.readers", caller, values: &values)
    let writable = SQLiteEngine.aclTest("f.writers", caller, values: &values)
    values.append(.text(name))
    let found = try connection.prepare(
      "SELECT \(readable), \(writable) FROM files f WHERE f.name = ?"
    ).firstRow(values) { ($0.int(0) != 0, $0.int(1) != 0) }
    guard let found, found.0 || found.1 else {
      throw DatastoreError(.notFound, reason: StoreReason.noSuchFile(name))
    }
    guard found.1 else { throw DatastoreError.noAccess }
  }

  func get(_ className: String, objectId: String, as caller: Principals) throws -> DataObject {
    var values: [SQLValue] = [.text(objectId), .text(className)]
    let readable = SQLiteEngine.aclTest("o.readers", caller, values: &values)
    guard
      let object = try guarded({
        try connection.prepare(
          """
          SELECT \(SQLiteEngine.objectColumns) FROM objects o
          WHERE o.objectId = ? AND o.class = ? AND \(readable)
          """
        ).firstRow(values, object)
      })
    else { throw DatastoreError.notFound }
    return object
  }

  func find(_ query: Query, as caller: Principals) throws -> [DataObject] {
    let (sql, values) = SQLiteEngine.findStatement(query, readableBy: caller, rules: rules)
    return try guarded { try connection.prepare(sql).rows(values, object) }
  }

  /// The SELECT that `find` runs and its parameters (tests explain its query plan).
  static func findStatement(
    _ query: Query, readableBy caller: Principals, rules: EngineRules = EngineRules()
  ) -> (sql: String, values: [SQLValue]) {
    var values: [SQLValue] = []
    var whereClause = SQLiteEngine.whereClause(query, caller, values: &values)
    if let unread = unreadFilter(query, caller, rules: rules, values: &values) {
      whereClause += " AND " + unread
    }
    let order = SQLiteEngine.orderClause(
      query.order, presence: rules.presenceOrdered(query.className))
    values += [.integer(Int64(query.limit)), .integer(Int64(query.skip))]
    let sql =
      "SELECT \(SQLiteEngine.objectColumns) FROM objects o \(whereClause) \(order) LIMIT ? OFFSET ?"
    return (sql, values)
  }

  func count(_ query: Query, as caller: Principals) throws -> Int {
    if query.equalTo.isEmpty && query.greaterThan.isEmpty && query.lessThan.isEmpty
      && query.conditions.isEmpty && !caller.isMaster && !query.unreadOnly
    {
      return try classCount(query.className, caller)
    }
    var values: [SQLValue] = []
    var whereClause = SQLiteEngine.whereClause(query, caller, values: &values)
    if let unread = SQLiteEngine.unreadFilter(query, caller, rules: rules, values: &values) {
      whereClause += " AND " + unread
    }
    return try guarded {
      Int(
        try connection.prepare("SELECT count(*) FROM objects o \(whereClause)").firstRow(values) {
          $0.int(0)
        } ?? 0)
    }
  }

  /// Rows of a class the caller may read, without walking them: the public count the triggers
  /// keep, plus the caller's private rows from `object_readers` (a private row is there once per
  /// reader principal, so it is counted once however many of the caller's principals read it).
  private func classCount(_ className: String, _ caller: Principals) throws -> Int {
    var values: [SQLValue] = [.text(className)]
    var sql = "SELECT coalesce((SELECT public FROM class_counts WHERE class = ?), 0)"
    let principals = caller.names.subtracting(["*"]).sorted()
    if !principals.isEmpty {
      values += principals.map { .text($0) } + [.text(className)]
      let marks = Array(repeating: "?", count: principals.count).joined(separator: ", ")
      sql +=
        " + (SELECT count(DISTINCT object) FROM object_readers"
        + " WHERE principal IN (\(marks)) AND class = ?)"
    }
    return try guarded {
      Int(try connection.prepare(sql).firstRow(values) { $0.int(0) } ?? 0)
    }
  }

  func fetch(objectIds: [String], as caller: Principals) throws -> [DataObject] {
    guard !objectIds.isEmpty else { return [] }
    var values = objectIds.map { SQLValue.text($0) }
    let marks = Array(repeating: "?", count: objectIds.count).joined(separator: ",")
    let readable = SQLiteEngine.aclTest("o.readers", caller, values: &values)
    return try guarded {
      try connection.prepare(
        """
        SELECT \(SQLiteEngine.objectColumns) FROM objects o
        WHERE o.objectId IN (\(marks)) AND \(readable)
        """
      ).rows(values, object)
    }
  }

  func update(
    _ className: String, objectId: String, set fields: [String: JSONValue],
    increment increments: [String: Int64], acl: ACL?, as caller: Principals
  ) throws -> DataObject {
    var values: [SQLValue] = []
    var data = "o.data"
    let removed = fields.filter { $0.value == .null }.keys.sorted()
    if !removed.isEmpty {
      data = "json_remove(\(data), \(removed.map(SQLiteRules.path).joined(separator: ", ")))"
    }
    var pairs: [String] = []
    for key in fields.keys.sorted() where fields[key] != .null {
      pairs.append("\(SQLiteRules.path(key)), json(?)")
      values.append(.text(fields[key]!.jsonText()))
    }
    for key in increments.keys.sorted() {
      pairs.append(
        "\(SQLiteRules.path(key)), coalesce(json_extract(o.data, \(SQLiteRules.path(key))), 0) + ?")
      values.append(.integer(increments[key]!))
    }
    if !pairs.isEmpty { data = "json_set(\(data), \(pairs.joined(separator: ", ")))" }
    // Every update moves updateDate, by a millisecond when the clock has not: the change feed
    // records the updates that move it (not the rules' bookkeeping, which leaves it).
    var assignments = [
      "data = \(data)", "updateDate = max(o.updateDate + 1, \(SQLiteRules.now))",
    ]
    let isChild = rules.childRule(of: className) != nil
    if let acl {
      // A child's readers are its parent's; only its writers are the caller's to set.
      if !isChild {
        assignments.append("readers = ?")
        values.append(.text(ACL.column(acl.readers)))
      }
      assignments.append("writers = ?")
      values.append(.text(ACL.column(acl.writers)))
    }
    values += [.text(objectId), .text(className)]
    let writable = SQLiteEngine.aclTest("o.writers", caller, values: &values)
    let conditions = [writable] + updateConditions(className, increments, acl, values: &values)
    let sql = """
      UPDATE objects AS o SET \(assignments.joined(separator: ", "))
      WHERE o.objectId = ? AND o.class = ? AND \(conditions.joined(separator: " AND "))
      RETURNING class, objectId, createDate, updateDate, readers, writers, data
      """
    return try transaction {
      if let updated = try connection.prepare(sql).firstRow(values, object) { return updated }
      throw try refusal(className, objectId, increments, acl, as: caller)
    }
  }

  /// What an update needs beside write access: the fields it adds to hold integers, and, for an
  /// owned class, an ACL whose writers are still the owner (plus the rule's extra writers).
  private func updateConditions(
    _ className: String, _ increments: [String: Int64], _ acl: ACL?, values: inout [SQLValue]
  ) -> [String] {
    var conditions = increments.keys.sorted().map { key in
      "coalesce(json_type(o.data, \(SQLiteRules.path(key))), 'integer') = 'integer'"
    }
    if let acl, let owner = rules.owner(of: className) {
      let writers = acl.writers.subtracting(owner.additionalWriters)
      if writers.count == 1, let writer = writers.first {
        conditions.append("json_extract(o.data, '$.\(owner.field).objectId') = ?")
        values.append(.text(writer))
      } else {
        conditions.append("0")
      }
    }
    return conditions
  }

  /// Why a conditional update touched nothing.
  private func refusal(
    _ className: String, _ objectId: String, _ increments: [String: Int64], _ acl: ACL?,
    as caller: Principals
  ) throws -> DatastoreError {
    var values: [SQLValue] = []
    let readable = SQLiteEngine.aclTest("o.readers", caller, values: &values)
    let writable = SQLiteEngine.aclTest("o.writers", caller, values: &values)
    let integers = updateConditions(className, increments, nil, values: &values)
    let numbers = integers.isEmpty ? ["1"] : integers
    values += [.text(objectId), .text(className)]
    let found = try connection.prepare(
      """
      SELECT \(readable), \(writable), \(numbers.joined(separator: " AND "))
      FROM objects o WHERE o.objectId = ? AND o.class = ?
      """
    ).firstRow(values) { ($0.int(0) != 0, $0.int(1) != 0, $0.int(2) != 0) }
    guard let (canRead, canWrite, holdsIntegers) = found, canRead || canWrite else {
      return .notFound
    }
    guard canWrite else { return .noAccess }
    guard holdsIntegers else {
      let field = increments.keys.sorted().first ?? "value"
      return DatastoreError.invalid(field, "cannot add to a value that is not a number")
    }
    if acl != nil, rules.owner(of: className) != nil {
      return DatastoreError(.noAccess, reason: StoreReason.writersMustStayTheAuthor)
    }
    return DatastoreError(.systemError, detail: "the update touched no row")
  }

  func delete(_ className: String, objectId: String, as caller: Principals) throws {
    var values: [SQLValue] = [.text(objectId), .text(className)]
    let writable = SQLiteEngine.aclTest("o.writers", caller, values: &values)
    try transaction {
      let deleted = try connection.prepare(
        "DELETE FROM objects AS o WHERE o.objectId = ? AND o.class = ? AND \(writable) RETURNING id"
      ).firstRow(values) { $0.int(0) }
      if deleted == nil { throw try refusal(className, objectId, [:], nil, as: caller) }
      if className == User.className {
        // A deleted user's sessions end with it, and its anonymous id may sign up anew.
        noteIdentityWrite()
        try connection.run("DELETE FROM sessions WHERE userId = ?", [.text(objectId)])
        try connection.run("DELETE FROM identities WHERE userId = ?", [.text(objectId)])
      }
    }
  }

  static func whereClause(
    _ query: Query, _ caller: Principals, values: inout [SQLValue]
  ) -> String {
    // The class as a literal: the planner then uses the indexes partial to it.
    var terms = ["o.class = \(SQLiteRules.literal(query.className))"]
    for field in query.equalTo.keys.sorted() {
      let expression = expression(for: field)
      switch query.equalTo[field]! {
      case .null: terms.append("\(expression) IS NULL")
      case .bool(let flag):
        terms.append("\(expression) = ?")
        values.append(.integer(flag ? 1 : 0))
      case .int(let int):
        terms.append("\(expression) = ?")
        values.append(.integer(int))
      case .double(let double):
        terms.append("\(expression) = ?")
        values.append(.real(double))
      case .string(let string):
        terms.append("\(expression) = ?")
        values.append(.text(string))
      case let composite:
        // json_extract returns arrays and objects as compact JSON; ours is stored the same way.
        terms.append("\(expression) = ?")
        values.append(.text(composite.jsonText()))
      }
    }
    // Range bounds: the index on the ordered field seeks to the first key (keyset paging).
    for (bounds, comparison) in [(query.greaterThan, ">"), (query.lessThan, "<")] {
      for field in bounds.keys.sorted() {
        terms.append("\(expression(for: field)) \(comparison) ?")
        values.append(.integer(bounds[field]!))
      }
    }
    for condition in query.conditions { terms.append(conditionSQL(condition, values: &values)) }
    if !caller.isMaster { terms.append(listingFilter(query.className, caller, values: &values)) }
    return "WHERE " + terms.joined(separator: " AND ")
  }

  /// Rows of `className` the caller may read, for listings: a public row by its flag in the row
  /// the listing walks anyway; any other through `object_readers`, whose primary key gives the
  /// caller's readable private objects of the class in one range per principal.
  private static func listingFilter(
    _ className: String, _ caller: Principals, values: inout [SQLValue]
  ) -> String {
    let principals = caller.names.subtracting(["*"]).sorted()
    guard !principals.isEmpty else { return "instr(o.readers, ' * ') > 0" }
    values += principals.map { .text($0) } + [.text(className)]
    let marks = Array(repeating: "?", count: principals.count).joined(separator: ", ")
    return "(instr(o.readers, ' * ') > 0 OR o.id IN (SELECT r.object FROM object_readers r "
      + "WHERE r.principal IN (\(marks)) AND r.class = ?))"
  }

  private static func orderClause(_ order: [String], presence: Set<String> = []) -> String {
    var keys = order.map { key -> String in
      let descending = key.hasPrefix("-")
      let field = descending ? String(key.dropFirst()) : key
      return orderExpression(for: field, presence: presence) + (descending ? " DESC" : "")
    }
    // The row id breaks ties in the direction of the last key, which an index gives for free.
    keys.append(order.last?.hasPrefix("-") == true ? "o.id DESC" : "o.id")
    return "ORDER BY " + keys.joined(separator: ", ")
  }

  // MARK: Files

  private static let fileColumns =
    "f.name, f.mimeType, f.fileSize, f.createDate, f.updateDate, f.readers, f.writers"

  private func fileInfo(from row: Row) throws -> FileInfo {
    FileInfo(
      fileName: try row.text(0) ?? "", mimeType: try row.text(1) ?? "",
      fileSize: Int(row.int(2)), createDate: row.int(3), updateDate: row.int(4),
      acl: acl(readers: try row.text(5) ?? "", writers: try row.text(6) ?? ""))
  }

  func insertFile(
    name: String, bytes: [UInt8], mimeType: String, acl: ACL, as caller: Principals
  ) throws -> FileInfo {
    try transaction {
      let inserted = try connection.prepare(
        """
        INSERT INTO files(name, mimeType, fileSize, createDate, updateDate, readers, writers, data)
        VALUES (?, ?, ?, \(SQLiteRules.now), \(SQLiteRules.now), ?, ?, ?)
        ON CONFLICT(name) DO NOTHING
        RETURNING name, mimeType, fileSize, createDate, updateDate, readers, writers
        """
      ).firstRow(
        [
          .text(name), .text(mimeType), .integer(Int64(bytes.count)),
          .text(ACL.column(acl.readers)), .text(ACL.column(acl.writers)), .blob(bytes),
        ], fileInfo)
      guard let inserted else {
        throw DatastoreError.invalid("fileName", "a file named \(name) already exists")
      }
      return inserted
    }
  }

  func fileInfo(name: String, as caller: Principals) throws -> FileInfo {
    var values: [SQLValue] = [.text(name)]
    let readable = SQLiteEngine.aclTest("f.readers", caller, values: &values)
    guard
      let info = try guarded({
        try connection.prepare(
          "SELECT \(SQLiteEngine.fileColumns) FROM files f WHERE f.name = ? AND \(readable)"
        ).firstRow(values, fileInfo)
      })
    else { throw DatastoreError.notFound }
    return info
  }

  /// The files table seen as objects (`o.objectId`, the dates, `o.data` holding the metadata),
  /// so that a file search renders its conditions and order with the object query's code.
  private static let filesAsObjects = """
    (SELECT rowid AS id, name AS objectId, name, mimeType, fileSize, createDate, updateDate,
       readers, writers,
       json_object('fileName', name, 'mimeType', mimeType, 'fileSize', fileSize) AS data
     FROM files) o
    """

  private static func fileSearchWhere(
    _ query: Query, _ caller: Principals, values: inout [SQLValue]
  ) -> String {
    var terms = query.conditions.map { conditionSQL($0, values: &values) }
    terms.append(aclTest("o.readers", caller, values: &values))
    return "WHERE " + terms.joined(separator: " AND ")
  }

  func findFiles(_ query: Query, as caller: Principals) throws -> [FileInfo] {
    var values: [SQLValue] = []
    let whereClause = SQLiteEngine.fileSearchWhere(query, caller, values: &values)
    values += [.integer(Int64(query.limit)), .integer(Int64(query.skip))]
    let columns = SQLiteEngine.fileColumns.replacing("f.", with: "o.")
    return try guarded {
      try connection.prepare(
        """
        SELECT \(columns) FROM \(SQLiteEngine.filesAsObjects) \(whereClause)
        \(SQLiteEngine.orderClause(query.order)) LIMIT ? OFFSET ?
        """
      ).rows(values, fileInfo)
    }
  }

  func countFiles(_ query: Query, as caller: Principals) throws -> Int {
    var values: [SQLValue] = []
    let whereClause = SQLiteEngine.fileSearchWhere(query, caller, values: &values)
    return try guarded {
      Int(
        try connection.prepare(
          "SELECT count(*) FROM \(SQLiteEngine.filesAsObjects) \(whereClause)"
        ).firstRow(values) { $0.int(0) } ?? 0)
    }
  }

  func fileBytes(name: String, as caller: Principals) throws -> [UInt8] {
    var values: [SQLValue] = [.text(name)]
    let readable = SQLiteEngine.aclTest("f.readers", caller, values: &values)
    guard
      let bytes = try guarded({
        try connection.prepare("SELECT f.data FROM files f WHERE f.name = ? AND \(readable)")
          .firstRow(values) { $0.blob(0) }
      })
    else { throw DatastoreError.notFound }
    return bytes
  }

  func updateFile(name: String, acl: ACL, as caller: Principals) throws -> FileInfo {
    var values: [SQLValue] = [.text(ACL.column(acl.readers)), .text(ACL.column(acl.writers))]
    values.append(.text(name))
    let writable = SQLiteEngine.aclTest("f.writers", caller, values: &values)
    return try transaction {
      let updated = try connection.prepare(
        """
        UPDATE files AS f SET readers = ?, writers = ?,
          updateDate = max(\(SQLiteRules.now), f.updateDate + 1)
        WHERE f.name = ? AND \(writable)
        RETURNING \(SQLiteEngine.fileColumns.replacing("f.", with: ""))
        """
      ).firstRow(values, fileInfo)
      if let updated { return updated }
      var check: [SQLValue] = []
      let readable = SQLiteEngine.aclTest("f.readers", caller, values: &check)
      check.append(.text(name))
      let canRead = try connection.prepare("SELECT \(readable) FROM files f WHERE f.name = ?")
        .firstRow(check) { $0.int(0) != 0 }
      throw canRead == true ? DatastoreError.noAccess : DatastoreError.notFound
    }
  }

  func deleteFile(name: String, as caller: Principals) throws {
    var values: [SQLValue] = [.text(name)]
    let writable = SQLiteEngine.aclTest("f.writers", caller, values: &values)
    try transaction {
      let deleted = try connection.prepare(
        "DELETE FROM files AS f WHERE f.name = ? AND \(writable) RETURNING 1"
      ).firstRow(values) { $0.int(0) }
      guard deleted == nil else { return }
      var check: [SQLValue] = []
      let readable = SQLiteEngine.aclTest("f.readers", caller, values: &check)
      check.append(.text(name))
      let canRead = try connection.prepare("SELECT \(readable) FROM files f WHERE f.name = ?")
        .firstRow(check) { $0.int(0) != 0 }
      throw canRead == true ? DatastoreError.noAccess : DatastoreError.notFound
    }
  }
}
