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
    let (sql, values) = SQLiteEngine.findStatement(
      query, readableBy: principals, leads: storage.indexLeads())
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
      index: "objects_public_createDate"),
    Case(
      name: "20 threads by latest activity",
      query: Query(className: "Thread", order: ["-lastActivity"], limit: 20),
      index: "objects_public_Thread_lastActivity"),
    Case(
      name: "20 threads by latest activity, second page",
      query: Query(className: "Thread", order: ["-lastActivity"], limit: 20, skip: 20),
      index: "objects_public_Thread_lastActivity"),
    Case(
      name: "a thread's comments in creation order",
      query: Query(
        className: "Comment", equalTo: ["thread": pointer], order: ["createDate"], limit: 20),
      index: "objects_public_Comment_thread_createDate"),
    Case(
      name: "a thread's comments as an app's where asks them",
      query: {
        var query = Query(className: "Comment", order: ["createDate"], limit: 20)
        query.conditions = [.equal("thread", pointer)]
        return query
      }(),
      index: "objects_public_Comment_thread_createDate"),
    Case(
      name: "a thread's comments, newest first",
      query: Query(
        className: "Comment", equalTo: ["thread": pointer], order: ["-createDate"], limit: 20),
      index: "objects_public_Comment_thread_createDate"),
    Case(
      name: "20 newest threads, third page",
      query: Query(className: "Thread", order: ["-createDate"], limit: 20, skip: 40),
      index: "objects_public_createDate"),
    Case(
      name: "a thread's comments by number",
      query: Query(
        className: "Comment", equalTo: ["thread": pointer], order: ["number"], limit: 20),
      index: "objects_public_Comment_thread_number"),
    Case(
      name: "a thread's comments by number, from a known number on (keyset page)",
      query: {
        var query = Query(
          className: "Comment", equalTo: ["thread": pointer], order: ["number"], limit: 21)
        query.greaterThan = ["number": 4980]
        return query
      }(),
      index: "objects_public_Comment_thread_number"),
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

  /// Issue 34: `$within` and `$nearSphere` with a distance look up a box of latitudes that an
  /// index declared on `location.latitude` serves (`forum index add Spot location.latitude`).
  @Test func aGeoBoxSeeksTheLatitudeIndex() throws {
    try withTemporaryDirectory { directory in
      // `forum index add Spot location.latitude`, or `forum index geo Spot location`.
      for index in [
        IndexSpec(className: "Spot", fields: ["location.latitude"]),
        IndexSpec(geoOf: "Spot", field: "location"),
      ] {
        let store = try Datastore(path: directory.file("\(index.kind).sqlite"), indexes: [index])
        let tokyo = GeoPoint(latitude: 35.68, longitude: 139.76)
        var box = Query(className: "Spot")
        box.conditions = [
          .withinBox(
            "location", southwest: GeoPoint(latitude: 35.4, longitude: 139.6), northeast: tokyo)
        ]
        var near = Query(className: "Spot")
        near.conditions = [.near("location", tokyo, maxRadians: 0.01)]
        near.nearest = ("location", tokyo)
        for query in [box, near] {
          let plan = QueryPlanTests.arms(
            try QueryPlanTests.plan(store, query, QueryPlanTests.reader))
          #expect(
            plan.public.contains { $0.contains("objects_public_Spot_") && $0.contains("<expr>>?") },
            "\(plan)")
        }
      }
    }
  }

  /// A listing's plan split into its arms: the public rows' (`LEFT` of the merge, or the whole
  /// plan when there is no other arm) and the others'. A page past the first walks its arms'
  /// keys in a co-routine (`p`), then reads the page's rows by rowid and sorts those alone
  /// (`DeepPageTests`): the arms are the co-routine's.
  static func arms(_ plan: [String]) -> (public: [String], private: [String]) {
    var plan = plan
    if plan.first == "CO-ROUTINE p", let scan = plan.firstIndex(of: "SCAN p") {
      let page = Array(plan[(scan + 1)...])
      guard page.first == "SEARCH o USING INTEGER PRIMARY KEY (rowid=?)",
        page.dropFirst().allSatisfy({ $0 == "USE TEMP B-TREE FOR ORDER BY" })
      else { return (plan, plan) }
      plan = Array(plan[1..<scan])
    }
    // A deep page of a caller with private rows counts them first (a scalar subquery) and
    // steps over the public rows inside the public part's own subquery (issue 33), whose page
    // of at most `limit` + that count rows the merge then sorts.
    if let merge = plan.firstIndex(of: "MERGE (UNION ALL)"), plan.first != "MERGE (UNION ALL)",
      plan.first?.hasPrefix("SCALAR SUBQUERY") == true
    {
      plan = Array(plan[merge...])
    }
    guard plan.first == "MERGE (UNION ALL)", let left = plan.firstIndex(of: "LEFT"),
      let right = plan.firstIndex(of: "RIGHT")
    else { return (plan, []) }
    var publicArm = Array(plan[(left + 1)..<right])
    if publicArm.first?.hasPrefix("CO-ROUTINE (subquery-") == true,
      let scan = publicArm.lastIndex(where: { $0.hasPrefix("SCAN (subquery-") })
    {
      let privateCount = Set(plan[(right + 1)...]).subtracting(["USE TEMP B-TREE FOR ORDER BY"])
      publicArm = publicArm[..<scan].filter {
        !privateCount.contains($0) && !$0.hasPrefix("SCALAR SUBQUERY")
          && !$0.hasPrefix("CO-ROUTINE (subquery-") && !$0.hasPrefix("SCAN (subquery-")
      }
    }
    return (publicArm, Array(plan[(right + 1)...]))
  }

  /// A row looked up by its fields as a write's step finds it (`WriteStep.find`: a comment's
  /// thread by its number, a reply's comment by thread and number): a member's private rows
  /// come from one range of `object_readers`' key, already in the rowid order the merge asks
  /// for, so neither arm sorts anything in a temporary table. (With `o.id` as the private arm's
  /// key SQLite sorted its rows at every lookup.)
  @Test func aLookupByFieldsSortsNothing() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      let lookup = Query(
        className: "Comment",
        equalTo: [
          "thread": .pointer(className: "Thread", objectId: "t1"), "number": .int(7),
        ], limit: 1)
      let member = Principals(userId: "AAAAAAAAAAAAAAAA")
      let plan = try QueryPlanTests.plan(store, lookup, member)
      let (publicArm, privateArm) = QueryPlanTests.arms(plan)
      #expect(publicArm.contains { $0.hasPrefix("SEARCH o USING INDEX ") }, "\(plan)")
      #expect(privateArm.contains { $0.hasPrefix("SEARCH r USING PRIMARY KEY") }, "\(plan)")
      #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }
  }

  @Test(arguments: cases)
  func listingUsesIndex(_ listing: Case) throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      for principals in [QueryPlanTests.reader, Principals.anonymous, Principals.master] {
        let plan = try QueryPlanTests.plan(store, listing.query, principals)
        let text = plan.joined(separator: "\n")
        // Public rows: one ordered walk of the index of the class's public rows, no sort. A
        // walk of a whole declared index (`SCAN o USING INDEX`) is one: it holds only them.
        let (publicArm, privateArm) = QueryPlanTests.arms(plan)
        let walk = "SCAN o USING INDEX \(listing.index)"
        #expect(
          publicArm.contains {
            $0.hasPrefix("SEARCH o USING INDEX \(listing.index) (") || $0 == walk
          },
          "\(text)")
        #expect(!publicArm.contains { $0.hasPrefix("SCAN") && $0 != walk }, "\(text)")
        #expect(!publicArm.contains { $0.contains("TEMP B-TREE") }, "\(text)")
        if principals == QueryPlanTests.reader {
          // Private rows the reader may see come from one range of object_readers' key, and
          // each is read by its rowid: no index of objects is walked for them.
          #expect(
            privateArm.contains {
              $0.hasPrefix("SEARCH r USING PRIMARY KEY (principal=? AND class=?)")
            }, "\(text)")
          #expect(
            privateArm.contains { $0 == "SEARCH o USING INTEGER PRIMARY KEY (rowid=?)" },
            "\(text)")
          #expect(!privateArm.contains { $0.contains("USING INDEX") }, "\(text)")
        }
        if principals == .anonymous { #expect(privateArm.isEmpty, "\(text)") }
      }
    }
  }

  /// Issue 29: a later page (`skip`) merges the rows it skips by id and key alone, the public
  /// ones from the index without reading a row, and reads whole only the page's rows, each by
  /// its rowid after the merge.
  @Test func aLaterPageReadsOnlyItsRowsWhole() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      for principals in [QueryPlanTests.reader, Principals.anonymous] {
        let plan = try QueryPlanTests.plan(
          store, Query(className: "Thread", order: ["-createDate"], limit: 20, skip: 4980),
          principals)
        let text = plan.joined(separator: "\n")
        // The merge of ids and keys in the co-routine `p`, the public arm from its index …
        #expect(plan.first == "CO-ROUTINE p", "\(text)")
        #expect(
          QueryPlanTests.arms(plan).public.contains {
            $0.hasPrefix("SEARCH o USING INDEX objects_public_createDate (")
          }, "\(text)")
        // … then the page's 20 rows read whole, each by its rowid, after the merge.
        let scan = try #require(plan.firstIndex(of: "SCAN p"), "\(text)")
        #expect(
          plan[(scan + 1)...].first == "SEARCH o USING INTEGER PRIMARY KEY (rowid=?)", "\(text)")
      }
    }
  }

  /// Issue 29: a thread's comment count (`count=1`) seeks the index on the thread pointer and
  /// reads only that thread's comments (and the reader's own), not the class's rows.
  @Test func commentCountSeeksTheIndex() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      let storage = try #require(store.engine as? SQLiteEngine)
      for principals in [QueryPlanTests.reader, Principals.anonymous] {
        let (sql, values) = SQLiteEngine.countStatement(
          Query(className: "Comment", equalTo: ["thread": QueryPlanTests.pointer], limit: 0),
          readableBy: principals, leads: storage.indexLeads())
        let plan = try storage.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
          try $0.text(3) ?? ""
        }
        let text = plan.joined(separator: "\n")
        #expect(
          plan.contains {
            $0.contains("INDEX objects_public_Comment_thread_")
              && $0.contains("(<expr>=?)")
          }, "\(text)")
        #expect(!plan.contains { $0.hasPrefix("SCAN o") }, "\(text)")
      }
    }
  }

  @Test("the plan check sees a sort or scan when there is no index for it")
  func planCheckCanFail() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      let unindexedOrder = QueryPlanTests.arms(
        try QueryPlanTests.plan(
          store, Query(className: "Thread", order: ["-title"], limit: 20), QueryPlanTests.reader)
      ).public.joined(separator: "\n")
      #expect(unindexedOrder.contains("USE TEMP B-TREE FOR ORDER BY"), "\(unindexedOrder)")
      let unindexedFilter = QueryPlanTests.arms(
        try QueryPlanTests.plan(
          store, Query(className: "Comment", equalTo: ["text": .string("x")], order: ["number"]),
          QueryPlanTests.reader)
      ).public.joined(separator: "\n")
      #expect(!unindexedFilter.contains("<expr>=?"), "\(unindexedFilter)")
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
          "objects_class_createDate", "objects_public_Comment_thread_createDate",
          "objects_public_Comment_thread_number", "objects_public_Thread_lastActivity",
          "objects_public_createDate",
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

