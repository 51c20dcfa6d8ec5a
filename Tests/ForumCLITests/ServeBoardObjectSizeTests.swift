import Foundation
import HTTPTestSupport
import Testing

/// Issue 28 H5: the board's own classes keep small objects whoever writes them, so that no app
/// user can push a page of `GET classes/Thread` past the server's answer budget (refused for
/// everyone: a lockout).
@Suite("Board objects stay small")
struct ServeBoardObjectSizeTests {
  @Test func bigThreadsAreRefusedAndTheListingStillAnswers() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    try refusesTheLockout(server, keys: try forum.ok(["keys", "--json"], profile: nil).stdout)
  }

  @Test func bigThreadsAreRefusedAndTheListingStillAnswersOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try ServeProcess(
      forum, ["--listen", "127.0.0.1:0"], database: served.server.uri)
    try refusesTheLockout(server, keys: served.keys)
  }

  /// An app user tries 16 threads of 20,000 values, a big comment, and a thread grown by
  /// updates (all refused); a full page of threads just under the limit still lists.
  private func refusesTheLockout(_ server: ServeProcess, keys: String) throws {
    let run = try Clients.python(
      SignedClient.prelude + """
        def code(answer):
            status, body, _ = answer
            return [status, (body or {}).get('code'), (body or {}).get('error', '')]
        seen = {}
        me, token = signup()
        # 20,000 values a write is the datastore's cap: 13 such threads cost past 16 MiB to read.
        seen['big'] = [code(call('POST', 'classes/Thread',
                                 {'title': 'bomb %d' % i, 'junk': list(range(19900))}, token))
                       for i in range(16)]
        other, other_token = signup()
        status, body, _ = call('GET', 'classes/Thread', token=other_token)
        seen['lockout'] = [status, (body or {}).get('error')]
        status, thread, _ = call('POST', 'classes/Thread', {'title': 'mine'}, token)
        assert status == 201, (status, thread)
        seen['comment'] = code(call('POST', 'classes/Comment',
                                    {'text': 'hi', 'junk': list(range(19900)),
                                     'thread': {'__type': 'Pointer', 'className': 'Thread',
                                                'objectId': thread['objectId']}}, token))
        # Growing one thread by updates is refused once the whole would pass the limit.
        path = 'classes/Thread/' + thread['objectId']
        seen['grow1'] = code(call('PUT', path, {'a': 'x' * 100000}, token))
        seen['grow2'] = code(call('PUT', path, {'b': 'x' * 100000}, token))
        seen['shrink'] = code(call('PUT', path, {'a': {'__op': 'Delete'}}, token))
        # The longest descriptions the board's rules allow are far below the limit.
        seen['long'] = [code(call('POST', 'classes/Thread',
                                  {'title': 'long', 'description': text}, token))[0]
                        for text in ['\\U0001F600' * 10000, '"\\n' * 5000, '\\u2066' * 10000]]
        # A full page of objects just under the limit still answers.
        for i in range(100):
            status, body, _ = call('POST', 'classes/Thread',
                                   {'title': 'padded %d' % i, 'pad': 'y' * 120000}, token)
            assert status == 201, (i, status, body)
        status, body, _ = call('GET', 'classes/Thread', token=other_token)
        seen['list'] = [status, len((body or {}).get('results', [])), (body or {}).get('error')]
        print(json.dumps(seen))
        """, [String(server.port), keys], timeout: 600)
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop() == 0)
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    let big = seen["big"] as? [[Any]] ?? []
    #expect(big.count == 16, "\(run.stdout)")
    for answer in big {
      #expect(answer.first as? Int == 400 && answer[1] as? String == "E400002", "\(answer)")
      #expect((answer.last as? String)?.hasPrefix("object") == true, "\(answer)")
    }
    let comment = seen["comment"] as? [Any] ?? []
    #expect(comment.first as? Int == 400 && comment[1] as? String == "E400002", "\(comment)")
    #expect((seen["grow1"] as? [Any])?.first as? Int == 200, "\(run.stdout)")
    let grow = seen["grow2"] as? [Any] ?? []
    #expect(grow.first as? Int == 400 && grow[1] as? String == "E400002", "\(grow)")
    #expect((seen["shrink"] as? [Any])?.first as? Int == 200, "\(run.stdout)")
    #expect(seen["long"] as? [Int] == [201, 201, 201], "\(run.stdout)")
    #expect((seen["lockout"] as? [Any])?.first as? Int == 200, "\(run.stdout)")
    let list = seen["list"] as? [Any] ?? []
    #expect(list.first as? Int == 200 && list[1] as? Int == 100, "\(list)")
  }
}
