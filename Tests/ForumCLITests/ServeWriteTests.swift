import Foundation
import HTTPTestSupport
import Spawning
import Testing

/// Writes through `forum serve` on SQLite are committed in batches (group commit): what a client
/// sees, through the built binary, with the system Python's http.client as the client.
@Suite("forum serve writes")
struct ServeWriteTests {
  /// Writers posting comments to one thread over keep-alive connections, each comment's text
  /// unique; every fifth one is addressed to a thread that does not exist. `limit` posts each
  /// (0: until the connection fails). Prints `writing` once `ready` posts were acknowledged, then
  /// at the end one JSON line: `[[text, status, objectId or code], …]`.
  static let writers = """
    import base64, datetime, hashlib, hmac, http.client, json, sys, threading, uuid
    port, keys = int(sys.argv[1]), json.loads(sys.argv[2])
    count, limit, ready = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    def headers(method, path):
        stamp = datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'
        text = '\\n'.join([method, '127.0.0.1:%d' % port, path,
            'SignatureMethod=HmacSHA256&SignatureVersion=2&X-NCMB-Application-Key=%s'
            '&X-NCMB-Timestamp=%s' % (keys['applicationKey'], stamp)])
        signature = base64.b64encode(hmac.new(keys['clientKey'].encode(), text.encode(),
                                              hashlib.sha256).digest()).decode()
        return {'X-NCMB-Application-Key': keys['applicationKey'], 'X-NCMB-Timestamp': stamp,
                'X-NCMB-Signature': signature, 'Content-Type': 'application/json'}
    def post(connection, path, body, token=None):
        h = headers('POST', path)
        if token:
            h['X-NCMB-Apps-Session-Token'] = token
        connection.request('POST', path, json.dumps(body), h)
        r = connection.getresponse()
        return r.status, json.loads(r.read() or b'{}')
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
    status, user = post(c, '/2013-09-01/users',
                        {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
    assert status == 201, (status, user)
    token = user['sessionToken']
    status, thread = post(c, '/2013-09-01/classes/Thread', {'title': 't', 'description': ''},
                          token)
    assert status == 201, (status, thread)
    print(thread['objectId'], flush=True)
    answers, lock = [], threading.Lock()
    def writer(k):
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
        n = 0
        while limit == 0 or n < limit:
            text = 'comment %d-%d' % (k, n)
            target = thread['objectId'] if n % 5 != 4 else 'AAAAAAAAAAAAAAAA'
            pointer = {'__type': 'Pointer', 'className': 'Thread', 'objectId': target}
            try:
                status, body = post(c, '/2013-09-01/classes/Comment',
                                    {'text': text, 'thread': pointer}, token)
            except (OSError, http.client.HTTPException):
                return
            with lock:
                answers.append([text, status, body.get('objectId') or body.get('code')])
                if len(answers) == ready:
                    print('writing', flush=True)
            n += 1
    threads = [threading.Thread(target=writer, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(answers), flush=True)
    """

  /// A board made by `forum init`, its keys, and a server on it.
  private func served() throws -> (ForumFixture, String, ServeProcess) {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    #expect(keys.status == 0, "\(keys.summary)")
    return (forum, keys.stdout, try ServeProcess(forum, ["--listen", "127.0.0.1:0"]))
  }

