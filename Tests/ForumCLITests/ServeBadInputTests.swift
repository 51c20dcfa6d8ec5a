import Foundation
import HTTPTestSupport
import HostileImages
import PostgresTestCluster
import Spawning
import Testing

/// Issue 18's bad input, through the built `forum serve` over 127.0.0.1: each is NCMB's error,
/// stores nothing, and the next client is served. (`NCMBServiceTests` has the same in process on
/// both engines; `ServeTests` the header of 1 MB, idle connections and SIGTERM.)
@Suite("forum serve: bad input")
struct ServeBadInputTests {
  /// `sys.argv[3]`: a small PNG, `[4]`: one wider than the board decodes, `[5]`: the commands
  /// (JSON) that print what the board stores and that expire every session.
  static let script =
    SignedClient.prelude + """
      import subprocess
      png, wide = open(sys.argv[3], 'rb').read(), open(sys.argv[4], 'rb').read()
      commands = json.loads(sys.argv[5])
      def stored():
          return subprocess.run(commands['stored'], capture_output=True, text=True,
                                check=True).stdout
      late, expired = signup()
      subprocess.run(commands['expire'], check=True)
      me, token = signup()
      assert call('POST', 'classes/Thread', {'title': 'kept'}, token)[0] == 201
      before = stored()
      deep = '{"a":' + '[' * 10000 + ']' * 10000 + '}'
      big, _ = multipart('big.png', b'\\x89PNG' + b'x' * (5 * 1024 * 1024))
      huge, _ = multipart('huge.png', b'x' * (11 * 1024 * 1024))
      _, form = multipart('x.png', b'')
      cases = [
          ('missing signature', dict(headers={'X-NCMB-Signature': None}), 401, 'E401001'),
          ('bad signature', dict(key='0' * 64), 401, 'E401001'),
          ('stale timestamp', dict(stamp=now(-16)), 401, 'E401001'),
          ('timestamp from the future', dict(stamp=now(16)), 401, 'E401001'),
          ('unknown application key',
           dict(headers={'X-NCMB-Application-Key': '0' * 64}), 404, 'E404005'),
          ('forged session', dict(token='forged' + token), 401, 'E401001'),
          ('expired session', dict(token=expired), 401, 'E401001'),
          ('malformed JSON', dict(method='POST', path='classes/Todo', raw=b'{"a":'),
           400, 'E400001'),
          ('nesting 10,000 deep', dict(method='POST', path='classes/Todo', raw=deep.encode()),
           400, 'E400001'),
          ('invalid UTF-8', dict(method='POST', path='classes/Todo', raw=b'{"a":"\\xff\\xfe"}'),
           400, 'E400001'),
          ('invalid UTF-8 in a query', dict(query='where=%FF'), 400, 'E400002'),
          ('a body over the limit',
           dict(method='POST', path='classes/Todo',
                raw=('{"a":"' + 'x' * (1 << 20) + '"}').encode()), 413, 'E413002'),
          ('an upload over the body limit',
           dict(method='POST', path='files/huge.png', raw=huge, content_type=form),
           413, 'E413002'),
          ('a file over 5 MB',
           dict(method='POST', path='files/big.png', raw=big, content_type=form),
           413, 'E413001'),
          ('not an image', dict(upload=('x.png', b'hello')), 415, 'E415001'),
          ('an image too wide to decode', dict(upload=('wide.png', wide)), 415, 'E415001'),
          ('a file name holding %2F', dict(upload=('a%2Fb.png', png)), 400, 'E400002'),
          ('a file name holding ..', dict(upload=('a..b.png', png)), 400, 'E400002'),
          ('a file name ..', dict(upload=('..', png)), 400, 'E400002'),
          ('a file name holding NUL', dict(upload=('a%00b.png', png)), 400, 'E400002'),
          ('a file name holding /', dict(upload=('a/b.png', png)), 404, 'E404001'),
          ('a thread whose picture is not there',
           dict(method='POST', path='classes/Thread', body={'title': 't', 'fileName': 'no.png'}),
           404, 'E404001'),
          ('an unknown operator', dict(query=where({'title': {'$where': '1'}})), 400, 'E400002'),
          ('a regular expression with an option NCMB had not',
           dict(query=where({'title': {'$regex': 'a', '$options': 'q'}})), 400, 'E400002'),
          ('limit=1000000000', dict(query='limit=1000000000'), 400, 'E400002'),
          ('skip=-1', dict(query='skip=-1'), 400, 'E400002'),
      ]
      problems = []
      for name, given, status, code in cases:
          given = dict(given)
          if 'upload' in given:
              file_name, data = given.pop('upload')
              answered, body, raw = upload(file_name, data, None, token)
          else:
              method = given.pop('method', 'GET')
              path = given.pop('path', 'classes/Thread')
              given.setdefault('token', token)
              answered, body, raw = call(method, path, **given)
          if [answered, (body or {}).get('code')] != [status, code]:
              problems.append([name, answered, raw[:200].decode(errors='replace')])
          # Everyone else is still served.
          if call('GET', 'classes/Thread', token=token)[0] != 200:
              problems.append([name, 'the next request was not served'])
      if stored() != before:
          problems.append(['stored', before, stored()])
      print(json.dumps(problems))
      """

