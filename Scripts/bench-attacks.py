#!/usr/bin/env python3
"""forum serve under issue 28's attacks: the server's peak memory and an honest client's GET
latency during each, beside the same GET with no attack (the floor), on one fresh board.

usage: python3 Scripts/bench-attacks.py BUILD_DIR [--seconds S] [--requests N]
                 [--rows none,flood,signed,slowloris,bombs,writes] [--engines sqlite,postgres]
                 [--board BOARD.db] [--serve-args 'ARGS'] [--warmup S]

Each row starts a fresh `forum serve --listen 127.0.0.1:0` (so its VmHWM is that row's peak).
The honest client is another process, from 127.0.0.1: N signed `GET classes/Thread`, each on a
new connection, one after another. Attackers come from 127.0.0.2 (loopback too, another address):
  flood      100 connections at a time, each 6 MiB - 1 of multipart with no keys, again and again
  signed     the same with the board's keys (an app's keys are in every copy of the app): the
             body budget (--buffer-budget) is what bounds it
  slowloris  4,200 connections each sending half a header line, then a byte every 15 s
  bombs      H5: 8 app users, each with 20 stored `Bomb` objects of 9,999 `[0]` (about 40 KB and
             20,000 values, the most one write may hold), each asking `GET classes/Bomb?limit=1000`
             over and over (two at once each: the reads-at-once budget): refused by the answer
             budget (E400002) after weighing the stored text
  writes     H6: 8 app users, each POSTing 1 MiB objects (9,990 arrays of one 96-byte string:
             19,981 values, the most nodes and strings a write may hold) to `classes/Big` over and
             over: every check of the engine runs (on PostgreSQL `forum.shape_within` and
             `forum.texts_within`), until --storage-per-user answers E413002 (the write runs,
             then is undone)
--engines postgres serves a throwaway PostgreSQL cluster's board (initdb as the postgres user when
run as root, a private socket, `forum init` by its owner, a server role granted forum_member and
forum_server), the same rows; its peak is the server's, not PostgreSQL's. --board serves a copy of
an SQLite board (e.g. the million-post one); else a new board with 20 threads. --serve-args adds
options to each `forum serve` (e.g. '--read-bytes 0', the server without its read budget).
--warmup S: seconds the attack runs before the honest client starts (2; a bucket's minute's worth
is spent at once, so a budget shows only once it is: --warmup 30).
Prints a Markdown table: peak MB, honest p50 / p99 / max ms, honest failures, and what the
attackers were answered.
"""
import http.client, json, multiprocessing, os, resource, shutil
import socket, subprocess, sys, threading, time, uuid

import bench_support

args = sys.argv[1:]
if not args or args[0].startswith('-'):
    sys.exit(__doc__)
build = args[0]
seconds, requests = 10.0, 300
rows = ['none', 'flood', 'signed', 'slowloris', 'bombs', 'writes']
engines = ['sqlite']
board = None
serve_args = []
warmup = 2.0
i = 1
while i < len(args):
    if args[i] == '--seconds':
        seconds = float(args[i + 1])
        i += 2
    elif args[i] == '--rows':
        rows = args[i + 1].split(',')
        i += 2
    elif args[i] == '--engines':
        engines = args[i + 1].split(',')
        i += 2
    elif args[i] == '--board':
        board = args[i + 1]
        i += 2
    elif args[i] == '--requests':
        requests = int(args[i + 1])
        i += 2
    elif args[i] == '--warmup':
        warmup = float(args[i + 1])
        i += 2
    elif args[i] == '--serve-args':
        serve_args = args[i + 1].split()
        i += 2
    else:
        sys.exit('unknown option ' + args[i])
forum = os.path.join(build, 'forum')
root, env = bench_support.scratch('bench-attacks.')
db = keys = None
cluster = None


def prepare(engine):
    """Sets `db` and `keys` for a board of `engine`; True when it is new (threads to be made)."""
    global db, keys, cluster
    if engine == 'postgres':
        cluster, db, owner = bench_support.postgres_board(
            forum, root, env, settings=['max_connections=200'])
    else:
        db = owner = root + '/board.sqlite'
        if board:
            shutil.copy(board, db)
        else:
            subprocess.run([forum, '--db', db, 'init'], env=env, check=True, capture_output=True)
    keys = bench_support.board_keys(forum, owner, env)
    return engine == 'postgres' or not board


soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 16384), hard))


def signed(method, path, port, query=''):
    stamp = bench_support.timestamp()
    signature = bench_support.signature(
        keys['clientKey'], method, '127.0.0.1:%d' % port, path,
        bench_support.signed_text(keys['applicationKey'], stamp, query))
    return ('X-NCMB-Application-Key: %s\r\nX-NCMB-Timestamp: %s\r\nX-NCMB-Signature: %s\r\n'
            % (keys['applicationKey'], stamp, signature))