  /// The answers the writers printed last: text, HTTP status, objectId or error code.
  private func answers(_ output: String) -> [(text: String, status: Int, value: String)] {
    let last = output.split(separator: "\n").last.map(String.init) ?? ""
    let rows = (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [[Any]] ?? []
    return rows.compactMap { row in
      guard row.count == 3, let text = row[0] as? String, let status = row[1] as? Int,
        let value = row[2] as? String
      else { return nil }
      return (text, status, value)
    }
  }

  /// The thread's stored comments (objectId, text, number) and its comment count, read with
  /// sqlite3 after an integrity check.
  private func stored(_ forum: ForumFixture, thread: String) throws
    -> (integrity: String, comments: [(id: String, text: String, number: Int)], count: Int?)
  {
    let run = try Clients.run(
      "/usr/bin/sqlite3",
      [
        "-separator", "\t", forum.db, "PRAGMA integrity_check;",
        "SELECT objectId, json_extract(data, '$.text'), json_extract(data, '$.number') "
          + "FROM objects WHERE class = 'Comment' "
          + "AND json_extract(data, '$.thread.objectId') = '\(thread)';",
        "SELECT json_extract(counts, '$.commentCount') FROM objects WHERE objectId = '\(thread)';",
      ])
    let lines = run.stdout.split(separator: "\n").map(String.init)
    let comments = lines.dropFirst().dropLast().compactMap { line -> (String, String, Int)? in
      let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard fields.count == 3, let number = Int(fields[2]) else { return nil }
      return (fields[0], fields[1], number)
    }
    return (lines.first ?? run.summary, comments, lines.last.flatMap { Int($0) })
  }

  /// Eight writers at once, every fifth post refused: each gets its own answer (its own new
  /// object, or E404001 for the refused), and the board holds exactly the acknowledged ones,
  /// numbered once each and counted by the thread.
  @Test func concurrentWritersEachGetTheirOwnAnswer() throws {
    let (forum, keys, server) = try served()
    let run = try Clients.python(
      ServeWriteTests.writers, [String(server.port), keys, "8", "25", "0"], timeout: 300)
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop() == 0)
    let thread = String(run.stdout.prefix { $0 != "\n" })
    let answers = answers(run.stdout)
    #expect(answers.count == 8 * 25, "\(run.summary)")
    let refused = answers.filter { $0.status != 201 }
    #expect(refused.count == 8 * 5)
    #expect(
      refused.allSatisfy { $0.status == 404 && $0.value == "E404001" }, "\(refused.prefix(3))")
    let acknowledged = answers.filter { $0.status == 201 }
    #expect(Set(acknowledged.map(\.value)).count == acknowledged.count, "one object each")

    let board = try stored(forum, thread: thread)
    #expect(board.integrity == "ok")
    #expect(
      Set(board.comments.map { "\($0.id) \($0.text)" })
        == Set(acknowledged.map { "\($0.value) \($0.text)" }))
    #expect(Set(board.comments.map(\.number)) == Set(1...acknowledged.count))
    #expect(board.count == acknowledged.count)
  }

  /// The server killed (SIGKILL) while eight writers post: every write a client was answered
  /// for is on the board, whole and counted; the only others are those whose answer the kill
  /// cut (at most one a writer); and the file is intact.
  @Test func aKillDuringWritesLosesOnlyUnansweredWrites() throws {
    let (forum, keys, server) = try served()
    let client = ChildProcess()
    client.executableURL = URL(fileURLWithPath: try Clients.require("/usr/bin/python3"))
    client.arguments = ["-c", ServeWriteTests.writers, String(server.port), keys, "8", "0", "60"]
    let output = Pipe()
    let errors = Pipe()
    client.standardOutput = output
    client.standardError = errors
    try client.run()
    var seen = Data()
    while !String(decoding: seen, as: UTF8.self).contains("writing\n") {
      let more = output.fileHandleForReading.availableData
      if more.isEmpty { break }
      seen += more
    }
    #expect(String(decoding: seen, as: UTF8.self).contains("writing\n"), "\(seen)")
    #expect(server.stop(SIGKILL) != nil, "the server is gone")
    seen += output.fileHandleForReading.readDataToEndOfFile()
    client.waitUntilExit()
    let problems = String(
      decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(client.terminationStatus == 0, "\(problems)")
    let text = String(decoding: seen, as: UTF8.self)
    let thread = String(text.prefix { $0 != "\n" })
    let answers = answers(text)
    #expect(answers.count >= 60)
    let acknowledged = answers.filter { $0.status == 201 }
    #expect(
      answers.allSatisfy { $0.status == 201 || ($0.status == 404 && $0.value == "E404001") },
      "\(answers.filter { $0.status != 201 && $0.status != 404 }.prefix(3))")

    let board = try stored(forum, thread: thread)
    #expect(board.integrity == "ok")
    let storedIds = Set(board.comments.map(\.id))
    #expect(Set(acknowledged.map(\.value)).isSubset(of: storedIds))
    #expect(board.comments.count <= acknowledged.count + 8)
    #expect(board.count == board.comments.count, "the thread counts what it holds")
    #expect(Set(board.comments.map(\.number)) == Set(1...board.comments.count))
    // Writer k's comment without an answer can only be the one it was waiting for: its next.
    let ids = Set(acknowledged.map(\.value))
    let inFlight = Set(
      (0..<8).map { k in
        "comment \(k)-\(answers.filter { $0.text.hasPrefix("comment \(k)-") }.count)"
      })
    let unanswered = board.comments.filter { !ids.contains($0.id) }
    #expect(unanswered.allSatisfy { inFlight.contains($0.text) }, "\(unanswered)")
  }
}
