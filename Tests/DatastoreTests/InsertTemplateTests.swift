import EngineTestSupport
import Foundation
import Testing

@testable import Datastore

/// SQLite keeps each class's INSERT once built (`SQLiteEngine.insertTemplate`), with what the
/// caller puts in it (the parent's read test, the row's creator) fixed: one connection serving
/// several callers, as a server's pooled connection does, writes each row as its own caller.
@Suite("an INSERT built once, for each caller (SQLite)")
struct InsertTemplateTests {
  /// A board of `NestedRulesTests.rules` (Section, Topic, Reply) and two of its users on one
  /// connection, as a server's pooled connection serves several.
  static func board() throws -> (TestDatabase, DatastoreClient, DatastoreClient) {
    let rules = NestedRulesTests.rules
    let database = try SQLiteFixture().makeDatabase(rules: rules, indexes: [])
    let store = try Datastore.open(database.ownerLocation, rules: rules)
    let alice = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    let bob = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    return (database, alice, bob)
  }

  @Test func oneConnectionInsertsAsEachCaller() throws {
    let (database, alice, bob) = try Self.board()
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
    let (database, alice, _) = try Self.board()
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

  /// A parent whose readers hold a NUL byte (written by another program), ` alice \0 * `:
  /// SQLite's `instr` reads past the NUL, so the section is public and bob puts a topic under
  /// it. The topic takes the section's readers whole, so bob reads the topic he just wrote.
  /// (The helper's review: bound back from Swift, they were cut at the NUL.)
  @Test func aChildTakesItsParentsReadersWholeWhenTheyHoldANul() throws {
    let (database, alice, bob) = try Self.board()
    let (a, b) = (try #require(alice.userId), try #require(bob.userId))
    let section = try alice.create(
      "Section", fields: [:], acl: ACL(readers: ["*", a], writers: [a]))
    let connection = try Connection(path: database.ownerLocation)
    try connection.run(
      "UPDATE objects SET readers = ' ' || ? || ' ' || char(0) || ' * ' WHERE objectId = ?",
      [.text(a), .text(section.objectId)])
    let topic = try bob.create(
      "Topic", fields: ["section": .pointer(className: "Section", objectId: section.objectId)],
      acl: ACL(readers: [b], writers: [b]))
    func readers(_ objectId: String) throws -> String? {
      try connection.prepare(
        "SELECT typeof(readers) || ':' || hex(readers) FROM objects WHERE objectId = ?"
      ).firstRow([.text(objectId)]) { try $0.text(0) } ?? nil
    }
    let stored = try #require(try readers(section.objectId))
    #expect(try readers(topic.objectId) == stored)
    #expect(throws: Never.self) { _ = try bob.get("Topic", objectId: topic.objectId) }
  }

  /// A parent's readers that are text but not UTF-8 stay text in the child, the parent's
  /// (`IS`), as the rules' alignment and the readers triggers compare them.
  @Test func aChildsReadersKeepTheirTypeWhenNotUTF8() throws {
    let (database, alice, _) = try Self.board()
    let me = try #require(alice.userId)
    let section = try alice.create(
      "Section", fields: [:], acl: ACL(readers: [me], writers: [me]))
    let connection = try Connection(path: database.ownerLocation)
    try connection.run(
      "UPDATE objects SET readers = CAST(readers || X'FF20' AS TEXT) WHERE objectId = ?",
      [.text(section.objectId)])
    let topic = try alice.create(
      "Topic", fields: ["section": .pointer(className: "Section", objectId: section.objectId)],
      acl: ACL(readers: [me], writers: [me]))
    let same = try connection.prepare(
      """
      SELECT c.readers IS p.readers FROM objects c, objects p
      WHERE c.objectId = ? AND p.objectId = ?
      """
    ).firstRow([.text(topic.objectId), .text(section.objectId)]) { $0.int(0) }
    #expect(same == 1)
  }

  /// An INSERT that writes no row and says nothing (a `RAISE(IGNORE)` trigger another program
  /// put on the file) is refused: the connection's last rowid names bob's private section,
  /// which alice must not be answered with.
  @Test func anInsertThatWritesNothingIsNotAnsweredWithAnotherRow() throws {
    let (database, alice, bob) = try Self.board()
    let (a, b) = (try #require(alice.userId), try #require(bob.userId))
    let his = try bob.create(
      "Section", fields: ["secret": .string("bob's")], acl: ACL(readers: [b], writers: [b]))
    let connection = try Connection(path: database.ownerLocation)
    try connection.run(
      """
      CREATE TRIGGER hostile BEFORE INSERT ON objects WHEN NEW.creator = '\(a)'
      BEGIN SELECT RAISE(IGNORE); END
      """)
    #expect(throws: DatastoreError.self) {
      _ = try alice.create("Section", fields: [:], acl: ACL(readers: [a], writers: [a]))
    }
    let answer = try? alice.create("Section", fields: [:], acl: ACL(readers: [a], writers: [a]))
    #expect(answer?.objectId != his.objectId)
    #expect(answer?["secret"] == nil)
  }
}
