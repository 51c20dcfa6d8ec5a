"""The official Android SDK's requests (NIFCLOUD-mbaas/ncmb_android) as it builds them, as the
lead's reading of ncmb-core/src/main/java/com/nifcloud/mbaas/core/NCMBConnection.java and
NCMBRequest.java describes them:
- The timestamp: SimpleDateFormat("yyyy-MM-dd'T'hh:mm:ss.SSS'Z'") in GMT -- `hh` is the
  12-hour clock, so after 12:00 UTC it reads 12 hours early -- then URLEncoder.encode'd: the
  header itself carries %3A for `:`, and the signature uses that same encoded value.
- The query: key=URLEncoder.encode(value) (space -> +), in the JSONObject's order; a GET's
  parameters go into the signature, sorted with the others; the host is url.getHost() (no
  port), the path url.getPath().
- Headers: Content-Type, X-NCMB-Application-Key, X-NCMB-Timestamp, X-NCMB-Signature,
  Access-Control-Allow-Origin: * (sent as a request header), X-NCMB-Apps-Session-Token,
  X-NCMB-SDK-Version, X-NCMB-OS-Version.
- File POST (NCMBFileService): Content-Type multipart/form-data; boundary=<currentTimeMillis>;
  the file part FIRST with an UNQUOTED name and filename (name=file;
  filename=<URLEncoder.encode(fileName)>) and its Content-Type, then, for a non-empty ACL,
  name=acl; filename=acl, each part's data followed by CRLF, and the end --B--CRLF.
"""
import datetime, json, time, urllib.parse, uuid
import wire


def timestamp():
    moment = datetime.datetime.now(datetime.timezone.utc)
    text = moment.strftime('%Y-%m-%dT%I:%M:%S.%f')[:-3] + 'Z'  # %I: Java's hh
    return urllib.parse.quote_plus(text)


def url_encoder(value):
    """java.net.URLEncoder.encode(value, "UTF-8")."""
    return urllib.parse.quote_plus(value, safe='*-._')


def to_json(value):
    return json.dumps(value, separators=(',', ':'), ensure_ascii=False)


class AndroidSDK:
    def __init__(self, port, application_key, client_key):
        self.port, self.application_key, self.client_key = port, application_key, client_key
        self.session_token = None

    def request(self, method, subpath, query=None, body=b'', content_type='application/json'):
        path = '/2013-09-01/' + subpath
        pairs = ['%s=%s' % (name, url_encoder(value)) for name, value in (query or {}).items()]
        stamp = timestamp()
        signed = pairs if method == 'GET' else []
        headers = [('Content-Type', content_type),
                   ('X-NCMB-Application-Key', self.application_key),
                   ('X-NCMB-Timestamp', stamp),
                   ('X-NCMB-Signature', wire.signature(self.client_key, method, '127.0.0.1', path,
                                                       signed, self.application_key, stamp)),
                   ('Access-Control-Allow-Origin', '*'),
                   ('X-NCMB-SDK-Version', 'android-4.2.0'), ('X-NCMB-OS-Version', 'android-14')]
        if self.session_token:
            headers.append(('X-NCMB-Apps-Session-Token', self.session_token))
        target = path + ('?' + '&'.join(pairs) if pairs else '')
        return wire.send(self.port, method, target, headers, body)

    # NCMBUser.loginWithAnonymous()
    def login_with_anonymous(self, anonymous_id=None):
        answer = self.request('POST', 'users', body=to_json(
            {'authData': {'anonymous': {'id': anonymous_id or str(uuid.uuid4())}}}).encode())
        if answer.status == 201:
            self.session_token = answer.json['sessionToken']
        return answer

    # NCMBQuery.find() / count(): where, then the other conditions set
    def find(self, class_name, where=None, order=None, limit=None, count=False):
        query = {}
        if where:
            query['where'] = to_json(where)
        if order:
            query['order'] = order
        if limit is not None:
            query['limit'] = str(limit)
        if count:
            query['count'] = '1'
        return self.request('GET', 'classes/' + class_name, query)

    # NCMBObject.save()
    def save(self, class_name, fields, acl=None):
        body = dict(fields)
        if acl is not None:
            body['acl'] = acl
        return self.request('POST', 'classes/' + class_name, body=to_json(body).encode())

    # NCMBFile.save()
    def save_file(self, file_name, data, acl=None, mime='image/png'):
        boundary = str(int(time.time() * 1000))
        body = ('--%s\r\nContent-Disposition: form-data; name=file; filename=%s\r\n'
                'Content-Type: %s\r\n\r\n' % (boundary, url_encoder(file_name), mime)
                ).encode() + data + b'\r\n'
        if acl:
            body += ('--%s\r\nContent-Disposition: form-data; name=acl; filename=acl\r\n\r\n'
                     % boundary).encode() + to_json(acl).encode() + b'\r\n'
        body += ('--%s--\r\n' % boundary).encode()
        return self.request('POST', 'files/' + file_name, body=body,
                            content_type='multipart/form-data; boundary=' + boundary)

    # NCMBFile.fetch()
    def fetch_file(self, file_name):
        return self.request('GET', 'files/' + file_name)