/// Issue 20: the indexes on fields cover only their class's rows, and listings still seek them.
@Suite("Indexes partial to their class")
struct PartialIndexTests {
  static func indexes(_ store: Datastore) throws -> [(name: String, sql: String)] {
    let storage = try #require(store.engine as? SQLiteEngine)
    return try storage.connection.prepare(
      """
      SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'objects'
        AND sql IS NOT NULL AND name <> 'objects_class_createDate' ORDER BY name
      """
    ).rows { (try $0.text(0) ?? "", try $0.text(1) ?? "") }
  }

  static let boardIndexes =
    QueryPlanTests.indexes + [
      IndexSpec(className: "Conversation", fields: ["user", "lastActivity"])
    ]

  @Test("every index on a field, the rules' owner and pair indexes too, is partial to its class")
  func everyIndexIsPartial() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(
        path: directory.file("db.sqlite"), rules: boardRulesForTests,
        indexes: PartialIndexTests.boardIndexes)
      let indexes = try PartialIndexTests.indexes(store)
      // 4 declared (over the class's public rows), the Comment and Message owner indexes, the
      // Conversation pair index, and the public rows by creation.
      #expect(indexes.count == 8, "\(indexes)")
      for index in indexes where index.name != "objects_public_createDate" {
        let className = index.name.split(separator: "_").dropFirst().first {
          $0 != "owner" && $0 != "unique" && $0 != "public"
        }
        let column = index.name.hasPrefix("objects_public_") ? "public_class" : "class"
        #expect(index.sql.contains("WHERE \(column) = '\(className ?? "")'"), "\(index)")
      }
    }
  }

  @Test("a listing, an unread count and a pair lookup seek the partial indexes")
  func plansUseThem() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(
        path: directory.file("db.sqlite"), rules: boardRulesForTests,
        indexes: PartialIndexTests.boardIndexes)
      let storage = try #require(store.engine as? SQLiteEngine)
      func plan(_ sql: String) throws -> String {
        try storage.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows { try $0.text(3) ?? "" }
          .joined(separator: "\n")
      }
      let listing = try QueryPlanTests.plan(
        store,
        Query(
          className: "Conversation",
          equalTo: ["user": .pointer(className: "user", objectId: "AAAAAAAAAAAAAAAA")],
          order: ["-lastActivity"], limit: 20),
        QueryPlanTests.reader)
      #expect(
        listing.contains {
          $0.hasPrefix(
            "SEARCH o USING INDEX objects_public_Conversation_user_lastActivity (<expr>=?"
          )
        },
        "\(listing)")
      let pair = try plan(
        "SELECT 1 FROM objects o WHERE o.class = 'Conversation' AND json_extract(o.data, '$.pair') = 'x'"
      )
      #expect(pair.contains("USING INDEX objects_unique_Conversation_pair (class=? AND"), "\(pair)")
      let mine = try plan(
        """
        SELECT count(*) FROM objects c WHERE c.class = 'Comment'
          AND json_extract(c.data, '$.user.objectId') = 'u' AND json_extract(c.data, '$.thread') = 't'
          AND json_extract(c.data, '$.number') > 3
        """)
      #expect(
        mine.contains("SEARCH c USING INDEX objects_owner_Comment_user_thread_number (class=? AND"),
        "\(mine)")
      // A thread's unread comments are counted in the indexes of what the caller may read:
      // the public (thread, number) index, or the caller's own private rows. Counted with
      // `c.class`, SQLite took the owner index by class alone and walked every comment.
      let rule = try #require(boardRulesForTests.parentRules(of: "Thread").first)
      let counting = SQLiteEngine.unreadCounting(
        rule, parentClass: "Thread", caller: QueryPlanTests.reader)
      let everyone = try plan(counting.public.rendered(.sqlite).sql)
      #expect(
        everyone.contains(
          "SEARCH c USING INDEX objects_public_Comment_thread_number (<expr>=? AND"),
        "\(everyone)")
      let some = try plan(counting.private.rendered(.sqlite).sql)
      #expect(some.contains("SEARCH r USING PRIMARY KEY (principal=? AND class=?)"), "\(some)")
      #expect(!some.contains("SCAN c") && !some.contains("SCAN r"), "\(some)")
      // The check can fail: another class's rows are not in the index.
      let other = try plan(
        "SELECT 1 FROM objects o WHERE o.class = 'Thread' AND json_extract(o.data, '$.pair') = 'x'")
      #expect(!other.contains("objects_unique_Conversation_pair"), "\(other)")
    }
  }

  @Test("a board made before (whole-table indexes, rules format 7) migrates: partial, nothing lost")
  func oldBoardMigrates() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      do {
        let store = try Datastore(
          path: path, rules: boardRulesForTests, indexes: PartialIndexTests.boardIndexes)
        let alice = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
        let thread = try alice.create(
          "Thread", fields: ["title": .string("old")], acl: .publicRead(owner: alice.userId!))
        _ = try alice.create(
          "Comment",
          fields: [
            "text": .string("one"),
            "thread": .pointer(className: "Thread", objectId: thread.objectId),
          ],
          acl: .publicRead(owner: alice.userId!))
        // As today's main left it: every index on the whole table, schema 12, rules format 7.
        let storage = try #require(store.engine as? SQLiteEngine)
        let made = try PartialIndexTests.indexes(store)
        for index in made { try storage.connection.execute("DROP INDEX \"\(index.name)\"") }
        try storage.connection.execute("ALTER TABLE objects DROP COLUMN public_class")
        for index in made where index.name != "objects_public_createDate" {
          var whole = String(index.sql[..<index.sql.range(of: "WHERE ")!.lowerBound])
            .replacing("objects_public_", with: "objects_")
          // The declared ones had the class as their first column then (schemas 12 to 24).
          if index.name.hasPrefix("objects_public_") {
            whole = whole.replacing("ON objects(", with: "ON objects(class, ")
          }
          try storage.connection.execute(whole)
        }
        try storage.connection.execute(
          """
          PRAGMA user_version = 12;
          DROP TRIGGER changes_prune;
          UPDATE meta SET value = '7' || substr(value, instr(value, ' ')) WHERE key = 'rules';
          """)
        #expect(try PartialIndexTests.indexes(store).allSatisfy { !$0.sql.contains("WHERE") })
      }
      let store = try Datastore(
        path: path, rules: boardRulesForTests, indexes: PartialIndexTests.boardIndexes)
      let indexes = try PartialIndexTests.indexes(store)
      #expect(indexes.count == 8, "\(indexes)")
      #expect(
        indexes.allSatisfy {
          $0.sql.contains("WHERE class = '") || $0.sql.contains("WHERE public_class")
        }, "\(indexes)")
      let alice = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
      let thread = try #require(try alice.find(Query(className: "Thread", limit: 1)).first)
      #expect(thread["commentCount"] == .int(1))
      let comment = try alice.create(
        "Comment",
        fields: [
          "text": .string("two"),
          "thread": .pointer(className: "Thread", objectId: thread.objectId),
        ],
        acl: .publicRead(owner: alice.userId!))
      #expect(comment["number"] == .int(2))
      let after = try #require(try alice.find(Query(className: "Thread", limit: 1)).first)
      #expect(after["commentCount"] == .int(2) && after["lastCommentNumber"] == .int(2))
    }
  }
}

