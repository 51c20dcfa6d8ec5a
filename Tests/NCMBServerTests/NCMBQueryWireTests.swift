import Datastore
import Testing

@testable import NCMBServer

/// The remote engine asks its queries as NCMB's object search (`Query.ncmbParameters`); the
/// server reads them with the parser every app's query goes through (`NCMBQuery`). Each query
/// written is read back to the same conditions, order, page and includes, so the two cannot
/// drift; what NCMB has no words for is not written at all (it goes through `forum/find`).
@Suite("NCMB query wire")
struct NCMBQueryWireTests {
  /// Every condition of a query, `equalTo`, `greaterThan` and `lessThan` included, with the
  /// `and`s flattened: the same set means the same query.
  private func conditions(_ query: Query) -> [String] {
    var all = query.equalTo.map { QueryCondition.equal($0.key, $0.value) }
    all += query.greaterThan.map { QueryCondition.compare($0.key, .greaterThan, .int($0.value)) }
    all += query.lessThan.map { QueryCondition.compare($0.key, .lessThan, .int($0.value)) }
    all += query.conditions
    func text(_ condition: QueryCondition) -> String {
      NCMBQueryWireTests.query("x", [condition], order: []).wire.jsonText()
    }
    // `and`s flattened and sorted; each `or` alternative an `and` (as `$or` reads them).
    func flat(_ condition: QueryCondition) -> [QueryCondition] {
      switch condition {
      case .and(let parts): return parts.flatMap(flat)
      case .or(let alternatives):
        return [.or(alternatives.map { .and(flat($0).sorted { text($0) < text($1) }) })]
      default: return [condition]
      }
    }
    return all.flatMap(flat).map(text).sorted()
  }

  private func readBack(_ query: Query, count: Bool = false) throws -> NCMBQuery.Search {
    let parameters = try #require(query.ncmbParameters(count: count))
    var raw: [String: String] = [:]
    for (name, value) in parameters { raw[name] = value }
    return try NCMBQuery.query(className: query.className, raw)
  }

  /// A query of `conditions`.
  static func query(
    _ className: String, _ conditions: [QueryCondition], order: [String], limit: Int = 100
  ) -> Query {
    var query = Query(className: className, order: order, limit: limit)
    query.conditions = conditions
    return query
  }

  static let thread = JSONValue.pointer(className: "Thread", objectId: "abcdefghijklmnop")
  static let tokyo = GeoPoint(latitude: 35.68, longitude: 139.76)

  static let queries: [Query] = {
    var list: [Query] = []
    var page = Query(
      className: "Comment", equalTo: ["thread": NCMBQueryWireTests.thread],
      order: ["number", "-createDate"],
      limit: 20, skip: 40, include: ["author"])
    page.greaterThan = ["number": 3]
    page.lessThan = ["number": 50]
    page.includeKeys = ["displayName", "userName"]
    list.append(page)
    list.append(
      NCMBQueryWireTests.query(
        "Thread",
        [
          .notEqual("title", .string("x")), .compare("lastActivity", .greaterThanOrEqual, .int(5)),
          .compare("lastActivity", .lessThanOrEqual, .int(900)),
          .isIn("number", [.int(1), .int(2)]), .notIn("author", [.string("a")]),
          .exists("pinnedDate", false), .arrayContainsAny("tags", [.string("a")]),
          .arrayContainsAll("tags", [.string("b"), .string("c")]),
          .arrayContainsNone("muted", [.string("d")]),
          .matches("title", pattern: "^he(l+)o", options: "i"),
          .or([.equal("a", .int(1)), .and([.equal("b", .int(2)), .exists("c", true)])]),
        ], order: ["-lastActivity"], limit: 1000))
    var near = NCMBQueryWireTests.query(
      "Spot", [.near("location", NCMBQueryWireTests.tokyo, maxRadians: 0.25)],
      order: ["-createDate"], limit: 5)
    near.nearest = ("location", NCMBQueryWireTests.tokyo)
    list.append(near)
    list.append(
      NCMBQueryWireTests.query(
        "Spot",
        [
          .withinBox(
            "location", southwest: GeoPoint(latitude: 35, longitude: 139),
            northeast: GeoPoint(latitude: 36, longitude: 140))
        ], order: ["name"], limit: 10))
    return list
  }()

