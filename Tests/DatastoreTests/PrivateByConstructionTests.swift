import Foundation
import Testing

@testable import Datastore

/// Issue 28 H2 (DESIGN §7 "Private by construction"): a client's conditions are evaluated only
/// over rows the caller may read, so the work a query does — counted exactly, in SQLite's
/// virtual-machine steps, not timed — is the same whether or not a range holds another person's
/// private rows. Two probes that differ only in the range they ask must cost the same.
@Suite("SQLite: hidden rows cost nothing to a query")
struct PrivateByConstructionTests {
  /// A board with hundreds of others' private messages and private threads, a few public rows,
  /// and Carol, who reads none of the private ones.
  struct Board {
    let store: Datastore
    let engine: SQLiteEngine
    let carol: Principals
    let conversation: String
  }

  static let indexes = [
    IndexSpec(className: "Message", fields: ["conversation", "number"]),
    IndexSpec(className: "Thread", fields: ["lastActivity"]),
  ]

  static func board(_ directory: TemporaryDirectory) throws -> Board {
    let store = try Datastore(path: directory.file("db.sqlite"), indexes: indexes)
    let alice = try store.loginAnonymously(secret: Datastore.newSecret())
    let bob = try store.loginAnonymously(secret: Datastore.newSecret())
    let carol = try store.loginAnonymously(secret: Datastore.newSecret())
    let (a, b) = (alice.user.objectId, bob.user.objectId)
    let aliceClient = store.client(alice)
    let carolClient = store.client(carol)
    let pair = ACL(readers: [a, b], writers: [a])
    let conversation = try aliceClient.create("Conversation", fields: [:], acl: pair)
    let pointer = JSONValue.pointer(className: "Conversation", objectId: conversation.objectId)
    for number in 1...400 {
      let text = number == 200 ? "TOPSECRET-DM alice to bob" : "note \(number) about lunch"
      try aliceClient.create(
        "Message",
        fields: ["conversation": pointer, "number": .int(Int64(number)), "text": .string(text)],
        acl: pair)
    }
    for number in 1...200 {
      try aliceClient.create(
        "Thread",
        fields: ["title": .string("private plan \(number)"), "lastActivity": .int(Int64(number))],
        acl: ACL(readers: [a], writers: [a]))
    }
    // Issue 34: Alice's private spots around Tokyo, Carol's public ones around Osaka.
    for number in 1...100 {
      let place = JSONValue.object([
        "__type": .string("GeoPoint"), "latitude": .double(35.6 + Double(number) / 1000),
        "longitude": .double(139.7),
      ])
      try aliceClient.create(
        "Spot", fields: ["location": place, "name": .string("secret \(number)")],
        acl: ACL(readers: [a], writers: [a]))
    }
    for number in 1...5 {
      let place = JSONValue.object([
        "__type": .string("GeoPoint"), "latitude": .double(34.7 + Double(number) / 1000),
        "longitude": .double(135.5),
      ])
      try carolClient.create(
        "Spot", fields: ["location": place, "name": .string("public \(number)")],
        acl: .publicRead(owner: carol.user.objectId))
    }
    for number in 1...20 {
      try carolClient.create(
        "Thread",
        fields: ["title": .string("public \(number)"), "lastActivity": .int(Int64(number))],
        acl: .publicRead(owner: carol.user.objectId))
    }
    return Board(
      store: store, engine: try #require(store.engine as? SQLiteEngine),
      carol: carol.principals, conversation: conversation.objectId)
  }

  /// Carol's range probe of issue 28: `$gte`/`$lt` on a field, and a long `$nin` that makes
  /// every row it is evaluated on cost more.
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

  /// The rows and the exact work of the statements `find` and `count` run for `query`.
  static func cost(_ board: Board, _ query: Query) throws -> (rows: Int, find: Int, count: Int) {
    let (findSQL, findValues) = SQLiteEngine.findStatement(
      query, readableBy: board.carol, leads: board.engine.indexLeads())
    let find = try board.engine.connection.prepare(findSQL)
    _ = find.takeStepCount()
    let rows = try find.rows(findValues) { _ in 1 }.count
    let findSteps = find.takeStepCount()
    let (countSQL, countValues) = SQLiteEngine.countStatement(
      query, readableBy: board.carol, leads: board.engine.indexLeads())
    let count = try board.engine.connection.prepare(countSQL)
    _ = count.takeStepCount()
    _ = try count.rows(countValues) { $0.int(0) }
    return (rows, findSteps, count.takeStepCount())
  }

