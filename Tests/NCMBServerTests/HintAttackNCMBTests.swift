import EngineTestSupport
import Forum
import Testing

@testable import Datastore
@testable import NCMBServer

/// An app on the board's own threads names the pin's date in its `where`: at the top with an
/// order by objectId, or in an `$inQuery` (a subquery has no order). The pin is a flag ordered
/// by presence, so the board's `pinnedDate, lastActivity` index holds whether a thread is
/// pinned, not when: nothing serves the equality, yet the class term was said unselective.
@Suite("an app's where on the pin's date")
struct HintAttackNCMBTests {
  @Test func aWhereOnThePinsDateSeeksTheClass() throws {
    let (_, engine) = try DemoQueryPlanTests.board()
    let pinned = "%7B%22pinnedDate%22:1767225600000%7D"
    var queries = [
      try NCMBQuery.query(
        className: "Thread", try NCMBQuery.parameters("order=objectId&where=" + pinned)
      ).query
    ]
    // `{"thread":{"$inQuery":{"className":"Thread","where":{"pinnedDate":…}}}}` as
    // `NCMBQuery.subquery` reads it.
    var inner = Query(className: "Thread", limit: NCMBQuery.maximumSubqueryObjects)
    inner.conditions = try NCMBQuery.conditions(["pinnedDate": .int(1_767_225_600_000)])
    queries.append(inner)
    for query in queries {
      for caller in DemoQueryPlanTests.callers {
        let (sql, values) = SQLiteEngine.findStatement(
          query, readableBy: caller, rules: engine.rules, leads: engine.indexLeads())
        let plan = try DemoQueryPlanTests.plan(engine, sql, values)
        #expect(!plan.contains { $0.hasPrefix("SCAN o") }, "\(query.order) \(plan)")
        #expect(
          plan.contains { $0.hasPrefix("SEARCH o USING INDEX objects_public_") },
          "\(query.order) \(plan)")
      }
    }
  }
}
