import Foundation
import Testing

@testable import Datastore

@Suite("the class hint's attacks")
struct HintAttackTests {
  /// The board's Thread rules with the pin flag (ordered by presence) and its declared indexes.
  static var rules: EngineRules {
    var rules = boardRulesForTests
    rules.flags = [FlagRule(className: "Thread", field: "pinnedDate", role: "moderator")]
    return rules
  }
  static let indexes = [
    IndexSpec(className: "Thread", fields: ["lastActivity"]),
    IndexSpec(className: "Thread", fields: ["pinnedDate", "lastActivity"]),
  ]

  static func publicAndCount(
    _ storage: SQLiteEngine, _ query: Query, _ principals: Principals, rules: EngineRules
  ) throws -> [[String]] {
    let (sql, values) = SQLiteEngine.findStatement(
      query, readableBy: principals, rules: rules, leads: storage.indexLeads())
    let find = try storage.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
      try $0.text(3) ?? ""
    }
    let (count, countValues) = SQLiteEngine.countStatement(
      query, readableBy: principals, rules: rules, leads: storage.indexLeads())
    let counted = try storage.connection.prepare("EXPLAIN QUERY PLAN " + count).rows(
      countValues
    ) { try $0.text(3) ?? "" }
    return [QueryPlanTests.arms(find).public, counted]
  }

  static func walksOthersRows(_ rows: [String]) -> Bool {
    rows.contains {
      $0 == "SCAN o" || $0.hasPrefix("SCAN o USING COVERING")
        || $0.hasPrefix("SCAN o USING INDEX sqlite_autoindex_objects_1")
        || $0.hasPrefix("SCAN o USING INDEX objects_public_createDate")
    }
  }

  /// A flag's field (pinnedDate: its index holds whether a thread has it, `presenceOrdered`)
  /// named in a `where` (an app's Date equality, a bound): `walkable` maps it through the
  /// presence expression, finds the board's `pinnedDate, lastActivity` index's lead and says the
  /// class unselective, but the term compares the value, which that index does not hold. Without
  /// an order (an app's subquery, a member's listing) or by objectId, SQLite walked the table.
  @Test func aFlagsValueInAWhereSeeksTheClass() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(
        path: directory.file("db.sqlite"), rules: Self.rules, indexes: Self.indexes)
      let storage = try #require(store.engine as? SQLiteEngine)
      let date = JSONValue.object([
        "__type": .string("Date"), "iso": .string("2026-01-01T00:00:00.000Z"),
      ])
      for order in [[], ["objectId"]] {
        for shape in 0..<4 {
          var query = Query(className: "Thread", order: order, limit: 20)
          switch shape {
          case 0: query.conditions = [.equal("pinnedDate", date)]
          case 1: query.conditions = [.equal("pinnedDate", .string("2026-01-01T00:00:00.000Z"))]
          case 2: query.equalTo = ["pinnedDate": .int(1_767_225_600_000)]
          default: query.greaterThan = ["pinnedDate": 1_767_225_600_000]
          }
          for principals in [Principals.anonymous, QueryPlanTests.reader] {
            for rows in try Self.publicAndCount(storage, query, principals, rules: Self.rules) {
              #expect(!Self.walksOthersRows(rows), "\(order) \(shape): \(rows)")
              #expect(rows.contains { $0.contains("INDEX objects_public_") }, "\(rows)")
            }
          }
        }
      }
    }
  }

  /// Someone with sqlite3 drops an index the leads name (or `forum` of another version makes
  /// the board's indexes again): no `meta` write, so a running server keeps the lead, says the
  /// class unselective beside an order no index serves any more, and SQLite walks the table.
  @Test func anIndexDroppedByHandIsNotWalkedAfterTheNextStateCheck() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      let store = try Datastore(path: path, indexes: QueryPlanTests.indexes)
      let storage = try #require(store.engine as? SQLiteEngine)
      var query = Query(className: "Thread", order: [], limit: 20)
      query.equalTo = ["lastActivity": .int(5)]
      // Each explained once: the connection keeps its statements, and an EXPLAIN kept from
      // before never checks the schema again.
      var explained = 0
      func publicArm() throws -> [String] {
        let (sql, values) = storage.findStatement(query, .anonymous).rendered(.sqlite)
        explained += 1
        let plan = try storage.connection.prepare(
          "EXPLAIN QUERY PLAN " + sql + " -- \(explained)"
        ).rows(values) {
          try $0.text(3) ?? ""
        }
        return QueryPlanTests.arms(plan).public
      }
      _ = try store.stateMark()
      #expect(
        try publicArm() == ["SEARCH o USING INDEX objects_public_Thread_lastActivity (<expr>=?)"])
      try Connection(path: path).execute("DROP INDEX objects_public_Thread_lastActivity")
      _ = try store.stateMark()
      // The server's next listing runs: SQLite reads the schema again (EXPLAIN alone does not).
      _ = try store.client(sessionToken: nil).find(query)

      let plan = try publicArm()
      #expect(!Self.walksOthersRows(plan), "\(plan)")
      #expect(plan.contains { $0.contains("INDEX objects_public_") }, "\(plan)")
    }
  }
}

