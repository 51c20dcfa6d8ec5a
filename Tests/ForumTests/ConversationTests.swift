import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// Direct messages as the engines keep them: private to exactly two people, one conversation per
/// pair, out of every other person's reach, whatever client that person uses.
@Suite("Conversations")
struct ConversationTests {
  private func expectCode(
    _ code: ErrorCode, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
  ) {
    do {
      try body()
      Issue.record(
        "\(what): expected \(code.rawValue), nothing thrown", sourceLocation: sourceLocation)
    } catch let error as DatastoreError {
      #expect(error.code == code, "\(what): \(error)", sourceLocation: sourceLocation)
    } catch {
      Issue.record(
        "\(what): expected \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
    }
  }

  @Test(
    "two people talk; messages are numbered in their conversation",
    arguments: EngineFixtures.withRemote)
  func talk(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let first = try alice.sendMessage(to: "@" + bob.me.userName, text: "hi  'bob' \\n")
    #expect(first.number == 1)
    #expect(first.text == "hi  'bob' \\n")
    let reply = try bob.sendMessage(to: alice.me.userName, text: "hello")
    #expect(reply.number == 2)
    #expect(reply.conversationId == first.conversationId, "one conversation per pair")
    for (board, partner) in [(alice, bob.me), (bob, alice.me)] {
      let inbox = try board.conversations(page: 1)
      #expect(inbox.items.count == 1)
      #expect(inbox.items.first?.partner.objectId == partner.objectId)
      #expect(inbox.items.first?.lastMessage?.text == "hello")
      let conversation = try board.conversation(with: "@" + partner.userName)
      #expect(try board.messages(in: conversation, page: 1).items.map(\.number) == [1, 2])
    }
  }

  @Test("the inbox is most recent first", arguments: EngineFixtures.withRemote)
  func inboxOrder(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let carol = try world.board("carol")
    try alice.sendMessage(to: bob.me.userName, text: "1")
    try carol.sendMessage(to: alice.me.userName, text: "2")
    #expect(
      try alice.conversations(page: 1).items.map(\.partner.userName) == [
        carol.me.userName, bob.me.userName,
      ])
    try bob.sendMessage(to: alice.me.userName, text: "3")
    #expect(
      try alice.conversations(page: 1).items.map(\.partner.userName) == [
        bob.me.userName, carol.me.userName,
      ])
  }

  @Test("a third person finds no trace of a conversation", arguments: EngineFixtures.withRemote)
  func thirdPersonSeesNothing(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let carol = try world.board("carol")
    let message = try alice.sendMessage(to: bob.me.userName, text: "secret")
    let thread = try alice.createThread(title: "public", description: "", image: nil)
    #expect(thread.number == 1, "conversations take no public number")
    #expect(try carol.conversations(page: 1).items.isEmpty)
    expectCode(.notFound, "carol opens alice and bob's conversation") {
      _ = try carol.conversation(with: alice.me.userName)
    }
    for className in ["Conversation", "Message"] {
      #expect(try carol.client.find(Query(className: className)).isEmpty, "\(className)")
      #expect(try carol.client.count(Query(className: className)) == 0, "\(className)")
    }
    expectCode(.notFound, "carol reads the conversation by id") {
      _ = try carol.client.get("Conversation", objectId: message.conversationId)
    }
    expectCode(.notFound, "carol reads the message by id") {
      _ = try carol.client.get("Message", objectId: message.objectId)
    }
    let before = try world.database.fingerprint()
    expectCode(.notFound, "carol posts into it") {
      try carol.client.create(
        "Message",
        fields: [
          "text": .string("me too"),
          "conversation": .pointer(className: "Conversation", objectId: message.conversationId),
        ], acl: ACL(readers: [carol.me.objectId], writers: [carol.me.objectId]))
    }
    #expect(try world.database.fingerprint() == before, "nothing written")
  }

  @Test(
    "nobody widens a conversation, deletes it, or makes a second one",
    arguments: EngineFixtures.withRemote
  )
  func membersCannotForge(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let carol = try world.board("carol")
    let message = try alice.sendMessage(to: bob.me.userName, text: "secret")
    let id = message.conversationId
    let before = try world.database.fingerprint()
    for board in [alice, bob] {
      expectCode(.noAccess, "a member adds carol as a reader") {
        try board.client.update(
          "Conversation", objectId: id,
          acl: ACL(
            readers: [alice.me.objectId, bob.me.objectId, carol.me.objectId],
            writers: [board.me.objectId]))
      }
      expectCode(.noAccess, "a member deletes the conversation") {
        try board.client.delete("Conversation", objectId: id)
      }
      expectCode(.invalid, "a member starts a second conversation") {
        let other = board === alice ? bob.me : alice.me
        try board.client.create(
          "Conversation",
          fields: ["partner": .pointer(className: "user", objectId: other.objectId)],
          acl: ACL(readers: ["*"], writers: [board.me.objectId]))
      }
    }
    expectCode(.invalid, "a message's readers set apart from its conversation's") {
      try alice.client.update(
        "Message", objectId: message.objectId, set: ["conversation": .null])
    }
    #expect(try world.database.fingerprint() == before, "nothing written")
    // A conversation asked to be public is still private: the engine sets its ACL.
    let dave = try world.board("dave")
    let started = try carol.client.create(
      "Conversation", fields: ["partner": .pointer(className: "user", objectId: dave.me.objectId)],
      acl: ACL(readers: ["*"], writers: ["*"]))
    #expect(started.acl.readers == [carol.me.objectId, dave.me.objectId])
    #expect(started.acl.writers.isEmpty)
    #expect(try alice.client.find(Query(className: "Conversation")).map(\.objectId) == [id])
  }

  @Test(
    "a message sent with other readers gets its conversation's, and only those",
    arguments: EngineFixtures.withRemote)
  func messageReadersFollowTheConversation(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let carol = try world.board("carol")
    let first = try alice.sendMessage(to: bob.me.userName, text: "hi")
    for readers: Set<String> in [[alice.me.objectId], [alice.me.objectId, carol.me.objectId]] {
      let sent = try alice.client.create(
        "Message",
        fields: [
          "text": .string("readers \(readers.count)"),
          "conversation": .pointer(className: "Conversation", objectId: first.conversationId),
        ], acl: ACL(readers: readers, writers: [alice.me.objectId]))
      #expect(sent.acl.readers == [alice.me.objectId, bob.me.objectId])
    }
    #expect(try bob.client.find(Query(className: "Message")).count == 3)
    #expect(try carol.client.find(Query(className: "Message")).isEmpty)
    #expect(try carol.client.count(Query(className: "Message")) == 0)
  }

  @Test("handles: unknown is not found, yourself is refused", arguments: EngineFixtures.withRemote)
  func handles(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    #expect(try alice.user(handle: "@" + bob.me.userName).objectId == bob.me.objectId)
    expectCode(.notFound, "nobody") { _ = try alice.user(handle: "@nobody") }
    expectCode(.notFound, "escapes") { _ = try alice.user(handle: "@\u{1b}[2J") }
    expectCode(.invalid, "yourself") {
      try alice.sendMessage(to: alice.me.userName, text: "me")
    }
    expectCode(.invalid, "yourself, past Board") {
      try alice.client.create(
        "Conversation",
        fields: ["partner": .pointer(className: "user", objectId: alice.me.objectId)],
        acl: ACL())
    }
    #expect(try alice.conversations(page: 1).items.isEmpty)
    // Completion: handles by prefix; a hostile prefix offers nothing.
    let prefix = String(bob.me.userName.prefix(3))
    #expect(try alice.users(handlePrefix: "@" + prefix).contains { $0.objectId == bob.me.objectId })
    #expect(try alice.users(handlePrefix: "@\u{1b}").isEmpty)
    // On a board past the scan limit, your partners are still offered.
    let carol = try world.board("carol")
    try alice.sendMessage(to: carol.me.userName, text: "hi")
    #expect(
      try alice.users(handlePrefix: "@" + carol.me.userName, scanLimit: 0).map(\.objectId) == [
        carol.me.objectId
      ])
  }

  @Test("a PostgreSQL member with raw SQL sees and forges nothing of others' conversations")
  func rawSQLThirdMember() throws {
    guard
      let engine = EngineFixtures.all.first(where: { "\($0)".lowercased().contains("postgres") })
    else {
      Issue.record("no PostgreSQL fixture")
      return
    }
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let carol = try world.board("carol")
    let message = try alice.sendMessage(to: bob.me.userName, text: "secret")
    let raw = try PostgresConnection(uri: try world.database.location(as: "carol"))
    _ = try raw.query("SELECT forum.sign_in()")
    let seen = try raw.query(
      "SELECT class FROM forum.objects WHERE class IN ('Conversation', 'Message') "
        + "OR data::text LIKE '%secret%'")
    #expect(seen.rowCount == 0)
    let before = try world.database.fingerprint()
    func refused(_ what: String, _ sql: String, _ values: [PostgresValue] = []) {
      do {
        let result = try raw.query(sql, values)
        #expect(result.rowCount == 0, "\(what): \(result.rowCount) rows")
      } catch {}
    }
    refused(
      "update its readers",
      "UPDATE forum.objects SET readers = readers || $1 WHERE class <> 'user' RETURNING 1",
      [.text("{\(carol.me.objectId)}")])
    refused(
      "insert a message into it",
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Message', 'AAAAAAAAAAAAAAAA', $1, $1, jsonb_build_object('text', 'x',
        'conversation', jsonb_build_object('__type', 'Pointer', 'className', 'Conversation',
        'objectId', $2::text))) RETURNING 1
      """, [.text("{\(carol.me.objectId)}"), .text(message.conversationId)])
    refused("delete them", "DELETE FROM forum.objects WHERE class <> 'user' RETURNING 1")
    #expect(try world.database.fingerprint() == before, "nothing written")
    // Naming alice as the starter and herself as a reader: the engine makes it carol's own
    // conversation with bob, read by exactly the two of them.
    _ = try raw.query(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Conversation', 'BBBBBBBBBBBBBBBB', $1, $1, jsonb_build_object(
        'user', jsonb_build_object('__type', 'Pointer', 'className', 'user', 'objectId', $2::text),
        'partner', jsonb_build_object('__type', 'Pointer', 'className', 'user', 'objectId', $3::text),
        'pair', 'x'))
      """,
      [
        .text("{\(carol.me.objectId),\(alice.me.objectId)}"), .text(alice.me.objectId),
        .text(bob.me.objectId),
      ])
    // Conversations are kept where members cannot select them; she reads hers back as the
    // engine does.
    let planted = try raw.query(
      """
      SELECT readers::text, writers::text, data->'user'->>'objectId', data->>'pair'
      FROM forum.private_rows('Conversation', NULL, ARRAY['BBBBBBBBBBBBBBBB'])
      """)
    #expect(planted.text(0, 0) == "{\(carol.me.objectId),\(bob.me.objectId)}")
    #expect(planted.text(0, 1) == "{}")
    #expect(planted.text(0, 2) == carol.me.objectId)
    #expect(planted.text(0, 3) == PairRule.pairKey(carol.me.objectId, bob.me.objectId))
    #expect(try alice.conversations(page: 1).items.count == 1, "alice sees only hers")
  }

  /// The inbox and the pair lookup seek the member's own rows by index on SQLite, so other
  /// people's conversations, however many, are never walked (BENCHMARKS.md has the timings).
  @Test func inboxQueriesWalkTheMembersIndex() throws {
    let world = try BoardWorld(EngineFixtures.all[0])
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    try alice.sendMessage(to: bob.me.userName, text: "hi")
    let engine = try #require(alice.store.engine as? SQLiteEngine)
    let principals = Principals(userId: alice.me.objectId)
    func plan(_ query: Query) throws -> [String] {
      let (sql, values) = SQLiteEngine.findStatement(
        query, readableBy: principals, leads: engine.indexLeads())
      return try engine.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
        try $0.text(3) ?? ""
      }
    }
    // Conversations are never public: the member's own come from `object_readers` keyed by
    // the member, each read by its rowid; no index of everyone's rows is walked (issue 28).
    func readsOnlyHers(_ steps: [String]) {
      #expect(
        steps.contains { $0.hasPrefix("SEARCH r USING PRIMARY KEY (principal=? AND class=?)") },
        "\(steps)")
      #expect(steps.contains { $0 == "SEARCH o USING INTEGER PRIMARY KEY (rowid=?)" }, "\(steps)")
      #expect(
        !steps.contains { $0.contains("USING INDEX") && !$0.contains("objects_public_") },
        "\(steps)")
    }
    let me = JSONValue.pointer(className: "user", objectId: alice.me.objectId)
    for side in ["user", "partner"] {
      readsOnlyHers(
        try plan(
          Query(
            className: "Conversation", equalTo: [side: me], order: ["-lastActivity"], limit: 21)))
    }
    readsOnlyHers(
      try plan(
        Query(
          className: "Conversation",
          equalTo: ["pair": .string(PairRule.pairKey(alice.me.objectId, bob.me.objectId))],
          limit: 1)))
  }
}
