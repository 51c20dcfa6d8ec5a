#!/usr/bin/env python3
"""What one password login costs through `forum serve` (issue 34), beside its floor in the same
run: an anonymous login (`POST users` with an `authData` id signed up before), which makes the
same session write without a password hash. Also a wrong password beside a name nobody has
(interleaved): the two refusals should cost the same.

usage: python3 Scripts/bench-login.py BUILD_DIR [--count N] [--parallel P]

Serves a new SQLite board (with `--logins 0`: no rate limit) and times N (default 20) of each,
one at a time, then N password logins from P (default 4) clients at once (each hash holds 64 MiB;
at most one per processor runs at a time, the others wait). Prints the median and p90 of each, and
the server's peak memory (VmHWM).
"""
import http.client, json, os, subprocess, sys, threading, time, uuid

import bench_support

args = sys.argv[1:]
if not args or args[0].startswith('-'):
    sys.exit(__doc__)
build = args[0]
count = int(args[args.index('--count') + 1]) if '--count' in args else 20
parallel = int(args[args.index('--parallel') + 1]) if '--parallel' in args else 4
forum = os.path.join(build, 'forum')
work, env = bench_support.scratch('bench-login.', one_folder=True)
db, keys = bench_support.sqlite_board(forum, work, env)
server = subprocess.Popen([forum, '--db', db, '--json', 'serve', '--listen', '127.0.0.1:0',
                           '--logins', '0', '--sign-ups', '0'],
                          env=env, stdout=subprocess.PIPE, text=True)
port = int(json.loads(server.stdout.readline())['url'].split(':')[2].split('/')[0])


def call(method, path, body=None):
    path = '/2013-09-01/' + path
    stamp = bench_support.timestamp()
    signature = bench_support.signature(
        keys['clientKey'], method, '127.0.0.1:%d' % port, path,
        bench_support.signed_text(keys['applicationKey'], stamp))
    headers = {'X-NCMB-Application-Key': keys['applicationKey'], 'X-NCMB-Timestamp': stamp,
               'X-NCMB-Signature': signature, 'Content-Type': 'application/json'}
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=120)
    start = time.monotonic()
    connection.request(method, path, json.dumps(body), headers)
    answer = connection.getresponse()
    answer.read()
    took = time.monotonic() - start
    connection.close()
    return answer.status, took


def summary(times):
    times = sorted(times)
    return 'median %6.1f ms  p90 %6.1f ms' % (times[len(times) // 2] * 1000,
                                               times[int(len(times) * 0.9)] * 1000)


try:
    anonymous = str(uuid.uuid4())
    assert call('POST', 'users', {'authData': {'anonymous': {'id': anonymous}}})[0] == 201
    assert call('POST', 'users', {'userName': 'bench', 'password': 'a password'})[0] == 201
    floor = [call('POST', 'users', {'authData': {'anonymous': {'id': anonymous}}})
             for _ in range(count)]
    logins = [call('POST', 'login', {'userName': 'bench', 'password': 'a password'})
              for _ in range(count)]
    wrong = []
    unknown = []
    for _ in range(count):  # interleaved, so that the machine's load weighs on both alike
        wrong.append(call('POST', 'login', {'userName': 'bench', 'password': 'not it'}))
        unknown.append(call('POST', 'login', {'userName': 'nobody', 'password': 'not it'}))
    assert all(s == 201 for s, _ in floor), floor
    assert all(s == 200 for s, _ in logins), logins
    assert all(s == 401 for s, _ in wrong + unknown), wrong + unknown
    together = []

    def client():
        for _ in range(count // parallel):
            together.append(call('POST', 'login', {'userName': 'bench', 'password': 'a password'}))

    threads = [threading.Thread(target=client) for _ in range(parallel)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    peak = [line for line in open('/proc/%d/status' % server.pid) if line.startswith('VmHWM')]
    print('anonymous login (floor)       ', summary([t for _, t in floor]))
    print('password login                ', summary([t for _, t in logins]))
    print('wrong password                ', summary([t for _, t in wrong]))
    print('unknown name (dummy hash)     ', summary([t for _, t in unknown]))
    print('password login, %d at once     ' % parallel, summary([t for _, t in together]))
    print('server', peak[0].strip() if peak else '')
finally:
    server.terminate()
    server.wait()
