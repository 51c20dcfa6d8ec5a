import Foundation
import HTTPTestSupport
import HostileImages
import PostgresTestCluster
import Testing

/// What `forum serve` prints on its own terminal: its ready line and nothing else, however
/// hostile the names and bodies it is sent or the text the database holds. Never an escape
/// sequence, a C1 control or a bidi override, never a session token or the client key.
@Suite("forum serve: its own terminal")
struct ServeOutputTests {
  /// Terminal controls that must never reach the server's stdout or stderr: C0 controls but
  /// the newline, DEL, C1 controls, bidi embeddings, overrides and isolates.
  static func controls(in text: String) -> [String] {
    text.unicodeScalars.compactMap { scalar -> String? in
      let value = scalar.value
      let bad =
        (value < 0x20 && value != 0x0A) || (0x7F...0x9F).contains(value)
        || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
        || value == 0x200E || value == 0x200F || value == 0x061C
      return bad ? String(format: "U+%04X", value) : nil
    }
  }

  /// Hostile names and bodies: an OSC 52 clipboard write, a colour change, a bidi override,
  /// a C1 CSI, in class names, file names, field names and values, a display name, headers,
  /// malformed JSON and invalid UTF-8. Prints every session token it was given.
  static let hostile =
    SignedClient.prelude + """
      osc = '\\x1b]52;c;aGVsbG8=\\x07'
      nasty = osc + '\\x1b[31mred\\u202egnp.exe\\x9b2J\\u2066'
      tokens = []
      me, token = signup()
      tokens.append(token)
      other, second = signup()
      tokens.append(second)
      png = open(sys.argv[3], 'rb').read()
      status, body, _ = call('POST', 'classes/Todo', {'title': nasty, 'note': nasty}, token)
      assert status == 201, (status, body)
      call('POST', 'classes/' + urllib.parse.quote(nasty, safe=''), {'a': 1}, token)
      call('GET', 'classes/' + urllib.parse.quote(nasty, safe=''), token=token)
      # The board refuses control characters in its own fields; an app's class stores them.
      status, body, _ = call('POST', 'classes/Thread', {'title': nasty, 'description': nasty},
                             token)
      assert status == 400, (status, body)
      call('POST', 'classes/Thread', {'title': 'x' * 300 + osc}, token)
      status, body, _ = call('PUT', 'users/' + me, {'displayName': nasty}, token)
      assert status == 400, (status, body)
      status, body, _ = call('GET', 'classes/Todo', token=token)
      assert body['results'][0]['title'] == nasty, body
      call('GET', 'classes/Todo', token=token, query=where({'title': {'$regex': nasty}}))
      call('GET', 'classes/Todo', token=token, query=where({nasty: {'$in': [nasty]}}))
      call('GET', 'files', token=token, query=where({'fileName': nasty}))
      upload(urllib.parse.quote(nasty, safe=''), png, None, token)
      upload('fine.png', osc.encode() + png, None, token)
      upload('fine.png', png, {nasty: {'read': True}}, token, mime=osc)
      call('GET', 'files/' + urllib.parse.quote(nasty, safe=''), token=token)
      call('POST', 'classes/Todo', raw=b'{"a":"' + osc.encode() + b'\\xff\\xfe', token=token)
      call('POST', 'classes/Todo', raw=osc.encode(), token=token)
      call('GET', 'classes/Todo', token=osc + token)
      call('GET', 'login', query='userName=' + urllib.parse.quote(nasty, safe='')
           + '&password=' + urllib.parse.quote(nasty, safe=''))
      call('GET', 'classes/Todo', token=token, key='wrong' + osc)
      # Raw bytes the SDKs would never send: a target and a header holding escapes.
      import socket
      s = socket.create_connection(('127.0.0.1', port), timeout=30)
      s.sendall(b'GET /2013-09-01/classes/\\x1b]52;c;aGk=\\x07 HTTP/1.1\\r\\nHost: x\\r\\n'
                b'X-NCMB-Apps-Session-Token: ' + token.encode() + b'\\r\\n'
                b'X-Evil: \\x1b[2J\\x9b\\r\\n\\r\\n')
      s.recv(65536)
      s.close()
      call('DELETE', 'users/' + other, token=second)
      call('GET', 'logout', token=token)
      print(json.dumps(tokens))
      """

