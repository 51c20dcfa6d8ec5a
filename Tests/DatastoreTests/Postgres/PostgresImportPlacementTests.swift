import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// Issue 22 on an imported board: every row some members may not read lives in the owner-only
/// `forum.private_objects`, where no member's query, plan or estimate reaches it; `forum import`
/// wrote every object to `forum.objects`, so an app's private rows (a user's own preferences,
/// a private thread, a DM) sat among the public ones until the next `forum init`; and no
/// imported row was in the change feed.
@Suite("PostgreSQL: an import puts each row in its table")
struct PostgresImportPlacementTests {
  @Test func privateRowsAreImportedIntoTheOwnerOnlyTable() throws {
    let board = try installedBoard()
    defer { board.remove() }
    let store = try Datastore.open(board.owner.uri, rules: boardRulesForTests)
    let user = "U000000000000001"
    func object(_ className: String, _ id: String, readers: Set<String>) -> ImportItem {
      .object(
        ImportedObject(
          className: className, objectId: id, createDate: 1_600_000_000_000,
          updateDate: 1_600_000_000_000, acl: ACL(readers: readers, writers: [user]),
          fields: ["title": .string(id)]),
        anonymousId: nil)
    }
    let items = [
      object("Thread", "PUBLIC0000000001", readers: ["*"]),
      object("Thread", "HIDDEN0000000001", readers: [user]),
      object("Preference", "HIDDEN0000000002", readers: [user, "role:mods"]),
      // A private class (a pair's: conversations) even when everyone may read it.
      object("Conversation", "HIDDEN0000000003", readers: ["*"]),
    ]
    #expect(try store.importItems(items) == Array(repeating: .imported, count: items.count))
    func ids(_ table: String) throws -> String {
      try board.cluster.admin(
        "SELECT string_agg(object_id, ',' ORDER BY object_id) FROM forum.\(table)",
        database: board.database
      ).trimmingCharacters(in: .whitespacesAndNewlines)
    }
    #expect(try ids("objects") == "PUBLIC0000000001")
    #expect(try ids("private_objects") == "HIDDEN0000000001,HIDDEN0000000002,HIDDEN0000000003")
    // Each is in the change feed, created, as on SQLite: the public one in the public feed,
    // the others once for each of their readers (a live reader learns of them).
    #expect(
      try board.cluster.admin(
        "SELECT string_agg(object_id || ':' || kind, ',' ORDER BY seq) FROM forum.changes",
        database: board.database
      ).trimmingCharacters(in: .whitespacesAndNewlines) == "PUBLIC0000000001:1")
    #expect(
      try board.cluster.admin(
        """
        SELECT string_agg(object_id || ':' || kind || ':' || reader, ',' ORDER BY seq, reader COLLATE "C")
        FROM forum.private_changes
        """, database: board.database
      ).trimmingCharacters(in: .whitespacesAndNewlines)
        == "HIDDEN0000000001:1:\(user),HIDDEN0000000002:1:\(user),"
        + "HIDDEN0000000002:1:role:mods,HIDDEN0000000003:1:*")
    // Found again where they are: a second run is unchanged and adds nothing to the feed.
    let feed = try board.cluster.admin(
      "SELECT count(*) FROM forum.changes", database: board.database)
    #expect(try store.importItems(items) == Array(repeating: .unchanged, count: items.count))
    #expect(
      try board.cluster.admin("SELECT count(*) FROM forum.changes", database: board.database)
        == feed)
  }
}
