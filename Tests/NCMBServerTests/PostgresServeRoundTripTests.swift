import EngineTestSupport
import Forum
import Testing

@testable import Datastore
@testable import NCMBServer

/// What a request served on PostgreSQL costs on the wire, counted by the connection
/// (`PostgresConnection.roundTrips`), so that a statement added to every request is seen here
/// and not only as a slower benchmark.
@Suite("PostgreSQL serve round trips")
struct PostgresServeRoundTripTests {
  private func roundTrips(_ pooled: StorePool.Pooled) -> Int {
    (pooled.store.engine as! PostgresEngine).connection.roundTrips
  }

  /// A read on one of the pool's connections asks for whom it acts and for the rows, nothing
  /// else: the board's keys, read by another connection in the same recheck interval, are not
  /// read again for each connection (before: one statement more on most requests of a busy
  /// server, whose requests spread over its connections).
  @Test func aReadOnAnotherConnectionAsksForTheCallerAndTheRowsAlone() throws {
    let board = try ServedBoard(PostgresFixture())
    let (_, token) = try board.signUp()
    let read = board.request(
      "GET", "classes/Thread", query: "limit=20&order=-createDate", session: token)
    let pool = board.service.pool
    // Two connections, each opened and its statements prepared: the pool lends the last one
    // given back, so the outer one is lent again next, the inner one while the outer is held.
    let warming = try pool.with { _ in try board.send(read).0 }
    #expect(warming == 200)
    #expect(try board.send(read).0 == 200)
    board.passRecheckInterval()
    #expect(try board.send(read).0 == 200)
    try pool.with { _ -> Void in
      let before = try pool.with { roundTrips($0) }
      let (status, body) = try board.send(read)
      #expect(status == 200, "\(body)")
      let after = try pool.with { roundTrips($0) }
      // `forum.act_as`, then the page.
      #expect(after - before == 2)
    }
  }
}
