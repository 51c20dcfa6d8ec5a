import Foundation
import Testing

@testable import Datastore

/// A server's writer that starts a long log again itself (`Connection.restartLongLog`) while a
/// reader never leaves the log (a member's `sqlite3` with a transaction open) and another
/// connection checkpoints beside it, as the server's checkpointer does.
@Suite("The writer's restart and a reader that stays")
struct LogRestartReaderTests {
  /// Some three restart lengths of log are written, a batch of 40 KB at a time, each followed by
  /// the writer's upkeep. A restart that waits for the reader holds the writer for its whole
  /// wait (50 ms): it may do so about once a length, never at every batch, nor wait longer
  /// (the copy stops at the reader's view: `LogRestarts`).
  @Test func aReaderThatStaysPausesTheWriterOnceALength() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("board.sqlite")
      let writer = try LogRestartTests.servedWriter(at: path).connection
      let reader = try Connection(path: path)
      try reader.execute("BEGIN; SELECT count(*) FROM rows")
      let stop = LogRestartTests.Progress()
      LogRestartTests.checkpointContinually(at: path, napping: 1_000, until: stop)
      var slow = 0
      let batches = Int(LogRestarts.restartPages) / 4
      for _ in 0..<batches {
        try writer.execute(
          "BEGIN IMMEDIATE; INSERT INTO rows(data) VALUES (zeroblob(40000)); COMMIT")
        let start = Date()
        writer.restartLongLog()
        if Date().timeIntervalSince(start) > 0.03 { slow += 1 }
      }
      stop.note(nil)
      let failures = stop.waitForAll(2)
      #expect(failures.isEmpty, "\(failures)")
      try reader.execute("COMMIT")
      let lengths = batches * 10 / Int(LogRestarts.restartPages)
      #expect(slow >= 1, "no restart waited for the reader (\(writer.restartAttempts) tried)")
      #expect(slow <= lengths + 1, "\(slow) slow restarts in \(lengths) lengths of log")
    }
  }
}
