import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The embedded engine: one SQLite file, one host. Implements `DatastoreEngine`'s semantics with
/// conditional SQL writes and the rules as triggers (`SQLiteRules`); ACL filtering and the
/// caller-dependent checks (parent readable, owner is the caller) are in the statements it runs.
final class SQLiteEngine: DatastoreEngine {
  let connection: Connection
  let location: String
  private(set) var boardId = ""
  /// Set by `prepare`: the rules it was given when they are the recorded ones (or once it has
  /// installed them), else the recorded ones, decoded.
  private(set) var rules = EngineRules() {
    didSet {
      insertTemplates = [:]
      lastInsertTemplate = nil
      forgetIndexLeads()
    }
  }
  /// Each class's INSERT for each caller, built once (`SQLiteEngine.insertTemplate`).
  var insertTemplates: [String: InsertTemplate] = [:]
  /// The one asked for last, found without building its key (a script's comments, one caller).
  var lastInsertTemplate: (className: String, caller: Principals, template: InsertTemplate)?
  /// Each shape of query for each caller, built once (`SQLiteEngine.findStatement`).
  var findTemplates: [String: FindTemplate] = [:]
  /// Shapes whose SQL, filled with another query's values, was not that query's own.
  var unkeptShapes: Set<String> = []
  /// The file's indexes partial to a class, by their first column, read at the first listing
  /// that needs them (`indexLeads`).
  private var knownLeads: SQLiteIndexLeads?
  /// The rules' record as opening read it. Opening only reads it: a board opened with the rules
  /// it records (every command) never decodes it.
  private var recordedRules: String?
  /// The text fields of each class with a full-text index, as installed in the file.
  private(set) var textFields: [String: [String]] = [:]

  var aclCache = ACLCache()
  /// The parents an import batch wrote and the counts it gave them (`importing`).
  var importedCounts: [(objectId: String, counts: String)] = []

  /// `PRAGMA data_version` when the change feed was last read: another value means another
  /// connection committed since.
  private(set) var lastDataVersion: Int64?
  func noteDataVersion(_ version: Int64) { lastDataVersion = version }

  /// Sessions `caller` found, by their token's hash, while nobody wrote a session, a role or
  /// an identity (the identity clock, `write_clocks`) and this connection wrote none
  /// (`identityWrites`): a server's next request of the same session looks nothing up, even
  /// after objects were written, by it or by anyone. A logout, a role granted, a session
  /// ended by hand empties it; expiry is checked here.
  /// Keyed by the hash in hex: a dictionary keyed by `[UInt8]` cost every command 0.4 M
  /// instructions the first time (the runtime proving `Array<UInt8>: Hashable` by name).
  private var sessionCache: (mark: SessionMark, sessions: [String: CachedSession])?
  /// The identity clock (`StateMark.identity`: sessions, roles, by anyone) and this
  /// connection's own identity writes: object writes move neither.
  private struct SessionMark: Equatable {
    let identity: Int64
    let own: Int64
  }
  /// The last `stateMark()`, reused while neither `PRAGMA data_version` nor this connection's
  /// changes moved.
  var lastMark: StateMark?
  /// `PRAGMA schema_version` when `stateMark` last read the clocks: an index dropped or made
  /// by hand (sqlite3) moves it and no clock.
  var lastSchemaVersion: Int64?
  /// Writes of this connection to `sessions`, `identities` or `role_members` (the object
  /// triggers touch none of them).
  private var identityWrites: Int64 = 0
  /// Set when another connection checkpoints (`Datastore.checkpointElsewhere`): `tidy` calls it
  /// instead of checkpointing.
  var checkpointNote: (@Sendable () -> Void)?
  /// A server's connection whose checkpoints another connection runs (`serve(checkpointsApart:)`).
  private(set) var checkpointsApart = false
  func noteIdentityWrite() { identityWrites += 1 }
  private struct CachedSession {
    let principals: Principals
    let expiresAt: Int64
  }
  private static let maximumCachedSessions = 10_000

