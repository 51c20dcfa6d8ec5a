import Foundation
import HTTPTestSupport
import Testing

/// A ban is the board's on the network door too: an app user the owner bans (by handle, at the
/// prompt) is refused every write through `forum serve` (`E403001`), still reads, and writes
/// again once allowed back. The engine refuses, so no server option is involved.
@Suite("bans through forum serve")
struct ServeBanTests {
  @Test func aBannedAppUserWritesNothingOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    try forum.ok(["list"], profile: "owner")  // the first user owns the board
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    try banned(server, keys: keys) { arguments in
      try forum.run(arguments, profile: "owner")
    }
  }

  @Test func aBannedAppUserWritesNothingOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try ServeProcess(
      forum, ["--listen", "127.0.0.1:0"], database: served.server.uri)
    try banned(server, keys: served.keys) { arguments in
      try forum.run(arguments, profile: "owner", database: served.board.owner.uri)
    }
  }

  /// Signs an app user up and posts; the owner bans it; its writes are refused, its reads not.
  private func banned(
    _ server: ServeProcess, keys: String, owner: ([String]) throws -> RunResult
  ) throws {
    func client(_ script: String, _ extra: [String]) throws -> [String: Any] {
      let run = try Clients.python(
        SignedClient.prelude + script, [String(server.port), keys] + extra, timeout: 300)
      #expect(run.status == 0, "\(run.summary)")
      return (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any]
        ?? [:]
    }
    let first = try client(
      """
      me, token = signup()
      status, body, _ = call('POST', 'classes/Note', {'text': 'before'}, token)
      assert status == 201, (status, body)
      status, user, _ = call('GET', 'users/' + me, token=token)
      print(json.dumps({'token': token, 'userName': user['userName'], 'note': body['objectId']}))
      """, [])
    let token = try #require(first["token"] as? String)
    let name = try #require(first["userName"] as? String)
    let note = try #require(first["note"] as? String)
    let ban = try owner(["mod", "ban-key", "@" + name])
    #expect(ban.status == 0, "\(ban.summary)")
    let script = """
      token, note = sys.argv[3], sys.argv[4]
      def code(answer):
          return [answer[0], (answer[1] or {}).get('code')]
      print(json.dumps({
          'post': code(call('POST', 'classes/Note', {'text': 'banned'}, token)),
          'put': code(call('PUT', 'classes/Note/' + note, {'text': 'changed'}, token)),
          'read': code(call('GET', 'classes/Note/' + note, token=token))[0],
      }))
      """
    let seen = try client(script, [token, note])
    #expect(seen["post"] as? [AnyHashable] == [403, "E403001"], "\(seen)")
    #expect(seen["put"] as? [AnyHashable] == [403, "E403001"], "\(seen)")
    #expect(seen["read"] as? Int == 200, "\(seen)")
    #expect(try owner(["mod", "unban-key", "@" + name]).status == 0)
    let again = try client(script, [token, note])
    #expect((again["post"] as? [Any])?.first as? Int == 201, "\(again)")
    #expect(server.stop() == 0)
  }
}