  @Test("a range over others' private messages costs the same whether it holds one or not")
  func privateMessageRange() throws {
    try withTemporaryDirectory { directory in
      let board = try Self.board(directory)
      let holding = try Self.cost(
        board, Self.probe("Message", "text", from: "TOPSECRET-DM a", to: "TOPSECRET-DM b"))
      let empty = try Self.cost(
        board, Self.probe("Message", "text", from: "TOPSECRET-DM x", to: "TOPSECRET-DM y"))
      #expect(holding.rows == 0 && empty.rows == 0)
      #expect(holding.find == empty.find, "find: \(holding.find) vs \(empty.find) steps")
      #expect(holding.count == empty.count, "count: \(holding.count) vs \(empty.count) steps")
    }
  }

  @Test("a range over others' private threads costs the same whether it holds one or not")
  func privateThreadRange() throws {
    try withTemporaryDirectory { directory in
      let board = try Self.board(directory)
      let holding = try Self.cost(
        board, Self.probe("Thread", "title", from: "private plan 1", to: "private plan 2"))
      let empty = try Self.cost(
        board, Self.probe("Thread", "title", from: "private zzz", to: "private zzzz"))
      #expect(holding.rows == 0 && empty.rows == 0)
      #expect(holding.find == empty.find, "find: \(holding.find) vs \(empty.find) steps")
      #expect(holding.count == empty.count, "count: \(holding.count) vs \(empty.count) steps")
    }
  }