  /// Opens or creates the database at `path`. A new file is created 0600 (the person who makes a
  /// board decides whom to share it with); an existing file's mode is left alone. Every way the file
  /// can be unusable becomes one `E500001` whose detail says what is wrong with which path.
  /// `existing`: a file that is not there is not created (a connection opened beside another
  /// must never make a new board where one was removed).
  init(path: String, existing: Bool = false) throws {
    guard !path.isEmpty else { throw DatastoreError.empty("database path") }
    location = path
    if let refusal = SQLiteEngine.refusal(forDatabaseAt: path) { throw refusal }
    // SQLite would create the file 0644 (less the umask). An empty file is a new database to
    // SQLite, and its -wal and -shm files take the database file's mode.
    if !existing {
      let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
      if descriptor >= 0 { close(descriptor) }
    }
    do {
      connection = try Connection(path: path, create: !existing)
      if connection.isReadOnly {
        throw DatastoreError(.systemError, reason: BoardAccessReason.readOnly(path: path))
      }
      // Temporary files in memory: an `INSERT … RETURNING` (every new object) and a write whose
      // triggers touch several rows keep a scratch table or statement journal, which SQLite
      // otherwise puts in a file created and unlinked in /var/tmp at every write (issue 20).
      try connection.execute("PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY")
      // Whose file is this? Look before changing anything in it (switching to WAL rewrites the
      // header), and in one statement so that another process creating the schema at the same
      // moment cannot show us its version from before and its tables from after.
      let (version, tables, objectsTables) =
        try connection.prepare(
          """
          SELECT (SELECT user_version FROM pragma_user_version), count(*),
            coalesce(sum(type = 'table' AND name = 'objects'), 0)
          FROM sqlite_schema
          """
        ).firstRow { ($0.int(0), $0.int(1), $0.int(2)) } ?? (0, 0, 0)
      if (version == 0 && tables > 0) || (version > 0 && objectsTables == 0) {
        throw DatastoreError(
          .systemError, reason: BoardAccessReason.anotherProgramsDatabase(path: path))
      }
      let mode = try BusyWait.retrying {
        try connection.prepare("PRAGMA journal_mode = WAL").firstRow { try $0.text(0) }
      }
      if mode != "wal" {
        throw DatastoreError(.systemError, reason: BoardAccessReason.noWAL(path: path))
      }
      try connection.execute("PRAGMA synchronous = NORMAL")
      connection.checkpointsBetweenWrites(backstop: SQLiteEngine.checkpointBackstopPages)
      // An up-to-date file (every open but the first after an upgrade) is told by the version
      // read above: no second look, and the migrations' SQL is never built.
      let before =
        version == SQLiteSchema.version
        ? Int(version) : try SQLiteSchema.migrations.apply(to: connection)
      if before > 0 && before < 2 {
        // Old secrets were overwritten in the database; push them out of the WAL file too.
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
      }
      // The board id, the rules' record and the search fields in one statement.
      var id: String?
      var searchRecord: String?
      try connection.prepare("SELECT key, value FROM meta WHERE key IN ('boardId', ?, ?)")
        .forEachRow([.text(SQLiteEngine.rulesKey), .text(SQLiteSearch.metaKey)]) { row in
          switch try row.text(0) {
          case "boardId": id = try row.text(1)
          case SQLiteEngine.rulesKey: recordedRules = try row.text(1)
          default: searchRecord = try row.text(1)
          }
        }
      boardId = id ?? ""
      textFields = SQLiteSearch.fields(fromRecord: searchRecord)
    } catch let error as SQLiteError {
      throw SQLiteEngine.describe(error, path: path)
    }
  }

