import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Testing

/// `forum serve` on a PostgreSQL board, through the built binary: several servers share one
/// database (sessions are in it), and each request is its own app user's, so row-level security
/// decides what it sees however the servers' connections interleave.
@Suite("forum serve on PostgreSQL")
struct PostgresServeTests {
  /// A board made by its owner, a server role granted `forum_server`, and the keys.
  private func board() throws -> (ForumFixture, PostgresTestBoard, PostgresTestRole, String) {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board(members: ["alice"])
    let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
    #expect(initialized.status == 0, "\(initialized.summary)")
    try board.cluster.admin("GRANT forum_member TO \(board["alice"].name)")
    let server = try board.cluster.role("server", database: board.database)
    try board.cluster.admin("GRANT forum_member, forum_server TO \(server.name)")
    let keys = try forum.run(["--json", "keys"], profile: nil, database: board.owner.uri)
    #expect(keys.status == 0, "\(keys.summary)")
    return (forum, board, server, keys.stdout)
  }

  /// Signed requests of our own (the SDK cannot send to two hosts at once).
  static let client = """
    import base64, datetime, hashlib, hmac, http.client, json, sys, threading, uuid, urllib.parse
    ports, keys = [int(p) for p in sys.argv[1].split(',')], json.loads(sys.argv[2])
    def call(port, method, path, body=None, token=None, query=''):
        stamp = datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'
        pairs = ['SignatureMethod=HmacSHA256', 'SignatureVersion=2',
                 'X-NCMB-Application-Key=' + keys['applicationKey'], 'X-NCMB-Timestamp=' + stamp]
        if query:
            pairs += query.split('&')
        text = '\\n'.join([method, '127.0.0.1:%d' % port, path, '&'.join(sorted(pairs))])
        signature = base64.b64encode(hmac.new(keys['clientKey'].encode(), text.encode(),
                                              hashlib.sha256).digest()).decode()
        h = {'X-NCMB-Application-Key': keys['applicationKey'], 'X-NCMB-Timestamp': stamp,
             'X-NCMB-Signature': signature, 'Content-Type': 'application/json'}
        if token:
            h['X-NCMB-Apps-Session-Token'] = token
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
        c.request(method, path + ('?' + query if query else ''),
                  json.dumps(body) if body is not None else None, h)
        r = c.getresponse()
        return r.status, json.loads(r.read() or b'{}')
    users = []
    for i in range(4):
        status, user = call(ports[i % len(ports)], 'POST', '/2013-09-01/users',
                            {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
        assert status == 201, (status, user)
        users.append(user)
    problems = []
    def writer(k):
        me = users[k]
        for n in range(15):
            acl = {me['objectId']: {'read': True, 'write': True}}
            status, body = call(ports[n % len(ports)], 'POST', '/2013-09-01/classes/Todo',
                                {'title': 'todo %d-%d' % (k, n), 'acl': acl}, me['sessionToken'])
            if status != 201:
                problems.append(('post', k, n, status, body))
            # Between writes, someone without a session and another user read the class.
            status, body = call(ports[(n + 1) % len(ports)], 'GET', '/2013-09-01/classes/Todo')
            if status != 200 or body['results']:
                problems.append(('anonymous read', k, n, status, body))
    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seen = {}
    for k, me in enumerate(users):
        for port in ports:
            status, body = call(port, 'GET', '/2013-09-01/classes/Todo', token=me['sessionToken'],
                                query='limit=1000')
            titles = sorted(o['title'] for o in body.get('results', []))
            if titles != sorted('todo %d-%d' % (k, n) for n in range(15)):
                problems.append(('own read', k, port, status, titles))
        # Someone else's object: not found for another user, on either server.
        other = users[(k + 1) % len(users)]
        status, body = call(ports[0], 'GET', '/2013-09-01/classes/Todo', token=me['sessionToken'],
                            query='where=' + urllib.parse.quote(json.dumps(
                                {'title': 'todo %d-0' % ((k + 1) % len(users))}), safe=''))
        if status != 200 or body['results']:
            problems.append(('foreign read', k, status, body))
    # A logout on one server ends the session on the other.
    status, body = call(ports[0], 'GET', '/2013-09-01/logout', token=users[0]['sessionToken'])
    if status != 200:
        problems.append(('logout', status, body))
    status, body = call(ports[-1], 'GET', '/2013-09-01/classes/Todo',
                        token=users[0]['sessionToken'])
    if status != 401 or body.get('code') != 'E401001':
        problems.append(('after logout', status, body))
    print(json.dumps(problems))
    """

  @Test("two servers, four app users writing at once: each sees exactly their own")
  func twoServersShareOneBoard() throws {
    let (forum, board, server, keys) = try board()
    defer { board.remove() }
    let first = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: server.uri)
    let second = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: server.uri)
    #expect(first.readyLine.contains(keysApplication(keys)), "\(first.readyLine)")
    let run = try Clients.python(
      PostgresServeTests.client, ["\(first.port),\(second.port)", keys], timeout: 300)
    #expect(run.status == 0, "\(run.summary)")
    #expect(run.stdout == "[]\n", "\(run.summary)")
    #expect(first.stop(SIGTERM) == 0)
    #expect(second.stop(SIGTERM) == 0)
    #expect(first.stderr == "" && second.stderr == "", "\(first.stderr) \(second.stderr)")
    // A member at the terminal sees none of the app users' private objects, and the server role
    // can read no key, identity or session table by hand.
    let counted = try board.cluster.admin(
      "SET ROLE \(server.name); SELECT count(*) FROM forum.objects WHERE class = 'Todo'",
      database: board.database)
    #expect(counted.split(separator: "\n").last == "0", "\(counted)")
    // Private objects live in the owner-only table (issue 22), none in forum.objects.
    let stored = try board.cluster.admin(
      """
      SELECT (SELECT count(*) FROM forum.private_objects WHERE class = 'Todo')
        + 1000 * (SELECT count(*) FROM forum.objects WHERE class = 'Todo')
      """, database: board.database)
    #expect(stored.split(separator: "\n").last == "60", "\(stored)")
    for table in ["secrets", "app_identities", "app_sessions"] {
      #expect(throws: (any Error).self, "forum.\(table)") {
        try board.cluster.admin(
          "SET ROLE \(server.name); SELECT * FROM forum.\(table)", database: board.database)
      }
    }
  }

  private func keysApplication(_ json: String) -> String {
    let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
    return object?["applicationKey"] ?? "?"
  }
}