extension QueryPlanTests {
  /// A listing in a column of the row's own order (none: its id; `objectId`; `createDate`;
  /// `updateDate`), of a class with an index or none, seeks the class's public rows by their
  /// class (an index partial to them): never a walk of the whole table, whose other classes'
  /// and private rows it would read. A member's every `dm` and an app's every subquery ask
  /// without an order; telling the planner the class is unselective (tried for issue 33's deep
  /// pages, not kept) made it walk the table in rowid or `objectId` order.
  @Test func anOrderByTheRowsOwnColumnSeeksTheClass() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      for className in ["Thread", "AppThing"] {
        for order in [[], ["objectId"], ["-createDate"], ["-updateDate"]] {
          for skip in [0, 1000] {
            for principals in [QueryPlanTests.reader, Principals.anonymous] {
              var query = Query(className: className, order: order, limit: 20, skip: skip)
              query.equalTo = className == "AppThing" ? ["pair": .string("x")] : [:]
              let plan = try QueryPlanTests.plan(store, query, principals)
              let publicArm = QueryPlanTests.arms(plan).public
              #expect(
                publicArm.contains {
                  $0.hasPrefix("SEARCH o USING INDEX objects_public_")
                    && $0.contains("(public_class=?")
                }, "\(className) \(order) \(skip): \(plan)")
              #expect(
                !publicArm.contains { $0.hasPrefix("SCAN o") },
                "\(className) \(order) \(skip): \(plan)")
            }
          }
        }
      }
    }
  }
}

