import Foundation
import HTTPTestSupport
import Testing

/// Issue 28's attacks on the built `forum serve` over loopback, with the system python3 and
/// openssl as the attacker: a body is never read before its signature is checked, a flood of
/// uploads stays small in memory, a trickling client is cut at its deadline, one address cannot
/// take every connection, TLS below 1.2 and an ambiguous Content-Length are refused.
@Suite("forum serve: guarded before it works")
struct ServeGuardTests {
  /// A served board and its keys (`forum keys --json`).
  private static func serve(_ arguments: [String] = []) throws -> (
    ForumFixture, ServeProcess, String
  ) {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    #expect(keys.status == 0, "\(keys.summary)")
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"] + arguments)
    return (forum, server, keys.stdout)
  }

  /// The most memory the server has held (kB), from /proc.
  private static func peakKilobytes(_ server: ServeProcess) -> Int {
    let status =
      (try? String(
        contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
  }

  /// An upload's headers, with no signature, and not a byte of its body: answered E401001 at
  /// once, on SQLite and on PostgreSQL (before today: the server waited for the 6 MiB it was
  /// promised).
  @Test(arguments: ["SQLite", "PostgreSQL"])
  func anUnsignedBodyIsRefusedBeforeItIsRead(engine: String) throws {
    let forum = try ForumFixture()
    var location = forum.db
    var served: ServedPostgresBoard?
    if engine == "PostgreSQL" {
      served = try ServedPostgresBoard(forum)
      location = served!.server.uri
    } else {
      try forum.ok(["init"], profile: nil)
    }
    defer { served?.board.remove() }
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: location)
    let run = try Clients.python(
      """
      import socket, sys
      s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
      s.settimeout(10)
      s.sendall(b'POST /2013-09-01/files/a.png HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n'
                b'Content-Type: multipart/form-data; boundary=B\\r\\n'
                b'Content-Length: 6291455\\r\\n\\r\\n')
      try:
          answer = s.recv(4096)
      except socket.timeout:
          answer = b'no answer in 10 s'
      print(answer.split(b'\\r\\n')[0].decode(), answer.split(b'\\r\\n\\r\\n')[-1].decode())
      """, [String(server.port)])
    let refusal =
      #"{"code":"E401001","error":"Authentication error by header incorrect. "#
      + #"(X-NCMB-Application-Key is missing)"}"#
    #expect(run.stdout == "HTTP/1.1 401 Unauthorized \(refusal)\n", "\(run.summary)")
    #expect(server.stop() == 0)
  }

  /// 40 clients without keys each send 6 MiB − 1 of multipart at once (the issue's flood): each
  /// is refused, and the server never held 100 MB (before today: about 12 MiB a client).
  @Test func aFloodOfUnsignedUploadsStaysSmall() throws {
    let (forum, server, _) = try Self.serve()
    let run = try Clients.python(
      """
      import socket, sys, threading
      port = int(sys.argv[1])
      head = (b'POST /2013-09-01/files/a.png HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n'
              b'Content-Type: multipart/form-data; boundary=B\\r\\nContent-Length: 6291455\\r\\n\\r\\n')
      body = (b'--B\\r\\nContent-Disposition: form-data; name="file"; filename="a.png"\\r\\n\\r\\n')
      body += b'x' * (6291455 - len(body))
      answers = []
      def flood():
          s = socket.create_connection(('127.0.0.1', port))
          s.settimeout(30)
          try:
              s.sendall(head + body)
          except OSError:
              pass
          try:
              answers.append(s.recv(64).split(b'\\r\\n')[0].decode())
          except OSError as error:
              answers.append(type(error).__name__)
      threads = [threading.Thread(target=flood) for _ in range(40)]
      for t in threads: t.start()
      for t in threads: t.join()
      print(sorted(set(answers)))
      """, [String(server.port)])
    #expect(run.status == 0, "\(run.summary)")
    #expect(!run.stdout.contains("201"), "\(run.summary)")
    let peak = Self.peakKilobytes(server)
    #expect(peak > 0 && peak < 100_000, "the server held \(peak) kB")
    #expect(server.stop() == 0)
    withExtendedLifetime(forum) {}
  }

  /// A signed upload whose body comes a byte a second is cut at the body deadline, and a request
  /// whose headers come a byte a second at the header deadline, though neither is ever idle for
  /// the idle limit (before today: both held their connection as long as they trickled).
  @Test func aTricklingClientIsCutAtItsDeadline() throws {
    let (forum, server, keys) = try Self.serve(["--header-deadline", "2", "--body-deadline", "3"])
    let run = try Clients.python(
      SignedClient.prelude + """
        import socket, time
        def trickle(head, rest):
            s = socket.create_connection(('127.0.0.1', port))
            s.sendall(head)
            start = time.time()
            try:
                for byte in rest:
                    s.sendall(bytes([byte]))
                    time.sleep(1)
                    if time.time() - start > 25:
                        return 'kept for 25 s'
                return 'sent everything'
            except OSError:
                return 'cut'
        h = signed('POST', '/2013-09-01/classes/Todo')
        head = ('POST /2013-09-01/classes/Todo HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n' % port
                + ''.join('%s: %s\\r\\n' % pair for pair in h.items())
                + 'Content-Type: application/json\\r\\nContent-Length: 100\\r\\n\\r\\n').encode()
        print(trickle(head, b'{"a":"' + b'x' * 90 + b'"}'))
        print(trickle(b'GET /2013-09-01/classes/Todo HTTP/1.1\\r\\nHo', b'st: 127.0.0.1' * 3))
        """, [String(server.port), keys])
    #expect(run.stdout == "cut\ncut\n", "\(run.summary)")
    #expect(server.stop() == 0)
    withExtendedLifetime(forum) {}
  }

  /// 4,200 connections from 127.0.0.2, each with half a header line (the issue's slowloris):
  /// a client from 127.0.0.1 is still answered at once (before today: every connection the
  /// server had was taken).
  @Test func oneAddressCannotTakeEveryConnection() throws {
    let (forum, server, _) = try Self.serve()
    let run = try Clients.python(
      """
      import resource, socket, subprocess, sys
      port = int(sys.argv[1])
      soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
      resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
      held = []
      for _ in range(4200):
          s = socket.socket()
          s.bind(('127.0.0.2', 0))
          s.settimeout(5)
          try:
              s.connect(('127.0.0.1', port))
              s.sendall(b'GET /2013-09-01/classes/Thread HTTP/1.1\\r\\nHo')
          except OSError:
              pass
          held.append(s)
      honest = subprocess.run(
          ['/usr/bin/curl', '-sS', '-m', '10', '-w', ' %{http_code}',
           'http://127.0.0.1:%d/2013-09-01/classes/Thread' % port],
          capture_output=True, text=True)
      print(honest.stdout, honest.stderr.strip())
      """, [String(server.port)], timeout: 180)
    #expect(
      run.stdout == #"{"code":"E401001","error":"Authentication error by header incorrect. "#
        + #"(X-NCMB-Application-Key is missing)"} 401 "# + "\n", "\(run.summary) \(server.stderr)")
    #expect(server.stop() == 0)
    withExtendedLifetime(forum) {}
  }

  /// TLS 1.0 and 1.1 are refused, 1.2 and 1.3 spoken (before today: 1.1 was accepted).
  @Test func tlsBelowOnePointTwoIsRefused() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let directory = try TemporaryDirectory()
    let certificate = try ThrowawayCertificate(in: directory.path)
    let server = try ServeProcess(
      forum,
      [
        "--listen", "127.0.0.1:0", "--tls-cert", certificate.certificateFile, "--tls-key",
        certificate.keyFile,
      ])
    func handshake(_ version: String) throws -> ClientRun {
      try Clients.run(
        "/usr/bin/openssl",
        [
          "s_client", "-connect", "127.0.0.1:\(server.port)", version, "-cipher",
          "DEFAULT:@SECLEVEL=0",
        ])
    }
    for version in ["-tls1", "-tls1_1"] {
      let run = try handshake(version)
      #expect(run.status != 0, "\(version) was accepted: \(run.summary)")
    }
    for version in ["-tls1_2", "-tls1_3"] {
      let run = try handshake(version)
      #expect(run.status == 0, "\(version) was refused: \(run.summary)")
    }
    #expect(server.stop() == 0)
    withExtendedLifetime(forum) {}
  }

