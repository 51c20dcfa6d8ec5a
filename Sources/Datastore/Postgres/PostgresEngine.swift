#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Opens the PostgreSQL engine on a libpq URI (`postgresql://…`).
func makePostgresEngine(uri: String) throws -> any DatastoreEngine {
  try PostgresEngine(uri: uri)
}

/// The PostgreSQL engine: the server enforces the ACL. Each person connects as their own role;
/// row-level security, column grants and the triggers of `PostgresSchema` / `PostgresRules` decide
/// what that role may read and write, so this class only says what it wants and turns refusals
/// into the backend's codes. The caller's principals given to each call narrow what is read
/// (they never widen it: the server computes its own from `session_user`).
final class PostgresEngine: DatastoreEngine {
  let connection: PostgresConnection
  /// The URI without its password.
  let location: String
  private(set) var boardId = ""
  /// Stands for this connection's role: the connection is the identity, not a token.
  private let sessionToken = Validation.randomId(length: 32)
  private var principals: Principals?
  /// True once this connection runs `LISTEN forum_changes`.
  var listening = false

  init(uri: String) throws {
    location = PostgresEngine.withoutPassword(uri)
    do {
      connection = try PostgresConnection(uri: uri)
    } catch let failure as PostgresConnectionFailure {
      throw failure.datastoreError
    }
  }

