import Foundation
import Testing

@testable import Datastore

/// SQLite writes its log (WAL) from the beginning again only when a writer finds it wholly
/// copied into the database and no reader in it. A server always has a reader somewhere in the
/// log, so its passive checkpoints never reached the end and the log grew by every commit (580 MB
/// in 12 s of POSTs on the million-post board): disk without bound, and every frame appended
/// past the file's end. `Connection.checkpoint` now starts a long log again.
@Suite("The log starts again")
struct LogRestartTests {
  /// Two readers hand over so that one is always in a transaction (each begins before the other
  /// ends, as a server's pool does under load), a writer commits 40 KB at a time and a third
  /// connection checkpoints as the server's checkpointer does. The log stays within three times
  /// the restart length; before, it held every commit (about 340 MB here).
  @Test func aLogUnderReadersThatNeverPauseStaysBounded() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("board.sqlite")
      let writer = try Self.writer(at: path)
      let commits = 7_000
      let progress = Progress()
      Thread.detachNewThread {
        do {
          let first = try Connection(path: path)
          let second = try Connection(path: path)
          var reading = [first, second]
          try first.execute("BEGIN; SELECT count(*) FROM rows")
          while progress.writing {
            try reading[1].execute("BEGIN; SELECT count(*) FROM rows")
            try reading[0].execute("COMMIT")
            reading.swapAt(0, 1)
            usleep(500)
          }
          try reading[0].execute("COMMIT")
          progress.note(nil)
        } catch { progress.note("reader: \(error)") }
      }
      Thread.detachNewThread {
        do {
          let checkpointer = try Self.checkpointer(at: path)
          while progress.writing {
            try checkpointer.checkpoint()
            usleep(2_000)
          }
          progress.note(nil)
        } catch { progress.note("checkpointer: \(error)") }
      }
      var longest = 0
      for _ in 0..<commits {
        try writer.run("INSERT INTO rows(data) VALUES (zeroblob(40000))")
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size]) as? Int
        longest = max(longest, size ?? 0)
      }
      progress.note(nil)
      let failures = progress.waitForAll(3)
      #expect(failures.isEmpty, "\(failures)")
      // One restart may find a reader still there (the machine busy): the next is tried when the
      // log has grown by another `restartPages`.
      let bound = 3 * Int(Connection.restartPages) * 4_096
      #expect(longest <= bound, "the log reached \(longest) bytes (bound \(bound))")
      let count = try writer.prepare("SELECT count(*) FROM rows").firstRow { $0.int(0) }
      #expect(count == Int64(commits))
    }
  }

  /// A reader that never leaves (a member's `sqlite3` with a transaction open) fails every
  /// restart, and each failed one held the writers for its whole wait: tried at every checkpoint,
  /// writes would pause 50 ms in every 70. It is tried again only once the log has grown by
  /// another `restartPages`.
  @Test func aReaderThatNeverLeavesIsWaitedForOnceALength() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("board.sqlite")
      let writer = try Self.writer(at: path)
      let reader = try Connection(path: path)
      try reader.execute("BEGIN; SELECT count(*) FROM rows")
      let checkpointer = try Self.checkpointer(at: path)
      // 40 KB a commit, about 12 frames: some three times `restartPages` of log in all.
      for _ in 0..<Int(Connection.restartPages) / 4 {
        try writer.run("INSERT INTO rows(data) VALUES (zeroblob(40000))")
        try checkpointer.checkpoint()
      }
      let frames = try #require(
        try checkpointer.prepare("PRAGMA wal_checkpoint(PASSIVE)").firstRow { $0.int(1) })
      let lengths = Int(frames) / Int(Connection.restartPages)
      #expect(lengths >= 2)
      #expect(checkpointer.restartAttempts >= 1)
      #expect(
        checkpointer.restartAttempts <= lengths + 1,
        "\(checkpointer.restartAttempts) restarts tried in a log of \(frames) frames")
      try reader.execute("COMMIT")
    }
  }

  /// A server's writer (`SQLiteEngine.serve(checkpointsApart:)`: no checkpoint at commit, the
  /// log's length noted) starts a long log again itself between its batches
  /// (`Connection.restartLongLog`): a checkpointer's restart needs the write lock, which a writer
  /// going from batch to batch leaves free for microseconds. Here no other connection
  /// checkpoints at all; 40 KB a commit to some three restart lengths of log, the file stays
  /// within one and a bit. The log's length was not noted on a server's connections (the
  /// setting that stops checkpoints at commit took the hook away), so nothing restarted there.
  @Test func aWriterThatNeverPausesRestartsTheLogItself() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("board.sqlite")
      // A board's connection set up as a server's pool sets it up.
      let engine = try SQLiteEngine(path: path)
      try engine.serve(checkpointsApart: true)
      let writer = engine.connection
      try writer.execute("CREATE TABLE rows(data BLOB)")
      var longest = 0
      for _ in 0..<Int(Connection.restartPages) / 4 {
        try writer.execute(
          "BEGIN IMMEDIATE; INSERT INTO rows(data) VALUES (zeroblob(40000)); COMMIT")
        writer.restartLongLog()
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size]) as? Int
        longest = max(longest, size ?? 0)
      }
      #expect(writer.restartAttempts >= 2)
      let bound = Int(Connection.restartPages) * 4_096 * 5 / 4
      #expect(longest <= bound, "the log reached \(longest) bytes (bound \(bound))")
    }
  }

  /// A new file in WAL mode whose commits never checkpoint, with a table of rows, and its writer.
  static func writer(at path: String) throws -> Connection {
    let writer = try Connection(path: path)
    try writer.execute(
      """
      PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0;
      CREATE TABLE rows(data BLOB)
      """)
    return writer
  }

  /// A connection that checkpoints the file at `path`, as the server's checkpointer does.
  static func checkpointer(at path: String) throws -> Connection {
    let checkpointer = try Connection(path: path)
    // A connection knows the file's log once it has read the file.
    try checkpointer.execute("SELECT count(*) FROM sqlite_schema")
    return checkpointer
  }

  /// The threads' ends and failures.
  final class Progress: @unchecked Sendable {
    private let condition = NSCondition()
    private var finished = 0
    private var failures: [String] = []

    /// True until the writer has finished.
    var writing: Bool { condition.withLock { finished == 0 } }

    /// A thread's end (nil), or its failure.
    func note(_ failure: String?) {
      condition.withLock {
        if let failure { failures.append(failure) } else { finished += 1 }
        condition.signal()
      }
    }

    /// Waits for `count` ends or a failure; the failures.
    func waitForAll(_ count: Int) -> [String] {
      condition.withLock {
        while finished < count && failures.isEmpty { condition.wait() }
        return failures
      }
    }
  }
}
