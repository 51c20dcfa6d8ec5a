import Foundation
import HTTPTestSupport
import Testing

/// Issue 28: a direct message an app writes through `forum serve` keeps the board's message
/// rules (`PostRules.message`), as one typed at the prompt does: what the server refuses never
/// reaches the partner's `forum dm`.
@Suite("forum serve: direct messages keep the board's rules")
struct ServeMessageRulesTests {
  @Test func anAppsMessageKeepsTheRules() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let bob = try forum.ok(["--json", "whoami"], profile: "bob").json()
    let bobId = try #require(bob["objectId"] as? String)
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    let script =
      SignedClient.prelude + """
        bob = sys.argv[3]
        me, token = signup()
        status, user, _ = call('GET', 'users/' + me, token=token)
        acl = {me: {'read': True, 'write': True}, bob: {'read': True}}
        status, conversation, _ = call('POST', 'classes/Conversation', {'partner': {
            '__type': 'Pointer', 'className': 'user', 'objectId': bob}, 'acl': acl}, token)
        assert status == 201, (status, conversation)
        pointer = {'__type': 'Pointer', 'className': 'Conversation',
                   'objectId': conversation['objectId']}
        def send(text):
            body = {'conversation': pointer, 'acl': acl}
            if text is not None:
                body['text'] = text
            status, answer, _ = call('POST', 'classes/Message', body, token)
            return [status, (answer or {}).get('code'), (answer or {}).get('error')]
        answers = {'long': send('x' * 900000), 'marks': send('a' + '\\u0301' * 5000),
                   'empty': send(''), 'missing': send(None), 'number': send(42),
                   'escape': send('hi \\x1b[2J\\x07 \\u0085 there')}
        status, good, _ = call('POST', 'classes/Message', {'conversation': pointer, 'acl': acl,
                                                           'text': 'hello bob'}, token)
        assert status == 201, (status, good)
        status, edited, _ = call('PUT', 'classes/Message/' + good['objectId'],
                                 {'text': 'y' * 20000}, token)
        answers['edit'] = [status, (edited or {}).get('code'), (edited or {}).get('error')]
        print(json.dumps({'answers': answers, 'handle': user['userName']}))
        """
    let run = try Clients.python(script, [String(server.port), keys, bobId])
    #expect(run.status == 0, "\(run.summary)")
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    let answers = seen["answers"] as? [String: [Any]] ?? [:]
    for (name, expected) in [
      ("long", "E400002"), ("marks", "E400002"), ("number", "E400002"), ("escape", "E400002"),
      ("edit", "E400002"), ("empty", "E400003"), ("missing", "E400003"),
    ] {
      let answer = answers[name] ?? []
      #expect(answer.first as? Int == 400, "\(name): \(answer)")
      #expect(answer.dropFirst().first as? String == expected, "\(name): \(answer)")
      #expect((answer.last as? String)?.hasPrefix("text ") == true, "\(name): \(answer)")
    }
    #expect(server.stop() == 0)
    let handle = try #require(seen["handle"] as? String)
    let dm = try forum.ok(["dm", "@" + handle], profile: "bob").stdout
    #expect(dm.contains("hello bob"), "\(dm)")
    #expect(dm.split(separator: "\n").count < 20, "\(dm.prefix(2000))")
    #expect(!dm.contains("xxxxxxxxxx"), "\(dm.prefix(2000))")
  }
}
