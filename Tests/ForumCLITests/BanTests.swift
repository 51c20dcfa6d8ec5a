import Foundation
import PostgresTestCluster
import Testing

/// A ban is the board's (`StewardRule`): a moderator bans a member by handle at an ordinary
/// prompt, and the engine refuses that member's every write, on both engines, with psql too
/// on PostgreSQL; they still read, their posts stay, and an unban lets them write again.
@Suite("bans are the board's")
struct BanTests {
  @Test func aModeratorBansOnSQLite() throws { try banning(postgres: false) }

  @Test func aModeratorBansOnPostgreSQL() throws { try banning(postgres: true) }

  private func banning(postgres: Bool) throws {
    let place = try PinTests.Place(postgres: postgres)
    try place.ok(["list"], "owner")  // on SQLite the first user owns the board
    try place.ok(["new", "--title", "Rules"], "owner")
    try place.ok(["comment", "1", "alice was here"], "alice")
    let mod = try place.ok(["--json", "whoami"], "mod").json().string("userName") ?? ""
    let alice = try place.ok(["--json", "whoami"], "alice").json().string("userName") ?? ""
    try place.ok(["mod", "add", "@" + mod], "owner")

    // A member may not ban; a moderator may; the owner may not be banned.
    let refused = try place.run(["mod", "ban-key", "@" + mod], "alice")
    #expect(refused.status == 3 && refused.stderrLines.count == 1, "\(refused.summary)")
    try place.ok(["mod", "ban-key", "@" + alice], "mod")
    let owner = try place.ok(["--json", "whoami"], "owner").json().string("userName") ?? ""
    let theOwner = try place.run(["mod", "ban-key", "@" + owner], "mod")
    #expect(theOwner.status == 3, "\(theOwner.summary)")

    // Banned: every write refused in one line that says why; reading goes on; posts stay.
    for words in [
      ["comment", "1", "more"], ["new", "--title", "Mine"], ["name", "Alice Again"],
      ["edit", "1/1", "edited"],
    ] {
      let write = try place.run(words, "alice")
      #expect(write.status == 3, "\(words): \(write.summary)")
      #expect(
        write.stderrLines == ["forum: you are banned from this board: you may read, not write"],
        "\(words): \(write.summary)")
    }
    let json = try place.run(["--json", "comment", "1", "more"], "alice")
    #expect(try json.jsonError().string("code") == "E403001", "\(json.summary)")
    let shown = try place.ok(["show", "1"], "alice").stdout
    #expect(shown.contains("alice was here") && !shown.contains("more"), "\(shown)")

    if let board = place.board {
      // psql as the banned member: the database's trigger refuses her rows.
      func asAlice(_ sql: String) throws -> RunResult {
        try place.psql(as: "alice", sql, on: board)
      }
      let inserted = try asAlice(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        SELECT 'Thread', 'PsqlBannedThrd01', '{*}', ARRAY[forum.caller_id()],
          jsonb_build_object('title', 'by hand',
            'user', jsonb_build_object('__type', 'Pointer', 'className', 'user',
                                       'objectId', forum.caller_id()))
        """)
      #expect(inserted.status != 0 && inserted.stderr.contains("banned"), "\(inserted.summary)")
      let updated = try asAlice(
        "UPDATE forum.objects SET data = data || '{\"text\": \"by hand\"}' WHERE class = 'Comment'")
      #expect(updated.status != 0 && updated.stderr.contains("banned"), "\(updated.summary)")
      #expect(!(try place.ok(["list"], "owner").stdout.contains("by hand")))
    }

    // Unbanned: she writes again.
    try place.ok(["mod", "unban-key", "@" + alice], "mod")
    try place.ok(["comment", "1", "back again"], "alice")

    // A banned moderator stays banned: no unbanning themself, no take-down.
    try place.ok(["mod", "ban-key", "@" + mod], "owner")
    let selfUnban = try place.run(["mod", "unban-key", "@" + mod], "mod")
    #expect(selfUnban.status == 3 && selfUnban.stderrLines.count == 1, "\(selfUnban.summary)")
    let takeDown = try place.run(["delete", "1/2", "--yes"], "mod")
    #expect(takeDown.status == 3, "\(takeDown.summary)")
    #expect(try place.ok(["show", "1"], "owner").stdout.contains("back again"))
    try place.ok(["mod", "unban-key", "@" + mod], "owner")
    try place.ok(["delete", "1/2", "--yes"], "mod")

    // The posting budget is the board's setting: the moderator sets it, everyone reads it.
    #expect(try place.run(["mod", "posts-per-minute", "5"], "alice").status == 3)
    try place.ok(["mod", "posts-per-minute", "5"], "mod")
    let budget = try place.ok(["--json", "mod", "posts-per-minute"], "alice").json()
    #expect(budget.int("postsPerMinute") == 5)
  }
}
