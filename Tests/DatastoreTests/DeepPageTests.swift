import Foundation
import Testing

@testable import Datastore

/// Issue 33: a page past the first steps over the rows before it as their keys only, walking
/// the listing's index, and reads only its own rows whole (by rowid). Before, every row stepped
/// over was read whole from `objects` and carried through the merge of the public and private
/// parts: `list --page 4000` on the million-post board cost 6x page 1.
@Suite("SQLite: a deep page reads only its own rows")
struct DeepPageTests {
  @Test func aDeepPageWalksKeysThenReadsItsRows() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(
        path: directory.file("db.sqlite"),
        indexes: [IndexSpec(className: "Thread", fields: ["lastActivity"])])
      let carol = try store.loginAnonymously(secret: Datastore.newSecret())
      let alice = try store.loginAnonymously(secret: Datastore.newSecret())
      let client = store.client(carol)
      // Ties in the order (three threads a value), public threads and a few private ones.
      for number in 1...120 {
        try client.create(
          "Thread", fields: ["lastActivity": .int(Int64(number / 3))],
          acl: .publicRead(owner: carol.user.objectId))
      }
      for number in 1...10 {
        try client.create(
          "Thread", fields: ["lastActivity": .int(Int64(number * 7))],
          acl: ACL(readers: [carol.user.objectId], writers: [carol.user.objectId]))
      }
      let engine = try #require(store.engine as? SQLiteEngine)
      var deep = Query(className: "Thread", order: ["-lastActivity"], limit: 20, skip: 100)
      let (sql, values) = SQLiteEngine.findStatement(
        deep, readableBy: carol.principals, leads: engine.indexLeads())
      let plan = try engine.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
        try $0.text(3) ?? ""
      }
      // The keys' merge is a subquery walked first; `objects` is then read by rowid per row.
      #expect(plan.contains("SCAN p"), "\(plan)")
      let afterScan = plan.drop { $0 != "SCAN p" }
      #expect(
        afterScan.contains { $0.hasPrefix("SEARCH o USING INTEGER PRIMARY KEY") }, "\(plan)")
      // The same rows in the same order as the whole listing, page by page, for every caller.
      for caller in [carol, alice] {
        let reader = store.client(caller)
        var whole = Query(className: "Thread", order: ["-lastActivity"], limit: 1000)
        let all = try reader.find(whole).map(\.objectId)
        #expect(all.count == (caller.user.objectId == carol.user.objectId ? 130 : 120))
        var paged: [String] = []
        for skip in stride(from: 0, to: all.count, by: 20) {
          deep.skip = skip
          paged += try reader.find(deep).map(\.objectId)
        }
        #expect(paged == all)
        whole.order = ["lastActivity"]
        deep.order = ["lastActivity"]
        deep.skip = 37
        #expect(
          try reader.find(deep).map(\.objectId)
            == Array(reader.find(whole).map(\.objectId)[37..<57]))
        deep.order = ["-lastActivity"]
      }
    }
  }

  /// Issue 33: SQLite (3.40) computes an indexed expression from the row, so a merge of the
  /// public and private parts that stepped over public rows read each of them. The public part
  /// now steps over its rows in its index alone: a page 100 rows deep costs a few virtual
  /// machine steps a row more than the first (counted by SQLite, not timed), where a read of
  /// each row cost some twenty.
  @Test func aDeepPageStepsOverPublicRowsInTheIndex() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(
        path: directory.file("db.sqlite"),
        indexes: [IndexSpec(className: "Thread", fields: ["lastActivity"])])
      let carol = try store.loginAnonymously(secret: Datastore.newSecret())
      let client = store.client(carol)
      for number in 1...400 {
        try client.create(
          "Thread", fields: ["lastActivity": .int(Int64(number))],
          acl: .publicRead(owner: carol.user.objectId))
      }
      for number in 1...5 {
        try client.create(
          "Thread", fields: ["lastActivity": .int(Int64(number * 50))],
          acl: ACL(readers: [carol.user.objectId], writers: [carol.user.objectId]))
      }
      let engine = try #require(store.engine as? SQLiteEngine)
      func steps(skip: Int) throws -> Int {
        let query = Query(className: "Thread", order: ["-lastActivity"], limit: 20, skip: skip)
        let (sql, values) = SQLiteEngine.findStatement(
          query, readableBy: carol.principals, leads: engine.indexLeads())
        let statement = try engine.connection.prepare(sql)
        _ = statement.virtualMachineSteps(reset: true)
        #expect(try statement.rows(values) { _ in 1 }.count == 20)
        return statement.virtualMachineSteps()
      }
      let first = try steps(skip: 1)
      let deep = try steps(skip: 301)
      #expect((deep - first) / 300 <= 8, "page 1: \(first) steps, 300 rows deeper: \(deep)")
    }
  }
}
