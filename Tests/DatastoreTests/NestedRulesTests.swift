import Datastore
import EngineTestSupport
import Testing

/// Rules other than the board's, rendered from their plan (`WritePlan`) on both engines: a class
/// that is a child and a parent at once (a topic of a section, with replies), under a class with
/// a sequence. The board's own SQL is pinned (`RulesSQLPinTests`); this says the plan's effects
/// still compose when one class has them all.
@Suite("nested rules on every engine")
struct NestedRulesTests {
  static let rules = EngineRules(
    sequences: [SequenceRule(className: "Section", field: "number", sequence: "sectionNumber")],
    children: [
      ChildRule(
        childClass: "Topic", parentField: "section", parentClass: "Section", numberField: "number",
        lastNumberField: "lastTopicNumber", countField: "topicCount", activityField: "lastActivity",
        fileField: nil),
      ChildRule(
        childClass: "Reply", parentField: "topic", parentClass: "Topic", numberField: "number",
        lastNumberField: "lastReplyNumber", countField: "replyCount", activityField: "lastActivity",
        fileField: nil),
    ])

  @Test(arguments: EngineFixtures.all)
  func aChildThatIsAParentIsNumberedCountedAndCascaded(_ engine: any EngineFixture) throws {
    let database = try engine.makeDatabase(rules: Self.rules, indexes: [])
    func client(_ name: String) throws -> DatastoreClient {
      let store = try Datastore.open(try database.location(as: name), rules: Self.rules)
      return store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    }
    let alice = try client("alice")
    let bob = try client("bob")
    let me = alice.userId!
    let acl = ACL(readers: ["*", me], writers: [me])
    func int(_ object: DataObject, _ field: String) -> Int64? { object[field]?.intValue }
    func reread(_ object: DataObject) throws -> DataObject {
      try alice.get(object.className, objectId: object.objectId)
    }

    let section = try alice.create("Section", fields: [:], acl: acl)
    #expect(int(section, "number") == 1)
    let topic = try alice.create(
      "Topic", fields: ["section": .pointer(className: "Section", objectId: section.objectId)],
      acl: acl)
    #expect(int(topic, "number") == 1)
    #expect(int(topic, "replyCount") == 0, "a child starts its own counters as a parent")
    let replies = try (1...2).map { _ in
      try alice.create(
        "Reply", fields: ["topic": .pointer(className: "Topic", objectId: topic.objectId)],
        acl: acl)
    }
    #expect(replies.map { int($0, "number") } == [1, 2])
    #expect(int(try reread(section), "topicCount") == 1)
    #expect(int(try reread(topic), "replyCount") == 2)
    #expect(int(try reread(topic), "lastReplyNumber") == 2)
    #expect(int(try reread(topic), "number") == 1, "the replies left the topic's number")

    try alice.delete("Reply", objectId: replies[0].objectId)
    #expect(int(try reread(topic), "replyCount") == 1)
    #expect(try bob.get("Reply", objectId: replies[1].objectId).objectId == replies[1].objectId)

    // Readers follow down both levels (on PostgreSQL the rows move to the private table).
    try alice.update(
      "Section", objectId: section.objectId, acl: ACL(readers: [me], writers: [me]))
    #expect(try reread(replies[1]).acl.readers == [me])
    #expect(throws: DatastoreError.self, "bob no longer reads the reply") {
      try bob.get("Reply", objectId: replies[1].objectId)
    }

    try alice.delete("Section", objectId: section.objectId)
    for object in [topic, replies[1]] {
      #expect(throws: DatastoreError.self, "\(object.className) went with its section") {
        try alice.get(object.className, objectId: object.objectId)
      }
    }
  }
}
