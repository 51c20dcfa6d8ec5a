import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Testing

@testable import Datastore
@testable import Forum

/// Issue 31: `lock N` / `unlock N`. A moderator or the owner locks a thread; while it is locked
/// nobody adds a comment or a reply, at the prompt, through `forum serve` or (PostgreSQL) with
/// psql, because the engine refuses the row (`FlagRule.locksChildren`); unlocking opens it again.
@Suite("locked threads")
struct LockTests {
  private typealias Place = PinTests.Place

  private func handle(_ place: Place, _ profile: String) throws -> String {
    "@" + (try place.ok(["--json", "whoami"], profile).json().string("userName") ?? "")
  }

  /// Comments thread #1 holds, as `list --json` counts them for `profile`.
  private func comments(_ place: Place, _ profile: String = "alice") throws -> Int? {
    let results = try place.ok(["--json", "list"], profile).json().objects("results")
    return results.first { $0.int("number") == 1 }?.int("commentCount")
  }

  private static let locked = "forum: thread #1 is locked: no new comments or replies"

  /// The whole story on one engine, with an attacker's tries.
  private func locking(postgres: Bool) throws {
    let place = try Place(postgres: postgres)
    try place.ok(["list"], "owner")  // on SQLite the first user owns the board
    try place.ok(["new", "--title", "open"], "alice")
    try place.ok(["comment", "1", "first"], "alice")
    try place.ok(["mod", "add", try handle(place, "mod")], "owner")

    // A member (here the thread's author) may not lock: one line saying who may, both languages.
    let refused = try place.run(["lock", "1"], "alice")
    #expect(refused.status == 3, "\(refused.summary)")
    #expect(
      refused.stderrLines == [
        "forum: only moderators and the board's owner may lock or unlock threads"
      ], "\(refused.summary)")
    let japanese = try place.run(["lock", "1"], "alice", lang: "ja_JP.UTF-8")
    #expect(
      japanese.stderrLines == ["forum: スレッドのロックと解除ができるのはモデレーターと掲示板の所有者だけです"],
      "\(japanese.summary)")
    try place.ok(["comment", "1", "still open"], "alice")

    // A moderator locks it: it says so, and the thread shows it in list and show.
    #expect(
      try place.ok(["lock", "1"], "mod").stdout == "Locked #1: no new comments or replies.\n")
    let shown = try place.ok(["show", "1"], "alice").stdout
    #expect(shown.contains("🔒 thread #1 is locked: no new comments or replies"), "\(shown)")
    #expect(try place.ok(["list"], "alice").stdout.contains("🔒 open"))
    let listed = try place.ok(["--json", "list"], "alice").json().objects("results")
    #expect((listed.first?["lockedDate"] as? [String: Any])?["iso"] is String, "\(listed)")

    // Nobody comments or replies now: the author, the owner, the moderator; said in both
    // languages; `--json` gives the backend's code.
    for (arguments, profile) in [
      (["comment", "1", "late"], "alice"), (["reply", "1/1", "late"], "alice"),
      (["comment", "1", "late"], "owner"), (["comment", "1", "late"], "mod"),
    ] {
      let result = try place.run(arguments, profile)
      #expect(result.status == 3, "\(arguments) \(profile): \(result.summary)")
      #expect(result.stderrLines == [Self.locked], "\(result.summary)")
    }
    let ja = try place.run(["comment", "1", "late"], "alice", lang: "ja_JP.UTF-8")
    #expect(
      ja.stderrLines == ["forum: スレッド #1 はロックされています。新しいコメントや返信はできません。"],
      "\(ja.summary)")
    let json = try place.run(["--json", "comment", "1", "late"], "alice")
    #expect(try json.jsonError().string("code") == "E403001", "\(json.summary)")
    // A script's comment, as its lines say it.
    let script = try place.forum.run(
      [], profile: "alice", input: Data("comment 1 piped\n".utf8),
      database: place.database("alice"))
    #expect(script.stderr.contains("thread #1 is locked"), "\(script.summary)")

    // A member may not unlock it either.
    let unlock = try place.run(["unlock", "1"], "alice")
    #expect(unlock.status == 3, "\(unlock.summary)")
    #expect(try comments(place) == 2)

    if let board = place.board {
      // psql as a member: a comment row inserted by hand is refused by the database's rules;
      // her own thread's lock cannot be edited away (the guard keeps it), nor cleared by the
      // server's function.
      func asAlice(_ sql: String) throws -> RunResult {
        try place.psql(as: "alice", sql, on: board)
      }
      let inserted = try asAlice(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        SELECT 'Comment', 'PsqlLockedCmnt01', '{*}', ARRAY[forum.caller_id()],
          jsonb_build_object('text', 'by hand',
            'thread', jsonb_build_object('__type', 'Pointer', 'className', 'Thread',
                                         'objectId', t.object_id),
            'user', jsonb_build_object('__type', 'Pointer', 'className', 'user',
                                       'objectId', forum.caller_id()))
        FROM forum.objects t WHERE t.class = 'Thread' AND t.data->>'number' = '1'
        """)
      #expect(inserted.status != 0, "\(inserted.summary)")
      #expect(inserted.stderr.contains("the thread is locked"), "\(inserted.summary)")
      let edited = try asAlice(
        """
        UPDATE forum.objects SET data = data - 'lockedDate'
        WHERE class = 'Thread' AND data->>'number' = '1'
        """)
      #expect(edited.status == 0, "\(edited.summary)")
      let cleared = try asAlice(
        "SELECT forum.set_flag('Thread', object_id, 'lockedDate', false) FROM forum.objects "
          + "WHERE class = 'Thread' AND data->>'number' = '1'")
      #expect(cleared.status != 0 && cleared.stderr.contains("No access"), "\(cleared.summary)")
      #expect(try place.run(["comment", "1", "late"], "alice").stderrLines == [Self.locked])
      #expect(try comments(place) == 2)
    }

    // Unlocking opens it again, for everyone.
    #expect(try place.ok(["unlock", "1"], "mod").stdout == "Unlocked #1.\n")
    #expect(!(try place.ok(["show", "1"], "alice").stdout.contains("🔒")))
    try place.ok(["comment", "1", "again"], "alice")
    try place.ok(["reply", "1/1", "answered"], "alice")
    #expect(try comments(place) == 4)
    // The owner locks too, and help says what it is in both languages.
    #expect(try place.ok(["lock", "1"], "owner").stdout.hasPrefix("Locked #1"))
    let help = try place.ok(["help"], "alice").stdout
    #expect(help.contains("lock [THREAD]") && help.contains("unlock [THREAD]"), "\(help)")
    let helpJapanese = try place.run(["help", "lock"], "alice", lang: "ja_JP.UTF-8").stdout
    #expect(helpJapanese.contains("ロック"), "\(helpJapanese)")
  }

  @Test func aModeratorLocksOnSQLite() throws { try locking(postgres: false) }

  @Test func aModeratorLocksOnPostgreSQL() throws { try locking(postgres: true) }

  /// Comments racing a lock: after `lock` returns no comment lands, and each racer's last try
  /// is refused as locked (the engine reads the lock under the thread row's lock).
  private func racing(postgres: Bool) throws {
    let place = try Place(postgres: postgres)
    try place.ok(["list"], "owner")
    try place.ok(["new", "--title", "raced"], "alice")
    try place.ok(["mod", "add", try handle(place, "mod")], "owner")
    let racers = 4
    let outcomes = Outcomes()
    let group = DispatchGroup()
    // Each racer only runs the binary on the place; nothing of it changes meanwhile.
    nonisolated(unsafe) let shared = place
    for racer in 0..<racers {
      DispatchQueue.global().async(group: group) {
        for attempt in 0..<400 {
          guard
            let result = try? shared.run(
              ["comment", "1", "racer \(racer) try \(attempt)"], "alice")
          else { continue }
          outcomes.add(result)
          if result.status != 0 { return }
        }
      }
    }
    while outcomes.posted < racers { usleep(20_000) }
    try place.ok(["lock", "1"], "mod")
    let atLock = try comments(place)
    group.wait()
    #expect(try comments(place) == atLock)
    #expect(outcomes.posted == atLock, "\(outcomes.refusals)")
    #expect(outcomes.refusals.count == racers, "\(outcomes.refusals)")
    #expect(outcomes.refusals.allSatisfy { $0 == [Self.locked] }, "\(outcomes.refusals)")
  }

  /// A comment being typed at the prompt when a moderator locks the thread: refused in one line,
  /// its draft kept and offered again once the thread is unlocked.
  @Test
  func aCommentTypedWhileTheThreadIsLockedKeepsItsDraft() throws {
    let forum = try ForumFixture()
    try forum.ok(["list"], profile: "owner")
    try forum.ok(["new", "--title", "talk"])
    let draft = try forum.draftsDirectory() + "/comment-1.txt"
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("comment 1")
    try tmux.waitForPrompt(">")
    try tmux.enter("words written while it was open")
    try forum.ok(["lock", "1"], profile: "owner")
    try tmux.enter(".")
    try tmux.wait("the refusal") { $0.contains(Self.locked) }
    try tmux.wait("the draft kept") {
      $0.contains("Your text for #1 is kept; it is offered again when you next write there.")
    }
    #expect(try String(contentsOfFile: draft, encoding: .utf8) == "words written while it was open")
    try forum.ok(["unlock", "1"], profile: "owner")
    try tmux.waitForPrompt("forum>")
    try tmux.enter("comment 1")
    try tmux.waitForPrompt("Post it to #1? [Y/n] (n discards it)")
    try tmux.press("Enter")
    try tmux.wait("posted") { $0.contains("Posted 1/1.") }
    #expect(!FileManager.default.fileExists(atPath: draft))
  }

  @Test func aCommentRacingALockOnSQLite() throws { try racing(postgres: false) }

  @Test func aCommentRacingALockOnPostgreSQL() throws { try racing(postgres: true) }

  final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var postedCount = 0
    private var refused: [[String]] = []

    func add(_ result: RunResult) {
      lock.withLock {
        if result.status == 0 { postedCount += 1 } else { refused.append(result.stderrLines) }
      }
    }
    var posted: Int { lock.withLock { postedCount } }
    var refusals: [[String]] { lock.withLock { refused } }
  }

  /// Through `forum serve`: an app's comment on a locked thread is `E403001` with the reason,
  /// its author cannot edit the lock away, and after `unlock` the same comment is taken.
  private func serving(
    _ forum: ForumFixture, database: String?, ownerDatabase: String?, keys: String
  ) throws {
    let server = try ServeProcess(
      forum, ["--listen", "127.0.0.1:0"], database: database)
    let port = String(server.port)
    func app(_ body: String, _ arguments: [String] = []) throws -> [String: Any] {
      let run = try Clients.python(SignedClient.prelude + body, [port, keys] + arguments)
      #expect(run.status == 0, "\(run.summary)")
      return (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any]
        ?? [:]
    }
    let made = try app(
      """
      me, token = signup()
      status, thread, _ = call('POST', 'classes/Thread', {'title': 'an app thread'}, token)
      assert status == 201, (status, thread)
      status, thread, _ = call('GET', 'classes/Thread/' + thread['objectId'], token=token)
      print(json.dumps({'token': token, 'id': thread['objectId'], 'number': thread['number']}))
      """)
    let token = try #require(made["token"] as? String)
    let id = try #require(made["id"] as? String)
    let number = String(try #require(made["number"] as? Int))
    let locking = try forum.run(["lock", number], profile: "owner", database: ownerDatabase)
    #expect(locking.status == 0, "\(locking.summary)")
    let comment = """
      token, thread = sys.argv[3], sys.argv[4]
      pointer = {'__type': 'Pointer', 'className': 'Thread', 'objectId': thread}
      def answer(result):
          status, body, _ = result
          return [status, (body or {}).get('code'), (body or {}).get('error')]
      seen = {'author': answer(call('POST', 'classes/Comment',
                                    {'text': 'late', 'thread': pointer}, token))}
      other, other_token = signup()
      seen['other'] = answer(call('POST', 'classes/Comment',
                                  {'text': 'late', 'thread': pointer}, other_token))
      seen['unlock'] = answer(call('PUT', 'classes/Thread/' + thread,
                                   {'lockedDate': {'__op': 'Delete'}}, token))
      print(json.dumps(seen))
      """
    let refused = try app(comment, [token, id])
    for who in ["author", "other"] {
      let answer = refused[who] as? [Any] ?? []
      #expect(answer.first as? Int == 403, "\(who): \(refused)")
      #expect(answer.dropFirst().first as? String == "E403001", "\(who): \(refused)")
      #expect(
        answer.last as? String == "No access with ACL. (the thread is locked)", "\(refused)")
    }
    let unlock = refused["unlock"] as? [Any] ?? []
    #expect(unlock.first as? Int == 400, "\(refused)")
    let unlocking = try forum.run(["unlock", number], profile: "owner", database: ownerDatabase)
    #expect(unlocking.status == 0, "\(unlocking.summary)")
    let taken = try app(comment, [token, id])
    #expect((taken["author"] as? [Any])?.first as? Int == 201, "\(taken)")
    #expect((taken["other"] as? [Any])?.first as? Int == 201, "\(taken)")
    #expect(server.stop() == 0)
  }

  @Test func anAppsCommentOnALockedThreadThroughServe() throws {
    let forum = try ForumFixture()
    try forum.ok(["list"], profile: "owner")  // the first user owns the board
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    try serving(forum, database: nil, ownerDatabase: nil, keys: keys)
  }

  @Test func anAppsCommentOnALockedThreadThroughServeOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    try forum.run(["list"], profile: "owner", database: served.board.owner.uri)
    try serving(
      forum, database: served.server.uri, ownerDatabase: served.board.owner.uri, keys: served.keys)
  }
}

extension RemoteBoardTests {
  /// A locked thread over https: the engine's refusal crosses the wire as the catalogue's case
  /// and reads as on the file itself, the thread's number and all, in English and Japanese.
  @Test func aLockedThreadsRefusalReadsAsOnALocalBoard() throws {
    let (forum, served) = try Served.onNewBoard()
    // The first member to sign in owns the board.
    try served.ok(["new", "--title", "Alice's thread", "--description", "hers"])
    try served.ok(["comment", "1", "bob was here"], profile: "bob")
    try served.ok(["lock", "1"])
    try Self.sameRefusal(["comment", "1", "is it locked?"], forum, served)
    try served.ok(["unlock", "1"])
    #expect(served.server.stop() == 0)
  }
}