  /// Says what an SQLite failure means for the person who named the file. A trigger's refusal
  /// (`TriggerRefusal`) becomes that error.
  static func describe(_ error: SQLiteError, path: String) -> DatastoreError {
    if let refusal = TriggerRefusal(error) {
      return DatastoreError(
        refusal.code, field: refusal.field, reason: refusal.reason.map(Reason.store))
    }
    let reason: BoardAccessReason
    switch error.primaryCode {
    case SQLITE_NOTADB: reason = .notSQLite(path: path)
    case SQLITE_READONLY: reason = .readOnly(path: path)
    case SQLITE_CANTOPEN: reason = .cannotOpen(path: path)
    case SQLITE_CORRUPT: reason = .damaged(path: path)
    case SQLITE_FULL: reason = .diskFull(path: path)
    default: return DatastoreError(.systemError, detail: "database \(path): \(error.message)")
    }
    return DatastoreError(.systemError, reason: reason)
  }

  /// Runs SQLite calls, turning their failures into `DatastoreError`s.
  func guarded<T>(_ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as SQLiteError {
      if error.primaryCode == SQLITE_INTERRUPT, let stopped = connection.budget?.error {
        throw stopped
      }
      // A wait for another process's lock that the server's stop ended (`BusyWait`).
      if error.primaryCode == SQLITE_BUSY, connection.budget?.serverStopping == true {
        throw DatastoreError(.systemError, reason: StatementStop.serverStopping)
      }
      if error.primaryCode == SQLITE_FULL { sawFullError = true }
      // What `forum_regexp` (CSQLite's shim) answers for a `$regex` it refuses.
      if error.primaryCode == SQLITE_RANGE {
        throw DatastoreError.invalid("where", "the $regex pattern backtracks too much")
      }
      if error.primaryCode == SQLITE_FORMAT {
        throw DatastoreError.invalid("where", "the $regex pattern is invalid")
      }
      throw SQLiteEngine.describe(error, path: location)
    }
  }

  /// Set by `guarded` on SQLITE_FULL, for the write that `transaction` may try again.
  private var sawFullError = false

  func now() throws -> Int64 {
    try guarded {
      try connection.prepare("SELECT \(SQLiteRules.now)").firstRow { $0.int(0) } ?? 0
    }
  }

  func transaction<T>(_ body: () throws -> T) throws -> T {
    guard !connection.isInTransaction else {
      return try guarded { try connection.transaction(body) }
    }
    sawFullError = false
    do {
      return try guarded { try connection.transaction(body) }
    } catch  where sawFullError {
      // SQLITE_FULL: a full disk, or a change feed with no number left.
      guard try guarded({ try reclaimFeedNumbers() }) else { throw error }
      return try guarded { try connection.transaction(body) }
    }
  }

  /// The server's pool (`Datastore.serve`): no checkpoint at commit when `checkpointsApart`.
  /// Pages are read with `pread`, not through a memory map: SQLite drops a connection's map,
  /// whole, at the start of each read after another connection's commit (its pager's reset),
  /// so under writes every read unmapped the 1.4 GB board (a flush of every core's view of it)
  /// and faulted its pages in again: the demo's mix ran 19 % slower with the map.
  func serve(checkpointsApart: Bool) throws {
    try guarded {
      _ = try connection.prepare("PRAGMA cache_size = -\(SQLiteEngine.servingCacheKilobytes)")
        .firstRow { $0.int(0) }
      if checkpointsApart {
        // The server's `Checkpointer` copies the log on its own connection: no commit copies
        // it, and each notes the log's length (the writer's `Connection.restartLongLog`).
        connection.checkpointsBetweenWrites(backstop: .max)
        self.checkpointsApart = true
      }
    }
  }

  /// Each pooled connection's own page cache: the board's pages are in the kernel's cache
  /// already, a `pread` away, and the server holds up to 32 connections (at SQLite's 2 MB
  /// each, 64 MB of the server's memory at 64 clients: BENCHMARKS N3).
  static let servingCacheKilobytes = 512

