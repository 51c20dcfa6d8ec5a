import Foundation
import Testing

@testable import Datastore

/// Boards record their rules' one encoding (`EngineRules.record`) and read the rules back from
/// it; the signature is its hash. (`ForumTests/RulesEncodingTests` holds the board's rules to
/// the text boards made before recorded.)
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
      ],
      pairs: [
        PairRule(className: "C", ownerField: "owner", partnerField: "partner", pairField: "pair")
      ]),
  ]

  @Test("the encoding reads back as the same rules", arguments: ruleSets)
  func readsBack(rules: EngineRules) throws {
    #expect(try EngineRules(record: JSONValue.parse(rules.encoding)) == rules)
    #expect(rules.signature == SHA256.hex(SHA256.hash(rules.encoding)))
  }

  @Test("a damaged record is refused, naming what it lacks")
  func damagedRecord() throws {
    let record = try JSONValue.parse(#"{"sequences":[{"className":"A","field":"n"}]}"#)
    #expect(throws: DatastoreError(.systemError, detail: "the recorded rules lack sequence")) {
      try EngineRules(record: record)
    }
  }

  @Test("a set of writers is signed in one order, whatever the hash order")
  func writersSorted() {
    let rules = EngineRules(owners: [
      OwnerRule(className: "A", field: "o", additionalWriters: ["role:b", "role:a", "role:c"])
    ])
    #expect(rules.encoding.contains(#""additionalWriters":["role:a","role:b","role:c"]"#))
  }
}
