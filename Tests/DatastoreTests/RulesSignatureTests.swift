import Foundation
import Testing

@testable import Datastore

/// Boards record their rules' signature and reinstall (SQLite) or ask for `forum init`
/// (PostgreSQL) when it differs: the hand-written signature must be, byte for byte, the
/// JSONEncoder text that boards recorded before it.
@Suite("rules signature")
struct RulesSignatureTests {
  static let ruleSets: [EngineRules] = [
    boardRulesForTests,
    EngineRules(),
    EngineRules(
      sequences: [SequenceRule(className: "A", field: "n", sequence: "s_1")],
      owners: [OwnerRule(className: "A", field: "owner", additionalWriters: ["role:moderator"])],
      children: [
        ChildRule(
          childClass: "B", parentField: "a", parentClass: "A", numberField: "n",
          lastNumberField: "last", countField: "count", activityField: "active", fileField: nil)
      ]),
  ]

  @Test("the signature is JSONEncoder's sorted-keys text", arguments: ruleSets)
  func sameAsJSONEncoder(rules: EngineRules) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let encoded = String(decoding: try encoder.encode(rules), as: UTF8.self)
    #expect(rules.signature == encoded)
    // And it reads back as the same rules.
    #expect(try JSONDecoder().decode(EngineRules.self, from: Data(rules.signature.utf8)) == rules)
  }

  @Test("a set of writers is signed in one order, whatever the hash order")
  func writersSorted() {
    let rules = EngineRules(owners: [
      OwnerRule(className: "A", field: "o", additionalWriters: ["role:b", "role:a", "role:c"])
    ])
    #expect(rules.signature.contains(#""additionalWriters":["role:a","role:b","role:c"]"#))
  }
}
