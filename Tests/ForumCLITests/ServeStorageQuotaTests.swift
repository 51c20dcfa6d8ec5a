import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Testing

/// Issue 28 H5: one app user's stored objects are bounded (`forum serve --storage-per-user`), so
/// that nobody fills the disk with objects of an app's own class.
@Suite("Storage per user")
struct ServeStorageQuotaTests {
  @Test func anAppUserIsRefusedPastTheQuotaAndADeleteFreesIt() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let server = try ServeProcess(forum, ServeStorageQuotaTests.arguments)
    try refusesPastTheQuota(server, keys: try forum.ok(["keys", "--json"], profile: nil).stdout)
  }

  @Test func anAppUserIsRefusedPastTheQuotaOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try ServeProcess(
      forum, ServeStorageQuotaTests.arguments, database: served.server.uri)
    try refusesPastTheQuota(server, keys: served.keys)
  }

  @Test func filesCountTowardTheQuota() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let server = try ServeProcess(forum, ServeStorageQuotaTests.arguments)
    try filesCount(server, keys: try forum.ok(["keys", "--json"], profile: nil).stdout)
  }

  @Test func filesCountTowardTheQuotaOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try ServeProcess(
      forum, ServeStorageQuotaTests.arguments, database: served.server.uri)
    try filesCount(server, keys: served.keys)
  }

  /// A member with psql is bounded as an app user is: with the owner's bound for members at
  /// 300,000 bytes, Alice's second object of 200,000 bytes, growing her first past it, and a
  /// file that would take her past it are refused with the bound named, and nothing of them is
  /// written; shrinking makes room again; Bob is not concerned.
  @Test func aMemberWithPsqlIsRefusedPastTheQuota() throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board(members: ["alice", "bob"])
    defer { board.remove() }
    let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
    #expect(initialized.status == 0, "\(initialized.summary)")
    for member in ["alice", "bob"] {
      try board.cluster.admin("GRANT forum_member TO \(board[member].name)")
    }
    try board.cluster.admin(
      """
      INSERT INTO forum.meta(key, value) VALUES ('member_storage_bytes', '300000')
      ON CONFLICT (key) DO UPDATE SET value = excluded.value
      """, database: board.database)
    func psql(_ member: String, _ sql: String) throws -> RunResult {
      try ForumFixture.launch(
        board.cluster.binaries + "/psql",
        arguments: [
          "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", board[member].uri, "-c", sql,
        ], environment: forum.environment(), input: Data(), timeout: 60)
    }
    func insert(_ id: String, bytes: Int) -> String {
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Blob', '\(id)', '{*}', ARRAY[forum.sign_in()],
              jsonb_build_object('a', repeat('x', \(bytes))))
      """
    }
    func stored() throws -> String {
      try board.cluster.admin(
        """
        SELECT string_agg(object_id || ':' || octet_length(data->>'a'), ',' ORDER BY object_id)
        FROM forum.objects WHERE class = 'Blob'
        """, database: board.database
      ).trimmingCharacters(in: .whitespacesAndNewlines)
    }
    let first = try psql("alice", insert("AliceBlob0000001", bytes: 200_000))
    #expect(first.status == 0, "\(first.summary)")
    let refusals = [
      "a second object": insert("AliceBlob0000002", bytes: 200_000),
      "growing the first": """
      UPDATE forum.objects SET data = jsonb_build_object('a', repeat('y', 400000))
      WHERE object_id = 'AliceBlob0000001'
      """,
      "a file": """
      INSERT INTO forum.files(name, mime_type, readers, writers, data)
      VALUES ('blob.bin', 'application/octet-stream', '{*}', ARRAY[forum.sign_in()],
              decode(repeat('00', 150000), 'hex'))
      """,
    ]
    for (what, sql) in refusals.sorted(by: { $0.key < $1.key }) {
      let refused = try psql("alice", sql)
      #expect(refused.status != 0, "\(what): \(refused.summary)")
      #expect(
        refused.stderr.contains("the storage per user is 300000 bytes"),
        "\(what): \(refused.summary)")
    }
    #expect(try stored() == "AliceBlob0000001:200000")
    let files = try board.cluster.admin(
      "SELECT count(*) FROM forum.files", database: board.database)
    #expect(files.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    // Shrinking is allowed, and makes room; Bob has room of his own.
    let shrunk = try psql(
      "alice",
      "UPDATE forum.objects SET data = '{\"a\":\"small\"}' WHERE object_id = 'AliceBlob0000001'")
    #expect(shrunk.status == 0, "\(shrunk.summary)")
    let second = try psql("alice", insert("AliceBlob0000002", bytes: 200_000))
    #expect(second.status == 0, "\(second.summary)")
    let bob = try psql("bob", insert("BobBlob000000001", bytes: 200_000))
    #expect(bob.status == 0, "\(bob.summary)")
    #expect(
      try stored() == "AliceBlob0000001:5,AliceBlob0000002:200000,BobBlob000000001:200000")
  }

  static let arguments = ["--listen", "127.0.0.1:0", "--storage-per-user", "3"]

  /// Objects stored before the quota existed count for whoever the board knows made them: a
  /// board whose rows have no creator (as before SQLite's version 17) is brought up to date,
  /// and its user, three megabytes stored then, is refused a fourth.
  @Test func objectsFromBeforeTheQuotaCount() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    let before = try ServeProcess(forum, ["--listen", "127.0.0.1:0", "--storage-per-user", "0"])
    let token = try storeBeforeTheQuota(before, keys: keys)
    // The board as it was before the quota: no creators, no totals, at version 16.
    try HostileRowTests.sqlite(
      forum,
      "UPDATE objects SET creator = NULL; UPDATE files SET creator = NULL; DELETE FROM storage; "
        + "PRAGMA user_version = 16;")
    let server = try ServeProcess(forum, ServeStorageQuotaTests.arguments)
    try refusedAfterTheUpgrade(server, keys: keys, token: token)
  }

  @Test func objectsFromBeforeTheQuotaCountOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let before = try ServeProcess(
      forum, ["--listen", "127.0.0.1:0", "--storage-per-user", "0"],
      database: served.server.uri)
    let token = try storeBeforeTheQuota(before, keys: served.keys)
    // As before schema step 16: no creators, no totals; then the owner's `forum init`.
    _ = try served.board.cluster.admin(
      """
      ALTER TABLE forum.objects DISABLE TRIGGER USER;
      ALTER TABLE forum.private_objects DISABLE TRIGGER USER;
      UPDATE forum.objects SET creator = NULL;
      UPDATE forum.private_objects SET creator = NULL;
      ALTER TABLE forum.objects ENABLE TRIGGER USER;
      ALTER TABLE forum.private_objects ENABLE TRIGGER USER;
      DELETE FROM forum.storage;
      UPDATE forum.meta SET value = '15' WHERE key = 'schema_version';
      """, database: served.board.database)
    let upgraded = try forum.run(["init"], profile: nil, database: served.board.owner.uri)
    #expect(upgraded.status == 0, "\(upgraded.summary)")
    let server = try ServeProcess(
      forum, ServeStorageQuotaTests.arguments, database: served.server.uri)
    try refusedAfterTheUpgrade(server, keys: served.keys, token: token)
  }

  /// With no quota: an app user stores three megabytes its ACL says are its own, a thread, and
  /// one megabyte anyone may write (which stays no one's). Returns the user's session token.
  private func storeBeforeTheQuota(_ server: ServeProcess, keys: String) throws -> String {
    let run = try Clients.python(
      SignedClient.prelude + """
        me, token = signup()
        own = {'*': {'read': True}, me: {'read': True, 'write': True}}
        for i in range(3):
            status, body, _ = call('POST', 'classes/Blob', {'a': 'x' * 1000000, 'acl': own}, token)
            assert status == 201, (i, status, body)
        thread = {'title': 'old', 'description': 'before'}
        status, body, _ = call('POST', 'classes/Thread', thread, token)
        assert status == 201, (status, body)
        status, body, _ = call('POST', 'classes/Blob', {'a': 'y' * 1000000}, token)
        assert status == 201, (status, body)
        print(token)
        """, [String(server.port), keys], timeout: 600)
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop() == 0)
    return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// After the upgrade, with 3 MiB a user: the old three megabytes count, so a fourth is
  /// refused (E413002) and not stored; a small object still fits.
  private func refusedAfterTheUpgrade(_ server: ServeProcess, keys: String, token: String)
    throws
  {
    let run = try Clients.python(
      SignedClient.prelude + """
        token = sys.argv[3]
        seen = {}
        status, body, _ = call('POST', 'classes/Blob', {'a': 'z' * 1000000}, token)
        seen['fourth'] = [status, (body or {}).get('code')]
        status, body, _ = call('GET', 'classes/Blob', token=token, query='count=1&limit=0')
        seen['count'] = (body or {}).get('count')
        seen['small'] = call('POST', 'classes/Blob', {'a': 'tiny'}, token)[0]
        print(json.dumps(seen))
        """, [String(server.port), keys, token], timeout: 600)
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop() == 0)
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    #expect(seen["fourth"] as? [AnyHashable] == [413, "E413002"], "\(run.stdout)")
    #expect(seen["count"] as? Int == 4, "\(run.stdout)")
    #expect(seen["small"] as? Int == 201, "\(run.stdout)")
  }

  /// Uploads count too: three pictures of a megabyte fit in 3 MiB, a fourth is refused and not
  /// stored; a delete makes room; objects and files count together; a private file counts (on
  /// PostgreSQL in its own table, and still once when its ACL moves it); another user is not
  /// concerned.
  private func filesCount(_ server: ServeProcess, keys: String) throws {
    let run = try Clients.python(
      SignedClient.prelude + ServeWireGuardTests.pictures + """
        def noise():
            # A 600x560 RGB picture of noise, no metadata: stored as sent, 1,009,000 bytes or so.
            return png(600, 560, True)
        def code(answer):
            status, body, _ = answer
            return [status, (body or {}).get('code'), (body or {}).get('error', '')]
        seen = {}
        me, token = signup()
        private = {me: {'read': True, 'write': True}}
        seen['three'] = [upload('f%d.png' % i, noise(), None, token)[0] for i in range(3)]
        seen['fourth'] = code(upload('f3.png', noise(), None, token))
        seen['not stored'] = code(call('GET', 'files/f3.png', token=token))[:2]
        seen['object'] = code(call('POST', 'classes/Blob', {'a': 'x' * 1000000}, token))[0]
        other, other_token = signup()
        seen['other'] = upload('o0.png', noise(), None, other_token)[0]
        seen['delete'] = code(call('DELETE', 'files/f0.png', token=token))[0]
        seen['again'] = upload('f3.png', noise(), None, token)[0]
        seen['full'] = upload('f4.png', noise(), None, token)[0]
        # Objects and files together: an object of a megabyte in a file's place.
        seen['delete 2'] = code(call('DELETE', 'files/f1.png', token=token))[0]
        seen['object fits'] = code(call('POST', 'classes/Blob', {'a': 'x' * 1000000}, token))[0]
        seen['full 2'] = upload('f4.png', noise(), None, token)[0]
        # A private file counts, and still once when its ACL makes it public (a move between
        # tables on PostgreSQL); its delete frees it.
        seen['delete 3'] = code(call('DELETE', 'files/f2.png', token=token))[0]
        seen['private'] = upload('p0.png', noise(), private, token)[0]
        seen['full 3'] = upload('f4.png', noise(), None, token)[0]
        public = {'*': {'read': True}, me: {'read': True, 'write': True}}
        seen['public'] = code(call('PUT', 'files/p0.png', {'acl': public}, token))[0]
        seen['full 4'] = upload('f4.png', noise(), None, token)[0]
        seen['delete private'] = code(call('DELETE', 'files/p0.png', token=token))[0]
        seen['after'] = [upload('f%d.png' % i, noise(), None, token)[0] for i in (4, 5)]
        print(json.dumps(seen))
        """, [String(server.port), keys], timeout: 600)
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop() == 0)
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    let fourth = seen["fourth"] as? [Any] ?? []
    #expect(fourth.first as? Int == 413 && fourth[1] as? String == "E413002", "\(fourth)")
    #expect((fourth.last as? String)?.contains("storage") == true, "\(fourth)")
    #expect(seen["three"] as? [Int] == [201, 201, 201], "\(run.stdout)")
    #expect(seen["not stored"] as? [AnyHashable] == [404, "E404001"], "\(run.stdout)")
    let expected: [String: Int] = [
      "object": 413, "other": 201, "delete": 200, "again": 201, "full": 413, "delete 2": 200,
      "object fits": 201, "full 2": 413, "delete 3": 200, "private": 201, "full 3": 413,
      "public": 200, "full 4": 413, "delete private": 200,
    ]
    for (key, status) in expected {
      #expect(seen[key] as? Int == status, "\(key): \(run.stdout)")
    }
    #expect(seen["after"] as? [Int] == [201, 413], "\(run.stdout)")
  }

  /// An app user stores three objects of a megabyte in an app's class; a fourth and growing one
  /// of them are refused, nothing of them stored; a small one still fits; another user is not
  /// concerned; a delete makes room again, of a public object or of one made private.
  private func refusesPastTheQuota(_ server: ServeProcess, keys: String) throws {
    let run = try Clients.python(
      SignedClient.prelude + """
        def code(answer):
            status, body, _ = answer
            return [status, (body or {}).get('code'), (body or {}).get('error', '')]
        def count(token):
            status, body, _ = call('GET', 'classes/Blob', token=token, query='count=1&limit=0')
            return (body or {}).get('count')
        seen = {}
        me, token = signup()
        # A megabyte a write (the server's largest JSON body is 1 MiB): 3 fit in 3 MiB, not 4.
        big = {'a': 'x' * 1000000}
        ids = []
        for i in range(3):
            status, body, _ = call('POST', 'classes/Blob', big, token)
            assert status == 201, (i, status, body)
            ids.append(body['objectId'])
        seen['third'] = code(call('POST', 'classes/Blob', big, token))
        seen['count'] = count(token)
        # An object made private (on PostgreSQL it changes tables) still counts, once.
        private = {me: {'read': True, 'write': True}}
        seen['private'] = code(call('PUT', 'classes/Blob/' + ids[2], {'acl': private}, token))[0]
        seen['still'] = code(call('POST', 'classes/Blob', big, token))[0]
        # Growing one's own object past the quota is refused too; a small write still fits.
        seen['grow'] = code(call('PUT', 'classes/Blob/' + ids[0], {'c': 'z' * 900000}, token))
        seen['small'] = code(call('POST', 'classes/Blob', {'a': 'tiny'}, token))[0]
        other, other_token = signup()
        seen['other'] = code(call('POST', 'classes/Blob', big, other_token))[0]
        seen['delete'] = code(call('DELETE', 'classes/Blob/' + ids[1], token=token))[0]
        seen['again'] = code(call('POST', 'classes/Blob', big, token))[0]
        seen['full'] = code(call('POST', 'classes/Blob', big, token))[0]
        seen['delete private'] = code(call('DELETE', 'classes/Blob/' + ids[2], token=token))[0]
        seen['after'] = [code(call('POST', 'classes/Blob', big, token))[0] for i in range(2)]
        print(json.dumps(seen))
        """, [String(server.port), keys], timeout: 600)
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop() == 0)
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    for key in ["third", "grow"] {
      let answer = seen[key] as? [Any] ?? []
      #expect(answer.first as? Int == 413 && answer[1] as? String == "E413002", "\(key): \(answer)")
      #expect((answer.last as? String)?.contains("storage") == true, "\(key): \(answer)")
    }
    #expect(seen["count"] as? Int == 3, "\(run.stdout)")
    #expect(seen["small"] as? Int == 201, "\(run.stdout)")
    #expect(seen["other"] as? Int == 201, "\(run.stdout)")
    #expect(seen["delete"] as? Int == 200, "\(run.stdout)")
    #expect(seen["again"] as? Int == 201, "\(run.stdout)")
    #expect(seen["private"] as? Int == 200, "\(run.stdout)")
    #expect(seen["still"] as? Int == 413, "\(run.stdout)")
    #expect(seen["full"] as? Int == 413, "\(run.stdout)")
    #expect(seen["delete private"] as? Int == 200, "\(run.stdout)")
    #expect(seen["after"] as? [Int] == [201, 413], "\(run.stdout)")
  }
}