extension PartialIndexTests {
  /// Issue 33 (schema 25): a board whose declared indexes had the class as their first column
  /// (schemas 13 to 24), an app's index among them, gets each made again under its name without
  /// it, partial to its class as before; an app's index the opening forum does not declare stays.
  @Test func aSchema24BoardsIndexesLoseTheirClassColumn() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      let note = IndexSpec(className: "Note", fields: ["tag"])
      do {
        let store = try Datastore(
          path: path, rules: boardRulesForTests, indexes: PartialIndexTests.boardIndexes + [note])
        let alice = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
        for title in ["one", "two", "three"] {
          _ = try alice.create(
            "Thread", fields: ["title": .string(title)], acl: .publicRead(owner: alice.userId!))
        }
        let storage = try #require(store.engine as? SQLiteEngine)
        for index in try PartialIndexTests.indexes(store)
        where index.name.hasPrefix("objects_public_") && index.name != "objects_public_createDate" {
          try storage.connection.execute("DROP INDEX \"\(index.name)\"")
          try storage.connection.execute(
            index.sql.replacing("ON objects(", with: "ON objects(public_class, "))
        }
        try storage.connection.execute("PRAGMA user_version = 24")
      }
      let store = try Datastore(
        path: path, rules: boardRulesForTests, indexes: PartialIndexTests.boardIndexes)
      let declared = try PartialIndexTests.indexes(store).filter {
        $0.name.hasPrefix("objects_public_") && $0.name != "objects_public_createDate"
      }
      #expect(
        declared.map(\.name).sorted() == [
          "objects_public_Comment_thread_createDate", "objects_public_Comment_thread_number",
          "objects_public_Conversation_user_lastActivity", "objects_public_Note_tag",
          "objects_public_Thread_lastActivity",
        ], "\(declared)")
      for index in declared {
        #expect(!index.sql.contains("public_class,"), "\(index)")
        #expect(index.sql.contains("WHERE public_class = '"), "\(index)")
      }
      let alice = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
      let titles = try alice.find(Query(className: "Thread", order: ["-lastActivity"], limit: 2))
      #expect(titles.compactMap { $0["title"]?.stringValue } == ["three", "two"])
      let storage = try #require(store.engine as? SQLiteEngine)
      let (sql, values) = SQLiteEngine.findStatement(
        Query(className: "Thread", order: ["-lastActivity"], limit: 20, skip: 40),
        readableBy: QueryPlanTests.reader, rules: boardRulesForTests, leads: storage.indexLeads())
      let plan = try storage.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
        try $0.text(3) ?? ""
      }
      #expect(
        QueryPlanTests.arms(plan).public.contains {
          $0 == "SCAN o USING INDEX objects_public_Thread_lastActivity"
        }, "\(plan)")
    }
  }
}

