import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Testing

/// Issue 30: forum's remote engine writes with `X-Forum-Wire: 1` and through `forum/perform`,
/// and anyone with the board's keys (`GET forum/keys`) may send them. A member with a script
/// is held to the board's limits there as an app is on NCMB's paths: the same error code, a
/// one-line reason, and nothing written.
@Suite("Wire writes keep the board's limits")
struct ServeWireGuardTests {
  @Test(arguments: [false, true]) func wireWritesKeepTheBoardsLimits(onPostgreSQL: Bool) throws {
    try serving(["--listen", "127.0.0.1:0"], onPostgreSQL: onPostgreSQL, keepsTheBoardsLimits)
  }

  @Test(arguments: [false, true]) func wireWritesKeepTheStoragePerUser(onPostgreSQL: Bool) throws {
    try serving(ServeStorageQuotaTests.arguments, onPostgreSQL: onPostgreSQL, keepsTheQuota)
  }

  /// `forum serve ARGUMENTS` on a new SQLite or PostgreSQL board, given to `check` with the
  /// board's keys.
  private func serving(
    _ arguments: [String], onPostgreSQL: Bool, _ check: (ServeProcess, String) throws -> Void
  ) throws {
    let forum = try ForumFixture()
    guard onPostgreSQL else {
      try forum.ok(["init"], profile: nil)
      let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
      return try check(try ServeProcess(forum, arguments), keys)
    }
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    try check(try ServeProcess(forum, arguments, database: served.server.uri), served.keys)
  }

