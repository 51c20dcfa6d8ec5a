import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// Mutes, follows and the summary's horizon: each person's own objects on the board, on every
/// engine, out of everyone else's reach.
@Suite("Mute, follow and what is new")
struct PreferenceTests {
  @Test(
    "marks are the person's own, and one undoes the other", arguments: EngineFixtures.withRemote)
  func marksArePrivate(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    for title in ["one", "two", "three"] {
      try alice.createThread(title: title, description: "", image: nil)
    }
    #expect(try bob.mark(1, .mute))
    #expect(try bob.mark(2, .follow))
    #expect(try !bob.mark(2, .follow), "marking again changes nothing")
    var marks = try bob.marks()
    #expect(marks.muted == [1] && marks.followed == [2])
    #expect(try alice.marks() == Board.Marks(), "alice sees none of bob's marks")
    #expect(try alice.client.find(Query(className: "Preference")).isEmpty)
    // Muting a followed thread stops following it.
    #expect(try bob.mark(2, .mute))
    marks = try bob.marks()
    #expect(marks.muted == [1, 2] && marks.followed.isEmpty)
    #expect(try bob.unmark(1, .mute))
    #expect(try !bob.unmark(1, .mute))
    #expect(try bob.marks().muted == [2])
    // A thread that is not there cannot be marked.
    #expect(throws: DatastoreError.self) { try bob.mark(99, .follow) }
    // Every mark is readable and writable by bob alone, and belongs to him.
    let stored = try world.inspector().find(Query(className: "Preference", limit: 100))
    #expect(!stored.isEmpty)
    for object in stored {
      #expect(object.acl.readers == [bob.me.objectId] && object.acl.writers == [bob.me.objectId])
      #expect(object["user"]?.pointerId == bob.me.objectId)
    }
  }

  @Test("nobody can mark threads for someone else", arguments: EngineFixtures.withRemote)
  func noMarksForOthers(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    try alice.createThread(title: "one", description: "", image: nil)
    // Bob writes a mute that claims to be Alice's and lets her read it.
    var acl = ACL(readers: [bob.me.objectId], writers: [bob.me.objectId])
    acl.grant(read: true, write: true, to: alice.me.objectId)
    do {
      _ = try bob.client.create(
        "Preference",
        fields: [
          "kind": .string("mute"), "thread": .int(1),
          "user": .pointer(className: "user", objectId: alice.me.objectId),
        ], acl: acl)
    } catch {}  // refused or stored as his own: either way not hers
    _ = try? bob.client.create(
      "Preference", fields: ["kind": .string("mute"), "thread": .int(1)], acl: acl)
    #expect(try alice.marks().muted.isEmpty)
  }

  @Test(
    "the summary counts what is new and unread since you last left",
    arguments: EngineFixtures.withRemote)
  func summary(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    #expect(try bob.unreadSummary().isEmpty)
    try alice.createThread(title: "one", description: "", image: nil)
    try alice.createThread(title: "two", description: "", image: nil)
    var summary = try bob.unreadSummary()
    #expect(summary.newThreads == 2 && summary.newComments == 0 && summary.messages == 0)
    let one = try bob.thread(1)
    try bob.markRead(one, upTo: 0)
    try alice.addComment(to: 1, text: "a")
    try alice.addComment(to: 1, text: "b")
    try bob.addComment(to: 1, text: "mine never count")
    try alice.sendMessage(to: bob.me.userName, text: "hi")
    summary = try bob.unreadSummary()
    #expect(summary.newThreads == 1, "\(summary)")
    #expect(summary.newComments == 2 && summary.threadsWithComments == 1, "\(summary)")
    #expect(summary.messages == 1)
    #expect(summary.total == 4)
    // Muted threads are left out.
    try bob.mark(2, .mute)
    #expect(try bob.unreadSummary().newThreads == 0)
    // After leaving, only what comes later counts.
    Thread.sleep(forTimeInterval: 0.005)
    try bob.recordLeaving()
    Thread.sleep(forTimeInterval: 0.005)
    summary = try bob.unreadSummary()
    #expect(summary.newComments == 0 && summary.newThreads == 0, "\(summary)")
    #expect(summary.messages == 0, "the message came before")
    try alice.addComment(to: 1, text: "c")
    try alice.sendMessage(to: bob.me.userName, text: "again")
    summary = try bob.unreadSummary()
    #expect(summary.newComments == 3, "every unread comment of a thread active since: \(summary)")
    #expect(summary.messages == 2, "every unread message of a conversation active since")
  }
}
