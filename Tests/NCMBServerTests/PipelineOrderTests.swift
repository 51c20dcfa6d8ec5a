import Testing

@testable import Datastore
@testable import NCMBServer

/// The order of the pipeline's stages (limits → signature → session → cache → route →
/// controller), seen from outside: the pool's count of connections lent says whether a request
/// reached the database, the write queue's largest batch whether it queued.
@Suite("NCMB pipeline order")
struct PipelineOrderTests {
  /// An unsigned write is refused before any database connection is borrowed, and a badly
  /// signed one (the keys are the database's) before it joins the write queue: neither writes.
  @Test func unsignedAndBadlySignedWritesNeverReachTheQueue() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let writers = try #require(board.service.writers)
    let body = #"{"title":"forged","description":""}"#
    var unsigned = board.request("POST", "classes/Thread", session: token, body: body)
    unsigned.headers.removeAll { $0.name == "x-ncmb-signature" }
    let lent = board.service.pool.lendings
    #expect(board.service.respond(to: unsigned).status == 401)
    #expect(board.service.pool.lendings == lent, "an unsigned write borrowed a connection")

    let forged = board.request(
      "POST", "classes/Thread", session: token, body: body, clientKey: "not-the-client-key")
    let written = writers.state.written
    #expect(board.service.respond(to: forged).status == 401)
    #expect(board.service.respond(to: unsigned).status == 401)
    #expect(writers.state.written == written, "a write not signed right joined the write queue")
    let (status, found) = try board.send(
      board.request("GET", "classes/Thread", query: "count=1", session: token))
    #expect(status == 200)
    #expect(found.objectValue?["count"]?.intValue == 0)
  }

  /// A write past its address's budget is refused by the limits, the first stage: not by the
  /// signature, which it would fail, and without borrowing a connection to check it.
  @Test func aRequestOverALimitNeverReachesTheSignatureCheck() throws {
    let board = try ServedBoard()
    var limits = ServeLimits.none
    limits.addressWritesPerMinute = 2
    let service = try NCMBService(
      location: try board.database.serverLocation(), policy: ServedBoard.policy, limits: limits)
    var forged = board.request(
      "POST", "classes/Thread", body: #"{"title":"t","description":""}"#,
      clientKey: "not-the-client-key")
    forged.clientAddress = "203.0.113.9"
    // Within the budget the signature is what refuses it.
    #expect(service.respond(to: forged).status == 401)
    #expect(service.respond(to: forged).status == 401)
    let lent = service.pool.lendings
    let refused = service.respond(to: forged)
    #expect(refused.status == 429)
    #expect(String(decoding: refused.body, as: UTF8.self).contains("E429001"))
    #expect(service.pool.lendings == lent, "a request over a limit borrowed a connection")
  }
}
