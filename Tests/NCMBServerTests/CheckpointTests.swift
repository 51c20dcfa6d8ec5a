import Foundation
import Testing

@testable import Datastore
@testable import NCMBServer

/// The server's commits are copied from SQLite's log into the database by its checkpointer,
/// never by the commit that a request waits for (issue 29, Speed: a checkpoint's two
/// `fdatasync`s held the write queue).
@Suite("Checkpoints apart from commits")
struct CheckpointTests {
  /// The server's connections never checkpoint at commit, and read with `pread` rather than
  /// through a memory map, which SQLite drops whole at the first read after any other
  /// connection's commit (under the demo's mix, 19 % of the requests a second went to mapping
  /// the board again: BENCHMARKS N20). Each keeps a small page cache of its own (512 KB, not
  /// SQLite's 2 MB: 32 of them were a third of the server's memory at 64 clients, N23).
  @Test func pooledConnectionsLeaveCheckpointsToTheCheckpointer() throws {
    let board = try ServedBoard()
    let (autocheckpoint, map, cache) = try board.service.pool.with { pooled in
      let connection = try #require(pooled.store.engine as? SQLiteEngine).connection
      return (
        try connection.prepare("PRAGMA wal_autocheckpoint").firstRow { $0.int(0) },
        try connection.prepare("PRAGMA mmap_size").firstRow { $0.int(0) },
        try connection.prepare("PRAGMA cache_size").firstRow { $0.int(0) }
      )
    }
    #expect(autocheckpoint == 0)
    #expect(map == 0)
    #expect(cache == -512)
  }

  /// A write through the server reaches the database file itself (not only the log) soon after
  /// it is answered, though it is far below the 1,000 pages at which a commit would checkpoint:
  /// a copy of the file alone, without its log, holds the new thread.
  @Test func theCheckpointerCopiesTheServersCommitsIntoTheFile() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let response = board.service.respond(
      to: board.request(
        "POST", "classes/Thread", session: token,
        body: #"{"title":"checkpointed","description":""}"#))
    #expect(response.status == 201)
    let checkpointer = board.service.pool.checkpointer
    let deadline = Date().addingTimeInterval(60)
    var copied = false
    while !copied && Date() < deadline {
      if checkpointer.checkpoints > 0 {
        let copy = NSTemporaryDirectory() + "checkpoint-\(UUID().uuidString).sqlite"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: board.database.ownerLocation, toPath: copy)
        let connection = try Connection(path: copy)
        copied =
          (try connection.prepare(
            "SELECT count(*) FROM objects WHERE class = 'Thread' AND data LIKE '%checkpointed%'"
          ).firstRow { $0.int(0) } ?? 0) == 1
      }
      if !copied { usleep(10_000) }
    }
    #expect(copied, "the thread is in the database file, not only in its log")
  }
}
