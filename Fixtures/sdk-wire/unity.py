"""The official Unity SDK's requests (NIFCLOUD-mbaas/ncmb_unity) as it builds them, as the
lead's reading of ncmb_unity/Assets/NCMB/Script/NCMBConnection.cs, NCMBQuery.cs and NCMBFile.cs
describes them:
- NCMBConnection.cs: the timestamp is UTC "yyyy-MM-dd'T'HH:mm:ss.fff'Z'" with every `:`
  replaced by %3A, in the X-NCMB-Timestamp header AND in the string to sign. The signature
  takes the domain Uri's Host (no port), the path after the domain, and for a GET the query
  split on & and = as it is (still encoded) with the four fixed parameters, sorted ordinal.
  Headers: Content-Type application/json (a file POST or PUT: multipart/form-data;
  boundary=_NCMBBoundary), X-NCMB-Application-Key, X-NCMB-Signature, X-NCMB-Timestamp,
  X-NCMB-SDK-Version unity-x, X-NCMB-Apps-Session-Token when signed in.
- NCMBQuery.cs (_getFindParams, _makeWhereUrl): where (always, `{}` when no condition), limit,
  skip, order (joined by ,), include, then count=1 for CountAsync, each value JSON-serialized
  (a string as it is), Uri.EscapeUriString'd, then `:` -> %3A, in that order.
- NCMBFile.cs: a new file is a POST files/NAME and a file saved before (its ACL changed) a PUT
  files/NAME with the SAME multipart body: `--_NCMBBoundary` CRLF, Content-Disposition:
  form-data; name="file"; filename=<Uri.EscapeUriString(name)> (UNQUOTED), its Content-Type,
  the data; then, for a non-empty ACL, CRLF `--_NCMBBoundary` CRLF, name=acl; filename=acl
  (UNQUOTED), the ACL's JSON; then CRLF `--_NCMBBoundary--` and NOTHING after it (no CRLF).
- NCMBUser.cs (LoginWithAnonymousAsync): POST users {"authData":{"anonymous":{"id":UUID}}}.
"""
import datetime, json, urllib.parse, uuid
import wire

BOUNDARY = '_NCMBBoundary'


def timestamp():
    moment = datetime.datetime.now(datetime.timezone.utc)
    return (moment.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z').replace(':', '%3A')


def escape_uri_string(text):
    """.NET Uri.EscapeUriString: unreserved and reserved characters stay."""
    return urllib.parse.quote(text, safe="-_.!~*'();/?:@&=+$,#[]")


def to_json(value):
    """MiniJSON.Json.Serialize: no spaces."""
    return json.dumps(value, separators=(',', ':'), ensure_ascii=False)


class UnitySDK:
    def __init__(self, port, application_key, client_key):
        self.port, self.application_key, self.client_key = port, application_key, client_key
        self.session_token = None

    def request(self, method, subpath, query='', body=b'', content_type='application/json'):
        path = '/2013-09-01/' + subpath
        stamp = timestamp()
        signed = query.split('&') if method == 'GET' and query else []
        headers = [('Content-Type', content_type),
                   ('X-NCMB-Application-Key', self.application_key),
                   ('X-NCMB-Signature', wire.signature(self.client_key, method, '127.0.0.1', path,
                                                       signed, self.application_key, stamp)),
                   ('X-NCMB-Timestamp', stamp), ('X-NCMB-SDK-Version', 'unity-5.0.0')]
        if self.session_token:
            headers.append(('X-NCMB-Apps-Session-Token', self.session_token))
        return wire.send(self.port, method, path + ('?' + query if query else ''), headers, body)

    # NCMBUser.LoginWithAnonymousAsync
    def login_with_anonymous(self):
        answer = self.request('POST', 'users', body=to_json(
            {'authData': {'anonymous': {'id': str(uuid.uuid4())}}}).encode())
        if answer.status == 201:
            self.session_token = answer.json['sessionToken']
        return answer

    # NCMBQuery.FindAsync / CountAsync (_getFindParams, _makeWhereUrl)
    def find(self, class_name, where=None, limit=None, order=None, count=False):
        params = [('where', to_json(where or {}))]
        if limit is not None:
            params.append(('limit', to_json(limit)))
        if order:
            params.append(('order', ','.join(order)))
        if count:
            params.append(('count', to_json(1)))
        query = '&'.join('%s=%s' % (key, escape_uri_string(value).replace(':', '%3A'))
                         for key, value in params)
        return self.request('GET', 'classes/' + class_name, query)

    # NCMBObject.SaveAsync
    def save(self, class_name, fields, acl=None):
        body = dict(fields)
        if acl is not None:
            body['acl'] = acl
        return self.request('POST', 'classes/' + class_name, body=to_json(body).encode())

    # NCMBObject.DeleteAsync
    def delete(self, class_name, object_id):
        return self.request('DELETE', 'classes/%s/%s' % (class_name, object_id))

    def _file_body(self, file_name, data, acl, mime):
        body = ('--%s\r\nContent-Disposition: form-data; name="file"; filename=%s\r\n'
                'Content-Type: %s\r\n\r\n' % (BOUNDARY, escape_uri_string(file_name), mime)
                ).encode() + data
        if acl:
            body += ('\r\n--%s\r\nContent-Disposition: form-data; name=acl; filename=acl\r\n\r\n'
                     % BOUNDARY).encode() + to_json(acl).encode()
        return body + ('\r\n--%s--' % BOUNDARY).encode()

    # NCMBFile.SaveAsync: POST for a new file, PUT (the same body) for a file saved before
    def save_file(self, file_name, data, acl=None, mime='image/png', saved_before=False):
        return self.request('PUT' if saved_before else 'POST', 'files/' + file_name,
                            body=self._file_body(file_name, data, acl, mime),
                            content_type='multipart/form-data; boundary=' + BOUNDARY)

    # NCMBFile.FetchAsync
    def fetch_file(self, file_name):
        return self.request('GET', 'files/' + file_name)
