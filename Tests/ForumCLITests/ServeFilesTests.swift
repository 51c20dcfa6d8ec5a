import Foundation
import HTTPTestSupport
import HostileImages
import PostgresTestCluster
import Testing

/// NCMB's file search (`GET /files`) and file deletion through the built `forum serve`, with
/// signed HTTP of our own (the PyPI SDK has no files), on both engines: a file the caller may
/// not read is never listed, counted or told apart from a missing one.
@Suite("forum serve: files")
struct ServeFilesTests {
  static let script =
    SignedClient.prelude + """
      small, medium, large = (open(p, 'rb').read() for p in sys.argv[3:6])
      problems = []
      def expect(name, got, want):
          if got != want:
              problems.append([name, got, want])
      alice, at = signup()
      bob, bt = signup()
      public = {'*': {'read': True}, alice: {'read': True, 'write': True}}
      mine = {alice: {'read': True, 'write': True}}
      expect('upload public', upload('public.png', small, public, at)[0], 201)
      expect('upload secret', upload('secret.png', medium, mine, at)[0], 201)
      expect('upload bob', upload('bobs.png', large,
                                  {'*': {'read': True}, bob: {'read': True, 'write': True}},
                                  bt)[0], 201)
      def listing(token=None, query=''):
          status, body, raw = call('GET', 'files', token=token, query=query)
          if status != 200:
              return [status, raw.decode(errors='replace')]
          return [f['fileName'] for f in body['results']]
      expect('alice lists', sorted(listing(at)), ['bobs.png', 'public.png', 'secret.png'])
      expect('bob lists', sorted(listing(bt)), ['bobs.png', 'public.png'])
      expect('nobody lists', sorted(listing()), ['bobs.png', 'public.png'])
      expect('trailing slash', sorted(listing(bt)), sorted(
          f['fileName'] for f in call('GET', 'files/', token=bt)[1]['results']))
      status, body, _ = call('GET', 'files', token=bt, query='count=1&limit=1')
      expect('bob counts', [status, body.get('count'), len(body.get('results', []))], [200, 2, 1])
      status, body, _ = call('GET', 'files', token=at, query='count=1')
      expect('alice counts', [status, body.get('count')], [200, 3])
      # However bob asks, alice's private file is neither found nor counted.
      for condition in [{'fileName': 'secret.png'}, {'fileName': {'$in': ['secret.png']}},
                        {'fileName': {'$gte': 's'}}, {'fileSize': {'$gte': len(medium)}},
                        {'$or': [{'fileName': 'secret.png'}, {'mimeType': 'image/png'}]},
                        {'fileName': {'$ne': 'public.png'}}, {'fileName': {'$exists': True}}]:
          status, body, _ = call('GET', 'files', token=bt, query='count=1&' + where(condition))
          names = [f['fileName'] for f in body.get('results', [])]
          expect('hidden ' + json.dumps(condition),
                 ['secret.png' in names, body.get('count') == len(names), status],
                 [False, True, 200])
      status, body, _ = call('GET', 'files', token=at, query=where({'fileName': 'secret.png'}))
      found = body['results'][0] if status == 200 and body['results'] else {}
      expect('fields', sorted(found),
             ['acl', 'createDate', 'fileName', 'fileSize', 'mimeType', 'updateDate'])
      expect('values', [found.get('fileSize'), found.get('mimeType'), found.get('acl')],
             [len(medium), 'image/png', mine])
      expect('dates', [found.get('createDate', '')[-1:], found.get('updateDate', '')[-1:]],
             ['Z', 'Z'])
      expect('by size', listing(at, 'order=fileSize'), ['public.png', 'secret.png', 'bobs.png'])
      expect('by name, paged', listing(at, 'order=-fileName&skip=1&limit=1'), ['public.png'])
      expect('range', sorted(listing(at, where({'fileSize': {'$gt': len(small)}}))),
             ['bobs.png', 'secret.png'])
      expect('type', listing(at, where({'mimeType': {'$nin': ['image/png']}})), [])
      status, body, _ = call('GET', 'files', token=at, query=where({'fileName': 'public.png'}))
      first = {'__type': 'Date', 'iso': body['results'][0]['createDate']}
      expect('since the first', sorted(listing(at, where({'createDate': {'$gte': first}}))),
             ['bobs.png', 'public.png', 'secret.png'])
      expect('before the first', listing(at, where({'createDate': {'$lt': first}})), [])
      # The errors of an object query.
      for query, status, code in [
              (where({'fileName': {'$where': '1'}}), 400, 'E400002'),
              (where({'fileName': {'$regex': '(a'}}), 400, 'E400002'),
              (where({'fileName': {'$regex': 'a', '$options': 'q'}}), 400, 'E400002'),
              ('limit=1000000000', 400, 'E400002'), ('skip=-1', 400, 'E400002'),
              (where({'title': 'x'}), 400, 'E400002'), ('order=title', 400, 'E400002'),
              ('include=user', 400, 'E400002'), ('count=yes', 400, 'E400002'),
              ('where=%7B', 400, 'E400001')]:
          answered, body, _ = call('GET', 'files', token=at, query=query)
          expect('refused ' + query, [answered, (body or {}).get('code')], [status, code])
      answered, body, _ = call('POST', 'files', token=at, body={})
      expect('POST /files', [answered, (body or {}).get('code')], [405, 'E405001'])
      # Deleting: the writer only; someone else's private file is not found.
      answered, body, _ = call('DELETE', 'files/public.png', token=bt)
      expect('bob deletes public', [answered, (body or {}).get('code')], [403, 'E403001'])
      answered, body, _ = call('DELETE', 'files/secret.png', token=bt)
      expect('bob deletes secret', [answered, (body or {}).get('code')], [404, 'E404001'])
      answered, body, _ = call('DELETE', 'files/public.png', token=None)
      expect('nobody deletes', [answered, (body or {}).get('code')], [403, 'E403001'])
      expect('still all', sorted(listing(at)), ['bobs.png', 'public.png', 'secret.png'])
      expect('alice deletes', call('DELETE', 'files/public.png/', token=at, body={})[0], 200)
      expect('alice deletes secret', call('DELETE', 'files/secret.png', token=at)[0], 200)
      expect('gone', sorted(listing(at)), ['bobs.png'])
      expect('bytes gone', call('GET', 'files/public.png', token=at)[0], 404)
      print(json.dumps(problems))
      """

  /// Serves `location`, runs the script, and returns the problems it found.
  private func check(_ forum: ForumFixture, keys: String, location: String) throws {
    var pictures: [String] = []
    for (index, side) in [4, 16, 64].enumerated() {
      let path = forum.root + "/picture\(index).png"
      try Data(PNGImages.honest(width: side, height: side)).write(to: URL(fileURLWithPath: path))
      pictures.append(path)
    }
    let sizes = try pictures.map { try Data(contentsOf: URL(fileURLWithPath: $0)).count }
    #expect(sizes == sizes.sorted() && Set(sizes).count == 3, "\(sizes)")
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: location)
    let run = try Clients.python(
      ServeFilesTests.script, [String(server.port), keys] + pictures, timeout: 180)
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(server.stop() == 0)
    #expect(server.stderr == "", "\(server.stderr)")
  }

  @Test func fileSearchOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    #expect(keys.status == 0, "\(keys.summary)")
    try check(forum, keys: keys.stdout, location: forum.db)
  }

  /// Private files live in `forum.private_files`: the server, acting for each app user, lists
  /// them only for their readers.
  @Test func fileSearchOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    try check(forum, keys: served.keys, location: served.server.uri)
  }
}
