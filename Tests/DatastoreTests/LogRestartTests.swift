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
  /// ends, as a server's pool does under load), a writer commits 40 KB at a time as a server's
  /// or a script's does (its `tidy` between two transactions) and a third connection checkpoints
  /// as their checkpointer does. Pages of 512 bytes make the 7,000 commits some 35 restart
  /// lengths of log; it stays within six (under six busy loops on the two cores, up to five);
  /// before, it held every commit.
  ///
  /// It stayed within three on an idle machine only: the checkpointer's restart needs the write
  /// lock, which a writer that never pauses leaves free for microseconds, and on a machine busier
  /// than its cores the readers' thread is not run for the restart's 50 ms wait; with a length
  /// between tries, two failures in a row passed three lengths (205–253 MB of 4 KB pages, the
  /// suite's CI once). A script's writer never restarted the log itself (the length it knew was
  /// set back at each checkpoint of the hook's backstop, 10,000 pages, short of a restart's).
  @Test(arguments: [WriterKind.server, .script])
  func aLogUnderReadersThatNeverPauseStaysBounded(_ kind: WriterKind) throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("board.sqlite")
      // The page size is the file's from its first write on (the log's mode).
      try Connection(path: path).execute("PRAGMA page_size = 512; PRAGMA journal_mode = WAL")
      let engine = try SQLiteEngine(path: path)
      switch kind {
      case .server: try engine.serve(checkpointsApart: true)
      case .script: engine.checkpointNote = {}
      }
      let writer = engine.connection
      try writer.execute("CREATE TABLE rows(data BLOB)")
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
      Self.checkpointContinually(at: path, napping: 2_000, until: progress)
      var longest = 0
      for _ in 0..<commits {
        try writer.execute(
          "BEGIN IMMEDIATE; INSERT INTO rows(data) VALUES (zeroblob(40000)); COMMIT")
        _ = try engine.tidy(idle: false)
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size]) as? Int
        longest = max(longest, size ?? 0)
      }
      progress.note(nil)
      let failures = progress.waitForAll(3)
      #expect(failures.isEmpty, "\(failures)")
      // A restart may find readers still there (the machine busy): the writer's next is tried
      // when the log has grown by an eighth of a length, waiting longer (`LogRestarts`).
      let frame = 24 + 512
      let bound = 6 * Int(LogRestarts.restartPages) * frame
      #expect(
        longest <= bound, "the log reached \(longest / frame) frames (bound \(bound / frame))")
      #expect(try writer.prepare("PRAGMA page_size").firstRow { $0.int(0) } == 512)
      let count = try writer.prepare("SELECT count(*) FROM rows").firstRow { $0.int(0) }
      #expect(count == Int64(commits))
    }
  }

  /// Whose writer it is: a server's (`serve(checkpointsApart:)`) or a script's
  /// (`checkpointNote`).
  enum WriterKind: Sendable, CustomStringConvertible {
    case server, script
    var description: String { self == .server ? "a server's writer" : "a script's writer" }
  }

  /// A reader that never leaves (a member's `sqlite3` with a transaction open) fails every
  /// restart, and each failed one held the writers for its whole wait: tried at every checkpoint,
  /// writes would pause 50 ms in every 70. It is tried again only once the log has grown by
  /// another `LogRestarts.restartPages`.
  @Test func aReaderThatNeverLeavesIsWaitedForOnceALength() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("board.sqlite")
      let writer = try Self.writer(at: path)
      let reader = try Connection(path: path)
      try reader.execute("BEGIN; SELECT count(*) FROM rows")
      let checkpointer = try Self.checkpointer(at: path)
      // 40 KB a commit, about 12 frames: some three times `restartPages` of log in all.
      for _ in 0..<Int(LogRestarts.restartPages) / 4 {
        try writer.run("INSERT INTO rows(data) VALUES (zeroblob(40000))")
        try checkpointer.checkpoint()
      }
      let frames = try #require(
        try checkpointer.prepare("PRAGMA wal_checkpoint(PASSIVE)").firstRow { $0.int(1) })
      let lengths = Int(frames) / Int(LogRestarts.restartPages)
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
      let writer = try Self.servedWriter(at: path).connection
      var longest = 0
      for _ in 0..<Int(LogRestarts.restartPages) / 4 {
        try writer.execute(
          "BEGIN IMMEDIATE; INSERT INTO rows(data) VALUES (zeroblob(40000)); COMMIT")
        writer.restartLongLog()
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size]) as? Int
        longest = max(longest, size ?? 0)
      }
      #expect(writer.restartAttempts >= 2)
      let bound = Int(LogRestarts.restartPages) * 4_096 * 5 / 4
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

  /// A board at `path` whose connection is set up as a server's pool sets it up (no checkpoint
  /// at commit, the log's length noted), with a table of rows.
  static func servedWriter(at path: String) throws -> SQLiteEngine {
    let engine = try SQLiteEngine(path: path)
    try engine.serve(checkpointsApart: true)
    try engine.connection.execute("CREATE TABLE rows(data BLOB)")
    return engine
  }

  /// A connection that checkpoints the file at `path`, as the server's checkpointer does.
  static func checkpointer(at path: String) throws -> Connection {
    let checkpointer = try Connection(path: path)
    // A connection knows the file's log once it has read the file.
    try checkpointer.execute("SELECT count(*) FROM sqlite_schema")
    return checkpointer
  }

  /// A thread checkpointing the file at `path` as the server's checkpointer does, a nap of
  /// `microseconds` between two, until the writer has finished; it notes its end in `progress`.
  static func checkpointContinually(
    at path: String, napping microseconds: UInt32, until progress: Progress
  ) {
    Thread.detachNewThread {
      do {
        let checkpointer = try checkpointer(at: path)
        while progress.writing {
          try checkpointer.checkpoint()
          usleep(microseconds)
        }
        progress.note(nil)
      } catch { progress.note("checkpointer: \(error)") }
    }
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
