#!/usr/bin/env python3
"""forum serve under issue 28's attacks: the server's peak memory and an honest client's GET
latency during each, beside the same GET with no attack (the floor), on one fresh board.

usage: python3 Scripts/bench-attacks.py BUILD_DIR [--seconds S] [--requests N]
                 [--rows none,flood,signed,slowloris,stall,bombs,writes] [--engines sqlite,postgres]
                 [--board BOARD.db] [--serve-args 'ARGS'] [--warmup S] [--nice N]

Each row starts a fresh `forum serve --listen 127.0.0.1:0` (so its VmHWM is that row's peak).
The honest client is another process, from 127.0.0.1: N signed `GET classes/Thread`, each on a
new connection, one after another. Attackers come from 127.0.0.2 (loopback too, another address):
  flood      100 connections at a time, each 10 MiB - 1 of multipart (the server's body limit) with
             no keys, again and again
  signed     the same with the board's keys (an app's keys are in every copy of the app): the
             body budget (--buffer-budget) is what bounds it
  slowloris  4,200 connections each sending half a header line, then a byte every 15 s
  stall      H4: 4 app users, each with 18 objects of 19,900 integers, each asking `$all` of
             400 values they hold and `$inArray` of 400 they do not, in turn, over and over (the
             second runs to the time limit, 5 s, and is answered E500001)
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
--nice N: the niceness of the attackers' process (19): their clients' own CPU is not the
server's, which on a machine of two cores they would otherwise take from it.
Prints a Markdown table: the load before and after, peak MB, honest p50 / p99 / max ms, honest
failures, what the attackers were answered, and while the honest client ran, the CPU time and
run-queue wait (time runnable but not running) of the server's threads and (PostgreSQL) of the
cluster's processes, with the database connections the server opened.
"""
import http.client, json, multiprocessing, os, resource, shutil, socket, subprocess, sys, tempfile
import threading, time, urllib.parse, uuid

import bench_support

args = sys.argv[1:]
if not args or args[0].startswith('-'):
    sys.exit(__doc__)
build = args[0]
seconds, requests = 10.0, 300
rows = ['none', 'flood', 'signed', 'slowloris', 'stall', 'bombs', 'writes']
engines = ['sqlite']
board = None
serve_args = []
warmup = 2.0
nice = 19
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
    elif args[i] == '--nice':
        nice = int(args[i + 1])
        i += 2
    elif args[i] == '--serve-args':
        serve_args = args[i + 1].split()
        i += 2
    else:
        sys.exit('unknown option ' + args[i])
forum = os.path.join(build, 'forum')
root = tempfile.mkdtemp(prefix='bench-attacks.')
os.chmod(root, 0o755)
env = dict(os.environ, HOME=root, XDG_CONFIG_HOME=root + '/config', XDG_STATE_HOME=root + '/state',
           XDG_DATA_HOME=root + '/data', LANG='C')
db = keys = None
cluster = cluster_log = cluster_postmaster = None
multiprocessing.set_start_method('fork')


def postgres_board():
    """A throwaway cluster (bench_support's), its connections logged: the server's URI and the
    owner's."""
    global cluster, cluster_log, cluster_postmaster
    cluster, server, owner = bench_support.postgres_board(
        forum, root, env, settings=['max_connections=200', 'log_connections=on'])
    cluster_log = cluster.sockets + '/server.log'
    cluster_postmaster = int(open(cluster.data + '/postmaster.pid').readline())
    return server, owner


def prepare(engine):
    """Sets `db` and `keys` for a board of `engine`; True when it is new (threads to be made)."""
    global db, keys
    if engine == 'postgres':
        db, owner = postgres_board()
    else:
        db = owner = root + '/board.sqlite'
        if board:
            shutil.copy(board, db)
        else:
            subprocess.run([forum, '--db', db, 'init'], env=env, check=True, capture_output=True)
    keys = json.loads(subprocess.run([forum, '--db', owner, '--json', 'keys'], env=env, check=True,
                                     capture_output=True, text=True).stdout)
    return engine == 'postgres' or not board


soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 16384), hard))


def signed(method, path, port, query=''):
    stamp = bench_support.timestamp()
    text = bench_support.signed_text(keys['applicationKey'], stamp, query)
    signature = bench_support.signature(keys['clientKey'], method, '127.0.0.1:%d' % port, path, text)
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
HEAVY = json.dumps({'numbers': list(range(19900))}).encode()  # H4's arrays (at most 20,000)
STALLS = ['where=' + urllib.parse.quote(json.dumps(condition), safe='') for condition in
          ({'numbers': {'$all': list(range(19500, 19900))}},
           {'numbers': {'$inArray': list(range(-400, 0))}})]


