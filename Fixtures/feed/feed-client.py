"""Drives forum serve's change feed (GET forum/changes, GET forum/feed) as an app would, with
NCMB's signature (signature version 2) from Scripts/bench_support.py. Prints one JSON line: the problems found
(an empty list when all held), or a phase's state for the next phase.

usage: feed-client.py PORT[,PORT2] KEYS-JSON SCENARIO [STATE-JSON]
(PORT2: a second server on the same board, where `wake-elsewhere` posts.)
"""
import http.client, json, os, socket, sys, threading, time, uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../Scripts'))
import bench_support

ports = [int(p) for p in sys.argv[1].split(',')]
port, keys, scenario = ports[0], json.loads(sys.argv[2]), sys.argv[3]
state = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
problems = []


def headers(method, path, query, token, port=port):
    stamp = bench_support.timestamp()
    signature = bench_support.signature(
        keys['clientKey'], method, '127.0.0.1:%d' % port, path,
        bench_support.signed_text(keys['applicationKey'], stamp, query))
    h = {'X-NCMB-Application-Key': keys['applicationKey'], 'X-NCMB-Timestamp': stamp,
         'X-NCMB-Signature': signature, 'Content-Type': 'application/json'}
    if token:
        h['X-NCMB-Apps-Session-Token'] = token
    return h


def call(method, path, body=None, token=None, query='', timeout=60, port=port):
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=timeout)
    h = headers(method, path, query, token, port)
    c.request(method, path + ('?' + query if query else ''),
              json.dumps(body) if body is not None else None, h)
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        return r.status, json.loads(data or b'{}')
    except ValueError:
        return r.status, {'raw': data.decode('utf-8', 'replace')}