  /// forum's own remote engine is held to the storage per user too: a member of an https board
  /// whose picture would take them past it is told why in one line, in their language, and
  /// nothing is posted.
  @Test func aRemoteMemberPastTheStorageIsToldWhy() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let served = try RemoteBoardTests.Served(forum, options: ["--storage-per-user", "1"])
    let picture = forum.root + "/noise.png"
    let made = try Clients.run(
      "/usr/bin/python3",
      ["-c", Self.pictures + "open(sys.argv[1], 'wb').write(png(700, 600, True))\n", picture])
    #expect(made.status == 0, "\(made.summary)")
    for (lang, words) in [
      ("C", "the storage per user is 1048576 bytes"), ("ja_JP.UTF-8", "1048576 バイトまで"),
    ] {
      let refused = try served.run(
        ["new", "--title", "too big", "--image", picture], lang: lang)
      #expect(refused.status == 1, "\(refused.summary)")
      #expect(refused.stderrLines.count == 1, "\(refused.summary)")
      #expect(refused.stderr.contains(words), "\(refused.summary)")
    }
    let list = try served.ok(["--json", "list"])
    #expect((try list.json()["results"] as? [Any])?.isEmpty == true, "\(list.summary)")
    #expect(served.server.stop() == 0)
  }

  /// PNG pictures of `width`×`height`, grey or noise (which does not compress), no metadata.
  static let pictures = """
    import os, struct, sys, zlib
    def png(width=8, height=6, noise=False):
        row = lambda: b'\\x00' + (os.urandom(width * 3) if noise else b'\\x80' * (width * 3))
        raw = b''.join(row() for _ in range(height))
        def chunk(kind, data):
            return (struct.pack('>I', len(data)) + kind + data
                    + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff))
        header = struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)
        return (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', header)
                + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))

    """

  /// What the scripts share: the header, a refusal as `[status, code, error]`, a count, a
  /// pointer, `perform` of raw steps, and a picture's step.
  static let attacker =
    SignedClient.prelude + pictures + """
      import base64
      wire = {'X-Forum-Wire': '1'}
      def code(answer):
          status, body, _ = answer
          return [status, (body or {}).get('code'), (body or {}).get('error', '')]
      def count(cls, token):
          status, body, _ = call('GET', 'classes/' + cls, token=token, query='count=1&limit=0')
          assert status == 200, (status, body)
          return body['count']
      def pointer(cls, objectId):
          return {'__type': 'Pointer', 'className': cls, 'objectId': objectId}
      def value(v):
          return {'value': v}
      def perform(steps, token):
          return call('POST', 'forum/perform', {'steps': steps}, token, headers=wire)
      def file_step(name, data, acl):
          return {'putFile': name, 'bytes': base64.b64encode(data).decode(),
                  'mimeType': 'image/png', 'acl': acl}

      """

  /// A user object past `maximumUserBytes`, a thread's title, a comment's and a message's text
  /// past `PostRules`, a thread's picture facts made up: refused on `classes`/`users` with the
  /// header and through `perform` as an app is refused (E400002), nothing of them written, no
  /// step of an operation kept. The board's own writes still pass, and a thread's picture
  /// facts are the server's, read from its file.
  private func keepsTheBoardsLimits(_ server: ServeProcess, _ keys: String) throws {
    let run = try Clients.python(
      Self.attacker + """
        seen = {}
        me, token = signup()
        other, other_token = signup()
        own = {'*': {'read': True}, me: {'read': True, 'write': True}}
        status, body, _ = call('POST', 'classes/Thread', {'title': 'ok', 'description': 'x'},
                               token)
        assert status == 201, (status, body)
        thread = body['objectId']
        status, body, _ = call('POST', 'classes/Conversation',
                               {'partner': pointer('user', other)}, token)
        assert status == 201, (status, body)
        conversation = body['objectId']
        pair = {me: {'read': True, 'write': True}, other: {'read': True}}
        long = 'x' * 100000
        # NCMB's path, for the code an app gets.
        seen['app user'] = code(call('PUT', 'users/' + me, {'hobby': long}, token))
        seen['app title'] = code(call('POST', 'classes/Thread',
                                      {'title': long, 'description': ''}, token))
        # The engine's paths, as a script sends them.
        seen['user'] = code(call('PUT', 'users/' + me, {'hobby': long}, token, headers=wire))
        seen['long name'] = code(call('PUT', 'users/' + me, {'displayName': 'n' * 100}, token,
                                      headers=wire))
        seen['escape name'] = code(call('PUT', 'users/' + me, {'displayName': 'a\\x1b[2Jb'},
                                        token, headers=wire))
        seen['title'] = code(call('POST', 'classes/Thread',
                                  {'title': long, 'description': '', 'acl': own}, token,
                                  headers=wire))
        seen['retitle'] = code(call('PUT', 'classes/Thread/' + thread, {'title': long}, token,
                                    headers=wire))
        seen['comment'] = code(call('POST', 'classes/Comment',
                                    {'text': long, 'thread': pointer('Thread', thread),
                                     'acl': own}, token, headers=wire))
        seen['message'] = code(call('POST', 'classes/Message',
                                    {'text': long,
                                     'conversation': pointer('Conversation', conversation),
                                     'acl': pair}, token, headers=wire))
        seen['made-up picture'] = code(call('POST', 'classes/Thread',
                                            {'title': 't', 'description': '',
                                             'image': {'mimeType': 'image/png', 'width': 1,
                                                       'height': 1}, 'acl': own},
                                            token, headers=wire))
        find_thread = {'find': 'Thread', 'equalTo': {'number': value(1)}}
        seen['perform title'] = code(perform(
            [{'create': 'Thread', 'fields': {'title': value(long), 'description': value('')},
              'acl': own}], token))
        seen['perform retitle'] = code(perform(
            [find_thread, {'update': 0, 'set': {'title': value(long)}}], token))
        # A step that would pass, then one refused: neither is kept.
        seen['perform comment'] = code(perform(
            [find_thread,
             {'create': 'Comment', 'fields': {'text': value('fine'), 'thread': {'pointerTo': 0}},
              'acl': own},
             {'create': 'Comment', 'fields': {'text': value(long), 'thread': {'pointerTo': 0}},
              'acl': own}], token))
        seen['perform message'] = code(perform(
            [{'create': 'Message',
              'fields': {'text': value(long),
                         'conversation': value(pointer('Conversation', conversation))},
              'acl': pair}], token))
        status, body, _ = call('GET', 'users/' + me, token=token)
        seen['perform user'] = code(perform(
            [{'find': 'user', 'equalTo': {'userName': value(body['userName'])}},
             {'update': 0, 'set': {'hobby': value(long)}}], token))
        # The board's own write of a thread with its picture: the facts are read from the file.
        made_up = {'mimeType': 'image/png', 'width': 4000, 'height': 3000, 'fileSize': 1,
                   'orientation': 1, 'removedMetadata': ['Exif']}
        status, body, _ = perform(
            [file_step('thread-pic.png', png(), own),
             {'create': 'Thread', 'fields': {'title': value('picture'),
                                             'description': value(''),
                                             'fileName': value('thread-pic.png'),
                                             'image': value(made_up)}, 'acl': own}], token)
        seen['picture'] = status
        status, body, _ = call('GET', 'classes/Thread', token=token,
                               query=where({'title': 'picture'}))
        image = body['results'][0].get('image', {}) if status == 200 and body['results'] else {}
        seen['picture facts'] = [image.get('width'), image.get('height'),
                                 int(image.get('fileSize') == len(png())),
                                 image.get('removedMetadata')]
        # A user object grown by NCMB's Add, a little at a time: refused once past the limit.
        piece = {'tags': {'__op': 'Add', 'objects': ['y' * 3000]}}
        seen['adds'] = [code(call('PUT', 'users/' + other, piece, other_token, headers=wire))[0]
                        for i in range(4)]
        seen['tags'] = len(call('GET', 'users/' + other, token=token)[1].get('tags', []))
        # So is a thread an app grows past what it may cost a reader.
        piece = {'extra': {'__op': 'Add', 'objects': ['z' * 60000]}}
        seen['app adds'] = [code(call('PUT', 'classes/Thread/' + thread, piece, token))[0]
                            for i in range(3)]
        # Read back: nothing of the refused writes.
        status, body, _ = call('GET', 'users/' + me, token=token)
        seen['hobby'] = 'hobby' in body
        status, body, _ = call('GET', 'classes/Thread/' + thread, token=token)
        seen['title kept'] = body.get('title')
        seen['threads'] = count('Thread', token)
        seen['comments'] = count('Comment', token)
        seen['messages'] = count('Message', token)
        print(json.dumps(seen))
        """, [String(server.port), keys], timeout: 600)
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop() == 0)
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    let refusals = [
      "app user", "app title", "user", "long name", "escape name", "title", "retitle", "comment",
      "message",
      "made-up picture", "perform title", "perform retitle", "perform comment",
      "perform message", "perform user",
    ]
    for key in refusals {
      let answer = seen[key] as? [Any] ?? []
      #expect(answer.first as? Int == 400, "\(key): \(answer)")
      #expect(answer.count == 3 && answer[1] as? String == "E400002", "\(key): \(answer)")
      let reason = answer.last as? String ?? ""
      #expect(!reason.isEmpty && !reason.contains("\n") && reason.count < 300, "\(key): \(answer)")
    }
    for key in ["user", "perform user"] {
      let reason = (seen[key] as? [Any])?.last as? String ?? ""
      #expect(reason.contains("8192"), "\(key): \(reason)")
    }
    for key in ["title", "retitle", "perform title", "perform retitle"] {
      let reason = (seen[key] as? [Any])?.last as? String ?? ""
      #expect(reason.contains("200"), "\(key): \(reason)")
    }
    for key in ["comment", "message", "perform comment", "perform message"] {
      let reason = (seen[key] as? [Any])?.last as? String ?? ""
      #expect(reason.contains("10000") || reason.contains("10,000"), "\(key): \(reason)")
    }
    #expect(seen["picture"] as? Int == 200, "\(run.stdout)")
    let facts = seen["picture facts"] as? [Any] ?? []
    #expect(facts.count == 4, "\(run.stdout)")
    #expect(facts.prefix(3).compactMap { $0 as? Int } == [8, 6, 1], "\(run.stdout)")
    #expect(facts.last as? [String] == ["Exif"], "\(run.stdout)")
    #expect(seen["hobby"] as? Bool == false, "\(run.stdout)")
    #expect(seen["adds"] as? [Int] == [200, 200, 400, 400], "\(run.stdout)")
    #expect(seen["tags"] as? Int == 2, "\(run.stdout)")
    #expect(seen["app adds"] as? [Int] == [200, 200, 400], "\(run.stdout)")
    #expect(seen["title kept"] as? String == "ok", "\(run.stdout)")
    #expect(seen["threads"] as? Int == 2, "\(run.stdout)")
    #expect(seen["comments"] as? Int == 0, "\(run.stdout)")
    #expect(seen["messages"] as? Int == 0, "\(run.stdout)")
  }

  /// With 3 MiB a user, filled by an app's three objects of a megabyte: a fourth through
  /// `classes` with the header, growing one so, and an object or a picture through `perform`
  /// are refused as on NCMB's path (E413002), and nothing of them is stored.
  private func keepsTheQuota(_ server: ServeProcess, _ keys: String) throws {
    let run = try Clients.python(
      Self.attacker + """
        seen = {}
        me, token = signup()
        own = {'*': {'read': True}, me: {'read': True, 'write': True}}
        big = 'x' * 1000000
        ids = []
        for i in range(3):
            status, body, _ = call('POST', 'classes/Blob', {'a': big}, token)
            assert status == 201, (i, status, body)
            ids.append(body['objectId'])
        seen['app'] = code(call('POST', 'classes/Blob', {'a': big}, token))
        seen['wire'] = code(call('POST', 'classes/Blob', {'a': big, 'acl': own}, token,
                                 headers=wire))
        seen['wire grow'] = code(call('PUT', 'classes/Blob/' + ids[0], {'c': 'z' * 900000},
                                      token, headers=wire))
        seen['perform'] = code(perform(
            [{'create': 'Blob', 'fields': {'a': value(big)}, 'acl': own}], token))
        seen['perform file'] = code(perform([file_step('big.png', png(600, 560, True), own)],
                                            token))
        seen['count'] = count('Blob', token)
        status, body, _ = call('GET', 'classes/Blob/' + ids[0], token=token)
        seen['not grown'] = 'c' not in body
        seen['file'] = code(call('GET', 'files/big.png', token=token))[:2]
        # Another member is not concerned: the same writes fit in their own room.
        other, other_token = signup()
        mine = {'*': {'read': True}, other: {'read': True, 'write': True}}
        seen['other'] = code(perform(
            [{'create': 'Blob', 'fields': {'a': value(big)}, 'acl': mine}], other_token))[0]
        print(json.dumps(seen))
        """, [String(server.port), keys], timeout: 600)
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop() == 0)
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    for key in ["app", "wire", "wire grow", "perform", "perform file"] {
      let answer = seen[key] as? [Any] ?? []
      #expect(answer.first as? Int == 413, "\(key): \(answer)")
      #expect(answer.count == 3 && answer[1] as? String == "E413002", "\(key): \(answer)")
      let reason = answer.last as? String ?? ""
      #expect(
        reason.contains("storage per user") && !reason.contains("\n"), "\(key): \(answer)")
    }
    #expect(seen["count"] as? Int == 3, "\(run.stdout)")
    #expect(seen["not grown"] as? Bool == true, "\(run.stdout)")
    #expect(seen["file"] as? [AnyHashable] == [404, "E404001"], "\(run.stdout)")
    #expect(seen["other"] as? Int == 200, "\(run.stdout)")
  }
}
