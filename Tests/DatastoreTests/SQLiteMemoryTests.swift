import Foundation
import Testing

@testable import Datastore

/// SQLite's allocator (`CSQLiteMemory`: an in-memory journal's blocks kept per thread), the one
/// search insert trigger, and the ring of statements a connection was asked for last (from a
/// helper's review of `af969fe`).
@Suite("SQLite's allocator, the search insert trigger, the statement ring")
struct SQLiteMemoryTests {

  /// Many threads, each opening and closing its own connections and writing with triggers
  /// inside transactions and savepoints (statement journals and sub-journals in memory, freed
  /// on other threads than they were made on); every thread ends (its kept blocks freed).
  @Test func threadsOpeningWritingAndClosingConnectionsKeepTheFileWhole() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.file("board.sqlite")
    do {
      let setup = try Connection(path: path)
      try setup.execute(
        """
        PRAGMA journal_mode = WAL;
        CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB, n INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE log(k INTEGER, what TEXT);
        CREATE TRIGGER t_insert AFTER INSERT ON t BEGIN
          INSERT INTO log VALUES (NEW.k, 'insert');
          UPDATE t SET n = n + 1 WHERE k = NEW.k - 1;
        END;
        CREATE TRIGGER t_update AFTER UPDATE OF n ON t BEGIN
          INSERT INTO log VALUES (NEW.k, 'update');
        END;
        """)
    }
    let failures = LockedValue<[String]>([])
    var threads: [Thread] = []
    let group = DispatchGroup()
    for worker in 0..<12 {
      group.enter()
      let thread = Thread {
        defer { group.leave() }
        do {
          for round in 0..<8 {
            let connection = try Connection(path: path)
            try connection.transaction {
              for item in 0..<20 {
                let key = Int64(worker * 10_000 + round * 100 + item)
                try connection.transaction {
                  try connection.run(
                    "INSERT INTO t(k, v) VALUES (?, randomblob(3000))", [.integer(key)])
                  try connection.run(
                    "UPDATE t SET v = randomblob(1500) WHERE k BETWEEN ? AND ?",
                    [.integer(key - 5), .integer(key)])
                }
              }
            }
          }
        } catch {
          failures.withLock { $0.append("\(worker): \(error)") }
        }
      }
      thread.stackSize = 4 << 20
      threads.append(thread)
      thread.start()
    }
    group.wait()
    #expect(failures.withLock { $0 } == [])
    let check = try Connection(path: path)
    #expect(try check.prepare("PRAGMA integrity_check").firstRow { try $0.text(0) } == "ok")
    #expect(try check.prepare("SELECT count(*) FROM t").firstRow { $0.int(0) } == 12 * 8 * 20)
  }

  /// Two texts of one length and one long prefix, asked for in turn past the ring's size: each
  /// gets its own statement.
  @Test func theRingTellsApartTextsOfOneLengthAndPrefix() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let connection = try Connection(path: directory.file("board.sqlite"))
    let prefix = String(repeating: " ", count: 200)
    for round in 0..<40 {
      for digit in 0..<10 {
        let sql = "SELECT \(digit)\(prefix)"
        #expect(try connection.prepare(sql).firstRow { $0.int(0) } == Int64(digit), "\(round)")
      }
    }
  }
}

extension SQLiteMemoryTests {
  static func insertTriggers(_ connection: Connection) throws -> [String] {
    try connection.prepare(
      "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'search\\_insert%' ESCAPE '\\'"
    ).rows { try $0.text(0) ?? "" }
  }

  static func queuedClasses(_ connection: Connection) throws -> [String] {
    try connection.prepare(
      "SELECT o.class FROM search_pending p JOIN objects o ON o.id = p.id ORDER BY o.id"
    ).rows { try $0.text(0) ?? "" }
  }

  /// The declaration changes (a class added, one removed): the one insert trigger queues
  /// exactly the declared classes each time, and a removed class's rows are queued no more.
  @Test func theInsertTriggerFollowsTheDeclaredClasses() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.file("board.sqlite")
    let declarations: [[IndexSpec]] = [
      [IndexSpec(textOf: "Alpha", fields: ["text"])],
      [IndexSpec(textOf: "Alpha", fields: ["text"]), IndexSpec(textOf: "Beta", fields: ["text"])],
      [IndexSpec(textOf: "Beta", fields: ["text"]), IndexSpec(textOf: "Gamma", fields: ["title"])],
      [IndexSpec(textOf: "Gamma", fields: ["title"])],
    ]
    var serial = 0
    for specs in declarations {
      let engine = try SQLiteEngine(path: path)
      try engine.prepare(rules: EngineRules(), indexes: specs)
      let declared = Set(specs.map(\.className))
      let connection = try Connection(path: path)
      let triggers = try Self.insertTriggers(connection)
      #expect(triggers.count == 1, "\(triggers)")
      try connection.execute("DELETE FROM search_pending")
      for className in ["Alpha", "Beta", "Gamma", "Delta"] {
        serial += 1
        try connection.run(
          """
          INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data)
          VALUES (?, ?, 0, 0, ' * ', ' * ', '{"text":"hello","title":"hello"}')
          """, [.text(className), .text("object\(serial)")])
      }
      #expect(Set(try Self.queuedClasses(connection)) == declared, "\(specs.map(\.className))")
      try connection.execute("DELETE FROM search_pending")
    }
  }
}

/// A value behind a lock, for the threads of a test.
final class LockedValue<Value>: @unchecked Sendable {
  private var value: Value
  private let lock = NSLock()
  init(_ value: Value) { self.value = value }
  func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
