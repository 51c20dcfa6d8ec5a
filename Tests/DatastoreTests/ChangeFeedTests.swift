import EngineTestSupport
import Foundation
import Testing

@testable import Datastore

/// Three people on one board, each with their own connection: alice writes, bob reads what he
/// may, carol is the third person who must learn nothing of alice's private objects.
private struct FeedBoard {
  let database: TestDatabase
  let clients: [String: DatastoreClient]

  init(_ engine: any EngineFixture) throws {
    database = try engine.makeDatabase(rules: boardRulesForTests, indexes: [])
    var clients: [String: DatastoreClient] = [:]
    for name in ["alice", "bob", "carol"] {
      let store = try Datastore.open(try database.location(as: name), rules: boardRulesForTests)
      clients[name] = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    }
    self.clients = clients
  }

  subscript(name: String) -> DatastoreClient { clients[name]! }

  /// Every change `name` may read after `since`, page by page.
  func changes(_ name: String, since: Int64 = 0, limit: Int = 500) throws -> [Change] {
    var all: [Change] = []
    var cursor = since
    while true {
      let batch = try self[name].changes(since: cursor, limit: limit)
      all += batch.changes
      #expect(batch.next >= cursor)
      cursor = batch.next
      if !batch.hasMore { return all }
    }
  }
}

private func thread(_ client: DatastoreClient, _ title: String, readers: Set<String>? = nil)
  throws -> DataObject
{
  let me = client.userId!
  return try client.create(
    "Thread", fields: ["title": .string(title)],
    acl: ACL(readers: readers ?? ["*", me], writers: [me]))
}

private func comment(_ client: DatastoreClient, on thread: DataObject, _ text: String) throws
  -> DataObject
{
  let me = client.userId!
  return try client.create(
    "Comment",
    fields: [
      "text": .string(text), "thread": .pointer(className: "Thread", objectId: thread.objectId),
    ], acl: ACL(readers: ["*", me], writers: [me]))
}

@Suite("change feed")
struct ChangeFeedTests {
  @Test(
    "creations, updates and deletions arrive in order, each once", arguments: EngineFixtures.all)
  func orderOfChanges(_ engine: any EngineFixture) throws {
    let board = try FeedBoard(engine)
    let alice = board["alice"]
    let start = try board["bob"].latestChange()
    let first = try thread(alice, "first")
    let reply = try comment(alice, on: first, "hello")
    try alice.update("Comment", objectId: reply.objectId, set: ["text": .string("edited")])
    try alice.delete("Comment", objectId: reply.objectId)

    let seen = try board.changes("bob", since: start)
    #expect(seen.map(\.sequence) == seen.map(\.sequence).sorted())
    #expect(Set(seen.map(\.sequence)).count == seen.count, "no sequence twice")
    #expect(seen.first { $0.objectId == first.objectId }?.kind == .created)
    let ofReply = seen.filter { $0.objectId == reply.objectId }
    #expect(ofReply.first?.kind == .created)
    #expect(ofReply.contains { $0.kind == .updated })
    #expect(ofReply.last?.kind == .deleted)
    #expect(ofReply.allSatisfy { $0.parentId == first.objectId }, "a comment names its thread")
    #expect(ofReply.last?.number == 1, "a deletion says which comment went")

    // Reading from the end gives nothing new; a page at a time gives the same as all at once.
    let end = try board["bob"].latestChange()
    #expect(try board["bob"].changes(since: end).changes.isEmpty)
    #expect(try board.changes("bob", since: start, limit: 1) == seen)
  }

