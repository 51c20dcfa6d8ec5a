import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// Issue 28 item 1: the search attack on a realistic board, under every plan the member can push
/// the planner into. The member's session settings reach the plans of the definer functions it
/// calls (a function pins only what its own `SET` clauses name), so each `enable_*` setting
/// turned off, JIT off and both plan cache modes are tried in turn.
extension PostgresSideChannelTests {
  /// Every session setting a member may change that could change a plan inside the functions.
  static let plannerSettings = [
    "", "enable_seqscan = off", "enable_indexscan = off", "enable_bitmapscan = off",
    "enable_nestloop = off", "enable_hashjoin = off", "enable_mergejoin = off",
    "enable_material = off", "enable_memoize = off", "jit = off",
    "plan_cache_mode = force_generic_plan", "plan_cache_mode = force_custom_plan",
    // And a few more a member may set: costs that turn plans around, and less memory.
    "enable_sort = off", "enable_tidscan = off", "random_page_cost = 1000",
    "cpu_operator_cost = 10", "work_mem = '64kB'",
  ]

  /// The attack as it was made: `search_candidates` grown one character at a time, the next
  /// character of the secret against a wrong one, at the start of the secret and at its end.
  static let attackSteps = [("zebra", "4", "x"), ("zebra42 banan", "a", "q")]

  @Test(
    "search: 600 messages between two others, every planner setting: the buffers of a secret's prefix and a wrong one are alike"
  )
  func searchCandidatesUnderEveryPlan() throws {
    let scene = try PostgresSideChannelTests.scene(messages: 600)
    defer { scene.board.remove() }
    // Others on the board: Carol's public threads with comments, and Dave, who is in a
    // conversation of his own (with Bob), so his own private rows are searched as he probes.
    let carol = scene.ids["carol"]!
    try scene.carol.transaction {
      for index in 0..<60 {
        let thread = Validation.randomId()
        try scene.carol.query(
          """
          INSERT INTO forum.objects(class, object_id, readers, writers, data)
          VALUES ('Thread', $1, '{*}', $2, $3::jsonb)
          """,
          [
            .text(thread), .text("{\(carol)}"),
            .text(#"{"title":"zebra crossing \#(index)","description":"zebra4x notes"}"#),
          ])
        for comment in 0..<3 {
          try scene.carol.query(
            """
            INSERT INTO forum.objects(class, object_id, readers, writers, data)
            VALUES ('Comment', $1, '{*}', $2, $3::jsonb)
            """,
            [
              .text(Validation.randomId()), .text("{\(carol)}"),
              .text(
                #"{"text":"zebra banana \#(comment)","thread":\#(PostgresSideChannelTests.pointer("Thread", thread))}"#
              ),
            ])
        }
      }
    }
    let dave = try scene.board.cluster.role("dave", database: scene.board.database)
    try scene.board.cluster.admin("GRANT forum_member TO \(dave.name)")
    let daveConnection = try PostgresConnection(uri: dave.uri)
    let daveId = try #require(try daveConnection.query("SELECT forum.sign_in()").text(0, 0))
    let daveConversation = Validation.randomId()
    try daveConnection.query(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Conversation', $1, '{}', '{}', $2::jsonb)
      """,
      [
        .text(daveConversation),
        .text(#"{"partner":\#(PostgresSideChannelTests.pointer("user", scene.ids["bob"]!))}"#),
      ])
    try daveConnection.transaction {
      for index in 0..<30 {
        try daveConnection.query(
          """
          INSERT INTO forum.objects(class, object_id, readers, writers, data)
          VALUES ('Message', $1, '{}', $2, $3::jsonb)
          """,
          [
            .text(Validation.randomId()), .text("{\(daveId)}"),
            .text(
              #"{"text":"see you at the zoo \#(index)","conversation":\#(PostgresSideChannelTests.pointer("Conversation", daveConversation))}"#
            ),
          ])
      }
    }
    try scene.bob.execute("SELECT forum.mark_read(ARRAY['\(scene.conversation)'], ARRAY[600])")
    try scene.board.cluster.admin("ANALYZE", database: scene.board.database)

    for setting in PostgresSideChannelTests.plannerSettings {
      for connection in [scene.carol, scene.bob, daveConnection] {
        try connection.execute("RESET ALL")
        if !setting.isEmpty { try connection.execute("SET \(setting)") }
      }
      let label = setting.isEmpty ? "default settings" : setting
      for (prefix, right, wrong) in PostgresSideChannelTests.attackSteps {
        let guesses = [prefix + right, prefix + wrong]
        for (who, connection) in [("Carol", scene.carol), ("Dave", daveConnection)] {
          try PostgresSideChannelTests.expectSame(
            "\(who), \(label), search_candidates('Message')", connection, guesses
          ) { "SELECT * FROM forum.search_candidates('Message', '%\($0)%')" }
          try PostgresSideChannelTests.expectSame(
            "\(who), \(label), private_search_candidates('Thread')", connection, guesses
          ) { "SELECT * FROM forum.private_search_candidates('Thread', '%\($0)%')" }
        }
      }
      // The other lookups a member may call with a guess: the conversation's messages, the
      // conversation by id, and Bob's read position in it, against an id nobody has.
      let ids = [scene.conversation, Validation.randomId()]
      try PostgresSideChannelTests.expectSame("\(label), private_rows by parent", scene.carol, ids)
      {
        "SELECT 1 FROM forum.private_rows('Message', '\($0)', NULL)"
      }
      try PostgresSideChannelTests.expectSame("\(label), private_rows by id", scene.carol, ids) {
        "SELECT 1 FROM forum.private_rows('Conversation', NULL, ARRAY['\($0)'])"
      }
      try PostgresSideChannelTests.expectSame("\(label), read_positions_of", scene.carol, ids) {
        "SELECT 1 FROM forum.read_positions_of(ARRAY['\($0)'])"
      }
      // The probe tells what does differ: Bob, who may read the messages, sees the secret's
      // prefix match and the wrong one not.
      let bobSees = try PostgresSideChannelTests.observedAlike(scene.bob, ["zebra4", "zebrax"]) {
        "SELECT * FROM forum.search_candidates('Message', '%\($0)%')"
      }
      #expect(bobSees[0] != bobSees[1], "\(label): \(bobSees[0])")
      // And the answers are right under every plan.
      let counts = try [scene.bob, scene.carol, daveConnection].map {
        try $0.query("SELECT count(*) FROM forum.search_candidates('Message', '%zebra42 banana%')")
          .int(0, 0)
      }
      #expect(counts == [600, 0, 0], "\(label)")
      let daveFinds = try daveConnection.query(
        "SELECT count(*) FROM forum.search_candidates('Message', '%the zoo%')"
      ).int(0, 0)
      #expect(daveFinds == 30, "\(label)")
    }
  }
}
