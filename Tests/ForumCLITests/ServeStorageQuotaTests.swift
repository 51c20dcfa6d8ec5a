import Foundation
import HTTPTestSupport
import Testing

/// Issue 28 H5: one app user's stored objects are bounded (`forum serve --storage-per-user`), so
/// that nobody fills the disk with objects of an app's own class.
@Suite("Storage per user")
struct ServeStorageQuotaTests {
  @Test func anAppUserIsRefusedPastTheQuotaAndADeleteFreesIt() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let server = try ServeProcess(forum, ServeStorageQuotaTests.arguments)
    try refusesPastTheQuota(server, keys: try forum.ok(["keys", "--json"], profile: nil).stdout)
  }

  @Test func anAppUserIsRefusedPastTheQuotaOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let server = try ServeProcess(
      forum, ServeStorageQuotaTests.arguments, database: served.server.uri)
    try refusesPastTheQuota(server, keys: served.keys)
  }

  static let arguments = ["--listen", "127.0.0.1:0", "--storage-per-user", "3"]

  /// An app user stores three objects of a megabyte in an app's class; a fourth and growing one
  /// of them are refused, nothing of them stored; a small one still fits; another user is not
  /// concerned; a delete makes room again, of a public object or of one made private.
  private func refusesPastTheQuota(_ server: ServeProcess, keys: String) throws {
    let run = try Clients.python(
      SignedClient.prelude + """
        def code(answer):
            status, body, _ = answer
            return [status, (body or {}).get('code'), (body or {}).get('error', '')]
        def count(token):
            status, body, _ = call('GET', 'classes/Blob', token=token, query='count=1&limit=0')
            return (body or {}).get('count')
        seen = {}
        me, token = signup()
        # A megabyte a write (the server's largest JSON body is 1 MiB): 3 fit in 3 MiB, not 4.
        big = {'a': 'x' * 1000000}
        ids = []
        for i in range(3):
            status, body, _ = call('POST', 'classes/Blob', big, token)
            assert status == 201, (i, status, body)
            ids.append(body['objectId'])
        seen['third'] = code(call('POST', 'classes/Blob', big, token))
        seen['count'] = count(token)
        # An object made private (on PostgreSQL it changes tables) still counts, once.
        private = {me: {'read': True, 'write': True}}
        seen['private'] = code(call('PUT', 'classes/Blob/' + ids[2], {'acl': private}, token))[0]
        seen['still'] = code(call('POST', 'classes/Blob', big, token))[0]
        # Growing one's own object past the quota is refused too; a small write still fits.
        seen['grow'] = code(call('PUT', 'classes/Blob/' + ids[0], {'c': 'z' * 900000}, token))
        seen['small'] = code(call('POST', 'classes/Blob', {'a': 'tiny'}, token))[0]
        other, other_token = signup()
        seen['other'] = code(call('POST', 'classes/Blob', big, other_token))[0]
        seen['delete'] = code(call('DELETE', 'classes/Blob/' + ids[1], token=token))[0]
        seen['again'] = code(call('POST', 'classes/Blob', big, token))[0]
        seen['full'] = code(call('POST', 'classes/Blob', big, token))[0]
        seen['delete private'] = code(call('DELETE', 'classes/Blob/' + ids[2], token=token))[0]
        seen['after'] = [code(call('POST', 'classes/Blob', big, token))[0] for i in range(2)]
        print(json.dumps(seen))
        """, [String(server.port), keys], timeout: 600)
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop() == 0)
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    for key in ["third", "grow"] {
      let answer = seen[key] as? [Any] ?? []
      #expect(answer.first as? Int == 413 && answer[1] as? String == "E413002", "\(key): \(answer)")
      #expect((answer.last as? String)?.contains("storage") == true, "\(key): \(answer)")
    }
    #expect(seen["count"] as? Int == 3, "\(run.stdout)")
    #expect(seen["small"] as? Int == 201, "\(run.stdout)")
    #expect(seen["other"] as? Int == 201, "\(run.stdout)")
    #expect(seen["delete"] as? Int == 200, "\(run.stdout)")
    #expect(seen["again"] as? Int == 201, "\(run.stdout)")
    #expect(seen["private"] as? Int == 200, "\(run.stdout)")
    #expect(seen["still"] as? Int == 413, "\(run.stdout)")
    #expect(seen["full"] as? Int == 413, "\(run.stdout)")
    #expect(seen["delete private"] as? Int == 200, "\(run.stdout)")
    #expect(seen["after"] as? [Int] == [201, 413], "\(run.stdout)")
  }
}
