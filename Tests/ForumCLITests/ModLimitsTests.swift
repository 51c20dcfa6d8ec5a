import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Testing

/// Issue 28 ("the owner can see and set them"): `mod limits` lists every limit with its value
/// and where it comes from; the board's owner sets the storage bound per member with `mod
/// storage-per-member MIB|off`, on both engines, and a running `forum serve` holds its app users
/// to it from their next write (on PostgreSQL the database holds a member's own psql writes to
/// it too). A member who is not the owner is refused in one line; a bad value is one line and
/// changes nothing.
@Suite("the owner sees and sets the limits")
struct ModLimitsTests {
  @Test func theOwnerSetsTheStoragePerMemberOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["list"], profile: "owner")  // the board's first user owns it
    try forum.ok(["list"], profile: "alice")
    let keys = try forum.ok(["--json", "keys"], profile: nil).stdout
    try setting(
      owner: { try forum.run($0, profile: "owner") },
      member: { try forum.run($0, profile: "alice") }, before: nil)
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    try pickedUp(server, keys: keys, owner: { try forum.run($0, profile: "owner") })
  }

  @Test func theOwnerSetsTheStoragePerMemberOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let board = served.board
    try board.cluster.admin("GRANT forum_member TO \(board["alice"].name)")
    let owner: ([String]) throws -> RunResult = {
      try forum.run($0, profile: nil, database: board.owner.uri)
    }
    let alice: ([String]) throws -> RunResult = {
      try forum.run($0, profile: nil, database: board["alice"].uri)
    }
    // Schema step 22's bound, 64 MiB, until the owner changes it.
    try setting(owner: owner, member: alice, before: 64 << 20)
    // The database holds a member's own writes to it: with 1 MiB, Alice's second object of
    // 600,000 bytes is refused by the trigger, naming the bound.
    func psql(_ sql: String) throws -> RunResult {
      try ForumFixture.launch(
        board.cluster.binaries + "/psql",
        arguments: [
          "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", board["alice"].uri, "-c", sql,
        ],
        environment: forum.environment(), input: Data(), timeout: 60)
    }
    func insert(_ id: String) -> String {
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Blob', '\(id)', '{*}', ARRAY[forum.sign_in()],
              jsonb_build_object('a', repeat('x', 600000)))
      """
    }
    let first = try psql(insert("AliceBlob0000001"))
    #expect(first.status == 0, "\(first.summary)")
    let second = try psql(insert("AliceBlob0000002"))
    #expect(
      second.status != 0 && second.stderr.contains("the storage per user is 1048576 bytes"),
      "\(second.summary)")
    let server = try ServeProcess(
      forum, ["--listen", "127.0.0.1:0"], database: served.server.uri)
    try pickedUp(server, keys: served.keys, owner: owner)
  }

  /// Everyone may see the limits; only the owner sets the bound; bad values change nothing.
  /// Leaves the bound at 1 MiB.
  private func setting(
    owner: ([String]) throws -> RunResult, member: ([String]) throws -> RunResult,
    before: Int?
  ) throws {
    func bound() throws -> Int? {
      let shown = try owner(["--json", "mod", "storage-per-member"])
      #expect(shown.status == 0, "\(shown.summary)")
      return try shown.json()["memberStorageBytes"] as? Int
    }
    #expect(try bound() == before)
    let listed = try member(["mod", "limits"])
    #expect(listed.status == 0, "\(listed.summary)")
    for name in [
      "storage per member", "storage per app user", "posts a minute per ssh key",
      "database time per request", "answer bytes a minute per app user", "connections per address",
    ] {
      #expect(listed.stdout.contains(name), "\(name): \(listed.stdout)")
    }
    #expect(listed.stdout.contains("--storage-per-user"), "\(listed.stdout)")

    let refused = try member(["mod", "storage-per-member", "1"])
    #expect(refused.status == 3, "\(refused.summary)")
    #expect(
      refused.stderrLines == ["forum: only the board's owner sets the storage per member"],
      "\(refused.summary)")
    #expect(try bound() == before)
    for bad in ["0", "-1", "abc", "1.5", "1048577", "99999999999999999999", "1 MiB", ""] {
      let answer = try owner(["mod", "storage-per-member", bad])
      #expect(answer.status == 2 && answer.stderrLines.count == 1, "\(bad): \(answer.summary)")
      #expect(answer.stdout == "", "\(bad): \(answer.summary)")
    }
    #expect(try bound() == before)

    let set = try owner(["mod", "storage-per-member", "1"])
    #expect(set.stdout == "The board's storage per member: 1 MiB.\n", "\(set.summary)")
    #expect(try bound() == 1 << 20)
    let after = try owner(["mod", "limits"])
    let line = after.stdout.split(separator: "\n").first { $0.hasPrefix("storage per member") }
    #expect(
      line.map { $0.contains("1 MiB") && $0.contains("the board: mod storage-per-member") }
        == true, "\(after.stdout)")
  }

  /// A running server (its own --storage-per-user at the default 64 MiB) holds an app user to the
  /// board's 1 MiB at the next write, and lets the same write through once the owner turns the
  /// board's bound off.
  private func pickedUp(
    _ server: ServeProcess, keys: String, owner: ([String]) throws -> RunResult
  ) throws {
    let refused = try Clients.python(
      SignedClient.prelude + """
        me, token = signup()
        status, body, _ = call('POST', 'classes/Blob', {'a': 'x' * 600000}, token)
        assert status == 201, (status, body)
        status, body, _ = call('POST', 'classes/Blob', {'a': 'y' * 600000}, token)
        print(json.dumps([token, status, (body or {}).get('code'), (body or {}).get('error')]))
        """, [String(server.port), keys], timeout: 300)
    #expect(refused.status == 0, "\(refused.summary)")
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(refused.stdout.utf8))) as? [Any] ?? []
    #expect(seen.count == 4, "\(refused.stdout)")
    #expect(seen.dropFirst().first as? Int == 413, "\(refused.stdout)")
    #expect(seen.dropFirst(2).first as? String == "E413002", "\(refused.stdout)")
    #expect(
      (seen.last as? String)?.contains("the storage per user is 1048576 bytes") == true,
      "\(refused.stdout)")
    let off = try owner(["mod", "storage-per-member", "off"])
    #expect(off.status == 0, "\(off.summary)")
    let taken = try Clients.python(
      SignedClient.prelude + """
        status, body, _ = call('POST', 'classes/Blob', {'a': 'y' * 600000}, sys.argv[3])
        print(status)
        """, [String(server.port), keys, seen.first as? String ?? ""], timeout: 300)
    #expect(taken.stdout == "201\n", "\(taken.summary)")
    #expect(server.stop() == 0)
  }
}
