import Foundation
import HTTPTestSupport
import Testing

/// `forum --db https://HOST:PORT/`: a board that a `forum serve` holds, through the built binary,
/// over TLS verified against a throwaway authority (`FORUM_CA_FILE`), on a SQLite-backed and a
/// PostgreSQL-backed server.
@Suite("remote board over https")
struct RemoteBoardTests {
  /// A server for `forum`'s board (or `database`), and how to run forum against it.
  final class Served {
    let forum: ForumFixture
    let authority: ThrowawayAuthority
    let server: ServeProcess

    init(_ forum: ForumFixture, database: String? = nil, options: [String] = []) throws {
      self.forum = forum
      authority = try ThrowawayAuthority(in: forum.root)
      server = try ServeProcess(
        forum,
        [
          "--listen", "127.0.0.1:0", "--tls-cert", authority.certificateFile, "--tls-key",
          authority.keyFile,
        ] + options, database: database)
    }

    /// A new board (`forum init`) and a server of it: what most tests here start from.
    static func onNewBoard() throws -> (ForumFixture, Served) {
      let forum = try ForumFixture()
      try forum.ok(["init"], profile: nil)
      return (forum, try Served(forum))
    }

    var url: String { "https://127.0.0.1:\(server.port)/" }

    /// `forum --db URL ARGUMENTS…` as `profile`, trusting the throwaway authority.
    @discardableResult
    func run(
      _ arguments: [String], profile: String = "alice", input: Data = Data(),
      environment: [String: String]? = nil, lang: String = "C"
    ) throws -> RunResult {
      try forum.run(
        arguments, profile: profile, input: input, lang: lang,
        environment: environment ?? ["FORUM_CA_FILE": authority.authorityFile], database: url)
    }

    @discardableResult
    func ok(
      _ arguments: [String], profile: String = "alice",
      sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> RunResult {
      let result = try run(arguments, profile: profile)
      #expect(result.status == 0, "\(result.summary)", sourceLocation: sourceLocation)
      return result
    }

    func handle(_ profile: String) throws -> String {
      "@" + (try ok(["--json", "whoami"], profile: profile).json().string("userName") ?? "?")
    }
  }

  /// A small honest PNG (2×2, red), made by the system Python.
  static func png(in directory: String) throws -> String {
    let path = directory + "/red.png"
    let script = """
      import struct, zlib, sys
      def chunk(kind, data):
          return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
      raw = b''.join(b'\\x00' + b'\\xff\\x00\\x00' * 2 for _ in range(2))
      png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 2, 2, 8, 2, 0, 0, 0)) \
          + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')
      open(sys.argv[1], 'wb').write(png)
      """
    let made = try Clients.run("/usr/bin/python3", ["-c", script, path])
    guard made.status == 0 else { throw ForumTestError("python3: \(made.summary)") }
    return path
  }

  /// What a member does, each command through the server: the same output as on a local board.
  private func everyDayCommands(_ served: Served) throws {
    let image = try RemoteBoardTests.png(in: served.forum.root)
    try served.ok([
      "new", "--title", "Hello from afar", "--description", "first post", "--image", image,
    ])
    let list = try served.ok(["list"])
    #expect(list.stdout.contains("Hello from afar"), "\(list.summary)")
    let shown = try served.ok(["--images", "none", "show", "1"])
    #expect(shown.stdout.contains("first post"), "\(shown.summary)")
    try served.ok(["comment", "1", "a comment with 'quotes' and \\ kept"], profile: "bob")
    let thread = try served.ok(["show", "1"])
    #expect(thread.stdout.contains("a comment with 'quotes' and \\ kept"), "\(thread.summary)")
    try served.ok(["reply", "1/1", "a reply"])
    try served.ok(["edit", "1", "--title", "Hello, edited"])
    let history = try served.ok(["history", "1"])
    #expect(history.stdout.contains("Hello from afar"), "\(history.summary)")
    let found = try served.ok(["search", "edited"])
    #expect(found.stdout.contains("Hello, edited"), "\(found.summary)")
    // Bob has not read Alice's reply.
    let unread = try served.ok(["unread"], profile: "bob")
    #expect(unread.stdout.contains("Hello, edited"), "\(unread.summary)")
    let json = try served.ok(["--json", "list"])
    let results = try json.json()["results"] as? [[String: Any]]
    #expect(results?.first?["title"] as? String == "Hello, edited", "\(json.summary)")
    #expect(results?.first?["commentCount"] as? Int == 2, "\(json.summary)")
    // Direct messages stay between the two.
    try served.ok(["dm", try served.handle("bob"), "secret over https"])
    let inbox = try served.ok(["dm", try served.handle("alice")], profile: "bob")
    #expect(inbox.stdout.contains("secret over https"), "\(inbox.summary)")
    let carol = try served.ok(["search", "secret"], profile: "carol")
    #expect(!carol.stdout.contains("secret over https"), "\(carol.summary)")
    // Exit statuses: not found 4, refused 3.
    let missing = try served.run(["show", "99"])
    #expect(missing.status == 4, "\(missing.summary)")
    #expect(missing.stderrLines.count == 1, "\(missing.summary)")
    let refused = try served.run(["delete", "1", "--yes"], profile: "bob")
    #expect(refused.status == 3, "\(refused.summary)")
    try served.ok(["delete", "1", "--yes"])
    let gone = try served.run(["show", "1"])
    #expect(gone.status == 4, "\(gone.summary)")
  }

