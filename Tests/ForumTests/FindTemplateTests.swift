import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// SQLite keeps a query's SQL once built for its shape and caller (`FindShape`,
/// `SQLiteEngine.findStatement`) and fills it with each query's own values: for every query
/// the pins name and every caller, the kept shape gives another query of that shape exactly
/// the SQL built for it.
@Suite("a query's SQL kept for its shape (SQLite)")
struct FindTemplateTests {
  /// `query` with every value of its own changed, its shape kept.
  static func otherValues(_ query: Query) -> Query {
    var other = query
    for (field, value) in query.equalTo {
      switch value {
      case .int(let number): other.equalTo[field] = .int(number + 7)
      case .double(let number): other.equalTo[field] = .double(number * 3)
      case .string(let text): other.equalTo[field] = .string(text + " else")
      case .object, .array:
        other.equalTo[field] = .pointer(className: "Elsewhere", objectId: "o\(field.count)")
      case .null, .bool: break
      }
    }
    other.conditions = query.conditions.map { condition in
      guard case .equal(let field, let value) = condition else { return condition }
      switch value {
      case .int(let number): return .equal(field, .int(number + 13))
      case .double(let number): return .equal(field, .double(number * 5))
      case .string(let text): return .equal(field, .string(text + " other"))
      case .object: return .equal(field, .pointer(className: "Other", objectId: "p\(field.count)"))
      case .array(let items): return .equal(field, .array(items + [.int(9)]))
      case .null, .bool: return condition
      }
    }
    for field in query.greaterThan.keys { other.greaterThan[field]! += 3 }
    for field in query.lessThan.keys { other.lessThan[field]! += 5 }
    other.limit += 1
    if query.skip > 0 { other.skip += 11 }
    return other
  }

  /// A board's engine with the board's rules and indexes, then `body` for every pinned query
  /// (`FindSQLPinTests.queries`) as every pinned caller.
  static func eachPinnedQuery(
    _ body: (SQLiteEngine, _ callerName: String, Principals, _ name: String, Query) throws -> Void
  ) throws -> SQLiteEngine {
    let database = try SQLiteFixture().makeDatabase(rules: Board.rules, indexes: Board.indexes)
    let store = try Datastore.open(database.ownerLocation, rules: Board.rules)
    let engine = try #require(store.engine as? SQLiteEngine)
    for (callerName, caller) in FindSQLPinTests.callers {
      for (name, query) in FindSQLPinTests.queries {
        try body(engine, callerName, caller, name, query)
      }
    }
    return engine
  }

  @Test func aKeptShapeGivesEachQueryItsOwnSQL() throws {
    var kept = 0
    let engine = try Self.eachPinnedQuery { engine, callerName, caller, name, query in
      let built = { (query: Query) in
        SQLiteEngine.findSQL(
          query, readableBy: caller, rules: Board.rules, leads: engine.indexLeads()
        ).rendered(.sqlite)
      }
      #expect(engine.findStatement(query, caller).rendered(.sqlite) == built(query))
      let other = Self.otherValues(query)
      let filled = engine.findStatement(other, caller).rendered(.sqlite)
      #expect(filled == built(other), "\(name) | \(callerName)")
      // The first query's values are not what the second is given (its limit differs).
      #expect(filled != built(query), "\(name) | \(callerName)")
      if FindShape(query, caller) != nil { kept += 1 }
    }
    #expect(engine.findTemplates.count >= kept / FindSQLPinTests.callers.count)
    #expect(kept >= 20)
  }