  func checkpoint() throws {
    try guarded { try connection.checkpoint() }
  }

  /// A log this long (SQLite's own default for a checkpoint at commit) is copied into the
  /// database by the next `tidy`; `checkpointBackstopPages`, by the commit that passes it.
  static let checkpointPages: Int32 = 1000
  static let checkpointBackstopPages: Int32 = 10_000

  /// One `BEGIN IMMEDIATE … COMMIT` for all the writes, each in its own savepoint
  /// (`Connection.group`).
  func group(_ count: Int, _ write: (Int) throws -> Void) throws -> [Error?] {
    try guarded { try connection.group(count, write) }
  }

  /// The change feed numbers its rows upwards (AUTOINCREMENT) and fails every write once a row
  /// holds the largest number, which only a row written by hand can: honest numbers grow by one
  /// a write and would need millennia to pass `feedCeiling`. Rows above it are removed and the
  /// numbering starts again after the highest that remains (`changes` tells a reader whose
  /// cursor is past it to come back). True when there was such a row.
  func reclaimFeedNumbers() throws -> Bool {
    try connection.transaction {
      let ceiling = SQLValue.integer(SQLiteEngine.feedCeiling)
      let forged =
        try connection.prepare("SELECT count(*) FROM changes WHERE seq > ?").firstRow([ceiling]) {
          $0.int(0)
        } ?? 0
      guard forged > 0 else { return false }
      try connection.run("DELETE FROM changes WHERE seq > ?", [ceiling])
      try connection.run(
        "UPDATE sqlite_sequence SET seq = (SELECT coalesce(max(seq), 0) FROM changes)"
          + " WHERE name = 'changes'")
      return true
    }
  }

  /// 2^62: far above any number a real feed reaches, far below the end of the numbers.
  static let feedCeiling: Int64 = 1 << 62

  // MARK: Rules and indexes

  private static let rulesKey = "rules"

  /// Rules recorded by a newer forum are not replaced by this one's older rules (the two would
  /// take turns at every open).
  private func refuseNewerRules(_ recorded: String?) throws {
    guard let recorded, let format = Int(recorded.prefix { $0 != " " }), format > SQLiteRules.format
    else { return }
    throw DatastoreError(
      .systemError,
      reason: BoardAccessReason.newerRules(path: connection.path, format: format))
  }

  private func installedRules() throws -> String? {
    try connection.prepare("SELECT value FROM meta WHERE key = ?").firstRow(
      [.text(SQLiteEngine.rulesKey)]
    ) { try $0.text(0) } ?? nil
  }

  /// The rules recorded in the file: they are the file's, whoever opens it.
  private func decodeRecordedRules() throws -> EngineRules {
    guard let text = recordedRules, let space = text.firstIndex(of: " ") else {
      return EngineRules()
    }
    return try EngineRules(record: JSONValue.parse(String(text[space...].dropFirst())))
  }

