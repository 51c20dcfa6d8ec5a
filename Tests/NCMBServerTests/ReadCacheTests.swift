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

/// A write empties the kept answers it can change and only those (`KeptAnswers`): by object,
/// by the thread a comment belongs to, by class; the thread's counters a comment moves; a
/// thread turned private; a hand edit that no clock records.
@Suite("NCMB read cache, precisely emptied")
struct ReadCachePrecisionTests {
  private func get(_ board: ServedBoard, _ path: String, query: String = "", session: String?)
    throws -> JSONValue
  {
    let (status, body) = try board.send(
      board.request("GET", path, query: query, session: session))
    #expect(status == 200, "\(body)")
    return body
  }

  private func post(_ board: ServedBoard, _ path: String, _ body: String, session: String)
    throws -> String
  {
    let (status, answer) = try board.send(
      board.request("POST", path, session: session, body: body))
    #expect(status == 201, "\(answer)")
    return try #require(answer.objectValue?["objectId"]?.stringValue)
  }

  private func commentsQuery(_ thread: String) -> String {
    let pointer = #"{"thread":{"__type":"Pointer","className":"Thread","objectId":"\#(thread)"}}"#
    return "where=" + pointer.addingPercentEncodingForQuery() + "&order=createDate&limit=20"
  }

  private func kept(_ board: ServedBoard, _ fragment: String) -> Bool {
    board.service.pool.kept.keptKeys.contains { $0.contains(fragment) }
  }

