import Foundation
import PostgresTestCluster
import Testing

/// The `forum` binary on a PostgreSQL board: `forum init` by the owner, members posting as their
/// own roles, and every way of pointing at a server that does not work said in one line.
@Suite("PostgreSQL from the command line")
struct PostgresCommandLineTests {
  @Test("the owner runs forum init (twice); members post and cannot delete each other's posts")
  func initThenPost() throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board()
    defer { board.remove() }
    for _ in 0..<2 {
      let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
      #expect(initialized.status == 0, "\(initialized.summary)")
      #expect(initialized.stdout.contains("forum_member"), "\(initialized.summary)")
      #expect(!initialized.stdout.contains(board.owner.password), "the password is never shown")
    }
    for member in ["alice", "bob"] {
      try board.cluster.admin("GRANT forum_member TO \(board[member].name)")
    }
    let posted = try forum.run(
      ["new", "--title", "hello from alice"], profile: "alice", database: board["alice"].uri)
    #expect(posted.status == 0, "\(posted.summary)")
    let commented = try forum.run(
      ["comment", "1", "hi alice"], profile: "bob", database: board["bob"].uri)
    #expect(commented.status == 0, "\(commented.summary)")
    let refused = try forum.run(
      ["delete", "1", "--yes"], profile: "bob", database: board["bob"].uri)
    #expect(refused.status == 3, "\(refused.summary)")
    let shown = try forum.run(["show", "1"], profile: "alice", database: board["alice"].uri)
    #expect(shown.status == 0, "\(shown.summary)")
    #expect(shown.stdout.contains("hello from alice") && shown.stdout.contains("hi alice"))
    let memberInit = try forum.run(["init"], profile: nil, database: board["alice"].uri)
    #expect(memberInit.status == 3, "\(memberInit.summary)")
    #expect(memberInit.stderrLines.count == 1, "\(memberInit.summary)")
  }

  /// Runs `forum list` on `uri` and expects one line on stderr containing `fix`, and `status`.
  private func expectRefusal(
    _ forum: ForumFixture, _ uri: String, status: Int32, mentions fix: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let result = try forum.run(["list"], profile: "alice", database: uri)
    #expect(result.status == status, "\(result.summary)", sourceLocation: sourceLocation)
    #expect(result.stderrLines.count == 1, "\(result.summary)", sourceLocation: sourceLocation)
    #expect(result.stderr.contains(fix), "\(result.summary)", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, "\(result.summary)", sourceLocation: sourceLocation)
  }

  @Test("bad server locations: one line naming the fix, exit 1 or 3, nothing written")
  func badLocations() throws {
    let forum = try ForumFixture()
    let cluster = try PostgresTestCluster.shared()
    let board = try cluster.board()
    defer { board.remove() }

    // A URI with a parameter libpq does not know.
    try expectRefusal(
      forum, board["alice"].uri + "&colour=blue", status: 1, mentions: "colour")
    // Nobody listens on port 1.
    try expectRefusal(
      forum, "postgresql://127.0.0.1:1/forum?user=alice&connect_timeout=3", status: 1,
      mentions: "cannot reach the PostgreSQL server")
    // A wrong password over TCP (SCRAM).
    try expectRefusal(
      forum,
      cluster.uri(
        database: board.database, role: board["alice"].name, password: "wrong", tcp: true),
      status: 3, mentions: "refused the login")
    // No schema yet: the member is told who must run what, and no schema appears.
    try cluster.admin("GRANT forum_member TO \(board["alice"].name)")
    try expectRefusal(
      forum, board["alice"].uri, status: 1,
      mentions: "run `forum init --db URI` as the database owner")
    #expect(
      try cluster.admin(
        "SELECT count(*) FROM pg_namespace WHERE nspname = 'forum'", database: board.database
      )
      .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    // An older schema.
    #expect(try forum.run(["init"], profile: nil, database: board.owner.uri).status == 0)
    let version = "(SELECT value FROM forum.meta WHERE key = 'schema_version')"
    let current = try cluster.admin("SELECT \(version)", database: board.database)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    try cluster.admin(
      "UPDATE forum.meta SET value = (value::int - 1)::text WHERE key = 'schema_version'",
      database: board.database)
    let before = try cluster.admin(
      "SELECT count(*) FROM forum.objects", database: board.database)
    try expectRefusal(
      forum, board["alice"].uri, status: 1,
      mentions: "run `forum init --db URI` as the database owner")
    #expect(
      try cluster.admin("SELECT count(*) FROM forum.objects", database: board.database) == before)
    try cluster.admin(
      "UPDATE forum.meta SET value = '\(current)' WHERE key = 'schema_version'",
      database: board.database)
    // Triggers another forum of the same schema installed: members are served by them (the
    // owner's next command installs this forum's, as `forum init` would).
    try cluster.admin(
      "UPDATE forum.meta SET value = 'old' WHERE key = 'triggers'", database: board.database)
    #expect(try forum.run(["list"], profile: "alice", database: board["alice"].uri).status == 0)
    #expect(try forum.run(["list"], profile: "owner", database: board.owner.uri).status == 0)
    #expect(
      try cluster.admin(
        "SELECT value FROM forum.meta WHERE key = 'triggers'", database: board.database
      )
      .trimmingCharacters(in: .whitespacesAndNewlines) != "old")
    // A role that is not a member.
    try expectRefusal(
      forum, board["bob"].uri, status: 3, mentions: "GRANT forum_member TO \(board["bob"].name)")
    // And with all of that fixed, the member gets in.
    #expect(try forum.run(["list"], profile: "alice", database: board["alice"].uri).status == 0)
  }
}
