import EngineTestSupport
import Foundation
import Testing

@testable import Datastore

/// `Query.conditions`: every operator on both engines, type-exact, with what the ACL hides left
/// out, and `count` agreeing with `find`.
@Suite("Query conditions")
struct QueryConditionTests {
  static let pointerA = JSONValue.pointer(className: "Thread", objectId: "AAAAAAAAAAAAAAAA")
  static let pointerB = JSONValue.pointer(className: "Thread", objectId: "BBBBBBBBBBBBBBBB")

  /// Named values; `missing` has no `v` at all.
  static let values: [(String, JSONValue?)] = [
    ("one", .int(1)), ("two", .int(2)), ("twoAndHalf", .double(2.5)), ("textOne", .string("1")),
    ("a", .string("a")), ("b", .string("b")), ("eAcute", .string("é")), ("yes", .bool(true)),
    ("no", .bool(false)), ("null", .null), ("missing", nil),
    ("array1a", .array([.int(1), .string("a")])), ("arrayB", .array([.string("b")])),
    ("pointerA", pointerA), ("pointerB", pointerB), ("objectX", .object(["x": .int(1)])),
  ]

  static var allNames: Set<String> { Set(values.map(\.0)) }

  /// A value holding a NUL byte (`"a\u0000b"` in an app's `where`; no stored value holds
  /// one) is refused or matches nothing on SQLite: never the row whose value is what comes
  /// before the NUL (bound up to the NUL, it matched `"a"`).
  @Test func aValueHoldingANulNeverMatchesWhatComesBeforeIt() throws {
    let database = try SQLiteFixture().makeDatabase()
    let store = try Datastore.open(database.ownerLocation)
    let login = try store.loginAnonymously(secret: Datastore.newSecret())
    let client = store.client(login)
    _ = try client.create(
      "Item", fields: ["v": .string("a")], acl: .publicRead(owner: login.user.objectId))
    var query = Query(className: "Item", limit: 10)
    query.conditions = [.equal("v", .string("a\u{0}b"))]
    #expect((try? client.find(query))?.isEmpty ?? true)
    #expect((try? client.count(query)).map { $0 == 0 } ?? true)
    let equal = Query(className: "Item", equalTo: ["v": .string("a\u{0}b")])
    #expect((try? client.find(equal))?.isEmpty ?? true)
    query.conditions = [.equal("v", .string("a"))]
    #expect(try client.find(query).count == 1)
  }

  @Test(arguments: EngineFixtures.all)
  func everyOperator(_ engine: any EngineFixture) throws {
    let database = try engine.makeDatabase()
    let alice = try Datastore.open(try database.location(as: "alice"))
    let aliceLogin = try alice.loginAnonymously(secret: Datastore.newSecret())
    let writer = alice.client(aliceLogin)
    var names: [String: String] = [:]
    var created: [String: DataObject] = [:]
    for (name, value) in Self.values {
      var fields: [String: JSONValue] = ["name": .string(name)]
      if let value { fields["v"] = value }
      let object = try writer.create(
        "Item", fields: fields, acl: .publicRead(owner: aliceLogin.user.objectId))
      names[object.objectId] = name
      created[name] = object
    }
    // A private row that matches everything below that `one` matches: nobody else sees it.
    _ = try writer.create(
      "Item", fields: ["name": .string("private"), "v": .int(1)],
      acl: ACL(readers: [aliceLogin.user.objectId], writers: [aliceLogin.user.objectId]))

    let bob = try Datastore.open(try database.location(as: "bob"))
    let reader = bob.client(try bob.loginAnonymously(secret: Datastore.newSecret()))
    func found(_ conditions: QueryCondition...) throws -> Set<String> {
      var query = Query(className: "Item", limit: 1000)
      query.conditions = conditions
      let objects = try reader.find(query)
      #expect(try reader.count(query) == objects.count, "\(conditions)")
      return Set(objects.map { names[$0.objectId] ?? "?" })
    }
    let all = Self.allNames

    #expect(try found(.equal("v", .int(1))) == ["one"])
    #expect(try found(.equal("v", .double(2))) == ["two"])
    #expect(try found(.equal("v", .string("1"))) == ["textOne"])
    #expect(try found(.equal("v", .bool(true))) == ["yes"])
    #expect(try found(.equal("v", .null)) == ["null", "missing"])
    #expect(try found(.equal("v", Self.pointerA)) == ["pointerA"])
    #expect(try found(.equal("v", .array([.string("b")]))) == ["arrayB"])
    #expect(try found(.equal("v.x", .int(1))) == ["objectX"])
    #expect(try found(.notEqual("v", .int(1))) == all.subtracting(["one"]))
    #expect(try found(.notEqual("v", .null)) == all.subtracting(["null", "missing"]))

    #expect(try found(.compare("v", .lessThan, .int(2))) == ["one"])
    #expect(try found(.compare("v", .lessThanOrEqual, .int(2))) == ["one", "two"])
    #expect(try found(.compare("v", .greaterThan, .int(2))) == ["twoAndHalf"])
    #expect(try found(.compare("v", .greaterThanOrEqual, .double(2.5))) == ["twoAndHalf"])
    #expect(try found(.compare("v", .greaterThanOrEqual, .string("a"))) == ["a", "b", "eAcute"])
    #expect(try found(.compare("v", .lessThan, .string("b"))) == ["textOne", "a"])
    #expect(
      try found(.compare("v", .greaterThan, .int(0)), .compare("v", .lessThan, .int(3)))
        == ["one", "two", "twoAndHalf"])

