import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Testing

/// Issue 34's query and update language through the built `forum serve` on both engines:
/// `$nearSphere` (nearest first, within the distance), `$within`/`$box` (edges included),
/// `$regex`, `$relatedTo` with `AddRelation`/`RemoveRelation`, `$inQuery`, `$select`,
/// `$ninArray`, `Add`/`AddUnique`/`Remove` from two clients at once, `include` two levels deep,
/// `batch` with a failing item, and a catastrophic `$regex` refused or cut while another
/// client is served. Each operator also runs where another user holds private rows: they
/// change nothing of the answer (the privacy cases of `ServePrivacyTests` for the new
/// operators are these).
@Suite("forum serve: the rest of NCMB's query and update language")
struct ServeOperatorsTests {
  static let script =
    SignedClient.prelude + """
      import threading
      mode = sys.argv[3]
      problems = []
      def expect(label, got, wanted):
          if got != wanted:
              problems.append([label, got, wanted])
      def ok(label, answer, status=200):
          if answer[0] != status:
              problems.append([label, answer[0], answer[2][:300].decode(errors='replace')])
          return answer[1] or {}
      def pointer(cls, oid):
          return {'__type': 'Pointer', 'className': cls, 'objectId': oid}
      def geo(lat, lon):
          return {'__type': 'GeoPoint', 'latitude': lat, 'longitude': lon}
      def find(cls, token, condition=None, extra=''):
          query = where(condition) if condition is not None else ''
          if extra:
              query = query + '&' + extra if query else extra
          return call('GET', 'classes/' + cls, token=token, query=query)
      def names(cls, token, condition, field='name', extra=''):
          body = ok('find %s %s' % (cls, json.dumps(condition)), find(cls, token, condition, extra))
          return [r.get(field) for r in body.get('results', [])]
      alice, ta = signup()
      bob, tb = signup()
      only_bob = {bob: {'read': True, 'write': True}}
      if mode == 'geo':
          spots = [('tokyo', 35.681, 139.767), ('shinjuku', 35.690, 139.700),
                   ('yokohama', 35.443, 139.638), ('osaka', 34.702, 135.496)]
          for name, lat, lon in spots:
              ok('spot', call('POST', 'classes/Spot', {'name': name, 'location': geo(lat, lon)}, ta), 201)
          ok('no point', call('POST', 'classes/Spot', {'name': 'nowhere'}, ta), 201)
          # Bob's private spot, a hundred metres from Tokyo station: Alice never sees it.
          ok('secret', call('POST', 'classes/Spot', {'name': 'secret', 'acl': only_bob,
                                                     'location': geo(35.6805, 139.7660)}, tb), 201)
          here = geo(35.681, 139.767)
          near = lambda **distance: dict({'$nearSphere': here}, **distance)
          expect('km', names('Spot', ta, {'location': near(**{'$maxDistanceInKilometers': 40})}),
                 ['tokyo', 'shinjuku', 'yokohama'])
          expect('miles', names('Spot', ta, {'location': near(**{'$maxDistanceInMiles': 5})}),
                 ['tokyo', 'shinjuku'])
          expect('radians', names('Spot', ta,
                                  {'location': near(**{'$maxDistanceInRadians': 40 / 6371})}),
                 ['tokyo', 'shinjuku', 'yokohama'])
          expect('any distance', names('Spot', ta, {'location': near()}),
                 ['tokyo', 'shinjuku', 'yokohama', 'osaka'])
          expect('bob', names('Spot', tb, {'location': near(**{'$maxDistanceInKilometers': 10})}),
                 ['tokyo', 'secret', 'shinjuku'])
          body = ok('count', find('Spot', ta, {'location': near(**{'$maxDistanceInKilometers': 40})},
                                  'count=1&limit=1'))
          expect('count', (body.get('count'), len(body.get('results', []))), (3, 1))
          # A box from Yokohama (southwest) to Shinjuku's latitude and Tokyo's longitude:
          # the three on its edges and corner are inside.
          box = {'location': {'$within': {'$box': [geo(35.443, 139.638), geo(35.690, 139.767)]}}}
          expect('box', sorted(names('Spot', ta, box)), ['shinjuku', 'tokyo', 'yokohama'])
          expect('box bob', sorted(names('Spot', tb, box)), ['secret', 'shinjuku', 'tokyo', 'yokohama'])
          status, body, _ = find('Spot', ta, {'location': {'$nearSphere': geo(95, 0)}})
          expect('bad point', (status, body.get('code')), (400, 'E400002'))
      elif mode == 'regex':
          for text in ['Hello world', 'hello there', 'bye', 'say hello']:
              ok('note', call('POST', 'classes/Note', {'text': text}, ta), 201)
          ok('secret', call('POST', 'classes/Note', {'text': 'hello secret', 'acl': only_bob}, tb), 201)
          expect('^hello', names('Note', ta, {'text': {'$regex': '^hello'}}, 'text'), ['hello there'])
          expect('i', sorted(names('Note', ta, {'text': {'$regex': '^hello', '$options': 'i'}}, 'text')),
                 ['Hello world', 'hello there'])
          expect('\\\\w+ \\\\w+$', sorted(names('Note', ta, {'text': {'$regex': 'o \\\\w+$'}}, 'text')),
                 ['Hello world', 'hello there'])
          expect('bob', sorted(names('Note', tb, {'text': {'$regex': '^hello'}}, 'text')),
                 ['hello secret', 'hello there'])
          body = ok('count', find('Note', ta, {'text': {'$regex': 'hello'}}, 'count=1&limit=0'))
          expect('count', body.get('count'), 2)
          for bad in [{'$regex': 'a', '$options': 'q'}, {'$regex': 1}, {'$regex': 'a' * 600},
                      {'$options': 'i'}]:
              status, body, _ = find('Note', ta, {'text': bad})
              expect('bad ' + json.dumps(bad)[:40], (status, body.get('code')), (400, 'E400002'))
      elif mode == 'catastrophic':
          for _ in range(40):
              ok('long', call('POST', 'classes/Long', {'text': 'a' * 3000 + 'b'}, ta), 201)
          answers = []
          def attack():
              try:
                  answers.append(find('Long', ta, {'text': {'$regex': '(a+)+$'}}))
              except Exception as error:
                  answers.append(('failed', {}, repr(error).encode()))
          attacker = threading.Thread(target=attack)
          attacker.start()
          victim = find('Thread', tb)
          attacker.join(60)
          expect('victim', victim[0], 200)
          status, body, raw = answers[0] if answers else ('still running', {}, b'')
          body = body or {}
          # Answered, never stalled: no match (PostgreSQL's engine does not backtrack), the
          # pattern refused (PCRE's step limit), or cut at the time limit.
          outcome = (status == 200 and body.get('results') == []) \\
              or (status == 400 and body.get('code') == 'E400002' and 'backtracks' in body.get('error', '')) \\
              or (status == 500 and body.get('code') == 'E500001' and 'limit' in body.get('error', ''))
          if not outcome:
              problems.append(['attacker', status, raw[:300].decode(errors='replace')])
          # The same strings with a pattern that does not backtrack: all found.
          body = ok('sane', find('Long', ta, {'text': {'$regex': '^a+b$'}}, 'count=1&limit=0'))
          expect('sane', body.get('count'), 40)
      elif mode == 'relations':
          players = {}
          for name in ['p1', 'p2', 'p3']:
              players[name] = ok('player', call('POST', 'classes/Player', {'name': name}, ta), 201)['objectId']
          players['hidden'] = ok('hidden', call('POST', 'classes/Player',
                                                {'name': 'hidden', 'acl': only_bob}, tb), 201)['objectId']
          team = ok('team', call('POST', 'classes/Team', {'name': 'team'}, ta), 201)['objectId']
          add = lambda *keys: {'members': {'__op': 'AddRelation', 'objects': [pointer('Player', players[k]) for k in keys]}}
          ok('add', call('PUT', 'classes/Team/' + team, add('p1', 'p2', 'p1'), ta))
          ok('add again', call('PUT', 'classes/Team/' + team, add('p2', 'p3'), ta))
          body = ok('get', call('GET', 'classes/Team/' + team, token=ta))
          expect('get', body.get('members'), {'__type': 'Relation', 'className': 'Player'})
          related = {'$relatedTo': {'object': pointer('Team', team), 'key': 'members'}}
          expect('related', sorted(names('Player', ta, related)), ['p1', 'p2', 'p3'])
          ok('remove', call('PUT', 'classes/Team/' + team, {'members': {
              '__op': 'RemoveRelation', 'objects': [pointer('Player', players['p1'])]}}, ta))
          expect('removed', sorted(names('Player', ta, related)), ['p2', 'p3'])
          # Bob adds his private player to the (publicly writable) team: Alice's query of the
          # relation still finds only what she may read.
          ok('bob adds', call('PUT', 'classes/Team/' + team, add('hidden'), tb))
          expect('alice', sorted(names('Player', ta, related)), ['p2', 'p3'])
          expect('bob', sorted(names('Player', tb, related)), ['hidden', 'p2', 'p3'])
          # A relation of another class, and an owner nobody may read.
          status, body, _ = call('PUT', 'classes/Team/' + team, {'members': {'__op': 'AddRelation',
              'objects': [pointer('Team', team)]}}, ta)
          expect('other class', (status, body.get('code')), (400, 'E400002'))
          mine = ok('bob team', call('POST', 'classes/Team', {'acl': only_bob}, tb), 201)['objectId']
          ok('bob relation', call('PUT', 'classes/Team/' + mine, add('p2'), tb))
          hidden = {'$relatedTo': {'object': pointer('Team', mine), 'key': 'members'}}
          expect('unreadable owner', names('Player', ta, hidden), [])
          expect('readable owner', names('Player', tb, hidden), ['p2'])
      elif mode == 'subqueries':
          posts = {}
          for name, tag, token, acl in [('A', 'x', ta, None), ('B', 'y', ta, None), ('C', 'z', tb, only_bob)]:
              fields = {'title': name, 'tag': tag}
              if acl:
                  fields['acl'] = acl
              posts[name] = ok('post', call('POST', 'classes/Post', fields, token), 201)['objectId']
          # Bob's public replies to each post, his private one's too.
          for name in posts:
              ok('reply', call('POST', 'classes/Reply', {'name': 'to ' + name,
                                                          'post': pointer('Post', posts[name])}, tb), 201)
          for likes in ['x', 'y', 'z']:
              ok('fan', call('POST', 'classes/Fan', {'name': 'likes ' + likes, 'likes': likes}, tb), 201)
          in_query = {'post': {'$inQuery': {'className': 'Post', 'where': {'tag': {'$in': ['x', 'z']}}}}}
          expect('inQuery alice', names('Reply', ta, in_query), ['to A'])
          expect('inQuery bob', sorted(names('Reply', tb, in_query)), ['to A', 'to C'])
          select = {'likes': {'$select': {'query': {'className': 'Post', 'where': {}}, 'key': 'tag'}}}
          expect('select alice', sorted(names('Fan', ta, select)), ['likes x', 'likes y'])
          expect('select bob', sorted(names('Fan', tb, select)), ['likes x', 'likes y', 'likes z'])
          body = ok('count', find('Reply', ta, in_query, 'count=1&limit=0'))
          expect('count', body.get('count'), 1)
          status, body, _ = find('Reply', ta, {'post': {'$inQuery': {'className': 'user'}}})
          expect('system class', (status, body.get('code')), (400, 'E400002'))
      elif mode == 'arrays':
          bag = ok('bag', call('POST', 'classes/Bag', {'name': 'bag', 'tags': ['a']}, ta), 201)['objectId']
          def adder(token, prefix):
              for n in range(10):
                  status = call('PUT', 'classes/Bag/' + bag,
                                {'tags': {'__op': 'Add', 'objects': ['%s%d' % (prefix, n)]}}, token)[0]
                  if status != 200:
                      problems.append(['concurrent add', prefix, n, status])
          threads = [threading.Thread(target=adder, args=(t, p)) for t, p in [(ta, 'alice'), (tb, 'bob')]]
          for t in threads:
              t.start()
          for t in threads:
              t.join()
          tags = ok('get', call('GET', 'classes/Bag/' + bag, token=ta)).get('tags', [])
          expect('both kept', sorted(tags), sorted(['a'] + ['alice%d' % n for n in range(10)]
                                                   + ['bob%d' % n for n in range(10)]))
          expect('own order', [t for t in tags if t.startswith('alice')], ['alice%d' % n for n in range(10)])
          ok('unique', call('PUT', 'classes/Bag/' + bag, {'tags': {'__op': 'AddUnique', 'objects': ['a', 'new', 'new', 1, {'k': [1]}]}}, ta))
          ok('remove', call('PUT', 'classes/Bag/' + bag, {'tags': {'__op': 'Remove', 'objects': [
              'alice%d' % n for n in range(10)] + ['bob%d' % n for n in range(10)] + [{'k': [1]}]}}, ta))
          tags = ok('get', call('GET', 'classes/Bag/' + bag, token=ta)).get('tags')
          expect('after', tags, ['a', 'new', 1])
          ok('missing', call('PUT', 'classes/Bag/' + bag, {'more': {'__op': 'AddUnique', 'objects': [True, None]}}, ta))
          expect('missing', ok('get', call('GET', 'classes/Bag/' + bag, token=ta)).get('more'), [True, None])
          status, body, _ = call('PUT', 'classes/Bag/' + bag, {'name': {'__op': 'Add', 'objects': [1]}}, ta)
          expect('not an array', (status, body.get('code')), (400, 'E400002'))
          expect('unchanged', ok('get', call('GET', 'classes/Bag/' + bag, token=ta)).get('name'), 'bag')
          # $ninArray, and Bob's private bag holding none of the values is not Alice's.
          ok('bob bag', call('POST', 'classes/Bag', {'name': 'private', 'tags': ['z'], 'acl': only_bob}, tb), 201)
          ok('other bag', call('POST', 'classes/Bag', {'name': 'other', 'tags': ['new']}, ta), 201)
          expect('ninArray', sorted(names('Bag', ta, {'tags': {'$ninArray': ['a', 1]}})), ['other'])
          expect('ninArray bob', sorted(names('Bag', tb, {'tags': {'$ninArray': ['a', 1]}})), ['other', 'private'])
          # A write refused by the ACL is refused as any write.
          mine = ok('private bag', call('POST', 'classes/Bag', {'tags': [], 'acl': {alice: {'read': True, 'write': True}, '*': {'read': True}}}, ta), 201)['objectId']
          status, body, _ = call('PUT', 'classes/Bag/' + mine, {'tags': {'__op': 'Add', 'objects': [1]}}, tb)
          expect('refused', (status, body.get('code')), (403, 'E403001'))
      elif mode == 'include':
          japan = ok('country', call('POST', 'classes/Country', {'name': 'Japan'}, ta), 201)['objectId']
          hidden = ok('hidden', call('POST', 'classes/Country', {'name': 'Hidden', 'acl': only_bob}, tb), 201)['objectId']
          tokyo = ok('city', call('POST', 'classes/City', {'name': 'Tokyo', 'country': pointer('Country', japan)}, ta), 201)['objectId']
          nowhere = ok('city', call('POST', 'classes/City', {'name': 'Nowhere', 'country': pointer('Country', hidden)}, tb), 201)['objectId']
          for name, city in [('shop', tokyo), ('other', nowhere)]:
              ok('shop', call('POST', 'classes/Shop', {'name': name, 'city': pointer('City', city)}, ta), 201)
          body = ok('include', find('Shop', ta, None, 'include=city.country&order=name'))
          shops = {r['name']: r for r in body.get('results', [])}
          shop = shops.get('shop', {})
          expect('level one', (shop.get('city') or {}).get('name'), 'Tokyo')
          expect('level two', ((shop.get('city') or {}).get('country') or {}).get('name'), 'Japan')
          expect('type', ((shop.get('city') or {}).get('country') or {}).get('__type'), 'Object')
          # Bob's private country stays a pointer for Alice, and is Bob's to see.
          other = (shops.get('other', {}).get('city') or {}).get('country') or {}
          expect('private', (other.get('__type'), other.get('name')), ('Pointer', None))
          body = ok('include bob', find('Shop', tb, {'name': 'other'}, 'include=city.country'))
          other = (body['results'][0].get('city') or {}).get('country') or {}
          expect('bob', other.get('name'), 'Hidden')
          status, body, _ = find('Shop', ta, None, 'include=a.b.c.d')
          expect('too deep', (status, body.get('code')), (400, 'E400002'))
      elif mode == 'batch':
          mine = ok('mine', call('POST', 'classes/Item', {'n': 0, 'acl': {alice: {'read': True, 'write': True}}}, ta), 201)['objectId']
          requests = [
              {'method': 'POST', 'path': '/2013-09-01/classes/Item', 'body': {'n': 1}},
              {'method': 'PUT', 'path': '/2013-09-01/classes/Item/AAAAAAAAAAAAAAAA', 'body': {'n': 9}},
              {'method': 'POST', 'path': '2013-09-01/classes/Item', 'body': {'n': 2}},
              {'method': 'PUT', 'path': '/2013-09-01/classes/Item/' + mine, 'body': {'n': 5}},
              {'method': 'POST', 'path': '/2013-09-01/users', 'body': {}},
          ]
          status, body, raw = call('POST', 'batch', {'requests': requests}, tb)
          if status != 200 or not isinstance(body, list) or len(body) != 5:
              problems.append(['batch', status, raw[:400].decode(errors='replace')])
          else:
              expect('created', [sorted(a.get('success', {}).keys()) for a in (body[0], body[2])],
                     [['createDate', 'objectId']] * 2)
              expect('missing', body[1].get('error', {}).get('code'), 'E404001')
              # Each request is authorized as the batch's caller: Bob cannot write Alice's.
              expect('refused', body[3].get('error', {}).get('code'), 'E404001')
              expect('not an object', body[4].get('error', {}).get('code'), 'E400002')
          body = ok('items', find('Item', tb, None, 'order=n'))
          expect('written', [r['n'] for r in body.get('results', [])], [1, 2])
          expect('unchanged', ok('mine', call('GET', 'classes/Item/' + mine, token=ta)).get('n'), 0)
          status, body, _ = call('POST', 'batch', {'requests': [requests[0]] * 51}, tb)
          expect('bounded', (status, body.get('code')), (400, 'E400002'))
          expect('none written', len(ok('items', find('Item', tb)).get('results', [])), 2)
      print(json.dumps(problems))
      """

  private func run(_ forum: ForumFixture, keys: String, location: String, mode: String) throws {
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: location)
    let run = try Clients.python(
      ServeOperatorsTests.script, [String(server.port), keys, mode], timeout: 300)
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(server.stop() == 0)
  }

  private func sqlite(_ mode: String) throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    #expect(keys.status == 0, "\(keys.summary)")
    try run(forum, keys: keys.stdout, location: forum.db, mode: mode)
  }

  private func postgres(_ mode: String) throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    try run(forum, keys: served.keys, location: served.server.uri, mode: mode)
  }

  static let modes = [
    "geo", "regex", "catastrophic", "relations", "subqueries", "arrays", "include", "batch",
  ]

  @Test(arguments: modes) func onSQLite(_ mode: String) throws { try sqlite(mode) }

  @Test(arguments: modes) func onPostgreSQL(_ mode: String) throws { try postgres(mode) }
}
