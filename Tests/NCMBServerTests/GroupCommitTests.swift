import EngineTestSupport
import Forum
import Foundation
import Testing

@_spi(Server) @testable import Datastore
@testable import NCMBServer

/// Writes through the server are committed in batches (`WriteQueue`, `Datastore.group`). Each
/// test holds the database's write lock (SQLite) or the thread's row (PostgreSQL) on a
/// connection of its own so that the requests queue up behind a first one, then lets them go:
/// they are then one batch, deterministically.
@Suite("NCMB group commit")
struct GroupCommitTests {
  /// Answers collected from several threads.
  final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [Int: (Int, JSONValue)] = [:]
    func set(_ index: Int, _ answer: (Int, JSONValue)) { lock.withLock { answers[index] = answer } }
    func get(_ index: Int) -> (Int, JSONValue)? { lock.withLock { answers[index] } }
    var count: Int { lock.withLock { answers.count } }
  }

  /// Sends each request on a thread of its own; `index` names its answer.
  private func start(
    _ board: ServedBoard, _ requests: [(Int, HTTPRequest)], into answers: Answers,
    done: DispatchGroup
  ) {
    for (index, request) in requests {
      done.enter()
      Thread.detachNewThread {
        let answer = (try? board.send(request)) ?? (0, .null)
        answers.set(index, answer)
        done.leave()
      }
    }
  }

  /// Sends `first` and waits until the writer thread's batch holds it (waiting for a lock the
  /// test holds: `holdWriteLock`, `holdThreadRow`), then sends `rest` and waits until they
  /// queue behind.
  private func queueBehind(
    _ board: ServedBoard, first: (Int, HTTPRequest), rest: [(Int, HTTPRequest)],
    into answers: Answers, done: DispatchGroup
  ) throws {
    let writers = try #require(board.service.writers)
    start(board, [first], into: answers, done: done)
    try wait(for: "the first writer takes the queue") { writers.state.writing }
    start(board, rest, into: answers, done: done)
    try wait(for: "the others queue behind it") { writers.state.waiting == rest.count }
  }

  /// SQLite: the board's write lock, held on a connection of the test's own until its COMMIT.
  private func holdWriteLock(_ board: ServedBoard) throws -> Connection {
    let lock = try Connection(path: board.database.ownerLocation)
    try lock.execute("BEGIN IMMEDIATE")
    return lock
  }

  /// PostgreSQL: thread `threadId`'s row, locked by the owner until its COMMIT (every comment on
  /// it updates the row's counters, so the batch's first waits for it).
  private func holdThreadRow(_ board: ServedBoard, _ threadId: String) throws
    -> PostgresConnection
  {
    let lock = try PostgresConnection(uri: board.database.ownerLocation)
    try lock.execute("BEGIN")
    try lock.query(
      "SELECT 1 FROM forum.objects WHERE object_id = $1 FOR UPDATE", [.text(threadId)])
    return lock
  }

  /// SQLite: a trigger of the test's that drops the whole transaction (`RAISE(ROLLBACK)`) when
  /// a comment's text is "roll back".
  private func dropTransactionOnRollBackText(_ board: ServedBoard) throws {
    try board.database.executeAsOwner(
      sqlite: """
        CREATE TRIGGER test_rollback BEFORE INSERT ON objects
        WHEN json_extract(NEW.data, '$.text') = 'roll back' BEGIN SELECT RAISE(ROLLBACK, 'no'); END
        """, postgres: "")
  }

  /// Waits for `condition`, failing after a deadline (never a fixed sleep).
  private func wait(for what: String, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(60)
    while !condition() {
      guard Date() < deadline else { throw TestTimeout(what: what) }
      usleep(1_000)
    }
  }

  struct TestTimeout: Error { let what: String }

  private func thread(_ board: ServedBoard, _ token: String) throws -> String {
    let (status, body) = try board.send(
      board.request(
        "POST", "classes/Thread", session: token, body: #"{"title":"t","description":""}"#))
    #expect(status == 201, "\(body)")
    return try #require(body.objectValue?["objectId"]?.stringValue)
  }

  private func comment(
    _ board: ServedBoard, _ token: String, thread: String, text: String
  ) -> HTTPRequest {
    let body: JSONValue = .object([
      "text": .string(text), "thread": .pointer(className: "Thread", objectId: thread),
    ])
    return board.request("POST", "classes/Comment", session: token, body: body.jsonText())
  }

  /// The texts of the comments of `thread`, as the server reads them, and the thread's count.
  private func comments(_ board: ServedBoard, _ token: String, thread: String) throws
    -> (texts: [String], count: Int64?)
  {
    let condition = JSONValue.object(["thread": .pointer(className: "Thread", objectId: thread)])
    let (status, body) = try board.send(
      board.request(
        "GET", "classes/Comment",
        query: "where=" + percentEncoded(condition.jsonText()) + "&limit=1000", session: token))
    #expect(status == 200, "\(body)")
    let texts = (body.objectValue?["results"]?.arrayValue ?? []).compactMap {
      $0.objectValue?["text"]?.stringValue
    }
    let (_, threadBody) = try board.send(
      board.request("GET", "classes/Thread/\(thread)", session: token))
    return (texts.sorted(), threadBody.objectValue?["commentCount"]?.intValue)
  }

  /// `Datastore.group` itself: a write that wrote and then threw undoes what it wrote, and only
  /// that; the others are committed together.
  @Test func aWriteThatThrowsUndoesItselfAlone() throws {
    let database = try SQLiteFixture().makeDatabase(rules: Board.rules, indexes: Board.indexes)
    let store = try Datastore.open(database.ownerLocation)
    let client = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    struct Refused: Error {}
    let errors = try store.group(3) { index in
      _ = try client.create("Todo", fields: ["title": .string("todo \(index)")], acl: nil)
      _ = try client.create("Todo", fields: ["title": .string("more \(index)")], acl: nil)
      if index == 1 { throw Refused() }
    }
    #expect(errors.count == 3)
    #expect(errors[0] == nil && errors[2] == nil)
    #expect(errors[1] is Refused)
    let titles = try client.find(Query(className: "Todo")).compactMap { $0["title"]?.stringValue }
    #expect(titles.sorted() == ["more 0", "more 2", "todo 0", "todo 2"])
  }

  /// A write that catches a failed operation of its own and goes on is kept, without what the
  /// failed operation wrote before it failed (its savepoint, inside the write's).
  @Test func aFailedOperationCaughtInsideAWriteLeavesNothingOfItself() throws {
    let database = try SQLiteFixture().makeDatabase(rules: Board.rules, indexes: Board.indexes)
    let store = try Datastore.open(database.ownerLocation)
    let client = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    let halfWritten = WriteOperation([
      .create(className: "Todo", fields: ["title": .value(.string("half"))], acl: .publicReadWrite),
      .find(className: "Todo", equalTo: ["title": .value(.string("nowhere"))]),
    ])
    let errors = try store.group(3) { index in
      _ = try client.create("Todo", fields: ["title": .string("todo \(index)")], acl: nil)
      if index == 1 { #expect(throws: (any Error).self) { try client.perform(halfWritten) } }
    }
    #expect(errors.allSatisfy { $0 == nil })
    let titles = try client.find(Query(className: "Todo")).compactMap { $0["title"]?.stringValue }
    #expect(titles.sorted() == ["todo 0", "todo 1", "todo 2"])
  }

  /// Writes held behind another connection's lock become one batch; the refused ones in it get
  /// their own errors and undo only themselves, and nobody is answered before the commit.
  @Test func aRefusedWriteInABatchLosesNoOther() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let threadId = try thread(board, token)
    let answers = Answers()
    let done = DispatchGroup()
    var rest: [(Int, HTTPRequest)] = (1...6).map {
      ($0, comment(board, token, thread: threadId, text: "comment \($0)"))
    }
    // A comment on a thread that does not exist, and one over the board's length.
    rest.append((7, comment(board, token, thread: "AAAAAAAAAAAAAAAA", text: "lost")))
    rest.append(
      (8, comment(board, token, thread: threadId, text: String(repeating: "x", count: 100_000))))
    let lock = try holdWriteLock(board)
    try queueBehind(
      board, first: (0, comment(board, token, thread: threadId, text: "first")), rest: rest,
      into: answers, done: done)
    #expect(answers.count == 0, "nobody is answered before their write is committed")
    try lock.execute("COMMIT")
    #expect(done.wait(timeout: .now() + 60) == .success)
    #expect(board.service.writers?.state.largestBatch == rest.count)
    for index in 0...6 {
      let (status, body) = try #require(answers.get(index))
      #expect(status == 201, "\(index): \(body)")
      #expect(body.objectValue?["objectId"]?.stringValue?.count == 16, "\(body)")
    }
    let (missing, missingBody) = try #require(answers.get(7))
    #expect(missing == 404, "\(missingBody)")
    #expect(missingBody.objectValue?["code"] == .string("E404001"), "\(missingBody)")
    let (long, longBody) = try #require(answers.get(8))
    #expect(long == 400, "\(longBody)")
    #expect(longBody.objectValue?["code"] == .string("E400002"), "\(longBody)")
    let ids = (0...6).compactMap { answers.get($0)?.1.objectValue?["objectId"]?.stringValue }
    #expect(Set(ids).count == 7, "each writer got its own object")

    let (texts, count) = try comments(board, token, thread: threadId)
    #expect(texts == (["first"] + (1...6).map { "comment \($0)" }).sorted())
    #expect(count == 7)
  }

  /// The same on PostgreSQL (issue 18): the first comment waits for its thread's row, held
  /// here by the owner; the others queue behind it and become one transaction, each in its
  /// savepoint, answered only after the commit. A refused one undoes itself alone, and the
  /// thread counts exactly the others.
  @Test func aRefusedWriteInAPostgresBatchLosesNoOther() throws {
    let board = try ServedBoard(PostgresFixture())
    let (_, token) = try board.signUp()
    let threadId = try thread(board, token)
    let lock = try holdThreadRow(board, threadId)
    let answers = Answers()
    let done = DispatchGroup()
    var rest: [(Int, HTTPRequest)] = (1...6).map {
      ($0, comment(board, token, thread: threadId, text: "comment \($0)"))
    }
    rest.append((7, comment(board, token, thread: "AAAAAAAAAAAAAAAA", text: "lost")))
    rest.append(
      (8, comment(board, token, thread: threadId, text: String(repeating: "x", count: 100_000))))
    try queueBehind(
      board, first: (0, comment(board, token, thread: threadId, text: "first")), rest: rest,
      into: answers, done: done)
    #expect(answers.count == 0, "nobody is answered before their write is committed")
    try lock.execute("COMMIT")
    #expect(done.wait(timeout: .now() + 60) == .success)
    #expect(board.service.writers?.state.largestBatch == rest.count)
    for index in 0...6 {
      let (status, body) = try #require(answers.get(index))
      #expect(status == 201, "\(index): \(body)")
    }
    let (missing, missingBody) = try #require(answers.get(7))
    #expect(missing == 404, "\(missingBody)")
    #expect(missingBody.objectValue?["code"] == .string("E404001"), "\(missingBody)")
    let (long, longBody) = try #require(answers.get(8))
    #expect(long == 400, "\(longBody)")
    #expect(longBody.objectValue?["code"] == .string("E400002"), "\(longBody)")
    let ids = (0...6).compactMap { answers.get($0)?.1.objectValue?["objectId"]?.stringValue }
    #expect(Set(ids).count == 7, "each writer got its own object")
    let (texts, count) = try comments(board, token, thread: threadId)
    #expect(texts == (["first"] + (1...6).map { "comment \($0)" }).sorted())
    #expect(count == 7)
    // Numbered once each, in the order they were written.
    let numbers = try lock.query(
      """
      SELECT string_agg(data->>'number', ',' ORDER BY (data->>'number')::int)
      FROM forum.objects WHERE class = 'Comment'
      """)
    #expect(numbers.text(0, 0) == "1,2,3,4,5,6,7")
  }

  /// A batch on PostgreSQL acts for each request's own caller: after a refused write (whose
  /// savepoint undid the `act_as` made in it), the next request of another user is that user,
  /// and one without a session is nobody.
  @Test func aPostgresBatchActsForEachCaller() throws {
    let board = try ServedBoard(PostgresFixture())
    let (alice, aliceToken) = try board.signUp()
    let (bob, bobToken) = try board.signUp()
    let threadId = try thread(board, aliceToken)
    let writers = try #require(board.service.writers)
    let lock = try holdThreadRow(board, threadId)
    let answers = Answers()
    let done = DispatchGroup()
    start(
      board, [(0, comment(board, aliceToken, thread: threadId, text: "alice"))], into: answers,
      done: done)
    try wait(for: "the first writer takes the queue") { writers.state.writing }
    let rest: [(Int, HTTPRequest)] = [
      (1, comment(board, bobToken, thread: "AAAAAAAAAAAAAAAA", text: "lost")),
      (2, comment(board, bobToken, thread: threadId, text: "bob")),
      (3, board.request("POST", "classes/Todo", body: #"{"title":"nobody's"}"#)),
    ]
    for request in rest {
      start(board, [request], into: answers, done: done)
      try wait(for: "request \(request.0) queues") { writers.state.waiting == request.0 }
    }
    try lock.execute("COMMIT")
    #expect(done.wait(timeout: .now() + 60) == .success)
    #expect(writers.state.largestBatch == 3)
    #expect(answers.get(1)?.0 == 404)
    for index in [0, 2, 3] { #expect(answers.get(index)?.0 == 201, "\(index)") }
    let authors = try lock.query(
      """
      SELECT string_agg((data->>'text') || ' ' || (data->'user'->>'objectId'), ','
                        ORDER BY data->>'text')
      FROM forum.objects WHERE class = 'Comment'
      """)
    #expect(authors.text(0, 0) == "alice \(alice),bob \(bob)")
    let todo = try lock.query(
      "SELECT readers::text, writers::text FROM forum.objects WHERE class = 'Todo'")
    #expect(todo.text(0, 0) == "{*}" && todo.text(0, 1) == "{*}")
  }

  /// A write after which SQLite drops the whole transaction (here a trigger of the test's that
  /// raises ROLLBACK): the writes of the batch before it are written again, those after it
  /// still run, and only it is refused.
  @Test func aWriteThatLosesTheTransactionLosesNoOther() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let threadId = try thread(board, token)
    try dropTransactionOnRollBackText(board)
    let writers = try #require(board.service.writers)
    let lock = try Connection(path: board.database.ownerLocation)
    try lock.execute("BEGIN IMMEDIATE")
    let answers = Answers()
    let done = DispatchGroup()
    start(
      board, [(0, comment(board, token, thread: threadId, text: "first"))], into: answers,
      done: done)
    try wait(for: "the first writer takes the queue") { writers.state.writing }
    let texts = ["before", "roll back", "after"]
    let rest = texts.enumerated().map {
      ($0 + 1, comment(board, token, thread: threadId, text: $1))
    }
    // One at a time, so that they queue in this order.
    for request in rest {
      start(board, [request], into: answers, done: done)
      try wait(for: "request \(request.0) queues") { writers.state.waiting == request.0 }
    }
    try lock.execute("COMMIT")
    #expect(done.wait(timeout: .now() + 60) == .success)

    #expect(writers.state.largestBatch == 3)
    for index in [0, 1, 3] {
      let (status, body) = try #require(answers.get(index))
      #expect(status == 201, "\(index): \(body)")
    }
    let (status, body) = try #require(answers.get(2))
    #expect(status == 500, "\(body)")
    let (stored, count) = try comments(board, token, thread: threadId)
    #expect(stored == ["after", "before", "first"])
    #expect(count == 3)
  }

  /// The prompt's "waiting for another writer" is said for its own waits only (issue 31): the
  /// server's writes, which wait here a second and a half for another process's lock (on the
  /// write queue's thread), do not run the callback the prompt bound, nor the one the request's
  /// own thread bound.
  @Test func aWorkersLongWaitDoesNotRunThePromptsCallback() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let threadId = try thread(board, token)
    let lock = try Connection(path: board.database.ownerLocation)
    try lock.execute("BEGIN IMMEDIATE")
    let prompt = Answers()
    let worker = Answers()
    let request = comment(board, token, thread: threadId, text: "waited")
    let done = DispatchGroup()
    let said: @Sendable (Interrupt.Wait) -> Void = { _ in prompt.set(prompt.count, (0, .null)) }
    try Interrupt.withLongWait(said) {
      done.enter()
      Thread.detachNewThread {
        Interrupt.withLongWait({ _ in worker.set(0, (0, .null)) }) {
          worker.set(1, (try? board.send(request)) ?? (0, .null))
        }
        done.leave()
      }
      let writers = try #require(board.service.writers)
      try wait(for: "the write to wait for the lock") { writers.state.writing }
      // Past the second after which a wait is a long one (`BusyWait`).
      usleep(1_500_000)
      try lock.execute("COMMIT")
      #expect(done.wait(timeout: .now() + 60) == .success)
    }
    #expect(worker.get(1)?.0 == 201)
    #expect(prompt.count == 0, "the prompt's callback ran for a server worker's wait")
    #expect(worker.get(0) == nil, "the request's thread's callback ran for the writer's wait")
  }

  /// A write through the server is seen at once by a read on any of its connections, with the
  /// clock standing still: the server does not wait for its recheck to see its own writes.
  @Test func theServersOwnWriteIsSeenAtOnceOnEveryConnection() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let page = "limit=20&order=-createDate"
    func titles() throws -> [String] {
      let (status, body) = try board.send(
        board.request("GET", "classes/Thread", query: page, session: token))
      #expect(status == 200, "\(body)")
      return (body.objectValue?["results"]?.arrayValue ?? []).compactMap {
        $0.objectValue?["title"]?.stringValue
      }
    }
    let writers = try #require(board.service.writers)
    let lock = try Connection(path: board.database.ownerLocation)
    // Connection A keeps an answer, then holds a write that waits for the lock while a read
    // opens connection B, which keeps the same answer.
    #expect(try titles() == [])
    try lock.execute("BEGIN IMMEDIATE")
    let answers = Answers()
    let done = DispatchGroup()
    start(
      board,
      [(0, board.request("POST", "classes/Thread", session: token, body: #"{"title":"one"}"#))],
      into: answers, done: done)
    try wait(for: "the write takes connection A") { writers.state.writing }
    #expect(try titles() == [])
    try lock.execute("COMMIT")
    #expect(done.wait(timeout: .now() + 60) == .success)
    #expect(answers.get(0)?.0 == 201)
    // Connection A (the last given back) sees its write; then B, while A is held again.
    #expect(try titles() == ["one"])
    try lock.execute("BEGIN IMMEDIATE")
    start(
      board,
      [(1, board.request("POST", "classes/Thread", session: token, body: #"{"title":"two"}"#))],
      into: answers, done: done)
    try wait(for: "the second write takes a connection") { writers.state.writing }
    #expect(try titles() == ["one"])
    try lock.execute("COMMIT")
    #expect(done.wait(timeout: .now() + 60) == .success)
    #expect(try titles() == ["two", "one"])
  }

  /// A second stop (`NCMBService.stopRunning`) while the writer thread's batch waits for a lock
  /// another process keeps and three more requests wait behind it: the wait ends then, not when
  /// the lock is let go (SQLite's wait for it, up to a minute, looked at nothing; the server's
  /// end waited as long). Every writer is answered E500001 while the lock is still held, and
  /// none of their comments is stored once it is let go (the batch's statements, on the
  /// connection kept for the batches, are stopped like a request's own).
  @Test func aSecondStopEndsTheBatchsWaitForAnotherProcesssLock() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let threadId = try thread(board, token)
    let answers = Answers()
    let done = DispatchGroup()
    let all = (0...3).map { ($0, comment(board, token, thread: threadId, text: "comment \($0)")) }
    let lock = try holdWriteLock(board)
    try queueBehind(board, first: all[0], rest: Array(all.dropFirst()), into: answers, done: done)
    board.service.stopRunning()
    let answered = done.wait(timeout: .now() + 10)
    try lock.execute("COMMIT")
    #expect(answered == .success, "the writers waited for the lock after the stop")
    #expect(done.wait(timeout: .now() + 60) == .success)
    for index in all.indices {
      let (status, body) = try #require(answers.get(index))
      #expect(status == 500, "\(index): \(body)")
      #expect(body.objectValue?["code"] == .string("E500001"), "\(index): \(body)")
    }
    let stored = try lock.prepare("SELECT count(*) FROM objects WHERE class = 'Comment'")
      .firstRow { $0.int(0) }
    #expect(stored == 0, "comments written after the stop")
  }

  /// A write that loses its batch's transaction (a trigger's `RAISE(ROLLBACK)`: a system
  /// error, which drops the connection kept for the batches) leaves the queue working: the
  /// writes after it, alone and together, are committed and read back.
  @Test func theBatchesAfterALostTransactionWrite() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let threadId = try thread(board, token)
    try dropTransactionOnRollBackText(board)
    for round in 0..<3 {
      let (lost, body) = try board.send(comment(board, token, thread: threadId, text: "roll back"))
      #expect(lost == 500, "\(body)")
      let answers = Answers()
      let done = DispatchGroup()
      start(
        board,
        (0..<4).map { ($0, comment(board, token, thread: threadId, text: "r\(round) \($0)")) },
        into: answers, done: done)
      #expect(done.wait(timeout: .now() + 60) == .success)
      for index in 0..<4 {
        #expect(answers.get(index)?.0 == 201, "\(String(describing: answers.get(index)))")
      }
    }
    let (texts, count) = try comments(board, token, thread: threadId)
    #expect(texts.count == 12 && count == 12, "\(texts)")
  }

  /// The same second stop on PostgreSQL: the batch's first comment waits for its thread's row
  /// (held here), six more wait behind it; once the row is let go every one is E500001 and no
  /// comment is stored.
  @Test func aSecondStopWhileAPostgresBatchWaitsAnswersEveryWriterAndWritesNothing() throws {
    let board = try ServedBoard(PostgresFixture())
    let (_, token) = try board.signUp()
    let threadId = try thread(board, token)
    let lock = try holdThreadRow(board, threadId)
    let answers = Answers()
    let done = DispatchGroup()
    let rest = (1...6).map { ($0, comment(board, token, thread: threadId, text: "comment \($0)")) }
    try queueBehind(
      board, first: (0, comment(board, token, thread: threadId, text: "first")), rest: rest,
      into: answers, done: done)
    board.service.stopRunning()
    // The waiting statement's connection looks at its budget every 50 ms.
    usleep(200_000)
    try lock.execute("COMMIT")
    #expect(done.wait(timeout: .now() + 60) == .success, "a writer was never answered")
    for index in 0...6 {
      let (status, body) = try #require(answers.get(index))
      #expect(status == 500, "\(index): \(body)")
    }
    let stored = try lock.query("SELECT count(*) FROM forum.objects WHERE class = 'Comment'")
    #expect(stored.text(0, 0) == "0", "comments written after the stop")
  }
}
