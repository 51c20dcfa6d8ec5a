#!/usr/bin/env python3
"""forum serve under load: wrk over keep-alive connections beside two floors.

usage: python3 Scripts/bench-serve.py BUILD_DIR BOARD.db [--seconds S] [--connections 1,8,64]
                                     [--only floor,get,post,mix,mix-read,floor-mix,unindexed]
                                     [--threads N] [--mix-requests N] [--runs N] [--perf FILE]
                                     [--beside OTHER_BUILD_DIR]
       python3 Scripts/bench-serve.py BUILD_DIR --postgres THREADS,COMMENTS [options as above]

BUILD_DIR holds release `forum` and `forum-bench`; BOARD.db is a seeded board (forum-bench seed),
copied to a temporary directory first so that it never changes. For each connection count it runs
`GET /classes/Thread?limit=20&order=-createDate` and `POST /classes/Comment` against `forum serve`,
the same GET against `forum-bench serve-floor` (the same HTTP server answering the same bytes from
memory), and times the sqlite3 shell running the same query. Needs wrk, sqlite3 and curl.
`mix` replays the seed demo app's calls (NCMBMania/Swift_Forum_Demo) as the Swift SDK builds and
signs them (Fixtures/sdk-wire/swift.py: its query encoding, headers and multipart) over
--threads random threads (20,000), so that the read cache is not what is measured:
ThreadListView's find() (no order, no limit: 100 threads), the list's pages (20 a page,
-createDate, skip up to 180), one thread fetched by id, ThreadView's comments by pointer (as the
demo asks, and pages of 20 by createDate or -createDate), NCMBQuery.count() (count=1&limit=0),
ImageView's picture (one of 50 uploaded first), a comment posted (10 %), and AddThreadView's
picture (NCMBFile.save, the trailing CRLF) then its thread (1 %; each name once). `mix-read` is
the same reads alone; `floor-mix` sends the mix's requests (bodies too) to the floor;
`unindexed` times an app's query on a field no index serves (Comment's text) alone and runs
the reads beside one client sending it in a loop, before and after `forum index add`. Requests
are signed beforehand (--mix-requests of them, 100,000 a run), so wrk's Lua only picks the next one
(each wrk thread from its own part of the list).
--compare BUILD2 also runs the mix and the reads alone against BUILD2's `forum` serving the same
board (each run of BUILD_DIR's followed by BUILD2's, under the same load; it is started after the
seed, waiting up to 30 minutes for BUILD2/forum to appear).
--only runs some of the three; --runs N runs each N times, round-robin, and keeps the best
(highest requests/s) of each, with the p50/p99 of that run.
Requests are signed once per run (the server allows 15 minutes of clock difference).
--beside OTHER_BUILD_DIR (SQLite) also serves a copy of the board, made once the run's user and
pictures are in it, with OTHER_BUILD_DIR's `forum` (main's release), and runs each `get`, `post`,
`mix` and `mix-read` case on it too, in turn with this build's in each round (rows marked
`(beside)`), so that both are measured in one run under the same load.
--perf FILE records the server with `perf record -g` while the cases run (build BUILD_DIR's
forum without --strip-all to read its symbols).
--postgres THREADS,COMMENTS serves a PostgreSQL board instead: a throwaway cluster (initdb as the
postgres user, a private socket, synchronous_commit=off), `forum init` by its owner, a server role
granted forum_member and forum_server, THREADS threads and COMMENTS comments (spread over the
threads) seeded with SQL by the owner through the board's triggers; the shell floor is psql.
"""
import atexit, base64, functools, json, os, re, shutil, subprocess, sys, time
import urllib.parse, uuid

import bench_support

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'Fixtures',
                                'sdk-wire'))
import swift  # noqa: E402  the Swift SDK's requests, as the seed's demo app sends them

args = sys.argv[1:]
if len(args) < 2:
    sys.exit(__doc__)
