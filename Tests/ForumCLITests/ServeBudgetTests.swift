import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Testing

/// Issue 28's H4 and its rate limits, through the built `forum serve` on both engines: a slow
/// query is cut at the time limit (E500001 saying so) while a victim is served, a client that
/// hangs up and a second SIGTERM stop the query at once, and a sign-up flood is answered
/// E429001 after its budget while another address still signs up. No timing is asserted but
/// "the server exits at all within 20 s" where the query alone would run far longer.
@Suite("forum serve: budgets")
struct ServeBudgetTests {
  /// `sys.argv[3]`: the mode, `[4]`: the server's pid. The attacker's objects each hold 19,900
  /// integers (an object holds at most 20,000 values); `$inArray` of 400 values none holds
  /// compares each element with each value
  /// (seconds a row). `$all` of the last 400 was that slow too (the attack); now one
  /// pass.
  static let script =
    SignedClient.prelude + """
      import os, signal, socket, threading, time
      mode, pid = sys.argv[3], int(sys.argv[4])
      problems = []
      def heavy(rows):
          me, token = signup()
          for _ in range(rows):
              status, _, raw = call('POST', 'classes/Heavy', {'numbers': list(range(19900))}, token)
              assert status == 201, (status, raw[:200])
          return token
      slow = where({'numbers': {'$inArray': list(range(-400, 0))}})
      every = where({'numbers': {'$all': list(range(19500, 19900))}})
      all_but_one = where({'numbers': {'$all': list(range(19501, 19901))}})
      def attack(token, answers):
          try:
              answers.append(call('GET', 'classes/Heavy', token=token, query=slow))
          except Exception as error:
              answers.append(('failed', repr(error)))
      if mode == 'limit':
          token = heavy(10)
          answers = []
          attacker = threading.Thread(target=attack, args=(token, answers))
          attacker.start()
          time.sleep(1)
          victim, victim_token = signup()
          status, body, raw = call('GET', 'classes/Thread', token=victim_token)
          if status != 200:
              problems.append(['victim', status, raw[:200].decode(errors='replace')])
          elif not attacker.is_alive():
              problems.append(['the victim was answered only after the attacker', answers])
          attacker.join()
          answer = answers[0]
          body = answer[1] if answer[0] != 'failed' else {}
          if answer[0] != 500 or body.get('code') != 'E500001' or 'limit' not in body.get('error'):
              problems.append(['attacker', answer[0], str(answer[-1])[:300]])
          status, body, _ = call('GET', 'classes/Heavy', token=token, query='count=1&limit=1')
          if (status, body.get('count')) != (200, 10):
              problems.append(['stored', status, body])
          # The issue's $all: one pass over each array, well inside the limit.
          for query, count in [(every, 10), (all_but_one, 0)]:
              status, body, raw = call('GET', 'classes/Heavy', token=token,
                                       query=query + '&count=1&limit=1')
              if (status, body.get('count')) != (200, count):
                  problems.append(['$all', count, status, raw[:300].decode(errors='replace')])
      elif mode == 'hangup':
          token = heavy(30)
          path = '/2013-09-01/classes/Heavy'
          h = signed('GET', path, slow)
          h.update({'X-NCMB-Apps-Session-Token': token, 'Host': '127.0.0.1:%d' % port})
          s = socket.create_connection(('127.0.0.1', port), timeout=30)
          s.sendall(('GET %s?%s HTTP/1.1\\r\\n' % (path, slow)).encode()
                    + ''.join('%s: %s\\r\\n' % item for item in h.items()).encode() + b'\\r\\n')
          time.sleep(1)
          s.close()
          time.sleep(0.5)
          os.kill(pid, signal.SIGTERM)
      elif mode == 'sigterm':
          token = heavy(30)
          answers = []
          attacker = threading.Thread(target=attack, args=(token, answers))
          attacker.start()
          time.sleep(1)
          os.kill(pid, signal.SIGTERM)
          time.sleep(1)
          os.kill(pid, signal.SIGTERM)
          # The query alone runs for a minute or more; the second signal ends it now.
          attacker.join(20)
          answer = answers[0] if answers else ('still running', None, b'')
          # Answered that the server stops, or the connection closed: never a result.
          if answer[0] != 'failed' and (answer[0], (answer[1] or {}).get('code')) != (500, 'E500001'):
              problems.append(['in flight', answer[0], answer[2][:300].decode(errors='replace')])
      elif mode == 'signup':
          answered = [call('POST', 'users', {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
                      for _ in range(40)]
          statuses = [a[0] for a in answered]
          if statuses != [201] * 30 + [429] * 10:
              problems.append(['statuses', statuses])
          refused = answered[-1][1] or {}
          if refused.get('code') != 'E429001' or 'sign-ups' not in refused.get('error', ''):
              problems.append(['refusal', refused])
          # Another address still signs up; the flooding one may still read and write.
          original = http.client.HTTPConnection
          http.client.HTTPConnection = lambda *a, **k: original(
              *a, source_address=('127.0.0.2', 0), **k)
          other = call('POST', 'users', {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
          http.client.HTTPConnection = original
          if other[0] != 201:
              problems.append(['another address', other[0], other[2][:200].decode()])
          token = answered[0][1]['sessionToken']
          if call('POST', 'classes/Todo', {'a': 1}, token)[0] != 201:
              problems.append(['a write by a user of the flooding address'])
          # Logins (refused here: nobody is named a) have a budget of their own, served here at
          # 10 a minute. Each checks a password hash (issue 34), which on a loaded machine takes
          # as long as the budget takes to refill one at the default 60 a minute; at 10 it drains
          # whatever the load: the first refusal comes after at least 10.
          codes = []
          while len(codes) < 200 and 'E429001' not in codes:
              codes.append((call('GET', 'login', query='userName=a&password=b')[1] or {})
                           .get('code'))
          if codes[-1] != 'E429001' or set(codes[:-1]) != {'E401002'} or len(codes) < 11:
              problems.append(['logins', codes])
      elif mode == 'atonce':
          # Served with a 30 s limit: two slow reads of one session run (until they hang up);
          # its third is refused at once; another session still reads.
          token = heavy(30)
          path = '/2013-09-01/classes/Heavy'
          held = []
          for _ in range(2):
              h = signed('GET', path, slow)
              h.update({'X-NCMB-Apps-Session-Token': token, 'Host': '127.0.0.1:%d' % port})
              s = socket.create_connection(('127.0.0.1', port), timeout=30)
              s.sendall(('GET %s?%s HTTP/1.1\\r\\n' % (path, slow)).encode()
                        + ''.join('%s: %s\\r\\n' % item for item in h.items()).encode()
                        + b'\\r\\n')
              held.append(s)
          time.sleep(5)
          try:
              status, body, raw = call('GET', 'classes/Heavy', token=token, query=slow)
          except Exception as error:
              status, body, raw = 'failed', {}, repr(error).encode()
          if status != 429 or body.get('code') != 'E429001' or 'at once' not in body['error']:
              problems.append(['third', status, raw[:300].decode(errors='replace')])
          victim, victim_token = signup()
          status, _, _ = call('GET', 'classes/Thread', token=victim_token)
          if status != 200:
              problems.append(['victim', status])
          for s in held:
              s.close()
          # Once they hung up, the session reads again.
          time.sleep(1)
          status, _, raw = call('GET', 'classes/Thread', token=token)
          if status != 200:
              problems.append(['after the hang-ups', status, raw[:300].decode(errors='replace')])
      elif mode == 'keepalive':
          # Served with a 30 s limit: more slow reads than the old worker pool had threads (four
          # a core, at least eight) are held open; a victim on one keep-alive connection, opened
          # before them, is still answered each time, none of its GETs waiting for an attacker's.
          token = heavy(30)
          path = '/2013-09-01/classes/Heavy'
          victim, victim_token = signup()
          keep = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
          def victim_get():
              h = signed('GET', '/2013-09-01/classes/Thread')
              h['X-NCMB-Apps-Session-Token'] = victim_token
              started = time.monotonic()
              keep.request('GET', '/2013-09-01/classes/Thread', None, h)
              r = keep.getresponse()
              r.read()
              return r.status, time.monotonic() - started
          first = victim_get()
          if first[0] != 200:
              problems.append(['victim before', first])
          held = []
          sessions = [signup()[1] for _ in range(max(8, min(64, 4 * (os.cpu_count() or 1))) // 2 + 2)]
          for attacker_token in sessions:
              for _ in range(2):
                  h = signed('GET', path, slow)
                  h.update({'X-NCMB-Apps-Session-Token': attacker_token,
                            'Host': '127.0.0.1:%d' % port})
                  s = socket.create_connection(('127.0.0.1', port), timeout=60)
                  s.sendall(('GET %s?%s HTTP/1.1\\r\\n' % (path, slow)).encode()
                            + ''.join('%s: %s\\r\\n' % item for item in h.items()).encode()
                            + b'\\r\\n')
                  held.append(s)
          time.sleep(2)
          for n in range(5):
              try:
                  status, took = victim_get()
              except Exception as error:
                  problems.append(['victim', n, repr(error)])
                  break
              # A correctness bound, not a speed claim: behind an attacker it takes ~30 s.
              if status != 200 or took >= 15:
                  problems.append(['victim', n, status, round(took, 1)])
          for s in held:
              s.close()
      elif mode == 'writes':
          # Served with --user-writes 5: the sixth write of a session is refused, another's taken.
          me, token = signup()
          statuses = [call('POST', 'classes/Todo', {'n': n}, token)[0] for n in range(7)]
          if statuses != [201] * 5 + [429] * 2:
              problems.append(['statuses', statuses])
          status, body, _ = call('PUT', 'users/' + me, {'displayName': 'x'}, token)
          if (status, body.get('code')) != (429, 'E429001'):
              problems.append(['an update', status, body])
          other, other_token = signup()
          if call('POST', 'classes/Todo', {'n': 99}, other_token)[0] != 201:
              problems.append(['another user'])
          status, body, _ = call('GET', 'classes/Todo', token=token, query='count=1&limit=1')
          if (status, body.get('count')) != (200, 6):
              problems.append(['stored', status, body])
      elif mode == 'readbytes':
          # Served with --read-bytes 0.25 (262,144 bytes of answers a minute to one app user):
          # a user reading a class of some 120 KB again and again is refused once over; another
          # user still reads; a read refused for its size (E400002) costs the whole answer
          # budget (16 MiB), so that user's next read, however small, is refused too.
          me, token = signup()
          for i in range(4):
              status, _, raw = call('POST', 'classes/Big', {'text': 'x' * 30000, 'i': i}, token)
              assert status == 201, (status, raw[:200])
          codes = []
          while len(codes) < 20 and 'E429001' not in codes:
              status, body, _ = call('GET', 'classes/Big', token=token)
              codes.append('200' if status == 200 else (body or {}).get('code'))
          if codes[-1] != 'E429001' or codes[:-1] != ['200'] * (len(codes) - 1) or len(codes) < 3:
              problems.append(['reader', codes])
          status, body, raw = call('GET', 'classes/Big', token=token, query='limit=1')
          if status != 429 or 'try again in' not in (body or {}).get('error', ''):
              problems.append(['refusal', status, raw[:300].decode(errors='replace')])
          other, other_token = signup()
          status, body, raw = call('GET', 'classes/Big', token=other_token)
          if status != 200:
              problems.append(['another user', status, raw[:200].decode(errors='replace')])
          bomber, bomber_token = signup()
          for i in range(20):
              status, _, raw = call('POST', 'classes/Bomb', {'a': [[0]] * 9999}, bomber_token)
              assert status == 201, (status, raw[:200])
          status, body, raw = call('GET', 'classes/Bomb', token=bomber_token, query='limit=1000')
          if (status, (body or {}).get('code')) != (400, 'E400002'):
              problems.append(['bomb', status, raw[:200].decode(errors='replace')])
          status, body, raw = call('GET', 'classes/Thread', token=bomber_token, query='limit=1')
          if (status, (body or {}).get('code')) != (429, 'E429001'):
              problems.append(['after the bomb', status, raw[:200].decode(errors='replace')])
      elif mode == 'batchreads':
          # Served with --read-bytes 0.25: the reads inside one `POST batch` cost the reader's
          # bytes as the same GETs alone do. Of fifty reads of a class of some 120 KB, the first
          # few are answered and the rest refused E429001, and so is the user's next GET.
          me, token = signup()
          for i in range(4):
              status, _, raw = call('POST', 'classes/Big', {'text': 'x' * 30000, 'i': i}, token)
              assert status == 201, (status, raw[:200])
          reads = [{'method': 'GET', 'path': '/2013-09-01/classes/Big'}] * 50
          status, body, raw = call('POST', 'batch', {'requests': reads}, token)
          answers = body if isinstance(body, list) else []
          read = [a for a in answers if 'success' in a]
          refused = {(a.get('error') or {}).get('code') for a in answers if 'success' not in a}
          if status != 200 or len(answers) != 50 or not 1 <= len(read) <= 3 or refused != {'E429001'}:
              problems.append(['batch', status, len(read), sorted(map(str, refused)),
                               raw[:200].decode(errors='replace')])
          status, body, raw = call('GET', 'classes/Big', token=token, query='limit=1')
          if (status, (body or {}).get('code')) != (429, 'E429001'):
              problems.append(['after the batch', status, raw[:200].decode(errors='replace')])
      print(json.dumps(problems))
      """

