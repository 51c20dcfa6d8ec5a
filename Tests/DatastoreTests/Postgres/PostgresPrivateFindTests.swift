import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// Issue 28 H2 on PostgreSQL: the statement `find` and `count` run for Carol evaluates her
/// conditions only over rows she may read. Public rows are the only rows of `forum.objects`, and
/// her private ones come from `forum.private_rows`, keyed by her principals, before any of her
/// conditions; so `EXPLAIN (ANALYZE, BUFFERS)` of a probe over a range that holds others' private
/// messages or a private thread shows the same rows, rows removed and buffers as over an empty one.
@Suite("PostgreSQL: hidden rows cost nothing to a query")
struct PostgresPrivateFindTests {
  static func probe(_ className: String, _ field: String, from low: String, to high: String)
    -> Query
  {
    var query = Query(className: className, limit: 100)
    query.conditions = [
      .compare(field, .greaterThanOrEqual, .string(low)),
      .compare(field, .lessThan, .string(high)),
      .notIn(field, (0..<700).map { .string("decoy \($0)") }),
    ]
    return query
  }

  @Test("a range over others' private messages or a private thread costs the same as none")
  func rangesOverHiddenRows() throws {
    let scene = try PostgresSideChannelTests.scene(messages: 300)
    defer { scene.board.remove() }
    _ = try PostgresSideChannelTests.privateThread(scene)
    let carol = try PostgresEngine(uri: scene.board["carol"].uri)
    try carol.prepare(rules: boardRulesForTests, indexes: PostgresSideChannelTests.indexes)
    let principals = Principals(userId: scene.ids["carol"]!)
    func statements(_ query: Query) -> [(String, [PostgresValue])] {
      let find = PostgresEngine.findStatement(
        query, as: principals, keyColumns: carol.keyColumns, rules: boardRulesForTests,
        privateClasses: carol.privateClasses)
      let from = PostgresEngine.source(
        query.className, privateClasses: carol.privateClasses, keyColumns: carol.keyColumns)
      let filter = PostgresEngine.whereClause(
        query, principals, keyColumns: carol.keyColumns, rules: boardRulesForTests)
      let count = ("SELECT count(*) FROM \(sql: from) \(sql: filter)" as SQL).postgres
      return [find, count]
    }
    let pairs: [(String, Query, Query)] = [
      (
        "messages", Self.probe("Message", "text", from: "the launch", to: "the launcz"),
        Self.probe("Message", "text", from: "zz", to: "zzz")
      ),
      (
        "threads", Self.probe("Thread", "title", from: "edited", to: "editee"),
        Self.probe("Thread", "title", from: "zz", to: "zzz")
      ),
    ]
    for (what, holding, empty) in pairs {
      for (index, (sql, values)) in statements(holding).enumerated() {
        let (emptySQL, emptyValues) = statements(empty)[index]
        var seen: [String] = []
        for _ in 0..<5 {
          seen = [
            try PostgresSideChannelTests.observation(scene.carol, sql, values),
            try PostgresSideChannelTests.observation(scene.carol, emptySQL, emptyValues),
          ]
          if seen[0] == seen[1] { break }
        }
        #expect(
          seen[0] == seen[1],
          "\(what) \(index == 0 ? "find" : "count"):\n\(seen.joined(separator: "\n"))")
      }
      #expect(try carol.find(holding, as: principals).isEmpty)
    }
  }

  /// Issue 29: every query the seed's demo app makes on the board's classes walks an index on
  /// PostgreSQL too: the thread list and its pages, a thread's comments by pointer in either
  /// order and by number, and their count.
  @Test("the demo app's queries walk indexes, not the class")
  func demoQueriesUseIndexes() throws {
    let indexes = [
      IndexSpec(className: "Thread", fields: ["lastActivity"]),
      IndexSpec(className: "Comment", fields: ["thread", "number"]),
      IndexSpec(className: "Comment", fields: ["thread", "createDate"]),
    ]
    let board = try installedBoard(members: ["alice"], indexes: indexes)
    defer { board.remove() }
    let alice = try PostgresEngine(uri: board["alice"].uri)
    try alice.prepare(rules: boardRulesForTests, indexes: indexes)
    let login = try alice.signIn(secret: "", previousSecret: nil, sessionLifetime: 1)
    let me = login.user.objectId
    try PostgresConnection(uri: board.owner.uri).execute(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Thread', 'T' || lpad(i::text, 15, '0'), ARRAY['*', '\(me)'], ARRAY['\(me)'],
        jsonb_build_object('title', 'thread ' || i)
      FROM generate_series(1, 2000) AS i;
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Comment', 'C' || lpad(i::text, 15, '0'), ARRAY['*', '\(me)'], ARRAY['\(me)'],
        jsonb_build_object('text', 'comment ' || i, 'number', i / 2000 + 1,
          'thread', jsonb_build_object('__type', 'Pointer', 'className', 'Thread',
            'objectId', 'T' || lpad((i % 2000 + 1)::text, 15, '0')))
      FROM generate_series(1, 20000) AS i;
      ANALYZE forum.objects;
      """)
    let connection = try PostgresConnection(uri: board["alice"].uri)
    let thread = JSONValue.pointer(className: "Thread", objectId: "T000000000000007")
    let queries: [(String, Query)] =
      [
        ("thread list", Query(className: "Thread", order: ["-createDate"], limit: 20)),
        (
          "thread list, third page",
          Query(className: "Thread", order: ["-createDate"], limit: 20, skip: 40)
        ),
        (
          "comments by creation",
          Query(className: "Comment", equalTo: ["thread": thread], order: ["createDate"], limit: 20)
        ),
        (
          "comments newest first",
          Query(
            className: "Comment", equalTo: ["thread": thread], order: ["-createDate"], limit: 20)
        ),
        (
          "comments by number",
          Query(className: "Comment", equalTo: ["thread": thread], order: ["number"], limit: 20)
        ),
      ]
      // Issue 29: the same, as an app's `where` asks them (a condition, typed exactly).
      + ["createDate", "-createDate", "number"].map { order in
        var query = Query(className: "Comment", order: [order], limit: 20)
        query.conditions = [.equal("thread", thread)]
        return ("an app's where, comments by \(order)", query)
      }
    for mode in ["force_custom_plan", "force_generic_plan"] {
      try connection.execute("SET plan_cache_mode = \(mode)")
      for (what, query) in queries {
        let (sql, values) = PostgresEngine.findStatement(
          query, as: login.principals, keyColumns: alice.keyColumns, rules: boardRulesForTests,
          privateClasses: alice.privateClasses)
        let plan = try connection.query("EXPLAIN " + sql, values)
        let text = plan.rows { plan.text($0, 0) ?? "" }.joined(separator: "\n")
        #expect(!text.contains("Seq Scan on objects"), "\(what), \(mode)\n\(text)")
        #expect(text.contains("Index Scan"), "\(what), \(mode)\n\(text)")
        // A thread's comments are found by an index condition on the pointer (the planner may
        // then sort that thread's few); the thread list is one ordered walk, with no sort below
        // its LIMIT.
        if query.className == "Comment" {
          #expect(text.contains("Index Cond: (key_thread = "), "\(what), \(mode)\n\(text)")
          continue
        }
        let lines = text.split(separator: "\n")
        if let branch = lines.firstIndex(where: { $0.contains("Subquery Scan on \"*SELECT* 1\"") }),
          let walk = lines.firstIndex(where: { $0.contains("Index Scan") && $0.contains("objects") }
          )
        {
          #expect(
            branch < walk && !lines[branch..<walk].contains { $0.contains("Sort") },
            "\(what), \(mode)\n\(text)")
        }
      }
      let count = Query(className: "Comment", equalTo: ["thread": thread], limit: 0)
      let from = PostgresEngine.source(
        "Comment", privateClasses: alice.privateClasses, keyColumns: alice.keyColumns)
      let filter = PostgresEngine.whereClause(
        count, login.principals, keyColumns: alice.keyColumns, rules: boardRulesForTests)
      let (sql, values) = ("SELECT count(*) FROM \(sql: from) \(sql: filter)" as SQL).postgres
      let plan = try connection.query("EXPLAIN " + sql, values)
      let text = plan.rows { plan.text($0, 0) ?? "" }.joined(separator: "\n")
      #expect(!text.contains("Seq Scan on objects"), "count, \(mode)\n\(text)")
      #expect(text.contains("key_thread = "), "count, \(mode)\n\(text)")
    }
    let comments = try alice.find(
      Query(className: "Comment", equalTo: ["thread": thread], order: ["number"], limit: 20),
      as: login.principals)
    #expect(comments.count == 10)
    #expect(
      try alice.count(
        Query(className: "Comment", equalTo: ["thread": thread]), as: login.principals) == 10)
  }
}