def app_attack(port, stop, answers, kind):
    """`bombs`: 8 app users store their objects, then read them in bulk two at once each;
    `writes`: 8 users POST 1 MiB objects one after another each; `stall`: 4 users store 18
    objects of 19,900 integers each, then query them with `$all` of 400 held values and
    `$inArray` of 400 absent ones in turn (H4: the second runs to the time limit)."""
    tokens = app_users(port, 4 if kind == 'stall' else 8)
    if kind == 'bombs':
        for token in tokens:
            for _ in range(20):
                status, answer = call(port, 'POST', 'classes/Bomb', BOMB, token)
                assert status == 201, (status, answer)
    if kind == 'stall':
        for token in tokens:
            for _ in range(18):
                status, answer = call(port, 'POST', 'classes/Heavy', HEAVY, token)
                assert status == 201, (status, answer)
    lock = threading.Lock()

    def attacker(token):
        connection = http.client.HTTPConnection('127.0.0.1', port, timeout=60,
                                                source_address=('127.0.0.2', 0))
        turn = 0
        while not stop.is_set():
            try:
                if kind == 'bombs':
                    status, answer = call(port, 'GET', 'classes/Bomb', token=token,
                                          query='limit=1000', connection=connection)
                elif kind == 'stall':
                    turn += 1
                    status, answer = call(port, 'GET', 'classes/Heavy', token=token,
                                          query=STALLS[turn % 2], connection=connection)
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


# One byte under the server's body limit (`HTTPServer`'s `bodyBytes`, 10 MiB since the remote
# engine's writes carry a 5 MiB picture in base64).
FLOOD_BYTES = (10 << 20) - 1


def flood(port, stop, answers, keyed):
    path = '/2013-09-01/files/a.png'
    body = b'--B\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n'
    body += b'x' * (FLOOD_BYTES - len(body))
    while not stop.is_set():
        head = ('POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sContent-Type: multipart/form-data; '
                'boundary=B\r\nContent-Length: %d\r\n\r\n'
                % (path, port, signed('POST', path, port) if keyed else '', FLOOD_BYTES)).encode()
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


def attack_process(attack, port, stop, ready, out):
    """The attackers of one row, in a process of their own at `--nice` (their clients' CPU is
    theirs, not the server's: on a machine of few cores they would otherwise take it from the
    server they attack). Puts their answers' tally on `out` once `stop` is set."""
    os.nice(nice)
    answers = []
    halt = threading.Event()
    if attack in ('bombs', 'writes', 'stall'):
        attackers = [threading.Thread(target=app_attack, args=(port, halt, answers, attack))]
    elif attack == 'flood' or attack == 'signed':
        attackers = [threading.Thread(target=flood, args=(port, halt, answers, attack == 'signed'))
                     for _ in range(100)]
    else:
        attackers = [threading.Thread(target=slowloris, args=(port, halt, answers))]
    for t in attackers:
        t.start()
    if attack in ('bombs', 'writes', 'stall'):
        # The attackers' setup (sign-ups, and for bombs their stored objects) is done before
        # the honest client starts: wait for their first answers.
        while not answers and attackers[0].is_alive():
            time.sleep(0.1)
    ready.set()
    stop.wait()
    halt.set()
    for t in attackers:
        t.join()
    tally = {}
    for answer in answers:
        tally[answer] = tally.get(answer, 0) + 1
    out.put(tally)


def load():
    return open('/proc/loadavg').read().split()[0]


def database_connections():
    """Connections the cluster has accepted so far (its log, `log_connections`)."""
    if not cluster_log:
        return 0
    with open(cluster_log, errors='replace') as log:
        return sum(1 for line in log if 'connection authorized' in line)


def run_queue(pids):
    """CPU and run-queue wait (ms) of every thread of `pids` so far (/proc/PID/task/*/schedstat)."""
    cpu = wait = 0
    for pid in pids:
        try:
            tasks = os.listdir('/proc/%d/task' % pid)
        except OSError:
            continue
        for task in tasks:
            try:
                fields = open('/proc/%d/task/%s/schedstat' % (pid, task)).read().split()
            except OSError:
                continue
            cpu += int(fields[0])
            wait += int(fields[1])
    return cpu / 1e6, wait / 1e6