  private func serveHostile(_ forum: ForumFixture, keys: String, location: String) throws {
    let picture = forum.root + "/picture.png"
    try Data(PNGImages.honest(width: 4, height: 4)).write(to: URL(fileURLWithPath: picture))
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: location)
    let run = try Clients.python(ServeOutputTests.hostile, [String(server.port), keys, picture])
    #expect(run.status == 0, "\(run.summary)")
    let tokens =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String] ?? []
    #expect(tokens.count == 2, "\(run.summary)")
    #expect(server.stop() == 0)
    let printed = server.stdout + server.stderr
    #expect(server.stdout == server.readyLine + "\n", "only the ready line: \(printed)")
    #expect(server.stderr == "", "\(server.stderr)")
    #expect(ServeOutputTests.controls(in: printed) == [], "\(printed.debugDescription)")
    let clientKey =
      ((try? JSONSerialization.jsonObject(with: Data(keys.utf8))) as? [String: String])?[
        "clientKey"] ?? "?"
    #expect(!printed.contains(clientKey), "the client key is never printed")
    for token in tokens { #expect(!printed.contains(token), "a session token is never printed") }
  }

  @Test func hostileRequestsPrintNothingOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    #expect(keys.status == 0, "\(keys.summary)")
    try serveHostile(forum, keys: keys.stdout, location: forum.db)
  }

  @Test func hostileRequestsPrintNothingOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    try serveHostile(forum, keys: served.keys, location: served.server.uri)
  }

  /// A server that cannot start says so in one line, with the hostile text of its location
  /// (a path, a URI, the PostgreSQL client's message naming them) made harmless.
  @Test func startupFailuresNameHostileLocationsHarmlessly() throws {
    let forum = try ForumFixture()
    let osc = "\u{1B}]52;c;aGk=\u{07}\u{1B}[31m\u{202E}"
    let notABoard = forum.root + "/not-a-board.db"
    try Data(("not a board" + osc).utf8).write(to: URL(fileURLWithPath: notABoard))
    for location in [
      forum.root + "/nowhere" + osc + "/board.db", notABoard,
      "postgresql://user\(osc)@/board?host=/nonexistent\(osc)",
    ] {
      let run = try forum.run(
        ["serve", "--listen", "127.0.0.1:0"], profile: nil, database: location)
      #expect(run.status != 0, "\(run.summary)")
      #expect(run.stdout == "" && run.stderrLines.count == 1, "\(run.summary)")
      #expect(
        ServeOutputTests.controls(in: run.stdout + run.stderr) == [],
        "\(run.stderr.debugDescription)")
    }
  }

  /// Keys edited by hand in the board's file (whoever holds it may): the ready line, `forum
  /// keys` and its JSON show them harmlessly.
  @Test func hostileKeysInTheBoardAreShownHarmlessly() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    try forum.ok(["keys"], profile: nil)
    let edited = try Clients.run(
      "/usr/bin/sqlite3",
      [
        forum.db,
        "UPDATE meta SET value = char(27) || ']52;c;aGVsbG8=' || char(7) || char(27) || '[31m'"
          + " || char(8238) || char(155) || 'k' WHERE key IN ('ncmbApplicationKey', 'ncmbClientKey');"
          + " SELECT changes();",
      ])
    #expect(edited.stdout == "2\n", "\(edited.summary)")
    for arguments in [["keys"], ["--json", "keys"]] {
      let run = try forum.run(arguments, profile: nil)
      #expect(run.status == 0, "\(run.summary)")
      #expect(
        ServeOutputTests.controls(in: run.stdout + run.stderr) == [],
        "\(arguments): \(run.stdout.debugDescription)")
    }
    for global in [[], ["--json"]] {
      let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], global: global)
      #expect(server.stop() == 0)
      let printed = server.stdout + server.stderr
      #expect(server.readyLine.contains("52;c;aGVsbG8="), "\(printed.debugDescription)")
      #expect(ServeOutputTests.controls(in: printed) == [], "\(printed.debugDescription)")
    }
  }
}
