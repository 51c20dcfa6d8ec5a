import Foundation
import Testing

@testable import Datastore

/// `forum index add CLASS FIELD…` (issue 29): the board's owner indexes a field an app queries,
/// and the app's query on it then seeks that index instead of walking the class.
@Suite("forum index")
struct IndexCommandTests {
  /// The public rows' part of the plan of the app's `where={"tag":…}&order=createDate`.
  static func plan(_ path: String) throws -> [String] {
    let store = try Datastore.open(path)
    let engine = try #require(store.engine as? SQLiteEngine)
    let query = Query(
      className: "Note", equalTo: ["tag": .string("x")], order: ["createDate"], limit: 20)
    let (sql, values) = SQLiteEngine.findStatement(
      query, readableBy: .anonymous, leads: engine.indexLeads())
    return try engine.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
      try $0.text(3) ?? ""
    }
  }

  @Test func anAppsFieldIsIndexed() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let before = try Self.plan(forum.db).joined(separator: "\n")
    #expect(!before.contains("objects_public_Note_tag_createDate"), "\(before)")
    let made = try forum.ok(["index", "add", "Note", "tag", "createDate", "--json"], profile: nil)
    #expect(made.stdout == #"{"className":"Note","fields":["tag","createDate"]}"# + "\n")
    try forum.ok(["index", "add", "Note", "tag", "createDate"], profile: nil)
    let after = try Self.plan(forum.db)
    #expect(
      after.contains {
        $0.hasPrefix("SEARCH o USING INDEX objects_public_Note_tag_createDate (<expr>=?")
      }, "\(after)")
    #expect(!after.contains { $0.contains("TEMP B-TREE") }, "\(after)")
  }

  /// Issue 34: `forum index geo Spot location` indexes the GeoPoint's coordinates, which a
  /// `$within` box seeks.
  @Test func aGeoPointFieldIsIndexed() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let made = try forum.ok(["index", "geo", "Spot", "location", "--json"], profile: nil)
    #expect(made.stdout == #"{"className":"Spot","fields":["location"],"kind":"geo"}"# + "\n")
    let store = try Datastore.open(forum.db)
    let engine = try #require(store.engine as? SQLiteEngine)
    var query = Query(className: "Spot", limit: 20)
    query.conditions = [
      .withinBox(
        "location", southwest: GeoPoint(latitude: 35.4, longitude: 139.6),
        northeast: GeoPoint(latitude: 35.7, longitude: 139.8))
    ]
    let (sql, values) = SQLiteEngine.findStatement(
      query, readableBy: .anonymous, leads: engine.indexLeads())
    let plan = try engine.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
      try $0.text(3) ?? ""
    }
    #expect(
      plan.contains {
        $0.hasPrefix(
          "SEARCH o USING INDEX objects_public_Spot_location_latitude_location_longitude")
      }, "\(plan)")
  }

  @Test(arguments: [
    ["index", "geo", "Spot", "location", "place"], ["index", "geo", "Spot", "location.latitude"],
    ["index", "add", "Note"], ["index", "drop", "Note", "tag"], ["index", "add", "No te", "tag"],
    ["index", "add", "Note", "ta'g"], ["index", "add", "Note", "a", "b", "c", "d", "e"],
  ])
  func badInputChangesNothing(arguments: [String]) throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let before = try Data(contentsOf: URL(fileURLWithPath: forum.db))
    let result = try forum.run(arguments, profile: nil)
    #expect(result.status != 0, "\(result.summary)")
    #expect(result.stderr.split(separator: "\n").count == 1, "\(result.summary)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: forum.db)) == before)
  }

  /// Two indexes whose readable names would be one (`Note` on `tag, x` and `Note_tag` on `x`;
  /// `a.b` and `a_b`; `Note` and `note`, which SQLite's names do not tell apart) are both made:
  /// each class's query then seeks its own, and `forum index add` never says "indexed" of an
  /// index it did not make. Before, the second was skipped because the first had its name.
  @Test func indexesWhoseNamesCollideAreEachMade() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let specs = [
      ["Note", "tag", "x"], ["Note_tag", "x"], ["Pin", "a.b"], ["Pin", "a_b"], ["Card", "x"],
      ["card", "x"],
    ]
    for spec in specs { try forum.ok(["index", "add"] + spec, profile: nil) }
    func indexCount() throws -> Int64 {
      let engine = try #require(try Datastore.open(forum.db).engine as? SQLiteEngine)
      return try engine.connection.prepare(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'index'"
      ).rows([]) { try $0.int(0) }.first ?? -1
    }
    let indexesMade = try indexCount()
    // Once more, and the board opened again: each index is found as made, none made twice.
    for spec in specs { try forum.ok(["index", "add"] + spec, profile: nil) }
    try forum.ok(["list"])
    #expect(try indexCount() == indexesMade)
    let store = try Datastore.open(forum.db)
    let engine = try #require(store.engine as? SQLiteEngine)
    let indexes: [(name: String, sql: String)] = try engine.connection.prepare(
      "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'objects'"
    ).rows([]) { row -> (name: String, sql: String) in
      (name: try row.text(0) ?? "", sql: try row.text(1) ?? "")
    }
    func made(_ spec: [String]) -> [String] {
      let index = IndexSpec(className: spec[0], fields: Array(spec.dropFirst()))
      let definition = SQLiteEngine.indexDefinition(index, rules: EngineRules())
      return indexes.filter { $0.sql.hasSuffix(definition) }.map(\.name)
    }
    for spec in specs { #expect(made(spec).count == 1, "\(spec): \(indexes.map(\.name))") }
    // Each class's query on its field seeks that class's index.
    for spec in [["Note_tag", "x"], ["card", "x"], ["Pin", "a_b"]] {
      let query = Query(
        className: spec[0], equalTo: [spec[1]: .string("v")], order: ["createDate"], limit: 20)
      let (sql, values) = SQLiteEngine.findStatement(
        query, readableBy: .anonymous, leads: engine.indexLeads())
      let plan = try engine.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
        try $0.text(3) ?? ""
      }
      let name = try #require(made(spec).first, "\(spec)")
      #expect(plan.contains { $0.contains("USING INDEX \(name) ") }, "\(spec): \(plan)")
    }
  }
}
