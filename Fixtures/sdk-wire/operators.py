"""Issue 34's operators as the official SDKs put them on the wire, each request built by that
SDK's module here (swift.py, js.py, android.py: their signing, URL encoding and JSON),
with the conditions as each SDK's query source writes them:
- ncmb_swift NCMB/NCMBQuery.swift: `where(field:nearGeoPoint:withinKilometers:)` (and Miles,
  Radians) adds $nearSphere with the GeoPoint's toObject() and $maxDistanceIn… (a Double);
  `where(field:withinGeoBoxFromSouthwest:toNortheast:)` is {"$within":{"$box":[sw,ne]}};
  `where(field:toMatchPattern:)` is {"$regex":pattern} (no $options); `relatedTo(
  targetClassName:objectId:key:)` is {"$relatedTo":{"object":<pointer>,"key":…}}.
  NCMB/fieldtype/NCMBAddRelationOperator.swift (and Remove…): {"__op":"AddRelation",
  "objects":[<pointer>…]} inside the PUT of the object (NCMBObject.save()).
- ncmb_js lib/relation.js, lib/datastore.js (update) and lib/request.js: a Relation's add/remove
  is {"__op":"AddRelation"|"RemoveRelation","objects":[…]}, its objects made pointers and its
  relatingClass deleted before the PUT, which carries every field the object holds but
  objectId, createDate and updateDate.
- ncmb_js lib/query.js: withinKilometers/withinMiles/withinRadians ($nearSphere with
  toJSON(), then $maxDistanceIn… as given), withinSquare ($within/$box), regularExpressionTo
  ($regex), relatedTo, include(key) (one key: include=key), count() (count=1); fetchAll
  joins where=JSON.stringify(where), limit, skip, count, include, order with & and hands
  them through qs.parse, which decodes `+` as a space before superagent encodes them again.
  lib/datastore.js Data.batch: POST batch {"requests":[{"method":"POST","path":
  "2013-09-01/classes/NAME","body":{…}}…]} (the path without a leading slash), each answer
  read as item.success.
- ncmb_android NCMBQuery.java: whereWithinKilometers (a double), whereWithinMiles and
  whereWithinRadians (an int), whereWithinGeoBox, whereRelatedTo, setIncludeKey, and
  count() (count=1 with limit=1).
Checked against NCMB's documentation (shared/NCMB-API.md and the REST reference): $nearSphere
answers nearest first within the distance; $within/$box answers what is inside the box;
$relatedTo the relation's members; $regex the strings it matches; include the pointed object
in place of the pointer ({"__type":"Object","className":…}); batch one answer per request,
{"success":…} or {"error":…}. A catastrophic $regex sent the Swift SDK's way (its `+` kept as
%2B) is answered within the time limit while another app is served.
Prints {"problems": [...]}. Arguments: PORT KEYS-JSON"""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdk_queries
from sdk_queries import Android, JavaScript, Swift, geo, pointer, js

port, keys = int(sys.argv[1]), json.loads(sys.argv[2])
problems = []


def expect(name, got, want):
    if got != want:
        problems.append([name, got, want])


def names(answer, field='name'):
    return sdk_queries.names(answer, problems, field)


app_keys = (port, keys['applicationKey'], keys['clientKey'])
alice = Swift(*app_keys)
expect('swift: automatic user', alice.automatic_user().status, 201)
web = JavaScript(*app_keys)
expect('js: anonymous', web.login_as_anonymous().status, 201)
droid = Android(*app_keys)
answer = droid.login_with_anonymous()
expect('android: anonymous', answer.status, 201)
bob = (answer.json or {}).get('objectId')

# --- GeoPoints -------------------------------------------------------------------------------
spots = [('tokyo', 35.681, 139.767), ('shinjuku', 35.690, 139.700),
         ('yokohama', 35.443, 139.638), ('osaka', 34.702, 135.496)]
for name, latitude, longitude in spots:
    expect('swift: save ' + name,
           alice.save('Spot', {'name': name, 'location': geo(latitude, longitude)}).status, 201)
expect('swift: a spot without a point', alice.save('Spot', {'name': 'nowhere'}).status, 201)
# The Android user's private spot beside the station: only its owner's queries find it.
expect('android: private spot', droid.save('Spot', {
    'name': 'secret', 'location': geo(35.6805, 139.7660)},
    acl={bob: {'read': True, 'write': True}}).status, 201)
