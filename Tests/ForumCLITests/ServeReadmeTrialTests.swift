import Foundation
import HTTPTestSupport
import HostileImages
import Testing

/// README's "The board as an app's backend" followed literally on SQLite, through the built
/// binary: no `forum init` (the section never asks for one), the server's own words.
@Suite("forum serve: the README followed literally")
struct ServeReadmeTrialTests {
  /// An app's thread and comment, then what the app and the terminal see of them. Prints one
  /// JSON object.
  static let appPosts =
    SignedClient.prelude + """
      me, token = signup()
      other, second = signup()
      status, created, _ = call('POST', 'classes/Thread', {'title': 'From the app',
                                                         'description': 'first'}, token)
      assert status == 201, (status, created)
      status, thread, _ = call('GET', 'classes/Thread/' + created['objectId'], token=token)
      pointer = {'__type': 'Pointer', 'className': 'Thread', 'objectId': created['objectId']}
      status, comment, _ = call('POST', 'classes/Comment', {'text': 'hi', 'thread': pointer},
                                second)
      assert status == 201, (status, comment)
      refused, _, _ = call('DELETE', 'classes/Comment/' + comment['objectId'], token=token)
      forged, answer, _ = call('POST', 'classes/Thread', {'title': 'forged', 'number': 99}, token)
      print(json.dumps({'me': me, 'thread': thread, 'refusedDelete': refused,
                        'forgedNumber': forged}))
      """

  /// `forum serve --db FILE` on a file nobody ran `forum init` on (as the README's example
  /// does), or one `forum keys` made: the board's rules hold for apps from the first request
  /// (a number, the author, the author-only ACL, managed fields refused), and the terminal
  /// lists the app's thread with its number and author.
  @Test(arguments: [false, true])
  func aFreshBoardFileGetsTheBoardsRules(keysFirst: Bool) throws {
    let forum = try ForumFixture()
    if keysFirst { try forum.ok(["keys"], profile: nil) }
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    let run = try Clients.python(ServeReadmeTrialTests.appPosts, [String(server.port), keys])
    #expect(run.status == 0, "\(run.summary)")
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    let thread = seen["thread"] as? [String: Any] ?? [:]
    let me = seen["me"] as? String ?? "?"
    #expect(thread["number"] as? Int == 1, "\(thread)")
    #expect((thread["user"] as? [String: Any])?["objectId"] as? String == me, "\(thread)")
    let acl = thread["acl"] as? [String: [String: Bool]] ?? [:]
    #expect(acl["*"] == ["read": true] && acl[me] == ["read": true, "write": true], "\(acl)")
    #expect(seen["refusedDelete"] as? Int == 403, "\(seen)")
    #expect(seen["forgedNumber"] as? Int == 400, "\(seen)")
    let list = try forum.ok(["list"], profile: "ken").stdout
    let line = list.split(separator: "\n").first { $0.contains("From the app") } ?? ""
    #expect(line.hasPrefix("#1 "), "\(list)")
    #expect(!line.contains("(deleted user)"), "\(list)")
    #expect(server.stop() == 0)
  }

  /// `forum serve` on a board an earlier forum made (`Fixtures/boards/main-05fff26`, from
  /// before pins): the server upgrades its rules as the prompt's first open would, so an app
  /// cannot set the pin, a field the older rules did not manage, on its own thread.
  @Test func aBoardWithOlderRulesIsServedUnderTodays() throws {
    let forum = try ForumFixture()
    try FileManager.default.copyItem(
      atPath: OldBoardTests.fixture + "/board.db", toPath: forum.db)
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    let script =
      SignedClient.prelude + """
        me, token = signup()
        status, answer, _ = call('POST', 'classes/Thread', {'title': 'pin me',
                                 'pinnedDate': {'__type': 'Date',
                                                'iso': '2030-01-01T00:00:00.000Z'}}, token)
        print(json.dumps({'status': status, 'answer': answer}))
        """
    let run = try Clients.python(script, [String(server.port), keys])
    #expect(run.status == 0, "\(run.summary)")
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    #expect(seen["status"] as? Int == 400, "\(seen)")
    #expect((seen["answer"] as? [String: Any])?["code"] as? String == "E400002", "\(seen)")
    #expect(server.stop() == 0)
    let list = try forum.ok(["list"], profile: "ken").stdout
    #expect(!list.contains("pin me") && !list.contains("📌"), "\(list)")
  }