  func prepare(rules: EngineRules, indexes: [IndexSpec]) throws {
    try guarded {
      // Opened without rules (a server): the file's own, reinstalled when a newer forum
      // renders them otherwise.
      var rules = rules
      if rules.isEmpty {
        rules = try decodeRecordedRules()
        let format = recordedRules.flatMap { Int($0.prefix { $0 != " " }) } ?? SQLiteRules.format
        if format >= SQLiteRules.format { rules = EngineRules() }
      }
      if rules.isEmpty {
        self.rules = try decodeRecordedRules()
      } else {
        let recorded = "\(SQLiteRules.format) \(rules.encoding)"
        if recordedRules != recorded {
          try refuseNewerRules(recordedRules)
          try connection.transaction {
            // Another process may have installed them while this one waited for the lock.
            guard try installedRules() != recorded else { return }
            let old = try connection.prepare(
              "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'rule\\_%' ESCAPE '\\'"
            ).rows { try $0.text(0) ?? "" }
            for name in old { try connection.execute("DROP TRIGGER \"\(name)\"") }
            for sql in SQLiteRules.alignments(for: rules) { try connection.execute(sql) }
            try moveCounterIndexes(rules)
            for sql in SQLiteRules.triggers(for: rules) { try connection.execute(sql) }
            for sql in SQLiteRules.pairIndexes(for: rules) { try connection.execute(sql) }
            for sql in SQLiteRules.ownerIndexes(for: rules) { try connection.execute(sql) }
            try connection.run(
              "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
              [.text(SQLiteEngine.rulesKey), .text(recorded)])
          }
          recordedRules = recorded
        }
        // The record is the rules' one encoding: recorded equal, they are these rules.
        self.rules = rules
      }
      try ensureIndexes(indexes.map(SQLiteEngine.ordered).filter { $0.kind == .ordered })
      let text = SQLiteSearch.fields(of: indexes)
      if !text.isEmpty && text != textFields {
        textFields = try SQLiteSearch.install(text, on: connection)
      }
    }
  }

  /// Indexes on a parent's counters made before the rules' format 10 read them from `data`:
  /// each is made again, under its name, on `counts` (`SQLiteRules.counterColumn`), whoever
  /// declared it (the board, or `forum index add`).
  private func moveCounterIndexes(_ rules: EngineRules) throws {
    let indexes = try connection.prepare(
      "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'objects' AND sql IS NOT NULL"
    ).rows { (name: try $0.text(0) ?? "", sql: try $0.text(1) ?? "") }
    for parentClass in Set(rules.children.map(\.parentClass)) {
      let counters = rules.counterFields(of: parentClass)
      for index in indexes where index.sql.hasSuffix("= \(SQLiteRules.literal(parentClass))") {
        var moved = index.sql
        for field in counters {
          moved = moved.replacing(
            "json_extract(data, \(SQLiteRules.path(field)))",
            with: "json_extract(\(SQLiteRules.counterColumn), \(SQLiteRules.path(field)))")
        }
        guard moved != index.sql else { continue }
        try connection.execute("DROP INDEX \"\(index.name)\"")
        try connection.execute(moved)
      }
    }
  }

  func install(rules: EngineRules, indexes: [IndexSpec]) throws {
    try prepare(rules: rules, indexes: indexes)
  }

  func addIndex(_ spec: IndexSpec) throws {
    try prepare(rules: EngineRules(), indexes: [spec])
  }

  /// A GeoPoint index on SQLite is the class's public rows by latitude, then longitude: a box
  /// (and a distance's box) seeks its latitudes and checks longitudes in the index, where the
  /// expressions are the ones `SQLiteLeaves.numberWithin` writes.
  static func ordered(_ spec: IndexSpec) -> IndexSpec {
    guard spec.kind == .geo, let field = spec.fields.first else { return spec }
    return IndexSpec(
      className: spec.className, fields: [field + ".latitude", field + ".longitude"])
  }

  /// Makes each index of `specs` the file does not hold yet, found by its definition, not its
  /// name: two specs can have one readable name (`Note` on `tag, x` and `Note_tag` on `x`, or
  /// `Note` and `note`, which SQLite's names do not tell apart), and the second then gets the
  /// name with a number after it (`indexName(_:avoiding:)`).
  private func ensureIndexes(_ specs: [IndexSpec]) throws {
    // Looked at first without the write lock (every open comes here), then again under it:
    // another process may have made one of them, or taken a name, in between.
    guard !(try missingIndexes(specs)).isEmpty else { return }
    try connection.transaction {
      for statement in try missingIndexes(specs) { try connection.execute(statement) }
      // Another connection's listings walk the new index once they read its leads again.
      try connection.execute("UPDATE write_clocks SET n = n + 1 WHERE name = 'meta'")
    }
    forgetIndexLeads()
  }

