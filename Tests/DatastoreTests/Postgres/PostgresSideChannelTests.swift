import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// A third member with psql, asking the server's planner and buffer counters about rows he may
/// not read (issue 22): every probe gives the same plan, the same row counts and the same
/// buffers whether the hidden rows hold what he guesses or not.
@Suite("PostgreSQL side channels")
struct PostgresSideChannelTests {
  static let textIndexes = [
    IndexSpec(textOf: "Message", fields: ["text"]),
    IndexSpec(textOf: "Thread", fields: ["title", "description"]),
    IndexSpec(textOf: "Comment", fields: ["text"]),
  ]

  static func pointer(_ className: String, _ id: String) -> String {
    #"{"__type":"Pointer","className":"\#(className)","objectId":"\#(id)"}"#
  }

  /// Alice, Bob and Carol signed in; Alice has sent Bob `messages` direct messages saying
  /// "the launch code is zebra42 banana", and Carol has a public thread.
  struct Scene {
    let board: PostgresTestBoard
    let alice: PostgresConnection
    let bob: PostgresConnection
    let carol: PostgresConnection
    let ids: [String: String]
    let conversation: String
  }

  static func scene(messages: Int = 40) throws -> Scene {
    let board = try installedBoard(members: ["alice", "bob", "carol"], indexes: textIndexes)
    let alice = try PostgresConnection(uri: board["alice"].uri)
    let bob = try PostgresConnection(uri: board["bob"].uri)
    let carol = try PostgresConnection(uri: board["carol"].uri)
    var ids: [String: String] = [:]
    for (name, connection) in [("alice", alice), ("bob", bob), ("carol", carol)] {
      ids[name] = try #require(try connection.query("SELECT forum.sign_in()").text(0, 0))
    }
    let conversation = Validation.randomId()
    try alice.query(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Conversation', $1, '{}', '{}', $2::jsonb)
      """, [.text(conversation), .text(#"{"partner":\#(pointer("user", ids["bob"]!))}"#)])
    try alice.transaction {
      for index in 0..<messages {
        try alice.query(
          """
          INSERT INTO forum.objects(class, object_id, readers, writers, data)
          VALUES ('Message', $1, '{}', $2, $3::jsonb)
          """,
          [
            .text(Validation.randomId()), .text("{\(ids["alice"]!)}"),
            .text(
              #"{"text":"the launch code is zebra42 banana \#(index)","conversation":\#(pointer("Conversation", conversation))}"#
            ),
          ])
      }
    }
    try carol.query(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Thread', $1, $2, $3, '{"title":"hello world","description":"apples"}'::jsonb)
      """,
      [.text(Validation.randomId()), .text("{*,\(ids["carol"]!)}"), .text("{\(ids["carol"]!)}")])
    try board.cluster.admin("ANALYZE", database: board.database)
    return Scene(
      board: board, alice: alice, bob: bob, carol: carol, ids: ids, conversation: conversation)
  }

