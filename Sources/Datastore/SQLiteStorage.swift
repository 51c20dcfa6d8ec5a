#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The local engine: every class in one `objects` table, fields as JSON, ACLs as space-delimited
/// principal lists so that a listing can filter by readability while walking an index.
final class SQLiteStorage: Storage {
  let connection: Connection
  var location: String { connection.path }

  static let migrations = Migrations(steps: [
    """
    CREATE TABLE objects(
      id INTEGER PRIMARY KEY,
      class TEXT NOT NULL,
      objectId TEXT NOT NULL UNIQUE,
      createDate INTEGER NOT NULL,
      updateDate INTEGER NOT NULL,
      readers TEXT NOT NULL,
      writers TEXT NOT NULL,
      data TEXT NOT NULL
    );
    CREATE INDEX objects_class_createDate ON objects(class, createDate);
    CREATE TABLE files(
      name TEXT PRIMARY KEY,
      mimeType TEXT NOT NULL,
      fileSize INTEGER NOT NULL,
      createDate INTEGER NOT NULL,
      updateDate INTEGER NOT NULL,
      readers TEXT NOT NULL,
      writers TEXT NOT NULL,
      data BLOB NOT NULL
    );
    CREATE TABLE sessions(
      token TEXT PRIMARY KEY,
      userId TEXT NOT NULL,
      expiresAt INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX sessions_userId ON sessions(userId);
    CREATE TABLE role_members(
      role TEXT NOT NULL,
      userId TEXT NOT NULL,
      PRIMARY KEY(role, userId)
    ) WITHOUT ROWID;
    CREATE INDEX role_members_userId ON role_members(userId);
    CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    """
  ])