  /// The CREATE INDEX of each of `specs` the file does not hold, each under a name no index has.
  private func missingIndexes(_ specs: [IndexSpec]) throws -> [String] {
    let existing: [(name: String, sql: String)] = try connection.prepare(
      "SELECT name, coalesce(sql, '') FROM sqlite_schema WHERE type = 'index'"
    ).rows([]) { row -> (name: String, sql: String) in
      (name: try row.text(0) ?? "", sql: try row.text(1) ?? "")
    }
    var taken = Set(existing.map { $0.name.lowercased() })
    var statements: [String] = []
    for spec in specs {
      let definition = SQLiteEngine.indexDefinition(spec, rules: rules)
      guard !existing.contains(where: { $0.sql.hasSuffix(definition) }) else { continue }
      let name = SQLiteEngine.indexName(spec, avoiding: taken)
      taken.insert(name.lowercased())
      statements.append("CREATE INDEX \"\(name)\"\(definition)")
    }
    return statements
  }

  /// Partial to the class's public rows: other classes' rows and rows `*` may not read are
  /// neither in it nor computed for it (private by construction: a listing seeks it for public
  /// rows only, `findStatement`). The class is not a column (its condition says it): a listing
  /// walks the index without checking each entry against the class (schema 25), and one that
  /// seeks or orders by its first column tells the planner so (`SQLiteIndexLeads`).
  static func indexSQL(_ spec: IndexSpec, rules: EngineRules) -> String {
    "CREATE INDEX IF NOT EXISTS \"\(indexName(spec))\"\(indexDefinition(spec, rules: rules))"
  }

  /// `indexSQL` after the index's name, as the file keeps it (`sqlite_schema.sql` ends so):
  /// what tells an index made for `spec`, whatever its name.
  static func indexDefinition(_ spec: IndexSpec, rules: EngineRules) -> String {
    let presence = rules.presenceOrdered(spec.className)
    let counters = rules.counterFields(of: spec.className)
    let columns = spec.fields.map {
      orderExpression(for: $0, presence: presence, table: nil, counters: counters)
    }
    return """

      ON objects(\(columns.joined(separator: ", ")))
      WHERE public_class = \(SQLiteRules.literal(spec.className))
      """
  }

  /// The file's indexes partial to a class, by their first column (`SQLiteIndexLeads`): read
  /// once, then again after this connection made an index or changed the rules, or `stateMark`
  /// saw another connection write the file's meta (`forum index add` moves it). Unread (an
  /// error), none: a listing then seeks its class, as on a board without such indexes.
  func indexLeads() -> SQLiteIndexLeads {
    if let knownLeads { return knownLeads }
    guard
      let indexes = try? connection.prepare(
        """
        SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'objects'
          AND instr(sql, 'WHERE public_class = ') > 0
        """
      ).rows([], { (name: try $0.text(0) ?? "", sql: try $0.text(1) ?? "") })
    else { return SQLiteIndexLeads() }
    let leads = SQLiteIndexLeads(indexes: indexes)
    knownLeads = leads
    return leads
  }

  /// The find statements built on the leads go with them.
  func forgetIndexLeads() {
    knownLeads = nil
    findTemplates = [:]
    unkeptShapes = []
  }

  /// `indexName(spec)`, or, when another index has that name (`taken`: the file's names in
  /// lower case, as SQLite compares them), the first of it with `_2`, `_3`… that none has.
  static func indexName(_ spec: IndexSpec, avoiding taken: Set<String>) -> String {
    let name = indexName(spec)
    guard taken.contains(name.lowercased()) else { return name }
    var number = 2
    while taken.contains("\(name)_\(number)".lowercased()) { number += 1 }
    return "\(name)_\(number)"
  }

