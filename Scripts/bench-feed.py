#!/usr/bin/env python3
"""The change feed over the network (issue 30): from a post's answer (committed) to a waiting
app's wake-up, over loopback, beside the floor of the same run (one signed GET's round trip).

Two `forum serve` on the same board: A holds the readers (a long-poll loop on forum/changes with
wait=25, and an event stream on forum/feed); the posts go to A itself (its commit kicks the
watcher at once) or to B, another process, whose commits only the engine's own wake-up tells A
(SQLite: data_version looked at every 50 ms; PostgreSQL: LISTEN).

usage: bench-feed.py FORUM-BINARY DB [--owner-db OWNER-DB] [--posts N]
  DB: the board as the servers open it (a SQLite file, or a PostgreSQL URI of a role granted
  forum_member and forum_server); OWNER-DB: where `forum keys` is run (default DB).
"""
import argparse, http.client, json, random, socket, statistics, subprocess, sys, threading, time
import uuid

from bench_support import signature, signed_text, timestamp

parser = argparse.ArgumentParser()
parser.add_argument('forum')
parser.add_argument('db')
parser.add_argument('--owner-db')
parser.add_argument('--posts', type=int, default=60)
args = parser.parse_args()

keys = json.loads(subprocess.run([args.forum, '--db', args.owner_db or args.db, '--json', 'keys'],
                                 check=True, capture_output=True, text=True).stdout)


def serve():
    process = subprocess.Popen([args.forum, '--db', args.db, 'serve', '--listen', '127.0.0.1:0',
                                '--json'], stdout=subprocess.PIPE, text=True)
    url = json.loads(process.stdout.readline())['url']
    return process, int(url.split(':')[2].split('/')[0])


def headers(port, method, path, query, token):
    stamp = timestamp()
    signed = signature(keys['clientKey'], method, '127.0.0.1:%d' % port, path,
                       signed_text(keys['applicationKey'], stamp, query))
    h = {'X-NCMB-Application-Key': keys['applicationKey'], 'X-NCMB-Timestamp': stamp,
         'X-NCMB-Signature': signed, 'Content-Type': 'application/json'}
    if token:
        h['X-NCMB-Apps-Session-Token'] = token
    return h


class Client:
    def __init__(self, port):
        self.port = port
        self.connection = http.client.HTTPConnection('127.0.0.1', port, timeout=60)

    def call(self, method, path, body=None, token=None, query=''):
        self.connection.request(method, path + ('?' + query if query else ''),
                                json.dumps(body) if body is not None else None,
                                headers(self.port, method, path, query, token))
        response = self.connection.getresponse()
        return response.status, json.loads(response.read() or b'{}')


def sign_up(client):
    status, body = client.call('POST', '/2013-09-01/users',
                               {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
    assert status == 201, body
    return body['sessionToken']


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def run(reader_port, writer_port):
    reader, writer = Client(reader_port), Client(writer_port)
    reader_token, writer_token = sign_up(reader), sign_up(writer)
    arrived_poll, arrived_stream = {}, {}
    stop = threading.Event()
    status, body = reader.call('GET', '/2013-09-01/forum/changes', token=reader_token)
    cursor = body['next']

    def poll():
        nonlocal cursor
        client = Client(reader_port)
        while not stop.is_set():
            status, body = client.call('GET', '/2013-09-01/forum/changes', token=reader_token,
                                       query='since=%d&wait=25' % cursor)
            now = time.monotonic()
            for change in body.get('changes', []):
                arrived_poll.setdefault(change['objectId'], now)
            cursor = body.get('next', cursor)

    def stream():
        path = '/2013-09-01/forum/feed'
        h = headers(reader_port, 'GET', path, 'since=%d' % cursor, reader_token)
        sock = socket.create_connection(('127.0.0.1', reader_port))
        lines = ['GET %s?since=%d HTTP/1.1' % (path, cursor), 'Host: 127.0.0.1:%d' % reader_port]
        sock.sendall(('\r\n'.join(lines + ['%s: %s' % kv for kv in h.items()]) + '\r\n\r\n').encode())
        sock.settimeout(1)
        data = b''
        while not stop.is_set():
            try:
                more = sock.recv(65536)
            except socket.timeout:
                continue
            if not more:
                break
            now = time.monotonic()
            data += more
            for line in data.split(b'\n'):
                if line.startswith(b'data: {"className"') or line.startswith(b'data: {'):
                    try:
                        arrived_stream.setdefault(json.loads(line[6:])['objectId'], now)
                    except ValueError:
                        pass
            data = data[data.rfind(b'\n') + 1:]
        sock.close()

    threads = [threading.Thread(target=poll, daemon=True), threading.Thread(target=stream, daemon=True)]
    for t in threads:
        t.start()
    time.sleep(1)
    posted = {}
    floor = []
    for n in range(args.posts):
        time.sleep(random.uniform(0.15, 0.35))
        status, body = writer.call('POST', '/2013-09-01/classes/Todo', {'title': 'post %d' % n},
                                   writer_token)
        posted[body['objectId']] = time.monotonic()
        # The floor: one signed GET's round trip on the reader's server, same moment.
        start = time.monotonic()
        reader.call('GET', '/2013-09-01/classes/Todo/' + body['objectId'], token=reader_token)
        floor.append((time.monotonic() - start) * 1000)
    time.sleep(2)
    stop.set()
    rows = {}
    for name, arrived in [('long-poll', arrived_poll), ('event stream', arrived_stream)]:
        samples = [(arrived[i] - t) * 1000 for i, t in posted.items() if i in arrived]
        rows[name] = (len(samples), samples)
    rows['floor: one signed GET'] = (len(floor), floor)
    return rows


servers = [serve(), serve()]
try:
    a, b = servers[0][1], servers[1][1]
    for title, writer in [('post to the same server', a), ('post through another server', b)]:
        for name, (count, samples) in run(a, writer).items():
            if not samples:
                print('| %s | %s | 0 of %d arrived |' % (title, name, args.posts))
                continue
            print('| %s | %s | %d/%d | %.1f ms | %.1f ms | %.1f ms |' % (
                title, name, count, args.posts, statistics.median(samples),
                percentile(samples, 95), max(samples)))
finally:
    for process, _ in servers:
        process.terminate()
        process.wait()
