import EngineTestSupport
import Forum
import Testing

@testable import Datastore
@testable import NCMBServer

/// Issue 29: every query the seed's demo app (NCMBMania/Swift_Forum_Demo) makes through the
/// Swift SDK, taken from the query string the SDK sends through the server's own reading of it
/// (`NCMBQuery`), seeks one of the board's indexes (`Board.indexes`) on SQLite: no walk of the
/// objects table, no sort of a class's rows. Dropping the index the comments need makes the
/// check fail.
@Suite("The demo app's queries seek the board's indexes")
struct DemoQueryPlanTests {
  /// ThreadView's `where`, as the Swift SDK encodes it (URLComponents: `:` and `,` kept).
  static let thread =
    "%7B%22thread%22:%7B%22objectId%22:%22BBBBBBBBBBBBBBBB%22,%22__type%22:%22Pointer%22,"
    + "%22className%22:%22Thread%22%7D%7D"

  /// A request's class, its query as the Swift SDK encodes it (sorted, URLComponents), and the
  /// index its public rows must be found by.
  struct Shape: Sendable, CustomTestStringConvertible {
    let name: String
    let className: String
    let query: String
    let index: String
    var testDescription: String { name }
  }

  static let shapes = [
    // ThreadListView: NCMBQuery.getQuery(className: "Thread").find(), no order, no limit.
    Shape(
      name: "the thread list as the demo asks it", className: "Thread", query: "",
      index: "objects_public_createDate"),
    Shape(
      name: "a later page of the thread list", className: "Thread",
      query: "limit=20&order=-createDate&skip=180", index: "objects_public_createDate"),
    // ThreadView: where thread = the pointer, no order, no limit.
    Shape(
      name: "a thread's comments as the demo asks them", className: "Comment",
      query: "where=" + thread, index: "objects_public_Comment_thread_createDate"),
    Shape(
      name: "a thread's comments, oldest first", className: "Comment",
      query: "limit=20&order=createDate&where=" + thread,
      index: "objects_public_Comment_thread_createDate"),
    Shape(
      name: "a thread's comments, newest first", className: "Comment",
      query: "limit=20&order=-createDate&where=" + thread,
      index: "objects_public_Comment_thread_createDate"),
  ]

  /// A reader with a session (their private rows come from `object_readers`) and a caller
  /// without one.
  static let callers = [Principals(userId: "AAAAAAAAAAAAAAAA"), Principals.anonymous]

  /// A board as `forum init` makes it, and its SQLite engine.
  static func board() throws -> (Datastore, SQLiteEngine) {
    let database = try SQLiteFixture().makeDatabase(rules: Board.rules, indexes: Board.indexes)
    _ = try Board.initialize(location: database.ownerLocation)
    let store = try Datastore.open(
      database.ownerLocation, rules: Board.rules, indexes: Board.indexes)
    return (store, try #require(store.engine as? SQLiteEngine))
  }

  static func plan(_ engine: SQLiteEngine, _ sql: String, _ values: [SQLValue]) throws -> [String] {
    try engine.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
      try $0.text(3) ?? ""
    }
  }

  /// What is wrong with a plan: a walk of the objects table, a sort of the public rows, or no
  /// seek of `index` (empty: nothing). The caller's own private rows (after `RIGHT`) are
  /// sorted on their own, and a page past the first sorts only its rows, read by rowid after
  /// the walk or taken from the public rows' own subquery (`DeepPageTests`): those sorts are
  /// allowed.
  static func problems(_ plan: [String], index: String) -> [String] {
    var problems: [String] = []
    if !plan.contains(where: { $0.hasPrefix("SEARCH o USING INDEX \(index) (") }) {
      problems.append("no seek of \(index)")
    }
    problems += plan.filter { $0.hasPrefix("SCAN o") || $0.hasPrefix("SCAN objects") }
    var publicRows = plan.firstIndex(of: "RIGHT") ?? plan.firstIndex(of: "SCAN p") ?? plan.endIndex
    // A deep page walks the public rows in a subquery of their own (issue 33): the merge then
    // sorts that subquery's page (after its `SCAN (subquery-N)`), not the public rows.
    if let seek = plan.firstIndex(where: { $0.hasPrefix("SEARCH o USING INDEX \(index) (") }),
      let page = plan[seek...].firstIndex(where: { $0.hasPrefix("SCAN (subquery-") }),
      page < publicRows
    {
      publicRows = page
    }
    problems += plan[..<publicRows].filter { $0.contains("TEMP B-TREE FOR ORDER BY") }
    return problems
  }

  /// The plans of every shape, for every caller: what is wrong with each.
  static func problems(_ engine: SQLiteEngine) throws -> [String] {
    var found: [String] = []
    for shape in shapes {
      let search = try NCMBQuery.query(
        className: shape.className, try NCMBQuery.parameters(shape.query))
      for caller in callers {
        let (sql, values) = SQLiteEngine.findStatement(
          search.query, readableBy: caller, rules: engine.rules, leads: engine.indexLeads())
        let plan = try plan(engine, sql, values)
        found += problems(plan, index: shape.index).map { "\(shape.name): \($0) in \(plan)" }
      }
    }
    // NCMBQuery.count(): count=1&limit=0 and the thread's pointer.
    let count = try NCMBQuery.query(
      className: "Comment", try NCMBQuery.parameters("count=1&limit=0&where=" + thread))
    #expect(count.withCount && count.listsNothing)
    for caller in callers {
      let (sql, values) = SQLiteEngine.countStatement(
        count.query, readableBy: caller, rules: engine.rules, leads: engine.indexLeads())
      let plan = try plan(engine, sql, values)
      if !plan.contains(where: { $0.contains("INDEX objects_public_Comment_thread_") })
        || plan.contains(where: { $0.hasPrefix("SCAN o") })
      {
        found.append("count: \(plan)")
      }
      // NCMBObject.fetch(): one thread by its id, through the unique index of ids.
      let one = SQLiteEngine.getStatement(
        "Thread", objectId: "BBBBBBBBBBBBBBBB", readableBy: caller
      ).rendered(.sqlite)
      let fetch = try self.plan(engine, one.sql, one.values)
      let byId = "USING INDEX sqlite_autoindex_objects_1 (objectId=?)"
      if !fetch.contains(where: { $0.contains(byId) }) { found.append("fetch: \(fetch)") }
    }
    return found
  }

  @Test func eachDemoQuerySeeksAnIndex() throws {
    let (_, engine) = try DemoQueryPlanTests.board()
    let problems = try DemoQueryPlanTests.problems(engine)
    #expect(problems.isEmpty, "\(problems)")
  }

  @Test("the check fails when the comments' index is gone")
  func theCheckCanFail() throws {
    let (_, engine) = try DemoQueryPlanTests.board()
    try engine.connection.execute("DROP INDEX objects_public_Comment_thread_createDate")
    let problems = try DemoQueryPlanTests.problems(engine)
    // The three comment listings, each for both callers: none seeks the index that is gone,
    // and each sorts its thread's comments (sought in the thread's index by number).
    let comments = problems.filter { $0.contains("comments") }
    #expect(comments.filter { $0.contains(": no seek of ") }.count == 6, "\(problems)")
    #expect(comments.filter { $0.contains(": USE TEMP B-TREE") }.count == 6, "\(problems)")
  }
}