  /// Issue 34's operators: a `$regex`, a `$within` box, a `$nearSphere` with a distance and a
  /// `$ninArray`, each asked where others' private rows are and where nothing is, cost the same.
  @Test("the new operators over others' private rows cost the same whether they hold one or not")
  func newOperatorsOverPrivateRows() throws {
    try withTemporaryDirectory { directory in
      let board = try Self.board(directory)
      func query(_ className: String, _ conditions: [QueryCondition], near: GeoPoint? = nil)
        -> Query
      {
        var query = Query(className: className, limit: 100)
        query.conditions = conditions
        query.nearest = near.map { ("location", $0) }
        return query
      }
      let tokyo = GeoPoint(latitude: 35.65, longitude: 139.7)
      // North of the hidden spots as they are of Carol's: her rows fail the same test first.
      let nowhere = GeoPoint(latitude: 36.65, longitude: 139.7)
      let pairs: [(String, Query, Query)] = [
        (
          "regex", query("Message", [.matches("text", pattern: "^TOPSECRET", options: "")]),
          query("Message", [.matches("text", pattern: "^NOSUCHTEXT", options: "")])
        ),
        (
          "box",
          query(
            "Spot",
            [
              .withinBox(
                "location", southwest: GeoPoint(latitude: 35.6, longitude: 139.6),
                northeast: GeoPoint(latitude: 35.8, longitude: 139.8))
            ]),
          query(
            "Spot",
            [
              .withinBox(
                "location", southwest: GeoPoint(latitude: 36.6, longitude: 139.6),
                northeast: GeoPoint(latitude: 36.8, longitude: 139.8))
            ])
        ),
        (
          "near", query("Spot", [.near("location", tokyo, maxRadians: 0.01)], near: tokyo),
          query("Spot", [.near("location", nowhere, maxRadians: 0.01)], near: nowhere)
        ),
        (
          "ninArray",
          query("Message", [.arrayContainsNone("text", [.string("TOPSECRET-DM alice to bob")])]),
          query("Message", [.arrayContainsNone("text", [.string("NOSUCHTEXT")])])
        ),
      ]
      // Then with the GeoPoint field indexed as an app's owner would (`forum index geo`).
      for indexed in [false, true] {
        if indexed {
          try Datastore.addIndex(
            IndexSpec(geoOf: "Spot", field: "location"), at: directory.file("db.sqlite"))
          // A statement prepared before another connection's DDL reads the schema again at
          // its next run (two steps more): each runs once before it is measured, whichever of
          // them the statement cache still holds.
          for (_, holding, empty) in pairs {
            _ = try Self.cost(board, holding)
            _ = try Self.cost(board, empty)
          }
        }
        for (name, holding, empty) in pairs {
          let (held, none) = (try Self.cost(board, holding), try Self.cost(board, empty))
          let label = "\(name)\(indexed ? ", indexed" : "")"
          #expect(held.rows == 0 && none.rows == 0, "\(label)")
          #expect(held.find == none.find, "\(label) find: \(held.find) vs \(none.find) steps")
          #expect(
            held.count == none.count, "\(label) count: \(held.count) vs \(none.count) steps")
        }
      }
    }
  }

  /// An index on the field a client names must not seek among rows the caller cannot read:
  /// a hidden conversation's messages cost the same as a conversation that does not exist.
  @Test("an indexed field seeks no hidden rows")
  func indexedFieldSeeksNoHiddenRows() throws {
    try withTemporaryDirectory { directory in
      let board = try Self.board(directory)
      func messages(of id: String) -> Query {
        Query(
          className: "Message",
          equalTo: ["conversation": .pointer(className: "Conversation", objectId: id)],
          order: ["number"], limit: 20)
      }
      let hidden = try Self.cost(board, messages(of: board.conversation))
      let none = try Self.cost(board, messages(of: "ZZZZZZZZZZZZZZZZ"))
      #expect(hidden.rows == 0 && none.rows == 0)
      #expect(hidden.find == none.find, "find: \(hidden.find) vs \(none.find) steps")
      #expect(hidden.count == none.count, "count: \(hidden.count) vs \(none.count) steps")
      // An ordered index (Thread.lastActivity): its range over 100 private threads and over
      // none cost the same (Carol's public threads are at 1...20).
      func active(_ low: Int64, _ high: Int64) -> Query {
        var query = Query(className: "Thread", order: ["-lastActivity"], limit: 20)
        query.conditions = [
          .compare("lastActivity", .greaterThan, .int(low)),
          .compare("lastActivity", .lessThanOrEqual, .int(high)),
        ]
        return query
      }
      let privateRange = try Self.cost(board, active(100, 200))
      let emptyRange = try Self.cost(board, active(1000, 1100))
      #expect(privateRange.rows == 0 && emptyRange.rows == 0)
      #expect(privateRange.find == emptyRange.find, "\(privateRange.find) vs \(emptyRange.find)")
      #expect(privateRange.count == emptyRange.count)
    }
  }

  /// Files too: a name range over others' private files costs what an empty range does.
  @Test("a range over others' private files costs the same whether it holds one or not")
  func privateFileRange() throws {
    try withTemporaryDirectory { directory in
      let board = try Self.board(directory)
      let alice = try board.store.loginAnonymously(secret: Datastore.newSecret())
      let client = board.store.client(alice)
      let a = alice.user.objectId
      for number in 1...200 {
        try client.putFile(
          name: "secret-\(number).txt", bytes: Array("x".utf8), mimeType: "text/plain",
          acl: ACL(readers: [a], writers: [a]))
      }
      func cost(_ low: String, _ high: String) throws -> (rows: Int, steps: Int) {
        var query = Query(className: "file", limit: 100)
        query.conditions = [
          .compare("fileName", .greaterThanOrEqual, .string(low)),
          .compare("fileName", .lessThan, .string(high)),
          .notIn("fileName", (0..<700).map { .string("decoy \($0)") }),
        ]
        let (sql, values) = SQLiteEngine.findFilesStatement(query, readableBy: board.carol)
        let statement = try board.engine.connection.prepare(sql)
        _ = statement.takeStepCount()
        let rows = try statement.rows(values) { _ in 1 }.count
        return (rows, statement.takeStepCount())
      }
      let holding = try cost("secret-1", "secret-2")
      let empty = try cost("zz", "zzz")
      #expect(holding.rows == 0 && empty.rows == 0)
      #expect(holding.steps == empty.steps, "\(holding.steps) vs \(empty.steps) steps")
    }
  }
}
