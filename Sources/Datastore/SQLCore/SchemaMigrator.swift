/// A database whose schema the SQL core migrates: the version it records and how a step runs.
protocol MigratedDatabase {
  /// How many steps the database records as run (0 for a new one).
  func schemaVersion() throws -> Int
  func runStep(_ sql: String) throws
  /// Records that `count` steps have run. (PostgreSQL records its version with the rules, once
  /// `forum init` has installed them: its step records nothing.)
  func recordSchemaVersion(_ count: Int) throws
}

/// One migrator for both SQL engines' schemas: an append-only list of steps, run from the
/// version the database records, and a database a newer forum has migrated past our last step
/// refused rather than run (its tables may mean something we do not know). Never edit a step
/// that has shipped: add a new one. The caller holds the transaction.
struct SchemaMigrator<Database: MigratedDatabase>: Sendable {
  /// One step: SQL, or Swift for what SQL alone cannot do (hashing old secrets).
  enum Step: Sendable {
    case sql(String)
    case swift(@Sendable (Database) throws -> Void)
  }

  let steps: [Step]
  /// The engine's refusal of a database at `version`, past our steps.
  let newer: @Sendable (Database, Int) -> DatastoreError

  /// `newer`'s refusal when `version` is past our last step.
  func refuseNewer(_ version: Int, of database: Database) throws {
    guard version <= steps.count else { throw newer(database, version) }
  }

  /// Runs the steps the database has not run yet and returns the version it had before.
  @discardableResult
  func migrate(_ database: Database) throws -> Int {
    let current = try database.schemaVersion()
    try refuseNewer(current, of: database)
    for index in current..<steps.count {
      switch steps[index] {
      case .sql(let sql): try database.runStep(sql)
      case .swift(let body): try body(database)
      }
      try database.recordSchemaVersion(index + 1)
    }
    return current
  }
}
