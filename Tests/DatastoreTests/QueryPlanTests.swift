import Foundation
import Testing

@testable import Datastore

@Suite("Listings walk an index")
struct QueryPlanTests {
  static let indexes = [
    IndexSpec(className: "Thread", fields: ["lastActivity"]),
    IndexSpec(className: "Comment", fields: ["thread", "createDate"]),
    IndexSpec(className: "Comment", fields: ["thread", "number"]),
  ]

  /// The rows of `EXPLAIN QUERY PLAN` for the exact statement `find` runs for `query`.
  static func plan(_ store: Datastore, _ query: Query, _ principals: Principals) throws
    -> [String]
  {
    let storage = try #require(store.engine as? SQLiteEngine)
    let (sql, values) = SQLiteEngine.findStatement(query, readableBy: principals)
    return try storage.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
      try $0.text(3) ?? ""
    }
  }

  /// A reader with a session and a role, so the read filter tests several principals.
  static let reader = Principals(userId: "AAAAAAAAAAAAAAAA", roles: ["mods"])

  struct Case: Sendable, CustomTestStringConvertible {
    let name: String
    let query: Query
    let index: String
    var testDescription: String { name }
  }

  static let pointer = JSONValue.pointer(className: "Thread", objectId: "BBBBBBBBBBBBBBBB")

  static let cases = [
    Case(
      name: "20 newest threads",
      query: Query(className: "Thread", order: ["-createDate"], limit: 20),
      index: "objects_class_createDate"),
    Case(
      name: "20 threads by latest activity",
      query: Query(className: "Thread", order: ["-lastActivity"], limit: 20),
      index: "objects_Thread_lastActivity"),
    Case(
      name: "20 threads by latest activity, second page",
      query: Query(className: "Thread", order: ["-lastActivity"], limit: 20, skip: 20),
      index: "objects_Thread_lastActivity"),
    Case(
      name: "a thread's comments in creation order",
      query: Query(
        className: "Comment", equalTo: ["thread": pointer], order: ["createDate"], limit: 20),
      index: "objects_Comment_thread_createDate"),
    Case(
      name: "a thread's comments by number",
      query: Query(
        className: "Comment", equalTo: ["thread": pointer], order: ["number"], limit: 20),
      index: "objects_Comment_thread_number"),
    Case(
      name: "a thread's comments by number, from a known number on (keyset page)",
      query: {
        var query = Query(
          className: "Comment", equalTo: ["thread": pointer], order: ["number"], limit: 21)
        query.greaterThan = ["number": 4980]
        return query
      }(),
      index: "objects_Comment_thread_number"),
  ]

  /// A keyset page seeks the index to its first key: the plan names the range on the number.
  @Test func keysetPageSeeksTheIndex() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      var query = Query(
        className: "Comment", equalTo: ["thread": QueryPlanTests.pointer], order: ["number"])
      query.greaterThan = ["number": 4980]
      query.lessThan = ["number": 5000]
      let plan = try QueryPlanTests.plan(store, query, QueryPlanTests.reader)
      #expect(plan.contains { $0.contains("<expr>>? AND <expr><?") }, "\(plan)")
    }
  }

  @Test(arguments: cases)
  func listingUsesIndex(_ listing: Case) throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      for principals in [QueryPlanTests.reader, Principals.anonymous, Principals.master] {
        let plan = try QueryPlanTests.plan(store, listing.query, principals)
        let text = plan.joined(separator: "\n")
        #expect(
          plan.contains { $0.hasPrefix("SEARCH o USING INDEX \(listing.index) (") }, "\(text)")
        #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(text)")
        #expect(!text.contains("SCAN o") && !text.contains("SCAN objects"), "\(text)")
        #expect(!text.contains("TEMP B-TREE"), "\(text)")
        if principals == QueryPlanTests.reader {
          // Private rows the reader may see come from one range of object_readers' key.
          #expect(
            plan.contains {
              $0.hasPrefix("SEARCH r USING PRIMARY KEY (principal=? AND class=?)")
            }, "\(text)")
        }
      }
    }
  }

  @Test("the plan check sees a sort or scan when there is no index for it")
  func planCheckCanFail() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      let unindexedOrder = try QueryPlanTests.plan(
        store, Query(className: "Thread", order: ["-title"], limit: 20), QueryPlanTests.reader
      ).joined(separator: "\n")
      #expect(unindexedOrder.contains("USE TEMP B-TREE FOR ORDER BY"), "\(unindexedOrder)")
      let unindexedFilter = try QueryPlanTests.plan(
        store, Query(className: "Comment", equalTo: ["text": .string("x")], order: ["number"]),
        QueryPlanTests.reader
      ).joined(separator: "\n")
      #expect(!unindexedFilter.contains("(class=? AND"), "\(unindexedFilter)")
      #expect(unindexedFilter.contains("TEMP B-TREE"), "\(unindexedFilter)")
    }
  }

  @Test("declared indexes exist once, also after reopening")
  func indexesAreCreated() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      _ = try Datastore(path: path, indexes: QueryPlanTests.indexes)
      let store = try Datastore(path: path, indexes: QueryPlanTests.indexes)
      let storage = try #require(store.engine as? SQLiteEngine)
      let names = try storage.connection.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'objects_%' ORDER BY name"
      ).rows { try $0.text(0) ?? "" }
      #expect(
        names == [
          "objects_Comment_thread_createDate", "objects_Comment_thread_number",
          "objects_Thread_lastActivity", "objects_class_createDate",
        ])
    }
  }

  @Test("the indexed listings return the right rows in the right order")
  func indexedListingsAreCorrect() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      let alice = try store.loginAnonymously(secret: Datastore.newSecret())
      let bob = try store.loginAnonymously(secret: Datastore.newSecret())
      let client = try store.client(sessionToken: alice.sessionToken)
      var threads: [DataObject] = []
      for number in 1...30 {
        // Activity runs against creation order; every third thread is private to alice.
        let acl =
          number % 3 == 0
          ? ACL(readers: [alice.user.objectId], writers: [alice.user.objectId])
          : .publicRead(owner: alice.user.objectId)
        threads.append(
          try client.create(
            "Thread",
            fields: ["title": .string("t\(number)"), "lastActivity": .int(Int64(100 - number))],
            acl: acl))
      }
      let bobClient = try store.client(sessionToken: bob.sessionToken)
      let byActivity = try bobClient.find(
        Query(className: "Thread", order: ["-lastActivity"], limit: 20))
      let visible = threads.filter { $0.acl.readers.contains("*") }
      #expect(byActivity.map(\.objectId) == Array(visible.prefix(20)).map(\.objectId))
      let newest = try bobClient.find(Query(className: "Thread", order: ["-createDate"], limit: 5))
      // Same-millisecond creations fall back to insertion order, newest first.
      #expect(newest.map(\.objectId) == Array(visible.reversed().prefix(5)).map(\.objectId))

      let thread = threads[0]
      let pointer = JSONValue.pointer(className: "Thread", objectId: thread.objectId)
      for number in 1...5 {
        try client.create("Comment", fields: ["thread": pointer, "number": .int(Int64(number))])
      }
      try client.create(
        "Comment",
        fields: [
          "thread": .pointer(className: "Thread", objectId: threads[1].objectId), "number": .int(9),
        ])
      let comments = try bobClient.find(
        Query(className: "Comment", equalTo: ["thread": pointer], order: ["-number"], limit: 3))
      #expect(comments.compactMap { $0["number"]?.intValue } == [5, 4, 3])
    }
  }
}
