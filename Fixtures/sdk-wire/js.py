"""The official JavaScript SDK's requests (NIFCLOUD-mbaas/ncmb_js 3.3.0) as it builds them, as
shared/NCMB-API.md and the lead's reading of the source describe them:
- lib/request.js: X-NCMB-Application-Key, X-NCMB-Signature, X-NCMB-Timestamp
  (new Date().toISOString()), Content-Type application/json (on a GET too),
  X-NCMB-SDK-Version, X-NCMB-Apps-Session-Token when signed in; the query sent through
  superagent's r.query(query).
- lib/signature.js: method, the configured fqdn (no port), the path, then each query value
  JSON.stringify'd when an object and encodeURIComponent'd (' -> %27), sorted by name.
- lib/query.js: where, limit, skip, order, include; count() adds count=1.
- lib/file.js upload: superagent .field("acl", JSON.stringify(acl)) (a plain field, no
  filename) then .attach("file", data, {filename}); node's form-data writes the boundary
  `--------------------------` + 24 digits, each part's data followed by CRLF, and the end
  --BOUNDARY--CRLF (no epilogue).
"""
import datetime, json, random, urllib.parse, uuid
import wire


def timestamp():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'


def encode_uri_component(value):
    return urllib.parse.quote(value, safe="-_.!~*'()").replace("'", '%27')


def stringify(value):
    return json.dumps(value, separators=(',', ':'), ensure_ascii=False)


class JavaScriptSDK:
    def __init__(self, port, application_key, client_key):
        self.port, self.application_key, self.client_key = port, application_key, client_key
        self.session_token = None

    def request(self, method, subpath, query=None, body=b'', content_type='application/json'):
        path = '/2013-09-01/' + subpath
        pairs = ['%s=%s' % (name, encode_uri_component(
            value if isinstance(value, str) else stringify(value)))
            for name, value in (query or {}).items()]
        stamp = timestamp()
        headers = [('X-NCMB-Application-Key', self.application_key),
                   ('X-NCMB-Signature', wire.signature(self.client_key, method, '127.0.0.1', path,
                                                       pairs, self.application_key, stamp)),
                   ('X-NCMB-Timestamp', stamp), ('Content-Type', content_type),
                   ('X-NCMB-SDK-Version', 'javascript-3.3.0')]
        if self.session_token:
            headers.append(('X-NCMB-Apps-Session-Token', self.session_token))
        target = path + ('?' + '&'.join(pairs) if pairs else '')
        return wire.send(self.port, method, target, headers, body)

    # ncmb.User.loginAsAnonymous()
    def login_as_anonymous(self, anonymous_id=None):
        answer = self.request('POST', 'users', body=stringify(
            {'authData': {'anonymous': {'id': anonymous_id or str(uuid.uuid4())}}}).encode())
        if answer.status == 201:
            self.session_token = answer.json['sessionToken']
        return answer

    # Query.fetchAll(): the conditions set, in the order set
    def fetch_all(self, class_name, where=None, order=None, limit=None, include=None,
                  count=False):
        query = {}
        if where:
            query['where'] = where
        if order:
            query['order'] = order
        if limit is not None:
            query['limit'] = str(limit)
        if include:
            query['include'] = include
        if count:
            query['count'] = '1'
        return self.request('GET', 'classes/' + class_name, query)

    # DataStore.save()
    def save(self, class_name, fields, acl=None):
        body = dict(fields)
        if acl is not None:
            body['acl'] = acl
        return self.request('POST', 'classes/' + class_name, body=stringify(body).encode())

    # ncmb.File.upload(name, data, acl)
    def upload(self, file_name, data, acl=None, mime='image/jpeg'):
        boundary = '-' * 26 + ''.join(random.choice('0123456789') for _ in range(24))
        body = b''
        if acl is not None:
            body += ('--%s\r\nContent-Disposition: form-data; name="acl"\r\n\r\n' % boundary
                     ).encode() + stringify(acl).encode() + b'\r\n'
        body += ('--%s\r\nContent-Disposition: form-data; name="file"; filename="%s"\r\n'
                 'Content-Type: %s\r\n\r\n' % (boundary, file_name, mime)).encode() + data
        body += ('\r\n--%s--\r\n' % boundary).encode()
        return self.request('POST', 'files/' + file_name, body=body,
                            content_type='multipart/form-data; boundary=' + boundary)

    # ncmb.File.download(name)
    def download(self, file_name):
        return self.request('GET', 'files/' + file_name)