  @Test("a deleted thread takes its comments along, and says so", arguments: EngineFixtures.all)
  func cascadeIsInTheFeed(_ engine: any EngineFixture) throws {
    let board = try FeedBoard(engine)
    let alice = board["alice"]
    let parent = try thread(alice, "doomed")
    let replies = try (1...3).map { try comment(alice, on: parent, "c\($0)") }
    let start = try board["bob"].latestChange()
    try alice.delete("Thread", objectId: parent.objectId)
    let deleted = try board.changes("bob", since: start).filter { $0.kind == .deleted }
    #expect(
      Set(deleted.map(\.objectId)) == Set([parent.objectId] + replies.map(\.objectId)))
    #expect(deleted.first { $0.objectId == parent.objectId }?.number == 1, "thread #1")
  }

  @Test(
    "a third person learns nothing of private objects, even their deletion",
    arguments: EngineFixtures.all)
  func privateObjectsStayPrivate(_ engine: any EngineFixture) throws {
    let board = try FeedBoard(engine)
    let alice = board["alice"]
    let bob = board["bob"]
    let carol = board["carol"]
    let start = try carol.latestChange()
    let open = try thread(alice, "public")
    let secret = try thread(alice, "private", readers: [alice.userId!, bob.userId!])
    let whisper = try comment(alice, on: secret, "psst")
    try alice.update("Thread", objectId: secret.objectId, set: ["title": .string("still private")])
    try alice.delete("Comment", objectId: whisper.objectId)
    try alice.delete("Thread", objectId: secret.objectId)

    let hidden: Set<String> = [secret.objectId, whisper.objectId]
    let carolSees = try board.changes("carol", since: start)
    #expect(carolSees.contains { $0.objectId == open.objectId })
    #expect(carolSees.allSatisfy { !hidden.contains($0.objectId) }, "\(carolSees)")
    #expect(carolSees.allSatisfy { $0.parentId.map { !hidden.contains($0) } ?? true })

    // Bob could read them: he learns that they were made and that they went.
    let bobSees = try board.changes("bob", since: start)
    #expect(bobSees.contains { $0.objectId == whisper.objectId && $0.kind == .deleted })
    #expect(bobSees.contains { $0.objectId == secret.objectId && $0.kind == .deleted })
    // Nobody's cursor stops at what they may not read.
    #expect(try carol.changes(since: start).next == (try alice.latestChange()))
  }

  @Test(
    "another process's commit wakes a reader; reading settles it", arguments: EngineFixtures.all)
  func wakeUps(_ engine: any EngineFixture) throws {
    let board = try FeedBoard(engine)
    let bob = board["bob"]
    let cursor = try bob.latestChange()
    let descriptor = try bob.wakeFileDescriptor()
    _ = try bob.hasPendingWakeup()
    _ = try bob.changes(since: cursor)
    #expect(try !bob.hasPendingWakeup(), "nothing happened yet")

    _ = try thread(board["alice"], "wake up")
    var woke = false
    // Wait for the wake-up as the prompt does: on the descriptor, or by asking every interval.
    for _ in 0..<200 where !woke {
      if var pollSet = descriptor.map({ pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }) {
        _ = poll(&pollSet, 1, 50)
      } else {
        usleep(UInt32(bob.wakePollInterval * 1_000_000))
      }
      woke = try bob.hasPendingWakeup()
    }
    #expect(woke)
    #expect(try bob.changes(since: cursor).changes.first?.kind == .created)
  }
}

@Suite("change feed on SQLite")
struct SQLiteChangeFeedTests {
  @Test func aRemovedFileIsSaidNotMissed() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("board.sqlite")
      let store = try Datastore.open(path, rules: boardRulesForTests)
      let client = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
      _ = try client.hasPendingWakeup()
      try FileManager.default.removeItem(atPath: path)
      let error = expectError(.systemError) { try client.hasPendingWakeup() }
      #expect(error?.detail?.contains("moved or deleted") == true)
    }
  }
}

@Suite("change feed on PostgreSQL")
struct PostgresChangeFeedTests {
  /// What a member sees with psql: the feed table under row-level security.
  @Test func aMemberWithPsqlReadsOnlyWhatTheyMayRead() throws {
    let board = try installedBoard(members: ["alice", "bob", "carol"])
    defer { board.remove() }
    var clients: [String: DatastoreClient] = [:]
    for name in ["alice", "bob", "carol"] {
      let store = try Datastore.open(board[name].uri, rules: boardRulesForTests)
      clients[name] = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    }
    let alice = clients["alice"]!
    let bob = clients["bob"]!
    let open = try thread(alice, "public")
    let secret = try thread(alice, "private", readers: [alice.userId!, bob.userId!])
    let whisper = try comment(alice, on: secret, "psst")
    try alice.delete("Thread", objectId: secret.objectId)

    let carol = try PostgresConnection(uri: board["carol"].uri)
    let rows = try carol.query("SELECT object_id, coalesce(parent_id, '') FROM forum.changes")
    let ids = Set(rows.rows { [rows.text($0, 0) ?? "", rows.text($0, 1) ?? ""] }.joined())
    #expect(ids.contains(open.objectId))
    #expect(!ids.contains(secret.objectId) && !ids.contains(whisper.objectId))
    // Nor can a member write the feed, or take numbers from its sequence.
    expectRefused("insert into the feed", states: ["42501"]) {
      try carol.query(
        "INSERT INTO forum.changes VALUES (999999, 'Thread', 'AAAAAAAAAAAAAAAA', 1, NULL, NULL, '{*}') RETURNING 1"
      )
    }
    expectRefused("delete from the feed", states: ["42501"]) {
      try carol.query("DELETE FROM forum.changes RETURNING 1")
    }
    expectRefused("the feed's sequence", states: ["42501"]) {
      try carol.query("SELECT nextval('forum.change_seq')")
    }
    // The private thread's feed rows are not in forum.changes at all (issue 22): each reader
    // reads their own through forum.private_changes.
    let carolsOwn = try carol.query(
      "SELECT count(*) FROM forum.private_changes(0, forum.latest_change(), 1000)")
    #expect(carolsOwn.int(0, 0) == 0)
    let bobSees = try PostgresConnection(uri: board["bob"].uri).query(
      """
      SELECT count(*) FROM forum.private_changes(0, forum.latest_change(), 1000)
      WHERE object_id = $1
      """, [.text(whisper.objectId)])
    #expect(bobSees.int(0, 0) == 2, "bob, a reader, sees the whisper come and go")
  }
}