def user():
    status, body = call('POST', '/2013-09-01/users',
                        {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
    assert status == 201, (status, body)
    return body


def post(author, title, readers=None, port=port):
    acl = {'*': {'read': True}} if readers is None else {u['objectId']: {'read': True} for u in readers}
    acl.setdefault(author['objectId'], {})
    acl[author['objectId']] = {'read': True, 'write': True}
    status, body = call('POST', '/2013-09-01/classes/Todo', {'title': title, 'acl': acl},
                        author['sessionToken'], port=port)
    assert status == 201, (status, body)
    return body['objectId']


def changes(who, since=None, wait=None, limit=None, timeout=60):
    query = []
    if limit is not None:
        query.append('limit=%d' % limit)
    if since is not None:
        query.append('since=%d' % since)
    if wait is not None:
        query.append('wait=%d' % wait)
    return call('GET', '/2013-09-01/forum/changes', token=who['sessionToken'] if who else None,
                query='&'.join(query), timeout=timeout)


def latest(who):
    status, body = changes(who)
    assert status == 200, (status, body)
    return body['next']


def ids(batch):
    return [c['objectId'] for c in batch.get('changes', [])]


class Waiter(threading.Thread):
    """A long-poll in the background: its answer, and how long it took."""

    def __init__(self, who, since, wait):
        super().__init__()
        self.who, self.since, self.wait = who, since, wait
        self.status, self.body, self.seconds = None, None, None

    def run(self):
        start = time.monotonic()
        try:
            self.status, self.body = changes(self.who, self.since, self.wait, timeout=self.wait + 30)
        except Exception as error:
            self.status, self.body = 'error', {'error': repr(error)}
        self.seconds = time.monotonic() - start


class Stream:
    """GET forum/feed on a raw socket: events parsed as they come (chunked decoding by hand)."""

    def __init__(self, who, last_event_id=None, query=''):
        path = '/2013-09-01/forum/feed'
        h = headers('GET', path, query, who['sessionToken'])
        if last_event_id is not None:
            h['Last-Event-ID'] = str(last_event_id)
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=30)
        lines = ['GET %s%s HTTP/1.1' % (path, '?' + query if query else ''),
                 'Host: 127.0.0.1:%d' % port] + ['%s: %s' % kv for kv in h.items()]
        self.sock.sendall(('\r\n'.join(lines) + '\r\n\r\n').encode())
        self.file = self.sock.makefile('rb')
        self.status = int(self.file.readline().split()[1])
        self.headers = {}
        while True:
            line = self.file.readline().decode().strip()
            if not line:
                break
            name, _, value = line.partition(':')
            self.headers[name.lower()] = value.strip()
        self.text = ''

    def _more(self):
        size = int(self.file.readline().strip() or b'0', 16)
        if size == 0:
            raise EOFError('the stream ended')
        data = self.file.read(size)
        self.file.readline()
        self.text += data.decode()

    def event(self):
        """The next event (comments skipped): a dict of its fields."""
        while True:
            while '\n\n' not in self.text:
                self._more()
            block, self.text = self.text.split('\n\n', 1)
            fields = {}
            for line in block.split('\n'):
                if line.startswith(':'):
                    continue
                name, _, value = line.partition(':')
                fields[name] = value[1:] if value.startswith(' ') else value
            if 'data' in fields or 'event' in fields:
                return fields

    def close(self):
        self.sock.close()


if scenario == 'wake':
    # A long-poll is woken by another user's post, through the ACL: a private object reaches
    # the reader it names and nobody else, not even as an id.
    alice, bob, carol = user(), user(), user()
    start = latest(alice)
    alice_waits = Waiter(alice, start, 25)
    carol_waits = Waiter(carol, start, 4)
    alice_waits.start()
    carol_waits.start()
    time.sleep(1)
    secret = post(bob, 'for alice only', readers=[alice])
    alice_waits.join()
    if alice_waits.status != 200 or secret not in ids(alice_waits.body):
        problems.append(('alice was not woken with the private post', alice_waits.status,
                         alice_waits.body))
    carol_waits.join()
    if carol_waits.status != 200 or ids(carol_waits.body):
        problems.append(('carol got something', carol_waits.status, carol_waits.body))
    public = post(bob, 'for everyone')
    status, body = changes(carol, start)
    if status != 200 or ids(body) != [public]:
        problems.append(('carol reads', status, body))
    status, body = changes(alice, start)
    if status != 200 or ids(body) != [secret, public]:
        problems.append(('alice reads', status, body))
    # Bad parameters: one clear error each.
    for query in ['since=-1', 'since=x', 'since=1&wait=31', 'since=1&limit=0', 'since=1&bogus=1',
                  'since=99999999999999999999']:
        status, body = call('GET', '/2013-09-01/forum/changes', token=alice['sessionToken'],
                            query=query)
        if status != 400 or body.get('code') != 'E400002':
            problems.append(('bad query', query, status, body))
    status, body = changes(None, start)
    if status != 200 or ids(body) != [public]:
        problems.append(('no session', status, body))

elif scenario == 'wake-elsewhere':
    # The post is written through another server (another process, its own connections): only
    # the engine's own wake-up (SQLite data_version, PostgreSQL LISTEN) can wake the wait.
    alice, bob = user(), user()
    start = latest(alice)
    alice_waits = Waiter(alice, start, 25)
    stream = Stream(alice)
    alice_waits.start()
    time.sleep(1)
    first = post(bob, 'through the other server', port=ports[1])
    alice_waits.join()
    if alice_waits.status != 200 or ids(alice_waits.body) != [first]:
        problems.append(('the wait', alice_waits.status, alice_waits.body, alice_waits.seconds))
    event = stream.event()
    if json.loads(event.get('data', '{}')).get('objectId') != first:
        problems.append(('the stream', event))
    stream.close()

elif scenario == 'limits':
    # Waits are counted per app user; honest reads are answered while many wait; a client that
    # hangs up gives its place back.
    dave, erin = user(), user()
    others = [user() for _ in range(8)]
    start = latest(dave)
    waiting = [Waiter(w, start, 20) for w in others for _ in range(4)]
    mine = []
    for _ in range(4):
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
        query = 'since=%d&wait=20' % start
        c.request('GET', '/2013-09-01/forum/changes?' + query,
                  headers=headers('GET', '/2013-09-01/forum/changes', query, dave['sessionToken']))
        mine.append(c)
        time.sleep(0.1)
    for w in waiting:
        # One at a time: a session's first reads at once are refused past --reads-at-once.
        w.start()
        time.sleep(0.1)
    time.sleep(1)
    status, body = changes(dave, start, 20)
    if status != 429 or body.get('code') != 'E429001':
        problems.append(('a fifth wait of one user', status, body))
    for n in range(20):
        status, body = call('GET', '/2013-09-01/classes/Todo', token=erin['sessionToken'],
                            timeout=15)
        if status != 200:
            problems.append(('honest read', n, status, body))
    # One of dave's waits hangs up: its place comes back.
    mine[0].sock.shutdown(socket.SHUT_RDWR)
    mine[0].close()
    freed = False
    for _ in range(40):
        time.sleep(0.25)
        status, body = changes(dave, start, 1)
        if status == 200:
            freed = True
            break
    if not freed:
        problems.append(('the hung-up wait kept its place', status, body))
    post(erin, 'wake everyone')
    for w in waiting:
        w.join()
        if w.status != 200 or len(ids(w.body)) != 1:
            problems.append(('a waiter', w.status, w.body))
    for c in mine[1:]:
        r = c.getresponse()
        body = json.loads(r.read())
        if r.status != 200 or len(ids(body)) != 1:
            problems.append(('one of dave\'s', r.status, body))

elif scenario == 'stop-wait':
    # Waits begin, the harness is told, and sends SIGTERM: each wait is answered, long before
    # the 30 s it asked for.
    frank = user()
    start = latest(frank)
    waiting = [Waiter(frank, start, 30) for _ in range(3)]
    for w in waiting:
        # One at a time: a session's first reads at once are refused past --reads-at-once.
        w.start()
        time.sleep(0.2)
    stream = Stream(frank)
    time.sleep(1)
    print('waiting', flush=True)
    for w in waiting:
        w.join()
        if w.status != 200 or ids(w.body) or w.seconds > 20:
            problems.append(('a wait at the stop', w.status, w.body, w.seconds))
    try:
        event = stream.event()
        problems.append(('an event at the stop', event))
    except (EOFError, OSError, ValueError):
        # The stream ended (its last chunk, or the connection closed under it).
        pass

elif scenario == 'gap-setup':
    grace = user()
    start = latest(grace)
    for n in range(3):
        post(grace, 'before the gap %d' % n)
    state = {'user': grace, 'start': start}

elif scenario == 'gap-check':
    grace, start = state['user'], state['start']
    status, body = changes(grace, start)
    if status != 200 or body.get('missed') is not True or len(ids(body)) != 1:
        problems.append(('changes after the gap', status, body))
    stream = Stream(grace, last_event_id=start)
    event = stream.event()
    if event.get('event') != 'missed':
        problems.append(('the stream said no gap', event))
    event = stream.event()
    if event.get('id') is None or 'data' not in event:
        problems.append(('the stream after the gap', event))
    stream.close()

elif scenario == 'stream':
    # Events live, through the ACL; resumed from Last-Event-ID.
    alice, bob, carol = user(), user(), user()
    alice_stream = Stream(alice)
    carol_stream = Stream(carol)
    if alice_stream.status != 200 or not alice_stream.headers.get('content-type', '').startswith(
            'text/event-stream'):
        problems.append(('stream answer', alice_stream.status, alice_stream.headers))
    first = post(bob, 'public one')
    secret = post(bob, 'for alice', readers=[alice])
    hidden = post(bob, 'for bob alone', readers=[])
    last = post(bob, 'public two')
    seen = []
    for _ in range(3):
        event = alice_stream.event()
        seen.append((int(event['id']), json.loads(event['data'])['objectId']))
    if [s[1] for s in seen] != [first, secret, last]:
        problems.append(('alice saw', seen))
    event = carol_stream.event()
    change = json.loads(event['data'])
    if change['objectId'] != first:
        problems.append(('carol first', event))
    event = carol_stream.event()
    if json.loads(event['data'])['objectId'] != last:
        problems.append(('carol second', event))
    alice_stream.close()
    carol_stream.close()
    resumed = Stream(alice, last_event_id=seen[0][0])
    event = resumed.event()
    if (int(event['id']), json.loads(event['data'])['objectId']) != seen[1]:
        problems.append(('resumed at', event, seen))
    resumed.close()
    if hidden in [s[1] for s in seen]:
        problems.append(('hidden seen',))
    # Streams that hang up give their places back: more than the 4 a user may hold, one by one.
    for n in range(6):
        for _ in range(40):
            again = Stream(carol)
            status = again.status
            again.close()
            if status != 429:
                break
            time.sleep(0.25)
        if status != 200:
            problems.append(('stream after hang-ups', n, status))

else:
    problems.append(('no such scenario', scenario))

print(json.dumps(state if scenario == 'gap-setup' else problems), flush=True)
