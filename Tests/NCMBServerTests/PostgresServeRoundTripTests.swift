import EngineTestSupport
import Forum
import Foundation
import PostgresTestCluster
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

  /// A server's connection acts for whom the database says. A write that asked for another
  /// caller and failed is undone with its `act_as`: the first caller's next request is that
  /// caller, never the one the failed write asked for (a session answer kept per connection,
  /// tried on a branch, gave the other's identity: "user must be you" on one's own rows).
  @Test func aFailedWriteForAnotherCallerNeverLendsItsIdentity() throws {
    let board = try ServedBoard(PostgresFixture())
    let (alice, aliceToken) = try board.signUp()
    let (bob, bobToken) = try board.signUp()
    struct Undone: Error {}
    try board.service.pool.with { pooled throws -> Void in
      let engine = pooled.store.engine as! PostgresEngine
      #expect(try engine.caller(sessionToken: aliceToken)?.userId == alice)
      #expect(throws: Undone.self) {
        try engine.write { () throws -> Void in
          #expect(try engine.caller(sessionToken: bobToken)?.userId == bob)
          throw Undone()
        }
      }
      #expect(try engine.caller(sessionToken: aliceToken)?.userId == alice)
      #expect(try engine.caller(sessionToken: bobToken)?.userId == bob)
    }
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

  /// Issue 29: a read of `forum serve` asks who it acts for twice (the read policy of
  /// `forum.objects` and `forum.private_rows`), and every function that asks calls costs on
  /// every read (0.75-0.9 ms a read before). One call of `forum.private_rows` for an app user
  /// calls these and no more: itself, `is_trusted`, `principals`, `is_server` and
  /// `session_principals` (before: nine, `is_server` three times, `now_ms` planned again each
  /// call). Counted by PostgreSQL (`track_functions`, this transaction's own counts).
  @Test func theServersIdentityIsAskedInFewFunctionCalls() throws {
    let board = try ServedBoard(PostgresFixture())
    let (_, token) = try board.signUp()
    let uri = try board.database.serverLocation()
    // postgresql:///DATABASE?user=ROLE&…
    let role = try #require(
      URLComponents(string: uri)?.queryItems?.first { $0.name == "user" }?.value)
    _ = try PostgresTestCluster.shared().admin("ALTER ROLE \(role) SET track_functions = 'all'")
    let connection = try PostgresConnection(uri: uri)
    let acting = try connection.query(
      "SELECT forum.act_as($1::bytea)", [.bytes(SHA256.hash(token))]
    ).text(0, 0)
    #expect(acting != nil)
    // Counts not yet reported (earlier statements' too) are read before and after, within one
    // transaction: a session reports them only between transactions.
    func counts() throws -> [String: Int64] {
      let result = try connection.query(
        "SELECT funcname::text, calls FROM pg_stat_xact_user_functions WHERE schemaname = 'forum'")
      let pairs = result.rows { (result.text($0, 0) ?? "", result.int($0, 1)) }
      return Dictionary(uniqueKeysWithValues: pairs)
    }
    try connection.execute("BEGIN")
    let before = try counts()
    _ = try connection.query(
      "SELECT count(*) FROM forum.private_rows('Comment', 'AAAAAAAAAAAAAAAA', NULL)")
    let calls = try counts().compactMap { name, count in
      count > before[name, default: 0] ? "\(name) \(count - before[name, default: 0])" : nil
    }.sorted().joined(separator: ", ")
    try connection.execute("ROLLBACK")
    #expect(
      calls == "is_server 1, is_trusted 1, principals 1, private_rows 1, session_principals 1")
  }
}
