"""The seed app's calls through the `ncmb` SDK from PyPI (1.3.1), against `forum serve`.

Usage: python3 ncmb-seed-app.py HOST:PORT APPLICATION_KEY CLIENT_KEY IMAGE_FILE TERMINAL_TITLE
Trust the server's certificate with SSL_CERT_FILE. Prints one JSON object of what it saw.
File uploads, downloads and `count` go through signed HTTP of its own: the SDK has none of
them (its Query on 'files' is NCMB's file search, which it does use).
"""
import base64
import datetime
import hashlib
import hmac
import http.client
import json
import ssl
import sys
import urllib.parse
import uuid

from NCMB.Client import NCMB
from NCMB.NCMBRequest import NCMBRequest
from NCMB.NCMBSignature import NCMBSignature

fqdn, application_key, client_key, image_file, terminal_title = sys.argv[1:6]
NCMB.fqdn = fqdn  # the SDK signs the host with the port it is given
ncmb = NCMB(application_key, client_key)
seen = {}


def sign_up():
    user = ncmb.User()
    user.set('authData', {'anonymous': {'id': str(uuid.uuid4()).upper()}})
    user.save()
    return user.get('objectId'), user.get('sessionToken')


def raw(method, path, query='', body=b'', headers=None, session=None):
    """A request signed as the SDKs sign: host with port, raw path, sorted parameters."""
    timestamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'
    parameters = [p for p in query.split('&') if p] + [
        'SignatureMethod=HmacSHA256', 'SignatureVersion=2',
        'X-NCMB-Application-Key=' + application_key, 'X-NCMB-Timestamp=' + timestamp]
    parameters.sort(key=lambda p: p.split('=', 1)[0])
    full = '/2013-09-01/' + path
    string = '\n'.join([method, fqdn, full, '&'.join(parameters)])
    signature = base64.b64encode(
        hmac.new(client_key.encode(), string.encode(), hashlib.sha256).digest()).decode()
    all_headers = {'X-NCMB-Application-Key': application_key, 'X-NCMB-Timestamp': timestamp,
                   'X-NCMB-Signature': signature}
    if session:
        all_headers['X-NCMB-Apps-Session-Token'] = session
    all_headers.update(headers or {})
    host, port = fqdn.rsplit(':', 1)
    connection = http.client.HTTPSConnection(host, int(port), context=ssl.create_default_context())
    connection.request(method, full + ('?' + query if query else ''), body=body, headers=all_headers)
    response = connection.getresponse()
    return response.status, response.read()


# Anonymous sign-up (NCMBUser.enableAutomaticUser), then the app's session check on Todo.
alice, alice_token = sign_up()
ncmb.session_token = alice_token
seen['todo'] = len(ncmb.Query('Todo').limit(1).fetch_all())

# The picture first, as NCMBFile(fileName: "<UUID>.jpg", acl:), multipart with acl and file.
acl = {'*': {'read': True}, alice: {'read': True, 'write': True}}
name = str(uuid.uuid4()).upper() + '.png'
picture = open(image_file, 'rb').read()
boundary = '_NCMBProjectBoundary'


def upload(name, acl, session):
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="acl"\r\n\r\n{json.dumps(acl)}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f'Content-Type: image/png\r\n\r\n').encode() + picture + f'\r\n--{boundary}--\r\n'.encode()
    status, _ = raw('POST', 'files/' + name, body=body, session=session,
                    headers={'Content-Type': 'multipart/form-data; boundary=' + boundary})
    return status


seen['fileUpload'] = upload(name, acl, alice_token)

# A thread with title, description, fileName and the user's ACL.
thread = ncmb.Object('Thread')
thread.set('title', 'Posted from the app').set('description', 'through the SDK')
thread.set('fileName', name).set('acl', acl)
thread.save()
thread_id = thread.get('objectId')

threads = ncmb.Query('Thread').fetch_all()
mine = [t for t in threads if t.get('objectId') == thread_id]
seen['appThread'] = {k: mine[0].get(k) for k in ['title', 'number', 'user', 'fileName', 'acl']} if mine else None
terminal = [t for t in threads if t.get('title') == terminal_title]
seen['terminalThread'] = {k: terminal[0].get(k) for k in ['title', 'description', 'number']} if terminal else None

# Another user comments; the thread's comments are found by a pointer equality.
bob, bob_token = sign_up()
ncmb.session_token = bob_token
pointer = {'__type': 'Pointer', 'className': 'Thread', 'objectId': thread_id}
comment = ncmb.Object('Comment')
comment.set('text', 'A comment from the app').set('thread', pointer)
comment.save()
comments = ncmb.Query('Comment').equal_to('thread', pointer).fetch_all()
seen['comments'] = [{'text': c.get('text'), 'number': c.get('number')} for c in comments]

# Someone else's comment: the refusal the seed app shows as 「削除に失敗しました。」.
ncmb.session_token = alice_token
request = NCMBRequest()
time = datetime.datetime.now().isoformat()
path = f"/2013-09-01/classes/Comment/{comment.get('objectId')}"
headers = {'X-NCMB-Signature': NCMBSignature.create('DELETE', time, 'Comment', {}, comment.get('objectId')),
           'Content-Type': 'application/json', 'X-NCMB-Application-Key': application_key,
           'X-NCMB-Timestamp': time, 'X-NCMB-Apps-Session-Token': alice_token}
seen['refusedDelete'] = request.fetch('DELETE', f'https://{fqdn}{path}', headers, {})

# Your own delete works.
ncmb.session_token = bob_token
comment.delete()
seen['commentsAfterDelete'] = len(ncmb.Query('Comment').equal_to('thread', pointer).fetch_all())

# A comment that stays, for the terminal to see; count through signed HTTP.
kept = ncmb.Object('Comment')
kept.set('text', 'This one stays').set('thread', pointer)
kept.save()
where = urllib.parse.quote(json.dumps({'thread': pointer}, separators=(',', ':')), safe='')
status, body = raw('GET', 'classes/Comment', query=f'count=1&limit=1&where={where}', session=bob_token)
seen['count'] = json.loads(body).get('count')

# The picture read back, byte for byte.
status, body = raw('GET', 'files/' + name, session=bob_token)
seen['fileBack'] = status == 200 and body == picture
seen['threadId'] = thread_id

# NCMB's file search through the SDK (its Query on 'files'): the picture by its name, and a
# private file listed for its owner only.
private_name = str(uuid.uuid4()).upper() + '.png'
seen['privateUpload'] = upload(private_name, {alice: {'read': True, 'write': True}}, alice_token)
found = ncmb.Query('files').equal_to('fileName', name).fetch_all()
seen['fileSearch'] = [{k: f.get(k) for k in ['fileName', 'fileSize', 'mimeType']} for f in found]
seen['pictureName'], seen['pictureSize'], seen['privateName'] = name, len(picture), private_name
seen['bobsFiles'] = sorted(f.get('fileName') for f in ncmb.Query('files').fetch_all())
ncmb.session_token = alice_token
seen['alicesFiles'] = sorted(f.get('fileName') for f in ncmb.Query('files').fetch_all())
print(json.dumps(seen))