extension QueryPlanTests {
  /// Issue 33: threads by activity, on the first page and one 2,500 pages in, walk the index in
  /// its order from its end without checking each entry against the class: its condition says
  /// the class (it is not a column to compare), so the middle page of a million-post board steps
  /// over its 50,000 entries at some 360 instructions each instead of 610.
  @Test func aListingByActivityWalksItsIndexWithoutTheClass() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"), indexes: QueryPlanTests.indexes)
      for skip in [0, 49_980] {
        for principals in [QueryPlanTests.reader, Principals.anonymous] {
          let plan = try QueryPlanTests.plan(
            store, Query(className: "Thread", order: ["-lastActivity"], limit: 21, skip: skip),
            principals)
          #expect(
            QueryPlanTests.arms(plan).public == [
              "SCAN o USING INDEX objects_public_Thread_lastActivity"
            ], "\(plan)")
        }
      }
    }
  }
}

@Suite("a flag orders by its presence")
struct FlagOrderPlanTests {
  static let rules = EngineRules(
    flags: [FlagRule(className: "Thread", field: "pinnedDate", role: "moderator")])
  static let indexes = [IndexSpec(className: "Thread", fields: ["pinnedDate", "lastActivity"])]

  /// Pinned threads first, then by activity: one walk of the index the flag's rule renders
  /// (whether the object has the flag, then its activity), no sort, on every page.
  @Test func pinnedFirstWalksTheIndex() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore.open(
        directory.file("db.sqlite"), rules: Self.rules, indexes: Self.indexes)
      let storage = try #require(store.engine as? SQLiteEngine)
      for skip in [0, 20] {
        let query = Query(
          className: "Thread", order: ["-pinnedDate", "-lastActivity"], limit: 21, skip: skip)
        let (sql, values) = SQLiteEngine.findStatement(
          query, readableBy: QueryPlanTests.reader, rules: Self.rules,
          leads: storage.indexLeads())
        let plan = try storage.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
          try $0.text(3) ?? ""
        }.joined(separator: "\n")
        let arms = QueryPlanTests.arms(plan.split(separator: "\n").map(String.init))
        #expect(
          arms.public.contains {
            $0.contains("USING INDEX objects_public_Thread_pinnedDate_lastActivity")
          },
          "\(plan)")
        #expect(!arms.public.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        // Without the rule the same order is by the flag's value, which the index does not hold.
        let (plain, plainValues) = SQLiteEngine.findStatement(
          query, readableBy: QueryPlanTests.reader, leads: storage.indexLeads())
        let sorted = try storage.connection.prepare("EXPLAIN QUERY PLAN " + plain).rows(
          plainValues
        ) { try $0.text(3) ?? "" }
        #expect(
          QueryPlanTests.arms(sorted).public.contains { $0.contains("TEMP B-TREE") }, "\(sorted)")
      }
    }
  }
}

