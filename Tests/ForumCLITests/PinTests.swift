import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore
@testable import Forum

/// `pin N` / `unpin N` through the binary on both engines: a moderator or the owner pins, the
/// pinned thread leads everyone's `list` (marked, and `pinnedDate` in `--json`), a member is
/// refused in their language, and on PostgreSQL a member with psql cannot pin either.
@Suite("pinned threads")
struct PinTests {
  /// One board and who runs on it: every profile on one file (SQLite), or each person as their
  /// own database role (PostgreSQL: the owner is the schema's owner).
  final class Place {
    let forum: ForumFixture
    let board: PostgresTestBoard?

    init(postgres: Bool) throws {
      forum = try ForumFixture()
      if postgres {
        let board = try PostgresTestCluster.shared().board(members: ["alice", "mod"])
        self.board = board
        let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
        #expect(initialized.status == 0, "\(initialized.summary)")
        for member in ["alice", "mod"] {
          try board.cluster.admin("GRANT forum_member TO \(board[member].name)")
        }
      } else {
        board = nil
      }
    }

    deinit { board?.remove() }

    func database(_ profile: String) -> String? {
      guard let board else { return nil }
      return profile == "owner" ? board.owner.uri : board[profile].uri
    }

    func run(_ arguments: [String], _ profile: String, lang: String = "C") throws -> RunResult {
      try forum.run(arguments, profile: profile, lang: lang, database: database(profile))
    }

    @discardableResult
    func ok(
      _ arguments: [String], _ profile: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> RunResult {
      let result = try run(arguments, profile)
      #expect(result.status == 0, "\(result.summary)", sourceLocation: sourceLocation)
      return result
    }

    /// Runs `sql` in psql as the board's `member` (its own database role), stopping at the
    /// first error: what a member could do around forum.
    func psql(as member: String, _ sql: String, on board: PostgresTestBoard) throws -> RunResult {
      try ForumFixture.launch(
        board.cluster.binaries + "/psql",
        arguments: ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-c", sql, board[member].uri],
        environment: forum.environment(), input: Data(), timeout: 60)
    }

    /// The numbers `list --json` gives `profile`, in order, and those that carry `pinnedDate`.
    func listed(_ profile: String) throws -> (order: [Int], pinned: [Int]) {
      let results = try ok(["--json", "list"], profile).json().objects("results")
      return (
        numbers(results),
        numbers(results.filter { ($0["pinnedDate"] as? [String: Any])?["iso"] is String })
      )
    }
  }

  private func handle(_ place: Place, _ profile: String) throws -> String {
    "@" + (try place.ok(["--json", "whoami"], profile).json().string("userName") ?? "")
  }

  /// The whole story on one engine.
  private func pinning(postgres: Bool) throws {
    let place = try Place(postgres: postgres)
    try place.ok(["list"], "owner")  // on SQLite the first user owns the board
    for title in ["first", "second", "third"] {
      try place.ok(["new", "--title", title], "alice")
    }
    try place.ok(["mod", "add", try handle(place, "mod")], "owner")
    #expect(try place.listed("alice") == ([3, 2, 1], []))

    // A member may not pin: one line saying who may, in English and in Japanese; nothing moves.
    let refused = try place.run(["pin", "1"], "alice")
    #expect(refused.status == 3, "\(refused.summary)")
    #expect(
      refused.stderrLines == [
        "forum: only moderators and the board's owner may pin or unpin threads"
      ],
      "\(refused.summary)")
    let japanese = try place.run(["pin", "1"], "alice", lang: "ja_JP.UTF-8")
    #expect(japanese.status == 3, "\(japanese.summary)")
    #expect(
      japanese.stderrLines == ["forum: スレッドの固定と解除ができるのはモデレーターと掲示板の所有者だけです"],
      "\(japanese.summary)")
    let json = try place.run(["--json", "pin", "1"], "alice")
    #expect(try json.jsonError().string("code") == "E403001", "\(json.summary)")
    #expect(try place.listed("alice") == ([3, 2, 1], []))

