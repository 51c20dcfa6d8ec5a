import Foundation
import HTTPTestSupport
import Spawning
import Testing

/// `forum serve` through the built binary, with curl and the system Python as its clients.
@Suite("forum serve")
struct ServeTests {
  /// A board made by `forum init`, and a certificate for it.
  private func board() throws -> (ForumFixture, ThrowawayCertificate) {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    return (forum, try ThrowawayCertificate(in: forum.root))
  }

  @Test func readyLineNamesTheURLAndStopsCleanlyOnSIGTERM() throws {
    let (forum, certificate) = try board()
    let server = try ServeProcess(
      forum,
      [
        "--listen", "127.0.0.1:0", "--tls-cert", certificate.certificateFile, "--tls-key",
        certificate.keyFile,
      ])
    let pattern = #/^Serving https://127\.0\.0\.1:([0-9]+)/2013-09-01/ with application key .+$/#
    #expect(server.readyLine.wholeMatch(of: pattern) != nil, "\(server.readyLine)")
    let run = try Clients.curl([
      "--cacert", certificate.certificateFile, server.url + "classes/Todo?limit=1", "-w",
      "\n%{http_code}",
    ])
    #expect(run.status == 0, "\(run.summary)")
    #expect(run.stdout.contains(#""code""#) || run.stdout.contains(#""results""#), "\(run.summary)")
    #expect(server.stop(SIGTERM) == 0)
    #expect(server.stdout == server.readyLine + "\n", "exactly one line: \(server.stdout)")
    #expect(server.stderr == "")
  }

