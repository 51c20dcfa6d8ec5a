import Foundation
import HTTPTestSupport
import Spawning
import Testing

@testable import Datastore
@testable import Forum

/// Refusals over https read as on a local board, in English and Japanese; what runs only where
/// the board is says so in one line.
extension RemoteBoardTests {
  /// Each refused action gives the same line (and exit status) through `forum serve` as on the
  /// file itself, in both languages: the reason crosses the wire as the catalogue's case, not
  /// as English words. Bob deletes, edits and pins Alice's thread (refused as the board's rules
  /// say, before anything is sent), then comments once Alice (the owner) banned him: refused by
  /// the server's engine.
  @Test func aRefusalReadsAsOnALocalBoard() throws {
    let (forum, served) = try Served.onNewBoard()
    // The first member to sign in owns the board.
    try served.ok(["new", "--title", "Alice's thread", "--description", "hers"])
    try served.ok(["comment", "1", "bob was here"], profile: "bob")
    for arguments in [
      ["delete", "1", "--yes"], ["edit", "1", "--title", "Bob's now"], ["pin", "1"],
    ] {
      try Self.sameRefusal(arguments, forum, served)
    }
    try served.ok(["mod", "ban-key", try served.handle("bob")])
    try Self.sameRefusal(["comment", "1", "may I?"], forum, served)
    #expect(served.server.stop() == 0)
  }

  /// Bob's `arguments` are refused in one line, the same line and exit status through `forum
  /// serve` as on the file itself, in English and Japanese.
  static func sameRefusal(_ arguments: [String], _ forum: ForumFixture, _ served: Served) throws {
    for lang in ["C", "ja_JP.UTF-8"] {
      let local = try forum.run(arguments, profile: "bob", lang: lang)
      let remote = try served.run(arguments, profile: "bob", lang: lang)
      #expect(local.status != 0 && local.stderrLines.count == 1, "\(local.summary)")
      #expect(remote.stderrLines == local.stderrLines, "\(arguments) \(lang): \(remote.summary)")
      #expect(remote.status == local.status, "\(arguments) \(lang): \(remote.summary)")
    }
  }

  /// The owner's tools belong on the server's host: over https each is one line that says so,
  /// in the reader's language, exit 1, and touches nothing here (no file, no local message).
  @Test func theOwnersToolsSayTheyRunOnTheServersHost() throws {
    let (forum, served) = try Served.onNewBoard()
    let server = "127.0.0.1:\(served.server.port)"
    let tools: [[String]] = [
      ["init"], ["keys"], ["index", "add", "Thread", "title"],
      ["import", "ncmb", forum.root + "/no-such-export"],
    ]
    for arguments in tools {
      let english = try served.run(arguments)
      #expect(english.status == 1, "\(arguments): \(english.summary)")
      #expect(
        english.stderrLines == [
          "forum: forum \(arguments[0]) runs on the board's host (\(server)), "
            + "where forum serve holds it, not over https"
        ], "\(arguments): \(english.summary)")
      let japanese = try served.run(arguments, lang: "ja_JP.UTF-8")
      #expect(japanese.status == 1, "\(arguments): \(japanese.summary)")
      #expect(
        japanese.stderrLines == [
          "forum: forum \(arguments[0]) はボードのホスト (\(server)) で実行します"
            + " (forum serve が動いているところ)。https 越しにはできません。"
        ], "\(arguments): \(japanese.summary)")
    }
    #expect(served.server.stop() == 0)
  }

  /// `forum init` on a SQLite board says its schema is ready, with no PostgreSQL advice.
  @Test func initOnAFileGivesNoPostgreSQLAdvice() throws {
    let forum = try ForumFixture()
    for lang in ["C", "ja_JP.UTF-8"] {
      let made = try forum.run(["init"], profile: nil, lang: lang)
      #expect(made.status == 0, "\(made.summary)")
      #expect(!made.stdout.contains("CREATE ROLE"), "\(made.summary)")
      #expect(made.stdout.contains(forum.db), "\(made.summary)")
    }
  }
}

