#!/usr/bin/env python3
"""Each query the seed demo app makes, through `forum serve`, beside the prompt and the sqlite3 shell.

usage: python3 Scripts/bench-serve-queries.py BUILD_DIR BOARD.db [--count N]

BUILD_DIR holds release `forum` and `forum-bench`; BOARD.db a seeded board (forum-bench seed),
copied to a temporary directory first. For each of the demo app's queries (the thread list and its
pages, one thread, a thread's comments by pointer in createDate, -createDate and number order, a
thread's comment count, a file) it sends N different requests (N different threads, pages or
files, so that the read cache never answers) one after another on one keep-alive connection and
takes the median time of one; the HTTP floor is `forum-bench serve-floor` answering a page of
threads from memory, timed the same way. The sqlite3 shell runs the same N reads in their best
plan (the index the server's plan uses, named in the table) in one process, less the time of the
shell starting; the prompt runs `list --page P` and `show N --page 1` (a thread with 20 comments)
10 times (the first 10 of the N) in one piped `forum` process, less the time of one running `help`. Times are µs. The
board's file is read once first, so that every column reads from memory.
"""
import http.client, json, os, random, shutil, statistics
import subprocess, sys, tempfile, time, urllib.parse, uuid

import bench_support

args = sys.argv[1:]
if len(args) < 2:
    sys.exit(__doc__)
build, board = args[0], args[1]
count = int(args[args.index('--count') + 1]) if '--count' in args else 200
work = tempfile.mkdtemp(prefix='bench-queries.')
forum, bench = os.path.join(build, 'forum'), os.path.join(build, 'forum-bench')
env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=work, XDG_STATE_HOME=work, XDG_DATA_HOME=work,
           LANG='C')
db = os.path.join(work, 'board.db')
shutil.copy(board, db)
# Warm: every page of the board in the system's page cache, so that no column pays for the disk.
with open(db, 'rb') as f:
    while f.read(1 << 24):
        pass
keys = bench_support.board_keys(forum, db, env)


def start(command):
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    return process, process.stdout.readline()


server, ready = start([forum, '--db', db, '--json', 'serve', '--listen', '127.0.0.1:0',
                       '--user-writes', '0', '--address-writes', '0', '--reads-at-once', '0'])
base = json.loads(ready)['url'].rstrip('/')
host = base.split('//')[1].split('/')[0]
timestamp = bench_support.timestamp()


def signed(method, path, query=None, session=None):
    """The path with its query, and NCMB's signature headers."""
    return bench_support.signed_request(keys, host, timestamp, method, path, query, session)


def timed(port, requests):
    """Median µs of one request, each sent once in turn on one keep-alive connection."""
    connection = http.client.HTTPConnection('127.0.0.1', port)
    times = []
    for method, path, headers, body in requests:
        started = time.perf_counter()
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        times.append((time.perf_counter() - started) * 1e6)
        if response.status >= 300:
            sys.exit(f'bench-serve-queries: {method} {path}: {response.status} {data[:200]}')
    connection.close()
    return statistics.median(times)


port = int(host.split(':')[1])
path, headers = signed('POST', 'users')
connection = http.client.HTTPConnection('127.0.0.1', port)
connection.request('POST', path, json.dumps({'authData': {'anonymous': {'id': str(uuid.uuid4())}}}),
                   headers)
session = json.loads(connection.getresponse().read())['sessionToken']
connection.close()


def sqlite(sql):
    return subprocess.run(['sqlite3', db, sql], capture_output=True, text=True,
                          check=True).stdout.split()


rng = random.Random(29)
threads = [line.split('|') for line in sqlite(
    "SELECT objectId || '|' || json_extract(data, '$.number') FROM objects WHERE "
    f"public_class = 'Thread' ORDER BY random() LIMIT {count};")]
files = sqlite(f"SELECT name FROM files WHERE instr(readers, ' * ') > 0 LIMIT {count};")
pages = [rng.randrange(0, 250) for _ in range(count)]
pointer = '{"__type":"Pointer","className":"Thread","objectId":"%s"}'
columns = 'objectId, createDate, updateDate, readers, writers, data'


def comments(order):
    return ([('GET',) + signed('GET', 'classes/Comment', {
        'where': json.dumps({'thread': json.loads(pointer % t)}, separators=(',', ':')),
        'order': order, 'limit': '20'}, session) + (None,) for t, _ in threads])