  /// Two different Content-Length headers: 400 and the connection closed (RFC 9112 § 6.3), not
  /// the first one believed (before today: the request was served by its first length).
  @Test func twoDifferentContentLengthsAre400() throws {
    let (forum, server, keys) = try Self.serve()
    let run = try Clients.python(
      SignedClient.prelude + """
        import socket
        h = signed('POST', '/2013-09-01/classes/Todo')
        s = socket.create_connection(('127.0.0.1', port))
        s.settimeout(10)
        s.sendall(('POST /2013-09-01/classes/Todo HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n' % port
                   + ''.join('%s: %s\\r\\n' % pair for pair in h.items())
                   + 'Content-Type: application/json\\r\\nContent-Length: 8\\r\\n'
                   + 'Content-Length: 40\\r\\n\\r\\n{"a":1}'
                   + ' ' * 33).encode())
        answer = b''
        while True:
            more = s.recv(4096)
            if not more:
                break
            answer += more
        print(answer.split(b'\\r\\n')[0].decode(), answer.split(b'\\r\\n\\r\\n')[-1].decode())
        """, [String(server.port), keys])
    #expect(
      run.stdout
        == "HTTP/1.1 400 Bad Request "
        + #"{"code":"E400002","error":"Content-Length is invalid."}"# + "\n", "\(run.summary)")
    #expect(server.stop() == 0)
    withExtendedLifetime(forum) {}
  }

