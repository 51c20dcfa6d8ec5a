import EngineTestSupport
import Foundation
import Testing

@testable import Datastore

/// The change feed keeps the newest `Change.window` changes, on every engine: a reader who comes
/// back after more than that is told it missed some (and reads the board again), never handed a
/// batch that looks complete.
@Suite("The change feed's window")
struct FeedWindowTests {
  @Test(
    "older changes are pruned; a reader behind the window is told, one inside it is not",
    arguments: EngineFixtures.all)
  func window(_ engine: any EngineFixture) throws {
    let database = try engine.makeDatabase(rules: boardRulesForTests, indexes: [])
    let store = try Datastore.open(try database.location(as: "alice"), rules: boardRulesForTests)
    let alice = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    _ = try alice.create("Note", fields: ["text": .string("before")])
    let away = try alice.latestChange()
    #expect(try alice.changes(since: 0).missed == false, "nothing pruned yet")
    // More changes than the window holds, written straight into the feed as its triggers
    // would (the prune runs on the feed's own table), in one statement: the prune cuts a
    // batch at a time, so this costs about what the rows do.
    let count = Change.window + 10
    try database.executeAsOwner(
      sqlite: """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
        INSERT INTO changes(class, objectId, kind, readers)
        SELECT 'Note', printf('n%015d', i), 1, ' * ' FROM n
        """,
      postgres: """
        INSERT INTO forum.changes(seq, class, object_id, kind, readers)
        SELECT nextval('forum.change_seq'), 'Note', 'n' || lpad(i::text, 15, '0'), 1, '{*}'
        FROM generate_series(1, \(count)) AS i
        """)
    let latest = try alice.latestChange()
    #expect(latest >= away + count)
    // A reader who left before them missed some: it is told so.
    let behind = try alice.changes(since: away, limit: 10)
    #expect(behind.missed, "\(engine): a reader behind the window must be told")
    // One inside the window is not, and reads on as before.
    let inside = try alice.changes(since: latest - 5, limit: 10)
    #expect(!inside.missed, "\(engine)")
    #expect(inside.changes.count == 5, "\(engine)")
    // What is kept is the newest window, no more.
    var kept = 0
    var cursor: Int64 = 0
    while true {
      let batch = try alice.changes(since: cursor, limit: 1000)
      kept += batch.changes.count
      cursor = batch.next
      if !batch.hasMore { break }
    }
    #expect(
      kept <= Int(Change.window) && kept > Int(Change.window - Change.pruneBatch),
      "\(engine): \(kept) changes kept")
    // Written through the engine, a change after the prune reaches a reader inside the window.
    let note = try alice.create("Note", fields: ["text": .string("after")])
    let after = try alice.changes(since: latest)
    #expect(!after.missed && after.changes.map(\.objectId) == [note.objectId], "\(engine)")
  }
}
