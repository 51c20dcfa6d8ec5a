"""Raw HTTP for the SDK wire fixtures: each SDK's module builds its request's bytes (method,
target, headers, body) as that SDK's source does, and `send` puts exactly those bytes on a socket
(no client library rewrites them). `Answer` is what the app would see: status and parsed JSON."""
import base64, hashlib, hmac, json, socket


def hmac_base64(key, text):
    return base64.b64encode(hmac.new(key.encode(), text.encode(), hashlib.sha256).digest()).decode()


def signature(client_key, method, host, path, query_pairs, application_key, timestamp):
    """NCMB's string to sign: METHOD, host, path, then the parameters sorted by name."""
    pairs = ['SignatureMethod=HmacSHA256', 'SignatureVersion=2',
             'X-NCMB-Application-Key=' + application_key, 'X-NCMB-Timestamp=' + timestamp]
    pairs += query_pairs
    pairs.sort(key=lambda pair: pair.split('=', 1)[0])
    return hmac_base64(client_key, '\n'.join([method, host, path, '&'.join(pairs)]))


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body
        try:
            self.json = json.loads(body) if body else {}
        except ValueError:
            self.json = None

    def code(self):
        return (self.json or {}).get('code')

    def __repr__(self):
        return '%d %s' % (self.status, self.body[:300].decode(errors='replace'))


def send(port, method, target, headers, body=b''):
    """One request on its own connection, byte for byte; `headers` is a list of (name, value)."""
    head = '%s %s HTTP/1.1\r\n' % (method, target)
    head += 'Host: 127.0.0.1:%d\r\n' % port
    for name, value in headers:
        head += '%s: %s\r\n' % (name, value)
    if body or method in ('POST', 'PUT'):
        head += 'Content-Length: %d\r\n' % len(body)
    head += 'Connection: close\r\n\r\n'
    connection = socket.create_connection(('127.0.0.1', port), timeout=60)
    connection.sendall(head.encode() + body)
    received = b''
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            break
        received += chunk
    connection.close()
    head, _, rest = received.partition(b'\r\n\r\n')
    lines = head.decode('latin-1').split('\r\n')
    status = int(lines[0].split(' ')[1])
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(':')
        fields[name.strip().lower()] = value.strip()
    if fields.get('transfer-encoding', '').lower() == 'chunked':
        body, data = b'', rest
        while data:
            size_line, _, data = data.partition(b'\r\n')
            size = int(size_line.split(b';')[0], 16)
            if size == 0:
                break
            body, data = body + data[:size], data[size + 2:]
        rest = body
    return Answer(status, fields, rest)