  /// Serves `location` with `options` and runs the script's `mode`; returns the server (still
  /// running unless the mode stopped it).
  private func run(
    _ forum: ForumFixture, keys: String, location: String, mode: String, options: [String] = []
  ) throws -> ServeProcess {
    let server = try ServeProcess(
      forum, ["--listen", "127.0.0.1:0"] + options, database: location)
    let run = try Clients.python(
      ServeBudgetTests.script,
      [String(server.port), keys, mode, String(server.process.processIdentifier)], timeout: 300)
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    return server
  }

  private func sqliteBoard() throws -> (ForumFixture, String) {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    #expect(keys.status == 0, "\(keys.summary)")
    return (forum, keys.stdout)
  }

  // MARK: SQLite

  @Test func aSlowQueryIsCutAtTheLimitWhileAVictimIsServed() throws {
    let (forum, keys) = try sqliteBoard()
    let server = try run(forum, keys: keys, location: forum.db, mode: "limit")
    #expect(server.stop() == 0)
    #expect(server.stderr == "", "\(server.stderr)")
  }

  @Test func aClientThatHangsUpStopsItsQuery() throws {
    let (forum, keys) = try sqliteBoard()
    let server = try run(
      forum, keys: keys, location: forum.db, mode: "hangup", options: ["--time-limit", "0"])
    // The script sent SIGTERM after the hang-up: nothing is left running to wait for.
    #expect(server.waitForExit(timeout: 20) == 0)
  }

