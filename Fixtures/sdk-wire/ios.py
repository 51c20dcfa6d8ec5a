"""The official iOS Objective-C SDK's requests (NIFCLOUD-mbaas/ncmb_ios) as it builds them, as
the lead's reading of the source (shared sdk-wire notes) and NCMB/NCMBURLConnection/
NCMBURLConnection.m, NCMB/NCMBQuery.m and NCMB/NCMBFile.m describe them:
- NCMBURLConnection.m (createSignature): the timestamp is an NSDateFormatter
  "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'" (Gregorian, system locale) with NO time zone set: it writes the
  device's LOCAL time and a literal Z, so a device in Tokyo sends a time 9 hours ahead of UTC
  labelled Z (`offset_hours`, 9 by default). The string to sign is METHOD, the endpoint's
  authority (`componentsSeparatedByString:@"/"][2]`: with its port), the escaped path, then
  SignatureMethod, SignatureVersion, X-NCMB-Application-Key, X-NCMB-Timestamp and the query
  appended AS BUILT (not re-sorted here).
- NCMBURLConnection.m (initWithPath): the path, query included, and the query alone are escaped
  by CFURLCreateStringByAddingPercentEscapes with `!*();@+,%#"` to escape besides the
  characters illegal in a URL (space, `{`, `}`, `[`, `]`, `|`, `\\`, `^`, `<`, `>`, non-ASCII);
  `:`, `=`, `&`, `?`, `/`, `$` stay.
- NCMBQuery.m (queryToArray): where=<NSJSONSerialization>, order=<fields joined by ,>,
  limit=N (1 for a count or getFirstObject), skip, include, count=1, the array SORTED
  (sortedArrayUsingSelector: compare:) and joined by &: countObjects sends count=1&limit=1.
- NCMBURLConnection.m (createRequest, syncConnection): Content-Type application/json, or
  multipart/form-data; boundary=_NCMBProjectBoundary with Content-Length for a file POST;
  X-NCMB-Application-Key, X-NCMB-Signature, X-NCMB-Timestamp, X-NCMB-SDK-Version ios-x,
  X-NCMB-OS-Version ios-x, X-NCMB-Apps-Session-Token when signed in; a POST or PUT without data
  sends `{}`.
- NCMBFile.m: a new file is a POST files/NAME, one part per non-file key (the acl:
  name="acl"; filename="acl", no Content-Type) then name="file"; filename="NAME" with its
  Content-Type, each part's data followed by CRLF, the end --_NCMBProjectBoundary--CRLF CRLF; a
  file saved before (its ACL changed) is a PUT files/NAME with the JSON body {"acl":{...}}.
- NCMBAnonymousUtils.m: POST users {"authData":{"anonymous":{"id":UUID}}}.
"""
import datetime, json, urllib.parse, uuid
import wire

BOUNDARY = '_NCMBProjectBoundary'


def timestamp(offset_hours):
    """The device's local time (UTC + offset_hours) written with a literal Z."""
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=offset_hours)
    return moment.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'


def cf_escape(text, braces=False):
    """CFURLCreateStringByAddingPercentEscapes(text, NULL, "!*();@+,%#\\"", UTF-8). `braces`:
    `{`, `}`, `[`, `]` left as they are (the lead's reading of the notes; RFC 2396 calls them
    unwise, and CF escapes them)."""
    return urllib.parse.quote(text, safe="-._~/?:&=$'" + ('{}[]' if braces else ''))


def to_json(value):
    """NSJSONSerialization with no options: no spaces, `/` escaped as \\/."""
    return json.dumps(value, separators=(',', ':'), ensure_ascii=False).replace('/', '\\/')


class IOSSDK:
    def __init__(self, port, application_key, client_key, offset_hours=9, braces=False):
        self.port, self.application_key, self.client_key = port, application_key, client_key
        self.offset_hours, self.braces = offset_hours, braces
        self.session_token = None

    def request(self, method, subpath, query='', body=None, content_type='application/json'):
        path = cf_escape('/2013-09-01/' + subpath + ('?' + query if query else ''), self.braces)
        api_path = path.split('?')[0]
        escaped_query = cf_escape(query, self.braces) if method == 'GET' else ''
        stamp = timestamp(self.offset_hours)
        fqdn = '127.0.0.1:%d' % self.port  # kEndPoint split on "/": [2] keeps the port
        text = '%s\n%s\n%s\nSignatureMethod=HmacSHA256&SignatureVersion=2' % (
            method, fqdn, api_path)
        text += '&X-NCMB-Application-Key=%s&X-NCMB-Timestamp=%s' % (self.application_key, stamp)
        if escaped_query:
            text += '&' + escaped_query
        headers = [('Content-Type', content_type),
                   ('X-NCMB-Application-Key', self.application_key),
                   ('X-NCMB-Signature', wire.hmac_base64(self.client_key, text)),
                   ('X-NCMB-Timestamp', stamp),
                   ('X-NCMB-SDK-Version', 'ios-3.1.0'), ('X-NCMB-OS-Version', 'ios-17.4')]
        if self.session_token:
            headers.append(('X-NCMB-Apps-Session-Token', self.session_token))
        if body is None and method in ('POST', 'PUT'):
            body = b'{}'
        return wire.send(self.port, method, path, headers, body or b'')

    # NCMBAnonymousUtils logIn
    def log_in_anonymous(self):
        answer = self.request('POST', 'users', body=to_json(
            {'authData': {'anonymous': {'id': str(uuid.uuid4()).upper()}}}).encode())
        if answer.status == 201:
            self.session_token = answer.json['sessionToken']
        return answer

    # NCMBQuery findObjects / countObjects (queryToArray)
    def find(self, class_name, where=None, order=None, limit=None, count=False):
        items = []
        if where:
            items.append('where=' + to_json(where))
        if order:
            items.append('order=' + ','.join(order))
        if count:
            items.append('limit=1')
        elif limit:
            items.append('limit=%d' % limit)
        if count:
            items.append('count=1')
        return self.request('GET', 'classes/' + class_name, '&'.join(sorted(items)))

    # NCMBObject save
    def save(self, class_name, fields, acl=None):
        body = dict(fields)
        if acl is not None:
            body['acl'] = acl
        return self.request('POST', 'classes/' + class_name, body=to_json(body).encode())

    # NCMBObject delete
    def delete(self, class_name, object_id):
        return self.request('DELETE', 'classes/%s/%s' % (class_name, object_id))

    # NCMBFile save (a new file)
    def save_file(self, file_name, data, acl=None, mime='image/jpeg'):
        body = b''
        if acl:
            body += ('--%s\r\nContent-Disposition: form-data; name="acl"; filename="acl"\r\n\r\n'
                     % BOUNDARY).encode() + to_json(acl).encode() + b'\r\n'
        body += ('--%s\r\nContent-Disposition: form-data; name="file"; filename="%s"\r\n'
                 'Content-Type: %s\r\n\r\n' % (BOUNDARY, file_name, mime)).encode()
        body += data + ('\r\n--%s--\r\n\r\n' % BOUNDARY).encode()
        return self.request('POST', 'files/' + file_name, body=body,
                            content_type='multipart/form-data; boundary=' + BOUNDARY)

    # NCMBFile save (saved before: its ACL)
    def update_file_acl(self, file_name, acl):
        return self.request('PUT', 'files/' + file_name, body=to_json({'acl': acl}).encode())

    # NCMBFile getData
    def fetch_file(self, file_name):
        return self.request('GET', 'files/' + file_name)
