"""The seed's demo app (NCMBMania/Swift_Forum_Demo) call by call through the Swift SDK's
requests (swift.py), then the same kinds of calls as the JavaScript (js.py) and Android
(android.py), iOS Objective-C (ios.py) and Unity (unity.py) SDKs build them, against `forum serve`. Checks what each app would see and prints
{"problems": [...], "thread": <the app's thread as the server answers it>}.
Arguments: PORT KEYS-JSON PICTURE.jpg PICTURE.png"""
import json, os, sys, uuid
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import android, ios, js, swift, unity, wire

port, keys = int(sys.argv[1]), json.loads(sys.argv[2])
jpeg, png = open(sys.argv[3], 'rb').read(), open(sys.argv[4], 'rb').read()
app, client = keys['applicationKey'], keys['clientKey']
problems = []


def expect(name, got, want):
    if got != want:
        problems.append([name, got, want])


def status(answer):
    return [answer.status, answer.code()]


# --- Swift_Forum_Demo through the Swift SDK ---------------------------------------------------
alice = swift.SwiftSDK(port, app, client)
answer = alice.automatic_user()  # NCMBUser.enableAutomaticUser(); automaticCurrentUser()
expect('swift: anonymous user', answer.status, 201)
me = answer.json.get('objectId')
# ContentView's session check: a Todo query with limit 1 must succeed.
answer = alice.find('Todo', limit=1)
expect('swift: session check', [answer.status, answer.json], [200, {'results': []}])
expect('swift: thread list', alice.find('Thread').status, 200)
# AddThreadView: the picture first, as NCMBFile(fileName: "<UUID>.jpg", acl:).save(data:).
acl = {'*': {'read': True}, me: {'read': True, 'write': True}}
picture = str(uuid.uuid4()).upper() + '.jpg'
answer = alice.save_file(picture, jpeg, acl)
expect('swift: NCMBFile.save with the epilogue CRLF', [answer.status, answer.json.get('fileName')],
       [201, picture])
answer = alice.save('Thread', {'title': 'From the demo app', 'description': 'with a picture',
                               'fileName': picture}, acl)
expect('swift: new thread', answer.status, 201)
thread_id = answer.json.get('objectId')
pointer = {'objectId': thread_id, '__type': 'Pointer', 'className': 'Thread'}
answer = alice.find('Thread', where={'objectId': thread_id})
thread = (answer.json.get('results') or [{}])[0]
expect('swift: the thread is listed', thread.get('fileName'), picture)
# AddCommentView, as another person.
bob = swift.SwiftSDK(port, app, client)
bob_id = bob.automatic_user().json.get('objectId')
# An ACL that leaves the author without write: refused, saying why.
answer = bob.save('Comment', {'text': 'Nobody may edit this', 'thread': pointer},
                  {'*': {'read': True}})
expect('swift: a comment its author may not write', status(answer), [403, 'E403001'])
expect('swift: the refusal says why', (answer.json or {}).get('error', '') != 'No access with ACL.',
       True)
answer = bob.save('Comment', {'text': 'Nice picture', 'thread': pointer},
                  {'*': {'read': True}, bob_id: {'read': True, 'write': True}})
expect('swift: comment', answer.status, 201)
bob_comment = answer.json.get('objectId')
answer = alice.save('Comment', {'text': 'Thanks', 'thread': pointer}, acl)
expect('swift: own comment', answer.status, 201)
# ThreadView: the comments by pointer, oldest first, a page of 20.
answer = alice.find('Comment', where={'thread': pointer}, order=['createDate'], limit=20)
expect('swift: comments by pointer', [c.get('text') for c in answer.json.get('results', [])],
       ['Nice picture', 'Thanks'])
