import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Testing

/// Issue 34, password accounts: an NCMB app's users sign up with a `userName` and a `password`,
/// log in (GET as NCMB's documentation, POST as the Swift SDK), log out and change their
/// password, through the built `forum serve` on both engines. The password is kept only as an
/// Argon2id hash (libsodium) that nobody reads back: not through the API, not with psql as a
/// member; a login is refused the same way whether the name exists or not; wrong passwords are
/// slowed per address and per user name (`--logins`).
@Suite("forum serve: password accounts")
struct ServeAccountsTests {
  static let arguments = ["--listen", "127.0.0.1:0"]

  @Test func accountsOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    let server = try ServeProcess(forum, ServeAccountsTests.arguments)
    try accounts(server, keys: keys)
    // The file holds an Argon2id hash and never the password, in a table of its own.
    let stored = try Clients.run(
      "/usr/bin/sqlite3", [forum.db, "SELECT passwordHash FROM passwords"])
    #expect(stored.stdout.contains("$argon2id$"), "\(stored.summary)")
    let everything = try Clients.run("/usr/bin/sqlite3", [forum.db, ".dump"])
    #expect(!everything.stdout.contains("correct horse"), "a password is in the file")
    let objects = try Clients.run("/usr/bin/sqlite3", [forum.db, "SELECT data FROM objects"])
    #expect(!objects.stdout.contains("argon2"), "\(objects.stdout)")
  }

  @Test func accountsOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try ServeProcess(
      forum, ServeAccountsTests.arguments, database: served.server.uri)
    try accounts(server, keys: served.keys)
    let board = served.board
    // The owner's table holds Argon2id hashes; a member with psql reads none of it.
    let owner = try board.cluster.admin(
      "SELECT password_hash FROM forum.app_passwords", database: board.database)
    #expect(owner.contains("$argon2id$"), "\(owner)")
    #expect(!owner.contains("correct horse"))
    try board.cluster.admin("GRANT forum_member TO \(board["alice"].name)")
    func psql(_ sql: String) throws -> RunResult {
      try ForumFixture.launch(
        board.cluster.binaries + "/psql",
        arguments: [
          "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", board["alice"].uri, "-c", sql,
        ],
        environment: forum.environment(), input: Data(), timeout: 120)
    }
    #expect(try psql("SELECT 1").status == 0)
    for sql in [
      "SELECT * FROM forum.app_passwords", "SELECT password_hash FROM forum.app_passwords",
      "SELECT * FROM forum.app_password_of('carol_1')",
    ] {
      let refused = try psql(sql)
      #expect(refused.status != 0, "\(sql): \(refused.summary)")
    }
    let users = try psql("SELECT data::text FROM forum.objects WHERE class = 'user'")
    #expect(users.status == 0 && users.stdout.contains("carol_1"), "\(users.summary)")
    #expect(!users.stdout.contains("argon2") && !users.stdout.contains("password"))
  }

  @Test func wrongPasswordsAreSlowedOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    let server = try ServeProcess(forum, ServeAccountsTests.arguments + ["--logins", "4"])
    try slowed(server, keys: keys)
  }

  @Test func wrongPasswordsAreSlowedOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try ServeProcess(
      forum, ServeAccountsTests.arguments + ["--logins", "4"], database: served.server.uri)
    try slowed(server, keys: served.keys)
  }

  @Test func theSwiftSDKsAccountsOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    let server = try ServeProcess(forum, ServeAccountsTests.arguments)
    try replay(server, keys: keys)
  }

  @Test func theSwiftSDKsAccountsOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try ServeProcess(
      forum, ServeAccountsTests.arguments, database: served.server.uri)
    try replay(server, keys: served.keys)
  }

  /// The `ncmb` package from PyPI (a client nobody here wrote): a user saved with a userName
  /// and a password, then `NCMBUser.login`, which sends `GET login/?userName=…&password=…`.
  @Test func thePyPISDKLogsIn() throws {
    let python = try NCMBSDKTests.python()
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.ok(["keys", "--json"], profile: nil).json()
    let certificate = try ThrowawayCertificate(in: forum.root)
    let server = try ServeProcess(
      forum,
      [
        "--listen", "127.0.0.1:0", "--tls-cert", certificate.certificateFile, "--tls-key",
        certificate.keyFile,
      ])
    let script = """
      import json, sys
      from NCMB.Client import NCMB
      NCMB.fqdn = sys.argv[1]
      ncmb = NCMB(sys.argv[2], sys.argv[3])
      user = ncmb.User()
      user.set('userName', 'pypi_user').set('password', 'pypi pass word')
      user.save()
      me = ncmb.User.login('pypi_user', 'pypi pass word')
      seen = {'signed up': user.get('objectId'), 'logged in': me.get('objectId'),
              'token': bool(ncmb.session_token), 'password': me.get('password')}
      try:
          ncmb.User.login('pypi_user', 'wrong')
          seen['wrong'] = 'accepted'
      except Exception as error:
          seen['wrong'] = 'refused'
      print(json.dumps(seen))
      """
    let run = try Clients.run(
      "/usr/bin/env",
      [
        "SSL_CERT_FILE=\(certificate.certificateFile)", python, "-c", script,
        "127.0.0.1:\(server.port)", keys.string("applicationKey") ?? "",
        keys.string("clientKey") ?? "",
      ], timeout: 120)
    #expect(server.stop() == 0)
    #expect(run.status == 0, "\(run.summary)")
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    #expect(seen["signed up"] is String, "\(run.summary)")
    #expect(seen["logged in"] as? String == seen["signed up"] as? String, "\(run.summary)")
    #expect(seen["token"] as? Bool == true && seen["password"] is NSNull, "\(run.summary)")
    #expect(seen["wrong"] as? String == "refused", "\(run.summary)")
  }

  private func replay(_ server: ServeProcess, keys: String) throws {
    let run = try Clients.run(
      "/usr/bin/python3",
      [ServeSDKWireTests.fixtures + "/sdk-wire/accounts.py", String(server.port), keys],
      timeout: 180)
    #expect(server.stop() == 0)
    #expect(run.status == 0, "\(run.summary)")
    let answer =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    let problems = answer["problems"] as? [Any] ?? ["no answer: \(run.summary)"]
    #expect(problems.isEmpty, "\(problems)")
  }

  /// Sign-up, both logins, logout, a change of password, the refusals, and that no answer, query
  /// or listing gives the hash back.
  private func accounts(_ server: ServeProcess, keys: String) throws {
    let run = try Clients.python(
      SignedClient.prelude + """
        def code(answer):
            status, body, _ = answer
            return [status, (body or {}).get('code')]
        def login_get(name, password):
            query = ('userName=' + urllib.parse.quote(name, safe='')
                     + '&password=' + urllib.parse.quote(password, safe=''))
            return call('GET', 'login', query=query)
        seen = {}
        status, user, raw = call('POST', 'users',
                                 {'userName': 'carol_1', 'password': 'correct horse'})
        seen['sign-up'] = [status, sorted(user)]
        seen['sign-up bytes'] = 'correct horse' in raw.decode() or 'argon' in raw.decode()
        me, token = user.get('objectId'), user.get('sessionToken')
        seen['duplicate'] = code(call('POST', 'users', {'userName': 'carol_1', 'password': 'x'}))
        seen['duplicate case'] = code(call('POST', 'users',
                                           {'userName': 'CAROL_1', 'password': 'x'}))
        seen['no password'] = code(call('POST', 'users', {'userName': 'dave_1'}))
        seen['empty password'] = code(call('POST', 'users',
                                           {'userName': 'dave_1', 'password': ''}))
        status, login, raw = login_get('carol_1', 'correct horse')
        seen['login'] = [status, login.get('objectId') == me, login.get('userName'),
                         bool(login.get('sessionToken'))]
        seen['login bytes'] = 'correct horse' in raw.decode() or 'argon' in raw.decode()
        second = login.get('sessionToken')
        status, posted, _ = call('POST', 'login', {'userName': 'carol_1',
                                                   'password': 'correct horse'})
        seen['login by POST'] = [status, posted.get('objectId') == me]
        third = posted.get('sessionToken')
        # Wrong password and unknown name: the same answer, byte for byte.
        wrong = login_get('carol_1', 'wrong horse')
        unknown = login_get('nobody_1', 'wrong horse')
        seen['wrong'] = code(wrong)
        seen['same refusal'] = wrong[2] == unknown[2]
        seen['wrong by POST'] = code(call('POST', 'login', {'userName': 'carol_1',
                                                            'password': 'x'}))
        # The hash is nobody's to read: not the user's own, not in a listing, not by a query.
        status, mine, raw = call('GET', 'users/' + me, token=token)
        seen['own user'] = [status, 'password' in mine, 'argon' in raw.decode()]
        status, listing, raw = call('GET', 'users', token=token)
        seen['listing'] = [status, 'argon' in raw.decode(), 'correct horse' in raw.decode()]
        for name, condition in [('exists', {'password': {'$exists': True}}),
                                ('equal', {'password': 'correct horse'}),
                                ('hash', {'passwordHash': {'$exists': True}}),
                                ('regex', {'password': {'$regex': 'argon'}})]:
            status, found, _ = call('GET', 'users', token=token, query=where(condition))
            # `$regex` may be refused (E400002) where the server has it not: never a match.
            seen['where ' + name] = [200 if status == 400 and name == 'regex' else status,
                                     len((found or {}).get('results') or [])]
        # A change of password, by the user itself: the old one is refused after, the new one
        # works, the user's other sessions end, its own goes on.
        other_id, other_token = signup()
        seen['not mine'] = code(call('PUT', 'users/' + me, {'password': 'mine now'},
                                     other_token))
        seen['change'] = code(call('PUT', 'users/' + me, {'password': 'battery staple'},
                                   token))[0]
        seen['old password'] = code(login_get('carol_1', 'correct horse'))
        seen['new password'] = code(login_get('carol_1', 'battery staple'))[0]
        seen['own session'] = code(call('GET', 'users/' + me, token=token))[0]
        seen['other session'] = code(call('GET', 'users/' + me, token=second))
        # Logout: the token is dead after.
        seen['logout'] = code(call('GET', 'logout', token=token))[0]
        seen['after logout'] = code(call('GET', 'users/' + me, token=token))
        # Mail: sign-up, password reset and mail entry need a mail server the board has not.
        status, body, _ = call('POST', 'users', {'mailAddress': 'a@example.com',
                                                 'password': 'x'})
        seen['mail sign-up'] = [status, 'mail server' in (body or {}).get('error', '')]
        for path in ['requestPasswordReset', 'requestMailAddressUserEntry']:
            status, body, _ = call('POST', path, {'mailAddress': 'a@example.com'})
            seen[path] = [status, 'mail server' in (body or {}).get('error', '')]
        # A user that deletes itself takes its password account along: its name is free again.
        status, gone, _ = call('POST', 'users', {'userName': 'gone_1', 'password': 'pw'})
        seen['delete self'] = code(call('DELETE', 'users/' + gone['objectId'],
                                        token=gone['sessionToken']))[0]
        seen['deleted login'] = code(login_get('gone_1', 'pw'))
        seen['name free'] = code(call('POST', 'users', {'userName': 'GONE_1', 'password': 'x'}))[0]
        # Anonymous users go on as before.
        seen['anonymous'] = bool(signup()[1])
        print(json.dumps(seen))
        """, [String(server.port), keys], timeout: 600)
    #expect(server.stop() == 0)
    #expect(run.status == 0, "\(run.summary)")
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    func value(_ key: String) -> String {
      seen[key].map { String(describing: $0).replacingOccurrences(of: "\n", with: "") }
        ?? "nil"
    }
    let expected: [String: Any] = [
      "sign-up": [201, ["createDate", "objectId", "sessionToken", "userName"]],
      "sign-up bytes": false, "duplicate": [409, "E409001"], "duplicate case": [409, "E409001"],
      "no password": [400, "E400003"], "empty password": [400, "E400003"],
      "login": [200, true, "carol_1", true], "login bytes": false, "login by POST": [200, true],
      "wrong": [401, "E401002"], "same refusal": true, "wrong by POST": [401, "E401002"],
      "own user": [200, false, false], "listing": [200, false, false],
      "where exists": [200, 0], "where equal": [200, 0], "where hash": [200, 0],
      "where regex": [200, 0], "not mine": [403, "E403001"], "change": 200,
      "old password": [401, "E401002"], "new password": 200, "own session": 200,
      "other session": [401, "E401001"], "logout": 200, "after logout": [401, "E401001"],
      "mail sign-up": [400, true], "requestPasswordReset": [404, true],
      "requestMailAddressUserEntry": [404, true], "anonymous": true, "delete self": 200,
      "deleted login": [401, "E401002"], "name free": 201,
    ]
    for (key, want) in expected {
      #expect(
        NSDictionary(dictionary: ["v": seen[key] ?? NSNull()])
          == NSDictionary(dictionary: ["v": want]),
        "\(key): \(value(key)) \(run.summary)")
    }
  }

  /// `--logins 4`: a fifth login from one address is refused (E429001); wrong passwords for one
  /// name from another address are refused once that name had four, whether it exists or not,
  /// while another name from that address still logs in.
  private func slowed(_ server: ServeProcess, keys: String) throws {
    let run = try Clients.python(
      SignedClient.prelude + """
        def login_from(source, name, password):
            query = ('userName=' + urllib.parse.quote(name, safe='')
                     + '&password=' + urllib.parse.quote(password, safe=''))
            path = '/2013-09-01/login'
            h = signed('GET', path, query)
            c = http.client.HTTPConnection('127.0.0.1', port, timeout=60,
                                           source_address=(source, 0))
            c.request('GET', path + '?' + query, None, h)
            r = c.getresponse()
            body = json.loads(r.read() or b'{}')
            c.close()
            return [r.status, body.get('code')]
        seen = {}
        for name in ['erin_1', 'frank_1']:
            status, _, _ = call('POST', 'users', {'userName': name, 'password': 'right one'})
            assert status == 201, status
        seen['address'] = [login_from('127.0.0.1', 'erin_1', 'wrong')[0] for i in range(4)]
        seen['fifth'] = login_from('127.0.0.1', 'frank_1', 'right one')
        # From another address: erin_1 had four wrong passwords, so her name waits.
        seen['name'] = login_from('127.0.0.2', 'erin_1', 'right one')
        seen['other name'] = login_from('127.0.0.2', 'frank_1', 'right one')
        # An unknown name is slowed the same way.
        seen['unknown'] = [login_from('127.0.0.3', 'ghost_1', 'wrong')[0] for i in range(4)]
        seen['unknown fifth'] = login_from('127.0.0.4', 'ghost_1', 'wrong')
        print(json.dumps(seen))
        """, [String(server.port), keys], timeout: 300)
    #expect(server.stop() == 0)
    #expect(run.status == 0, "\(run.summary)")
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    #expect(seen["address"] as? [Int] == [401, 401, 401, 401], "\(run.stdout)")
    #expect(seen["fifth"] as? [AnyHashable] == [429, "E429001"], "\(run.stdout)")
    #expect(seen["name"] as? [AnyHashable] == [429, "E429001"], "\(run.stdout)")
    #expect((seen["other name"] as? [Any])?.first as? Int == 200, "\(run.stdout)")
    #expect(seen["unknown"] as? [Int] == [401, 401, 401, 401], "\(run.stdout)")
    #expect(seen["unknown fifth"] as? [AnyHashable] == [429, "E429001"], "\(run.stdout)")
  }
}
