import Datastore
import Foundation
import Testing

/// A script's checkpoints run on a thread of their own (`ScriptCheckpoints`): what a user
/// sees of it is that nothing changes. The board file alone holds every commit once the script
/// ends, and a board file removed under a running script is not made again, empty, by the
/// thread's connection.
@Suite("A script's checkpoints on their own thread")
struct ScriptCheckpointTests {
  /// Comments enough for the log to pass its length many times over (some 6 pages each).
  @Test func theBoardFileAloneHoldsEveryCommitWhenTheScriptEnds() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let count = 1 + 64 * 24
    let result = try forum.script((1...count).map { "comment 1 line \($0)" })
    #expect(result.status == 0, "\(result.summary)")
    #expect(result.stdoutLines.last == "Posted 1/\(count).")
    // The file copied without its log, as a backup of it would be.
    let copy = forum.root + "/copy.db"
    try FileManager.default.copyItem(atPath: forum.db, toPath: copy)
    let reader = try Connection(path: copy)
    let stored = try reader.prepare("SELECT count(*) FROM objects WHERE class = 'Comment'")
      .firstRow { $0.int(0) }
    #expect(stored == Int64(count))
    #expect(try reader.prepare("PRAGMA integrity_check").firstRow { try $0.text(0) } == "ok")
  }

  /// The file removed once the script has posted to it: the lines after are refused as before
  /// (the script's connection sees the file gone: nothing written), and no new board appears
  /// where it was, made by the checkpoints' connection.
  @Test func aRemovedBoardIsNotMadeAgainByTheCheckpoints() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let fifo = forum.root + "/lines"
    #expect(mkfifo(fifo, 0o600) == 0)
    let log = forum.root + "/log.txt"
    // Opened here first, read and write (no wait for a reader: the child's open would wait for
    // a writer while posix_spawn waits for the child), and not inherited (the child would never
    // see the end of its input).
    let writer = open(fifo, O_RDWR | O_CLOEXEC)
    #expect(writer >= 0)
    let pid = try InterruptedScriptTests.spawn(
      forum.binary, ["--db", forum.db, "--profile", "alice"], environment: forum.environment(),
      stdin: fifo, stdout: log)
    func send(_ text: String) { _ = text.withCString { write(writer, $0, strlen($0)) } }
    func logLines() -> [String] {
      ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(
        String.init)
    }
    func waitFor(lines: Int) {
      let deadline = Date().addingTimeInterval(60)
      while logLines().count < lines, Date() < deadline { usleep(10_000) }
    }
    // The board is open once the first command has answered.
    send("comment 1 first\n")
    waitFor(lines: 1)
    #expect(logLines() == ["Posted 1/1."])
    #expect(unlink(forum.db) == 0)
    send((2...200).map { "comment 1 line \($0)\n" }.joined())
    close(writer)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    #expect(status != 0, "status \(status)")
    #expect(logLines() == ["Posted 1/1."])
    #expect(!FileManager.default.fileExists(atPath: forum.db), "a board was made again")
  }
}