thread_pointer = "json_extract(data, '$.thread') = '%s'"
kinds = [
    ('thread list, a page (`-createDate`, skip 0–4,980)', 'objects_public_createDate',
     [('GET',) + signed('GET', 'classes/Thread', {'limit': '20', 'order': '-createDate',
                                                  'skip': str(20 * p)}, session) + (None,)
      for p in pages],
     [f"SELECT {columns} FROM objects WHERE public_class = 'Thread' ORDER BY createDate DESC "
      f"LIMIT 20 OFFSET {20 * p};" for p in pages],
     [f'list --page {p + 1}' for p in pages]),
    ('one thread by id', 'objectId (unique)',
     [('GET',) + signed('GET', f'classes/Thread/{t}', None, session) + (None,) for t, _ in threads],
     [f"SELECT {columns} FROM objects WHERE objectId = '{t}';" for t, _ in threads], None),
    ("a thread's comments, `createDate`", 'objects_public_Comment_thread_createDate',
     comments('createDate'),
     [f"SELECT {columns} FROM objects WHERE public_class = 'Comment' AND "
      f"{thread_pointer % (pointer % t)} ORDER BY createDate LIMIT 20;" for t, _ in threads],
     [f'show {n} --page 1' for _, n in threads]),
    ("a thread's comments, `-createDate`", 'objects_public_Comment_thread_createDate',
     comments('-createDate'),
     [f"SELECT {columns} FROM objects WHERE public_class = 'Comment' AND "
      f"{thread_pointer % (pointer % t)} ORDER BY createDate DESC LIMIT 20;" for t, _ in threads],
     None),
    ("a thread's comments, `number`", 'objects_public_Comment_thread_number',
     comments('number'),
     [f"SELECT {columns} FROM objects WHERE public_class = 'Comment' AND "
      f"{thread_pointer % (pointer % t)} ORDER BY json_extract(data, '$.number') LIMIT 20;"
      for t, _ in threads], None),
    ("a thread's comment count (`count=1&limit=0`)", 'objects_public_Comment_thread_createDate',
     [('GET',) + signed('GET', 'classes/Comment', {
         'where': json.dumps({'thread': json.loads(pointer % t)}, separators=(',', ':')),
         'count': '1', 'limit': '0'}, session) + (None,) for t, _ in threads],
     [f"SELECT count(*) FROM objects WHERE public_class = 'Comment' AND "
      f"{thread_pointer % (pointer % t)};" for t, _ in threads], None),
    ('a file (a thread\'s picture)', 'files primary key',
     [('GET',) + signed('GET', f'files/{name}', None, session) + (None,) for name in files],
     [f"SELECT data FROM files WHERE name = '{name}';" for name in files], None),
]


def shell(statements):
    """µs of one statement in one sqlite3 process, less the process's start."""
    def run(text):
        started = time.perf_counter()
        subprocess.run(['sqlite3', db], input='.output /dev/null\n' + text, text=True, check=True)
        return time.perf_counter() - started
    empty = min(run('SELECT 1;') for _ in range(3))
    whole = min(run('\n'.join(statements)) for _ in range(3))
    return max(0.0, whole - empty) * 1e6 / len(statements)


def prompt(commands):
    """µs of one command in one piped `forum` process, less the process's start."""
    def run(lines):
        started = time.perf_counter()
        subprocess.run([forum, '--db', db, '--no-color', '--images', 'none'], input='\n'.join(lines)
                       + '\n', text=True, env=env, stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - started
    commands = commands[:10]
    empty = min(run(['help']) for _ in range(3))
    whole = run(commands)
    return max(0.0, whole - empty) * 1e6 / len(commands)


page = os.path.join(work, 'page.json')
path, headers = signed('GET', 'classes/Thread', {'limit': '20', 'order': '-createDate'}, session)
connection = http.client.HTTPConnection('127.0.0.1', port)
connection.request('GET', path, headers=headers)
with open(page, 'wb') as f:
    f.write(connection.getresponse().read())
connection.close()
floor, floor_ready = start([bench, 'serve-floor', '--listen', '127.0.0.1:0', '--body', page])
floor_port = int(floor_ready.strip().split('//')[1].split('/')[0].split(':')[1])
floor_us = timed(floor_port, [('GET', path, headers, None)] * count)

print(f'board: {board}; {count} different requests a query, one connection; HTTP floor '
      f'(a page of threads from memory): {floor_us:.0f} µs')
print('| query | index | server µs | server less floor | sqlite3 shell µs | prompt µs | '
      'server less floor / shell |')
print('|---|---|---:|---:|---:|---:|---:|')
for name, index, requests, statements, commands in kinds:
    served = timed(port, requests)
    shell_us = shell(statements)
    prompt_us = prompt(commands) if commands else None
    net = max(0.0, served - floor_us)
    ratio = f'{net / shell_us:.2f}x' if shell_us > 0 else ''
    prompt_text = f'{prompt_us:.0f}' if prompt_us is not None else '—'
    print(f'| {name} | {index} | {served:.0f} | {net:.0f} | {shell_us:.0f} | {prompt_text} | '
          f'{ratio} |')
for process in (server, floor):
    process.terminate()
    process.wait(timeout=60)
shutil.rmtree(work)