  @Test func aMemberUsesASQLiteBoardOverHTTPS() throws {
    let (forum, served) = try Served.onNewBoard()
    try everyDayCommands(served)
    // Each member is an anonymous user of the board, kept in their profile (mode 0600).
    let attributes = try FileManager.default.attributesOfItem(
      atPath: forum.profilesDirectory + "/alice.json")
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    #expect(served.server.stop() == 0)
  }

  @Test func aMemberUsesAPostgreSQLBoardOverHTTPS() throws {
    let forum = try ForumFixture()
    let board = try ServedPostgresBoard(forum)
    defer { board.board.remove() }
    let served = try Served(forum, database: board.server.uri)
    try everyDayCommands(served)
    #expect(served.server.stop() == 0)
  }

  /// An image that is not one is refused before anything is sent: nothing reaches the board.
  @Test func aBadImageIsRefusedBeforeSending() throws {
    let (forum, served) = try Served.onNewBoard()
    let fake = forum.root + "/fake.png"
    try Data("not a picture".utf8).write(to: URL(fileURLWithPath: fake))
    let refused = try served.run(["new", "--title", "x", "--image", fake])
    #expect(refused.status != 0 && refused.stderrLines.count == 1, "\(refused.summary)")
    let list = try served.ok(["--json", "list"])
    #expect((try list.json()["results"] as? [Any])?.isEmpty == true, "\(list.summary)")
  }

  /// A certificate nobody vouches for, and a server that is not there: one line each, exit 1.
  @Test func aRefusedCertificateOrNoServerIsOneLine() throws {
    let (forum, served) = try Served.onNewBoard()
    let untrusted = try served.run(["list"], environment: [:])
    #expect(untrusted.status == 1, "\(untrusted.summary)")
    #expect(untrusted.stderrLines.count == 1, "\(untrusted.summary)")
    #expect(untrusted.stderr.contains("certificate"), "\(untrusted.summary)")
    let port = served.server.port
    #expect(served.server.stop() == 0)
    let down = try forum.run(
      ["list"], environment: ["FORUM_CA_FILE": served.authority.authorityFile],
      database: "https://127.0.0.1:\(port)/")
    #expect(down.status == 1, "\(down.summary)")
    #expect(down.stderrLines.count == 1, "\(down.summary)")
    #expect(down.stderr.contains("127.0.0.1:\(port)"), "\(down.summary)")
  }

  /// `forum --db URL ARGUMENTS…` as alice, each request it makes listed (`METHOD URL STATUS`,
  /// the client's `FORUM_TEST_REQUEST_LOG`).
  func requests(_ served: Served, _ arguments: [String], profile: String = "alice") throws -> (
    RunResult, [String]
  ) {
    let log = served.forum.root + "/requests-\(UUID().uuidString).log"
    let result = try served.run(
      arguments, profile: profile,
      environment: [
        "FORUM_CA_FILE": served.authority.authorityFile, "FORUM_TEST_REQUEST_LOG": log,
      ])
    let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(
      separator: "\n"
    ).map(String.init)
    return (result, lines)
  }

