#!/usr/bin/env python3
"""Issue 28 H5: memory of stored objects that multiply when built.

Usage: Scripts/bench-bombs.py [FORUM_BINARY]   (default .build/release/forum)

On a fresh SQLite board served by `forum serve`: 20 app users each post a thread, then (as a
board from before the caps would hold them, planted with sqlite3) each user object gets 1 MiB of
`[[0],[0],…]`, and 40 public `Bomb` objects 1 MiB each. Prints the peak resident memory (MB) of
Carol's `forum list` and `forum who` before and after the planting, and the server's VmHWM
before and after one `GET classes/Bomb?limit=1000` (with its status and time): each figure
beside the same with no bombs, in one run.
"""
import base64, hashlib, hmac, http.client, json, os, resource, shutil, sqlite3
import subprocess, sys, tempfile, time, uuid

import bench_support

binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.build/release/forum')
root = tempfile.mkdtemp(prefix='bench-bombs.')
db = os.path.join(root, 'board.db')
env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'HOME': root, 'LANG': 'C',
       'XDG_CONFIG_HOME': root + '/config', 'XDG_STATE_HOME': root + '/state',
       'XDG_DATA_HOME': root + '/data'}


def forum(profile, *arguments):
    return subprocess.run([binary, '--db', db] + (['--profile', profile] if profile else [])
                          + list(arguments), env=env, capture_output=True, check=True,
                          stdin=subprocess.DEVNULL).stdout.decode()


def peak(profile, *arguments):
    """Peak RSS (MB) and seconds of one forum command, measured by a fresh python."""
    code = ('import resource, subprocess, sys, time; t = time.time(); '
            'subprocess.run(sys.argv[1:], capture_output=True, check=True, '
            'stdin=subprocess.DEVNULL); '
            'print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.time() - t)')
    out = subprocess.run([sys.executable, '-c', code, 'env', '-i']
                         + ['%s=%s' % item for item in env.items()]
                         + [binary, '--db', db, '--profile', profile] + list(arguments),
                         capture_output=True, check=True).stdout.decode().split()
    return int(out[0]) // 1024, float(out[1])


forum(None, 'init')
forum('carol', 'name', 'Carol')
keys = json.loads(forum(None, '--json', 'keys'))
server = subprocess.Popen([binary, '--db', db, 'serve', '--listen', '127.0.0.1:0'], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL)
ready = server.stdout.readline().decode()
url = next(word for word in ready.split() if word.startswith('http'))
port = int(url.split(':')[-1].split('/')[0])


def call(method, path, body=None, token=None, query=''):
    stamp = bench_support.timestamp()
    path = '/2013-09-01/' + path
    pairs = ['SignatureMethod=HmacSHA256', 'SignatureVersion=2',
             'X-NCMB-Application-Key=' + keys['applicationKey'], 'X-NCMB-Timestamp=' + stamp]
    if query:
        pairs += query.split('&')
    text = '\n'.join([method, '127.0.0.1:%d' % port, path, '&'.join(sorted(pairs))])
    signature = base64.b64encode(hmac.new(keys['clientKey'].encode(), text.encode(),
                                          hashlib.sha256).digest()).decode()
    headers = {'X-NCMB-Application-Key': keys['applicationKey'], 'X-NCMB-Timestamp': stamp,
               'X-NCMB-Signature': signature, 'Content-Type': 'application/json'}
    if token:
        headers['X-NCMB-Apps-Session-Token'] = token
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=120)
    connection.request(method, path + ('?' + query if query else ''),
                       json.dumps(body) if body is not None else None, headers)
    response = connection.getresponse()
    return response.status, response.read()


def note(text):
    print('... ' + text, file=sys.stderr, flush=True)


def server_peak():
    for line in open('/proc/%d/status' % server.pid):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) // 1024


token = None
for i in range(20):
    status, body = call('POST', 'users', {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
    user = json.loads(body)
    token = user['sessionToken']
    call('PUT', 'users/' + user['objectId'], {'displayName': 'App %d' % i}, token)
    call('POST', 'classes/Thread', {'title': 'thread %d' % i}, token)
for i in range(40):
    call('POST', 'classes/Bomb', {'i': i}, token)

note('board made')
quiet = {'list': peak('carol', 'list'), 'who': peak('carol', 'who')}
idle = server_peak()
started = time.time()
status, body = call('GET', 'classes/Bomb', token=token, query='limit=1000')
small = (status, time.time() - started, server_peak())

note('quiet measured')
bomb = '[' + ','.join(['[0]'] * 262144) + ']'
connection = sqlite3.connect(db, timeout=60)
connection.execute("UPDATE objects SET data = json_set(data, '$.junk', json(?)) "
                   "WHERE class = 'user' AND json_extract(data, '$.displayName') LIKE 'App %'",
                   (bomb,))
connection.execute("UPDATE objects SET data = json_set(data, '$.payload', json(?)) "
                   "WHERE class = 'Bomb'", (bomb,))
connection.commit()
connection.close()

note('bombs planted')
loud = {'list': peak('carol', 'list'), 'who': peak('carol', 'who')}
note('carol measured: %s' % loud)
started = time.time()
status, body = call('GET', 'classes/Bomb', token=token, query='limit=1000')
flood = (status, time.time() - started, server_peak())
server.terminate()
server.wait()
shutil.rmtree(root)

print('binary: %s' % binary)
for name in ['list', 'who']:
    print('carol `forum %s`: %d MB, %.2f s with no bombs; %d MB, %.2f s with 20 bombed users'
          % (name, quiet[name][0], quiet[name][1], loud[name][0], loud[name][1]))
print('server idle peak %d MB; GET classes/Bomb?limit=1000 over 40 small objects: %d, %.2f s, '
      'peak %d MB' % (idle, small[0], small[1], small[2]))
print('GET classes/Bomb?limit=1000 over 40 objects of 1 MiB of [[0],...]: %d, %.2f s, peak %d MB'
      % flood)
