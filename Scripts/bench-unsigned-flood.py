#!/usr/bin/env python3
"""Honest writers beside a flood of unsigned POSTs (issue 29 item 6).

usage: python3 Scripts/bench-unsigned-flood.py FORUM [--seconds S] [--honest C] [--flood C]

FORUM is a built `forum`. Makes a fresh SQLite board in a temporary directory, serves it, signs
up one app user with a thread, and runs with wrk, on keep-alive connections:
  1. honest writers alone: C connections POSTing signed comments (the signature is made once;
     the server allows 15 minutes of clock difference);
  2. the same honest writers while F more connections POST without a signature.
Prints the honest writers' requests/s and p50/p99 in each, and the flood's answers/s and
statuses. A flood that reached the write queue would wait in the honest writers' batches.
Needs wrk."""
import base64, hashlib, hmac, json, os, re, shutil, subprocess, sys, tempfile, time
import urllib.request, uuid

import bench_support

args = sys.argv[1:]
if not args:
    sys.exit(__doc__)
forum = args[0]
seconds, honest, flood = 10, 4, 16
for i, a in enumerate(args):
    if a == '--seconds':
        seconds = int(args[i + 1])
    if a == '--honest':
        honest = int(args[i + 1])
    if a == '--flood':
        flood = int(args[i + 1])
if shutil.which('wrk') is None:
    sys.exit('bench-unsigned-flood: wrk is missing (Debian: apt-get install wrk)')

work = tempfile.mkdtemp(prefix='bench-flood.')
env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=work, XDG_STATE_HOME=work, XDG_DATA_HOME=work,
           LANG='C')
db = os.path.join(work, 'board.db')
subprocess.run([forum, '--db', db, 'init'], env=env, check=True, capture_output=True)
keys = json.loads(subprocess.run([forum, '--db', db, '--json', 'keys'], env=env, check=True,
                                 capture_output=True, text=True).stdout)
server = subprocess.Popen([forum, '--db', db, 'serve', '--listen', '127.0.0.1:0'], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
ready = server.stdout.readline()
port = int(re.search(r':(\d+)/2013-09-01/', ready).group(1))


def signed(method, path, stamp):
    text = '\n'.join([method, '127.0.0.1', path, '&'.join(sorted([
        'SignatureMethod=HmacSHA256', 'SignatureVersion=2',
        'X-NCMB-Application-Key=' + keys['applicationKey'], 'X-NCMB-Timestamp=' + stamp]))])
    return base64.b64encode(hmac.new(keys['clientKey'].encode(), text.encode(),
                                     hashlib.sha256).digest()).decode()


def headers(method, path, token=None):
    stamp = bench_support.timestamp()
    h = {'X-NCMB-Application-Key': keys['applicationKey'], 'X-NCMB-Timestamp': stamp,
         'X-NCMB-Signature': signed(method, path, stamp), 'Content-Type': 'application/json'}
    if token:
        h['X-NCMB-Apps-Session-Token'] = token
    return h


def post(path, body, token=None):
    request = urllib.request.Request('http://127.0.0.1:%d%s' % (port, path), json.dumps(body).encode(),
                                     headers('POST', path, token), method='POST')
    return json.loads(urllib.request.urlopen(request).read())


try:
    user = post('/2013-09-01/users', {'authData': {'anonymous': {'id': str(uuid.uuid4())}}})
    token = user['sessionToken']
    thread = post('/2013-09-01/classes/Thread', {'title': 'bench', 'description': ''}, token)
    path = '/2013-09-01/classes/Comment'
    body = json.dumps({'text': 'a comment', 'thread': {
        '__type': 'Pointer', 'className': 'Thread', 'objectId': thread['objectId']}})

    def lua(name, header_map):
        script = os.path.join(work, name + '.lua')
        lines = ['wrk.method = "POST"', 'wrk.body = %s' % json.dumps(body)]
        for key, value in header_map.items():
            lines.append('wrk.headers[%s] = %s' % (json.dumps(key), json.dumps(value)))
        lines += ['statuses = {}', 'response = function(status, headers, body)',
                  '  statuses[status] = (statuses[status] or 0) + 1 end']
        open(script, 'w').write('\n'.join(lines) + '\n')
        return script

    honest_script = lua('honest', headers('POST', path, token))
    forged = headers('POST', path, token)
    del forged['X-NCMB-Signature']
    flood_script = lua('flood', forged)

    def wrk(script, connections, duration):
        return subprocess.Popen(['wrk', '-t1', '-c%d' % connections, '-d%ds' % duration,
                                 '--latency', '-s', script, 'http://127.0.0.1:%d%s' % (port, path)],
                                stdout=subprocess.PIPE, text=True)

    def summary(output):
        rate = float(re.search(r'Requests/sec:\s+([\d.]+)', output).group(1))
        def percentile(p):
            m = re.search(r'\s%s%%\s+([\d.]+)(us|ms|s)\b' % p, output)
            scale = {'us': 0.001, 'ms': 1, 's': 1000}[m.group(2)]
            return float(m.group(1)) * scale
        non2xx = re.search(r'Non-2xx or 3xx responses: (\d+)', output)
        return rate, percentile(50), percentile(99), int(non2xx.group(1)) if non2xx else 0

    alone = summary(wrk(honest_script, honest, seconds).communicate()[0])
    flooding = wrk(flood_script, flood, seconds + 2)
    time.sleep(1)
    beside = summary(wrk(honest_script, honest, seconds).communicate()[0])
    flooded = summary(flooding.communicate()[0])
    print('| case | honest writes/s | p50 ms | p99 ms | refused | flood answers/s (all 401) |')
    print('|---|---|---|---|---|---|')
    print('| %d honest writers alone | %.0f | %.2f | %.2f | %d | - |' % ((honest,) + alone))
    print('| %d honest writers + %d unsigned | %.0f | %.2f | %.2f | %d | %.0f (%d non-2xx) |'
          % ((honest, flood) + beside + (flooded[0], flooded[3])))
finally:
    server.terminate()
    server.wait()
    shutil.rmtree(work, ignore_errors=True)