# NCMBQuery.count(): count=1&limit=0.
answer = alice.count('Comment', where={'thread': pointer})
expect('swift: count with limit=0', [answer.status, answer.json], [200, {'count': 2, 'results': []}])
answer = alice.count('Thread')
expect('swift: count of threads', [answer.status, answer.json.get('results')], [200, []])
# ImageView: NCMBFile(fileName:).fetch().
answer = alice.fetch_file(picture)
expect('swift: ImageView fetch', [answer.status, answer.body[:2].hex()], [200, 'ffd8'])
# Delete of another's post: E403001, on which the app shows 「削除に失敗しました。権限がないようです。」
answer = alice.delete('Comment', bob_comment)
expect('swift: delete of another\'s comment', status(answer), [403, 'E403001'])
# Refusals say why: a signed write with no session, a bad signature, an unknown application.
nobody = swift.SwiftSDK(port, app, client)
answer = nobody.save('Comment', {'text': 'anonymous', 'thread': pointer})
expect('no session: code', status(answer), [401, 'E401001'])
expect('no session: says so', 'Session-Token' in (answer.json or {}).get('error', ''), True)
forger = swift.SwiftSDK(port, app, 'not-the-client-key')
answer = forger.find('Thread')
expect('bad signature: code', status(answer), [401, 'E401001'])
expect('bad signature: says so', 'Signature' in (answer.json or {}).get('error', ''), True)
stranger = swift.SwiftSDK(port, 'another-application', client)
expect('unknown application key', status(stranger.find('Thread')), [404, 'E404005'])

# --- The JavaScript SDK ------------------------------------------------------------------------
carol = js.JavaScriptSDK(port, app, client)
expect('js: anonymous login', carol.login_as_anonymous().status, 201)
expect('js: users query',
       carol.request('GET', 'users', {'where': {'objectId': {'$exists': True}}}).status, 200)
answer = carol.upload('js-picture.png', png, {'*': {'read': True}})
expect('js: upload (acl as a plain field)', [answer.status, answer.json.get('fileName')],
       [201, 'js-picture.png'])
answer = carol.save('Comment', {'text': 'From the web app', 'thread': pointer})
expect('js: comment', answer.status, 201)
answer = carol.fetch_all('Comment', where={'thread': pointer}, order='-createDate', limit=20,
                         include='user', count=True)
expect('js: comments with count and include', [answer.status, answer.json.get('count'),
       (answer.json.get('results') or [{}])[0].get('text')], [200, 3, 'From the web app'])
answer = carol.download('js-picture.png')
expect('js: download', [answer.status, answer.body[:4].hex()], [200, '89504e47'])

# --- The Android SDK ---------------------------------------------------------------------------
dave = android.AndroidSDK(port, app, client)
answer = dave.login_with_anonymous()
expect('android: anonymous login (timestamp percent-encoded, 12-hour clock)', answer.status, 201)
answer = dave.save_file('android-picture.png', png, {'*': {'read': True}})
expect('android: upload (file first, unquoted names)', [answer.status, answer.json.get('fileName')],
       [201, 'android-picture.png'])
answer = dave.find('Comment', where={'thread': pointer}, order='createDate', limit=20,
                   count=True)
expect('android: comments with count', [answer.status, answer.json.get('count')], [200, 3])
answer = dave.fetch_file('android-picture.png')
expect('android: fetch', [answer.status, answer.body[:4].hex()], [200, '89504e47'])

# The thread as the server answers it now, for the terminal to compare; its lastActivity is a
# Date, and a Date finds it again.
answer = alice.find('Thread', where={'objectId': thread_id})
thread = (answer.json.get('results') or [{}])[0]
answer = alice.find('Thread', where={'lastActivity': {'$gte': thread.get('lastActivity')}})
expect('swift: a Date compared with lastActivity',
       [t.get('objectId') for t in answer.json.get('results', [])], [thread_id])