  /// A count is kept for its shape as a find is (`SQLiteEngine.countStatement`): every pinned
  /// query counted as every caller, then another of its shape, each gets the SQL built for it.
  @Test func aKeptCountShapeGivesEachQueryItsOwnSQL() throws {
    var kept = 0
    _ = try Self.eachPinnedQuery { engine, callerName, caller, name, query in
      let built = { (query: Query) in
        SQLiteEngine.countSQL(
          query, readableBy: caller, rules: Board.rules, leads: engine.indexLeads()
        ).rendered(.sqlite)
      }
      let counted = engine.countStatement(query, caller).rendered(.sqlite)
      guard counted.sql.hasPrefix("SELECT count(*)") else { return }  // the kept class count
      #expect(counted == built(query), "\(name) | \(callerName)")
      let other = Self.otherValues(query)
      #expect(
        engine.countStatement(other, caller).rendered(.sqlite) == built(other),
        "\(name) | \(callerName)")
      if let shape = FindShape(query, caller), engine.findTemplates["count\n" + shape.key] != nil {
        kept += 1
      }
    }
    #expect(kept >= 20)
  }

  /// One shape serves every caller with as many principals, each with its own: a member's
  /// query after another's reads what the second may read, not the first.
  @Test func aShapeKeptServesEachCallerWithTheirOwnPrincipals() throws {
    let database = try SQLiteFixture().makeDatabase(rules: Board.rules, indexes: Board.indexes)
    let store = try Datastore.open(database.ownerLocation, rules: Board.rules)
    let engine = try #require(store.engine as? SQLiteEngine)
    let query = Query(className: Board.messageClass, order: ["-createDate"], limit: 20)
    let callers = [
      Principals(userId: "zed"), Principals(userId: "amy"),
      Principals(userId: "bo", roles: ["moderators"]), Principals(userId: "cy", roles: ["a", "z"]),
      .anonymous, .master,
    ]
    for caller in callers {
      let filled = engine.findStatement(query, caller).rendered(.sqlite)
      #expect(
        filled
          == SQLiteEngine.findSQL(
            query, readableBy: caller, rules: Board.rules, leads: engine.indexLeads()
          ).rendered(.sqlite),
        "\(caller.names.sorted())")
    }
    #expect(FindShape(query, callers[0])?.key == FindShape(query, callers[1])?.key)
    #expect(FindShape(query, callers[0])?.key != FindShape(query, callers[2])?.key)
    #expect(FindShape(query, .master)?.key != FindShape(query, .anonymous)?.key)
    #expect(engine.findTemplates.count == 5, "one a count of principals, and the master key's")
  }

  /// What the server makes of an app's `where` of fields: equalities as conditions, each kind
  /// of value. Each such shape is kept (a served query no longer builds its SQL each time),
  /// and gives another query of its shape exactly the SQL built for it.
  @Test func aWhereOfFieldsIsKeptForItsShape() throws {
    let database = try SQLiteFixture().makeDatabase(rules: Board.rules, indexes: Board.indexes)
    let store = try Datastore.open(database.ownerLocation, rules: Board.rules)
    let engine = try #require(store.engine as? SQLiteEngine)
    let thread = JSONValue.pointer(className: Board.threadClass, objectId: "t1")
    var queries: [Query] = []
    for conditions: [QueryCondition] in [
      [.equal("thread", thread)],
      [.equal("name", .string("x")), .equal("n", .int(3))],
      [.equal("score", .double(1.5)), .equal("tags", .array([.string("a")]))],
      [.equal("thread", thread), .equal("gone", .null), .equal("on", .bool(false))],
    ] {
      var query = Query(className: Board.commentClass, order: ["createDate"], limit: 20)
      query.conditions = conditions
      queries.append(query)
      query.className = "Other"
      query.skip = 40
      queries.append(query)
    }
    for (callerName, caller) in FindSQLPinTests.callers {
      for query in queries {
        let built = { (query: Query) in
          SQLiteEngine.findSQL(
            query, readableBy: caller, rules: Board.rules, leads: engine.indexLeads()
          ).rendered(.sqlite)
        }
        #expect(engine.findStatement(query, caller).rendered(.sqlite) == built(query))
        let shape = try #require(FindShape(query, caller))
        #expect(engine.findTemplates[shape.key] != nil, "\(query.conditions) | \(callerName)")
        let other = Self.otherValues(query)
        let filled = engine.findStatement(other, caller).rendered(.sqlite)
        #expect(filled == built(other), "\(query.conditions) | \(callerName)")
        #expect(filled != built(query))
      }
    }
    #expect(engine.unkeptShapes.isEmpty)
  }
}
