#!/usr/bin/env python3
"""An honest GET while app users attack `forum serve` (issue 28, H4), beside the same GET alone.

usage: python3 Scripts/bench-attack.py BUILD_DIR [--seconds S] [--attackers N]

Serves a new SQLite board with `forum serve`'s defaults (a 5 s time limit per request). A victim
reads `GET classes/Thread?limit=20` every 20 ms for S seconds (default 10; one keep-alive
connection, then a new connection each time) with no attack, then while ATTACKERS app users (each with 18 objects of
19,900 integers: an object holds at most 20,000 values) send, over and over:
  - all: the issue's `$all` of 400 values the arrays hold (one pass over each array now), and
  - slow: `$inArray` of 400 values none holds (400 comparisons an element: seconds a row, so
    each is stopped at the time limit and answered E500001).
Prints p50 / p99 / max of the victim's latency for each, and what the attackers were answered.
"""
import http.client, json, os, shutil, subprocess, sys
import threading, time, urllib.parse, uuid

import bench_support

args = sys.argv[1:]
if not args or args[0].startswith('-'):
    sys.exit(__doc__)
build = args[0]
seconds = float(args[args.index('--seconds') + 1]) if '--seconds' in args else 10
attackers = int(args[args.index('--attackers') + 1]) if '--attackers' in args else 4
forum = os.path.join(build, 'forum')
work, env = bench_support.scratch('bench-attack.', one_folder=True)
db, keys = bench_support.sqlite_board(forum, work, env)
server = subprocess.Popen([forum, '--db', db, '--json', 'serve', '--listen', '127.0.0.1:0'],
                          env=env, stdout=subprocess.PIPE, text=True)
port = int(json.loads(server.stdout.readline())['url'].split(':')[2].split('/')[0])


def signed(method, path, query=''):
    stamp = bench_support.timestamp()
    signature = bench_support.signature(
        keys['clientKey'], method, '127.0.0.1:%d' % port, path,
        bench_support.signed_text(keys['applicationKey'], stamp, query))
    return {'X-NCMB-Application-Key': keys['applicationKey'], 'X-NCMB-Timestamp': stamp,
            'X-NCMB-Signature': signature, 'Content-Type': 'application/json'}


def call(method, path, body=None, token=None, query='', connection=None):
    path = '/2013-09-01/' + path
    headers = signed(method, path, query)
    if token:
        headers['X-NCMB-Apps-Session-Token'] = token
    c = connection or http.client.HTTPConnection('127.0.0.1', port, timeout=120)
    c.request(method, path + ('?' + query if query else ''),
              json.dumps(body) if body is not None else None, headers)
    r = c.getresponse()
    answer = r.read()
    if connection is None:
        c.close()
    return r.status, json.loads(answer) if answer else {}


def signup():
    status, user = call('POST', 'users', {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
    assert status == 201, (status, user)
    return user['sessionToken']


def where(condition):
    return 'where=' + urllib.parse.quote(json.dumps(condition), safe='')


victim = signup()
for n in range(20):
    call('POST', 'classes/Thread', {'title': 'thread %d' % n, 'description': 'words'}, victim)
honest = 'limit=20'


def measure(keep_alive):
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=120) if keep_alive else None
    times = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        time.sleep(0.02)
        started = time.perf_counter()
        status, _ = call('GET', 'classes/Thread', token=victim, query=honest,
                         connection=connection)
        times.append((time.perf_counter() - started) * 1000)
        assert status == 200, status
    times.sort()
    global count
    count = len(times)
    return (times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))], times[-1])


tokens = []
for _ in range(attackers):
    token = signup()
    for _ in range(18):
        status, _ = call('POST', 'classes/Heavy', {'numbers': list(range(19900))}, token)
        assert status == 201, status
    tokens.append(token)
queries = {
    'all': where({'numbers': {'$all': list(range(19500, 19900))}}),
    'slow': where({'numbers': {'$inArray': list(range(-400, 0))}}),
}

rows = [('no attack', None)] + [(name, query) for name, query in queries.items()]
print('| attack | victim connection | p50 ms | p99 ms | max ms | attackers answered |')
print('|---|---|---|---|---|---|')
for name, query in rows:
    stop = threading.Event()
    answered = {}
    lock = threading.Lock()

    def attack(token):
        while not stop.is_set():
            started = time.perf_counter()
            status, body = call('GET', 'classes/Heavy', token=token, query=query)
            key = '%d %s' % (status, body.get('code', '')) if status != 200 else '200'
            with lock:
                count, total = answered.get(key, (0, 0.0))
                answered[key] = (count + 1, total + time.perf_counter() - started)

    threads = [threading.Thread(target=attack, args=(t,)) for t in tokens] if query else []
    for thread in threads:
        thread.start()
    time.sleep(1 if query else 0)
    measured = []
    for keep_alive in (True, False):
        result = measure(keep_alive)
        measured.append((keep_alive, count, result))
    stop.set()
    for thread in threads:
        thread.join()
    summary = ', '.join('%s ×%d (%.2f s each)' % (k, c, s / c)
                        for k, (c, s) in sorted(answered.items())) or '-'
    for keep_alive, count, (p50, p99, worst) in measured:
        print('| %s | %s (%d) | %.1f | %.1f | %.1f | %s |' % (
            name, 'keep-alive' if keep_alive else 'new each time', count, p50, p99, worst,
            summary))

server.terminate()
server.wait()
shutil.rmtree(work)
