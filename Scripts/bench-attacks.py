#!/usr/bin/env python3
"""forum serve under issue 28's attacks: the server's peak memory and an honest client's GET
latency during each, beside the same GET with no attack (the floor), on one fresh board.

usage: python3 Scripts/bench-attacks.py BUILD_DIR [--seconds S] [--requests N]
                                          [--rows none,flood,signed,slowloris]

Each row starts a fresh `forum serve --listen 127.0.0.1:0` (so its VmHWM is that row's peak).
The honest client is another process, from 127.0.0.1: N signed `GET classes/Thread`, each on a
new connection, one after another. Attackers come from 127.0.0.2 (loopback too, another address):
  flood      100 connections at a time, each 6 MiB - 1 of multipart with no keys, again and again
  signed     the same with the board's keys (an app's keys are in every copy of the app): the
             body budget (--buffer-budget) is what bounds it
  slowloris  4,200 connections each sending half a header line, then a byte every 15 s
Prints a Markdown table: peak MB, honest p50 / p99 / max ms, honest failures, and what the
attackers were answered.
"""
import base64, datetime, hashlib, hmac, json, multiprocessing, os, resource, socket, statistics
import subprocess, sys, tempfile, threading, time

args = sys.argv[1:]
if not args or args[0].startswith('-'):
    sys.exit(__doc__)
build = args[0]
seconds, requests = 10.0, 300
rows = ['none', 'flood', 'signed', 'slowloris']
i = 1
while i < len(args):
    if args[i] == '--seconds':
        seconds = float(args[i + 1])
        i += 2
    elif args[i] == '--rows':
        rows = args[i + 1].split(',')
        i += 2
    elif args[i] == '--requests':
        requests = int(args[i + 1])
        i += 2
    else:
        sys.exit('unknown option ' + args[i])
forum = os.path.join(build, 'forum')
root = tempfile.mkdtemp(prefix='bench-attacks.')
env = dict(os.environ, HOME=root, XDG_CONFIG_HOME=root + '/config', XDG_STATE_HOME=root + '/state',
           XDG_DATA_HOME=root + '/data', LANG='C')
db = root + '/board.sqlite'
subprocess.run([forum, '--db', db, 'init'], env=env, check=True, capture_output=True)
keys = json.loads(subprocess.run([forum, '--db', db, '--json', 'keys'], env=env, check=True,
                                 capture_output=True, text=True).stdout)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 16384), hard))


def signed(method, path, port):
    stamp = datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'
    pairs = ['SignatureMethod=HmacSHA256', 'SignatureVersion=2',
             'X-NCMB-Application-Key=' + keys['applicationKey'], 'X-NCMB-Timestamp=' + stamp]
    text = '\n'.join([method, '127.0.0.1:%d' % port, path, '&'.join(sorted(pairs))])
    signature = base64.b64encode(hmac.new(keys['clientKey'].encode(), text.encode(),
                                          hashlib.sha256).digest()).decode()
    return ('X-NCMB-Application-Key: %s\r\nX-NCMB-Timestamp: %s\r\nX-NCMB-Signature: %s\r\n'
            % (keys['applicationKey'], stamp, signature))


def start():
    server = subprocess.Popen([forum, '--db', db, 'serve', '--listen', '127.0.0.1:0'], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    port = int(line.split('http://127.0.0.1:')[1].split('/')[0])
    return server, port


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


def row(name, attack):
    if (attack or 'none') not in rows:
        return
    server, port = start()
    stop = threading.Event()
    answers = []
    attackers = []
    if attack == 'flood' or attack == 'signed':
        attackers = [threading.Thread(target=flood, args=(port, stop, answers, attack == 'signed'))
                     for _ in range(100)]
    elif attack == 'slowloris':
        attackers = [threading.Thread(target=slowloris, args=(port, stop, answers))]
    for t in attackers:
        t.start()
    if attackers:
        time.sleep(2)
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
    print('| %s | %.0f | %.2f | %.2f | %.2f | %d | %s |'
          % (name, peak, p(0.5), p(0.99), served[-1] if served else float('nan'), failed, said),
          flush=True)


print('| attack | server peak MB | honest GET p50 ms | p99 ms | max ms | failed | attackers got |')
print('|---|---|---|---|---|---|---|')
row('none (floor)', None)
row('H3 flood: 100 x 6 MiB multipart, no keys', 'flood')
row('the same, signed with the app keys', 'signed')
row('slowloris: 4,200 half headers from one address', 'slowloris')
subprocess.run(['rm', '-rf', root])