# --- The iOS Objective-C SDK and the Unity SDK: each its own thread with a picture -----------
def own_thread(sdk, label, upload, change_acl, picture_name, magic):
    """Sign-up, a picture as the SDK uploads it, a thread and a comment, a query with
    where/order/limit, a count, the picture's ACL changed as the SDK changes it, a fetch, and a
    delete of another's post refused."""
    answer = sdk.login_with_anonymous() if hasattr(sdk, 'login_with_anonymous') \
        else sdk.log_in_anonymous()
    expect(label + ': anonymous sign-up', answer.status, 201)
    user = answer.json.get('objectId')
    acl = {'*': {'read': True}, user: {'read': True, 'write': True}}
    answer = upload(picture_name, acl)
    expect(label + ': upload', [answer.status, answer.json.get('fileName')], [201, picture_name])
    answer = sdk.save('Thread', {'title': 'From the %s app' % label, 'description': 'its picture',
                                 'fileName': picture_name}, acl)
    expect(label + ': new thread', answer.status, 201)
    own = {'__type': 'Pointer', 'className': 'Thread', 'objectId': answer.json.get('objectId')}
    expect(label + ': comment', sdk.save('Comment', {'text': label + ' says hi', 'thread': own},
                                         acl).status, 201)
    answer = sdk.find('Comment', where={'thread': own}, order=['-createDate'], limit=20)
    expect(label + ': comments by pointer (where, order, limit)',
           [answer.status, [c.get('text') for c in answer.json.get('results', [])]],
           [200, [label + ' says hi']])
    answer = sdk.find('Thread', where={'objectId': own['objectId']}, count=True)
    expect(label + ': count', [answer.status, answer.json.get('count')], [200, 1])
    answer = change_acl(picture_name, {user: {'read': True, 'write': True}})
    expect(label + ': the picture\'s ACL changed',
           [answer.status, 'updateDate' in (answer.json or {})], [200, True])
    answer = sdk.fetch_file(picture_name)
    expect(label + ': fetch', [answer.status, answer.body[:2].hex()], [200, magic])
    expect(label + ': the picture is now its owner\'s alone',
           alice.fetch_file(picture_name).status in (403, 404), True)
    answer = sdk.delete('Comment', bob_comment)
    expect(label + ': delete of another\'s comment', status(answer), [403, 'E403001'])


# A device in Tokyo: its local time labelled Z, 9 hours ahead.
erin = ios.IOSSDK(port, app, client, offset_hours=9)
own_thread(erin, 'iOS', lambda name, acl: erin.save_file(name, jpeg, acl), erin.update_file_acl,
           'ios-picture.jpg', 'ffd8')
# A device in Honolulu (10 hours behind) and one in Kiribati (14 ahead), without a session.
for hours in (-10, 14):
    answer = ios.IOSSDK(port, app, client, offset_hours=hours).find('Thread', limit=1)
    expect('iOS: a device at UTC%+d' % hours, answer.status, 200)
# A where with its braces left unescaped (a reading of CF's escaping) is read alike.
answer = ios.IOSSDK(port, app, client, braces=True).find('Thread', where={'title': {
    '$in': ['From the iOS app']}}, order=['-createDate'], limit=5)
expect('iOS: a where with raw braces', [answer.status, len(answer.json.get('results', []))],
       [200, 1])
# 15 hours is no time zone: refused as a stale timestamp.
answer = ios.IOSSDK(port, app, client, offset_hours=15).find('Thread', limit=1)
expect('iOS: a clock 15 hours off', status(answer), [401, 'E401001'])
frank = unity.UnitySDK(port, app, client)
own_thread(frank, 'Unity', lambda name, acl: frank.save_file(name, png, acl),
           lambda name, acl: frank.save_file(name, png, acl, saved_before=True),
           'unity-picture.png', '8950')
# A query without conditions: Unity sends where={} all the same.
answer = frank.find('Thread', limit=2, order=['-createDate'])
expect('Unity: where={}', [answer.status, len(answer.json.get('results', []))], [200, 2])
# A PUT's file part changes no bytes: the stored picture stays the one uploaded.
answer = frank.save_file('unity-picture.png', jpeg, {'*': {'read': True}}, mime='image/jpeg',
                         saved_before=True)
expect('Unity: a PUT with other bytes changes the ACL only', answer.status, 200)
answer = alice.fetch_file('unity-picture.png')
expect('Unity: the stored bytes are unchanged', [answer.status, answer.body[:2].hex()],
       [200, '8950'])

print(json.dumps({'problems': problems, 'thread': thread}))
