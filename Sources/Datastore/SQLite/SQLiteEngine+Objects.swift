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
        let readable = SQLiteEngine.aclTest("p.readers", caller).spliced(into: &values)
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
    let readable = SQLiteEngine.aclTest("f.readers", caller).spliced(into: &values)
    let writable = SQLiteEngine.aclTest("f.writers", caller).spliced(into: &values)
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
    let statement: SQL = """
      SELECT \(sql: SQLiteEngine.objectColumnsSQL) FROM objects o
      WHERE o.objectId = \(objectId) AND o.class = \(className) AND \(sql: SQLiteEngine.aclTest("o.readers", caller))
      """
    let (sql, values) = statement.rendered(.sqlite)
    guard let object = try guarded({ try connection.prepare(sql).firstRow(values, object) })
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
    let order = QuerySQL.order(
      query.order, presence: rules.presenceOrdered(query.className), SQLiteLeaves())
    let statement: SQL = """
      SELECT \(sql: objectColumnsSQL) FROM objects o \(sql: filter(query, caller, rules: rules)) \
      \(sql: order) LIMIT \(query.limit) OFFSET \(query.skip)
      """
    return statement.rendered(.sqlite)
  }

  private static let objectColumnsSQL = SQL(verbatim: objectColumns)

  /// The WHERE clause of `find` and `count`: the query's terms and its unread filter.
  private static func filter(_ query: Query, _ caller: Principals, rules: EngineRules) -> SQL {
    var clause = whereClause(query, caller)
    if let unread = unreadFilter(query, caller, rules: rules) {
      clause.append(" AND \(sql: unread)")
    }
    return clause
  }

  func count(_ query: Query, as caller: Principals) throws -> Int {
    if query.equalTo.isEmpty && query.greaterThan.isEmpty && query.lessThan.isEmpty
      && query.conditions.isEmpty && !caller.isMaster && !query.unreadOnly
    {
      return try classCount(query.className, caller)
    }
    let statement: SQL =
      "SELECT count(*) FROM objects o \(sql: SQLiteEngine.filter(query, caller, rules: rules))"
    let (sql, values) = statement.rendered(.sqlite)
    return try guarded {
      Int(try connection.prepare(sql).firstRow(values) { $0.int(0) } ?? 0)
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
    let ids = SQL.joined(objectIds.map { "\($0)" as SQL }, separator: ",")
    let statement: SQL = """
      SELECT \(sql: SQLiteEngine.objectColumnsSQL) FROM objects o
      WHERE o.objectId IN (\(sql: ids)) AND \(sql: SQLiteEngine.aclTest("o.readers", caller))
      """
    let (sql, values) = statement.rendered(.sqlite)
    return try guarded { try connection.prepare(sql).rows(values, object) }
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
    let writable = SQLiteEngine.aclTest("o.writers", caller).spliced(into: &values)
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
    let readable = SQLiteEngine.aclTest("o.readers", caller).spliced(into: &values)
    let writable = SQLiteEngine.aclTest("o.writers", caller).spliced(into: &values)
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
    let writable = SQLiteEngine.aclTest("o.writers", caller).spliced(into: &values)
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

  /// `WHERE` the class (a literal: the planner then uses the indexes partial to it), the
  /// query's equalities, bounds and conditions, and what the caller may read.
  static func whereClause(_ query: Query, _ caller: Principals) -> SQL {
    var terms: [SQL] = ["o.class = \(literal: query.className)"]
    for field in query.equalTo.keys.sorted() {
      let expression = SQL(verbatim: expression(for: field))
      switch query.equalTo[field]! {
      case .null: terms.append("\(sql: expression) IS NULL")
      case .bool(let flag): terms.append("\(sql: expression) = \(flag ? 1 : 0)")
      case .int(let int): terms.append("\(sql: expression) = \(int)")
      case .double(let double): terms.append("\(sql: expression) = \(.real(double))")
      case .string(let string): terms.append("\(sql: expression) = \(string)")
      case let composite:
        // json_extract returns arrays and objects as compact JSON; ours is stored the same way.
        terms.append("\(sql: expression) = \(composite.jsonText())")
      }
    }
    // Range bounds: the index on the ordered field seeks to the first key (keyset paging).
    for field in query.greaterThan.keys.sorted() {
      terms.append("\(sql: SQL(verbatim: expression(for: field))) > \(query.greaterThan[field]!)")
    }
    for field in query.lessThan.keys.sorted() {
      terms.append("\(sql: SQL(verbatim: expression(for: field))) < \(query.lessThan[field]!)")
    }
    terms += query.conditions.map { QuerySQL.condition($0, SQLiteLeaves()) }
    if !caller.isMaster { terms.append(listingFilter(query.className, caller)) }
    return "WHERE \(sql: SQL.joined(terms, separator: " AND "))"
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
    let readable = SQLiteEngine.aclTest("f.readers", caller).spliced(into: &values)
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
  private static let filesAsObjects = SQL(
    verbatim: """
      (SELECT rowid AS id, name AS objectId, name, mimeType, fileSize, createDate, updateDate,
         readers, writers,
         json_object('fileName', name, 'mimeType', mimeType, 'fileSize', fileSize) AS data
       FROM files) o
      """)

  /// A file search's `WHERE`: its conditions over `filesAsObjects`, and what the caller may read.
  private static func fileSearchWhere(_ query: Query, _ caller: Principals) -> SQL {
    var terms = query.conditions.map { QuerySQL.condition($0, SQLiteLeaves()) }
    terms.append(aclTest("o.readers", caller))
    return "WHERE \(sql: SQL.joined(terms, separator: " AND "))"
  }

  func findFiles(_ query: Query, as caller: Principals) throws -> [FileInfo] {
    let columns = SQL(verbatim: SQLiteEngine.fileColumns.replacing("f.", with: "o."))
    let statement: SQL = """
      SELECT \(sql: columns) FROM \(sql: SQLiteEngine.filesAsObjects) \
      \(sql: SQLiteEngine.fileSearchWhere(query, caller))
      \(sql: QuerySQL.order(query.order, SQLiteLeaves())) LIMIT \(query.limit) OFFSET \(query.skip)
      """
    let (sql, values) = statement.rendered(.sqlite)
    return try guarded { try connection.prepare(sql).rows(values, fileInfo) }
  }

  func countFiles(_ query: Query, as caller: Principals) throws -> Int {
    let statement: SQL = """
      SELECT count(*) FROM \(sql: SQLiteEngine.filesAsObjects) \
      \(sql: SQLiteEngine.fileSearchWhere(query, caller))
      """
    let (sql, values) = statement.rendered(.sqlite)
    return try guarded { Int(try connection.prepare(sql).firstRow(values) { $0.int(0) } ?? 0) }
  }

  func fileBytes(name: String, as caller: Principals) throws -> [UInt8] {
    var values: [SQLValue] = [.text(name)]
    let readable = SQLiteEngine.aclTest("f.readers", caller).spliced(into: &values)
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
    let writable = SQLiteEngine.aclTest("f.writers", caller).spliced(into: &values)
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
      let readable = SQLiteEngine.aclTest("f.readers", caller).spliced(into: &check)
      check.append(.text(name))
      let canRead = try connection.prepare("SELECT \(readable) FROM files f WHERE f.name = ?")
        .firstRow(check) { $0.int(0) != 0 }
      throw canRead == true ? DatastoreError.noAccess : DatastoreError.notFound
    }
  }

  func deleteFile(name: String, as caller: Principals) throws {
    var values: [SQLValue] = [.text(name)]
    let writable = SQLiteEngine.aclTest("f.writers", caller).spliced(into: &values)
    try transaction {
      let deleted = try connection.prepare(
        "DELETE FROM files AS f WHERE f.name = ? AND \(writable) RETURNING 1"
      ).firstRow(values) { $0.int(0) }
      guard deleted == nil else { return }
      var check: [SQLValue] = []
      let readable = SQLiteEngine.aclTest("f.readers", caller).spliced(into: &check)
      check.append(.text(name))
      let canRead = try connection.prepare("SELECT \(readable) FROM files f WHERE f.name = ?")
        .firstRow(check) { $0.int(0) != 0 }
      throw canRead == true ? DatastoreError.noAccess : DatastoreError.notFound
    }
  }
}
