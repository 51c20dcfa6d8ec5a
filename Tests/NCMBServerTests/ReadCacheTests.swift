import Datastore
import EngineTestSupport
import Forum
import Testing

@testable import NCMBServer

/// The server keeps the answers of reads while the database is unchanged (`ReadCache`): each
/// test reads first, so that an answer is kept, then changes what that answer depends on and
/// reads again. A kept answer is never another caller's, never older than the server's own
/// last write, and never older than another process's write once the server's clock passed
/// `NCMBService.recheckMilliseconds` after it (the tests move the clock by hand).
@Suite("NCMB read cache")
struct ReadCacheTests {
  private func results(_ board: ServedBoard, _ path: String, query: String = "", session: String?)
    throws -> [JSONValue]
  {
    let (status, body) = try board.send(
      board.request("GET", path, query: query, session: session))
    #expect(status == 200, "\(body)")
    return body.objectValue?["results"]?.arrayValue ?? []
  }

  private func titles(_ objects: [JSONValue]) -> [String] {
    objects.compactMap { $0.objectValue?["title"]?.stringValue }
  }

  @Test(arguments: EngineFixtures.all)
  func aWriteIsSeenByTheNextRead(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (_, token) = try board.signUp()
    let page = "limit=20&order=-createDate"
    #expect(try results(board, "classes/Thread", query: page, session: token).isEmpty)
    #expect(try results(board, "classes/Thread", query: page, session: token).isEmpty)

    // Through the server itself (its own connection's write).
    var (status, body) = try board.send(
      board.request("POST", "classes/Thread", session: token, body: #"{"title":"first"}"#))
    #expect(status == 201, "\(body)")
    #expect(try titles(results(board, "classes/Thread", query: page, session: token)) == ["first"])

    // Through another connection, as the prompt posts.
    let store = try Datastore.open(board.database.location(as: "carol"))
    let carol = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    try carol.create(
      "Thread", fields: ["title": .string("second"), "description": .string("")],
      acl: .publicRead(owner: try #require(carol.userId)))
    board.passRecheckInterval()
    #expect(
      try titles(results(board, "classes/Thread", query: page, session: token))
        == ["second", "first"])

    // An update and a delete through the server, each seen at once.
    let id = try #require(
      results(board, "classes/Thread", query: page, session: token).last?.objectValue?[
        "objectId"]?.stringValue)
    (status, body) = try board.send(
      board.request("PUT", "classes/Thread/\(id)", session: token, body: #"{"title":"edited"}"#))
    #expect(status == 200, "\(body)")
    #expect(
      try titles(results(board, "classes/Thread", query: page, session: token))
        == ["second", "edited"])
    (status, body) = try board.send(
      board.request("DELETE", "classes/Thread/\(id)", session: token))
    #expect(status == 200, "\(body)")
    #expect(try titles(results(board, "classes/Thread", query: page, session: token)) == ["second"])
    (status, _) = try board.send(board.request("GET", "classes/Thread/\(id)", session: token))
    #expect(status == 404)
  }

  @Test(arguments: EngineFixtures.all)
  func aCallerIsNeverGivenAnotherCallersAnswer(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (alice, aliceToken) = try board.signUp()
    let (_, bobToken) = try board.signUp()
    let acl = #"{"\#(alice)":{"read":true,"write":true}}"#
    let (status, body) = try board.send(
      board.request(
        "POST", "classes/Todo", session: aliceToken, body: #"{"title":"mine","acl":\#(acl)}"#))
    #expect(status == 201, "\(body)")
    let id = try #require(body.objectValue?["objectId"]?.stringValue)
    // Alice's answers are kept; the same requests from bob and from nobody are not hers.
    for _ in 0..<2 {
      #expect(try titles(results(board, "classes/Todo", session: aliceToken)) == ["mine"])
      #expect(
        try board.send(board.request("GET", "classes/Todo/\(id)", session: aliceToken)).0 == 200)
    }
    #expect(try results(board, "classes/Todo", session: bobToken).isEmpty)
    #expect(try results(board, "classes/Todo", session: nil).isEmpty)
    #expect(try board.send(board.request("GET", "classes/Todo/\(id)", session: bobToken)).0 == 404)
    #expect(try board.send(board.request("GET", "classes/Todo/\(id)")).0 == 404)
    // And bob's empty answer, kept, is not alice's.
    #expect(try titles(results(board, "classes/Todo", session: aliceToken)) == ["mine"])
  }

  @Test(arguments: EngineFixtures.all)
  func aSessionEndsAtOnceThoughItsAnswersWereKept(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (_, token) = try board.signUp()
    for _ in 0..<2 { _ = try results(board, "classes/Thread", session: token) }
    var (status, body) = try board.send(board.request("GET", "logout", session: token))
    #expect(status == 200, "\(body)")
    (status, body) = try board.send(board.request("GET", "classes/Thread", session: token))
    #expect(status == 401, "\(body)")
    #expect(body.objectValue?["code"] == .string("E401001"))
  }

  /// Ended by hand on another connection (the file's owner with sqlite3, the database's owner
  /// with psql): the server's next request of it is refused.
  @Test(arguments: EngineFixtures.all)
  func aSessionEndedByAnotherConnectionIsRefused(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (_, token) = try board.signUp()
    for _ in 0..<2 { _ = try results(board, "classes/Thread", session: token) }
    try board.database.executeAsOwner(
      sqlite: "DELETE FROM sessions", postgres: "DELETE FROM forum.app_sessions")
    board.passRecheckInterval()
    let (status, body) = try board.send(board.request("GET", "classes/Thread", session: token))
    #expect(status == 401, "\(body)")
  }

  /// A session past its expiry is `E401001`, though its answers were kept.
  @Test(arguments: EngineFixtures.all)
  func anExpiredSessionIsRefused(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (_, token) = try board.signUp()
    for _ in 0..<2 { _ = try results(board, "classes/Thread", session: token) }
    try board.database.executeAsOwner(
      sqlite: "UPDATE sessions SET expiresAt = 1",
      postgres: "UPDATE forum.app_sessions SET expires_at = 1")
    board.passRecheckInterval()
    let (status, body) = try board.send(board.request("GET", "classes/Thread", session: token))
    #expect(status == 401, "\(body)")
    #expect(body.objectValue?["code"] == .string("E401001"))
  }

  /// New keys (`forum keys --rotate`, another process) refuse the old ones once the recheck
  /// interval has passed; until then the kept keys are used (on PostgreSQL too, where nothing
  /// else is kept: no statement for them on every request).
  @Test(arguments: EngineFixtures.all)
  func rotatedKeysRefuseTheOldOnes(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (_, token) = try board.signUp()
    for _ in 0..<2 { _ = try results(board, "classes/Thread", session: token) }
    let owner = try Datastore.open(board.database.ownerLocation)
    _ = try owner.applicationKeys(rotate: true)
    let (kept, keptBody) = try board.send(board.request("GET", "classes/Thread", session: token))
    #expect(kept == 200, "\(keptBody)")
    board.passRecheckInterval()
    let (status, body) = try board.send(board.request("GET", "classes/Thread", session: token))
    // The old application key is no longer the board's: NCMB's "no such application".
    #expect(status == 404, "\(body)")
    #expect(body.objectValue?["code"] == .string("E404005"))
  }

  /// A role granted to a user who read before: the next read is made with the role.
  @Test func aRoleGrantedIsInTheNextRead() throws {
    let board = try ServedBoard(SQLiteFixture())
    let (alice, aliceToken) = try board.signUp()
    let (bob, bobToken) = try board.signUp()
    let acl = #"{"role:editors":{"read":true},"\#(bob)":{"read":true,"write":true}}"#
    let (status, body) = try board.send(
      board.request(
        "POST", "classes/Todo", session: bobToken, body: #"{"title":"t","acl":\#(acl)}"#)
    )
    #expect(status == 201, "\(body)")
    for _ in 0..<2 { #expect(try results(board, "classes/Todo", session: aliceToken).isEmpty) }
    try Datastore.open(board.database.ownerLocation).addMember(alice, toRole: "editors")
    board.passRecheckInterval()
    #expect(try titles(results(board, "classes/Todo", session: aliceToken)) == ["t"])
    var (rolesStatus, roles) = try board.send(board.request("GET", "roles", session: aliceToken))
    #expect(rolesStatus == 200)
    #expect(roles.objectValue?["results"]?.arrayValue?.count == 1, "\(roles)")
    (rolesStatus, roles) = try board.send(board.request("GET", "roles", session: bobToken))
    #expect(roles.objectValue?["results"]?.arrayValue?.isEmpty == true, "\(roles)")
  }
}