    #expect(
      try found(.isIn("v", [.int(1), .string("a"), Self.pointerB, .null]))
        == ["one", "a", "pointerB", "null", "missing"])
    #expect(try found(.isIn("v", [])) == [])
    #expect(try found(.notIn("v", [.int(1), .string("a")])) == all.subtracting(["one", "a"]))
    #expect(try found(.notIn("v", [])) == all)

    #expect(try found(.exists("v", true)) == all.subtracting(["missing"]))
    #expect(try found(.exists("v", false)) == ["missing"])
    #expect(try found(.exists("createDate", true)) == all)

    #expect(try found(.arrayContainsAny("v", [.string("a"), .int(5)])) == ["array1a"])
    #expect(try found(.arrayContainsAny("v", [.string("b"), .int(1)])) == ["array1a", "arrayB"])
    #expect(try found(.arrayContainsAny("v", [.string("x")])) == [])
    #expect(try found(.arrayContainsAll("v", [.int(1), .string("a")])) == ["array1a"])
    #expect(try found(.arrayContainsAll("v", [.int(1), .string("b")])) == [])
    #expect(try found(.arrayContainsAll("v", [])) == [])
    // One pass for plain values (issue 28): repeats count once, 1.0 is 1, "1" is not 1.
    #expect(
      try found(.arrayContainsAll("v", [.int(1), .double(1), .string("a"), .int(1)])) == ["array1a"]
    )
    #expect(try found(.arrayContainsAll("v", [.string("1"), .string("a")])) == [])
    #expect(try found(.arrayContainsAll("v", [.int(1), .null])) == [])

    #expect(try found(.or([.equal("v", .int(1)), .equal("v", .string("b"))])) == ["one", "b"])
    #expect(
      try found(
        .or([
          .and([.exists("v", true), .compare("v", .lessThan, .int(2))]),
          .equal("name", .string("no")),
        ]))
        == ["one", "no"])

    let two = created["two"]!
    #expect(try found(.equal("objectId", .string(two.objectId))) == ["two"])
    #expect(
      try found(.isIn("objectId", [.string(two.objectId), .string(created["b"]!.objectId)]))
        == ["two", "b"])
    let last = created["objectX"]!
    #expect(try found(.compare("createDate", .lessThanOrEqual, .int(last.createDate))) == all)
    #expect(try found(.compare("createDate", .greaterThan, .int(last.createDate))) == [])
    #expect(try found(.equal("objectId", .int(1))) == [])

    // The author sees the private row too.
    var mine = Query(className: "Item")
    mine.conditions = [.equal("v", .int(1))]
    #expect(try writer.find(mine).count == 2)
  }

  @Test(arguments: EngineFixtures.all)
  func badConditionsAreRefusedBeforeTheEngine(_ engine: any EngineFixture) throws {
    let database = try engine.makeDatabase()
    let store = try Datastore.open(try database.location(as: "alice"))
    let client = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    _ = try client.create("Item", fields: ["v": .int(1)])
    let before = try database.fingerprint()
    let nested = (0..<10).reduce(QueryCondition.equal("v", .int(1))) { inner, _ in .or([inner]) }
    let bad: [[QueryCondition]] = [
      [.equal("v') OR 1=1 --", .int(1))],
      [.equal("", .int(1))],
      [.compare("v", .lessThan, .bool(true))],
      [.compare("v", .lessThan, .null)],
      [.compare("v", .lessThan, .array([]))],
      [.equal("v", .string("a\u{0}b"))],
      [.isIn("v", (0...1000).map { .int(Int64($0)) })],
      Array(repeating: .exists("v", true), count: 201),
      [.or([])],
      [nested],
      [.arrayContainsAny("v", [.double(.nan)])],
    ]
    for conditions in bad {
      var query = Query(className: "Item")
      query.conditions = conditions
      #expect(throws: DatastoreError.self, "\(conditions)") { try client.find(query) }
      #expect(throws: DatastoreError.self, "\(conditions)") { try client.count(query) }
    }
    #expect(try database.fingerprint() == before)
  }

  /// Every shape of condition is its own SQL: the statement caches stay bounded however many
  /// shapes come, and answers stay right after the cache starts again.
  @Test(arguments: EngineFixtures.all)
  func manyShapesKeepTheStatementCacheBounded(_ engine: any EngineFixture) throws {
    let database = try engine.makeDatabase()
    let store = try Datastore.open(try database.location(as: "alice"))
    let client = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    _ = try client.create("Item", fields: ["v": .int(3)])
    func cached() -> Int {
      if let sqlite = store.engine as? SQLiteEngine {
        return sqlite.connection.cachedStatementCount
      }
      if let postgres = store.engine as? PostgresEngine {
        return postgres.connection.preparedStatementCount
      }
      return -1
    }
    for size in 1...600 {
      var query = Query(className: "Item")
      query.conditions = [.isIn("v", (1...size).map { .int(Int64($0)) })]
      #expect(try client.find(query).count == (size >= 3 ? 1 : 0))
      #expect(cached() <= 512)
      #expect(cached() > 0)
    }
  }
}
