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
  /// A board's file past `largePages` pages (100 MB) says so first (`Interrupt.Wait.upgrade`):
  /// a step may remake an index of every row (schema 25: 8.5 s on the million-post board).
  func apply(to connection: Connection, largePages: Int64 = 25_600) throws -> Int {
    // The common case, an up-to-date file, needs no write lock.
    let before = try connection.schemaVersion()
    if before == steps.count { return before }
    if before > 0,
      try connection.prepare("PRAGMA page_count").firstRow([], { $0.int(0) }) ?? 0 > largePages
    {
      Interrupt.onLongWait?(.upgrade)
    }
    return try connection.transaction { try migrate(connection) }
  }

  func version(of connection: Connection) throws -> Int { try connection.schemaVersion() }
}
