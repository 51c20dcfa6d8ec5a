/// SQLite's schema as the SQL core migrates it: `PRAGMA user_version` records how many steps
/// have run.
extension Connection: MigratedDatabase {
  func schemaVersion() throws -> Int {
    Int(try prepare("PRAGMA user_version").firstRow { $0.int(0) } ?? 0)
  }

  func runStep(_ sql: String) throws { try execute(sql) }

  func recordSchemaVersion(_ count: Int) throws { try execute("PRAGMA user_version = \(count)") }
}

extension SchemaMigrator where Database == Connection {
  /// Brings the database up to date inside one immediate transaction, so two processes opening a
  /// fresh file at once cannot both run a step. Returns the version the file had before.
  func apply(to connection: Connection) throws -> Int {
    // The common case, an up-to-date file, needs no write lock.
    let before = try connection.schemaVersion()
    if before == steps.count { return before }
    return try connection.transaction { try migrate(connection) }
  }

  func version(of connection: Connection) throws -> Int { try connection.schemaVersion() }
}
