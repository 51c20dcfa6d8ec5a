import Datastore
import EngineTestSupport
import Foundation
import Testing

@testable import Forum

/// The board's rules as the engine enforces them, tried through the Datastore API directly, as a
/// client that skips Board (a modified forum, a script) would.
@Suite("Board rules in the engine")
struct BoardRulesTests {
  /// Alice and Bob, each with their own connection to a board with the board's rules.
  private final class World {
    let database: TestDatabase
    let root: String
    let alice: (client: DatastoreClient, user: User)
    let bob: (client: DatastoreClient, user: User)

    init(_ engine: any EngineFixture) throws {
      let database = try engine.makeDatabase(rules: Board.rules, indexes: Board.indexes)
      self.database = database
      root = try makeTemporaryDirectory("BoardRulesTests")
      let profiles = ProfileStore(directory: root + "/profiles")
      func signIn(_ person: String) throws -> (client: DatastoreClient, user: User) {
        try Datastore.open(
          try database.location(as: person), rules: Board.rules, indexes: Board.indexes
        ).signIn(profile: person, in: profiles)
      }
      alice = try signIn("alice")
      bob = try signIn("bob")
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func thread(_ id: String) -> JSONValue { .pointer(className: "Thread", objectId: id) }
  }

  private func expectCode(
    _ code: ErrorCode, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
  ) {
    do {
      try body()
      Issue.record(
        "expected \(code.rawValue), nothing was thrown \(comment?.rawValue ?? "")",
        sourceLocation: sourceLocation)
    } catch let error as DatastoreError {
      #expect(
        error.code == code, "\(error) \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    } catch {
      Issue.record("expected \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
    }
  }

  @Test(
    "a comment is readable by exactly who can read its thread",
    arguments: EngineFixtures.withRemote)
  func commentReadersAreThreadReaders(_ engine: any EngineFixture) throws {
    let world = try World(engine)
    let a = world.alice.user.objectId
    let thread = try world.alice.client.create(
      "Thread", fields: ["title": .string("private")], acl: ACL(readers: [a], writers: [a]))
    // Alice asks for a public comment; the thread's readers win.
    let comment = try world.alice.client.create(
      "Comment", fields: ["text": .string("secret"), "thread": world.thread(thread.objectId)],
      acl: .publicRead(owner: a))
    let comments = Query(className: "Comment")
    #expect(try world.bob.client.find(comments).isEmpty)
    #expect(try world.bob.client.count(comments) == 0)
    expectCode(.notFound) { _ = try world.bob.client.get("Comment", objectId: comment.objectId) }
    // Bob cannot comment on a thread he cannot read, nor learn that it exists.
    expectCode(.notFound) {
      try world.bob.client.create(
        "Comment", fields: ["text": .string("hi"), "thread": world.thread(thread.objectId)],
        acl: .publicRead(owner: world.bob.user.objectId))
    }
    #expect(try world.alice.client.count(comments) == 1)

    // The thread opens up: its comments follow.
    try world.alice.client.update("Thread", objectId: thread.objectId, acl: .publicRead(owner: a))
    #expect(try world.bob.client.find(comments).map(\.objectId) == [comment.objectId])
    // And close again.
    try world.alice.client.update(
      "Thread", objectId: thread.objectId, acl: ACL(readers: [a], writers: [a]))
    #expect(try world.bob.client.find(comments).isEmpty)
  }

  @Test(
    "numbers, counters and authorship are the engine's, whatever a client sends",
    arguments: EngineFixtures.withRemote)
  func managedFieldsAndForgedAuthorship(_ engine: any EngineFixture) throws {
    let world = try World(engine)
    let a = world.alice.user.objectId
    let b = world.bob.user.objectId
    let mine = ACL.publicRead(owner: a)
    // Forged authorship.
    expectCode(.noAccess) {
      try world.alice.client.create(
        "Thread",
        fields: ["title": .string("t"), "user": .pointer(className: "user", objectId: b)],
        acl: mine)
    }
    // Writers other than the author.
    expectCode(.noAccess) {
      try world.alice.client.create(
        "Thread", fields: ["title": .string("t")], acl: ACL(readers: ["*"], writers: [a, b]))
    }
    // Numbers and counters are not a client's to set.
    for field in ["number", "commentCount", "lastCommentNumber", "lastActivity"] {
      expectCode(.invalid, "\(field)") {
        try world.alice.client.create(
          "Thread", fields: ["title": .string("t"), field: .int(7)], acl: mine)
      }
    }
    let thread = try world.alice.client.create("Thread", fields: ["title": .string("t")], acl: mine)
    #expect(thread["number"] == .int(1))
    #expect(thread["user"]?.pointerId == a)
    #expect(thread["commentCount"] == .int(0))
    #expect(thread["lastCommentNumber"] == .int(0))
    #expect(thread["lastActivity"] == .int(thread.createDate))
    for field in ["number", "commentCount", "lastCommentNumber", "lastActivity", "user"] {
      expectCode(.invalid, "\(field)") {
        try world.alice.client.update("Thread", objectId: thread.objectId, set: [field: .int(9)])
      }
      expectCode(.invalid, "\(field)") {
        try world.alice.client.update(
          "Thread", objectId: thread.objectId, increment: [field: 1])
      }
    }
    expectCode(.invalid) {
      try world.bob.client.create(
        "Comment",
        fields: [
          "text": .string("c"), "thread": world.thread(thread.objectId), "number": .int(1),
        ], acl: .publicRead(owner: b))
    }

    // Bob comments on alice's thread without being able to write it: the engine counts.
    let first = try world.bob.client.create(
      "Comment", fields: ["text": .string("c1"), "thread": world.thread(thread.objectId)],
      acl: .publicRead(owner: b))
    let second = try world.alice.client.create(
      "Comment", fields: ["text": .string("c2"), "thread": world.thread(thread.objectId)],
      acl: .publicRead(owner: a))
    #expect(first["number"] == .int(1))
    #expect(second["number"] == .int(2))
    #expect(first["user"]?.pointerId == b)
    var stored = try world.alice.client.get("Thread", objectId: thread.objectId)
    #expect(stored["commentCount"] == .int(2))
    #expect(stored["lastCommentNumber"] == .int(2))
    #expect(stored["lastActivity"] == .int(second.createDate))
    // A comment cannot be moved to another thread.
    let other = try world.bob.client.create(
      "Thread", fields: ["title": .string("bob's")], acl: .publicRead(owner: b))
    #expect(other["number"] == .int(2))
    expectCode(.invalid) {
      try world.bob.client.update(
        "Comment", objectId: first.objectId, set: ["thread": world.thread(other.objectId)])
    }
    // Bob may edit his comment's text; the number stays.
    let edited = try world.bob.client.update(
      "Comment", objectId: first.objectId, set: ["text": .string("c1!")])
    #expect(edited["number"] == .int(1))

    // Deleting a comment counts down and never reuses its number.
    try world.bob.client.delete("Comment", objectId: first.objectId)
    stored = try world.alice.client.get("Thread", objectId: thread.objectId)
    #expect(stored["commentCount"] == .int(1))
    let third = try world.bob.client.create(
      "Comment", fields: ["text": .string("c3"), "thread": world.thread(thread.objectId)],
      acl: .publicRead(owner: b))
    #expect(third["number"] == .int(3))

    // Bob cannot delete alice's thread; alice's delete takes every comment with it.
    expectCode(.noAccess) { try world.bob.client.delete("Thread", objectId: thread.objectId) }
    try world.alice.client.delete("Thread", objectId: thread.objectId)
    #expect(try world.bob.client.count(Query(className: "Comment")) == 0)
    #expect(try world.bob.client.count(Query(className: "Thread")) == 1)
  }

  @Test(
    "a thread's image goes with it, and only a file its author may write can be attached",
    arguments: EngineFixtures.withRemote)
  func threadFileRules(_ engine: any EngineFixture) throws {
    let world = try World(engine)
    let a = world.alice.user.objectId
    let b = world.bob.user.objectId
    try world.bob.client.putFile(
      name: "bobs.png", bytes: [1, 2, 3], mimeType: "image/png", acl: .publicRead(owner: b))
    // Alice names bob's file as her thread's image, to have it deleted with her thread.
    expectCode(.noAccess) {
      try world.alice.client.create(
        "Thread", fields: ["title": .string("t"), "fileName": .string("bobs.png")],
        acl: .publicRead(owner: a))
    }
    expectCode(.notFound) {
      try world.alice.client.create(
        "Thread", fields: ["title": .string("t"), "fileName": .string("missing.png")],
        acl: .publicRead(owner: a))
    }
    try world.alice.client.putFile(
      name: "alices.png", bytes: [4, 5], mimeType: "image/png", acl: .publicRead(owner: a))
    let thread = try world.alice.client.create(
      "Thread", fields: ["title": .string("t"), "fileName": .string("alices.png")],
      acl: .publicRead(owner: a))
    expectCode(.invalid) {
      try world.alice.client.update(
        "Thread", objectId: thread.objectId, set: ["fileName": .string("bobs.png")])
    }
    try world.alice.client.delete("Thread", objectId: thread.objectId)
    expectCode(.notFound) { _ = try world.alice.client.fileInfo(name: "alices.png") }
    #expect(try world.alice.client.getFile(name: "bobs.png") == [1, 2, 3])
  }
}