  /// Byte by byte, not `replacing(_:with:)`: its generic first use cost every open 0.09 M
  /// instructions ("." is one byte in UTF-8 and never inside another character's bytes).
  static func indexName(_ spec: IndexSpec) -> String {
    let fields = spec.fields.joined(separator: "_").utf8.map {
      $0 == UInt8(ascii: ".") ? UInt8(ascii: "_") : $0
    }
    return "objects_public_\(spec.className)_" + String(decoding: fields, as: UTF8.self)
  }

  // MARK: Identity

  func signIn(secret: String, previousSecret: String?, sessionLifetime: Double) throws -> Login {
    noteIdentityWrite()
    return try transaction {
      try guarded {
        let hash = SHA256.hash(secret)
        let find = "SELECT userId FROM identities WHERE secretHash = ?"
        var userId = try connection.prepare(find).firstRow([.blob(hash)]) { try $0.text(0) } ?? nil
        if userId == nil, let previousSecret {
          let previous = SHA256.hash(previousSecret)
          userId =
            try connection.prepare(find).firstRow([.blob(previous)]) { try $0.text(0) } ?? nil
          if userId != nil {
            try connection.run(
              "UPDATE identities SET secretHash = ? WHERE secretHash = ?",
              [.blob(hash), .blob(previous)])
          }
        }
        if userId == nil {
          let id = Validation.randomId()
          try connection.run(
            """
            INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data)
            VALUES (?, ?, \(SQLiteRules.now), \(SQLiteRules.now), ' * ', ?, ?)
            """,
            [
              .text(User.className), .text(id), .text(" \(id) "),
              .text(
                JSONValue.object(["userName": .string(Validation.randomId(length: 10))]).jsonText()),
            ])
          try connection.run(
            "INSERT INTO identities(secretHash, userId) VALUES (?, ?)", [.blob(hash), .text(id)])
          userId = id
        }
        let user = try get(User.className, objectId: userId!, as: .master)
        let token = Validation.randomId(length: 43)
        try connection.run(
          "INSERT INTO sessions(tokenHash, userId, expiresAt) VALUES (?, ?, \(SQLiteRules.now) + ?)",
          [
            .blob(SHA256.hash(token)), .text(user.objectId),
            .integer(Int64(sessionLifetime * 1000)),
          ])
        return Login(
          user: User(object: user), sessionToken: token,
          principals: Principals(userId: user.objectId, roles: try roles(of: user.objectId)))
      }
    }
  }

  func caller(sessionToken: String) throws -> Principals? {
    try caller(sessionToken: sessionToken, known: nil)
  }

  func caller(sessionToken: String, known: StateMark?) throws -> Principals? {
    try guarded {
      let hash = SHA256.hash(sessionToken)
      let key = SHA256.hex(hash)
      let mark = SessionMark(
        identity: try known?.identity ?? (stateMark() ?? writeClocks()).identity,
        own: identityWrites)
      if sessionCache?.mark != mark { sessionCache = (mark, [:]) }
      if let cached = sessionCache?.sessions[key], cached.expiresAt > BackendDate.now() {
        return cached.principals
      }
      // The session and its user's roles in one statement: a row per role, one without.
      var found: (userId: String, expiresAt: Int64)?
      var roles: [String] = []
      try connection.prepare(
        """
        SELECT s.userId, s.expiresAt, r.role FROM sessions s
        LEFT JOIN role_members r ON r.userId = s.userId
        WHERE s.tokenHash = ? AND s.expiresAt > \(SQLiteRules.now) ORDER BY r.role
        """
      ).forEachRow([.blob(hash)]) { row in
        if found == nil { found = (try row.text(0) ?? "", row.int(1)) }
        if let role = try row.text(2) { roles.append(role) }
      }
      guard let (userId, expiresAt) = found else { return nil }
      let principals = Principals(userId: userId, roles: roles)
      if sessionCache!.sessions.count >= SQLiteEngine.maximumCachedSessions {
        sessionCache!.sessions.removeAll()
      }
      sessionCache!.sessions[key] = CachedSession(principals: principals, expiresAt: expiresAt)
      return principals
    }
  }