  /// A one-shot asks the server only what the command needs: the board's keys are the
  /// profile's (kept per board, mode 0600, beside its session), and so is the session's
  /// answer (`aOneShotAsksNoSessionCheckOfItsOwn`). `list`: the page with its unread counts
  /// (NCMB's find with the board's `unreadUpTo`), the member's preferences.
  @Test func aOneShotListAsksOnlyForItsPage() throws {
    let (forum, served) = try Served.onNewBoard()
    try served.ok(["new", "--title", "counted", "--description", "x"])
    let (list, asked) = try requests(served, ["list"])
    #expect(list.status == 0 && list.stdout.contains("counted"), "\(list.summary)")
    #expect(asked.count == RemoteBoardTests.listRequests, "\(asked)")
    #expect(!asked.contains { $0.contains("forum/keys") }, "\(asked)")
    let profile = try String(
      contentsOfFile: forum.profilesDirectory + "/alice.json", encoding: .utf8)
    #expect(profile.contains("remoteBoards"), "\(profile)")
    #expect(served.server.stop() == 0)
  }

  /// Requests of a one-shot `forum list` once signed in (`aOneShotListAsksOnlyForItsPage`).
  static let listRequests = 2

  /// A board of more than one page: the page and how many threads there are ("page 1/2") come
  /// in one answer (NCMB's `count=1` beside the page), not a count asked after it.
  @Test func aOneShotListCountsThePagesWithItsPage() throws {
    let (_, served) = try Served.onNewBoard()
    let threads = (1...22).map { "new --title many\($0) --description x" }
    let made = try served.run([], input: Data(threads.map { $0 + "\n" }.joined().utf8))
    #expect(made.status == 0, "\(made.summary)")
    let (list, asked) = try requests(served, ["list"])
    #expect(list.status == 0 && list.stdout.contains("many22"), "\(list.summary)")
    #expect(list.stdout.contains("page 1/2"), "\(list.summary)")
    #expect(asked.count == RemoteBoardTests.listRequests, "\(asked)")
    #expect(!asked.contains { $0.contains("limit=0") }, "no count of its own: \(asked)")
    #expect(served.server.stop() == 0)
  }

  /// Rewrites alice's profile with `change` (kept at mode 0600).
  func editProfile(
    _ forum: ForumFixture, _ change: (inout [String: Any]) -> Void
  ) throws {
    let path = forum.profilesDirectory + "/alice.json"
    var object =
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
      as? [String: Any] ?? [:]
    change(&object)
    try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
  }

  /// A session the server no longer knows is replaced once (a new sign-in with the profile's
  /// secret: the same member) and kept; the command succeeds.
  @Test func aStaleKeptSessionIsReplacedOnce() throws {
    try staleSessionIsReplacedOnce(answerKeptForIt: false)
  }

  /// A session the server no longer knows, in the profile (and, `answerKeptForIt`, the answer
  /// kept for it too): one 401, one new sign-in (the same member), the command succeeds, and
  /// the next one-shot asks as few as ever.
  func staleSessionIsReplacedOnce(answerKeptForIt: Bool) throws {
    let (forum, served) = try Served.onNewBoard()
    try served.ok(["new", "--title", "counted", "--description", "x"])
    let before = try served.handle("alice")
    let stale = "r:stale" + String(repeating: "0", count: 18)
    try editProfile(forum) { profile in
      var sessions = profile["sessions"] as? [String: String] ?? [:]
      var answers = profile["sessionAnswers"] as? [String: [String: Any]] ?? [:]
      for board in sessions.keys {
        sessions[board] = stale
        if answerKeptForIt { answers[board]?["token"] = stale }
      }
      profile["sessions"] = sessions
      profile["sessionAnswers"] = answers
    }
    let (list, asked) = try requests(served, ["list"])
    #expect(list.status == 0 && list.stdout.contains("counted"), "\(list.summary)")
    #expect(asked.filter { $0.hasSuffix(" 401") }.count == 1, "\(asked)")
    #expect(asked.filter { $0.hasPrefix("POST ") && $0.contains("/users ") }.count == 1, "\(asked)")
    #expect(try served.handle("alice") == before)
    let (again, askedAgain) = try requests(served, ["list"])
    #expect(again.status == 0, "\(again.summary)")
    #expect(askedAgain.count == RemoteBoardTests.listRequests, "\(askedAgain)")
    #expect(served.server.stop() == 0)
  }

