#!/usr/bin/env python3
"""PostgreSQL round trips per request kind of `forum serve` (BENCHMARKS.md, the serve round-trip rows).

usage: python3 Scripts/bench-serve-pg-roundtrips.py BUILD_DIR [--repeat N] [--statements]
                                                    [--posts THREADS,COMMENTS] [--plans]

A throwaway cluster logging every statement (log_min_duration_statement=0, each line with the
backend's pid and role), one board (`forum init`), 200 threads and 2,000 comments seeded by the
owner, and `forum serve` by the server role. Each of the demo app's request kinds is sent once to
warm the server (connections made, statements prepared), then N times more; the counts are what
the server's log shows for those N, divided by N: parse (a statement prepared), execute (a
prepared statement run), simple (a statement sent as text: BEGIN, SET, COMMIT). --statements
prints the last request's statements; --plans their plans as the server ran them (auto_explain:
ANALYZE, BUFFERS, nested statements, so with row-level security as the server role has it).
--posts seeds another size (default 200,2000).
"""
import json, os, subprocess, sys, time, urllib.parse, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_support

args = sys.argv[1:]
if not args:
    sys.exit(__doc__)
build = args[0]
repeat = int(args[args.index('--repeat') + 1]) if '--repeat' in args else 10
show_statements = '--statements' in args or '--plans' in args
show_plans = '--plans' in args
threads_wanted, comments_wanted = ([int(n) for n in args[args.index('--posts') + 1].split(',')]
                                   if '--posts' in args else (200, 2000))
forum = os.path.join(build, 'forum')
work, env = bench_support.scratch('bench-serve-pg-rt.', one_folder=True)
cluster, db, owner_db = bench_support.postgres_board(
    forum, work, env, stop_mode='fast',
    settings=['log_min_duration_statement=0', "log_line_prefix='%p %u '", 'synchronous_commit=off',
              'shared_buffers=256MB'])
