import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// Issue 22: the unread filter asked `forum.read_position(id)` once for every thread it walked,
/// a definer function the planner cannot inline (`list --unread` on 100,000 threads took
/// minutes). It must ask for the caller's positions a fixed number of times, whatever the
/// board's size, and still find exactly the unread threads.
@Suite(.serialized)
struct PostgresUnreadTests {
  @Test("the unread filter asks for the read positions once, not once per thread")
  func unreadFilterIsSetBased() throws {
    let board = try installedBoard()
    defer { board.remove() }
    // Counts the member's function calls (a superuser-only setting, set for the role).
    try board.cluster.admin("ALTER ROLE \(board["bob"].name) SET track_functions = 'all'")
    defer { _ = try? board.cluster.admin("ALTER ROLE \(board["bob"].name) RESET track_functions") }
    let alice = try PostgresConnection(uri: board["alice"].uri)
    let aliceId = try #require(try alice.query("SELECT forum.sign_in()").text(0, 0))
    let engine = try PostgresEngine(uri: board["bob"].uri)
    try engine.prepare(rules: boardRulesForTests, indexes: [])
    let login = try engine.signIn(secret: "", previousSecret: nil, sessionLifetime: 1)
    let bobId = try #require(login.principals.userId)
    func thread(_ connection: PostgresConnection, by user: String, _ title: String) throws
      -> String
    {
      let id = Validation.randomId()
      try connection.query(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        VALUES ('Thread', $1, $2, $3, jsonb_build_object('title', $4::text))
        """, [.text(id), .text("{*,\(user)}"), .text("{\(user)}"), .text(title)])
      return id
    }
    let threads = try (0..<60).map { try thread(alice, by: aliceId, "thread \($0)") }
    // Two comments in the first thread; Bob reads the first only.
    for text in ["one", "two"] {
      try alice.query(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        VALUES ('Comment', $1, '{*}', $2, jsonb_build_object('text', $3::text, 'thread',
          jsonb_build_object('__type', 'Pointer', 'className', 'Thread', 'objectId', $4::text)))
        """, [.text(Validation.randomId()), .text("{\(aliceId)}"), .text(text), .text(threads[0])])
    }
    try engine.markRead("Thread", objectId: threads[0], upTo: 1, as: login.principals)
    // Bob has read 49 of the others; his own empty thread is never unread.
    for id in threads[1..<50] {
      try engine.markRead("Thread", objectId: id, upTo: 0, as: login.principals)
    }
    let bobs = try PostgresConnection(uri: board["bob"].uri)
    _ = try thread(bobs, by: bobId, "mine")
    let expected = Set([threads[0]] + threads[50...])

    var query = Query(className: "Thread", order: ["-lastActivity"], limit: 100)
    query.unreadOnly = true
    #expect(Set(try engine.find(query, as: login.principals).map(\.objectId)) == expected)
    #expect(try engine.count(query, as: login.principals) == expected.count)

    let (sql, values) = PostgresEngine.findStatement(
      query, as: login.principals, rules: boardRulesForTests,
      privateClasses: PostgresRules(boardRulesForTests).privateClasses)
    var found: Set<String> = []
    var calls: [String: Int64] = [:]
    // A fresh connection: a backend's counts not yet flushed include its earlier statements.
    let counting = try PostgresConnection(uri: board["bob"].uri)
    try counting.transaction {
      let result = try counting.query(sql, values)
      found = Set(result.rows { result.text($0, 1) ?? "" })
      let stats = try counting.query(
        "SELECT funcname::text, calls FROM pg_stat_xact_user_functions WHERE schemaname = 'forum'")
      for row in 0..<stats.rowCount { calls[stats.text(row, 0) ?? ""] = stats.int(row, 1) }
    }
    #expect(found == expected)
    // And looked up by hash as the listing's index is walked: a nested loop would scan every
    // position for every thread (one call, but minutes on 100,000 threads).
    let plan = try counting.query("EXPLAIN (COSTS OFF) " + sql, values)
    let text = plan.rows { plan.text($0, 0) ?? "" }.joined(separator: "\n")
    #expect(text.contains("my_read_positions"), "\(text)")
    #expect(text.contains("hashed SubPlan") && !text.contains("Nested Loop"), "\(text)")
    // A handful of calls (the principals, the caller, the positions of each branch), however
    // many threads there are: 61 here.
    let total = calls.values.reduce(0, +)
    #expect(total > 0, "no function calls were counted: \(calls)")
    #expect(total <= 12, "\(calls)")
    #expect(calls["read_position"] == nil, "\(calls)")
  }
}
