#!/usr/bin/env python3
"""Instructions `forum serve` spends on one request of the seed demo app's, under callgrind.

usage: python3 Scripts/bench-serve-instructions.py FORUM BOARD.db KIND [--count N] [--out FILE]

FORUM is a `forum` binary (build it keeping its symbols to read the profile:
`FORUM_KEEP_SYMBOLS=1 swift build -c release --scratch-path DIR --product forum`); BOARD.db a
seeded board, used in place (the requests only read it, after one anonymous sign-up): copy it
first. KIND is one of comments (ThreadView's page of 20 comments by pointer, by createDate),
count (`count=1&limit=0` of a thread's comments), thread (one thread by id), file (a picture),
list (a page of threads by -createDate). The server runs under `valgrind --tool=callgrind`;
50 requests warm it, the counters are zeroed (`callgrind_control -z`), N requests (200), each on
a different thread or file, are sent one after another on one keep-alive connection, and the
counters are dumped (`callgrind_control -d`, FILE.1; default callgrind.serve.out). Prints the
instructions of one request; `callgrind_annotate --inclusive=yes FILE.1` shows where they go.
"""
import http.client, json, os, subprocess, sys, tempfile, urllib.parse, uuid

import bench_support

args = sys.argv[1:]
if len(args) < 3:
    sys.exit(__doc__)
forum, db, kind = args[0], args[1], args[2]
count = int(args[args.index('--count') + 1]) if '--count' in args else 200
out = args[args.index('--out') + 1] if '--out' in args else 'callgrind.serve.out'
work = tempfile.mkdtemp(prefix='bench-instructions.')
env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=work, XDG_STATE_HOME=work, XDG_DATA_HOME=work,
           LANG='C')
keys = bench_support.board_keys(forum, db, env)
server = subprocess.Popen(
    ['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out, forum, '--db', db, '--json',
     'serve', '--listen', '127.0.0.1:0', '--user-writes', '0', '--address-writes', '0',
     '--reads-at-once', '0'],
    env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
host = json.loads(server.stdout.readline())['url'].split('//')[1].split('/')[0]
timestamp = bench_support.timestamp()


def signed(method, path, query=None, session=None):
    """The path with its query, and NCMB's signature headers."""
    return bench_support.signed_request(keys, host, timestamp, method, path, query, session)


def sqlite(sql):
    return subprocess.run(['sqlite3', db, sql], capture_output=True, text=True,
                          check=True).stdout.split()


connection = http.client.HTTPConnection('127.0.0.1', int(host.split(':')[1]), timeout=600)
path, headers = signed('POST', 'users')
connection.request('POST', path, json.dumps({'authData': {'anonymous': {'id': str(uuid.uuid4())}}}),
                   headers)
session = json.loads(connection.getresponse().read())['sessionToken']
threads = sqlite("SELECT objectId FROM objects WHERE public_class = 'Thread' ORDER BY random() "
                 f"LIMIT {count + 50}")
files = sqlite(f"SELECT name FROM files WHERE instr(readers, ' * ') > 0 LIMIT {count + 50}")
pointer = '{"__type":"Pointer","className":"Thread","objectId":"%s"}'


def request(index):
    thread = threads[index % len(threads)]
    where = json.dumps({'thread': json.loads(pointer % thread)}, separators=(',', ':'))
    return {
        'comments': lambda: signed('GET', 'classes/Comment',
                                   {'where': where, 'order': 'createDate', 'limit': '20'}, session),
        'count': lambda: signed('GET', 'classes/Comment',
                                {'where': where, 'count': '1', 'limit': '0'}, session),
        'thread': lambda: signed('GET', f'classes/Thread/{thread}', None, session),
        'file': lambda: signed('GET', f'files/{files[index % len(files)]}', None, session),
        'list': lambda: signed('GET', 'classes/Thread', {
            'limit': '20', 'order': '-createDate', 'skip': str(20 * (index % 250))}, session),
    }[kind]()


def send(indexes):
    for index in indexes:
        path, headers = request(index)
        connection.request('GET', path, headers=headers)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            sys.exit(f'bench-serve-instructions: {path}: {response.status} {body[:200]}')


try:
    send(range(count, count + 50))
    subprocess.run(['callgrind_control', '-z', str(server.pid)], check=True, capture_output=True)
    send(range(count))
    subprocess.run(['callgrind_control', '-d', str(server.pid)], check=True, capture_output=True)
    dump = out + '.1'
    summary = subprocess.run(['callgrind_annotate', dump], capture_output=True,
                             text=True).stdout
    total = next(int(line.split()[0].replace(',', '')) for line in summary.splitlines()
                 if 'PROGRAM TOTALS' in line)
    print(f'{kind}: {total // count:,} instructions a request ({count} requests; {dump})')
finally:
    server.terminate()
    server.wait(timeout=120)
