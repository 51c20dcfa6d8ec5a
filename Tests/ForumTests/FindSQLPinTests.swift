import Testing

@testable import Datastore
@testable import Forum

/// The statements both engines run to find, count and get objects, pinned as main rendered them
/// at b82aff6 (before finding objects was written once in the SQL core, issue 31): the plan
/// suites check what each plan reads, and the same text keeps the same plan. A statement that
/// moves on purpose (a new shape of the deep page; the private arm's rowid key read from its
/// reader row, `m.id`) is pinned again here, by its row, with the plan suites run on it
/// (`swift test --filter FindSQLPinTests` prints every row on failure).
@Suite("the find statements' SQL, pinned")
struct FindSQLPinTests {
  static func digest(_ sql: String, _ values: [SQLValue]) -> String {
    let bound = values.map { "\($0)" }.joined(separator: "|")
    return String(SHA256.hex(SHA256.hash(sql + "\n#\n" + bound)).prefix(16))
  }

  static func digest(_ sql: String, _ values: [PostgresValue]) -> String {
    let bound = values.map { "\($0)" }.joined(separator: "|")
    return String(SHA256.hex(SHA256.hash(sql + "\n#\n" + bound)).prefix(16))
  }

  static let callers: [(String, Principals)] = [
    ("anonymous", .anonymous), ("user", Principals(userId: "u1")),
    ("moderator", Principals(userId: "u2", roles: ["moderators", "banned"])),
    ("master", .master),
  ]

  static var queries: [(String, Query)] {
    let thread = JSONValue.pointer(className: Board.threadClass, objectId: "t1")
    var list = Query(className: Board.threadClass, order: ["-lastActivity"], limit: 20)
    var queries: [(String, Query)] = [("list", list)]
    list.skip = 40
    queries.append(("deep list", list))
    list.skip = 0
    list.unreadOnly = true
    queries.append(("unread list", list))
    var comments = Query(
      className: Board.commentClass, equalTo: ["thread": thread], order: ["number"], limit: 50)
    queries.append(("comments", comments))
    comments.greaterThan = ["number": 10]
    comments.lessThan = ["number": 90]
    queries.append(("comments between", comments))
    comments.skip = 5
    queries.append(("comments between, skipped", comments))
    var app = Query(className: "Other", order: ["-createDate"])
    app.conditions = [
      .equal("thread", thread), .equal("name", .string("x")), .notEqual("n", .int(3)),
      .compare("score", .greaterThanOrEqual, .double(1.5)), .isIn("tag", [.string("a"), .int(1)]),
      .exists("gone", false), .arrayContainsAll("tags", [.string("a"), .string("b")]),
      .matches("name", pattern: "^a", options: "i"),
      .or([.equal("a", .bool(true)), .equal("b", .null)]),
    ]
    queries.append(("app conditions", app))
    app.skip = 100
    queries.append(("app conditions, skipped", app))
    var near = Query(className: "Place", limit: 10)
    near.conditions = [.near("at", GeoPoint(latitude: 35, longitude: 139), maxRadians: 0.1)]
    near.nearest = ("at", GeoPoint(latitude: 35, longitude: 139))
    queries.append(("near", near))
    var box = Query(className: "Place")
    box.conditions = [
      .withinBox(
        "at", southwest: GeoPoint(latitude: 30, longitude: 130),
        northeast: GeoPoint(latitude: 40, longitude: 140))
    ]
    queries.append(("box", box))
    let messages = Query(
      className: Board.messageClass,
      equalTo: ["conversation": .pointer(className: Board.conversationClass, objectId: "c1")],
      order: ["number"], limit: 30, skip: 10)
    queries.append(("messages", messages))
    queries.append(
      (
        "equal null, text, number",
        Query(className: "Other", equalTo: ["a": .null, "b": .string("x"), "c": .int(2)])
      ))
    return queries
  }

  static let keyColumns: Set<String> = [
    "key_thread", "key_number", "key_name", "key_conversation", "key_c", "geo_at_lat",
    "geo_at_lon",
  ]