  /// What `EXPLAIN (ANALYZE, BUFFERS)` tells about `sql`, timings left out: each node's type,
  /// relation and index, rows, rows removed, heap fetches and buffers touched.
  static func observation(
    _ connection: PostgresConnection, _ sql: String, _ values: [PostgresValue] = []
  ) throws -> String {
    var last = ""
    // The first runs warm the caches, so hits and reads settle.
    for _ in 0..<3 {
      let result = try connection.query(
        "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) " + sql, values)
      let text = try #require(result.text(0, 0))
      let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]
      let plan = try #require(parsed?.first?["Plan"] as? [String: Any])
      last = describe(plan)
    }
    return last
  }

  private static func describe(_ node: [String: Any]) -> String {
    let keys = [
      "Node Type", "Relation Name", "Index Name", "Actual Rows", "Actual Loops",
      "Rows Removed by Filter", "Rows Removed by Index Recheck", "Heap Fetches",
      "Exact Heap Blocks", "Lossy Heap Blocks",
    ]
    var parts = keys.compactMap { key in node[key].map { "\(key)=\($0)" } }
    let hit = node["Shared Hit Blocks"] as? Int ?? 0
    let read = node["Shared Read Blocks"] as? Int ?? 0
    parts.append("buffers=\(hit + read)")
    let children = (node["Plans"] as? [[String: Any]] ?? []).map(describe)
    return "(" + parts.joined(separator: " ") + children.joined() + ")"
  }

  /// Expects the probe to look the same for every guess.
  static func expectSame(
    _ what: String, _ connection: PostgresConnection, _ guesses: [String],
    sourceLocation: SourceLocation = #_sourceLocation, _ sql: (String) -> String
  ) throws {
    let seen = try guesses.map { try observation(connection, sql($0)) }
    for (guess, observed) in zip(guesses, seen).dropFirst() {
      #expect(
        observed == seen[0],
        "\(what): '\(guesses[0])' and '\(guess)' look different:\n\(seen[0])\n\(observed)",
        sourceLocation: sourceLocation)
    }
  }

  @Test(
    "search candidates: the buffers and the plan do not tell whether others' messages hold a word")
  func searchCandidatesByBuffers() throws {
    let scene = try PostgresSideChannelTests.scene()
    defer { scene.board.remove() }
    // The real word, its neighbours one letter on, and a word nobody wrote.
    let guesses = ["zebra42", "zebrb", "launch code", "qqqqqq"]
    try PostgresSideChannelTests.expectSame("search_candidates('Message')", scene.carol, guesses) {
      "SELECT * FROM forum.search_candidates('Message', '%\($0)%')"
    }
    try PostgresSideChannelTests.expectSame("search_candidates('Thread')", scene.carol, guesses) {
      "SELECT * FROM forum.search_candidates('Thread', '%\($0)%')"
    }
    // Her own LIKE over the table: row-level security filters first.
    try PostgresSideChannelTests.expectSame("LIKE on forum.objects", scene.carol, guesses) {
      "SELECT 1 FROM forum.objects WHERE class = 'Message' AND data->>'text' LIKE '%\($0)%'"
    }
    // Bob, who may read them, finds them; Carol finds nothing.
    let found = try scene.bob.query(
      "SELECT count(*) FROM forum.search_candidates('Message', '%zebra42%')")
    #expect(found.int(0, 0) == 40)
    let carolFound = try scene.carol.query(
      "SELECT count(*) FROM forum.search_candidates('Message', '%zebra42%')")
    #expect(carolFound.int(0, 0) == 0)
    // Public text is found by anyone through the index.
    let publicFound = try scene.carol.query(
      "SELECT count(*) FROM forum.search_candidates('Thread', '%hello world%')")
    #expect(publicFound.int(0, 0) == 1)
  }

  /// Probes an index answered before row-level security filtered (issue 22 item 2): on a board
  /// made before the split, "Rows Removed by Filter: 1" told a pair that talks from one that
  /// does not, an id or a range of ids that is taken, and when messages were sent. Conversations
  /// and messages now live in a table no member can read, so the probes find nothing to count.
  @Test("the planner's probes of pairs, ids and dates learn nothing about conversations")
  func plannerProbes() throws {
    let scene = try PostgresSideChannelTests.scene(messages: 3)
    defer { scene.board.remove() }
    let dave = try scene.board.cluster.role("dave", database: scene.board.database)
    try scene.board.cluster.admin("GRANT forum_member TO \(dave.name)")
    let daveId = try #require(
      try PostgresConnection(uri: dave.uri).query("SELECT forum.sign_in()").text(0, 0))
    let alice = scene.ids["alice"]!
    let talking = PairRule.pairKey(alice, scene.ids["bob"]!)
    let silent = PairRule.pairKey(alice, daveId)
    try PostgresSideChannelTests.expectSame("pair", scene.carol, [talking, silent]) {
      "SELECT 1 FROM forum.objects WHERE class = 'Conversation' AND key_pair = '\($0)'"
    }
    try PostgresSideChannelTests.expectSame(
      "id", scene.carol, [scene.conversation, Validation.randomId()]
    ) { "SELECT 1 FROM forum.objects WHERE object_id = '\($0)'" }
    // The prefix walk: a range of ids holding the conversation's, and one holding none.
    let prefix = String(scene.conversation.prefix(3))
    try PostgresSideChannelTests.expectSame("id range", scene.carol, [prefix, "zzz"]) {
      "SELECT 1 FROM forum.objects WHERE object_id >= '\($0)' AND object_id < '\($0)~'"
    }
    let now = try scene.alice.query("SELECT forum.now_ms()").int(0, 0)
    try PostgresSideChannelTests.expectSame(
      "dates", scene.carol, ["\(now - 600_000) AND \(now + 600_000)", "0 AND 1000"]
    ) { "SELECT 1 FROM forum.objects WHERE class = 'Message' AND create_date BETWEEN \($0)" }
    // The feed: a sequence number of Alice's message and one nobody has.
    let owner = try PostgresConnection(uri: scene.board.owner.uri)
    let messageSeq = try owner.query("SELECT max(seq) FROM forum.private_changes").int(0, 0)
    try PostgresSideChannelTests.expectSame(
      "feed", scene.carol, ["\(messageSeq)", "\(messageSeq + 1_000_000)"]
    ) { "SELECT 1 FROM forum.changes WHERE seq = \($0)" }
    try PostgresSideChannelTests.expectSame(
      "feed ids", scene.carol, [scene.conversation, Validation.randomId()]
    ) { "SELECT 1 FROM forum.changes WHERE object_id = '\($0)'" }
    // Bob, who may read them, still gets the conversation and its messages.
    let bobSees = try scene.bob.query(
      "SELECT count(*) FROM forum.private_rows('Message', $1, NULL)", [.text(scene.conversation)])
    #expect(bobSees.int(0, 0) == 3)
    let carolSees = try scene.carol.query(
      "SELECT count(*) FROM forum.private_rows('Message', $1, NULL)", [.text(scene.conversation)])
    #expect(carolSees.int(0, 0) == 0)
  }

  /// The same probes through the function members read private rows with: what it costs (rows,
  /// buffers) is the same whether the guessed parent or id is someone else's or nobody's.
  @Test("forum.private_rows costs the same for others' rows and for none")
  func privateRowsProbes() throws {
    let scene = try PostgresSideChannelTests.scene(messages: 3)
    defer { scene.board.remove() }
    try PostgresSideChannelTests.expectSame(
      "private_rows by parent", scene.carol, [scene.conversation, Validation.randomId()]
    ) { "SELECT 1 FROM forum.private_rows('Message', '\($0)', NULL)" }
    try PostgresSideChannelTests.expectSame(
      "private_rows by id", scene.carol, [scene.conversation, Validation.randomId()]
    ) { "SELECT 1 FROM forum.private_rows('Conversation', NULL, ARRAY['\($0)'])" }
    let alice = scene.ids["alice"]!
    try PostgresSideChannelTests.expectSame(
      "private_rows by pair", scene.carol,
      [PairRule.pairKey(alice, scene.ids["bob"]!), PairRule.pairKey(alice, Validation.randomId())]
    ) { "SELECT 1 FROM forum.private_rows('Conversation', NULL, NULL) WHERE key_pair = '\($0)'" }
    // Members hold no grant on the tables of private rows.
    for table in ["private_objects", "private_changes", "private_search_text"] {
      expectRefused("SELECT from \(table)", states: ["42501"]) {
        try scene.carol.query("SELECT 1 FROM forum.\(table)")
      }
    }
  }

  /// Numbers handed out in order count what was numbered: a member writing public rows saw, in
  /// the gaps of `forum.objects.id`, how many private rows others wrote in between.
  @Test("the ids of public rows have no gaps for others' messages")
  func idGaps() throws {
    let scene = try PostgresSideChannelTests.scene(messages: 1)
    defer { scene.board.remove() }
    let engine = try PostgresEngine(uri: scene.board["alice"].uri)
    try engine.prepare(rules: boardRulesForTests, indexes: PostgresSideChannelTests.textIndexes)
    let login = try engine.signIn(secret: "", previousSecret: nil, sessionLifetime: 1)
    func carolThread() throws -> Int64 {
      try scene.carol.query(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        VALUES ('Thread', $1, $2, $3, '{"title":"t"}'::jsonb) RETURNING id
        """,
        [
          .text(Validation.randomId()), .text("{*,\(scene.ids["carol"]!)}"),
          .text("{\(scene.ids["carol"]!)}"),
        ]
      ).int(0, 0)
    }
    let before = try carolThread()
    for index in 0..<5 {
      _ = try engine.insert(
        "Message",
        fields: [
          "text": .string("hello \(index)"),
          "conversation": .pointer(className: "Conversation", objectId: scene.conversation),
        ],
        acl: ACL(readers: [], writers: [login.user.objectId]), as: login.principals)
    }
    let after = try carolThread()
    #expect(after == before + 1, "five messages between two threads: ids \(before), \(after)")
    // They were written, numbered and counted.
    let counted = try scene.bob.query(
      "SELECT (data->>'messageCount')::int FROM forum.private_rows('Conversation', NULL, NULL)")
    #expect(counted.int(0, 0) == 6)
  }

  /// A board made before the split (schema 7: conversations and messages in `forum.objects`,
  /// their feed rows in `forum.changes`, their text in `forum.search_text`) upgrades with
  /// `forum init`: the rows move as they were, and everything about them still works.
  @Test("a board made before the split moves its conversations and messages with forum init")
  func migrationMovesPrivateRows() throws {
    let scene = try PostgresSideChannelTests.scene(messages: 2)
    defer { scene.board.remove() }
    let owner = try PostgresConnection(uri: scene.board.owner.uri)
    let (alice, bob) = (scene.ids["alice"]!, scene.ids["bob"]!)
    // Back to schema 7, as the previous forum left it, the rows where it kept them.
    try owner.transaction {
      try owner.execute(
        """
        CREATE TEMP TABLE kept_objects AS
          SELECT class, object_id, create_date, update_date, readers, writers, data
          FROM forum.private_objects;
        CREATE TEMP TABLE kept_changes AS
          SELECT DISTINCT seq, class, object_id, kind, parent_id, number, readers
          FROM forum.private_changes;
        UPDATE forum.meta SET value = '7' WHERE key = 'schema_version';
        DROP TABLE forum.private_search_text, forum.private_changes, forum.private_objects
          CASCADE;
        DROP TRIGGER a_route ON forum.objects;
        ALTER TABLE forum.objects DISABLE TRIGGER USER;
        INSERT INTO forum.objects(class, object_id, create_date, update_date, readers, writers,
                                  data)
        SELECT * FROM kept_objects ORDER BY create_date;
        ALTER TABLE forum.objects ENABLE TRIGGER USER;
        INSERT INTO forum.search_text(id, class, body, public)
        SELECT id, class, lower(data->>'text'), false FROM forum.objects WHERE class = 'Message';
        INSERT INTO forum.changes SELECT * FROM kept_changes;
        CREATE UNIQUE INDEX objects_unique_conversation_pair ON forum.objects(key_pair)
          WHERE class = 'Conversation';
        """)
    }
    let before = try owner.query(
      """
      SELECT string_agg((class, object_id, create_date, update_date, readers, writers, data)::text,
                        ';' ORDER BY object_id) FROM forum.objects WHERE class <> 'user'
        AND class <> 'Thread'
      """
    ).text(0, 0)
    let feedBefore = try owner.query(
      "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM forum.changes WHERE class = 'Message'"
    ).text(0, 0)
    #expect(before?.contains("Conversation") == true)
    try PostgresSchema.install(
      on: owner, rules: boardRulesForTests, indexes: PostgresSideChannelTests.textIndexes)
    let after = try owner.query(
      """
      SELECT string_agg((class, object_id, create_date, update_date, readers, writers, data)::text,
                        ';' ORDER BY object_id) FROM forum.private_objects
      """
    ).text(0, 0)
    #expect(after == before, "moved as they were")
    let left = try owner.query(
      "SELECT count(*) FROM forum.objects WHERE class IN ('Conversation', 'Message')")
    #expect(left.int(0, 0) == 0)
    let feedAfter = try owner.query(
      "SELECT string_agg(DISTINCT seq::text, ',') FROM forum.private_changes WHERE class = 'Message'"
    ).text(0, 0)
    #expect(
      feedAfter.map { Set($0.split(separator: ",")) }
        == feedBefore.map {
          Set($0.split(separator: ","))
        })
    let feedLeft = try owner.query(
      "SELECT count(*) FROM forum.changes WHERE class IN ('Conversation', 'Message')")
    #expect(feedLeft.int(0, 0) == 0)
    // Bob reads and finds them, Carol does not; the probes find nothing.
    let bobReads = try scene.bob.query(
      "SELECT count(*) FROM forum.private_rows('Message', $1, NULL)", [.text(scene.conversation)])
    #expect(bobReads.int(0, 0) == 2)
    let bobFinds = try scene.bob.query(
      "SELECT count(*) FROM forum.search_candidates('Message', '%zebra42%')")
    #expect(bobFinds.int(0, 0) == 2)
    try PostgresSideChannelTests.expectSame(
      "pair after the move", scene.carol,
      [PairRule.pairKey(alice, bob), PairRule.pairKey(alice, Validation.randomId())]
    ) { "SELECT 1 FROM forum.objects WHERE class = 'Conversation' AND key_pair = '\($0)'" }
    // The rules go on from where they were: the next message is number 3 of 3.
    let engine = try PostgresEngine(uri: scene.board["alice"].uri)
    try engine.prepare(rules: boardRulesForTests, indexes: PostgresSideChannelTests.textIndexes)
    let login = try engine.signIn(secret: "", previousSecret: nil, sessionLifetime: 1)
    let sent = try engine.insert(
      "Message",
      fields: [
        "text": .string("after"),
        "conversation": .pointer(className: "Conversation", objectId: scene.conversation),
      ],
      acl: ACL(readers: [], writers: [alice]), as: login.principals)
    #expect(sent.fields["number"] == .int(3))
    let conversation = try engine.get(
      "Conversation", objectId: scene.conversation, as: login.principals)
    #expect(conversation.fields["messageCount"] == .int(3))
    #expect(conversation.fields["lastMessageNumber"] == .int(3))
    // One conversation per pair still: the index moved with its rows.
    expectRefused("a second conversation of the pair", states: ["23505"]) {
      try scene.alice.query(
        """
        SELECT 1 FROM forum.insert_object('Conversation', $1, '{}', '{}', $2::jsonb)
        """,
        [
          .text(Validation.randomId()),
          .text(#"{"partner":\#(PostgresSideChannelTests.pointer("user", bob))}"#),
        ])
    }
  }

  /// Private threads (a public class with private readers), their revisions and files are still
  /// rows of member-readable tables under row-level security: the leakproof probes still tell
  /// (README, "What a member with psql can still learn"). Known issues: when one is closed its
  /// known issue stops being recorded and this test fails; move it out of `withKnownIssue` then.
  @Test("probes of private threads, their revisions and files (known issues, said in the README)")
  func privateThreads() throws {
    let scene = try PostgresSideChannelTests.scene(messages: 0)
    defer { scene.board.remove() }
    let alice = scene.ids["alice"]!
    let thread = Validation.randomId()
    try scene.alice.query(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Thread', $1, $2, $2, '{"title":"just us","description":"d"}'::jsonb)
      """, [.text(thread), .text("{\(alice)}")])
    try scene.alice.query(
      "UPDATE forum.objects SET data = data || '{\"title\":\"edited\"}' WHERE object_id = $1",
      [.text(thread)])
    try scene.alice.query(
      """
      INSERT INTO forum.files(name, mime_type, readers, writers, data)
      VALUES ('secret.png', 'image/png', $1, $1, '\\x00'::bytea)
      """, [.text("{\(alice)}")])
    try scene.board.cluster.admin("ANALYZE", database: scene.board.database)
    withKnownIssue("a private thread's id: the object_id index") {
      try PostgresSideChannelTests.expectSame(
        "thread id", scene.carol, [thread, Validation.randomId()]
      ) { "SELECT 1 FROM forum.objects WHERE object_id = '\($0)'" }
    }
    withKnownIssue("a private thread's revisions: the revisions index") {
      try PostgresSideChannelTests.expectSame(
        "revisions", scene.carol, [thread, Validation.randomId()]
      ) { "SELECT 1 FROM forum.revisions WHERE object_id = '\($0)'" }
    }
    withKnownIssue("a private file's name: the files key") {
      try PostgresSideChannelTests.expectSame(
        "file", scene.carol, ["secret.png", "other.png"]
      ) { "SELECT 1 FROM forum.files WHERE name = '\($0)'" }
    }
  }

  /// Read positions are each user's own: a member could not read others', but a leakproof probe
  /// on the key (`user_id`, `object_id`) told whether Bob had opened a conversation or thread.
  @Test("whose read positions exist is not in any plan a member sees")
  func readPositions() throws {
    let scene = try PostgresSideChannelTests.scene(messages: 1)
    defer { scene.board.remove() }
    let bob = scene.ids["bob"]!
    let engine = try PostgresEngine(uri: scene.board["bob"].uri)
    try engine.prepare(rules: boardRulesForTests, indexes: PostgresSideChannelTests.textIndexes)
    let login = try engine.signIn(secret: "", previousSecret: nil, sessionLifetime: 1)
    try engine.markRead(
      "Conversation", objectId: scene.conversation, upTo: 1, as: login.principals)
    let state = try engine.unread(
      "Conversation", objectIds: [scene.conversation], countUpTo: 10, as: login.principals)
    #expect(state[scene.conversation]?.position == 1)
    expectRefused("Carol selects read positions", states: ["42501"]) {
      try scene.carol.query(
        "SELECT 1 FROM forum.read_positions WHERE user_id = $1 AND object_id = $2",
        [.text(bob), .text(scene.conversation)])
    }
    expectRefused("Carol writes one for Bob", states: ["42501"]) {
      try scene.carol.query(
        "INSERT INTO forum.read_positions VALUES ($1, $2, 5) RETURNING 1",
        [.text(bob), .text(scene.conversation)])
    }
    // Through the functions she reaches her own positions only, at the same cost.
    try PostgresSideChannelTests.expectSame(
      "read_positions_of", scene.carol, [scene.conversation, Validation.randomId()]
    ) { "SELECT * FROM forum.read_positions_of(ARRAY['\($0)'])" }
    try PostgresSideChannelTests.expectSame(
      "read_position", scene.carol, [scene.conversation, Validation.randomId()]
    ) { "SELECT forum.read_position('\($0)')" }
    let hers = try scene.carol.query(
      "SELECT count(*) FROM forum.read_positions_of($1)", [.text("{\(scene.conversation)}")])
    #expect(hers.int(0, 0) == 0)
  }
}