  @Test func ctrlCStopsItToo() throws {
    let (forum, _) = try board()
    let server = try ServeProcess(forum, ["--listen", "localhost:0"])
    #expect(server.readyLine.hasPrefix("Serving http://localhost:"), "\(server.readyLine)")
    let run = try Clients.curl([server.url + "classes/Thread", "-w", "\n%{http_code}"])
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop(SIGINT) == 0)
  }

  /// Started from a shell (no signal blocked), every thread but the one waiting for Ctrl-C and
  /// SIGTERM blocks them: a thread that did not would take the second one and die of it, server
  /// and all (a second Ctrl-C must stop the requests still running, not kill the process).
  @Test func onlyTheMainThreadTakesTheStopSignals() throws {
    let (forum, _) = try board()
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let run = try Clients.curl([server.url + "classes/Thread", "-w", "\n%{http_code}"])
    #expect(run.status == 0, "\(run.summary)")
    let pid = server.process.processIdentifier
    let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
    #expect(threads.count > 2, "the server's threads: \(threads)")
    let stops: UInt64 = 1 << (UInt64(SIGINT) - 1) | 1 << (UInt64(SIGTERM) - 1)
    for thread in threads where thread != String(pid) {
      let status = try String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)
      let line = status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") } ?? ""
      let blocked = UInt64(
        line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
      #expect(blocked.map { $0 & stops == stops } == true, "thread \(thread): \(line)")
    }
    #expect(server.stop(SIGTERM) == 0)
  }

  @Test func readyLineInJapaneseAndAsJSON() throws {
    let (forum, _) = try board()
    let japanese = try ServeProcess(forum, ["--listen", "[::1]:0"], lang: "ja_JP.UTF-8")
    #expect(japanese.readyLine.hasPrefix("http://[::1]:"), "\(japanese.readyLine)")
    #expect(japanese.readyLine.contains("で提供中 (アプリケーションキー "), "\(japanese.readyLine)")
    #expect(japanese.stop() == 0)
    let json = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], global: ["--json"])
    let object =
      try JSONSerialization.jsonObject(with: Data(json.readyLine.utf8)) as? [String: String]
    #expect(object?["url"]?.hasPrefix("http://127.0.0.1:") == true, "\(json.readyLine)")
    #expect(object?["url"]?.hasSuffix("/2013-09-01/") == true)
    #expect(object?["applicationKey"] != nil)
    #expect(json.stop() == 0)
    let after = try ServeProcess(forum, ["--listen", "127.0.0.1:0", "--json"])
    #expect(after.readyLine.hasPrefix(#"{""#), "\(after.readyLine)")
    #expect(after.stop() == 0)
  }

  @Test func aBadListenIsOneLineAndExit1() throws {
    let (forum, _) = try board()
    for bad in [
      "8443", "127.0.0.1", "127.0.0.1:99999", "example.com:80", "::1:80", "127.0.0.1:x", "",
    ] {
      let run = try forum.run(["serve", "--listen", bad], profile: nil)
      #expect(run.status == 1, "\(bad): \(run.summary)")
      #expect(run.stderrLines.count == 1, "\(bad): \(run.summary)")
      #expect(run.stdout == "")
    }
    let missing = try forum.run(["serve"], profile: nil)
    #expect(missing.status == 2, "\(missing.summary)")
    #expect(
      missing.stderrLines == [
        "forum: serve needs --listen HOST:PORT (for example --listen 127.0.0.1:8443)"
      ])
    let half = try forum.run(
      ["serve", "--listen", "127.0.0.1:0", "--tls-cert", "x.pem"], profile: nil)
    #expect(half.status == 2, "\(half.summary)")
  }

  @Test func aPortInUseIsOneLineAndExit1() throws {
    let (forum, _) = try board()
    let first = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let second = try forum.run(["serve", "--listen", "127.0.0.1:\(first.port)"], profile: nil)
    #expect(second.status == 1, "\(second.summary)")
    #expect(
      second.stderrLines == [
        "forum: 127.0.0.1:\(first.port) is in use (another server listens there)"
      ])
    #expect(second.stdout == "")
    // The first is untouched.
    let run = try Clients.curl([first.url + "classes/Thread", "-w", "\n%{http_code}"])
    #expect(run.status == 0, "\(run.summary)")
    #expect(first.stop() == 0)
  }

  @Test func anUnreadableOrUnusableKeyIsOneLineAndExit1() throws {
    let (forum, certificate) = try board()
    let other = try ThrowawayCertificate(in: forum.root + "/home")
    let cases: [(key: String, says: String)] = [
      (
        forum.root + "/missing.pem",
        "cannot read the TLS key \(forum.root)/missing.pem: No such file or directory"
      ),
      (forum.root, "cannot read the TLS key \(forum.root): Is a directory"),
      (other.keyFile, "the TLS certificate and key cannot be used"),
      (forum.db, "cannot read the TLS key \(forum.db): not PEM text"),
    ]
    for (key, says) in cases {
      let run = try forum.run(
        [
          "serve", "--listen", "127.0.0.1:0", "--tls-cert", certificate.certificateFile,
          "--tls-key", key,
        ],
        profile: nil)
      #expect(run.status == 1, "\(key): \(run.summary)")
      #expect(
        run.stderrLines.count == 1 && run.stderr.hasPrefix("forum: " + says), "\(run.summary)")
      #expect(run.stdout == "")
    }
  }

  @Test func aHeaderOfOneMegabyteIsRefusedCleanly() throws {
    let (forum, _) = try board()
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let run = try Clients.python(
      """
      import http.client, sys
      c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=30)
      c.putrequest('GET', '/2013-09-01/classes/Thread')
      c.putheader('X-NCMB-Apps-Session-Token', 'a' * 1000000)
      try:
          c.endheaders()
          print(c.getresponse().status)
      except (BrokenPipeError, ConnectionResetError):
          print('reset')
      """, [String(server.port)])
    #expect(
      ["431", "reset"].contains(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)),
      "\(run.summary)")
    let next = try Clients.curl([server.url + "classes/Thread", "-w", "\n%{http_code}"])
    #expect(next.status == 0 && !next.stdout.hasSuffix("\n000"), "\(next.summary)")
    #expect(server.stop() == 0)
    #expect(!server.stderr.contains("aaaa"), "the token is never logged")
  }

  /// A thousand connections held open (half of them part-way through their headers) take no
  /// worker from a client that asks something (with the limit per address and the header
  /// deadline turned off: `ServeGuardTests` has them).
  @Test func aThousandIdleConnectionsDoNotStarveAnother() throws {
    let (forum, _) = try board()
    let server = try ServeProcess(
      forum,
      ["--listen", "127.0.0.1:0", "--connections-per-address", "0", "--header-deadline", "0"])
    let run = try Clients.python(
      """
      import resource, socket, subprocess, sys
      soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
      resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
      port = int(sys.argv[1])
      held = []
      for i in range(1000):
          s = socket.create_connection(('127.0.0.1', port))
          if i % 2:
              s.sendall(b'GET /2013-09-01/classes/Thread HTTP/1.1\\r\\nHost: x\\r\\n')
          held.append(s)
      served = 0
      for i in range(5):
          r = subprocess.run(['/usr/bin/curl', '-sS', '--max-time', '20', '-o', '/dev/null',
                              '-w', '%{http_code}', sys.argv[2] + 'classes/Thread'],
                             capture_output=True, text=True)
          if r.stdout not in ('', '000'):
              served += 1
      # All thousand are still open: none was dropped to make room.
      alive = 0
      for s in held:
          s.setblocking(False)
          try:
              alive += 1 if s.recv(1) != b'' else 0
          except BlockingIOError:
              alive += 1
      print(served, alive)
      """, [String(server.port), server.url], timeout: 180)
    #expect(run.stdout == "5 1000\n", "\(run.summary)")
    #expect(server.stop() == 0)
  }

  @Test func keepAlive() throws {
    let (forum, _) = try board()
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let run = try Clients.python(
      """
      import http.client, sys
      c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=30)
      ports = set()
      for i in range(10):
          c.request('GET', '/2013-09-01/classes/Thread?limit=%d' % (i + 1))
          r = c.getresponse()
          r.read()
          ports.add(c.sock.getsockname()[1])
      print(len(ports))
      """, [String(server.port)])
    #expect(run.stdout == "1\n", "\(run.summary)")
    #expect(server.stop() == 0)
  }

  /// SIGTERM while a (signed) request is still arriving: the server takes no new connection,
  /// answers the request once it is complete (closing its connection), then exits 0.
  @Test func sigtermLetsARequestInFlightFinish() throws {
    let (forum, _) = try board()
    let keys = try forum.run(["--json", "keys"], profile: nil)
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let client = ChildProcess()
    client.executableURL = URL(fileURLWithPath: try Clients.require("/usr/bin/python3"))
    client.arguments = [
      "-c",
      SignedClient.prelude + """
        import socket, sys
        s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
        body = b'{"text":"' + b'x' * 2000 + b'"}'
        h = ''.join('%s: %s\\r\\n' % pair
                    for pair in signed('POST', '/2013-09-01/classes/Comment').items()).encode()
        s.sendall(b'POST /2013-09-01/classes/Comment HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n' % port
                  + h + b'Content-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n' % len(body)
                  + body[:1000])
        print('half', flush=True)
        sys.stdin.readline()
        s.sendall(body[1000:])
        answer = b''
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
        print(answer.split(b'\\r\\n')[0].decode(), 'close' if b'Connection: close' in answer else 'open')
        """,
      String(server.port), keys.stdout,
    ]
    let input = Pipe()
    let output = Pipe()
    client.standardInput = input
    client.standardOutput = output
    try client.run()
    #expect(output.fileHandleForReading.firstLine() == "half\n")
    // Bytes the server has not read yet are no request in flight: let it read them.
    usleep(500_000)
    kill(server.process.processIdentifier, SIGTERM)
    usleep(500_000)
    #expect(server.process.isRunning, "the server waits for the request in flight")
    let refused = try Clients.curl(["--max-time", "5", server.url + "classes/Thread"])
    #expect(refused.status != 0, "no new connection after SIGTERM: \(refused.summary)")
    try input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
    let answer = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    client.waitUntilExit()
    #expect(answer.hasPrefix("HTTP/1.1 ") && answer.hasSuffix(" close\n"), "\(answer)")
    #expect(server.waitForExit(timeout: 30) == 0)
  }

  /// Four clients post as fast as they can while SIGTERM arrives: every object the server
  /// acknowledged is stored whole, nothing it did not acknowledge is, and the file is intact.
  @Test func sigtermDuringWritesHalfWritesNothing() throws {
    let (forum, _) = try board()
    let keys = try forum.run(["--json", "keys"], profile: nil)
    #expect(keys.status == 0, "\(keys.summary)")
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let acknowledged = try SigtermDuringWrites.acknowledged(server: server, keys: keys.stdout)
    let stored = try Clients.run(
      "/usr/bin/sqlite3",
      [
        forum.db, "PRAGMA integrity_check;",
        "SELECT objectId FROM objects WHERE class = 'Todo' AND json_extract(data, '$.title') "
          + "LIKE 'todo %' AND length(json_extract(data, '$.filler')) = 2000 ORDER BY objectId;",
        "SELECT count(*) FROM objects WHERE class = 'Todo';",
      ])
    let rows = stored.stdout.split(separator: "\n").map(String.init)
    #expect(rows.first == "ok", "\(stored.summary)")
    // Every acknowledged object is stored whole. A writer's last request may have been committed
    // while the stop cut its answer, so at most one unacknowledged object per writer (4), each
    // whole too (the filler's length is checked above); nothing else.
    let storedIds = Array(rows.dropFirst().dropLast())
    #expect(Set(acknowledged).isSubset(of: Set(storedIds)), "\(stored.summary)")
    #expect(storedIds.count <= acknowledged.count + 4, "\(storedIds.count) \(acknowledged.count)")
    #expect(rows.last == String(storedIds.count))
  }

  @Test func helpInEnglishAndJapanese() throws {
    let forum = try ForumFixture()
    let english = try forum.run(["help", "serve"], profile: nil)
    #expect(english.stdout.hasPrefix("usage: serve --listen HOST:PORT"), "\(english.summary)")
    #expect(english.stdout.contains("SIGTERM"))
    let japanese = try forum.run(["help", "serve"], profile: nil, lang: "ja_JP.UTF-8")
    #expect(japanese.stdout.contains("ボードを NCMB のアプリに提供"), "\(japanese.summary)")
  }

  /// libmicrohttpd and GnuTLS are mapped by a server, and by no other command.
  @Test func onlyServeMapsTheHTTPLibrary() throws {
    let (forum, certificate) = try board()
    let run = try forum.run(["list"], environment: ["LD_DEBUG": "libs"])
    #expect(run.status == 0, "\(run.summary)")
    #expect(
      !run.stderr.contains("microhttpd") && !run.stderr.contains("gnutls"),
      "\(run.stderr.prefix(2000))")
    let server = try ServeProcess(
      forum,
      [
        "--listen", "127.0.0.1:0", "--tls-cert", certificate.certificateFile, "--tls-key",
        certificate.keyFile,
      ])
    // /proc files say they are empty: read to the end rather than by their size.
    let handle = try FileHandle(
      forReadingFrom: URL(fileURLWithPath: "/proc/\(server.process.processIdentifier)/maps"))
    let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    #expect(maps.contains("libmicrohttpd.so.12") && maps.contains("libgnutls"))
    #expect(server.stop() == 0)
  }
}
