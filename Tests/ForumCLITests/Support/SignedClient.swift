/// A small NCMB client of our own for the system python3, to put before a test's script: it
/// signs as the SDKs do (for what the PyPI SDK cannot send: files, `count`, bad input).
/// `sys.argv[1]` is the server's port, `sys.argv[2]` the board's keys as `forum keys --json`
/// prints them. `call` answers `(status, JSON body or None, raw bytes)`; its `headers` replace
/// the signed ones (None removes one).
enum SignedClient {
  static let prelude = """
    import base64, datetime, hashlib, hmac, http.client, json, sys, urllib.parse, uuid
    port, keys = int(sys.argv[1]), json.loads(sys.argv[2])
    def now(minutes=0):
        moment = datetime.datetime.utcnow() + datetime.timedelta(minutes=minutes)
        return moment.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'
    def signed(method, path, query='', key=None, stamp=None):
        stamp = stamp or now()
        pairs = ['SignatureMethod=HmacSHA256', 'SignatureVersion=2',
                 'X-NCMB-Application-Key=' + keys['applicationKey'], 'X-NCMB-Timestamp=' + stamp]
        if query:
            pairs += query.split('&')
        text = '\\n'.join([method, '127.0.0.1:%d' % port, path, '&'.join(sorted(pairs))])
        signature = base64.b64encode(hmac.new((key or keys['clientKey']).encode(), text.encode(),
                                              hashlib.sha256).digest()).decode()
        return {'X-NCMB-Application-Key': keys['applicationKey'], 'X-NCMB-Timestamp': stamp,
                'X-NCMB-Signature': signature}
    def call(method, path, body=None, token=None, query='', raw=None,
             content_type='application/json', key=None, headers=None, stamp=None):
        path = '/2013-09-01/' + path
        h = signed(method, path, query, key, stamp)
        h['Content-Type'] = content_type
        if token:
            h['X-NCMB-Apps-Session-Token'] = token
        for name, value in (headers or {}).items():
            if value is None:
                h.pop(name, None)
            else:
                h[name] = value
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        c.request(method, path + ('?' + query if query else ''), data, h)
        r = c.getresponse()
        answer = r.read()
        c.close()
        try:
            parsed = json.loads(answer) if answer else {}
        except ValueError:
            parsed = None
        return r.status, parsed, answer
    def multipart(name, data, acl=None, mime='image/png'):
        boundary = '_NCMBProjectBoundary'
        parts = []
        if acl is not None:
            parts.append(b'--' + boundary.encode() + b'\\r\\nContent-Disposition: form-data; '
                         b'name="acl"\\r\\n\\r\\n' + json.dumps(acl).encode() + b'\\r\\n')
        parts.append(b'--' + boundary.encode() + b'\\r\\nContent-Disposition: form-data; '
                     b'name="file"; filename="' + name.encode() + b'"\\r\\nContent-Type: '
                     + mime.encode() + b'\\r\\n\\r\\n' + data + b'\\r\\n')
        body = b''.join(parts) + b'--' + boundary.encode() + b'--\\r\\n'
        return body, 'multipart/form-data; boundary=' + boundary
    def upload(name, data, acl=None, token=None, mime='image/png'):
        body, content_type = multipart(name, data, acl, mime)
        return call('POST', 'files/' + name, raw=body, token=token, content_type=content_type)
    def signup():
        status, user, _ = call('POST', 'users',
                               {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
        assert status == 201, (status, user)
        return user['objectId'], user['sessionToken']
    def where(condition):
        return 'where=' + urllib.parse.quote(json.dumps(condition), safe='')

    """
}