  /// The same flood signed with the app's keys (which every copy of an app carries): the bodies
  /// are read, but what they hold stays within the body budget, and the server never held 100 MB
  /// (before today: 644 MB in `Scripts/bench-attacks.py`).
  @Test func aFloodOfSignedUploadsStaysWithinTheBudget() throws {
    let (forum, server, keys) = try Self.serve()
    let run = try Clients.python(
      SignedClient.prelude + """
        import socket, threading
        path = '/2013-09-01/files/a.png'
        body = (b'--B\\r\\nContent-Disposition: form-data; name="file"; filename="a.png"\\r\\n\\r\\n')
        body += b'x' * (6291455 - len(body))
        answers = []
        def flood():
            head = ('POST %s HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n' % (path, port)
                    + ''.join('%s: %s\\r\\n' % pair for pair in signed('POST', path).items())
                    + 'Content-Type: multipart/form-data; boundary=B\\r\\n'
                    + 'Content-Length: 6291455\\r\\n\\r\\n').encode()
            s = socket.create_connection(('127.0.0.1', port))
            s.settimeout(60)
            try:
                s.sendall(head + body)
            except OSError:
                pass
            try:
                answers.append(s.recv(64).split(b'\\r\\n')[0].decode())
            except OSError as error:
                answers.append(type(error).__name__)
        threads = [threading.Thread(target=flood) for _ in range(40)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(sorted(set(answers)))
        """, [String(server.port), keys])
    #expect(run.status == 0, "\(run.summary)")
    #expect(run.stdout.contains("503"), "\(run.summary)")
    let peak = Self.peakKilobytes(server)
    #expect(peak > 0 && peak < 100_000, "the server held \(peak) kB")
    #expect(server.stop() == 0)
    withExtendedLifetime(forum) {}
  }

  /// A limit that is not a whole number is a usage error of one line, and nothing is served.
  @Test func aBadLimitIsOneLine() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    for option in ["--header-deadline", "--body-deadline", "--connections-per-address"] {
      for bad in ["x", "-1", "1.5", "99999999"] {
        let run = try forum.run(["serve", "--listen", "127.0.0.1:0", option, bad], profile: nil)
        #expect(run.status == 2, "\(option) \(bad): \(run.summary)")
        #expect(run.stderrLines.count == 1 && run.stdout == "", "\(option) \(bad): \(run.summary)")
      }
    }
  }
}