  @Test func aSecondSigtermStopsTheRunningQuery() throws {
    let (forum, keys) = try sqliteBoard()
    let server = try run(
      forum, keys: keys, location: forum.db, mode: "sigterm", options: ["--time-limit", "0"])
    #expect(server.waitForExit(timeout: 20) == 0)
  }

  @Test func aSignUpFloodIsLimitedPerAddress() throws {
    let (forum, keys) = try sqliteBoard()
    let server = try run(
      forum, keys: keys, location: forum.db, mode: "signup", options: ["--logins", "10"])
    #expect(server.stop() == 0)
  }

  @Test func aSessionRunsAtMostTwoReadsAtOnce() throws {
    let (forum, keys) = try sqliteBoard()
    let server = try run(
      forum, keys: keys, location: forum.db, mode: "atonce", options: ["--time-limit", "30"])
    #expect(server.stop() == 0)
  }

  @Test func aKeepAliveVictimIsNotQueuedBehindAttackers() throws {
    let (forum, keys) = try sqliteBoard()
    let server = try run(
      forum, keys: keys, location: forum.db, mode: "keepalive", options: ["--time-limit", "30"])
    #expect(server.stop() == 0)
  }

  @Test func aSessionsWritesAreLimited() throws {
    let (forum, keys) = try sqliteBoard()
    let server = try run(
      forum, keys: keys, location: forum.db, mode: "writes", options: ["--user-writes", "5"])
    #expect(server.stop() == 0)
  }