def start():
    server = subprocess.Popen([forum, '--db', db, 'serve', '--listen', '127.0.0.1:0'] + serve_args,
                              env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    port = int(line.split('http://127.0.0.1:')[1].split('/')[0])
    return server, port


def call(port, method, path, body=None, token=None, query='', connection=None):
    """One signed request of an app (from 127.0.0.2): its status and NCMB code ('' for none)."""
    path = '/2013-09-01/' + path
    headers = dict(line.split(': ', 1) for line in signed(method, path, port, query).split('\r\n')
                   if line)
    headers['Content-Type'] = 'application/json'
    if token:
        headers['X-NCMB-Apps-Session-Token'] = token
    c = connection or http.client.HTTPConnection('127.0.0.1', port, timeout=60,
                                                 source_address=('127.0.0.2', 0))
    c.request(method, path + ('?' + query if query else ''),
              body if isinstance(body, (bytes, type(None))) else json.dumps(body), headers)
    r = c.getresponse()
    answer = r.read()
    if connection is None:
        c.close()
    try:
        answer = json.loads(answer) if answer else {}
    except ValueError:
        answer = {}
    return r.status, answer


def app_users(port, count):
    """Signs `count` app users up (from 127.0.0.2); their session tokens."""
    tokens = []
    for _ in range(count):
        status, user = call(port, 'POST', 'users', {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
        assert status == 201, (status, user)
        tokens.append(user['sessionToken'])
    return tokens


BOMB = json.dumps({'a': [[0]] * 9999}).encode()  # 20,000 values: the most a write may hold
BIG = json.dumps({'a': [['x' * 96]] * 9990}).encode()  # 19,981 values, 1 MiB with its strings
assert len(BIG) <= 1 << 20, len(BIG)


def app_attack(port, stop, answers, kind):
    """8 app users: `bombs` store their objects, then read them in bulk two at once each;
    `writes` POST 1 MiB objects one after another each."""
    tokens = app_users(port, 8)
    if kind == 'bombs':
        for token in tokens:
            for _ in range(20):
                status, answer = call(port, 'POST', 'classes/Bomb', BOMB, token)
                assert status == 201, (status, answer)
    lock = threading.Lock()

    def attacker(token):
        connection = http.client.HTTPConnection('127.0.0.1', port, timeout=60,
                                                source_address=('127.0.0.2', 0))
        while not stop.is_set():
            try:
                if kind == 'bombs':
                    status, answer = call(port, 'GET', 'classes/Bomb', token=token,
                                          query='limit=1000', connection=connection)
                else:
                    status, answer = call(port, 'POST', 'classes/Big', BIG, token,
                                          connection=connection)
                said = '%d %s' % (status, answer.get('code', '')) if status >= 300 else str(status)
            except (OSError, http.client.HTTPException) as error:
                said = type(error).__name__
                connection.close()
                connection = http.client.HTTPConnection('127.0.0.1', port, timeout=60,
                                                        source_address=('127.0.0.2', 0))
            with lock:
                answers.append(said)
        connection.close()
    per_user = 2 if kind == 'bombs' else 1
    threads = [threading.Thread(target=attacker, args=(t,)) for t in tokens for _ in range(per_user)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def peak_mb(server):
    for line in open('/proc/%d/status' % server.pid):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) / 1024
    return float('nan')


def honest(port, count, out):
    """Signed GETs, one connection each, from 127.0.0.1; latencies in ms (None: failed)."""
    latencies = []
    path = '/2013-09-01/classes/Thread'
    for _ in range(count):
        request = ('GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sConnection: close\r\n\r\n'
                   % (path, port, signed('GET', path, port))).encode()
        began = time.perf_counter()
        try:
            s = socket.create_connection(('127.0.0.1', port), timeout=10)
            s.sendall(request)
            answer = b''
            while True:
                more = s.recv(65536)
                if not more:
                    break
                answer += more
            s.close()
            ok = answer.startswith(b'HTTP/1.1 200')
        except OSError:
            ok = False
        latencies.append((time.perf_counter() - began) * 1000 if ok else None)
        time.sleep(0.01)
    out.put(latencies)


def flood(port, stop, answers, keyed):
    path = '/2013-09-01/files/a.png'
    body = b'--B\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n'
    body += b'x' * (6291455 - len(body))
    while not stop.is_set():
        head = ('POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sContent-Type: multipart/form-data; '
                'boundary=B\r\nContent-Length: 6291455\r\n\r\n'
                % (path, port, signed('POST', path, port) if keyed else '')).encode()
        try:
            s = socket.socket()
            s.bind(('127.0.0.2', 0))
            s.settimeout(30)
            s.connect(('127.0.0.1', port))
            try:
                s.sendall(head + body)
            except OSError:
                pass
            answers.append(s.recv(12)[9:12].decode() or 'closed')
            s.close()
        except OSError as error:
            answers.append(type(error).__name__)


def slowloris(port, stop, answers):
    held = []
    for _ in range(4200):
        s = socket.socket()
        s.bind(('127.0.0.2', 0))
        s.settimeout(2)
        try:
            s.connect(('127.0.0.1', port))
            s.sendall(b'GET /2013-09-01/classes/Thread HTTP/1.1\r\nHo')
            held.append(s)
        except OSError as error:
            answers.append(type(error).__name__)
    answers.append('%d connected' % len(held))
    tick = time.time()
    while not stop.wait(0.5):
        if time.time() - tick >= 15:
            tick = time.time()
            for s in held:
                try:
                    s.send(b's')
                except OSError:
                    pass
    alive = 0
    for s in held:
        s.setblocking(False)
        try:
            alive += 1 if s.recv(1) != b'' else 0
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
        s.close()
    answers.append('%d still open at the end' % alive)


def row(engine, name, attack):
    if (attack or 'none') not in rows:
        return
    server, port = start()
    stop = threading.Event()
    answers = []
    attackers = []
    if attack in ('bombs', 'writes'):
        attackers = [threading.Thread(target=app_attack, args=(port, stop, answers, attack))]
        attackers[0].start()
        # The attackers' setup (sign-ups, and for bombs their stored objects) is done before
        # the honest client starts: wait for their first answers.
        while not answers and attackers[0].is_alive():
            time.sleep(0.1)
    elif attack == 'flood' or attack == 'signed':
        attackers = [threading.Thread(target=flood, args=(port, stop, answers, attack == 'signed'))
                     for _ in range(100)]
    elif attack == 'slowloris':
        attackers = [threading.Thread(target=slowloris, args=(port, stop, answers))]
    for t in attackers:
        if attack not in ('bombs', 'writes'):
            t.start()
    if attackers:
        time.sleep(warmup)
    out = multiprocessing.Queue()
    client = multiprocessing.Process(target=honest, args=(port, requests, out))
    began = time.time()
    client.start()
    latencies = out.get()
    client.join()
    while time.time() - began < seconds and attackers:
        time.sleep(0.2)
    stop.set()
    for t in attackers:
        t.join()
    peak = peak_mb(server)
    server.terminate()
    server.wait()
    served = sorted(x for x in latencies if x is not None)
    failed = len(latencies) - len(served)
    p = lambda q: served[min(len(served) - 1, int(q * len(served)))] if served else float('nan')
    tally = {}
    for answer in answers:
        tally[answer] = tally.get(answer, 0) + 1
    said = ', '.join('%s x%d' % (k, v) if v > 1 else k for k, v in sorted(tally.items())) or '-'
    print('| %s | %s | %.0f | %.2f | %.2f | %.2f | %d / %d | %s |'
          % (engine, name, peak, p(0.5), p(0.99), served[-1] if served else float('nan'), failed,
             len(latencies), said), flush=True)


def threads(port):
    """A new board's 20 threads, for the honest GET to read."""
    token = app_users(port, 1)[0]
    for n in range(20):
        status, answer = call(port, 'POST', 'classes/Thread',
                              {'title': 'thread %d' % n, 'description': 'words'}, token)
        assert status == 201, (status, answer)


print('| engine | attack | server peak MB | honest GET p50 ms | p99 ms | max ms | failed '
      '| attackers got |')
print('|---|---|---|---|---|---|---|---|')
try:
    for engine in engines:
        if prepare(engine):
            server, port = start()
            threads(port)
            server.terminate()
            server.wait()
        row(engine, 'none (floor)', None)
        row(engine, 'H3 flood: 100 x 6 MiB multipart, no keys', 'flood')
        row(engine, 'the same, signed with the app keys', 'signed')
        row(engine, 'slowloris: 4,200 half headers from one address', 'slowloris')
        row(engine, 'H5 bombs: 8 users x 2 reads at once of 20 x 40 KB of [[0],...]', 'bombs')
        row(engine, 'H6 writes: 8 users POSTing 1 MiB objects', 'writes')
        if cluster:
            cluster.stop(remove=True)
            cluster = None
finally:
    if cluster:
        cluster.stop()
    subprocess.run(['rm', '-rf', root])
