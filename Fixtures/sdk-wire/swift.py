"""The official Swift SDK's requests (NIFCLOUD-mbaas/ncmb_swift 1.4.2) as it builds them, as
shared/NCMB-API.md and the lead's reading of the source describe them:
- NCMB/network/NCMBRequest.swift: headers X-NCMB-Application-Key, X-NCMB-Timestamp (ISO 8601,
  UTC, milliseconds, Z), X-NCMB-Signature, X-NCMB-Apps-Session-Token when signed in,
  X-NCMB-SDK-Version, X-NCMB-OS-Version, and Content-Type: application/json on every request
  (GET and DELETE too, with no body). The URL is domain + /2013-09-01/ + type + / + subpath,
  its query items sorted by name and encoded by URLComponents (`:` and `,` kept, space %20,
  `+` -> %2B); the signature takes url.host (no port) and, for a GET only, the query.
- NCMB/NCMBQuery.swift: where (JSONSerialization), limit, skip, order joined by `,`;
  count(): isCount, limit = 0, no order, no skip -> count=1&limit=0[&where=...].
- NCMB/service/NCMBFileService.swift (createRequestData): multipart with the boundary
  _NCMBProjectBoundary, the acl part sent as a file part (filename="acl", no Content-Type),
  the file part with Content-Type from the extension (application/octet-stream where it cannot
  tell), each part's data followed by CRLF, and the end --_NCMBProjectBoundary--CRLF CRLF (an
  epilogue CRLF after the closing delimiter).
- NCMB/NCMBUser.swift (automatic anonymous user): POST users {"authData":{"anonymous":{"id":UUID}}}.
"""
import datetime, json, urllib.parse, uuid
import wire

BOUNDARY = '_NCMBProjectBoundary'


def timestamp():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'


def url_components(value):
    """URLComponents' query encoding as the SDK leaves it: urlQueryAllowed, then + -> %2B."""
    return urllib.parse.quote(value, safe="!$'()*,/:;=?@~").replace('+', '%2B')


def encode_json(value):
    """JSONSerialization: no spaces, `/` escaped as \\/."""
    return json.dumps(value, separators=(',', ':'), ensure_ascii=False).replace('/', '\\/')


class SwiftSDK:
    def __init__(self, port, application_key, client_key):
        self.port, self.application_key, self.client_key = port, application_key, client_key
        self.session_token = None

    def request(self, method, subpath, items=None, body=b'', content_type='application/json'):
        return wire.send(self.port, *self.build(method, subpath, items, body, content_type))

    def build(self, method, subpath, items=None, body=b'', content_type='application/json'):
        """The request's (method, target, headers, body) as the SDK puts them on the wire."""
        path = '/2013-09-01/' + subpath
        pairs = ['%s=%s' % (name, url_components(str(value)))
                 for name, value in sorted((items or {}).items())]
        query = '&'.join(pairs)
        stamp = timestamp()
        signed = pairs if method == 'GET' else []
        headers = [('X-NCMB-Application-Key', self.application_key),
                   ('X-NCMB-Timestamp', stamp),
                   ('X-NCMB-Signature', wire.signature(self.client_key, method, '127.0.0.1', path,
                                                       signed, self.application_key, stamp)),
                   ('X-NCMB-SDK-Version', 'swift-1.4.2'), ('X-NCMB-OS-Version', 'Linux'),
                   ('Content-Type', content_type)]
        if self.session_token:
            headers.append(('X-NCMB-Apps-Session-Token', self.session_token))
        target = path + ('?' + query if query else '')
        return method, target, headers, body

    # NCMBUser.enableAutomaticUser() / automaticCurrentUser(); anonymous_id: the id the device
    # kept (an imported user signing in again), else a new UUID as the SDK makes one
    def automatic_user(self, anonymous_id=None):
        anonymous_id = anonymous_id or str(uuid.uuid4()).upper()
        answer = self.request('POST', 'users', body=encode_json(
            {'authData': {'anonymous': {'id': anonymous_id}}}).encode())
        if answer.status == 201:
            self.session_token = answer.json['sessionToken']
        return answer

    # NCMBQuery.find(): where only when a condition was set
    def find(self, class_name, where=None, limit=None, order=None, skip=None):
        items = {}
        if where:
            items['where'] = encode_json(where)
        if limit is not None:
            items['limit'] = limit
        if order:
            items['order'] = ','.join(order)
        if skip is not None:
            items['skip'] = skip
        return self.request('GET', 'classes/' + class_name, items)

    # NCMBQuery.count(): countQuery.limit = 0, isCount, no order or skip
    def count(self, class_name, where=None):
        items = {'count': 1, 'limit': 0}
        if where:
            items['where'] = encode_json(where)
        return self.request('GET', 'classes/' + class_name, items)

    # NCMBObject.save() of a new object: its fields and acl
    def save(self, class_name, fields, acl=None):
        body = dict(fields)
        if acl is not None:
            body['acl'] = acl
        return self.request('POST', 'classes/' + class_name, body=encode_json(body).encode())

    # NCMBObject.fetch()
    def fetch(self, class_name, object_id):
        return self.request('GET', 'classes/%s/%s' % (class_name, object_id))

    # NCMBObject.delete()
    def delete(self, class_name, object_id):
        return self.request('DELETE', 'classes/%s/%s' % (class_name, object_id))

    # NCMBFile(fileName:acl:).save(data:) -> NCMBFileService.createRequestData
    def save_file(self, file_name, data, acl=None, mime='application/octet-stream'):
        body = b''
        if acl is not None:
            body += ('--%s\r\nContent-Disposition: form-data; name="acl"; filename="acl"\r\n\r\n'
                     % BOUNDARY).encode() + encode_json(acl).encode() + b'\r\n'
        body += ('--%s\r\nContent-Disposition: form-data; name="file"; filename="%s"\r\n'
                 'Content-Type: %s\r\n\r\n' % (BOUNDARY, file_name, mime)).encode() + data + b'\r\n'
        body += ('--%s--\r\n\r\n' % BOUNDARY).encode()
        return self.request('POST', 'files/' + file_name, body=body,
                            content_type='multipart/form-data; boundary=' + BOUNDARY)

    # NCMBFile(fileName:).fetch()
    def fetch_file(self, file_name):
        return self.request('GET', 'files/' + file_name)