  /// A comment on thread A: A's comments, A itself (its count and last activity) and the
  /// thread list (which shows A's counters) are read again; thread B's answers stay kept.
  @Test func aCommentEmptiesItsThreadsAnswersAndNoOthers() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let a = try post(board, "classes/Thread", #"{"title":"A","description":""}"#, session: token)
    let b = try post(board, "classes/Thread", #"{"title":"B","description":""}"#, session: token)
    let page = "limit=20&order=-createDate"
    for _ in 0..<2 {
      for thread in [a, b] {
        _ = try get(board, "classes/Thread/\(thread)", session: token)
        _ = try get(board, "classes/Comment", query: commentsQuery(thread), session: token)
      }
      _ = try get(board, "classes/Thread", query: page, session: token)
    }
    #expect(kept(board, "classes/Thread/\(b)"))
    #expect(kept(board, "classes/Thread/\(a)"))

    _ = try post(
      board, "classes/Comment",
      #"{"text":"on A","thread":{"__type":"Pointer","className":"Thread","objectId":"\#(a)"}}"#,
      session: token)

    // B's answers were kept through the write (the next request reads what it wrote).
    _ = try get(board, "classes/Thread/\(b)", session: token)
    #expect(kept(board, "classes/Thread/\(b)"))
    #expect(kept(board, commentsQuery(b)))
    #expect(!kept(board, "classes/Thread/\(a)"))
    #expect(!kept(board, commentsQuery(a)))
    // And A's are read again: the comment, its thread's counters, the list's counters.
    let comments = try get(board, "classes/Comment", query: commentsQuery(a), session: token)
    #expect(comments.objectValue?["results"]?.arrayValue?.count == 1)
    let threadA = try get(board, "classes/Thread/\(a)", session: token)
    #expect(threadA.objectValue?["commentCount"] == .int(1), "\(threadA)")
    let list = try get(board, "classes/Thread", query: page, session: token)
    let listed = list.objectValue?["results"]?.arrayValue?.first {
      $0.objectValue?["objectId"] == .string(a)
    }
    #expect(listed?.objectValue?["commentCount"] == .int(1), "\(list)")
    let threadB = try get(board, "classes/Thread/\(b)", session: token)
    #expect(threadB.objectValue?["commentCount"] == .int(0), "\(threadB)")
  }

  /// A thread its author turns private: nobody else is given it, its comments, one of its
  /// comments or the list that held it from what was kept.
  @Test func aThreadTurnedPrivateIsNotGivenFromTheCache() throws {
    let board = try ServedBoard()
    let (alice, aliceToken) = try board.signUp()
    let (_, bobToken) = try board.signUp()
    let thread = try post(
      board, "classes/Thread", #"{"title":"soon private","description":""}"#, session: aliceToken)
    let comment = try post(
      board, "classes/Comment",
      #"{"text":"c","thread":{"__type":"Pointer","className":"Thread","objectId":"\#(thread)"}}"#,
      session: aliceToken)
    let page = "limit=20&order=-createDate"
    for session in [bobToken, nil, bobToken] {
      #expect(
        try board.send(board.request("GET", "classes/Thread/\(thread)", session: session)).0 == 200)
      #expect(
        try board.send(board.request("GET", "classes/Comment/\(comment)", session: session)).0
          == 200)
      _ = try get(board, "classes/Comment", query: commentsQuery(thread), session: session)
      _ = try get(board, "classes/Thread", query: page, session: session)
    }
    let acl = #"{"acl":{"\#(alice)":{"read":true,"write":true}}}"#
    let (status, body) = try board.send(
      board.request("PUT", "classes/Thread/\(thread)", session: aliceToken, body: acl))
    #expect(status == 200, "\(body)")
    for session in [bobToken, nil] {
      #expect(
        try board.send(board.request("GET", "classes/Thread/\(thread)", session: session)).0 == 404)
      #expect(
        try board.send(board.request("GET", "classes/Comment/\(comment)", session: session)).0
          == 404)
      let comments = try get(
        board, "classes/Comment", query: commentsQuery(thread), session: session)
      #expect(comments.objectValue?["results"]?.arrayValue?.isEmpty == true, "\(comments)")
      let list = try get(board, "classes/Thread", query: page, session: session)
      #expect(list.objectValue?["results"]?.arrayValue?.isEmpty == true, "\(list)")
    }
    // Alice still reads it all.
    #expect(
      try board.send(board.request("GET", "classes/Comment/\(comment)", session: aliceToken)).0
        == 200)
  }

  /// The same through another connection (the prompt's): seen once the recheck has passed.
  @Test func aThreadTurnedPrivateByAnotherConnectionIsNotGiven() throws {
    let board = try ServedBoard()
    let (alice, aliceToken) = try board.signUp()
    let (_, bobToken) = try board.signUp()
    let thread = try post(
      board, "classes/Thread", #"{"title":"soon private","description":""}"#, session: aliceToken)
    let comment = try post(
      board, "classes/Comment",
      #"{"text":"c","thread":{"__type":"Pointer","className":"Thread","objectId":"\#(thread)"}}"#,
      session: aliceToken)
    for _ in 0..<2 {
      #expect(
        try board.send(board.request("GET", "classes/Comment/\(comment)", session: bobToken)).0
          == 200)
      _ = try get(board, "classes/Comment", query: commentsQuery(thread), session: bobToken)
    }
    // As `sqlite3` would, its update date moved: the rules' triggers give the comment the
    // thread's readers, and the feed records the thread's change alone.
    try board.database.executeAsOwner(
      sqlite: """
        UPDATE objects SET readers = ' \(alice) ', updateDate = updateDate + 1
        WHERE objectId = '\(thread)'
        """,
      postgres: "")
    board.passRecheckInterval()
    #expect(
      try board.send(board.request("GET", "classes/Comment/\(comment)", session: bobToken)).0 == 404
    )
    let comments = try get(
      board, "classes/Comment", query: commentsQuery(thread), session: bobToken)
    #expect(comments.objectValue?["results"]?.arrayValue?.isEmpty == true, "\(comments)")
  }

  /// An edit by hand that moves no clock (`sqlite3`, the update date left alone) empties
  /// everything once the recheck has passed; one committed beside an object write that the
  /// feed records is seen once `KeptAnswers.preciseMilliseconds` have passed.
  @Test func aHandEditIsSeen() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let a = try post(board, "classes/Thread", #"{"title":"A","description":""}"#, session: token)
    func title() throws -> String? {
      try get(board, "classes/Thread/\(a)", session: token).objectValue?["title"]?.stringValue
    }
    for _ in 0..<2 { #expect(try title() == "A") }
    try board.database.executeAsOwner(
      sqlite:
        "UPDATE objects SET data = json_set(data, '$.title', 'by hand') WHERE objectId = '\(a)'",
      postgres: "")
    board.passRecheckInterval()
    #expect(try title() == "by hand")
    #expect(try title() == "by hand")

    // Beside a write the feed records, in one commit.
    let b = try post(board, "classes/Thread", #"{"title":"B","description":""}"#, session: token)
    _ = b
    #expect(try title() == "by hand")
    try board.database.executeAsOwner(
      sqlite: """
        BEGIN;
        UPDATE objects SET data = json_set(data, '$.title', 'again') WHERE objectId = '\(a)';
        UPDATE objects SET data = json_set(data, '$.title', 'B2'), updateDate = updateDate + 1
          WHERE objectId = '\(b)';
        COMMIT;
        """,
      postgres: "")
    board.passRecheckInterval()
    _ = try title()
    board.clock.now += KeptAnswers.preciseMilliseconds
    #expect(try title() == "again")
  }
}

extension String {
  fileprivate func addingPercentEncodingForQuery() -> String {
    var out = ""
    for byte in utf8 {
      if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
        || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x2E || byte == 0x5F
      {
        out.append(Character(UnicodeScalar(byte)))
      } else {
        out += "%" + String(byte, radix: 16, uppercase: true).leftPadded()
      }
    }
    return out
  }

  fileprivate func leftPadded() -> String { count == 1 ? "0" + self : self }
}
