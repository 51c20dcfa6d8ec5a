import EngineTestSupport
import Foundation
import Testing

@testable import Datastore

/// SQLite keeps each class's INSERT once built (`SQLiteEngine.insertTemplate`), with what the
/// caller puts in it (the parent's read test, the row's creator) fixed: one connection serving
/// several callers, as a server's pooled connection does, writes each row as its own caller.
@Suite("an INSERT built once, for each caller (SQLite)")
struct InsertTemplateTests {
  @Test func oneConnectionInsertsAsEachCaller() throws {
    let rules = NestedRulesTests.rules
    let database = try SQLiteFixture().makeDatabase(rules: rules, indexes: [])
    let store = try Datastore.open(database.ownerLocation, rules: rules)
    let alice = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    let bob = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    let (a, b) = (try #require(alice.userId), try #require(bob.userId))
    func section(of client: DatastoreClient, _ me: String) throws -> DataObject {
      try client.create("Section", fields: [:], acl: ACL(readers: [me], writers: [me]))
    }
    func topic(under section: DataObject, by client: DatastoreClient, _ me: String) throws
      -> DataObject
    {
      try client.create(
        "Topic",
        fields: ["section": .pointer(className: "Section", objectId: section.objectId)],
        acl: ACL(readers: [me], writers: [me]))
    }
    let hers = try section(of: alice, a)
    _ = try topic(under: hers, by: alice, a)
    // Right after alice's insert on the same connection, bob cannot put a topic under her
    // private section: her read test is not his.
    #expect(throws: DatastoreError.self) { try topic(under: hers, by: bob, b) }
    let his = try section(of: bob, b)
    let histopic = try topic(under: his, by: bob, b)
    #expect(throws: DatastoreError.self) { try topic(under: his, by: alice, a) }
    let connection = try Connection(path: database.ownerLocation)
    func creator(_ object: DataObject) throws -> String? {
      try connection.prepare("SELECT creator FROM objects WHERE objectId = ?")
        .firstRow([.text(object.objectId)]) { try $0.text(0) } ?? nil
    }
    #expect(try creator(hers) == a)
    #expect(try creator(his) == b && creator(histopic) == b)
    #expect(histopic["number"] == .int(1))
  }

  /// A child's parent is read first and its columns bound into the INSERT
  /// (`InsertTemplate.parent`): the child gets them as the parent's row holds them, even
  /// bytes another program wrote there that are not UTF-8, and the row it answers is the row
  /// written.
  @Test func aChildIsWrittenFromItsParentsRowAsStored() throws {
    let rules = NestedRulesTests.rules
    let database = try SQLiteFixture().makeDatabase(rules: rules, indexes: [])
    let store = try Datastore.open(database.ownerLocation, rules: rules)
    let alice = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    let me = try #require(alice.userId)
    let section = try alice.create(
      "Section", fields: [:], acl: ACL(readers: [me], writers: [me]))
    let connection = try Connection(path: database.ownerLocation)
    try connection.run(
      """
      UPDATE objects SET readers = CAST(readers || X'FF20' AS TEXT),
        counts = json_set(counts, '$.lastTopicNumber', 41)
      WHERE objectId = ?
      """, [.text(section.objectId)])
    let topic = try alice.create(
      "Topic", fields: ["section": .pointer(className: "Section", objectId: section.objectId)],
      acl: ACL(readers: [me], writers: [me]))
    #expect(topic["number"] == .int(42))
    #expect(topic["section"] == .pointer(className: "Section", objectId: section.objectId))
    func readers(_ objectId: String) throws -> String? {
      try connection.prepare("SELECT hex(readers) FROM objects WHERE objectId = ?")
        .firstRow([.text(objectId)]) { try $0.text(0) } ?? nil
    }
    let stored = try #require(try readers(section.objectId))
    #expect(stored.hasSuffix("FF20"))
    #expect(try readers(topic.objectId) == stored)
    #expect(try alice.get("Topic", objectId: topic.objectId) == topic)
  }
}