  /// The first columns of the indexes a board has (schema 25), with a GeoPoint index on the
  /// places the queries above look near: a query that seeks or orders by one says so.
  static var leads: SQLiteIndexLeads {
    let specs = (Board.indexes + [IndexSpec(geoOf: "Place", field: "at")])
      .map(SQLiteEngine.ordered).filter { $0.kind == .ordered }
    return SQLiteIndexLeads(
      indexes: specs.map {
        (SQLiteEngine.indexName($0), SQLiteEngine.indexSQL($0, rules: Board.rules))
      })
  }

  static func all() -> String {
    let rules = Board.rules
    let leads = Self.leads
    let privateClasses = PostgresRules(rules).privateClasses
    var rows: [String] = []
    for (callerName, caller) in callers {
      for (queryName, query) in queries {
        let name = "\(queryName) | \(callerName)"
        let find = SQLiteEngine.findStatement(
          query, readableBy: caller, rules: rules, leads: leads)
        rows.append("sqlite find | \(name) | \(digest(find.sql, find.values))")
        let count = SQLiteEngine.countStatement(
          query, readableBy: caller, rules: rules, leads: leads)
        rows.append("sqlite count | \(name) | \(digest(count.sql, count.values))")
        let terms = SQLiteEngine.whereClause(query, caller, rules: rules).rendered(.sqlite)
        rows.append("sqlite where | \(name) | \(digest(terms.sql, terms.values))")
        let pgFind = PostgresEngine.findStatement(
          query, as: caller, keyColumns: keyColumns, rules: rules, privateClasses: privateClasses)
        rows.append("postgres find | \(name) | \(digest(pgFind.sql, pgFind.values))")
        let from = PostgresEngine.source(
          query.className, privateClasses: privateClasses, keyColumns: keyColumns,
          parent: PostgresEngine.parentNamed(query, rules: rules))
        let filter = PostgresEngine.whereClause(
          query, caller, keyColumns: keyColumns, rules: rules)
        let pgCount = ("SELECT count(*) FROM \(sql: from) \(sql: filter)" as SQL).postgres
        rows.append("postgres count | \(name) | \(digest(pgCount.sql, pgCount.values))")
      }
      for className in [Board.threadClass, Board.messageClass] {
        let get = SQLiteEngine.getStatement(className, objectId: "o1", readableBy: caller)
          .rendered(.sqlite)
        rows.append("sqlite get | \(className) | \(callerName) | \(digest(get.sql, get.values))")
        let from = PostgresEngine.source(
          className, privateClasses: privateClasses, keyColumns: keyColumns, ids: ["o1"])
        let pgGet: SQL = """
          SELECT \(sql: PostgresEngine.objectColumns) FROM \(sql: from)
          WHERE o.object_id = \("o1") AND o.class = \(literal: className)\
          \(sql: PostgresEngine.readFilter(caller))
          """
        let rendered = pgGet.postgres
        rows.append(
          "postgres get | \(className) | \(callerName) | \(digest(rendered.sql, rendered.values))")
      }
    }
    return rows.joined(separator: "\n")
  }