station = geo(35.681, 139.767)
near = lambda unit, distance: {'location': {'$nearSphere': station, unit: distance}}
# Swift: withinKilometers 40.0 (JSONSerialization writes 40), miles, radians.
expect('swift: near, km', names(alice.find('Spot', near('$maxDistanceInKilometers', 40))),
       ['tokyo', 'shinjuku', 'yokohama'])
expect('swift: near, miles', names(alice.find('Spot', near('$maxDistanceInMiles', 5.0))),
       ['tokyo', 'shinjuku'])
expect('swift: near, radians',
       names(alice.find('Spot', near('$maxDistanceInRadians', 40 / 6371))),
       ['tokyo', 'shinjuku', 'yokohama'])
# JS: withinKilometers/withinMiles/withinRadians, limit and count.
expect('js: near, km', names(web.fetch_all('Spot', near('$maxDistanceInKilometers', 40),
                                           limit=2)), ['tokyo', 'shinjuku'])
answer = web.fetch_all('Spot', near('$maxDistanceInMiles', 5), count=True)
expect('js: near, count', [names(answer), (answer.json or {}).get('count')],
       [['tokyo', 'shinjuku'], 2])
expect('js: near without a distance', names(web.fetch_all('Spot', {'location': {
    '$nearSphere': station}})), ['tokyo', 'shinjuku', 'yokohama', 'osaka'])
# Android (the private spot's owner): whereWithinMiles and whereWithinRadians take an int.
expect('android: near, miles', names(droid.find('Spot', near('$maxDistanceInMiles', 5))),
       ['tokyo', 'secret', 'shinjuku'])
expect('android: near, 1 radian', names(droid.find('Spot', near('$maxDistanceInRadians', 1))),
       ['tokyo', 'secret', 'shinjuku', 'yokohama', 'osaka'])
answer = droid.find('Spot', near('$maxDistanceInKilometers', 40.5), count=True)
expect('android: count', [len(names(answer) or []), (answer.json or {}).get('count')], [1, 4])
# A box from Yokohama to Shinjuku's latitude and Tokyo's longitude: edges inside.
box = {'location': {'$within': {'$box': [geo(35.443, 139.638), geo(35.690, 139.767)]}}}
for sdk, answer, wanted in [
        ('swift', alice.find('Spot', box), ['shinjuku', 'tokyo', 'yokohama']),
        ('js', web.fetch_all('Spot', box), ['shinjuku', 'tokyo', 'yokohama']),
        ('android', droid.find('Spot', box), ['secret', 'shinjuku', 'tokyo', 'yokohama'])]:
    expect(sdk + ': box', sorted(names(answer) or []), wanted)

# --- Relations (Swift SDK's operators), $relatedTo from three SDKs -----------------------------
players = {}
for name in ['p1', 'p2', 'p3']:
    answer = alice.save('Player', {'name': name})
    expect('swift: player', answer.status, 201)
    players[name] = (answer.json or {}).get('objectId')
answer = alice.save('Team', {'name': 'team'})
team = (answer.json or {}).get('objectId')
add = {'members': {'__op': 'AddRelation', 'objects': [
    pointer('Player', players[n]) for n in ['p1', 'p2', 'p3']]}}
expect('swift: AddRelation', alice.put('Team', team, add).status, 200)
related = {'$relatedTo': {'object': pointer('Team', team), 'key': 'members'}}
expect('swift: relatedTo', sorted(names(alice.find('Player', related)) or []), ['p1', 'p2', 'p3'])
remove = {'members': {'__op': 'RemoveRelation', 'objects': [pointer('Player', players['p1'])]}}
expect('swift: RemoveRelation', alice.put('Team', team, remove).status, 200)
for sdk, answer in [('swift', alice.find('Player', related)),
                    ('js', web.fetch_all('Player', related)),
                    ('android', droid.find('Player', related))]:
    expect(sdk + ': relatedTo after remove', sorted(names(answer) or []), ['p2', 'p3'])
answer = alice.request('GET', 'classes/Team/' + team)
expect('swift: the relation as NCMB answers it', (answer.json or {}).get('members'),
       {'__type': 'Relation', 'className': 'Player'})
