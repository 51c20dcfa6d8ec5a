import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// A shape kept from one caller (`FindShape`, `FindTemplate`) fills another's principals in the
/// order the SQL built for that caller has them, however their names sort (before `*`, past
/// ten markers, non-ASCII), and a query's values whatever they are.
@Suite("a kept shape's SQL for odd principals and values (SQLite)")
struct FindTemplateOddCallerTests {
  @Test func oddPrincipalsAndValuesGetTheirOwnSQL() throws {
    let database = try SQLiteFixture().makeDatabase(rules: Board.rules, indexes: Board.indexes)
    let store = try Datastore.open(database.ownerLocation, rules: Board.rules)
    let engine = try #require(store.engine as? SQLiteEngine)
    let roleSets: [[String]] = [
      (0..<12).map { "r\($0)" }, (0..<12).map { "\u{1}\($0)" }, (0..<12).map { "é\(11 - $0)" },
      (0..<12).map { "!\($0)" }, (0..<12).map { "role:\($0)" },
      (0..<12).map { "\u{1}slot \($0)\u{1}" },
    ]
    let users = ["zed", "!bang", "\u{1}principal 0\u{1}", "ä", " sp "]
    let queries: [Query] = [
      Query(className: Board.messageClass, order: ["-createDate"], limit: 20),
      Query(className: Board.messageClass, order: ["-createDate"], limit: 20, skip: 40),
      Query(
        className: Board.commentClass,
        equalTo: ["thread": .pointer(className: Board.threadClass, objectId: "\u{1}slot 0\u{1}")],
        order: ["number"], limit: Int(FindShape.markerNumber(0)), skip: 1),
      Query(
        className: Board.commentClass, equalTo: ["number": .int(FindShape.markerNumber(1))],
        order: ["number"], limit: 3),
      {
        var query = Query(
          className: Board.commentClass, equalTo: ["text": .string("'; --?")],
          order: ["number"], limit: 0)
        query.greaterThan = ["number": -1]
        query.lessThan = ["number": Int64.max]
        return query
      }(),
    ]
    for query in queries {
      for user in users {
        for roles in roleSets {
          let caller = Principals(userId: user, roles: roles)
          let built = SQLiteEngine.findSQL(
            query, readableBy: caller, rules: Board.rules, leads: engine.indexLeads()
          )
          .rendered(.sqlite)
          #expect(
            engine.findStatement(query, caller).rendered(.sqlite) == built,
            "\(query) \(user) \(roles.first!)")
        }
      }
    }
  }
}