  @Test(arguments: queries.indices)
  func aQueryIsReadBackAsWritten(index: Int) throws {
    let query = NCMBQueryWireTests.queries[index]
    let search = try readBack(query)
    #expect(conditions(search.query) == conditions(query))
    #expect(search.query.order == query.order)
    #expect(search.query.limit == query.limit && search.query.skip == query.skip)
    #expect(search.query.include == query.include)
    #expect(search.query.includeKeys == query.includeKeys)
    #expect(search.query.nearest?.field == query.nearest?.field)
    #expect(search.query.nearest?.point == query.nearest?.point)
    #expect(!search.withCount && !search.listsNothing)
    let counted = try readBack(query, count: true)
    #expect(counted.withCount && counted.listsNothing)
    #expect(conditions(counted.query) == conditions(query))
  }

  /// What NCMB cannot ask is not written: the board's unread filter, `keys`, a cost budget,
  /// two equalities on one field, an operator-looking value, a Date the parser would turn into
  /// milliseconds, `$nearSphere` that is not the query's order.
  @Test func whatNCMBCannotAskIsNotWritten() {
    var unread = Query(className: "Thread", order: ["-lastActivity"])
    unread.unreadOnly = true
    var keys = Query(className: "Thread", order: ["number"])
    keys.keys = ["title"]
    var budget = Query(className: "Thread", order: ["number"])
    budget.costBudget = 10
    let date: JSONValue = .object(["__type": .string("Date"), "iso": .string("2026-01-01")])
    let refused: [Query] = [
      unread, keys, budget,
      NCMBQueryWireTests.query(
        "Thread", [.equal("a", .int(1)), .equal("a", .int(2))], order: ["number"]),
      NCMBQueryWireTests.query(
        "Thread", [.equal("a", .object(["$gt": .int(1)]))], order: ["number"]),
      NCMBQueryWireTests.query("Thread", [.equal("when", date)], order: ["number"]),
      NCMBQueryWireTests.query(
        "Spot", [.near("location", NCMBQueryWireTests.tokyo, maxRadians: nil)], order: ["name"]),
      Query(className: "Thread", order: []),
    ]
    for query in refused {
      #expect(query.ncmbParameters() == nil, "\(query.wire.jsonText())")
    }
  }

  /// A query string as an SDK escapes it (every brace, quote and colon of a `where`, either
  /// case of hex digit) reads back; an escape that is not two hex digits is refused, signs
  /// included (`%+1` was read as byte 1).
  @Test func percentEscapesAreTwoHexDigits() throws {
    let read = try NCMBQuery.parameters(
      "where=%7B%22thread%22%3a%7b%22objectId%22%3A%22a+b%22%7D%7D&order=-createDate")
    #expect(read["where"] == #"{"thread":{"objectId":"a b"}}"#)
    #expect(read["order"] == "-createDate")
    for bad in ["where=%+1", "where=%-0", "where=%4", "where=%G1", "where=%", "where=%00"] {
      #expect(throws: NCMBError.self, "\(bad)") { try NCMBQuery.parameters(bad) }
    }
  }

  /// The read cache asks whether a request names `unreadUpTo` without decoding its `where`: the
  /// name as `parameters` reads it, encoded or not, and never the text of a value.
  @Test func aParameterIsNamedAsTheParserReadsIt() throws {
    let queries: [(String, Bool)] = [
      ("limit=20&unreadUpTo=5", true),
      ("unread%55pTo=5", true),
      ("unreadUpTo", true),
      ("where=%7B%22unreadUpTo%22%3A1%7D&limit=20", false),
      ("where=unreadUpTo", false),
      ("unreadUpTo2=1&xunreadUpTo=1", false),
      ("", false),
    ]
    for (query, named) in queries {
      #expect(NCMBQuery.names("unreadUpTo", in: query) == named, "\(query)")
      #expect(
        ((try? NCMBQuery.parameters(query))?["unreadUpTo"] != nil) == named, "parser: \(query)")
    }
  }
}
