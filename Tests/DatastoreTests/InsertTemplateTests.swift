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
}