extension HintAttackTests {
  /// Schema 25's migration takes the class column off every `objects_public_…` index that has
  /// it first, whatever its condition: an index made by hand under that name without the class
  /// condition (sqlite3, copying the board's own) held rows keyed by class, which a seek of the
  /// class never read past; made again without the column, it is an index of every row, and an
  /// app's equality on the field seeks it (others' private rows among its entries).
  @Test func theMigrationLeavesAnIndexWithoutTheClassConditionKeyedByClass() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      do {
        let store = try Datastore(path: path, indexes: QueryPlanTests.indexes)
        let storage = try #require(store.engine as? SQLiteEngine)
        try storage.connection.execute(
          "CREATE INDEX objects_public_Note_tag ON objects(public_class, json_extract(data, '$.tag'))"
        )
        try storage.connection.execute("PRAGMA user_version = 24")
      }
      let store = try Datastore(path: path, indexes: QueryPlanTests.indexes)
      let storage = try #require(store.engine as? SQLiteEngine)
      let sql =
        try storage.connection.prepare(
          "SELECT sql FROM sqlite_schema WHERE name = 'objects_public_Note_tag'"
        ).firstRow { try $0.text(0) } ?? nil
      // Left keyed by class (or dropped): never an index of every row.
      #expect(sql == nil || sql?.contains("ON objects(public_class, ") == true, "\(sql ?? "")")
      var query = Query(className: "Note", limit: 20)
      query.conditions = [.equal("tag", .string("x"))]
      for principals in [Principals.anonymous, QueryPlanTests.reader] {
        let plan = QueryPlanTests.arms(try QueryPlanTests.plan(store, query, principals)).public
        #expect(!plan.contains { $0.contains("objects_public_Note_tag (<expr>=?)") }, "\(plan)")
      }
    }
  }
}

extension HintAttackTests {
  /// The lead parser takes the first `ON objects(` of the index's SQL, which may be in its
  /// quoted name: an index made by hand on `rank` whose name reads like one on `tag` gives
  /// `tag` a lead, and a listing by tag (no index serves it) is told the class is unselective.
  @Test func anIndexNameIsNotReadAsItsColumns() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      let storage = try #require(store.engine as? SQLiteEngine)
      try storage.connection.execute(
        """
        CREATE INDEX "x ON objects(json_extract(data, '$.tag'))" \
        ON objects(json_extract(data, '$.rank')) WHERE public_class = 'Note'
        """)
      var query = Query(className: "Note", order: [], limit: 20)
      query.conditions = [.equal("tag", .string("x"))]
      for principals in [Principals.anonymous, QueryPlanTests.reader] {
        let plan = QueryPlanTests.arms(try QueryPlanTests.plan(store, query, principals)).public
        #expect(!Self.walksOthersRows(plan), "\(plan)")
      }
    }
  }
}
