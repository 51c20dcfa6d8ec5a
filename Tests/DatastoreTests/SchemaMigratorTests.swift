import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// Both engines' schemas go through one migrator (`SchemaMigrator`): a database a newer forum
/// has migrated past our last step is refused with the engine's reason, and nothing is written.
@Suite("one migrator refuses a newer database")
struct SchemaMigratorTests {
  @Test func aNewerSQLiteFileIsRefusedAndLeftAlone() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      _ = try Datastore.open(path)
      let newer = Int(SQLiteSchema.version) + 1
      do {
        let connection = try Connection(path: path)
        try connection.execute("PRAGMA user_version = \(newer)")
      }
      let before = contents(of: path)
      let error = expectError(.systemError) { try Datastore.open(path) }
      #expect(
        error?.reason == .access(.newerSchema(path: path, version: newer)),
        "\(String(describing: error))")
      #expect(contents(of: path) == before)
    }
  }

  @Test func aNewerPostgreSQLSchemaIsRefusedByOpenAndByInit() throws {
    let board = try installedBoard()
    defer { board.remove() }
    let owner = try PostgresConnection(uri: board.owner.uri)
    let newer = PostgresSchema.steps.count + 1
    try owner.execute("UPDATE forum.meta SET value = '\(newer)' WHERE key = 'schema_version'")
    let before = try postgresFingerprint(board)
    let refusal = Reason.access(.newerPostgresSchema(version: newer))
    let opened = expectError(.systemError) {
      try Datastore.open(board["alice"].uri, rules: boardRulesForTests)
    }
    #expect(opened?.reason == refusal, "\(String(describing: opened))")
    let initialized = expectError(.systemError) {
      try Datastore.initialize(board.owner.uri, rules: boardRulesForTests, indexes: [])
    }
    #expect(initialized?.reason == refusal, "\(String(describing: initialized))")
    #expect(try postgresFingerprint(board) == before)
  }
}

extension SchemaMigratorTests {
  /// The reasons said on this thread while `body` ran (`Interrupt.withLongWait`).
  private final class Said: @unchecked Sendable {
    private let lock = NSLock()
    private var waits: [Interrupt.Wait] = []
    func add(_ wait: Interrupt.Wait) { lock.withLock { waits.append(wait) } }
    var all: [Interrupt.Wait] { lock.withLock { waits } }
  }

  /// Issue 33: an existing board's file past the size of a large board says, before its
  /// upgrade, that it is being upgraded (the prompt prints why nothing happens: schema 25 remade
  /// the million-post board's indexes in 8.5 s); a small or a new file says nothing.
  @Test func aLargeBoardsUpgradeSaysSoFirst() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      let fresh = Said()
      try Interrupt.withLongWait(fresh.add) { _ = try Datastore.open(path) }
      #expect(fresh.all.isEmpty)
      for (largePages, expected) in [(Int64(0), [Interrupt.Wait.upgrade]), (25_600, [])] {
        let connection = try Connection(path: path)
        try connection.execute("PRAGMA user_version = 24")
        let said = Said()
        let before = try Interrupt.withLongWait(said.add) {
          try SQLiteSchema.migrations.apply(to: connection, largePages: largePages)
        }
        #expect(before == 24)
        #expect(said.all == expected, "\(largePages)")
        #expect(try connection.schemaVersion() == Int(SQLiteSchema.version))
      }
    }
  }
}