  @Test func anAppUsersReadsAreLimitedInBytes() throws {
    let (forum, keys) = try sqliteBoard()
    let server = try run(
      forum, keys: keys, location: forum.db, mode: "readbytes", options: ["--read-bytes", "0.25"])
    #expect(server.stop() == 0)
  }

  @Test func readsInsideABatchAreChargedToTheReadBudget() throws {
    let (forum, keys) = try sqliteBoard()
    let server = try run(
      forum, keys: keys, location: forum.db, mode: "batchreads", options: ["--read-bytes", "0.25"])
    #expect(server.stop() == 0)
  }

  // MARK: PostgreSQL

  @Test func aSlowQueryIsCutAtTheLimitOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try run(
      forum, keys: served.keys, location: served.server.uri, mode: "limit")
    #expect(server.stop() == 0)
    #expect(server.stderr == "", "\(server.stderr)")
  }

  @Test func aClientThatHangsUpStopsItsQueryOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try run(
      forum, keys: served.keys, location: served.server.uri, mode: "hangup",
      options: ["--time-limit", "0"])
    #expect(server.waitForExit(timeout: 20) == 0)
  }

  @Test func aSecondSigtermStopsTheRunningQueryOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try run(
      forum, keys: served.keys, location: served.server.uri, mode: "sigterm",
      options: ["--time-limit", "0"])
    #expect(server.waitForExit(timeout: 20) == 0)
  }

  @Test func aSessionRunsAtMostTwoReadsAtOnceOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try run(
      forum, keys: served.keys, location: served.server.uri, mode: "atonce",
      options: ["--time-limit", "30"])
    #expect(server.stop() == 0)
  }

  @Test func aSessionsWritesAreLimitedOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try run(
      forum, keys: served.keys, location: served.server.uri, mode: "writes",
      options: ["--user-writes", "5"])
    #expect(server.stop() == 0)
  }

  @Test func anAppUsersReadsAreLimitedInBytesOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try run(
      forum, keys: served.keys, location: served.server.uri, mode: "readbytes",
      options: ["--read-bytes", "0.25"])
    #expect(server.stop() == 0)
  }

  @Test func readsInsideABatchAreChargedToTheReadBudgetOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try run(
      forum, keys: served.keys, location: served.server.uri, mode: "batchreads",
      options: ["--read-bytes", "0.25"])
    #expect(server.stop() == 0)
  }

  @Test func aSignUpFloodIsLimitedPerAddressOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try run(
      forum, keys: served.keys, location: served.server.uri, mode: "signup",
      options: ["--logins", "10"])
    #expect(server.stop() == 0)
  }
}