build, board = args[0], args[1]
postgres = None
seconds = 10
connection_counts = [1, 8, 64]
only = ['floor', 'get', 'post', 'mix']
runs = 1
perf_file = None
compare = None
beside = None
mix_threads = 20000
mix_count = None
for i, a in enumerate(args):
    if a == '--perf':
        perf_file = args[i + 1]
    if a == '--compare':
        compare = args[i + 1]
    if a == '--beside':
        beside = args[i + 1]
    if a == '--postgres':
        postgres = [int(n) for n in args[i + 1].split(',')]
        board = None
    if a == '--only':
        only = args[i + 1].split(',')
    if a == '--runs':
        runs = int(args[i + 1])
    if a == '--threads':
        mix_threads = int(args[i + 1])
    if a == '--mix-requests':
        mix_count = int(args[i + 1])
    if a == '--seconds':
        seconds = int(args[i + 1])
    if a == '--connections':
        connection_counts = [int(c) for c in args[i + 1].split(',')]
# Each run of the mix sends its own part (`mix_lua`): 100,000 requests a run.
mix_count = mix_count or 100000 * runs
for tool in ['wrk', 'curl'] + (['psql'] if postgres else ['sqlite3']):
    if shutil.which(tool) is None:
        sys.exit(f'bench-serve: {tool} is missing (Debian: apt-get install {tool})')

work, env = bench_support.scratch('bench-serve.', one_folder=True)
forum = os.path.join(build, 'forum')
bench = os.path.join(build, 'forum-bench')
cluster = None
if postgres:
    cluster, db, owner_db = bench_support.postgres_board(
        forum, work, env, stop_mode='fast',
        settings=['synchronous_commit=off', 'shared_buffers=256MB', 'max_connections=200'])
    # Stopped however the script ends (a failed run left a cluster running).
    atexit.register(lambda: cluster.stop(remove=True))
    psql = cluster.psql
    keys_db = owner_db
else:
    db = os.path.join(work, 'board.db')
    bench_support.copy_synced(board, db)
    keys_db = db

keys = bench_support.board_keys(forum, keys_db, env)
app_key, client_key = keys['applicationKey'], keys['clientKey']


def start(command):
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    # Stopped however the script ends (a failed run must leave no server behind).
    atexit.register(lambda: process.poll() is None and process.terminate())
    line = process.stdout.readline()
    return process, line


# Throughput of one app user from one address: the rate limits (a flood's budget) are off.
def serve(forum_binary, board_file, listen='127.0.0.1:0'):
    return start([forum_binary, '--db', board_file, '--json', 'serve', '--listen', listen,
                  '--user-writes', '0', '--address-writes', '0', '--reads-at-once', '0',
                  '--read-bytes', '0'])


server, ready = serve(forum, db)
base = json.loads(ready)['url'].rstrip('/')  # http://127.0.0.1:PORT/2013-09-01
host = base.split('//')[1].split('/')[0]
timestamp = bench_support.timestamp()


def signed(method, path, query=None):
    """The NCMB signature headers for METHOD /2013-09-01/PATH?QUERY (query a dict)."""
    full = '/2013-09-01/' + path
    # The host without its port, as the SDKs sign: the same headers serve --beside's server.
    signature = bench_support.signature(
        client_key, method, host.split(':')[0], full,
        bench_support.signed_query_text(app_key, timestamp, query))
    return {'X-NCMB-Application-Key': app_key, 'X-NCMB-Timestamp': timestamp,
            'X-NCMB-Signature': signature, 'Content-Type': 'application/json'}


def curl(method, path, query=None, body=None, extra=None):
    headers = signed(method, path, query)
    headers.update(extra or {})
    url = base + '/' + path
    if query:
        url += '?' + '&'.join(f'{k}={urllib.parse.quote(v, safe="")}' for k, v in query.items())
    command = ['curl', '-sS', '-X', method, url]
    for k, v in headers.items():
        command += ['-H', f'{k}: {v}']
    if body is not None:
        command += ['--data-binary', body]
    return subprocess.run(command, capture_output=True, check=True).stdout


