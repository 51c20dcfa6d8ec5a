"""An app's data imported by `forum import ncmb` (Tests/ForumCLITests/Fixtures/ncmb-export),
then used through `forum serve` in the SDKs' own bytes (swift.py, js.py, android.py and
sdk_queries.py build each request as that SDK's source does):
- the imported anonymous users sign in again with the ids their devices kept: A the Swift SDK's
  way (automaticCurrentUser's POST users with authData.anonymous.id), B the Android SDK's
  (loginWithAnonymous); a new device (the JavaScript SDK's loginAsAnonymous) is someone new;
- GET answers the exported values; $nearSphere (km, miles) and $within/$box on the imported
  GeoPoints (Shop.geo, Post.location), $relatedTo on the imported relation (Post likedBy),
  $regex on the imported text, each from the SDKs' query encodings, answer what NCMB's
  documentation says: nearest first within the distance, what is inside the box, the
  relation's members, the strings the pattern matches, only what the reader may read;
- a catastrophic $regex sent the Swift SDK's way over the imported class is refused (E400002),
  cut off (E500001) or, by a regex engine that does not backtrack, answered rightly (no
  results), while the JavaScript app's plain GET is answered;
- A deletes its own imported post, the others are refused (E403001).
Prints the problems found as a JSON list. Arguments: PORT KEYS-JSON"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import android, sdk_queries, swift
from sdk_queries import Android, JavaScript, Swift, geo, pointer

port, keys = int(sys.argv[1]), json.loads(sys.argv[2])
problems = []


def expect(name, got, want):
    if got != want:
        problems.append([name, got, want])


def names(answer, field='name'):
    return sdk_queries.names(answer, problems, field)


A, B, T = 'AnonUserA0000001', 'AnonUserB0000002', 'TaroPassword0003'
app_keys = (port, keys['applicationKey'], keys['clientKey'])
alice = Swift(*app_keys)
answer = alice.automatic_user('3F2504E0-4F89-11D3-9A0C-0305E82C3301')
expect('swift: A signs in with its old id', [answer.status, (answer.json or {}).get('objectId')],
       [201, A])
bob = Android(*app_keys)
answer = bob.login_with_anonymous('9C1B7E2A-1D3F-4B5C-8E9F-0A1B2C3D4E5F')
expect('android: B signs in with its old id', [answer.status, (answer.json or {}).get('objectId')],
       [201, B])
web = JavaScript(*app_keys)
answer = web.login_as_anonymous()
expect('js: a new device is someone new',
       [answer.status, (answer.json or {}).get('objectId') in (A, B, T)], [201, False])

# --- The exported values, read back (JavaScript) -------------------------------------------------
post = web.request('GET', 'classes/Post/PostPublic000001')
expect('GET', post.status, 200)
post = post.json or {}
expect('dates', [post.get('createDate'), post.get('updateDate')],
       ['2021-06-01T12:00:00.001Z', '2021-06-02T12:00:00.002Z'])
expect('pointer', post.get('author'), pointer('user', A))
expect('pointer to a renamed class', post.get('thread'), pointer('AppThread', 'AppThreadOne0001'))
expect('pointer across classes', post.get('shop'), pointer('Shop', 'ShopTokyo0000001'))
expect('geo', post.get('location'), geo(35.681236, 139.767125))
expect('date', post.get('publishedAt'), {'__type': 'Date', 'iso': '2021-06-01T11:59:59.999Z'})
expect('relation, answered as NCMB does', post.get('likedBy'),
       {'__type': 'Relation', 'className': 'user'})
expect('values', [post.get('text'), post.get('tags'), post.get('likes')],
       ['はじめまして', ['hello', 'tokyo'], 3])
expect('acl', post.get('acl'), {'*': {'read': True}, A: {'read': True, 'write': True}})
answer = alice.request('GET', 'classes/Post/PostEditors00002')
expect('swift: a role reader reads', [answer.status, (answer.json or {}).get('likedBy')],
       [200, {'__type': 'Relation', 'className': 'user'}])
expect('android: others do not', bob.request('GET', 'classes/Post/PostEditors00002').status, 404)
expect('js: query by pointer', names(web.fetch_all('Post', {'author': pointer('user', A)}),
                                     'objectId'), ['PostPublic000001'])
answer = web.request('GET', 'classes/Shop/ShopOsaka0000002')
expect('another class', [answer.status, (answer.json or {}).get('geo'),
                         (answer.json or {}).get('openedAt')],
       [200, geo(34.702485, 135.495951), {'__type': 'Date', 'iso': '2019-10-01T01:00:00.000Z'}])

# --- GeoPoints: Shop.geo (Tokyo, Osaka 403 km away), Post.location ---------------------------
station = geo(35.681236, 139.767125)


def near(field, unit, distance):
    return {field: {'$nearSphere': station, unit: distance}}


expect('swift: shops within 500 km, nearest first',
       names(alice.find('Shop', near('geo', '$maxDistanceInKilometers', 500))),
       ['Tokyo', 'Osaka'])
expect('swift: shops within 40 km', names(alice.find('Shop', near(
    'geo', '$maxDistanceInKilometers', 40))), ['Tokyo'])
expect('js: shops within 200 miles', names(web.fetch_all('Shop', near(
    'geo', '$maxDistanceInMiles', 200))), ['Tokyo'])
expect('android: shops within 1 radian, nearest first', names(bob.find('Shop', near(
    'geo', '$maxDistanceInRadians', 1))), ['Tokyo', 'Osaka'])
osaka_box = {'geo': {'$within': {'$box': [geo(34.5, 135.0), geo(35.0, 136.0)]}}}
for sdk, answer in [('swift', alice.find('Shop', osaka_box)),
                    ('js', web.fetch_all('Shop', osaka_box)),
                    ('android', bob.find('Shop', osaka_box))]:
    expect(sdk + ': shops in a box around Osaka', names(answer), ['Osaka'])
expect('android: posts within 1 km', names(bob.find('Post', near(
    'location', '$maxDistanceInKilometers', 1)), 'objectId'), ['PostPublic000001'])
tokyo_box = {'location': {'$within': {'$box': [geo(35.6, 139.7), geo(35.7, 139.8)]}}}
expect('js: posts in a box around Tokyo', names(web.fetch_all('Post', tokyo_box), 'objectId'),
       ['PostPublic000001'])

# --- $relatedTo on the imported relation (Post likedBy: B and Taro) ----------------------------
liked = {'$relatedTo': {'object': pointer('Post', 'PostPublic000001'), 'key': 'likedBy'}}
# NCMBQuery<NCMBUser> and ncmb.User's queries ask `users`, each SDK encoding its where.
for sdk, answer in [
        ('swift', alice.request('GET', 'users', {'where': swift.encode_json(liked)})),
        ('js', web.request('GET', 'users', {'where': liked})),
        ('android', bob.request('GET', 'users', {'where': android.to_json(liked)}))]:
    expect(sdk + ': members of the relation', sorted(names(answer, 'objectId') or []), [B, T])

# --- $regex on the imported text ------------------------------------------------------------
expect('swift: regex on Japanese text', names(alice.find('Post', {'text': {'$regex': '^はじ'}}),
                                              'objectId'), ['PostPublic000001'])
expect('js: regex', names(web.fetch_all('Post', {'text': {'$regex': "'s post$"}}), 'objectId'),
       ['PostByB000000003'])
expect('swift: regex over a role-read post', names(alice.find('Post', {'text': {
    '$regex': 'only$'}}), 'objectId'), ['PostEditors00002'])
expect('android: regex finds nothing it may not read', names(bob.find('Post', {'text': {
    '$regex': 'only$'}}), 'objectId'), [])

# --- A catastrophic $regex the Swift SDK's way over the imported class, the JS app served -------
for _ in range(40):
    alice.save('Post', {'text': 'a' * 3000 + 'b'})
answer, served = sdk_queries.catastrophic_regex(
    lambda: alice.find('Post', {'text': {'$regex': '(a+)+$'}}),
    lambda: web.request('GET', 'classes/Shop/ShopTokyo0000001'))
if answer is not None:
    print(json.dumps({'catastrophic regex': [answer.status, answer.code()]}), file=sys.stderr)
expect('js: served beside the attack', [served.status, (served.json or {}).get('name')],
       [200, 'Tokyo'])
if answer is None:
    problems.append(['swift: catastrophic regex', 'no answer in 60 s'])
elif not sdk_queries.refused_cut_off_or_none_found(answer):
    problems.append(['swift: catastrophic regex', answer.status,
                     answer.body[:300].decode(errors='replace')])

# --- Deletes: A its own imported post; the others refused ---------------------------------------
answer = web.request('DELETE', 'classes/Post/PostPublic000001')
expect('js: a new user may not delete it', [answer.status, answer.code()], [403, 'E403001'])
answer = bob.request('DELETE', 'classes/Post/PostPublic000001')
expect('android: B may not delete it', [answer.status, answer.code()], [403, 'E403001'])
expect('swift: A deletes its own post', alice.delete('Post', 'PostPublic000001').status, 200)
expect('gone', alice.request('GET', 'classes/Post/PostPublic000001').status, 404)
expect('android: B deletes its own',
       bob.request('DELETE', 'classes/Post/PostByB000000003').status, 200)

# --- The imported file (Swift) -------------------------------------------------------------------
answer = alice.fetch_file('photo.png')
expect('file', [answer.status, answer.body[:8] == b'\x89PNG\r\n\x1a\n'], [200, True])
answer = alice.request('GET', 'files', {'where': swift.encode_json({'fileName': 'photo.png'})})
found = ((answer.json or {}).get('results') or [{}])[0]
expect('file dates and acl', [found.get('createDate'), found.get('acl')],
       ['2021-06-01T11:00:00.000Z', {'*': {'read': True}, A: {'read': True, 'write': True}}])
print(json.dumps(problems, ensure_ascii=False))