  /// `password=…` and `user:password@` taken out, so the location can be shown and stored.
  static func withoutPassword(_ uri: String) -> String {
    // The standard library's Regex: NSRegularExpression would bring full Foundation (ICU).
    let parameter = try! Regex(#"([?&])password=[^&]*&?"#)
    var text = uri.replacing(parameter) { String($0.output[1].substring ?? "") }
    if text.hasSuffix("?") || text.hasSuffix("&") { text.removeLast() }
    let userInfo = try! Regex(#"^(postgres(ql)?://[^/@:]*):[^/@]*@"#).ignoresCase()
    return text.replacing(userInfo) { String($0.output[1].substring ?? "") + "@" }
  }

  /// Runs a statement, turning the server's refusals into the backend's codes. Inside a
  /// transaction, serialization failures and deadlocks pass through so it can run again.
  func run(_ sql: String, _ values: [PostgresValue] = []) throws -> PostgresResult {
    do {
      return try connection.query(sql, values)
    } catch let error as PostgresError {
      if error.isRetryable && connection.inTransaction { throw error }
      throw error.datastoreError
    }
  }

  /// `statement` rendered for PostgreSQL (`$1`, `$2`…, values as libpq's text) and run.
  /// (Labelled: `run(_:)` takes text written by hand, where an interpolation is text.)
  func run(sql statement: SQL) throws -> PostgresResult {
    let (sql, values) = statement.postgres
    return try run(sql, values)
  }

  /// One write with its rules' bookkeeping, retried as a whole on a deadlock. A rollback also
  /// undoes an `act_as` made inside (settings are transactional), so each attempt, and a
  /// failure, starts again from whom the connection acted for when it began.
  func write<T>(_ body: () throws -> T) throws -> T {
    // A step of an operation (`perform`) needs no savepoint of its own: the operation is one
    // transaction, undone whole when any step fails. Two round trips less a step. A write
    // nested inside a step keeps its savepoint (it may be caught and answered otherwise).
    if operationDepth == 1 && connection.inTransaction {
      operationDepth += 1
      defer { operationDepth -= 1 }
      return try body()
    }
    let start = acting
    let nested = connection.inTransaction
    do {
      return try connection.transaction {
        acting = start
        return try body()
      }
    } catch let error as PostgresError {
      acting = start
      // Nested (a group's savepoint, an outer transaction): the outer level runs it again.
      if nested && error.isRetryable { throw error }
      throw error.datastoreError
    } catch {
      acting = start
      throw error
    }
  }

  func now() throws -> Int64 {
    try run("SELECT forum.now_ms()").int(0, 0)
  }

  // MARK: Schema

  func prepare(rules: EngineRules, indexes: [IndexSpec]) throws {
    let (recorded, reinstall) = try PostgresSchema.check(on: connection, rules: rules)
    // The schema's owner opened, with the whole board's rules and indexes, a board whose rules
    // are another forum's: brought up to date now, as `forum init` would (one transaction,
    // under init's lock). An opener that names no rules (a tool) changes nothing.
    if reinstall && !rules.isEmpty && !indexes.isEmpty {
      try install(rules: rules, indexes: indexes)
      return
    }
    self.rules = recorded
    privateClasses = PostgresRules(self.rules).privateClasses
    textFields = TextSearch.fields(of: indexes)
    if textFields.isEmpty {
      // An opener that names no indexes (`forum serve`, answering a remote engine's search):
      // the text fields `forum init` recorded.
      textFields = PostgresSearch.fields(
        fromRecord: try run("SELECT value FROM forum.meta WHERE key = 'search'").text(0, 0))
    }
    try loadKeyColumns()
    isServer = try run("SELECT forum.is_server()").bool(0, 0)
    boardId = try run("SELECT value FROM forum.meta WHERE key = 'board_id'").text(0, 0) ?? ""
  }

  func addIndex(_ spec: IndexSpec) throws {
    try prepare(rules: EngineRules(), indexes: [])
    let presence = rules.presenceOrdered(spec.className)
    // The owner's DDL (a member is refused, E403001), on the public rows' table.
    let statements =
      spec.kind == .geo
      ? PostgresSchema.geoIndexSQL(spec) : PostgresSchema.indexSQL(spec, presence: presence)
    for sql in statements { _ = try run(sql) }
  }

  func install(rules: EngineRules, indexes: [IndexSpec]) throws {
    self.rules = rules
    privateClasses = PostgresRules(rules).privateClasses
    textFields = TextSearch.fields(of: indexes)
    do {
      try PostgresSchema.install(on: connection, rules: rules, indexes: indexes)
    } catch let error as PostgresError {
      if error.state == .insufficientPrivilege {
        throw DatastoreError(
          .noAccess,
          detail:
            "\(error.message): run `forum init` as the owner of the database (or a role that may "
            + "create schemas in it)")
      }
      throw error.datastoreError
    }
    boardId = try run("SELECT value FROM forum.meta WHERE key = 'board_id'").text(0, 0) ?? ""
    try loadKeyColumns()
    isServer = try run("SELECT forum.is_server()").bool(0, 0)
  }

  /// The `key_*` columns `forum init` made for the indexes' fields, and the `geo_*` columns
  /// of `forum index geo` (`PostgresSchema.geoIndexSQL`).
  private(set) var keyColumns: Set<String> = []
  /// The text fields of each class declared searchable by the board (`IndexSpec(textOf:)`).
  private(set) var textFields: [String: [String]] = [:]

  /// The classes `forum init` gave a trigram index with the fields declared now (`PostgresSearch`).
  private(set) var indexedClasses: Set<String> = []

  private func loadKeyColumns() throws {
    let functions = try run(
      """
      SELECT (SELECT value FROM forum.meta WHERE key = 'search'),
        to_regprocedure('forum.search_candidates(text,text)') IS NOT NULL
      """)
    // A class is searched through the index only when `forum init` indexed the same fields.
    let recorded = Set((functions.text(0, 0) ?? "").split(separator: ";").map(String.init))
    indexedClasses =
      functions.bool(0, 1)
      ? Set(
        textFields.keys.filter { recorded.contains(PostgresSearch.record([$0: textFields[$0]!])) })
      : []
    let result = try run(
      """
      SELECT attname::text FROM pg_attribute
      WHERE attrelid = 'forum.objects'::regclass AND NOT attisdropped
        AND (attname LIKE 'key\\_%' OR attname LIKE 'geo\\_%')
      """)
    keyColumns = Set(result.rows { result.text($0, 0) ?? "" })
  }

  // MARK: Identity

  /// True when the connecting role is a server (`forum_server`, `PostgresSchema+Apps`): it has
  /// no user of its own and acts for app users, one session at a time.
  private(set) var isServer = false

  /// Whom a server's connection acts for (`forum.act_as`); `unknown` makes the next call say.
  enum Acting: Equatable {
    case unknown, nobody
    case session([UInt8])
  }
  var acting = Acting.nobody

  /// Makes a server's connection act for `caller` (its session, or nobody) before a statement
  /// runs as them; a no-op for a member, whose connection is the identity.
  func act(as caller: Principals) throws {
    guard isServer else { return }
    let wanted = caller.sessionHash.map(Acting.session) ?? .nobody
    guard wanted != acting else { return }
    acting = .unknown
    _ = try run(
      "SELECT forum.act_as($1::bytea)", [caller.sessionHash.map(PostgresValue.bytes) ?? .null])
    acting = wanted
  }

  func signIn(secret: String, previousSecret: String?, sessionLifetime: Double) throws -> Login {
    if isServer { return try signInAppUser(secret: secret, sessionLifetime: sessionLifetime) }
    let userId = try write { try run("SELECT forum.sign_in()").text(0, 0) ?? "" }
    let principals = try serverPrincipals(userId: userId)
    self.principals = principals
    let user = User(object: try get(User.className, objectId: userId, as: principals))
    return Login(user: user, sessionToken: sessionToken, principals: principals)
  }

  func serverPrincipals(userId: String) throws -> Principals {
    let names = PostgresEngine.parseArray(try run("SELECT forum.principals()::text").text(0, 0))
    let roles = names.filter { $0.hasPrefix("role:") }.map { String($0.dropFirst(5)) }
    return Principals(userId: userId, roles: roles.sorted())
  }

  func caller(sessionToken token: String) throws -> Principals? {
    if isServer {
      // Only the hash travels: the token never reaches the server's logs.
      let hash = SHA256.hash(token)
      acting = .unknown
      let answer = try run("SELECT forum.act_as($1::bytea)", [.bytes(hash)]).text(0, 0)
      guard let answer else {
        acting = .nobody
        return nil
      }
      acting = .session(hash)
      // The user's id, then its roles (`forum.act_as`: an imported app's roles).
      let words = answer.split(separator: " ").map(String.init)
      return Principals(
        userId: words.first ?? "", roles: Array(words.dropFirst()), sessionHash: hash)
    }
    guard token == sessionToken, let principals else { return nil }
    return try serverPrincipals(userId: principals.userId ?? "")
  }

  /// The user of an app's anonymous id (made on first use) and a new session: only hashes of
  /// both are stored (`forum.app_sign_in`).
  private func signInAppUser(secret: String, sessionLifetime: Double) throws -> Login {
    let token = Validation.randomId(length: 43)
    let hash = SHA256.hash(token)
    let userId = try write {
      try run(
        "SELECT forum.app_sign_in($1::bytea, $2::bytea, $3::bigint)",
        [.bytes(SHA256.hash(secret)), .bytes(hash), .text(String(Int64(sessionLifetime * 1000)))]
      ).text(0, 0) ?? ""
    }
    let principals = Principals(userId: userId, sessionHash: hash)
    let user = User(object: try get(User.className, objectId: userId, as: principals))
    return Login(user: user, sessionToken: token, principals: principals)
  }

  /// A member's connection ends nothing (its role is the identity); a server ends the app
  /// user's sessions.
  func endSessions(userId: String) throws {
    guard isServer else { return }
    try write { _ = try run("SELECT forum.end_app_sessions($1)", [.text(userId)]) }
  }

  func addMember(_ userId: String, toRole role: String) throws {
    let boardRole = PostgresSchema.boardRolePrefix + role
    try write {
      let mapped = try run(
        "SELECT role_name::text FROM forum.users WHERE user_id = $1", [.text(userId)])
      guard let roleName = mapped.text(0, 0) else {
        // An app user (signed up through `forum serve`, a key at the ssh door) has no database
        // role: its roles are rows of forum.app_role_members, which the board's function keeps.
        _ = try run("SELECT forum.set_board_role($1, $2, true)", [.text(role), .text(userId)])
        return
      }
      let exists = try run("SELECT 1 FROM pg_roles WHERE rolname = $1", [.text(boardRole)])
      if exists.rowCount == 0 {
        // Another board on the cluster may be making the same role right now.
        _ = try run(
          """
          DO $$ BEGIN CREATE ROLE \(PostgresEngine.identifier(boardRole)) NOLOGIN;
          EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$
          """)
      }
      _ = try run(
        "GRANT \(PostgresEngine.identifier(boardRole)) TO \(PostgresEngine.identifier(roleName))")
    }
  }

  static func identifier(_ name: String) -> String {
    "\"" + name.replacing("\"", with: "\"\"") + "\""
  }

  // MARK: Transactions

  func transaction<T>(_ body: () throws -> T) throws -> T {
    try write(body)
  }

  /// 1 while an operation's transaction runs its steps, 2 inside one of them (`write`).
  private var operationDepth = 0

  func perform(_ operation: WriteOperation, for client: DatastoreClient) throws -> WriteOutcome {
    // Inside another transaction (a server's group), the steps keep their savepoints.
    guard !connection.inTransaction else { return try runWhole(operation, for: client) }
    operationDepth = 1
    defer { operationDepth = 0 }
    return try runWhole(operation, for: client)
  }

  /// One transaction and one commit for all the writes, each in its own savepoint
  /// (`PostgresConnection.group`). A savepoint rolled back, or the whole transaction, also
  /// undoes the `act_as` made in it (settings are transactional): whom the connection acts for
  /// is then asked again before the next statement, never assumed.
  func group(_ count: Int, _ write: (Int) throws -> Void) throws -> [Error?] {
    do {
      let errors = try connection.group(count) { index in
        do {
          try write(index)
        } catch {
          acting = .unknown
          throw error
        }
      }
      return errors.map { error in (error as? PostgresError)?.datastoreError ?? error }
    } catch let error as PostgresError {
      acting = .unknown
      throw error.datastoreError
    } catch {
      acting = .unknown
      throw error
    }
  }

  // MARK: Objects

  /// An object's columns as the SQL core decodes them (`StoredObject`).
  static let objectColumns = aliasedObjectColumns([
    "o.class", "o.object_id", "o.create_date", "o.update_date", "o.readers::text",
    "o.writers::text", "o.data::text",
  ])

  func objects(_ result: PostgresResult, reading: ObjectReading? = nil) throws -> [DataObject] {
    // The whole answer is weighed before any of it is built: past the budget, nothing is.
    let positions = result.columnPositions
    let read = StoredObject.reader(weighedBy: reading)
    return try result.rows {
      try read(PostgresRow(result: result, row: $0, positions: positions))
    }.map { object($0, reading: reading) }
  }

  /// The objects a SELECT of `columns` returns, weighed row by row as the server sends them
  /// (`PostgresConnection.query(_:_:eachRow:)`): past the budget the statement is cancelled and
  /// nothing is built, so a reader who asks for too much costs the rows up to the budget, not
  /// the whole result held in libpq's memory (issue 28 H5).
  func storedObjects(reading statement: SQL, _ reading: ObjectReading) throws -> [StoredObject] {
    let (sql, values) = statement.postgres
    var rows: [StoredObject] = []
    let read = StoredObject.reader(weighedBy: reading)
    // Each row comes as a result of its own (single-row mode), all with the statement's
    // columns: their positions are read from the first (by name, once, not once a row).
    var known: [String: Int]?
    do {
      try connection.query(sql, values) { result in
        let positions = known ?? result.columnPositions
        known = positions
        for row in 0..<result.rowCount {
          rows.append(try read(PostgresRow(result: result, row: row, positions: positions)))
        }
      }
    } catch let error as PostgresError {
      if error.isRetryable && connection.inTransaction { throw error }
      throw error.datastoreError
    }
    return rows
  }

  /// Parsed ACL columns by their text: a board has few distinct ACLs.
  var aclCache = ACLCache()

  /// A `text[]` in PostgreSQL's output form. Principals never need quoting (`*`, ids,
  /// `role:name`), but quotes are taken off if the server added them.
  static func parseArray(_ text: String?) -> [String] {
    guard let text, text.count >= 2 else { return [] }
    return text.dropFirst().dropLast().split(separator: ",").map {
      $0.hasPrefix("\"") && $0.hasSuffix("\"") && $0.count >= 2
        ? String($0.dropFirst().dropLast()) : String($0)
    }
  }

  /// An array literal for a `text[]` parameter.
  static func arrayLiteral<S: Sequence>(_ items: S) -> PostgresValue where S.Element == String {
    PostgresValue(arrayValue(items))
  }

  /// The same literal as a value to interpolate into `SQL`.
  static func arrayValue<S: Sequence>(_ items: S) -> SQLValue where S.Element == String {
    let quoted = items.sorted().map {
      "\""
        + $0.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }
    return .text("{" + quoted.joined(separator: ",") + "}")
  }

  func insert(_ className: String, fields: [String: JSONValue], acl: ACL, as caller: Principals)
    throws -> DataObject
  {
    try act(as: caller)
    let objectId = Validation.randomId()
    let row: SQL = """
      \(className), \(objectId), \(PostgresEngine.arrayValue(acl.readers))::text[], \
      \(PostgresEngine.arrayValue(acl.writers))::text[], \(JSONValue.object(fields).jsonText())::jsonb
      """
    let columns = PostgresEngine.objectColumns
    let insert: SQL =
      "INSERT INTO forum.objects AS o (class, object_id, readers, writers, data) VALUES (\(sql: row))"
    return try write {
      // A row some may not read, or a child (which lives where its parent does): the server
      // picks the table. Never through forum.objects: its identity would count private rows.
      if privateClasses.contains(className) || !acl.readers.contains("*")
        || PostgresEngine.isChild(className, rules: rules)
      {
        let made = try objects(
          run(sql: "SELECT \(sql: columns) FROM forum.insert_row(\(sql: row)) o"))
        if let object = made.first { return object }
        let now = try self.now()
        return DataObject(
          className: className, objectId: objectId, createDate: now, updateDate: now, acl: acl,
          fields: fields)
      }
      // RETURNING needs the new row to be readable.
      if acl.allowsRead(caller) {
        if let object = try objects(run(sql: insert + " RETURNING \(sql: columns)")).first {
          return object
        }
      }
      _ = try run(sql: insert)
      let now = try self.now()
      return DataObject(
        className: className, objectId: objectId, createDate: now, updateDate: now, acl: acl,
        fields: fields)
    }
  }

  /// The rules `forum init` recorded in the database.
  private(set) var rules = EngineRules()
  /// Classes stored in `forum.private_objects`, read through `forum.private_rows` (issue 22).
  private(set) var privateClasses: Set<String> = []

  /// The rows of `className` a statement reads, as `alias`. A private class's rows are all in
  /// `forum.private_objects`, and the caller reaches only their own (all, under one parent, or
  /// among some ids) through `forum.private_rows`. Any other class has its rows everyone may
  /// read in `forum.objects` and the others there too (issue 22: a private thread, a
  /// preference), so it reads both, `in_private` telling which.
  static func source(
    _ className: String, privateClasses: Set<String>, keyColumns: Set<String> = [],
    parent: String? = nil, ids: [String]? = nil, alias: String = "o"
  ) -> SQL {
    let mine = privateRows(className, parent: parent, ids: ids)
    let alias = SQL(verbatim: alias)
    guard !privateClasses.contains(className) else { return "\(sql: mine) \(sql: alias)" }
    let names = SQL(verbatim: unionColumns(keyColumns))
    return """
      (SELECT \(sql: names), false AS in_private FROM forum.objects
       UNION ALL SELECT \(sql: names), true FROM \(sql: mine)) \(sql: alias)
      """
  }

  /// The columns both tables of objects share, as the engine's statements name them.
  static func unionColumns(_ keyColumns: Set<String>) -> String {
    (["id", "class", "object_id", "create_date", "update_date", "readers", "writers", "data"]
      + keyColumns.sorted().map { "\"\($0)\"" }).joined(separator: ", ")
  }

  /// The caller's own private rows of `className` (nil: of any class, among `ids`).
  static func privateRows(_ className: String?, parent: String? = nil, ids: [String]? = nil)
    -> SQL
  {
    let classMark: SQL = className.map { "\($0)::text" } ?? "NULL::text"
    let parentMark: SQL = parent.map { "\($0)::text" } ?? "NULL::text"
    let idsMark: SQL = ids.map { "\(arrayValue($0))::text[]" } ?? "NULL::text[]"
    return "forum.private_rows(\(sql: classMark), \(sql: parentMark), \(sql: idsMark))"
  }

  /// The parent a query of a child class names by equality, which narrows a private class's
  /// rows to that parent's.
  static func parentNamed(_ query: Query, rules: EngineRules) -> String? {
    guard let rule = rules.childRule(of: query.className),
      let pointer = query.equalTo[rule.parentField]?.objectValue,
      pointer["className"]?.stringValue == rule.parentClass
    else { return nil }
    return pointer["objectId"]?.stringValue
  }

  /// `PostgresEngine.source` with this board's private classes and key columns.
  func source(
    _ className: String, parent: String? = nil, ids: [String]? = nil, alias: String = "o"
  ) -> SQL {
    PostgresEngine.source(
      className, privateClasses: privateClasses, keyColumns: keyColumns, parent: parent,
      ids: ids, alias: alias)
  }

  private static func isChild(_ className: String, rules: EngineRules) -> Bool {
    rules.childRule(of: className) != nil
  }

  /// The object `objectId` of `className` if the caller may read it, in whichever table.
  func readableObject(_ className: String, _ objectId: String, _ caller: Principals, columns: SQL)
    -> SQL
  {
    """
    SELECT \(sql: columns) FROM \(sql: source(className, ids: [objectId]))
    WHERE o.object_id = \(objectId) AND o.class = \(literal: className)\
    \(sql: PostgresEngine.readFilter(caller))
    """
  }

  /// ` AND o.readers && ARRAY[…]`: the caller's principals narrow what the server lets through.
  static func readFilter(_ caller: Principals, table: String = "o") -> SQL {
    guard !caller.isMaster else { return "" }
    let readers = SQL(verbatim: table + ".readers")
    // Written as the read policy is, so the planner estimates it from statistics (see
    // `PostgresSchema.policiesSQL`).
    let everyone: SQL = caller.names.contains("*") ? "'*' = ANY(\(sql: readers)) OR " : ""
    return
      " AND (\(sql: everyone)\(sql: readers) && \(arrayValue(caller.names))::text[])"
  }

  private static func writeFilter(_ caller: Principals) -> SQL {
    guard !caller.isMaster else { return "" }
    return " AND o.writers && \(arrayValue(caller.names))::text[]"
  }

  /// The WHERE clause of a query: class (literal, so partial indexes apply), equalities as jsonb
  /// parameters, and the readers filter.
  static func whereClause(
    _ query: Query, _ caller: Principals, keyColumns: Set<String>,
    rules: EngineRules = EngineRules()
  ) -> SQL {
    "WHERE \(sql: whereTerms(query, caller, keyColumns: keyColumns, rules: rules))"
  }

  /// `whereClause` without its `WHERE` (search adds its own terms).
  static func whereTerms(
    _ query: Query, _ caller: Principals, keyColumns: Set<String>,
    rules: EngineRules = EngineRules()
  ) -> SQL {
    var terms: [SQL] = ["o.class = \(literal: query.className)"]
    terms += QuerySQL.fieldTerms(query, PostgresLeaves(columns: keyColumns))
    if let unread = unreadFilter(query, rules: rules) { terms.append(unread) }
    return "\(sql: SQL.joined(terms, separator: " AND "))\(sql: readFilter(caller))"
  }

  /// `findSQL` rendered (benchmarks time the same SQL raw).
  static func findStatement(
    _ query: Query, as caller: Principals, keyColumns: Set<String> = [],
    rules: EngineRules = EngineRules(), privateClasses: Set<String> = []
  ) -> (sql: String, values: [PostgresValue]) {
    findSQL(
      query, as: caller, keyColumns: keyColumns, rules: rules, privateClasses: privateClasses
    ).postgres
  }

  /// The SELECT that `find` runs. A class whose rows may be in either table reads each on its
  /// own, with its own plan (the public rows' ordered index walk), up to the page's end, and
  /// the two are merged.
  static func findSQL(
    _ query: Query, as caller: Principals, keyColumns: Set<String>, rules: EngineRules,
    privateClasses: Set<String>
  ) -> SQL {
    let parent = parentNamed(query, rules: rules)
    let mine = privateRows(query.className, parent: parent)
    let whereClause = whereClause(query, caller, keyColumns: keyColumns, rules: rules)
    let order = QuerySQL.order(
      query.order, presence: rules.presenceOrdered(query.className), nearest: query.nearest,
      PostgresLeaves())
    let (limit, skip) = (query.limit, query.skip)
    // The page is chosen in a subquery and its text made above it: PostgreSQL computes a
    // select list below a sort, so `data::text` at the sort's level would render every row
    // that matched (seconds for rows of nested arrays, issue 28 H5), not only the page's, and
    // before the first row could be weighed.
    guard !privateClasses.contains(query.className) else {
      let statement: SQL = """
        SELECT \(sql: objectColumns) FROM (
          SELECT * FROM \(sql: mine) o \(sql: whereClause) \(sql: order) \
          LIMIT \(limit) OFFSET \(skip)) o
        """
      return statement
    }
    let names = SQL(verbatim: unionColumns([]))
    let last: SQL = query.order.last?.hasPrefix("-") == true ? "o.in_private DESC" : "o.in_private"
    // Each branch binds its own copy of the page's values.
    let statement: SQL = """
      SELECT \(sql: objectColumns) FROM (
        SELECT o.* FROM (
          (SELECT \(sql: names), false AS in_private
           FROM forum.objects o \(sql: whereClause) \(sql: order) LIMIT \(limit)::bigint + \(skip)::bigint)
          UNION ALL
          (SELECT \(sql: names), true
           FROM \(sql: mine) o \(sql: whereClause) \(sql: order) LIMIT \(limit)::bigint + \(skip)::bigint)) o
        \(sql: order), \(sql: last) LIMIT \(limit) OFFSET \(skip)) o
      """
    return statement
  }

  func findStatement(_ query: Query, _ caller: Principals) -> SQL {
    PostgresEngine.findSQL(
      query, as: caller, keyColumns: keyColumns, rules: rules, privateClasses: privateClasses)
  }

  func countStatement(_ query: Query, _ caller: Principals) -> SQL {
    let from = source(query.className, parent: PostgresEngine.parentNamed(query, rules: rules))
    let whereClause = PostgresEngine.whereClause(
      query, caller, keyColumns: keyColumns, rules: rules)
    return "SELECT count(*) FROM \(sql: from) \(sql: whereClause)"
  }

  /// The caller's private rows among the ids, of any class, found from the caller's own.
  func readableObjects(_ objectIds: [String], _ caller: Principals) -> SQL {
    let ids = PostgresEngine.arrayValue(objectIds)
    let filter = PostgresEngine.readFilter(caller)
    let columns = PostgresEngine.objectColumns
    return """
      SELECT \(sql: columns) FROM forum.objects o
      WHERE o.object_id = ANY(\(ids)::text[])\(sql: filter)
      UNION ALL
      SELECT \(sql: columns) FROM forum.private_rows(NULL, NULL, \(ids)::text[]) o
      WHERE o.object_id = ANY(\(ids)::text[])\(sql: filter)
      """
  }

  func update(
    _ className: String, objectId: String, set fields: [String: JSONValue],
    increment increments: [String: Int64], arrays: [String: ArrayChange], acl: ACL?,
    as caller: Principals
  ) throws -> DataObject {
    try act(as: caller)
    if privateClasses.contains(className) {
      return try updatePrivate(
        className, objectId: objectId, set: fields, increment: increments, arrays: arrays,
        acl: acl, as: caller)
    }
    let removed = fields.filter { $0.value == .null }.map(\.key)
    let kept = fields.filter { $0.value != .null }
    var data: SQL = """
      (o.data - \(PostgresEngine.arrayValue(removed))::text[]) || \
      \(JSONValue.object(kept).jsonText())::jsonb
      """
    for (key, delta) in increments.sorted(by: { $0.key < $1.key }) {
      data.append(
        """
         || jsonb_build_object(\(literal: key), \
        coalesce((o.data->>\(literal: key))::bigint, 0) + \(delta)::bigint)
        """)
    }
    for key in arrays.keys.sorted() {
      data.append(
        """
         || jsonb_build_object(\(literal: key), forum.array_changed(\(key), \
        o.data -> \(literal: key), \(Self.changeJSON(arrays[key]!).jsonText())::jsonb))
        """)
    }
    var assignments: [SQL] = ["data = \(sql: data)"]
    if let acl {
      assignments.append("readers = \(PostgresEngine.arrayValue(acl.readers))::text[]")
      assignments.append("writers = \(PostgresEngine.arrayValue(acl.writers))::text[]")
    }
    let statement: SQL = """
      UPDATE forum.objects o SET \(sql: SQL.joined(assignments, separator: ", "))
      WHERE o.object_id = \(objectId) AND o.class = \(literal: className)\
      \(sql: PostgresEngine.writeFilter(caller))
      RETURNING \(sql: PostgresEngine.objectColumns)
      """
    return try write {
      if let object = try updated(statement, increments) { return object }
      // Not written here: the row left for forum.private_objects (its readers lost '*'), or
      // it is there already (a private thread, a preference), or it may not be written.
      if let moved = try movedRow(className, objectId, caller) { return moved }
      do {
        return try updatePrivate(
          className, objectId: objectId, set: fields, increment: increments, arrays: arrays,
          acl: acl, as: caller)
      } catch let error as DatastoreError where error.code == .notFound {
        throw try refusal(className, objectId, caller)
      }
    }
  }

  /// An array change as `forum.array_changed` (and `forum.update_object`) take it.
  static func changeJSON(_ change: ArrayChange) -> JSONValue {
    var fields: [String: JSONValue] = [
      "op": .string(change.adds ? (change.isUnique ? "addUnique" : "add") : "remove"),
      "objects": .array(change.isUnique ? change.distinctValues : change.values),
    ]
    if let related = change.relationClass { fields["relation"] = .string(related) }
    return .object(fields)
  }

  /// The row an UPDATE just moved to the other table (`forum.objects_move` names it in the
  /// setting `forum.moved`, cleared here), read back where it is now.
  private func movedRow(_ className: String, _ objectId: String, _ caller: Principals) throws
    -> DataObject?
  {
    let moved = try run(
      "SELECT current_setting('forum.moved', true), set_config('forum.moved', '', true)")
    guard moved.text(0, 0) == objectId else { return nil }
    let row = readableObject(className, objectId, caller, columns: Self.objectColumns)
    if let object = try objects(run(sql: row)).first { return object }
    // Written, but no longer readable by the caller.
    let now = try self.now()
    return DataObject(
      className: className, objectId: objectId, createDate: now, updateDate: now,
      acl: ACL(readers: [], writers: []), fields: [:])
  }

  /// `update` of a private class: `forum.update_object` checks what the UPDATE's filters would.
  private func updatePrivate(
    _ className: String, objectId: String, set fields: [String: JSONValue],
    increment increments: [String: Int64], arrays: [String: ArrayChange], acl: ACL?,
    as caller: Principals
  ) throws -> DataObject {
    let removed = fields.filter { $0.value == .null }.map(\.key)
    let kept = fields.filter { $0.value != .null }
    let readers: SQLValue = acl.map { PostgresEngine.arrayValue($0.readers) } ?? .null
    let writers: SQLValue = acl.map { PostgresEngine.arrayValue($0.writers) } ?? .null
    // Numbers are increments; objects are array changes (`forum.array_changed`).
    let added = JSONValue.object(
      increments.mapValues { .int($0) }.merging(arrays.mapValues(Self.changeJSON)) { $1 }
    ).jsonText()
    let statement: SQL = """
      SELECT \(sql: PostgresEngine.objectColumns) FROM forum.update_object(\(className), \
      \(objectId), \(PostgresEngine.arrayValue(removed))::text[], \
      \(JSONValue.object(kept).jsonText())::jsonb, \(added)::jsonb, \(readers)::text[], \
      \(writers)::text[], \(PostgresEngine.narrowing(caller))::text[]) o
      """
    return try write {
      if let object = try updated(statement, increments) { return object }
      if let moved = try movedRow(className, objectId, caller) { return moved }
      throw try refusal(className, objectId, caller)
    }
  }

  /// The row an update statement (`update`, `updatePrivate`) returns, nil when it wrote none.
  /// An increment PostgreSQL refused is said as such: the field held no integer, or the sum
  /// would pass bigint's range (22003), which SQLite would have made a float.
  private func updated(_ statement: SQL, _ increments: [String: Int64]) throws -> DataObject? {
    let result: PostgresResult
    do {
      result = try run(sql: statement)
    } catch let error as DatastoreError
      where error.code == .invalid && error.field == "value" && !increments.isEmpty
    {
      let field = increments.keys.sorted().first!
      if error.detail?.contains("out of range") == true {
        throw DatastoreError.invalid(field, "the sum would pass a 64-bit integer's range")
      }
      throw DatastoreError.invalid(field, "cannot add to a value that is not a number")
    }
    return try objects(result).first
  }

  /// Why a conditional write changed nothing: `E403001` if the caller can read the row.
  private func refusal(_ className: String, _ objectId: String, _ caller: Principals) throws
    -> DatastoreError
  {
    let found = try run(sql: readableObject(className, objectId, caller, columns: "1"))
    return found.rowCount > 0 ? DatastoreError.noAccess : DatastoreError.notFound
  }

  /// The caller's principals as the narrowing argument of the server's delete functions.
  private static func narrowing(_ caller: Principals) -> SQLValue {
    caller.isMaster ? .null : arrayValue(caller.names)
  }

  /// What the app user a server acts for created (`forum.my_storage()`); nil for a member's own
  /// connection, whose writes are not counted.
  func storedBytes(as caller: Principals) throws -> Int? {
    guard isServer, caller.sessionHash != nil else { return nil }
    try act(as: caller)
    return Int(try run("SELECT forum.my_storage()::text").text(0, 0) ?? "0") ?? 0
  }

  func delete(_ className: String, objectId: String, as caller: Principals) throws {
    try act(as: caller)
    try write {
      let result = try run(
        sql: """
          SELECT forum.delete_object(\(className), \(objectId), \
          \(PostgresEngine.narrowing(caller))::text[])
          """)
      if !result.bool(0, 0) { throw try refusal(className, objectId, caller) }
    }
  }

  // MARK: Files

  static var leaves: PostgresLeaves { PostgresLeaves() }

  static let storedFileColumns: KeyValuePairs = [
    "file_name": "name", "mime_type": "mime_type", "file_size": "file_size",
    "create_date": "create_date", "update_date": "update_date", "readers": "readers::text",
    "writers": "writers::text",
  ]

  func insertFile(
    name: String, bytes: [UInt8], mimeType: String, acl: ACL, as caller: Principals
  ) throws -> FileInfo {
    try act(as: caller)
    let row: SQL = """
      \(name), \(mimeType), \(PostgresEngine.arrayValue(acl.readers))::text[], \
      \(PostgresEngine.arrayValue(acl.writers))::text[], \(.blob(bytes))
      """
    let columns = PostgresEngine.fileColumns("f")
    let insert: SQL = """
      INSERT INTO forum.files AS f (name, mime_type, readers, writers, data) VALUES (\(sql: row))
      """
    return try write {
      do {
        // A file some may not read goes to the owner-only table (issue 22).
        if !acl.readers.contains("*") {
          let made = "SELECT \(sql: columns) FROM forum.insert_file(\(sql: row)) f" as SQL
          if let info = try firstRow(made, fileInfo(row:)) { return info }
        } else if acl.allowsRead(caller),
          let info = try firstRow(insert + " RETURNING \(sql: columns)", fileInfo(row:))
        {
          return info
        }
        if acl.readers.contains("*") { _ = try run(sql: insert) }
      } catch let error as DatastoreError where error.code == .invalid {
        throw DatastoreError.invalid("fileName", "a file named \(name) already exists")
      }
      let now = try self.now()
      return FileInfo(
        fileName: name, mimeType: mimeType, fileSize: bytes.count, createDate: now,
        updateDate: now, acl: acl)
    }
  }

  /// A public file, or one of the caller's own private files, found by the caller's keys.
  func readableFile(_ name: String, _ caller: Principals, columns: SQL) -> SQL {
    let filter = PostgresEngine.readFilter(caller, table: "f")
    return """
      SELECT \(sql: columns) FROM forum.files f WHERE f.name = \(name)\(sql: filter)
      UNION ALL
      SELECT \(sql: columns) FROM forum.private_file_rows(ARRAY[\(name)]) f \
      WHERE f.name = \(name)\(sql: filter)
      """
  }

  /// Public files from `forum.files`, and the caller's own private ones, found by their keys,
  /// from `forum.private_file_list()`.
  static let filesAsObjects = SQL(
    verbatim: """
      (SELECT name AS id, name AS object_id, name, mime_type, file_size, create_date, update_date,
         readers, writers,
         jsonb_build_object('fileName', name, 'mimeType', mime_type, 'fileSize', file_size) AS data
       FROM forum.files
       UNION ALL
       SELECT name, name, name, mime_type, file_size, create_date, update_date, readers, writers,
         jsonb_build_object('fileName', name, 'mimeType', mime_type, 'fileSize', file_size)
       FROM forum.private_file_list()) o
      """)

  static func fileSearchWhere(_ query: Query, _ caller: Principals) -> SQL {
    let terms = query.conditions.map { QuerySQL.condition($0, PostgresLeaves()) }
    let all = terms.isEmpty ? "true" : SQL.joined(terms, separator: " AND ")
    return "WHERE \(sql: all)\(sql: readFilter(caller))"
  }

  func updateFile(name: String, acl: ACL, as caller: Principals) throws -> FileInfo {
    try act(as: caller)
    return try write {
      let old = try fileInfo(name: name, as: caller)
      // Checked and written by the server, in whichever table the file is (it moves when its
      // readers gain or lose '*'); the date is its trigger's.
      let changed = try run(
        sql: """
          SELECT forum.update_file(\(name), \(PostgresEngine.arrayValue(acl.readers))::text[], \
          \(PostgresEngine.arrayValue(acl.writers))::text[], \
          \(PostgresEngine.narrowing(caller))::text[])
          """)
      guard changed.bool(0, 0) else { throw DatastoreError.notFound }
      if acl.allowsRead(caller) { return try fileInfo(name: name, as: caller) }
      return FileInfo(
        fileName: old.fileName, mimeType: old.mimeType, fileSize: old.fileSize,
        createDate: old.createDate, updateDate: max(try self.now(), old.updateDate + 1), acl: acl)
    }
  }

  func deleteFile(name: String, as caller: Principals) throws {
    try act(as: caller)
    try write {
      let result = try run(
        sql: "SELECT forum.delete_file(\(name), \(PostgresEngine.narrowing(caller))::text[])")
      guard !result.bool(0, 0) else { return }
      throw try fileRefusal(name, caller)
    }
  }
}