  /// Opens or creates the database at `path`. Every way the file can be unusable becomes one
  /// `E500001` whose detail says what is wrong with which path.
  init(path: String) throws {
    if let refusal = SQLiteStorage.refusal(forDatabaseAt: path) { throw refusal }
    do {
      connection = try Connection(path: path)
      if connection.isReadOnly {
        throw DatastoreError(.systemError, detail: "database \(path) is read-only")
      }
      try connection.execute("PRAGMA foreign_keys = ON")
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
          .systemError, detail: "\(path) is an SQLite database of another program")
      }
      let mode = try connection.prepare("PRAGMA journal_mode = WAL").firstRow { try $0.text(0) }
      if mode != "wal" {
        throw DatastoreError(.systemError, detail: "database \(path) cannot use WAL mode")
      }
      try connection.execute("PRAGMA synchronous = NORMAL")
      _ = try SQLiteStorage.migrations.apply(to: connection)
    } catch let error as SQLiteError {
      throw SQLiteStorage.describe(error, path: path)
    }
  }

  /// Says what an SQLite failure means for the person who named the file.
  static func describe(_ error: SQLiteError, path: String) -> DatastoreError {
    let detail: String
    switch error.primaryCode {
    case 26: detail = "\(path) is not a forum database (not an SQLite file)"  // SQLITE_NOTADB
    case 8: detail = "database \(path) is read-only"  // SQLITE_READONLY
    case 14: detail = "cannot open database \(path)"  // SQLITE_CANTOPEN
    case 11: detail = "database \(path) is damaged"  // SQLITE_CORRUPT
    case 13: detail = "the disk holding \(path) is full"  // SQLITE_FULL
    default: detail = "database \(path): \(error.message)"
    }
    return DatastoreError(.systemError, detail: detail)
  }

  func transaction<T>(_ body: () throws -> T) throws -> T {
    try connection.transaction(body)
  }

  // MARK: Objects

  private static let objectColumns =
    "o.class, o.objectId, o.createDate, o.updateDate, o.readers, o.writers, o.data"

  private func object(from row: Row) throws -> DataObject {
    let fields = try JSONValue.parse(try row.text(6) ?? "{}").objectValue ?? [:]
    return DataObject(
      className: try row.text(0) ?? "", objectId: try row.text(1) ?? "",
      createDate: row.int(2), updateDate: row.int(3),
      acl: try acl(readers: row.text(4) ?? "", writers: row.text(5) ?? ""), fields: fields)
  }

  /// Parsed ACL columns by their text. A board has few distinct ACLs (one per author), so a
  /// listing parses each once instead of once a row.
  private var aclCache: [String: ACL] = [:]

  private func acl(readers: String, writers: String) -> ACL {
    let key = readers + "|" + writers
    if let acl = aclCache[key] { return acl }
    if aclCache.count >= 4096 { aclCache.removeAll(keepingCapacity: true) }
    let acl = ACL(readers: ACL.parseColumn(readers), writers: ACL.parseColumn(writers))
    aclCache[key] = acl
    return acl
  }

  func insert(_ object: DataObject) throws {
    try connection.run(
      """
      INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      """,
      [
        .text(object.className), .text(object.objectId), .integer(object.createDate),
        .integer(object.updateDate), .text(ACL.column(object.acl.readers)),
        .text(ACL.column(object.acl.writers)), .text(JSONValue.object(object.fields).jsonText()),
      ])
  }

  func fetch(className: String, objectId: String) throws -> DataObject? {
    try connection.prepare(
      "SELECT \(SQLiteStorage.objectColumns) FROM objects o WHERE o.objectId = ? AND o.class = ?"
    ).firstRow([.text(objectId), .text(className)], object)
  }

  func fetch(objectIds: [String], readableBy principals: Principals) throws -> [DataObject] {
    guard !objectIds.isEmpty else { return [] }
    var values = objectIds.map { SQLValue.text($0) }
    let marks = Array(repeating: "?", count: objectIds.count).joined(separator: ",")
    let filter = SQLiteStorage.readFilter(principals, values: &values)
    return try connection.prepare(
      "SELECT \(SQLiteStorage.objectColumns) FROM objects o WHERE o.objectId IN (\(marks))\(filter)"
    ).rows(values, object)
  }

  func replace(_ object: DataObject) throws {
    try connection.run(
      "UPDATE objects SET updateDate = ?, readers = ?, writers = ?, data = ? WHERE objectId = ?",
      [
        .integer(object.updateDate), .text(ACL.column(object.acl.readers)),
        .text(ACL.column(object.acl.writers)), .text(JSONValue.object(object.fields).jsonText()),
        .text(object.objectId),
      ])
  }

  func delete(className: String, objectId: String) throws {
    try connection.run(
      "DELETE FROM objects WHERE objectId = ? AND class = ?", [.text(objectId), .text(className)])
  }

  func deleteAll(_ query: Query) throws -> Int {
    var values: [SQLValue] = []
    let whereClause = SQLiteStorage.whereClause(query, .master, values: &values)
    try connection.run("DELETE FROM objects AS o \(whereClause)", values)
    return connection.changes
  }

  func find(_ query: Query, readableBy principals: Principals) throws -> [DataObject] {
    let (sql, values) = SQLiteStorage.findStatement(query, readableBy: principals)
    return try connection.prepare(sql).rows(values, object)
  }

  /// The SELECT that `find` runs and its parameters (tests explain its query plan).
  static func findStatement(_ query: Query, readableBy principals: Principals) -> (
    sql: String, values: [SQLValue]
  ) {
    var values: [SQLValue] = []
    let whereClause = SQLiteStorage.whereClause(query, principals, values: &values)
    let order = SQLiteStorage.orderClause(query.order)
    values += [.integer(Int64(query.limit)), .integer(Int64(query.skip))]
    let sql =
      "SELECT \(SQLiteStorage.objectColumns) FROM objects o \(whereClause) \(order) LIMIT ? OFFSET ?"
    return (sql, values)
  }

  func count(_ query: Query, readableBy principals: Principals) throws -> Int {
    var values: [SQLValue] = []
    let whereClause = SQLiteStorage.whereClause(query, principals, values: &values)
    let sql = "SELECT count(*) FROM objects o \(whereClause)"
    return Int(try connection.prepare(sql).firstRow(values) { $0.int(0) } ?? 0)
  }

  /// The SQL expression for a field; built-in fields are columns, the rest live in `data`.
  /// Index definitions use the same text so SQLite matches them to queries.
  static func expression(for field: String, table: String? = "o") -> String {
    let prefix = table.map { $0 + "." } ?? ""
    switch field {
    case "objectId", "createDate", "updateDate": return prefix + field
    default: return "json_extract(\(prefix)data, '$.\(field)')"
    }
  }

  private static func whereClause(
    _ query: Query, _ principals: Principals, values: inout [SQLValue]
  ) -> String {
    var terms = ["o.class = ?"]
    values.append(.text(query.className))
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
    for (bounds, comparison) in [(query.greaterThan, ">"), (query.lessThan, "<")] {
      for field in bounds.keys.sorted() {
        terms.append("\(expression(for: field)) \(comparison) ?")
        values.append(.integer(bounds[field]!))
      }
    }
    return "WHERE " + terms.joined(separator: " AND ") + readFilter(principals, values: &values)
  }

  /// ` AND (…)` keeping rows some principal may read; empty for the master key.
  private static func readFilter(_ principals: Principals, values: inout [SQLValue]) -> String {
    guard !principals.isMaster else { return "" }
    let tests = principals.names.sorted().map { name -> String in
      values.append(.text(" \(name) "))
      return "instr(o.readers, ?) > 0"
    }
    return " AND (" + tests.joined(separator: " OR ") + ")"
  }

  private static func orderClause(_ order: [String]) -> String {
    var keys = order.map { key -> String in
      let descending = key.hasPrefix("-")
      let field = descending ? String(key.dropFirst()) : key
      return expression(for: field) + (descending ? " DESC" : "")
    }
    // The row id breaks ties in the direction of the last key, which an index gives for free.
    keys.append(order.last?.hasPrefix("-") == true ? "o.id DESC" : "o.id")
    return "ORDER BY " + keys.joined(separator: ", ")
  }

  func ensureIndexes(_ specs: [IndexSpec]) throws {
    let existing = Set(
      try connection.prepare("SELECT name FROM sqlite_schema WHERE type = 'index'").rows {
        try $0.text(0) ?? ""
      })
    let missing = specs.filter { !existing.contains(SQLiteStorage.indexName($0)) }
    guard !missing.isEmpty else { return }
    try connection.transaction {
      for spec in missing {
        let columns = spec.fields.map { SQLiteStorage.expression(for: $0, table: nil) }
        try connection.execute(
          """
          CREATE INDEX IF NOT EXISTS "\(SQLiteStorage.indexName(spec))"
          ON objects(class, \(columns.joined(separator: ", ")))
          """)
      }
    }
  }

  private static func indexName(_ spec: IndexSpec) -> String {
    "objects_\(spec.className)_"
      + spec.fields.joined(separator: "_").replacing(".", with: "_")
  }

  // MARK: Files

  private func fileInfo(from row: Row) throws -> FileInfo {
    FileInfo(
      fileName: try row.text(0) ?? "", mimeType: try row.text(1) ?? "",
      fileSize: Int(row.int(2)), createDate: row.int(3), updateDate: row.int(4),
      acl: try acl(readers: row.text(5) ?? "", writers: row.text(6) ?? ""))
  }

  func insertFile(_ info: FileInfo, bytes: [UInt8]) throws {
    try connection.run(
      """
      INSERT INTO files(name, mimeType, fileSize, createDate, updateDate, readers, writers, data)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      """,
      [
        .text(info.fileName), .text(info.mimeType), .integer(Int64(info.fileSize)),
        .integer(info.createDate), .integer(info.updateDate), .text(ACL.column(info.acl.readers)),
        .text(ACL.column(info.acl.writers)), .blob(bytes),
      ])
  }

  func fileInfo(name: String) throws -> FileInfo? {
    try connection.prepare(
      """
      SELECT name, mimeType, fileSize, createDate, updateDate, readers, writers
      FROM files WHERE name = ?
      """
    ).firstRow([.text(name)], fileInfo)
  }

  func fileBytes(name: String) throws -> [UInt8]? {
    try connection.prepare("SELECT data FROM files WHERE name = ?").firstRow([.text(name)]) {
      $0.blob(0)
    }
  }

  func deleteFile(name: String) throws {
    try connection.run("DELETE FROM files WHERE name = ?", [.text(name)])
  }

  // MARK: Sessions, roles, counters

  func insertSession(token: String, userId: String, expiresAt: Int64) throws {
    try connection.run(
      "INSERT INTO sessions(token, userId, expiresAt) VALUES (?, ?, ?)",
      [.text(token), .text(userId), .integer(expiresAt)])
  }

  func sessionUser(token: String, now: Int64) throws -> String? {
    try connection.prepare("SELECT userId FROM sessions WHERE token = ? AND expiresAt > ?")
      .firstRow([.text(token), .integer(now)]) { try $0.text(0) }
      ?? nil
  }

  func deleteSessions(userId: String) throws {
    try connection.run("DELETE FROM sessions WHERE userId = ?", [.text(userId)])
  }

  func addRoleMember(role: String, userId: String) throws {
    try connection.run(
      "INSERT OR IGNORE INTO role_members(role, userId) VALUES (?, ?)",
      [.text(role), .text(userId)])
  }

  func roles(of userId: String) throws -> [String] {
    try connection.prepare("SELECT role FROM role_members WHERE userId = ? ORDER BY role")
      .rows([.text(userId)]) { try $0.text(0) ?? "" }
  }

  func nextValue(counter: String) throws -> Int64 {
    try connection.prepare(
      """
      INSERT INTO counters(name, value) VALUES (?, 1)
      ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value
      """
    ).firstRow([.text(counter)]) { $0.int(0) } ?? 0
  }
}