  private func roles(of userId: String) throws -> [String] {
    try connection.prepare("SELECT role FROM role_members WHERE userId = ? ORDER BY role")
      .rows([.text(userId)]) { try $0.text(0) ?? "" }
  }

  func endSessions(userId: String) throws {
    noteIdentityWrite()
    try guarded {
      try connection.run("DELETE FROM sessions WHERE userId = ?", [.text(userId)])
    }
  }

  func addMember(_ userId: String, toRole role: String) throws {
    noteIdentityWrite()
    try guarded {
      try connection.run(
        "INSERT OR IGNORE INTO role_members(role, userId) VALUES (?, ?)",
        [.text(role), .text(userId)])
    }
  }

  // MARK: Rows

  /// An object's columns as the SQL core decodes them (`StoredObject`): `data`, then a parent's
  /// counters apart (`counts`), which the core merges over it as it reads the row (in Swift: a
  /// `json_patch` in SQL parsed and wrote each thread of a listing again, 7 µs a row).
  static let objectColumns = aliasedObjectColumns(storedObjectColumns("o."))

  /// How many columns `objectColumns` selects: a listing's order keys come after them.
  static let objectColumnCount = StoredObject.names.count + 1

  /// The stored columns (of `table`, a prefix) `objectColumns` aliases, in its order.
  static func storedObjectColumns(_ table: String) -> [String] {
    ["class", "objectId", "createDate", "updateDate", "readers", "writers", "data", "counts"].map {
      table + $0
    }
  }

  func object(from row: Row) -> DataObject { object(StoredObject(row: row)) }

  var ownChanges: Int64 { connection.totalChanges }

  /// `(instr(column, ' p1 ') > 0 OR …)` for the caller's principals; `1` for the master key.
  static func aclTest(_ column: String, _ caller: Principals) -> SQL {
    guard !caller.isMaster else { return "1" }
    let tests = caller.names.sorted().map { name -> SQL in
      "instr(\(sql: SQL(verbatim: column)), \(" \(name) ")) > 0"
    }
    return "(\(sql: SQL.joined(tests, separator: " OR ")))"
  }

  /// The SQL expression for a field; built-in fields are columns, the rest live in `data`.
  /// Index definitions use the same text so SQLite matches them to queries.
  /// What a listing orders by: a field's value, or for a flag (`EngineRules.presenceOrdered`)
  /// whether the object has it, which sorts the same on every engine (PostgreSQL would put
  /// objects without a value first in a descending order, SQLite last).
  static func orderExpression(
    for field: String, presence: Set<String>, table: String? = "o", counters: Set<String> = []
  ) -> String {
    guard presence.contains(field) else {
      return expression(for: field, table: table, counters: counters)
    }
    let prefix = table.map { $0 + "." } ?? ""
    return "(json_type(\(prefix)data, \(SQLiteRules.path(field))) IS NOT NULL)"
  }

  /// `counters`: the fields of the class that are a parent's counters, kept in their own
  /// column (`SQLiteRules.counterColumn`).
  static func expression(for field: String, table: String? = "o", counters: Set<String> = [])
    -> String
  {
    let prefix = table.map { $0 + "." } ?? ""
    switch field {
    case "objectId", "createDate", "updateDate": return prefix + field
    default:
      return "json_extract(\(prefix)\(column(of: field, counters)), \(SQLiteRules.path(field)))"
    }
  }

  /// The column that holds `field` (a path's first name): `counts` for a counter, else `data`.
  static func column(of field: String, _ counters: Set<String>) -> String {
    guard !counters.isEmpty else { return "data" }
    let name = field.split(separator: ".", maxSplits: 1).first.map(String.init) ?? field
    return counters.contains(name) ? SQLiteRules.counterColumn : "data"
  }
}