log = cluster.sockets + '/server.log'
server = None
try:
    keys = bench_support.board_keys(forum, owner_db, env)
    app_key, client_key = keys['applicationKey'], keys['clientKey']
    base = host = None

    def restart():
        """A new server process: new connections, which read the role's settings."""
        global server, base, host
        if server:
            server.terminate()
            server.wait()
        server = subprocess.Popen([forum, '--db', db, '--json', 'serve', '--listen', '127.0.0.1:0'],
                                  env=env, stdout=subprocess.PIPE, text=True)
        base = json.loads(server.stdout.readline())['url'].rstrip('/')
        host = base.split('//')[1].split('/')[0]

    restart()

    def request(method, path, query=None, body=None, session=None):
        stamp = bench_support.timestamp()
        full = '/2013-09-01/' + path
        signature = bench_support.signature(
            client_key, method, host, full, bench_support.signed_query_text(app_key, stamp, query))
        url = base + '/' + path
        if query:
            url += '?' + '&'.join(f'{k}={urllib.parse.quote(v, safe="")}' for k, v in query.items())
        command = ['curl', '-sS', '-X', method, url, '-H', 'X-NCMB-Application-Key: ' + app_key,
                   '-H', 'X-NCMB-Timestamp: ' + stamp, '-H', 'X-NCMB-Signature: ' + signature,
                   '-H', 'Content-Type: application/json', '-w', '\n%{http_code}']
        if session:
            command += ['-H', 'X-NCMB-Apps-Session-Token: ' + session]
        if body is not None:
            command += ['--data-binary', body]
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        text, status = output.rsplit('\n', 1)
        assert status.startswith('2'), f'{method} {path}: {status} {text[:300]}'
        return json.loads(text) if text else None

    def login():
        return request('POST', 'users', body=json.dumps(
            {'authData': {'anonymous': {'id': str(uuid.uuid4()).upper()}}}))

    user = login()
    session = user['sessionToken']
    me = user['objectId']
    pointer = f"jsonb_build_object('__type', 'Pointer', 'className', 'user', 'objectId', '{me}')"
    cluster.psql('owner', f'''
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Thread', substr(md5(i::text || 'thread'), 1, 16), ARRAY['*', '{me}'], ARRAY['{me}'],
        jsonb_build_object('title', 'Thread ' || i, 'description', 'words', 'user', {pointer})
      FROM generate_series(1, {threads_wanted}) AS i;
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Comment', substr(md5(i::text || 'comment'), 1, 16), ARRAY['*', '{me}'],
        ARRAY['{me}'], jsonb_build_object('text', 'comment ' || i, 'user', {pointer},
          'thread', jsonb_build_object('__type', 'Pointer', 'className', 'Thread',
            'objectId', substr(md5((i % {threads_wanted} + 1)::text || 'thread'), 1, 16)))
      FROM generate_series(1, {comments_wanted}) AS i;
      ANALYZE forum.objects;''')
    threads = [t['objectId'] for t in request(
        'GET', 'classes/Thread', {'limit': '20', 'order': '-createDate'}, session=session)['results']]
    counter = iter(range(10**9))

    def thread_pointer(n):
        return {'__type': 'Pointer', 'className': 'Thread', 'objectId': threads[n % len(threads)]}

    kinds = [
        ('thread list page', lambda n: request(
            'GET', 'classes/Thread', {'limit': '20', 'order': '-createDate', 'skip': str(20 * (n % 5))},
            session=session)),
        ('one thread', lambda n: request(
            'GET', 'classes/Thread/' + threads[n % len(threads)], session=session)),
        ('its comments (pointer, createDate, 20)', lambda n: request(
            'GET', 'classes/Comment', {'where': json.dumps({'thread': thread_pointer(n)},
                                                           separators=(',', ':')),
                                       'order': 'createDate', 'limit': '20'}, session=session)),
        ('comment count', lambda n: request(
            'GET', 'classes/Comment', {'where': json.dumps({'thread': thread_pointer(n)},
                                                           separators=(',', ':')),
                                       'count': '1', 'limit': '0'}, session=session)),
        ('post a comment', lambda n: request(
            'POST', 'classes/Comment', body=json.dumps(
                {'text': f'comment {next(counter)}', 'thread': thread_pointer(n)}),
            session=session)),
        ('anonymous login', lambda n: login()),
    ]

    def log_lines():
        with open(log, errors='replace') as f:
            return f.readlines()

    print(f'{"request kind":42} {"round trips":>11} {"parse":>6} {"execute":>8} {"simple":>7}')
    for name, send in kinds:
        send(0)
        time.sleep(0.3)
        before = len(log_lines())
        for n in range(1, repeat + 1):
            send(n)
        time.sleep(0.5)
        lines = [l for l in log_lines()[before:] if ' server ' in l[:30] and 'duration:' in l]
        parse = sum(' parse ' in l for l in lines) / repeat
        execute = sum(' execute ' in l for l in lines) / repeat
        simple = sum(' statement: ' in l for l in lines) / repeat
        print(f'{name:42} {parse + execute + simple:11.1f} {parse:6.1f} {execute:8.1f} {simple:7.1f}')
        if show_statements:
            if show_plans:
                cluster.psql('postgres', "ALTER ROLE server SET session_preload_libraries = "
                             "'auto_explain'; ALTER ROLE server SET auto_explain.log_min_duration = 0;"
                             "ALTER ROLE server SET auto_explain.log_analyze = on;"
                             "ALTER ROLE server SET auto_explain.log_buffers = on;"
                             "ALTER ROLE server SET auto_explain.log_nested_statements = on;",
                             database='board')
                restart()
                send(repeat + 2)
            before = len(log_lines())
            send(repeat + 1)
            time.sleep(0.3)
            for l in log_lines()[before:]:
                if show_plans:
                    print('    ' + l.rstrip()[:220])
                elif 'duration:' in l:
                    print('    ' + l.split('duration:', 1)[1].strip()[:200])
            if show_plans:
                cluster.psql('postgres', 'ALTER ROLE server RESET ALL;', database='board')
                restart()
finally:
    if server:
        server.terminate()
        server.wait()
    cluster.stop(remove=True)