    // A moderator pins #1: it leads everyone's list, marked, even after newer activity.
    #expect(
      try place.ok(["pin", "1"], "mod").stdout == "Pinned #1: it stays at the top of list.\n")
    try place.ok(["comment", "3", "newest activity"], "alice")
    #expect(try place.listed("alice") == ([1, 3, 2], [1]))
    let lines = try place.ok(["list"], "alice").stdout.split(separator: "\n")
    #expect(lines.first?.contains("#1") == true && lines.first?.contains("📌 first") == true)
    #expect(!lines.dropFirst().contains { $0.contains("📌") }, "\(lines)")
    // Pinning a pinned thread changes nothing; the owner pins too; pinned ones by activity.
    try place.ok(["pin", "1"], "mod")
    let pinned = try place.ok(["--json", "pin", "2"], "owner").json()
    #expect(pinned.int("number") == 2 && pinned.object("pinnedDate") != nil)
    #expect(try place.listed("alice") == ([2, 1, 3], [2, 1]))
    #expect(try place.ok(["unpin", "2"], "mod").stdout == "Unpinned #2.\n")
    #expect(try place.run(["unpin", "2"], "alice").status == 3)
    #expect(try place.listed("alice") == ([1, 3, 2], [1]))
    #expect(try place.run(["pin", "9"], "mod").status == 4)
    #expect(try place.ok(["unpin", "1"], "owner").stdout == "Unpinned #1.\n")
    #expect(try place.listed("alice") == ([3, 2, 1], []))
    #expect(try place.ok(["pin", "1"], "mod").stdout.hasPrefix("Pinned #1"))

    // And its own help, in both languages.
    let help = try place.ok(["help"], "alice").stdout
    #expect(help.contains("pin [THREAD]") && help.contains("unpin [THREAD]"), "\(help)")
    let helpJapanese = try place.run(["help", "pin"], "alice", lang: "ja_JP.UTF-8").stdout
    #expect(helpJapanese.contains("固定"), "\(helpJapanese)")

    guard let board = place.board else { return }
    // psql as a member (alice): a pinnedDate written into a row, or a new thread claiming one,
    // is dropped by the server; the server's own function refuses her.
    func asAlice(_ sql: String) throws -> RunResult { try place.psql(as: "alice", sql, on: board) }
    let written = try asAlice(
      """
      UPDATE forum.objects SET data = data || '{"pinnedDate": 1}'
      WHERE class = 'Thread' AND data->>'number' = '3'
      """)
    #expect(written.status == 0, "\(written.summary)")
    let inserted = try asAlice(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Thread', 'PsqlPinnedThrd01', '{*}', ARRAY[forum.caller_id()],
        jsonb_build_object('title', 'by hand', 'pinnedDate', 1,
          'user', jsonb_build_object('__type', 'Pointer', 'className', 'user',
                                     'objectId', forum.caller_id()))
      """)
    #expect(inserted.status == 0, "\(inserted.summary)")
    let called = try asAlice(
      "SELECT forum.set_flag('Thread', object_id, 'pinnedDate', true) FROM forum.objects "
        + "WHERE class = 'Thread' AND data->>'number' = '2'")
    #expect(called.status != 0 && called.stderr.contains("No access"), "\(called.summary)")
    #expect(try place.listed("alice") == ([1, 4, 3, 2], [1]))
  }

  @Test func aModeratorPinsOnSQLite() throws { try pinning(postgres: false) }

  @Test func aModeratorPinsOnPostgreSQL() throws { try pinning(postgres: true) }

  /// A private thread (an app's: the board makes only public ones) that a moderator can read
  /// was refused as "not found". Only public threads are pinned: it says so, in both languages;
  /// to someone who cannot read it, it is still not there.
  @Test func aPrivateThreadIsRefusedAsPrivate() throws {
    let forum = try ForumFixture()
    try forum.ok(["list"], profile: "owner")
    let mod = try forum.ok(["--json", "whoami"], profile: "mod").json().string("userName") ?? ""
    try forum.ok(["mod", "add", "@" + mod], profile: "owner")
    let modId = try forum.openBoard(profile: "mod").me.objectId
    let number: Int
    do {
      let alice = try forum.openBoard(profile: "alice")
      let me = alice.me.objectId
      let object = try alice.client.create(
        Board.threadClass, fields: ["title": .string("ours"), "description": .string("")],
        acl: ACL(readers: [me, modId], writers: [me]))
      number = Int(object["number"]?.intValue ?? 0)
    }
    #expect(try forum.ok(["show", String(number)], profile: "mod").stdout.contains("ours"))
    let refused = try forum.run(["pin", String(number)], profile: "mod")
    #expect(refused.status == 3, "\(refused.summary)")
    #expect(
      refused.stderrLines == ["forum: #\(number) is private: only public threads are pinned"],
      "\(refused.summary)")
    let japanese = try forum.run(["pin", String(number)], profile: "mod", lang: "ja_JP.UTF-8")
    #expect(
      japanese.stderrLines == ["forum: #\(number) は非公開です。固定できるのは公開スレッドだけです。"],
      "\(japanese.summary)")
    let json = try forum.run(["--json", "pin", String(number)], profile: "mod")
    #expect(try json.jsonError().string("code") == "E403001", "\(json.summary)")
    #expect(try forum.run(["pin", String(number)], profile: "bob").status == 4)
    let listed = try forum.ok(["--json", "list"], profile: "mod").json().objects("results")
    #expect(listed.allSatisfy { $0["pinnedDate"] == nil }, "\(listed)")
  }

  /// A board main made before pins (`Fixtures/boards/main-05fff26`): its threads have no
  /// `pinnedDate`, so nothing is pinned, and its moderator can pin at once.
  @Test func aBoardFromBeforePinsHasNothingPinned() throws {
    let forum = try ForumFixture()
    let fixture = OldBoardTests.fixture
    try FileManager.default.copyItem(atPath: fixture + "/board.db", toPath: forum.db)
    try FileManager.default.createDirectory(
      atPath: forum.configHome + "/forum", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: fixture + "/profiles", toPath: forum.profilesDirectory)
    for name in try FileManager.default.contentsOfDirectory(atPath: forum.profilesDirectory) {
      try FileManager.default.setAttributes(
        [.posixPermissions: 0o600], ofItemAtPath: forum.profilesDirectory + "/" + name)
    }
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o700], ofItemAtPath: forum.profilesDirectory)
    let before = try forum.ok(["--json", "list"], profile: "bob").json().objects("results")
    #expect(numbers(before) == [2, 1] || numbers(before) == [1, 2], "\(before)")
    #expect(before.allSatisfy { $0["pinnedDate"] == nil })
    #expect(!(try forum.ok(["list"], profile: "bob").stdout.contains("📌")))
    let last = try #require(numbers(before).last)
    try forum.ok(["pin", String(last)], profile: "mod")
    let after = try forum.ok(["--json", "list"], profile: "bob").json().objects("results")
    #expect(numbers(after).first == last && after.first?["pinnedDate"] != nil, "\(after)")
  }
}
