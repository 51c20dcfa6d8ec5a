import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// The board's writes are one engine operation each (`WriteOperation`): a step that fails
/// midway leaves nothing of the steps before it, on every engine, and every date in one is the
/// engine's.
@Suite("one write, one operation")
struct WriteOperationTests {
  @Test(
    "a thread whose record is refused after its image was stored leaves no image",
    arguments: EngineFixtures.all)
  func threadRefusedAfterItsImage(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let before = try world.database.fingerprint()
    let acl = ACL.publicRead(owner: alice.me.objectId)
    let write = WriteOperation([
      .putFile(name: "thread-refused.png", bytes: [1, 2, 3], mimeType: "image/png", acl: acl),
      // `number` is the engine's to set: refused after the file was stored.
      .create(
        className: "Thread",
        fields: ["title": .value(.string("t")), "number": .value(.int(7))], acl: acl),
      .markRead(step: 1, upTo: 0),
    ])
    let failure = try #require(throws: WriteOperationError.self) { try alice.client.perform(write) }
    #expect(failure.step == 1)
    #expect((failure.error as? DatastoreError)?.code == .invalid)
    #expect(try world.database.fingerprint() == before)
    #expect(throws: DatastoreError.self) {
      try world.inspector().fileInfo(name: "thread-refused.png")
    }
  }

  @Test(
    "a comment refused midway leaves no row, counter, feed or search row",
    arguments: EngineFixtures.all)
  func commentRefusedMidway(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    try alice.createThread(title: "alice's", description: "", image: nil)
    let before = try world.database.fingerprint()
    // The comment is written (its thread counted up, the feed and the index told), then a
    // later step is refused: the whole operation goes.
    var steps = BoardWrites.comment(
      threadNumber: 1, text: "findable words", replyTo: nil, author: bob.me.objectId
    ).steps
    steps.append(.requireEditable(step: 0))
    let failure = try #require(throws: WriteOperationError.self) {
      try bob.client.perform(WriteOperation(steps))
    }
    #expect(failure.step == steps.count - 1)
    #expect((failure.error as? DatastoreError)?.code == .noAccess)
    #expect(try world.database.fingerprint() == before)
    #expect(try alice.thread(1).commentCount == 0)
  }

  @Test("a comment on a deleted thread changes nothing", arguments: EngineFixtures.all)
  func commentOnADeletedThread(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    try alice.createThread(title: "going", description: "", image: nil)
    try alice.deleteThread(1)
    let before = try world.database.fingerprint()
    let error = try #require(throws: DatastoreError.self) {
      try bob.addComment(to: 1, text: "too late")
    }
    #expect(error.code == .notFound)
    #expect(error.reason == .board(.noThread(1)))
    #expect(try world.database.fingerprint() == before)
  }

  @Test(
    "an edit of another's post changes nothing, even after an edit of one's own",
    arguments: EngineFixtures.all)
  func editOfAnothersPost(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    try alice.createThread(title: "alice's", description: "", image: nil)
    try bob.createThread(title: "bob's", description: "", image: nil)
    let before = try world.database.fingerprint()
    let error = try #require(throws: DatastoreError.self) {
      try bob.editThread(1, title: "mine now", description: nil)
    }
    #expect(error.code == .noAccess)
    #expect(
      error.reason == .board(.onlyAuthorMayEdit(author: alice.me.displayName, label: "#1"))
    )
    // Bob's own thread edited (a revision kept), then alice's refused: neither stays.
    let write = WriteOperation(
      BoardWrites.editThread(2, fields: ["title": .string("bob's, edited")]).steps + [
        .find(className: "Thread", equalTo: ["number": .value(.int(1))]),
        .requireEditable(step: 3),
      ])
    let failure = try #require(throws: WriteOperationError.self) {
      try bob.client.perform(write)
    }
    #expect(failure.step == 4)
    #expect(try world.database.fingerprint() == before)
    #expect(try bob.thread(2).title == "bob's")
  }

  @Test("the time someone leaves is the engine's, not the client's", arguments: EngineFixtures.all)
  func leavingIsTheEnginesDate(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    // The operation carries no date of the client's: the engine's clock fills it in.
    for step in BoardWrites.leaving(owner: alice.me.objectId).steps {
      if case .keepOne(_, _, let set, let create, _) = step {
        #expect(set == ["lastLeft": .now])
        #expect(create["lastLeft"] == nil)
      }
    }
    // An engine whose clock is ten years ahead of this process's: PostgreSQL's is the server's
    // own function, which its owner can set forward. (SQLite's is the host's clock: the same
    // as the client's, so there the operation's value above is the proof.)
    let ahead: Int64 = 10 * 365 * 24 * 3600 * 1000
    if engine is PostgresFixture {
      try world.database.executeAsOwner(
        sqlite: "",
        postgres: """
          CREATE OR REPLACE FUNCTION forum.now_ms() RETURNS bigint
          LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
          AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint + \(ahead) $$
          """)
    }
    let clientBefore = BackendDate.now()
    let engineBefore = try alice.store.engine.now()
    try alice.recordLeaving()
    try alice.recordLeaving()
    let engineAfter = try alice.store.engine.now()
    let lastLeft = try #require(try alice.marks().lastLeft)
    #expect((engineBefore...engineAfter).contains(lastLeft))
    if engine is PostgresFixture { #expect(lastLeft > clientBefore + ahead / 2) }
    // One visit record, kept up to date.
    #expect(
      try world.inspector().find(
        Query(className: "Preference", equalTo: ["kind": .string("visit")])
      ).count == 1)
  }
}