extension QueryPlanTests {
  /// Issue 33: an index another process makes (`forum index add`) under a running server: the
  /// server's next state check (`stateMark`, which a server makes before each answer) sees the
  /// board's meta move, and its listings by that field walk the new index from then on, as on
  /// a board that had it when the server started. Before, they seek the class and sort.
  @Test func anIndexAddedElsewhereIsWalkedAfterTheNextStateCheck() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      let store = try Datastore(path: path, indexes: QueryPlanTests.indexes)
      let storage = try #require(store.engine as? SQLiteEngine)
      let query = Query(className: "Note", order: ["-rank"], limit: 20, skip: 40)
      let walk = "SCAN o USING INDEX objects_public_Note_rank"
      func publicArm() throws -> [String] {
        let (sql, values) = storage.findStatement(query, .anonymous).rendered(.sqlite)
        let plan = try storage.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
          try $0.text(3) ?? ""
        }
        return QueryPlanTests.arms(plan).public
      }
      _ = try store.stateMark()
      #expect(try !publicArm().contains(walk))
      try Datastore.addIndex(IndexSpec(className: "Note", fields: ["rank"]), at: path)
      _ = try store.stateMark()
      #expect(try publicArm() == [walk])
    }
  }
}

extension QueryPlanTests {
  /// Issue 33: every way a query can name a field an index starts with, in its `where` or its
  /// order, finds and counts the class's public rows through an index: never a walk of the
  /// whole table (others' private rows among them). A term that no index serves (an app's
  /// typed equality of a null, a boolean or a double, a range, `$in`, `$nearSphere` without a
  /// distance) leaves the class term a plain equality, which seeks the class.
  @Test func noShapeOnAnIndexedFieldWalksTheTable() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(
        path: directory.file("db.sqlite"),
        indexes: [
          IndexSpec(className: "Note", fields: ["tag", "createDate"]),
          IndexSpec(className: "Note", fields: ["score"]),
          IndexSpec(className: "Note", fields: ["createDate"]),
          IndexSpec(geoOf: "Note", field: "at"),
        ])
      let storage = try #require(store.engine as? SQLiteEngine)
      let tokyo = GeoPoint(latitude: 35.68, longitude: 139.76)
      let box = QueryCondition.withinBox(
        "at", southwest: GeoPoint(latitude: 35.4, longitude: 139.6), northeast: tokyo)
      let conditions: [[QueryCondition]] = [
        [], [.equal("tag", .string("x"))], [.equal("tag", .null)], [.equal("tag", .bool(true))],
        [.equal("tag", .double(1.5))], [.equal("tag", .array([.int(1)]))],
        [.compare("score", .greaterThan, .int(3))], [.isIn("tag", [.string("a"), .int(1)])],
        [.notEqual("tag", .string("x"))], [.exists("tag", true)],
        [.or([.equal("tag", .string("a")), .equal("score", .int(2))])],
        [.equal("createDate", .string("2026-01-01T00:00:00.000Z"))], [box],
        [.near("at", tokyo, maxRadians: 0.01)], [.near("at", tokyo, maxRadians: nil)],
      ]
      let equalities: [[String: JSONValue]] = [
        [:], ["tag": .string("x")], ["tag": .null], ["score": .int(2)], ["other": .int(1)],
      ]
      let orders = [[], ["-createDate"], ["tag"], ["-score"], ["objectId"], ["-updateDate"]]
      var checked = 0
      for condition in conditions {
        for equalTo in equalities {
          for order in orders {
            for nearest in [false, true] where !nearest || condition.isEmpty {
              for (principals, skip) in [
                (QueryPlanTests.reader, 0), (.anonymous, 0), (QueryPlanTests.reader, 100),
                (.anonymous, 100),
              ] {
                var query = Query(
                  className: "Note", equalTo: equalTo, order: order, limit: 20, skip: skip)
                query.conditions = condition
                if nearest { query.nearest = ("at", tokyo) }
                query.greaterThan = order == ["-score"] ? ["score": 1] : [:]
                let plan = try QueryPlanTests.plan(store, query, principals)
                let (sql, values) = SQLiteEngine.countStatement(
                  query, readableBy: principals, leads: storage.indexLeads())
                let count = try storage.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(
                  values
                ) { try $0.text(3) ?? "" }
                for rows in [QueryPlanTests.arms(plan).public, count] {
                  #expect(
                    !rows.contains { $0 == "SCAN o" || $0.hasPrefix("SCAN o USING COVERING") },
                    "\(condition) \(equalTo) \(order) \(nearest): \(rows)")
                  #expect(
                    rows.contains { $0.contains("INDEX objects_public_") },
                    "\(condition) \(equalTo) \(order) \(nearest): \(rows)")
                }
                checked += 1
              }
            }
          }
        }
      }
      #expect(checked == 4 * (conditions.count * equalities.count * orders.count + 30))
    }
  }
}
