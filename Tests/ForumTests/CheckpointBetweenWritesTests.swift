import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// Issue 33: no commit of a person's write copies SQLite's log into the database. SQLite's own
/// checkpoint, run by the commit that takes the log past 1,000 pages, writes pages and calls
/// `fdatasync` twice: the slowest commits by far (hundreds of milliseconds on a busy disk).
/// Commits leave it to `Board.tidy`, between writes and when idle.
@Suite("checkpoints between writes (SQLite)")
struct CheckpointBetweenWritesTests {
  /// The database file's size and modification time: a checkpoint writes into it, a commit
  /// only appends to the log.
  static func written(_ path: String) throws -> String {
    var info = stat()
    guard stat(path, &info) == 0 else { throw CocoaError(.fileReadNoSuchFile) }
    return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
  }

  @Test func commitsLeaveTheCheckpointToTidy() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    let path = world.database.ownerLocation
    let thread = try alice.createThread(title: "a thread", description: "", image: nil).number
    while alice.tidy(idle: true) {}
    let before = try Self.written(path)
    // Some ten pages a comment: well past the 1,000 pages at which a commit checkpointed.
    for number in 1...300 {
      _ = try alice.addComment(to: thread, text: "comment \(number)")
    }
    #expect(try Self.written(path) == before, "a commit checkpointed")
    let log = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
    #expect(log > 1_000 * 4_096, "the log holds \(log) bytes")
    while alice.tidy(idle: true) {}
    #expect(try Self.written(path) != before, "tidy left the log whole")
    #expect(try alice.thread(thread).commentCount == 300)
  }

  /// A writer that never tidies: past the backstop its commit checkpoints by itself, so the
  /// log does not grow without end.
  @Test func aWriterThatNeverTidiesIsHeldByTheBackstop() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("checkpoint-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("log.db").path
    let connection = try Connection(path: path)
    try connection.execute("PRAGMA journal_mode = WAL; CREATE TABLE t(x)")
    try connection.checkpoint()
    connection.checkpointsBetweenWrites(backstop: 50)
    let before = try Self.written(path)
    for number in 0..<40 {
      try connection.run("INSERT INTO t VALUES (?)", [.integer(Int64(number))])
    }
    #expect(try Self.written(path) == before, "a commit under the backstop checkpointed")
    #expect(connection.logPages >= 40)
    for number in 0..<20 {
      try connection.run("INSERT INTO t VALUES (?)", [.integer(Int64(number))])
    }
    #expect(try Self.written(path) != before, "no commit past the backstop checkpointed")
  }
}
