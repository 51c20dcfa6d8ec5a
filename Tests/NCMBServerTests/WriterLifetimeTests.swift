import Datastore
import EngineTestSupport
import Foundation
import Testing

@testable import NCMBServer

/// A served board's write queue (`WriteQueue`, its writer thread, the connection kept for its
/// batches) ends with its service.
@Suite("The writer ends with its service")
struct WriterLifetimeTests {
  /// A service that wrote, dropped: its connections to the board are let go by the time the
  /// last reference to it is gone (the pool is deallocated then), as when each request wrote its
  /// own batch. The writer thread held the pool (its `run` holds the batches, which hold the
  /// database's state) and let it go only once the thread woke to its queue's end, later, on
  /// that thread: a caller that drops the service and then removes, replaces or drops the
  /// database (a test's PostgreSQL database, `forum serve` returning to exit) raced it.
  @Test func aDroppedServiceLetsGoOfItsConnectionsAtOnce() throws {
    for _ in 0..<5 {
      var board: ServedBoard? = try ServedBoard(SQLiteFixture())
      let (_, token) = try #require(board).signUp()
      let (status, _) = try #require(board).send(
        #require(board).request(
          "POST", "classes/Thread", session: token, body: #"{"title":"kept"}"#))
      #expect(status == 201)
      weak var pool = board?.service.pool
      #expect(pool != nil)
      board = nil
      #expect(pool == nil, "the pool outlived its service")
    }
  }

  /// Twenty services made, written through and dropped: the threads they started end (the
  /// process's thread count comes back within five seconds).
  @Test func droppedServicesLeaveNoThreads() throws {
    let before = WriteQueueAttackTests.threads()
    for _ in 0..<20 {
      let board = try ServedBoard(SQLiteFixture())
      _ = try board.signUp()
    }
    let deadline = Date().addingTimeInterval(5)
    while WriteQueueAttackTests.threads() > before, Date() < deadline { usleep(10_000) }
    let left = WriteQueueAttackTests.threads() - before
    #expect(left <= 0, "\(left) threads left of 20 services")
  }
}

/// The board's file replaced under a running server by another board (`mv`), after the writer
/// thread's kept connection wrote to it.
@Suite("A board replaced under the writer")
struct ReplacedBoardTests {
  /// Writes and reads after the replacement are E500001, nothing lands in the board now at the
  /// path, and nothing more in the old one: the connection kept for the batches is not written
  /// through into the file that was moved away.
  @Test func writesAfterTheBoardIsReplacedAreE500001() throws {
    let board = try ServedBoard(SQLiteFixture())
    let (_, token) = try board.signUp()
    for index in 0..<3 {
      let (status, body) = try board.send(
        board.request(
          "POST", "classes/Thread", session: token, body: #"{"title":"before \#(index)"}"#))
      #expect(status == 201, "\(body)")
    }
    let other = try ServedBoard(SQLiteFixture())
    let path = board.database.ownerLocation
    let replacement = other.database.ownerLocation
    let threads = "SELECT count(*) FROM objects WHERE class = 'Thread'"
    let otherBefore = try Connection(path: replacement).prepare(threads).firstRow { $0.int(0) }
    #expect(rename(replacement, path) == 0)
    for suffix in ["-wal", "-shm"] { unlink(path + suffix) }
    for index in 0..<3 {
      let (status, body) = try board.send(
        board.request(
          "POST", "classes/Thread", session: token, body: #"{"title":"after \#(index)"}"#))
      #expect(status == 500, "\(body)")
      #expect(body.objectValue?["code"] == .string("E500001"), "\(body)")
    }
    let after = try Connection(path: path).prepare(threads).firstRow { $0.int(0) }
    #expect(after == otherBefore, "a write went into the board put in place")
  }
}