  /// Serves `location` and sends every bad request; `stored` and `expire` are commands run
  /// beside the server (sqlite3, psql).
  private func refuseEveryBadRequest(
    _ forum: ForumFixture, keys: String, location: String, stored: [String], expire: [String]
  ) throws {
    let small = forum.root + "/small.png"
    try Data(PNGImages.honest(width: 4, height: 4)).write(to: URL(fileURLWithPath: small))
    let wide = forum.root + "/wide.png"
    try Data(PNGImages.honest(width: 30_001, height: 1)).write(to: URL(fileURLWithPath: wide))
    let commands = String(
      decoding: try JSONSerialization.data(withJSONObject: ["stored": stored, "expire": expire]),
      as: UTF8.self)
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: location)
    let run = try Clients.python(
      ServeBadInputTests.script, [String(server.port), keys, small, wide, commands],
      timeout: 180)
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(server.stop() == 0)
    #expect(server.stderr == "", "\(server.stderr)")
  }

  @Test func everyBadRequestIsRefusedAndStoresNothing() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    #expect(keys.status == 0, "\(keys.summary)")
    let sqlite = try Clients.require("/usr/bin/sqlite3")
    try refuseEveryBadRequest(
      forum, keys: keys.stdout, location: forum.db,
      stored: [
        sqlite, forum.db,
        "SELECT class, objectId, updateDate, readers, writers, data FROM objects ORDER BY id;"
          + "SELECT name, fileSize, readers FROM files ORDER BY name;"
          + "SELECT count(*) FROM sessions;",
      ],
      expire: [sqlite, forum.db, "UPDATE sessions SET expiresAt = 1"])
  }

  @Test func everyBadRequestIsRefusedAndStoresNothingOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let board = served.board
    let role = served.server
    let psql = [
      board.cluster.binaries + "/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d",
      board.cluster.superuserURI(database: board.database),
    ]
    let rows = "class, object_id, update_date, readers, writers, data"
    try refuseEveryBadRequest(
      forum, keys: served.keys, location: role.uri,
      stored: psql + [
        "-c", "SELECT \(rows) FROM forum.objects ORDER BY id",
        "-c", "SELECT \(rows) FROM forum.private_objects ORDER BY id",
        "-c", "SELECT name, file_size, readers FROM forum.files ORDER BY name",
        "-c", "SELECT name, file_size, readers FROM forum.private_files ORDER BY name",
        "-c", "SELECT count(*) FROM forum.app_sessions",
      ],
      expire: psql + ["-c", "UPDATE forum.app_sessions SET expires_at = 1"])
  }

  /// A client that sends half of an upload and goes: nothing is stored, the name stays free,
  /// and the server answers the next client.
  @Test func aClientGoneHalfWayThroughAnUploadStoresNothing() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    let small = forum.root + "/small.png"
    try Data(PNGImages.honest(width: 64, height: 64)).write(to: URL(fileURLWithPath: small))
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let script =
      SignedClient.prelude + """
        import socket, subprocess
        png, db = open(sys.argv[3], 'rb').read(), sys.argv[4]
        me, token = signup()
        body, content_type = multipart('half.png', png + b'\\x00' * 200000)
        path = '/2013-09-01/files/half.png'
        h = signed('POST', path)
        h.update({'X-NCMB-Apps-Session-Token': token, 'Content-Type': content_type,
                  'Content-Length': str(len(body)), 'Host': '127.0.0.1:%d' % port})
        s = socket.create_connection(('127.0.0.1', port), timeout=30)
        s.sendall(('POST %s HTTP/1.1\\r\\n' % path).encode()
                  + ''.join('%s: %s\\r\\n' % item for item in h.items()).encode() + b'\\r\\n'
                  + body[:len(body) // 2])
        s.close()
        problems = []
        count = subprocess.run(['/usr/bin/sqlite3', db, 'SELECT count(*) FROM files'],
                               capture_output=True, text=True).stdout
        if count != '0\\n':
            problems.append(['stored after the cut', count])
        # The name is still free, and a whole upload of it is taken.
        status, answer, raw = upload('half.png', png, None, token)
        if status != 201:
            problems.append(['the whole upload', status, raw.decode(errors='replace')])
        status, _, raw = call('GET', 'files/half.png', token=token)
        if status != 200 or raw != png:
            problems.append(['read back', status, len(raw)])
        print(json.dumps(problems))
        """
    let run = try Clients.python(script, [String(server.port), keys.stdout, small, forum.db])
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(server.stop() == 0)
    #expect(server.stderr == "", "\(server.stderr)")
  }

  /// The board's file removed under a running server: every request is `E500001`, no new
  /// board appears where it was, the server keeps answering and stops cleanly, printing nothing.
  @Test func theDatabaseRemovedUnderTheServer() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let script =
      SignedClient.prelude + """
        import os
        db = sys.argv[3]
        me, token = signup()
        problems = []
        if call('GET', 'classes/Thread', token=token)[0] != 200:
            problems.append('before')
        for suffix in ['', '-wal', '-shm']:
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
        for attempt in range(3):
            for method, path, body in [('GET', 'classes/Thread', None),
                                       ('POST', 'classes/Thread', {'title': 'lost'}),
                                       ('POST', 'users', {'authData': {'anonymous': {
                                           'id': str(uuid.uuid4())}}})]:
                status, answer, raw = call(method, path, body, token)
                if [status, (answer or {}).get('code')] != [500, 'E500001']:
                    problems.append([method, path, status, raw.decode(errors='replace')])
        if os.path.exists(db):
            problems.append('a new board was made at ' + db)
        print(json.dumps(problems))
        """
    let run = try Clients.python(script, [String(server.port), keys.stdout, forum.db])
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(server.stop() == 0)
    #expect(server.stdout == server.readyLine + "\n")
    #expect(server.stderr == "", "\(server.stderr)")
  }

  /// Four clients post as fast as they can to a server on PostgreSQL while SIGTERM arrives:
  /// every object the server acknowledged is stored whole, and nothing else but the last
  /// request of each writer, which the stop may have cut after its commit.
  @Test func sigtermDuringWritesOnPostgreSQLHalfWritesNothing() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let board = served.board
    let role = served.server
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: role.uri)
    let acknowledged = try SigtermDuringWrites.acknowledged(server: server, keys: served.keys)
    #expect(server.stderr == "", "\(server.stderr)")
    let whole = try board.cluster.admin(
      """
      SELECT object_id FROM forum.objects WHERE class = 'Todo' AND data->>'title' LIKE 'todo %'
        AND length(data->>'filler') = 2000 ORDER BY object_id
      """, database: board.database
    ).split(separator: "\n").map(String.init)
    let all = try board.cluster.admin(
      """
      SELECT (SELECT count(*) FROM forum.objects WHERE class = 'Todo')
        + (SELECT count(*) FROM forum.private_objects WHERE class = 'Todo')
      """, database: board.database
    ).trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(Set(acknowledged).isSubset(of: Set(whole)), "\(whole.count) \(acknowledged.count)")
    #expect(whole.count <= acknowledged.count + 4, "\(whole.count) \(acknowledged.count)")
    #expect(all == String(whole.count), "every Todo is whole: \(all) \(whole.count)")
  }

  /// The PostgreSQL database dropped under a running server (its connections cut): every
  /// request is `E500001`, none says what the server said, and the server keeps answering and
  /// stops cleanly, printing nothing.
  @Test func thePostgreSQLDatabaseDroppedUnderTheServer() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let board = served.board
    let role = served.server
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: role.uri)
    let script =
      SignedClient.prelude + """
        me, token = signup()
        assert call('GET', 'classes/Thread', token=token)[0] == 200
        print('ready', flush=True)
        sys.stdin.readline()
        problems = []
        for attempt in range(3):
            for method, path, body in [('GET', 'classes/Thread', None),
                                       ('POST', 'classes/Thread', {'title': 'lost'}),
                                       ('GET', 'files', None)]:
                status, answer, raw = call(method, path, body, token)
                if [status, answer] != [500, {'code': 'E500001', 'error': 'Internal server error.'}]:
                    problems.append([method, path, status, raw.decode(errors='replace')])
        print(json.dumps(problems))
        """
    let client = ChildProcess()
    client.executableURL = URL(fileURLWithPath: try Clients.require("/usr/bin/python3"))
    client.arguments = ["-c", script, String(server.port), served.keys]
    let input = Pipe()
    let output = Pipe()
    client.standardInput = input
    client.standardOutput = output
    try client.run()
    #expect(output.fileHandleForReading.firstLine() == "ready\n")
    board.remove()
    try input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
    let rest = String(
      decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    client.waitUntilExit()
    #expect(rest == "[]\n", "\(rest)")
    #expect(server.stop() == 0)
    #expect(server.stdout == server.readyLine + "\n")
    #expect(server.stderr == "", "\(server.stderr)")
  }
}
