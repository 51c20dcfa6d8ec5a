import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Testing

/// A post an app makes through `forum serve` is announced at a person's live prompt, as one made
/// at another terminal is (issue 18): a comment in the thread they are in, a new thread.
@Suite(
  "live prompt announces app posts (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct ServeLiveTerminalTests {
  /// An app, by signed HTTP of its own: signs up, comments on thread `argv[3]`, posts a thread.
  static let app = """
    import base64, datetime, hashlib, hmac, http.client, json, sys, uuid
    port, keys, thread = int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
    def call(method, path, body, token=None):
        stamp = datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'
        text = '\\n'.join([method, '127.0.0.1:%d' % port, path,
            'SignatureMethod=HmacSHA256&SignatureVersion=2&X-NCMB-Application-Key=%s'
            '&X-NCMB-Timestamp=%s' % (keys['applicationKey'], stamp)])
        signature = base64.b64encode(hmac.new(keys['clientKey'].encode(), text.encode(),
                                              hashlib.sha256).digest()).decode()
        h = {'X-NCMB-Application-Key': keys['applicationKey'], 'X-NCMB-Timestamp': stamp,
             'X-NCMB-Signature': signature, 'Content-Type': 'application/json'}
        if token:
            h['X-NCMB-Apps-Session-Token'] = token
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
        c.request(method, path, json.dumps(body), h)
        r = c.getresponse()
        return r.status, json.loads(r.read() or b'{}')
    status, user = call('POST', '/2013-09-01/users',
                        {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
    assert status == 201, (status, user)
    pointer = {'__type': 'Pointer', 'className': 'Thread', 'objectId': thread}
    status, body = call('POST', '/2013-09-01/classes/Comment',
                        {'text': 'hello from the app', 'thread': pointer}, user['sessionToken'])
    assert status == 201, (status, body)
    status, body = call('POST', '/2013-09-01/classes/Thread',
                        {'title': 'Posted by the app', 'description': 'over HTTP'},
                        user['sessionToken'])
    assert status == 201, (status, body)
    print('posted')
    """

  enum Engine: String, CaseIterable, CustomStringConvertible {
    case sqlite, postgresql
    var description: String { rawValue }
  }

  @Test(arguments: Engine.allCases)
  func anAppsCommentAndThreadAreAnnounced(engine: Engine) throws {
    let forum = try ForumFixture()
    // Where the person, the server and the owner connect.
    var person = forum.db
    var server = forum.db
    var owner = forum.db
    var board: PostgresTestBoard?
    var serverRole = ""
    defer { board?.remove() }
    if engine == .postgresql {
      let made = try PostgresTestCluster.shared().board(members: ["alice"])
      board = made
      owner = made.owner.uri
      person = made["alice"].uri
      let role = try made.cluster.role("server", database: made.database)
      server = role.uri
      serverRole = role.name
    }
    let initialized = try forum.run(["init"], profile: nil, database: owner)
    #expect(initialized.status == 0, "\(initialized.summary)")
    if let board {
      try board.cluster.admin("GRANT forum_member TO \(board["alice"].name)")
      try board.cluster.admin("GRANT forum_member, forum_server TO \(serverRole)")
    }
    let made = try forum.run(["--json", "new", "--title", "watched"], database: person)
    #expect(made.status == 0, "\(made.summary)")
    let thread = try #require(try made.json()["objectId"] as? String, "\(made.summary)")
    let keys = try forum.run(["--json", "keys"], profile: nil, database: owner)
    #expect(keys.status == 0, "\(keys.summary)")
    let serving = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: server)
    defer { _ = serving.stop(SIGTERM) }

    let tmux = try TmuxSession(
      forum: forum, profile: "alice", arguments: ["--no-pager"], database: person)
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")

    let run = try Clients.python(
      ServeLiveTerminalTests.app, [String(serving.port), keys.stdout, thread])
    #expect(run.status == 0 && run.stdout == "posted\n", "\(run.summary)")
    let screen = try tmux.wait("the app's posts") { lines in
      lines.contains { $0.trimmingCharacters(in: .whitespaces) == "hello from the app" }
        && lines.contains { $0.contains("New thread #2") && $0.contains("Posted by the app") }
        && lines.last == "forum #1>"
    }
    #expect(
      screen.filter { $0.trimmingCharacters(in: .whitespaces) == "hello from the app" }.count
        == 1, "said once: \(screen)")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }
}
