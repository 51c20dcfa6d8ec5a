import Datastore
import EngineTestSupport
import Forum
import Foundation
import Testing

/// An app indexes fields whose names differ only in case or in a dot (`note` and `Note`, `a.b`
/// and `a_b`, both common in NCMB apps' data). Each index, and each stored column an engine
/// keeps for it, must hold its own field: a query on one field finds the objects whose field
/// matches, whatever the other holds.
@Suite("Indexed fields with names alike")
struct IndexedFieldNamesTests {
  static let indexes =
    Board.indexes + [
      IndexSpec(className: "Memo", fields: ["note"]),
      IndexSpec(className: "Memo", fields: ["Note"]),
      IndexSpec(className: "Memo", fields: ["a.b"]), IndexSpec(className: "Memo", fields: ["a_b"]),
    ]

  @Test(arguments: EngineFixtures.all)
  func aQueryOnOneFieldIsNotAnsweredByAnother(engine: any EngineFixture) throws {
    let database = try engine.makeDatabase(
      rules: Board.rules, indexes: IndexedFieldNamesTests.indexes)
    let root = try makeTemporaryDirectory("IndexedFieldNamesTests")
    defer { try? FileManager.default.removeItem(atPath: root) }
    let store = try Datastore.open(
      try database.location(as: "alice"), rules: Board.rules,
      indexes: IndexedFieldNamesTests.indexes)
    let (client, _) = try store.signIn(
      profile: "alice", in: ProfileStore(directory: root + "/profiles"))
    let memo = try client.create(
      "Memo",
      fields: [
        "note": .string("lower"), "Note": .string("upper"),
        "a": .object(["b": .string("dotted")]), "a_b": .string("flat"),
      ])
    for (field, value) in [
      ("note", "lower"), ("Note", "upper"), ("a.b", "dotted"), ("a_b", "flat"),
    ] {
      // As the board asks (`equalTo`) and as an app's `where` does (a typed condition).
      var asked = Query(className: "Memo", equalTo: [field: .string(value)], limit: 10)
      #expect(
        try client.find(asked).map(\.objectId) == [memo.objectId],
        "\(engine): \(field) = \(value)")
      asked.equalTo = [:]
      asked.conditions = [.equal(field, .string(value))]
      #expect(
        try client.find(asked).map(\.objectId) == [memo.objectId],
        "\(engine): where \(field) = \(value)")
    }
  }
}