def cluster_pids():
    if not cluster_postmaster:
        return []
    children = []
    for pid in os.listdir('/proc'):
        if pid.isdigit():
            try:
                if int(open('/proc/%s/stat' % pid).read().rsplit(')', 1)[1].split()[1]) == \
                        cluster_postmaster:
                    children.append(int(pid))
            except (OSError, IndexError, ValueError):
                pass
    return [cluster_postmaster] + children


def row(engine, name, attack):
    if (attack or 'none') not in rows:
        return
    load_before = load()
    server, port = start()
    connections_before = database_connections()
    stop, ready = multiprocessing.Event(), multiprocessing.Event()
    tallies = multiprocessing.Queue()
    attackers = None
    if attack:
        attackers = multiprocessing.Process(target=attack_process,
                                            args=(attack, port, stop, ready, tallies))
        attackers.start()
        ready.wait()
        time.sleep(warmup)
    server_before = run_queue([server.pid])
    cluster_before = run_queue(cluster_pids())
    out = multiprocessing.Queue()
    client = multiprocessing.Process(target=honest, args=(port, requests, out))
    began = time.time()
    client.start()
    latencies = out.get()
    client.join()
    server_after = run_queue([server.pid])
    cluster_after = run_queue(cluster_pids())
    while time.time() - began < seconds and attackers:
        time.sleep(0.2)
    stop.set()
    tally = tallies.get() if attackers else {}
    if attackers:
        attackers.join()
    peak = peak_mb(server)
    server.terminate()
    server.wait()
    connections = database_connections() - connections_before
    served = sorted(x for x in latencies if x is not None)
    failed = len(latencies) - len(served)
    p = lambda q: served[min(len(served) - 1, int(q * len(served)))] if served else float('nan')
    said = ', '.join('%s x%d' % (k, v) if v > 1 else k for k, v in sorted(tally.items())) or '-'
    print('| %s | %s | %s-%s | %.0f | %.2f | %.2f | %.2f | %d / %d | %s | %s |'
          % (engine, name, load_before, load(), peak, p(0.5), p(0.99),
             served[-1] if served else float('nan'), failed, len(latencies), said,
             schedule(server_before, server_after, cluster_before, cluster_after, connections)),
          flush=True)


def schedule(server_before, server_after, cluster_before, cluster_after, connections):
    """While the honest client ran: CPU and run-queue wait of the server's threads, and of the
    cluster's processes with the database connections the server opened (PostgreSQL)."""
    said = 'server %.0f / %.0f' % (server_after[0] - server_before[0],
                                   server_after[1] - server_before[1])
    if cluster_postmaster:
        said += '; database %.0f / %.0f, %d connections opened' % (
            cluster_after[0] - cluster_before[0], cluster_after[1] - cluster_before[1],
            connections)
    return said


def threads(port):
    """A new board's 20 threads, for the honest GET to read."""
    token = app_users(port, 1)[0]
    for n in range(20):
        status, answer = call(port, 'POST', 'classes/Thread',
                              {'title': 'thread %d' % n, 'description': 'words'}, token)
        assert status == 201, (status, answer)


print('Attackers at nice %d in their own process; load is /proc/loadavg before-after each row.'
      % nice)
print('| engine | attack | load | server peak MB | honest GET p50 ms | p99 ms | max ms | failed '
      '| attackers got | CPU / run-queue wait ms while the honest client ran |')
print('|---|---|---|---|---|---|---|---|---|---|')
try:
    for engine in engines:
        if prepare(engine):
            server, port = start()
            threads(port)
            server.terminate()
            server.wait()
        row(engine, 'none (floor)', None)
        row(engine, 'H3 flood: 100 x 10 MiB multipart, no keys', 'flood')
        row(engine, 'the same, signed with the app keys', 'signed')
        row(engine, 'slowloris: 4,200 half headers from one address', 'slowloris')
        row(engine, 'H4 stall: 4 users x $all / $inArray of 400 over 18 x 19,900 integers',
            'stall')
        row(engine, 'H5 bombs: 8 users x 2 reads at once of 20 x 40 KB of [[0],...]', 'bombs')
        row(engine, 'H6 writes: 8 users POSTing 1 MiB objects', 'writes')
        if cluster:
            cluster.stop(remove=True)
            cluster = cluster_log = cluster_postmaster = None
finally:
    if cluster:
        cluster.stop()
    subprocess.run(['rm', '-rf', root])