# The JavaScript SDK: fetchById, then `team.set("members", new ncmb.Relation().add(p))` and
# update(), which PUTs every field it holds but objectId and the dates (acl and name too),
# the relation's objects made pointers and its relatingClass deleted (lib/request.js).
for op, player, wanted in [('AddRelation', 'p1', ['p1', 'p2', 'p3']),
                           ('RemoveRelation', 'p3', ['p1', 'p2'])]:
    fetched = web.request('GET', 'classes/Team/' + team).json or {}
    body = {k: v for k, v in fetched.items() if k not in ('objectId', 'createDate', 'updateDate')}
    body['members'] = {'__op': op, 'objects': [pointer('Player', players[player])]}
    expect('js: update with ' + op, web.request('PUT', 'classes/Team/' + team,
                                                body=js.stringify(body).encode()).status, 200)
    expect('js: relatedTo after ' + op, sorted(names(web.fetch_all('Player', related)) or []),
           wanted)

# --- $regex (Swift, JS) --------------------------------------------------------------------------
for text in ['Hello world', 'hello there', 'bye', 'say hello', 'hello+plus']:
    expect('swift: note', alice.save('Note', {'text': text}).status, 201)
expect('swift: regex', sorted(names(alice.find('Note', {'text': {'$regex': '^hello'}}), 'text')
                              or []), ['hello there', 'hello+plus'])
expect('js: regex', sorted(names(web.fetch_all('Note', {'text': {'$regex': 'o \\w*$'}}), 'text')
                           or []), ['Hello world', 'hello there'])
# The Swift SDK keeps `+` (%2B); the JS SDK's qs.parse turns it into a space, as NCMB got it.
expect('swift: regex with +', names(alice.find('Note', {'text': {'$regex': '^hello\\+'}}),
                                    'text'), ['hello+plus'])
expect('js: regex with + (a space on the wire)',
       names(web.fetch_all('Note', {'text': {'$regex': 'o+p'}}), 'text'), [])

# --- include (JS, Android) -------------------------------------------------------------------------
country = (alice.save('Country', {'name': 'Japan'}).json or {}).get('objectId')
city = (alice.save('City', {'name': 'Tokyo', 'country': pointer('Country', country)}).json
        or {}).get('objectId')
expect('swift: shop', alice.save('Shop', {'name': 'shop', 'city': pointer('City', city)}).status,
       201)
for sdk, answer in [('js', web.fetch_all('Shop', include='city')),
                    ('android', droid.find('Shop', include='city'))]:
    shop = ((answer.json or {}).get('results') or [{}])[0]
    expect(sdk + ': include', [shop.get('city', {}).get(k) for k in ('__type', 'className',
                                                                       'objectId', 'name')],
           ['Object', 'City', city, 'Tokyo'])
    expect(sdk + ': include one level', shop.get('city', {}).get('country'),
           pointer('Country', country))

# --- batch (JS DataStore.batch) ---------------------------------------------------------------------
answer = web.batch('Item', [{'n': 1}, {'n': 2}, {'n': 'three', 'acl': {'*': {'read': True}}}])
if answer.status != 200 or not isinstance(answer.json, list) or len(answer.json) != 3:
    problems.append(['js: batch', answer.status, answer.body[:300].decode(errors='replace')])
else:
    expect('js: batch answers', [sorted(item.get('success', {}).keys()) for item in answer.json],
           [['createDate', 'objectId']] * 3)
expect('js: batch wrote', sorted(str(n) for n in names(web.fetch_all('Item'), 'n') or []),
       ['1', '2', 'three'])
# One request of the batch refused, the others answered each on its own.
answer = web.request('POST', 'batch', body=js.stringify({'requests': [
    {'method': 'POST', 'path': '2013-09-01/classes/Item', 'body': {'n': 4}},
    {'method': 'PUT', 'path': '2013-09-01/classes/Item/AAAAAAAAAAAAAAAA', 'body': {'n': 5}},
]}).encode())
expect('js: batch, one missing', [list(item.keys()) for item in (answer.json or [])],
       [['success'], ['error']])

# --- A catastrophic $regex the Swift SDK's way, while the JS app is served --------------------------
for _ in range(40):
    alice.save('Long', {'text': 'a' * 3000 + 'b'})
started = time.monotonic()
answer, victim = sdk_queries.catastrophic_regex(
    lambda: alice.find('Long', {'text': {'$regex': '(a+)+$'}}),
    lambda: web.fetch_all('Spot', box))
seconds = time.monotonic() - started
expect('js: served beside the attack', victim.status, 200)
if answer:
    if not sdk_queries.refused_cut_off_or_none_found(answer):
        problems.append(['swift: catastrophic regex', answer.status,
                         answer.body[:300].decode(errors='replace')])
    print(json.dumps({'attack_seconds': round(seconds, 3)}), file=sys.stderr)
else:
    problems.append(['swift: catastrophic regex', 'no answer in 60 s'])
print(json.dumps({'problems': problems}))