user = json.loads(curl('POST', 'users', body=json.dumps(
    {'authData': {'anonymous': {'id': str(uuid.uuid4()).upper()}}})))
session = user['sessionToken']
me = user['objectId']
seed_seconds = None
if postgres:
    # Through the board's triggers (numbers, counters, the feed), as the owner, by the app user.
    threads_wanted, comments_wanted = postgres
    me = user['objectId']
    pointer = f"jsonb_build_object('__type', 'Pointer', 'className', 'user', 'objectId', '{me}')"
    started = time.perf_counter()
    psql('owner', f'''
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Thread', substr(md5(i::text || 'thread'), 1, 16), ARRAY['*', '{me}'], ARRAY['{me}'],
        jsonb_build_object('title', 'Thread ' || i,
          'description', repeat('words of a thread ', 8), 'user', {pointer})
      FROM generate_series(1, {threads_wanted}) AS i;
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Comment', substr(md5(i::text || 'comment'), 1, 16), ARRAY['*', '{me}'],
        ARRAY['{me}'], jsonb_build_object('text', 'comment ' || i || ' ' || repeat('words ', 30),
          'user', {pointer}, 'thread', jsonb_build_object('__type', 'Pointer',
            'className', 'Thread', 'objectId', substr(md5((i % {threads_wanted} + 1)::text
              || 'thread'), 1, 16)))
      FROM generate_series(1, {comments_wanted}) AS i;
      ANALYZE forum.objects;''')
    seed_seconds = time.perf_counter() - started
other = other_base = None
if compare:
    # Another build's server on the same board, its runs beside this one's (the same load).
    # Started after the seed: the build may still be linking while a big board is seeded.
    for _ in range(1800):
        if os.path.exists(os.path.join(compare, 'forum')):
            break
        time.sleep(1)
    other, other_ready = start([os.path.join(compare, 'forum'), '--db', db, '--json', 'serve',
                                '--listen', '127.0.0.1:0', '--user-writes', '0',
                                '--address-writes', '0', '--reads-at-once', '0',
                                '--read-bytes', '0'])
    other_base = json.loads(other_ready)['url'].rstrip('/')
# Signed anew after the seed: the server allows 15 minutes of clock difference.
timestamp = bench_support.timestamp()
read_query = {'limit': '20', 'order': '-createDate'}
page = curl('GET', 'classes/Thread', read_query)
threads = json.loads(page)['results']
assert len(threads) == 20, page[:300]
thread = threads[-1]['objectId']
body_file = os.path.join(work, 'page.json')
with open(body_file, 'wb') as f:
    f.write(page)
floor, floor_ready = start([bench, 'serve-floor', '--listen', '127.0.0.1:0', '--body', body_file])
floor_base = floor_ready.strip().rstrip('/')


def lua(method, headers, body=None):
    lines = [f'wrk.method = "{method}"']
    for k, v in headers.items():
        lines.append(f'wrk.headers["{k}"] = "{v}"')
    if body is not None:
        lines.append('wrk.body = ' + json.dumps(body))
    # Count answers that are not 2xx, so that a refused request is never counted as speed.
    lines.append('''
local bad = 0
response = function(status, headers, body) if status >= 300 then bad = bad + 1 end end
done = function(summary, latency, requests) io.write(string.format("refused %d\\n", bad)) end''')
    path = os.path.join(work, f'{method}-{len(os.listdir(work))}.lua')
    with open(path, 'w') as f:
        f.write('\n'.join(lines))
    return path