  /// Keys the owner rotated (`forum keys --rotate`) make the profile's kept ones stale: the
  /// server's `E404005` has them asked for once, the request is sent again, and the new ones
  /// are kept.
  @Test func rotatedKeysAreAskedForOnce() throws {
    let (forum, served) = try Served.onNewBoard()
    try served.ok(["new", "--title", "counted", "--description", "x"])
    try forum.ok(["keys", "--rotate"], profile: nil)
    let (list, asked) = try requests(served, ["list"])
    #expect(list.status == 0, "\(list.summary)")
    #expect(asked.filter { $0.contains("forum/keys") }.count == 1, "\(asked)")
    #expect(asked.filter { $0.hasSuffix(" 404") }.count == 1, "\(asked)")
    let (again, askedAgain) = try requests(served, ["list"])
    #expect(again.status == 0, "\(again.summary)")
    #expect(askedAgain.count == RemoteBoardTests.listRequests, "\(askedAgain)")
    #expect(served.server.stop() == 0)
  }

  /// libcurl (and the TLS library under it) is mapped when an https board is opened, by no
  /// other command: forum's own libForumCurl.so, which brings OpenSSL and zlib and none of the
  /// thirty libraries under the system's libcurl.so.4 (ssh, rtmp, ldap, kerberos, GnuTLS: 5.4 ms
  /// of each remote command). FORUM_LIBCURL=libcurl.so.4 still opens the system's, and works.
  @Test func onlyAnHTTPSBoardMapsLibcurl() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    for arguments in [["--version"], ["list"]] {
      let run = try forum.run(arguments, environment: ["LD_DEBUG": "libs"])
      #expect(run.status == 0, "\(run.summary)")
      for library in ["libcurl", "libForumCurl", "libssl"] {
        #expect(!run.stderr.contains(library), "\(library): \(run.stderr.prefix(2000))")
      }
    }
    let served = try Served(forum)
    try served.ok(["new", "--title", "mapped", "--description", "x"])
    var environment = ["LD_DEBUG": "libs"]
    environment["FORUM_CA_FILE"] = served.authority.authorityFile
    let remote = try served.run(["list"], environment: environment)
    #expect(remote.status == 0 && remote.stdout.contains("mapped"), "\(remote.summary)")
    let opened = remote.stderr.split(separator: "\n").filter { $0.contains("calling init:") }
    #expect(opened.contains { $0.contains("/libForumCurl.so") }, "\(opened)")
    #expect(opened.contains { $0.contains("/libssl.so") }, "\(opened)")
    for library in ["libcurl.so", "librtmp", "libssh2", "libgnutls", "libldap", "libgssapi"] {
      #expect(!opened.contains { $0.contains(library) }, "\(library): \(opened)")
    }
    environment["FORUM_LIBCURL"] = "libcurl.so.4"
    let system = try served.run(["list"], environment: environment)
    #expect(system.status == 0 && system.stdout.contains("mapped"), "\(system.summary)")
    #expect(system.stderr.contains("/libcurl.so.4"), "\(system.stderr.prefix(2000))")
    #expect(!system.stderr.contains("libForumCurl"), "\(system.stderr.prefix(2000))")
    #expect(served.server.stop() == 0)
  }
}

extension RemoteBoardTests {
  /// A proxy named in the environment with a host name that is not ASCII: forum's libcurl has
  /// no libidn2, so the name is not converted, and the proxy is refused in one line (it stopped
  /// the program once, in a stub).
  @Test func aProxyNamedInUnicodeIsOneLine() throws {
    let (_, served) = try Served.onNewBoard()
    try served.ok(["new", "--title", "proxied", "--description", "x"])
    let run = try served.run(
      ["list"],
      environment: [
        "FORUM_CA_FILE": served.authority.authorityFile, "https_proxy": "http://bücher.invalid:1/",
      ])
    #expect(run.status == 1, "\(run.summary)")
    #expect(
      run.stderrLines.count == 1 && run.stderr.hasPrefix("forum: cannot reach the board at"),
      "\(run.summary)")
    #expect(served.server.stop() == 0)
  }
}
