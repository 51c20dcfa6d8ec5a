import Datastore
import Forum
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

  /// A refusal whose reason is the server's own words (a member running `forum init`) got the
  /// head システムエラーです under Japanese: it is a permission refusal and says so.
  @Test func aMembersInitIsAPermissionRefusalInJapanese() throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board()
    defer { board.remove() }
    let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
    #expect(initialized.status == 0, "\(initialized.summary)")
    try board.cluster.admin("GRANT forum_member TO \(board["alice"].name)")
    let refused = try forum.run(
      ["init"], profile: nil, lang: "ja_JP.UTF-8", database: board["alice"].uri)
    #expect(refused.status == 3, "\(refused.summary)")
    #expect(refused.stderrLines.count == 1, "\(refused.summary)")
    #expect(refused.stderr.hasPrefix("forum: 権限がないようです。"), "\(refused.summary)")
    #expect(!refused.stderr.contains("システムエラー"), "\(refused.summary)")
    let english = try forum.run(["init"], profile: nil, database: board["alice"].uri)
    #expect(english.stderr.contains("run `forum init` as the owner"), "\(english.summary)")
  }

  /// `forum init`'s own long steps said "waiting for another writer…" after a second, with no
  /// other writer about. A step made slow on purpose (the superuser's event trigger sleeps at
  /// init's `CREATE SCHEMA`) is work, not a wait: nothing is said. A real wait still is
  /// (`PostgresLockWaitTests`).
  @Test func initsOwnLongStepIsNotAWait() throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board()
    defer { board.remove() }
    let first = try forum.run(["init"], profile: nil, database: board.owner.uri)
    #expect(first.status == 0, "\(first.summary)")
    try board.cluster.admin(
      """
      CREATE FUNCTION public.slow_step() RETURNS event_trigger LANGUAGE plpgsql
        AS $$ BEGIN PERFORM pg_sleep(1.6); END $$;
      CREATE EVENT TRIGGER slow_step ON ddl_command_start WHEN TAG IN ('CREATE SCHEMA')
        EXECUTE FUNCTION public.slow_step();
      """, database: board.database)
    let started = Date()
    let again = try forum.run(["init"], profile: nil, database: board.owner.uri)
    #expect(again.status == 0, "\(again.summary)")
    // The step did take its time: the test shows what it means to.
    #expect(Date().timeIntervalSince(started) > 1.6)
    #expect(again.stderr.isEmpty, "\(again.summary)")
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
      mentions: "its owner must run `forum init --db URI` once to bring it up to date")
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

  /// Issue 21: a board `forum init` set up before the `Preference` rule (mute, follow) serves
  /// its members under the rules it has and is brought up to date when its owner opens it; a
  /// board whose schema is older still is refused in one line saying who must run what.
  @Test func aBoardFromBeforeMuteAndFollowNeedsForumInit() throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board()
    defer { board.remove() }
    var old = Board.rules
    old.owners.removeAll { $0.className == Board.preferenceClassName }
    try Datastore.initialize(board.owner.uri, rules: old, indexes: Board.indexes)
    try board.cluster.admin("GRANT forum_member TO \(board["alice"].name)")
    let alice = board["alice"].uri

    let listed = try forum.run(["list"], profile: "alice", database: alice)
    #expect(listed.status == 0 && listed.stderr.isEmpty, "\(listed.summary)")
    // The owner's first command installs the rule; then mute and follow work for members.
    let owner = try forum.run(["list"], profile: "owner", database: board.owner.uri)
    #expect(owner.status == 0 && owner.stderr.isEmpty, "\(owner.summary)")
    let posted = try forum.run(
      ["new", "--title", "after the upgrade"], profile: "alice", database: alice)
    #expect(posted.status == 0, "\(posted.summary)")
    let followed = try forum.run(["follow", "1"], profile: "alice", database: alice)
    #expect(followed.status == 0, "\(followed.summary)")

    // A schema step behind: nobody's forum can use it until the owner runs `forum init`.
    let version = try board.cluster.admin(
      "SELECT value FROM forum.meta WHERE key = 'schema_version'", database: board.database)
    let current = try #require(Int(version.trimmingCharacters(in: .whitespacesAndNewlines)))
    try board.cluster.admin(
      "UPDATE forum.meta SET value = '\(current - 1)' WHERE key = 'schema_version'",
      database: board.database)
    let refused = try forum.run(["list"], profile: "alice", database: alice)
    #expect(refused.status == 1, "\(refused.summary)")
    #expect(
      refused.stderrLines == [
        "forum: this board was set up by an older forum: its owner must run "
          + "`forum init --db URI` once to bring it up to date"
      ], "\(refused.summary)")
    let japanese = try forum.run(["list"], profile: "alice", lang: "ja_JP.UTF-8", database: alice)
    #expect(
      japanese.stderrLines == [
        "forum: この掲示板は古い forum で作られています。掲示板の持ち主が `forum init --db URI` を一度実行してください"
      ], "\(japanese.summary)")
    let ownerRefused = try forum.run(["list"], profile: "owner", database: board.owner.uri)
    #expect(
      ownerRefused.stderrLines == [
        "forum: this board was set up by an older forum: run `forum init --db URI` once to "
          + "bring it up to date"
      ], "\(ownerRefused.summary)")
  }
}