def cpu_by_process(pids):
    """User and system CPU seconds each of the processes `pids` has used so far."""
    used = {}
    for pid in pids:
        try:
            with open(f'/proc/{pid}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
            used[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
        except (FileNotFoundError, ProcessLookupError):
            pass
    return used


def cpu_seconds(pids):
    """User and system CPU seconds the processes `pids` have used so far."""
    return sum(cpu_by_process(pids).values())


def cpu_since(before, pids):
    """CPU seconds the processes `pids` used since `before` (`cpu_by_process`): all of theirs
    for those started since. A backend the server connected during the run did its work there
    (only the processes there before were counted: a pool whose writes went to new backends
    looked five times cheaper than one backend doing them all, BENCHMARKS N32 and N34)."""
    return sum(used - before.get(pid, 0) for pid, used in cpu_by_process(pids).items())


def postgres_pids():
    """The cluster's processes (the postmaster and its backends)."""
    if not cluster:
        return []
    with open(cluster.data + '/postmaster.pid') as f:
        postmaster = f.readline().strip()
    children = subprocess.run(['ps', '-o', 'pid=', '--ppid', postmaster], capture_output=True,
                              text=True).stdout.split()
    return [postmaster] + children


runs_made = {}


def wrk(url, script, connections):
    """wrk's requests/s, p50 and p99 (ms), refusals and socket errors, and the CPU seconds the
    server and PostgreSQL used during the run (where a request's time goes)."""
    answering = (floor if url.startswith(floor_base)
                 else other if other_base and url.startswith(other_base) else server)
    before = (cpu_seconds([answering.pid]), cpu_by_process(postgres_pids()))
    # Which run of this script on this server it is (the mix's scripts start each in its own
    # part of their requests: `mix_lua`).
    served = (url.split('/2013-09-01')[0], script)
    run_index = runs_made.get(served, 0)
    runs_made[served] = run_index + 1
    run = subprocess.run(
        ['wrk', '-t', str(min(connections, 2)), '-c', str(connections), '-d', f'{seconds}s',
         '--latency', '-s', script, url, '--', str(run_index), str(runs)],
        capture_output=True, text=True, check=True)
    output = run.stdout
    if run.stderr:
        print(f'{url}: the first refusals:\n{run.stderr[:1000]}', file=sys.stderr)
    rps = float(re.search(r'Requests/sec:\s+([\d.]+)', output).group(1))

    def percentile(p):
        value, unit = re.search(rf'\n\s+{p}%\s+([\d.]+)(us|ms|s)', output).groups()
        return float(value) * {'us': 0.001, 'ms': 1, 's': 1000}[unit]

    refused = int(re.search(r'refused (\d+)', output).group(1))
    errors = re.search(r'Socket errors:.*', output)
    requests = rps * seconds
    cpu = (cpu_seconds([answering.pid]) - before[0], cpu_since(before[1], postgres_pids()))
    cpu_text = (f'{cpu[0] * 1000 / requests:.2f} ms server, {cpu[1] * 1000 / requests:.2f} ms '
                f'PostgreSQL' if postgres else f'{cpu[0] * 1000 / requests:.2f} ms server')
    return (rps, percentile(50), percentile(99), refused,
            ((errors.group(0) + '; ') if errors else '') + 'CPU a request: ' + cpu_text)


get_headers = signed('GET', 'classes/Thread', read_query)
get_headers['X-NCMB-Apps-Session-Token'] = session
get_script = lua('GET', get_headers)
post_headers = signed('POST', 'classes/Comment')
post_headers['X-NCMB-Apps-Session-Token'] = session
post_body = json.dumps({'text': 'a comment from wrk',
                        'thread': {'__type': 'Pointer', 'className': 'Thread', 'objectId': thread}})
post_script = lua('POST', post_headers, post_body)
get_url = base + '/classes/Thread?limit=20&order=-createDate'

# The sqlite3 shell (psql on PostgreSQL, as the owner): the same page (public threads, newest
# first), 200 times in one process.
shell_runs = 200
started = time.perf_counter()
if postgres:
    query = ("SELECT object_id, create_date, update_date, data FROM forum.objects "
             "WHERE class = 'Thread' AND '*' = ANY(readers) ORDER BY create_date DESC LIMIT 20;")
    psql('owner', query * shell_runs)
else:
    query = ("SELECT objectId, createDate, updateDate, data FROM objects WHERE class = 'Thread' "
             "AND instr(readers, ' * ') > 0 ORDER BY createDate DESC LIMIT 20;")
    subprocess.run(['sqlite3', db], input='.output /dev/null\n' + query * shell_runs, text=True,
                   check=True)
shell_ms = (time.perf_counter() - started) * 1000 / shell_runs



@functools.cache
def thread_ids(count):
    """Random public threads of the board, for the mix."""
    if postgres:
        text = psql('owner', f"SELECT object_id FROM forum.objects WHERE class = 'Thread' "
                             f"ORDER BY random() LIMIT {count};")
    else:
        # public_class: the public threads' index, not a walk of the whole table.
        text = subprocess.run(['sqlite3', db, f"SELECT objectId FROM objects WHERE public_class"
                               f" = 'Thread' ORDER BY random() LIMIT {count};"],
                              capture_output=True, text=True, check=True).stdout
    return text.split()


class RecordedSwiftSDK(swift.SwiftSDK):
    """The Swift SDK's requests (Fixtures/sdk-wire/swift.py) built, signed and kept, not sent."""
    def request(self, method, subpath, items=None, body=b'', content_type='application/json'):
        method, target, headers, body = self.build(method, subpath, items, body, content_type)
        return method, target, dict(headers), body.decode('latin-1') if body else None


def upload_pictures(sdk, count, picture, acl):
    """Pictures for ImageView to fetch, uploaded before the run as NCMBFile.save does."""
    names = []
    for n in range(count):
        name = f'{uuid.uuid4()}'.upper() + '.jpg'
        method, target, headers, body = sdk.save_file(name, picture, acl)
        command = ['curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '-X', method,
                   base.rsplit('/2013-09-01', 1)[0] + target, '--data-binary', '@-']
        for k, v in headers.items():
            command += ['-H', f'{k}: {v}']
        status = subprocess.run(command, input=body.encode('latin-1'), capture_output=True,
                                check=True).stdout
        assert status == b'201', status
        names.append(name)
    return names


def mix_requests(count, with_writes):
    """The demo app's calls (NCMBMania/Swift_Forum_Demo) as the Swift SDK builds and signs
    them, over many threads: ThreadListView's find() (no order, no limit), the list's pages,
    one thread fetched, ThreadView's comments by pointer (as the demo asks: no order, no
    limit; and pages of 20 in either order), NCMBQuery.count() (count=1&limit=0), ImageView's
    picture; with writes, AddCommentView's comment (10 %) and AddThreadView's picture then its
    thread (1 % each; each name once)."""
    import random
    rng = random.Random(29)
    ids = thread_ids(mix_threads)
    sdk = RecordedSwiftSDK(0, app_key, client_key)
    sdk.session_token = session
    acl = {'*': {'read': True}, me: {'read': True, 'write': True}}
    requests = []
    n = 0
    while len(requests) < count:
        n += 1
        roll = rng.random()
        thread = rng.choice(ids)
        pointer = {'objectId': thread, '__type': 'Pointer', 'className': 'Thread'}
        if with_writes and roll < 0.10:
            requests.append(sdk.save('Comment', {'text': f'a comment from the mix {n}',
                                                 'thread': pointer}, acl))
        elif with_writes and roll < 0.11:
            # wrk sends the next request on another connection before this one is answered:
            # the thread names a picture uploaded before the run (the app waits for its own).
            name = str(uuid.uuid4()).upper() + '.jpg'
            requests.append(sdk.save_file(name, picture, acl))
            requests.append(sdk.save('Thread', {'title': f'a thread from the mix {n}',
                                                'description': 'with a picture',
                                                'fileName': rng.choice(pictures)}, acl))
        elif roll < 0.25:
            requests.append(sdk.find('Thread'))
        elif roll < 0.40:
            page = rng.randrange(10)
            requests.append(sdk.find('Thread', limit=20, order=['-createDate'],
                                     skip=20 * page if page else None))
        elif roll < 0.50:
            requests.append(sdk.fetch('Thread', thread))
        elif roll < 0.65:
            requests.append(sdk.find('Comment', where={'thread': pointer}))
        elif roll < 0.85:
            order = rng.choice(['createDate', '-createDate'])
            requests.append(sdk.find('Comment', where={'thread': pointer}, order=[order],
                                     limit=20))
        elif roll < 0.93:
            requests.append(sdk.count('Comment', where={'thread': pointer}))
        else:
            requests.append(sdk.fetch_file(rng.choice(pictures)))
    return requests


def mix_lua(requests):
    """A wrk script that sends `requests` in turn, each wrk thread from its own part."""
    # Lua allows 65,536 constants a function: the list is built by functions of 2,000 each.
    lines = ['local requests = {}']
    for start in range(0, len(requests), 2000):
        lines.append('do local function part() return {')
        for method, url, headers, body in requests[start:start + 2000]:
            header_text = ', '.join(f'[{json.dumps(k)}] = {json.dumps(v)}'
                                    for k, v in headers.items())
            body_text = 'nil' if body is None else '"' + ''.join(
                f'\\{ord(c):03d}' if (ord(c) < 32 or c in '"\\' or ord(c) > 126) else c
                for c in body) + '"'
            lines.append(f'  {{{json.dumps(method)}, {json.dumps(url)}, {{{header_text}}}, '
                         f'{body_text}}},')
        lines.append('} end for _, r in ipairs(part()) do table.insert(requests, r) end end')
    lines.append('''
local counter = 1
local threads = {}
local bad = 0
local count = 0
setup = function(thread)
  table.insert(threads, thread)
  thread:set("part", #threads - 1)
end
init = function(args)
  -- Each run of a script on a server starts in a part of its own (`wrk`'s arguments: the run,
  -- of how many): a picture's name is sent once, so no run is refused another's names.
  local run, runs = tonumber(args[1] or 0), tonumber(args[2] or 1)
  counter = 1 + ((part or 0) * runs + run) * math.floor(#requests / (2 * runs)) % #requests
end
request = function()
  local r = requests[counter]
  counter = counter + 1
  if counter > #requests then counter = 1 end
  return wrk.format(r[1], r[2], r[3], r[4])
end
response = function(status, headers, body)
  if status >= 300 then
    if bad < 3 then io.stderr:write(status .. " " .. string.sub(body or "", 1, 200) .. "\\n") end
    bad = bad + 1
  end
end
done = function(summary, latency, requests)
  local refused = 0
  for _, thread in ipairs(threads) do refused = refused + (thread:get("bad") or 0) end
  io.write(string.format("refused %d\\n", refused))
end
''')
    # `bad` lives in each thread's Lua state: published for `done` through a global.
    text = '\n'.join(lines).replace('    bad = bad + 1\n', '    bad = bad + 1; _G.bad = bad\n')
    path = os.path.join(work, f'mix-{len(os.listdir(work))}.lua')
    with open(path, 'w') as f:
        f.write(text)
    return path


picture_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'Fixtures', 'corpus',
                            'jpeg', 'testorig.jpg')
with open(picture_file, 'rb') as f:
    picture = f.read()
mix_kinds = {'mix', 'mix-read', 'floor-mix', 'unindexed'}
pictures = []
if mix_kinds & set(only):
    uploader = RecordedSwiftSDK(0, app_key, client_key)
    uploader.session_token = session
    pictures = upload_pictures(uploader, 50, picture,
                               {'*': {'read': True}, me: {'read': True, 'write': True}})
mix_script = mix_lua(mix_requests(mix_count, True)) if {'mix', 'floor-mix'} & set(only) else None
read_mix_script = (mix_lua(mix_requests(mix_count, False))
                   if {'mix-read', 'unindexed'} & set(only) else None)

if beside:
    assert not postgres, '--beside is for SQLite boards'
    # The copy holds the run's user, session and pictures: stopped first, so that its WAL is
    # checkpointed and the copy is whole; this build's server comes back on the same port.
    server.terminate()
    server.wait(timeout=60)
    other_db = os.path.join(work, 'board-beside.db')
    for suffix in ('', '-wal', '-shm'):
        if os.path.exists(db + suffix):
            bench_support.copy_synced(db + suffix, other_db + suffix)
    server, _ = serve(forum, db, host)
    other, other_ready = serve(os.path.join(beside, 'forum'), other_db)
    other_base = json.loads(other_ready)['url'].rstrip('/')

rows = []
peak = 0
perf = None
if perf_file:
    perf = subprocess.Popen(['perf', 'record', '-F', '499', '-g', '-o', perf_file, '-p',
                             str(server.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
for connections in connection_counts:
    cases = [('floor', 'GET floor (same bytes from memory)', floor_base + '/classes/Thread?limit=20&order=-createDate', get_script),
             ('get', 'GET /classes/Thread?limit=20&order=-createDate', get_url, get_script),
             ('post', 'POST /classes/Comment', base + '/classes/Comment', post_script),
             ('floor-mix', "floor: the mix's requests answered with the same bytes from memory",
              floor_base, mix_script),
             ('mix', f"the demo app's mix over {mix_threads:,} threads (12 % writes)", base,
              mix_script),
             ('mix-read', f"the demo app's reads alone over {mix_threads:,} threads", base,
              read_mix_script)]
    if compare:
        cases = [pair for kind, name, url, script in cases
                 for pair in [(kind, name, url, script)]
                 + ([(kind, f'{name}, {compare}', other_base, script)]
                    if kind in ('mix', 'mix-read') else [])]
    cases = [case for case in cases if case[0] in only]
    if beside:
        twins = {'get': other_base + '/classes/Thread?limit=20&order=-createDate',
                 'post': other_base + '/classes/Comment', 'mix': other_base,
                 'mix-read': other_base}
        cases = [twin for case in cases for twin in
                 [case] + ([(case[0] + ' (beside)', case[1] + f' (beside: {beside})',
                             twins[case[0]], case[3])] if case[0] in twins else [])]
    best = {}
    for _ in range(runs):
        for kind, name, url, script in cases:
            result = wrk(url, script, connections)
            if name not in best or result[0] > best[name][0]:
                best[name] = result
    for kind, name, url, script in cases:
        rps, p50, p99, refused, errors = best[name]
        rows.append((name, connections, rps, p50, p99, refused, errors))
    servers = [('', server)] + ([(f' (beside: {beside})', other)] if beside else [])
    for label, process in servers:
        with open(f'/proc/{process.pid}/status') as f:
            status = f.read()
        rss = int(re.search(r'VmRSS:\s+(\d+)', status).group(1)) // 1024
        peak = int(re.search(r'VmHWM:\s+(\d+)', status).group(1)) // 1024
        # RSS counts shared pages too (libraries, SQLite's shared memory index of its log); the
        # server's own memory is RssAnon.
        anon = int(re.search(r'RssAnon:\s+(\d+)', status).group(1)) // 1024
        rows.append((f'server RSS now / peak{label} (MB)', connections, rss, peak, None, 0, ''))
        rows.append((f'server memory of its own now (RssAnon){label} (MB)', connections, anon, anon,
                     None, 0, ''))
    if not postgres:
        # The log (WAL) file never shrinks while the server runs: its size is the longest the
        # log grew (`Connection.checkpoint` starts it again past 64 MB; before, it held every
        # commit of a run).
        logs = [('', db)] + ([(f' (beside: {beside})', other_db)] if beside else [])
        for label, path in logs:
            size = os.path.getsize(path + '-wal') // (1024 * 1024) if os.path.exists(path + '-wal') else 0
            rows.append((f"server's log (WAL) file, its longest{label} (MB)", connections, size, size,
                         None, 0, ''))



def unindexed_rows(connections):
    """An app's query on a field no index serves (Comment's `text`, every public comment
    walked): its own time, the demo's reads beside one client sending it in a loop, then the
    same after the owner's `forum index add Comment text createDate`."""
    import threading
    sdk = RecordedSwiftSDK(0, app_key, client_key)
    sdk.session_token = session
    asked = iter(range(10 ** 9))

    def request():
        # Each with its own text, so that no answer is a kept one (`ReadCache`).
        return sdk.find('Comment', where={'text': f'no comment says this {next(asked)}'},
                        limit=20)

    def timed(times):
        import http.client
        connection = http.client.HTTPConnection(host, timeout=60)
        found, codes = [], set()
        for _ in range(times):
            method, target, headers, _ = request()
            started = time.perf_counter()
            connection.request(method, target, headers=headers)
            response = connection.getresponse()
            response.read()
            found.append((time.perf_counter() - started) * 1000)
            codes.add(str(response.status))
        return sorted(found), codes

    found = []
    for label in ('without an index', 'after `forum index add Comment text createDate`'):
        alone, codes = timed(5)
        stop = threading.Event()

        def loop():
            # One keep-alive connection, as an app's client: no process started a request.
            import http.client
            connection = http.client.HTTPConnection(host, timeout=60)
            while not stop.is_set():
                method, target, headers, _ = request()
                connection.request(method, target, headers=headers)
                connection.getresponse().read()
        looping = threading.Thread(target=loop)
        looping.start()
        beside = wrk(base, read_mix_script, connections)
        stop.set()
        looping.join()
        found.append((label, alone[len(alone) // 2], sorted(codes), beside))
        if label == 'without an index':
            # Equalities first, then the query's order (README: indexes for an app's queries).
            subprocess.run([forum, '--db', db, 'index', 'add', 'Comment', 'text', 'createDate'],
                           env=env, check=True, capture_output=True)
    return found


unindexed = unindexed_rows(connection_counts[0]) if 'unindexed' in only else []
if perf:
    perf.send_signal(2)
    perf.wait(timeout=120)
if postgres:
    print(f'PostgreSQL board: {postgres[0]:,} threads, {postgres[1]:,} comments seeded in '
          f'{seed_seconds:.0f} s')
shell = 'psql' if postgres else 'sqlite3 shell'
print(f'board: {board or "PostgreSQL"}; {seconds} s a run, best of {runs}; {shell}: {shell_ms:.2f} ms a query '
      f'({1000 / shell_ms:.0f} a second on one connection)')
print('| request | connections | requests/s | p50 ms | p99 ms | not 2xx | socket errors |')
print('|---|---:|---:|---:|---:|---:|---|')
for name, connections, rps, p50, p99, refused, errors in rows:
    if p99 is None:
        print(f'| {name} | {connections} | {rps} MB | peak {p50} MB | | | |')
    else:
        print(f'| {name} | {connections} | {rps:,.0f} | {p50:.2f} | {p99:.2f} | {refused} | {errors} |')
for label, median, codes, (rps, p50, p99, refused, errors) in unindexed:
    print(f'| Comment where text = …, {label}: one alone {median:.1f} ms (HTTP {codes}); the '
          f"demo's reads beside it in a loop | {connection_counts[0]} | {rps:,.0f} | {p50:.2f} | "
          f'{p99:.2f} | {refused} | {errors} |')
for process in (server, floor) + ((other,) if other else ()):
    process.terminate()
    process.wait(timeout=60)
if cluster:
    cluster.stop()
shutil.rmtree(work)