  /// A certificate given with another pair's key (or the two swapped): the one line says what
  /// the TLS library found, not libmicrohttpd's complaint about the order of its own options.
  @Test func aMismatchedKeyIsSaidPlainly() throws {
    let forum = try ForumFixture()
    let first = try ThrowawayCertificate(in: forum.root)
    let other = try ThrowawayCertificate(in: forum.root + "/home")
    for (certificate, key) in [
      (first.certificateFile, other.keyFile), (first.keyFile, first.certificateFile),
    ] {
      let run = try forum.run(
        ["serve", "--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key", key],
        profile: nil)
      #expect(run.status == 1, "\(run.summary)")
      #expect(run.stderrLines.count == 1, "\(run.summary)")
      #expect(
        run.stderr.hasPrefix("forum: the TLS certificate and key cannot be used: "),
        "\(run.summary)")
      #expect(!run.stderr.contains("MHD_OPTION"), "\(run.summary)")
    }
  }

  /// README's "Not supported" parts, as an app calls them: each is NCMB's E404001 naming the
  /// feature, not a bare "No data available." an app takes for a missing object; password reset
  /// and sign-up by mail say they need a mail server.
  @Test func whatIsNotSupportedSaysSo() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    let script =
      SignedClient.prelude + """
        me, token = signup()
        answers = {}
        for method, path in [('POST', 'push'), ('GET', 'push'), ('POST', 'installations'),
                             ('POST', 'requestPasswordReset'),
                             ('POST', 'requestMailAddressUserEntry')]:
            status, body, _ = call(method, path, {}, token)
            answers[method + ' ' + path] = [status, body.get('code'), body.get('error')]
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
        c.request('POST', '/2015-09-01/script/hello.js', '{}', signed('POST', '/2015-09-01/script/hello.js'))
        r = c.getresponse()
        body = json.loads(r.read())
        answers['script'] = [r.status, body.get('code'), body.get('error')]
        near = {'place': {'$nearSphere': {'__type': 'GeoPoint', 'latitude': 1, 'longitude': 2}}}
        status, body, _ = call('GET', 'classes/Todo', token=token, query=where(near))
        answers['geo'] = [status, body.get('code'), body.get('error')]
        status, body, _ = call('POST', 'users', {'userName': 'a', 'password': 'b'})
        answers['password'] = [status, body.get('code'), body.get('error')]
        print(json.dumps(answers))
        """
    let run = try Clients.python(script, [String(server.port), keys])
    #expect(run.status == 0, "\(run.summary)")
    let answers =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: [Any]] ?? [:]
    let features = [
      "POST push": "push", "GET push": "push", "POST installations": "installations",
      "script": "scripts",
    ]
    for (call, feature) in features {
      let answer = answers[call] ?? []
      #expect(answer.first as? Int == 404 && answer.dropFirst().first as? String == "E404001")
      #expect(
        answer.last as? String == "No data available. (\(feature) is not supported by this server)",
        "\(call): \(answer)")
    }
    // Mail: the board has no mail server, and says so (issue 34).
    for (call, feature) in [
      "POST requestPasswordReset": "password reset by mail",
      "POST requestMailAddressUserEntry": "sign-up by mail address",
    ] {
      let answer = answers[call] ?? []
      #expect(answer.first as? Int == 404 && answer.dropFirst().first as? String == "E404001")
      #expect(
        answer.last as? String
          == "No data available. (\(feature) needs a mail server, which this board does not have)",
        "\(call): \(answer)")
    }
    // Geo queries are served (issue 34): nothing has a place here.
    #expect(answers["geo"]?.first as? Int == 200, "\(answers)")
    // Password accounts are served (issue 34: `ServeAccountsTests`).
    #expect(answers["password"]?.first as? Int == 201, "\(answers)")
    #expect(server.stop() == 0)
  }

  /// A picture uploaded without an ACL (the JS SDK's `ncmb.File.upload(name, data)`), then
  /// attached to its uploader's thread: everyone reads it, only the uploader writes it, as a
  /// thread sent without an ACL. With NCMB's public write anyone took it over and deleted it
  /// from under the thread.
  @Test func aPictureSentWithoutAnACLIsTheUploadersToChange() throws {
    let forum = try ForumFixture()
    let picture = forum.root + "/picture.png"
    try Data(PNGImages.honest(width: 4, height: 4)).write(to: URL(fileURLWithPath: picture))
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    let script =
      SignedClient.prelude + """
        alice, at = signup()
        bob, bt = signup()
        png = open(sys.argv[3], 'rb').read()
        status, body, _ = upload('P.png', png, None, at)
        assert status == 201, (status, body)
        status, body, _ = call('POST', 'classes/Thread', {'title': 'pic', 'fileName': 'P.png'}, at)
        assert status == 201, (status, body)
        listed = call('GET', 'files', token=bt, query=where({'fileName': 'P.png'}))[1]['results']
        taken = call('PUT', 'files/P.png', {'acl': {bob: {'read': True, 'write': True}}}, bt)[0]
        deleted = call('DELETE', 'files/P.png', token=bt)[0]
        read = call('GET', 'files/P.png', token=bt)[2] == png
        print(json.dumps({'alice': alice, 'acl': listed[0]['acl'] if listed else None,
                          'taken': taken, 'deleted': deleted, 'read': read}))
        """
    let run = try Clients.python(script, [String(server.port), keys, picture])
    #expect(run.status == 0, "\(run.summary)")
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    let alice = seen["alice"] as? String ?? "?"
    let acl = seen["acl"] as? [String: [String: Bool]] ?? [:]
    #expect(acl == ["*": ["read": true], alice: ["read": true, "write": true]], "\(seen)")
    #expect(seen["taken"] as? Int == 403, "\(seen)")
    #expect(seen["deleted"] as? Int == 403, "\(seen)")
    #expect(seen["read"] as? Bool == true, "\(seen)")
    #expect(server.stop() == 0)
  }
}