/// A TLS proxy in front of a `forum serve` that writes each request's method and path (no query)
/// to a file: which calls a command makes, and how many.
final class CountingProxy {
  static let script = #"""
    import socket, ssl, sys, threading
    upstream_port, cert, key, ca, log = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=ca)
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    lock = threading.Lock()

    def read_request(connection, data):
        while b'\r\n\r\n' not in data:
            more = connection.recv(65536)
            if not more: return None, b''
            data += more
        head, rest = data.split(b'\r\n\r\n', 1)
        length = 0
        for line in head.split(b'\r\n')[1:]:
            name, _, value = line.partition(b':')
            if name.strip().lower() == b'content-length': length = int(value)
        while len(rest) < length:
            more = connection.recv(65536)
            if not more: return None, b''
            rest += more
        return head, rest[:length], rest[length:]

    def serve(raw):
        try:
            connection = server.wrap_socket(raw, server_side=True)
            data = b''
            while True:
                got = read_request(connection, data)
                if got[0] is None: return
                head, body, data = got
                lines = head.split(b'\r\n')
                method, target = lines[0].split(b' ')[:2]
                with lock:
                    with open(log, 'a') as out:
                        out.write(method.decode() + ' ' + target.split(b'?')[0].decode() + '\n')
                kept = [l for l in lines[1:] if not l.lower().startswith(b'connection:')]
                outgoing = b'\r\n'.join([lines[0]] + kept + [b'Connection: close']) + b'\r\n\r\n' + body
                up = client.wrap_socket(socket.create_connection(('127.0.0.1', upstream_port)),
                                        server_hostname='127.0.0.1')
                up.sendall(outgoing)
                answer = b''
                while True:
                    more = up.recv(65536)
                    if not more: break
                    answer += more
                up.close()
                connection.sendall(answer)
                return
        except Exception:
            pass
        finally:
            raw.close()

    while True:
        raw, _ = listener.accept()
        threading.Thread(target=serve, args=(raw,), daemon=True).start()
    """#

  let process: ChildProcess
  let port: Int
  let log: String

  init(_ served: RemoteBoardTests.Served) throws {
    log = served.forum.root + "/requests.log"
    (process, port) = try RemoteHostileServerTests.python(
      CountingProxy.script, at: served.forum.root + "/counting-proxy.py",
      [
        String(served.server.port), served.authority.certificateFile,
        served.authority.keyFile, served.authority.authorityFile, log,
      ])
  }

  /// The requests made since the last call, as `METHOD /path`.
  func requests() throws -> [String] {
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    try? FileManager.default.removeItem(atPath: log)
    return text.split(separator: "\n").map(String.init)
  }

  func stop() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}

extension RemoteBoardTests {
  /// Objects are found, counted and read through NCMB's own calls (`GET classes/C`), files
  /// searched through `GET files`; no command makes more requests than before the move
  /// (list 6, show 7, comment 4 on main before it, measured through this proxy).
  @Test func objectsGoThroughNCMBsOwnCalls() throws {
    let (forum, served) = try Served.onNewBoard()
    try served.ok(["new", "--title", "Counted", "--description", "one"])
    try served.ok(["comment", "1", "warm up"], profile: "bob")
    let proxy = try CountingProxy(served)
    defer { proxy.stop() }
    let url = "https://127.0.0.1:\(proxy.port)/"
    func counted(_ arguments: [String], profile: String = "bob") throws -> [String] {
      _ = try proxy.requests()
      let run = try forum.run(
        arguments, profile: profile,
        environment: ["FORUM_CA_FILE": served.authority.authorityFile], database: url)
      #expect(run.status == 0, "\(arguments): \(run.summary)")
      return try proxy.requests()
    }
    let list = try counted(["list"])
    let show = try counted(["show", "1"])
    let comment = try counted(["comment", "1", "counted"])
    let bodies = ["list": list, "show": show, "comment": comment]
    for (name, requests) in bodies {
      #expect(
        !requests.contains {
          $0.hasSuffix("/forum/find") || $0.hasSuffix("/forum/count")
            || $0.hasSuffix("/forum/get")
        }, "\(name): \(requests)")
    }
    #expect(list.contains("GET /2013-09-01/classes/Thread"), "\(list)")
    #expect(show.contains("GET /2013-09-01/classes/Comment"), "\(show)")
    #expect(list.count <= 6 && show.count <= 7 && comment.count <= 4, "\(bodies)")
    #expect(served.server.stop() == 0)
  }
}

extension RemoteBoardTests {
  /// The board's endpoints NCMB has a call for, which no client asks any more (the server no
  /// longer has them).
  static let replacedEndpoints = ["insert", "update", "delete", "putFile", "fileInfo"].map {
    "/2013-09-01/forum/" + $0
  }

  /// Every write of a command goes through NCMB's own calls (`POST`/`PUT`/`DELETE classes`,
  /// `users`, `files`) or is one `forum/perform`: a thread with its picture, a comment, an
  /// edit, a mute, a message (and its conversation), a new name, deletions. None asks an
  /// endpoint NCMB has a call for, and none asks more than on main before the move (counted
  /// through this proxy: each command's count on main is beside it).
  @Test func everyWriteGoesThroughNCMBOrPerform() throws {
    let (forum, served) = try Served.onNewBoard()
    try served.ok(["new", "--title", "Warm", "--description", "up"])
    try served.ok(["comment", "1", "warm up"], profile: "bob")
    let bob = try served.handle("bob")
    let image = try RemoteBoardTests.png(in: forum.root)
    let proxy = try CountingProxy(served)
    defer { proxy.stop() }
    let url = "https://127.0.0.1:\(proxy.port)/"
    let perform = ["POST /2013-09-01/forum/perform"]
    let commands: [(profile: String, arguments: [String], onMain: Int, writes: [String])] = [
      (
        "alice", ["new", "--title", "Pictured", "--description", "1", "--image", image], 2, perform
      ),
      ("bob", ["comment", "2", "a comment"], 2, perform),
      ("alice", ["edit", "2", "--title", "Pictured, edited"], 3, perform),
      ("bob", ["mute", "1"], 3, perform),
      (
        "alice", ["dm", bob, "hello"], 6,
        ["POST /2013-09-01/classes/Conversation", "POST /2013-09-01/classes/Message"]
      ),
      ("alice", ["dm", bob, "again"], 5, ["POST /2013-09-01/classes/Message"]),
      ("alice", ["name", "Alice A"], 2, ["PUT /2013-09-01/users/"]),
      ("bob", ["delete", "2/1", "--yes"], 4, perform),
      ("alice", ["delete", "2", "--yes"], 4, perform),
    ]
    func run(_ arguments: [String], _ profile: String) throws -> [String] {
      _ = try proxy.requests()
      let run = try forum.run(
        arguments, profile: profile,
        environment: ["FORUM_CA_FILE": served.authority.authorityFile], database: url)
      #expect(run.status == 0, "\(arguments): \(run.summary)")
      return try proxy.requests()
    }
    // The profile keeps keys per board URL: the proxy's are asked for once.
    for profile in ["alice", "bob"] { _ = try run(["whoami"], profile) }
    for (profile, arguments, onMain, writes) in commands {
      let requests = try run(arguments, profile)
      for write in writes {
        #expect(requests.contains { $0.hasPrefix(write) }, "\(arguments): \(requests)")
      }
      #expect(
        !requests.contains { request in
          RemoteBoardTests.replacedEndpoints.contains { request.hasSuffix($0) }
        }, "\(arguments): \(requests)")
      #expect(requests.count <= onMain, "\(arguments): \(requests)")
    }
    #expect(served.server.stop() == 0)
  }
}