  /// Pinned from main at b82aff6. Moved on purpose, with the PostgreSQL plan suites run on them:
  /// the 16 `app conditions` rows of PostgreSQL, whose seek term of an app's `where` equality now
  /// stands before the typed conditions, as on SQLite (`QuerySQL.fieldTerms`; PostgreSQL orders
  /// a filter's terms by their cost, and the seek term is an index condition where one serves);
  /// SQLite's find and count rows of every query that seeks or orders by a field a board's
  /// index starts with (schema 25, issue 33: their public class term is said to hold for most
  /// rows, `SQLiteIndexLeads`, so the planner walks that index without the class in front).
  static let pinned = """
    sqlite find | list | anonymous | 067da9f57c2e4879
    sqlite count | list | anonymous | fcf5053bed621ceb
    sqlite where | list | anonymous | 739baced024b7404
    postgres find | list | anonymous | 4c88cff9134e700a
    postgres count | list | anonymous | bf160f5de60e5ce4
    sqlite find | deep list | anonymous | b4ca0fb334a2b37d
    sqlite count | deep list | anonymous | fcf5053bed621ceb
    sqlite where | deep list | anonymous | 739baced024b7404
    postgres find | deep list | anonymous | a9d51a4822c889c9
    postgres count | deep list | anonymous | bf160f5de60e5ce4
    sqlite find | unread list | anonymous | 6e61d3dec41e0d2a
    sqlite count | unread list | anonymous | bea47acfb4607bff
    sqlite where | unread list | anonymous | 739baced024b7404
    postgres find | unread list | anonymous | a67c3a68abaafd94
    postgres count | unread list | anonymous | 90acac5223c58ec6
    sqlite find | comments | anonymous | e8ca9a0e8654108e
    sqlite count | comments | anonymous | 236824a9572e03ed
    sqlite where | comments | anonymous | 0e29a6b10a6c3788
    postgres find | comments | anonymous | f45b788c9f5afeb5
    postgres count | comments | anonymous | 87acc3e71fa57333
    sqlite find | comments between | anonymous | 7ce188d9357fef65
    sqlite count | comments between | anonymous | 8571a90dc41ad2c6
    sqlite where | comments between | anonymous | bf471e783022e087
    postgres find | comments between | anonymous | fd675fc885f4875f
    postgres count | comments between | anonymous | e741c805bd5fca3e
    sqlite find | comments between, skipped | anonymous | 58b3baf77cc7885e
    sqlite count | comments between, skipped | anonymous | 8571a90dc41ad2c6
    sqlite where | comments between, skipped | anonymous | bf471e783022e087
    postgres find | comments between, skipped | anonymous | 211debedbbda071e
    postgres count | comments between, skipped | anonymous | e741c805bd5fca3e
    sqlite find | app conditions | anonymous | b2ed0034aff48784
    sqlite count | app conditions | anonymous | d696730c8467637d
    sqlite where | app conditions | anonymous | f96bccd606275bcc
    postgres find | app conditions | anonymous | 15fff5c0d9ff9b5a
    postgres count | app conditions | anonymous | b418ff77123385c5
    sqlite find | app conditions, skipped | anonymous | f123dada357c2376
    sqlite count | app conditions, skipped | anonymous | d696730c8467637d
    sqlite where | app conditions, skipped | anonymous | f96bccd606275bcc
    postgres find | app conditions, skipped | anonymous | 8fda91f33c94b95c
    postgres count | app conditions, skipped | anonymous | b418ff77123385c5
    sqlite find | near | anonymous | e1d218f603d2f144
    sqlite count | near | anonymous | 72546691c048f476
    sqlite where | near | anonymous | 84711c63171d3e2a
    postgres find | near | anonymous | 11b0727e5eb37fe4
    postgres count | near | anonymous | 64cf7891bc05f67e
    sqlite find | box | anonymous | 11a278b9a6ed86c2
    sqlite count | box | anonymous | e9a4ca6f101b95e4
    sqlite where | box | anonymous | bad71306944db156
    postgres find | box | anonymous | a86e710637c821d3
    postgres count | box | anonymous | 7f75b2220a210a3d
    sqlite find | messages | anonymous | 348bba9edd54b5a2
    sqlite count | messages | anonymous | d56c8da2362d5d12
    sqlite where | messages | anonymous | c32a0716031e212f
    postgres find | messages | anonymous | 21d8da8319b71274
    postgres count | messages | anonymous | 5a3bf538dae87144
    sqlite find | equal null, text, number | anonymous | 8f0beddf4bb41205
    sqlite count | equal null, text, number | anonymous | 0ed6d305ad62304e
    sqlite where | equal null, text, number | anonymous | be1f66371b998ccd
    postgres find | equal null, text, number | anonymous | 0f3bee0ac1a1fa73
    postgres count | equal null, text, number | anonymous | deac2c29e03159e0
    sqlite get | Thread | anonymous | 777ce426a4fe4254
    postgres get | Thread | anonymous | 84904e565cc2fb0c
    sqlite get | Message | anonymous | 24734f5aabb92e38
    postgres get | Message | anonymous | 6abd3e42a7fc6aa7
    sqlite find | list | user | 2b38fab5ee5bbd9b
    sqlite count | list | user | ff8bd20202951854
    sqlite where | list | user | b54adbb9922c4d41
    postgres find | list | user | 35cceb64fb310b9c
    postgres count | list | user | 0753272faa539aff
    sqlite find | deep list | user | e93f7893f790392f
    sqlite count | deep list | user | ff8bd20202951854
    sqlite where | deep list | user | b54adbb9922c4d41
    postgres find | deep list | user | 89c64193a61d513a
    postgres count | deep list | user | 0753272faa539aff
    sqlite find | unread list | user | 55451e7a3a072073
    sqlite count | unread list | user | 47f93a5e87f90fcb
    sqlite where | unread list | user | b54adbb9922c4d41
    postgres find | unread list | user | 021258cb939c8cf6
    postgres count | unread list | user | 60c3212d1497ce90
    sqlite find | comments | user | b4f5158e933d4af2
    sqlite count | comments | user | 79fd2c52e03685d0
    sqlite where | comments | user | 3d13fa8841f0700c
    postgres find | comments | user | dfc62d0ef48b7666
    postgres count | comments | user | 1a7ed2eefc5d8259
    sqlite find | comments between | user | 181772fbb7725eaa
    sqlite count | comments between | user | f871ae16ff8f7601
    sqlite where | comments between | user | 2f43f847fcc5a6dc
    postgres find | comments between | user | 61ec73281171c2d9
    postgres count | comments between | user | 84ac6d6abca3663c
    sqlite find | comments between, skipped | user | 0f8f0e2e19209bcd
    sqlite count | comments between, skipped | user | f871ae16ff8f7601
    sqlite where | comments between, skipped | user | 2f43f847fcc5a6dc
    postgres find | comments between, skipped | user | a81ad685d5905807
    postgres count | comments between, skipped | user | 84ac6d6abca3663c
    sqlite find | app conditions | user | cb69093e7e7b967e
    sqlite count | app conditions | user | 5c3be551fcf60da8
    sqlite where | app conditions | user | 8d2c49f3f0d431f1
    postgres find | app conditions | user | fc88808bd5234c90
    postgres count | app conditions | user | 0b4f404a7b3c4c4e
    sqlite find | app conditions, skipped | user | c3709906901aab47
    sqlite count | app conditions, skipped | user | 5c3be551fcf60da8
    sqlite where | app conditions, skipped | user | 8d2c49f3f0d431f1
    postgres find | app conditions, skipped | user | 008d4c2707ef8394
    postgres count | app conditions, skipped | user | 0b4f404a7b3c4c4e
    sqlite find | near | user | 46378e17cd8a25be
    sqlite count | near | user | 422cbd5635dac3bd
    sqlite where | near | user | 04b0ebc68a2739e9
    postgres find | near | user | 8c68f23e347a0a04
    postgres count | near | user | 19ce351c50b0187b
    sqlite find | box | user | f725e82e82643837
    sqlite count | box | user | 93c5a8afe98f6b5b
    sqlite where | box | user | f09a3ddf631097c0
    postgres find | box | user | 37ead2ff1c48386b
    postgres count | box | user | 984b9ec00c6f78fc
    sqlite find | messages | user | a271501bac922429
    sqlite count | messages | user | ba56398154d78122
    sqlite where | messages | user | 073b1d8c48e99382
    postgres find | messages | user | e827f9807cd9cd4f
    postgres count | messages | user | 41527cf153eacd57
    sqlite find | equal null, text, number | user | a717bc707d2346af
    sqlite count | equal null, text, number | user | 49702af290d2802d
    sqlite where | equal null, text, number | user | a50b49858577fc10
    postgres find | equal null, text, number | user | 65a15c82c5736501
    postgres count | equal null, text, number | user | ebe1df34a2a2a37a
    sqlite get | Thread | user | e4c13e20585d2f4c
    postgres get | Thread | user | 91a4f85a26920008
    sqlite get | Message | user | 73f89e90c5136dd9
    postgres get | Message | user | cb2de6fbf9936e16
    sqlite find | list | moderator | cfc0a1221f0a6612
    sqlite count | list | moderator | 77ff40601ef1ae0b
    sqlite where | list | moderator | 324f656a3b7cbd1f
    postgres find | list | moderator | cfb131398999730d
    postgres count | list | moderator | 76563239c9fb10ae
    sqlite find | deep list | moderator | 2fb88f0369bc37aa
    sqlite count | deep list | moderator | 77ff40601ef1ae0b
    sqlite where | deep list | moderator | 324f656a3b7cbd1f
    postgres find | deep list | moderator | 0b6e6a4b224f899b
    postgres count | deep list | moderator | 76563239c9fb10ae
    sqlite find | unread list | moderator | 6d120fc664426530
    sqlite count | unread list | moderator | 37583b34e04fc0f3
    sqlite where | unread list | moderator | 324f656a3b7cbd1f
    postgres find | unread list | moderator | 2517d53f024560de
    postgres count | unread list | moderator | e749de4cdfd7a8ed
    sqlite find | comments | moderator | ca898116c80cc138
    sqlite count | comments | moderator | 01d7e3ee3cbb8a61
    sqlite where | comments | moderator | fa91cb6b5b964fc7
    postgres find | comments | moderator | ee958ae22084c4bc
    postgres count | comments | moderator | 9ddf3096fff3d32b
    sqlite find | comments between | moderator | 4b938d49e72b192f
    sqlite count | comments between | moderator | 76c9a3122fd63e9c
    sqlite where | comments between | moderator | 7b7ba9895307cc6a
    postgres find | comments between | moderator | 37932ce9d4cc3068
    postgres count | comments between | moderator | 5b26a36edde6bb4c
    sqlite find | comments between, skipped | moderator | 3bb68e5d4ed478e3
    sqlite count | comments between, skipped | moderator | 76c9a3122fd63e9c
    sqlite where | comments between, skipped | moderator | 7b7ba9895307cc6a
    postgres find | comments between, skipped | moderator | 4bf9eeefb33b75fb
    postgres count | comments between, skipped | moderator | 5b26a36edde6bb4c
    sqlite find | app conditions | moderator | 5ed849673872e432
    sqlite count | app conditions | moderator | 37dad857a65a0c4e
    sqlite where | app conditions | moderator | e44fb106db5152d0
    postgres find | app conditions | moderator | cafbeaeef6d6b75e
    postgres count | app conditions | moderator | 9283b542274406b3
    sqlite find | app conditions, skipped | moderator | 7810e6e0d6f6c252
    sqlite count | app conditions, skipped | moderator | 37dad857a65a0c4e
    sqlite where | app conditions, skipped | moderator | e44fb106db5152d0
    postgres find | app conditions, skipped | moderator | 3ffc637bae5b3a2d
    postgres count | app conditions, skipped | moderator | 9283b542274406b3
    sqlite find | near | moderator | fbe19476d9b929f2
    sqlite count | near | moderator | 416b8e3c4a7f717e
    sqlite where | near | moderator | 7c04bc9a528b1487
    postgres find | near | moderator | 6defe9796b800d24
    postgres count | near | moderator | 5503d1146a1603f1
    sqlite find | box | moderator | 653d4a7b5d9ce5cd
    sqlite count | box | moderator | a05efb14373ae17f
    sqlite where | box | moderator | faa5ba57c390634f
    postgres find | box | moderator | 66a008bd57f15e7c
    postgres count | box | moderator | 03bde5a60f8ed0fd
    sqlite find | messages | moderator | 6100856e5908c7ee
    sqlite count | messages | moderator | 8fd5842debc500fd
    sqlite where | messages | moderator | 5fd38397588b67d7
    postgres find | messages | moderator | c3e3534db897ad45
    postgres count | messages | moderator | 0de19cc20c648c05
    sqlite find | equal null, text, number | moderator | 34b0d10e5cf6073b
    sqlite count | equal null, text, number | moderator | 3f99c3180f82bdc7
    sqlite where | equal null, text, number | moderator | 9f0846cea383bfbf
    postgres find | equal null, text, number | moderator | ab82bb10043c5b1d
    postgres count | equal null, text, number | moderator | c035777d43425a88
    sqlite get | Thread | moderator | 1eb7446923ec0f8e
    postgres get | Thread | moderator | fe45e5e57aa6b5b1
    sqlite get | Message | moderator | 8958f96ad08d8fa0
    postgres get | Message | moderator | 91f7fe1104d98b31
    sqlite find | list | master | abdc4f734705e1d1
    sqlite count | list | master | e057f83ca518d2c3
    sqlite where | list | master | 6b5df98b9474c6c9
    postgres find | list | master | 8c56ccd481808343
    postgres count | list | master | c25fab41141b4f6b
    sqlite find | deep list | master | 9b538a9cd0f74f1f
    sqlite count | deep list | master | e057f83ca518d2c3
    sqlite where | deep list | master | 6b5df98b9474c6c9
    postgres find | deep list | master | 48d7104ce263d059
    postgres count | deep list | master | c25fab41141b4f6b
    sqlite find | unread list | master | 71798e7f1fc9cda2
    sqlite count | unread list | master | abd5a2150c4d8d57
    sqlite where | unread list | master | 6b5df98b9474c6c9
    postgres find | unread list | master | ffe44e27ddc41bd1
    postgres count | unread list | master | d081596b87b0d558
    sqlite find | comments | master | d47833b96b5d2d8d
    sqlite count | comments | master | c496311b475bbfbf
    sqlite where | comments | master | 3db6abd9da12c899
    postgres find | comments | master | 05bc3e7dfdc53e62
    postgres count | comments | master | 2caad4d9521ab669
    sqlite find | comments between | master | d1244e3eabb19f56
    sqlite count | comments between | master | 2c8dbc751db73a2d
    sqlite where | comments between | master | 68df86ed3f6f4c98
    postgres find | comments between | master | 1d4579ba9ca608ef
    postgres count | comments between | master | b07760529b9dc8d9
    sqlite find | comments between, skipped | master | cc294503c7c23b27
    sqlite count | comments between, skipped | master | 2c8dbc751db73a2d
    sqlite where | comments between, skipped | master | 68df86ed3f6f4c98
    postgres find | comments between, skipped | master | 2d9c5f3fc3e6418e
    postgres count | comments between, skipped | master | b07760529b9dc8d9
    sqlite find | app conditions | master | 1a5ea716ba9369cb
    sqlite count | app conditions | master | e3137c4ca7fbde07
    sqlite where | app conditions | master | aca3b3c02075307e
    postgres find | app conditions | master | edaba58ef0f97a03
    postgres count | app conditions | master | 95f98ded5a49844d
    sqlite find | app conditions, skipped | master | f90e3f89f36a1ebb
    sqlite count | app conditions, skipped | master | e3137c4ca7fbde07
    sqlite where | app conditions, skipped | master | aca3b3c02075307e
    postgres find | app conditions, skipped | master | e05083297bb4755d
    postgres count | app conditions, skipped | master | 95f98ded5a49844d
    sqlite find | near | master | c768180d4b9d7f82
    sqlite count | near | master | 05c35ce0e183cadf
    sqlite where | near | master | 6f069ca755f2038f
    postgres find | near | master | 13b6e190b296f29c
    postgres count | near | master | 6851fdc24a998641
    sqlite find | box | master | 9ec3fe32f0a7d362
    sqlite count | box | master | 98074771a6d0a85f
    sqlite where | box | master | c9596d3bb8e29234
    postgres find | box | master | e96280b7d106b495
    postgres count | box | master | a7f27406e1a82be3
    sqlite find | messages | master | 0df62df9afd00132
    sqlite count | messages | master | e2d51260a213ccfa
    sqlite where | messages | master | 313a08773874eac3
    postgres find | messages | master | ab76f8fbce3832f6
    postgres count | messages | master | b39fcf38a8199c1b
    sqlite find | equal null, text, number | master | efdc000f0f82ff0e
    sqlite count | equal null, text, number | master | 8236832b7c1e921c
    sqlite where | equal null, text, number | master | 4c0b25a0e30552d2
    postgres find | equal null, text, number | master | 4d55888c0e0f99e9
    postgres count | equal null, text, number | master | 0b0c7e47bbed0ba4
    sqlite get | Thread | master | ead3d0b97e964a5a
    postgres get | Thread | master | bded46e649cf4865
    sqlite get | Message | master | 76e10edeac6fac10
    postgres get | Message | master | b62e8a7c4b6053c2
    """

  @Test func bothEnginesRenderTheFindSQLOfMain() {
    let now = Self.all()
    #expect(now == Self.pinned, "now:\n\(now)")
  }
}
