#!/usr/bin/env python3
"""The remote engine's speed over loopback (issue 30), each figure beside its floor in one run:
the same command on the local file (a copy of the million-post board, which `forum serve`
holds over HTTPS with a throwaway authority).

  python3 Scripts/bench-remote.py FORUM BOARD [--main MAIN_FORUM] [--runs 20] [--rounds 30]
                                  [--comments 1000]

Rows (R1–R5 in BENCHMARKS.md):
  - one-shot `forum list` and `forum show THREAD --page 1` (hyperfine, profile signed in first);
  - a comment at one member's live prompt → another member's screen, both over https (floor:
    the same two prompts on the local file);
  - a script of COMMENTS comments piped into one `forum --db https://…` (floor: the same script
    into `forum --db FILE`);
  - the requests a one-shot makes (the client's `FORUM_TEST_REQUEST_LOG`);
  - with --main: `forum --version` and a local `list` beside MAIN_FORUM's.
Needs hyperfine and openssl. The serve's write budgets are off (`--user-writes 0`), so the
script is not paced by them."""
import argparse, json, os, shutil, signal, subprocess, sys, time, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_support

parser = argparse.ArgumentParser()
parser.add_argument('forum')
parser.add_argument('board')
parser.add_argument('--main', help="main's forum, for --version and a local list")
parser.add_argument('--runs', type=int, default=20)
parser.add_argument('--rounds', type=int, default=30)
parser.add_argument('--comments', type=int, default=1000)
arguments = parser.parse_args()
forum = os.path.abspath(arguments.forum)

root, env = bench_support.scratch('bench-remote-')
board = root + '/board.db'
print('copying', arguments.board, file=sys.stderr)
shutil.copyfile(arguments.board, board)


def authority():
    """A throwaway authority and a certificate for 127.0.0.1 signed by it."""
    ca, ca_key, cert, key = (root + '/' + name for name in ['ca.pem', 'ca-key.pem', 'cert.pem',
                                                              'key.pem'])
    ext = root + '/ext'
    open(ext, 'w').write('subjectAltName=IP:127.0.0.1\n')
    quiet = dict(check=True, capture_output=True)
    curve = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
    subprocess.run(['openssl', 'req', '-x509'] + curve + ['-keyout', ca_key, '-out', ca, '-days',
                                                          '2', '-subj', '/CN=bench'], **quiet)
    subprocess.run(['openssl', 'req'] + curve + ['-keyout', key, '-out', root + '/csr', '-subj',
                                                 '/CN=127.0.0.1'], **quiet)
    subprocess.run(['openssl', 'x509', '-req', '-in', root + '/csr', '-CA', ca, '-CAkey', ca_key,
                    '-CAcreateserial', '-out', cert, '-days', '2', '-extfile', ext], **quiet)
    return ca, cert, key


ca, cert, key = authority()
env['FORUM_CA_FILE'] = ca
server = subprocess.Popen([forum, '--db', board, 'serve', '--listen', '127.0.0.1:0', '--tls-cert',
                           cert, '--tls-key', key, '--user-writes', '0', '--address-writes', '0'],
                          env=env, stdout=subprocess.PIPE, stderr=open(root + '/serve.log', 'w'),
                          text=True)
ready = server.stdout.readline().split()
if not ready:
    why = open(root + '/serve.log').read()
    shutil.rmtree(root, ignore_errors=True)
    sys.exit('forum serve did not start (status %s): %s' % (server.wait(), why))
url = next(word for word in ready if word.startswith('https://'))
url = url[:url.index('/', len('https://')) + 1] if '/' in url[len('https://'):] else url + '/'
print('serving', url, file=sys.stderr)


def uptime():
    return open('/proc/loadavg').read().split()[0]


def run(words, **options):
    return subprocess.run(words, env=env, check=True, capture_output=True, text=True, **options)


def requests_made(words):
    """The requests `words` makes, as the client lists them."""
    log = root + '/requests-%s.log' % uuid.uuid4().hex[:8]
    subprocess.run(words, env=dict(env, FORUM_TEST_REQUEST_LOG=log), check=True,
                   capture_output=True)
    try:
        return open(log).read().splitlines()
    except FileNotFoundError:
        return []


remote = [forum, '--db', url]
local = [forum, '--db', board]
loads = [uptime()]
try:
    # Profiles signed in on both (a member's first command makes their user).
    for words in (remote, local):
        run(words + ['--profile', 'alice', 'name', 'alice'])
        run(words + ['--profile', 'bob', 'name', 'bob'])
    made = run(remote + ['--profile', 'alice', '--json', 'new', '--title', 'bench',
                         '--description', 'x'])
    thread = str(json.loads(made.stdout)['number'])

    # Requests a one-shot makes, counted at the server.
    counts = {}
    for label, words in [('list', ['list']), ('show', ['show', thread, '--page', '1'])]:
        made = requests_made(remote + ['--profile', 'alice'] + words)
        counts[label] = len(made)
        print(label, *made, sep='\n  ', file=sys.stderr)

    # One-shots, remote beside local, round-robin by hyperfine.
    hyper = root + '/oneshot.json'
    commands = []
    for words in (['list'], ['show', thread, '--page', '1'], ['show', '1', '--page', '1']):
        for base in (remote, local):
            commands.append(' '.join(base + ['--profile', 'alice'] + words))
    if arguments.main:
        main = os.path.abspath(arguments.main)
        commands += [forum + ' --version', main + ' --version',
                     ' '.join(local + ['--profile', 'alice', 'list']),
                     ' '.join([main, '--db', board, '--profile', 'alice', 'list'])]
    subprocess.run(['hyperfine', '-N', '-w', '3', '-r', str(arguments.runs), '--export-json', hyper]
                   + commands, env=env, check=True, stdout=subprocess.DEVNULL)
    oneshot = {r['command']: r for r in json.load(open(hyper))['results']}

    def timing(command):
        r = oneshot[command]
        return r['median'] * 1000, r['mean'] * 1000, r['stddev'] * 1000

    # A comment at one prompt to another's screen.
    def live(base):
        terminal = dict(env, TERM='xterm', LANG='C.UTF-8')
        writer = bench_support.Pane(base + ['--profile', 'alice'], terminal)
        reader = bench_support.Pane(base + ['--profile', 'bob'], terminal)
        writer.wait_for(b'forum> ')
        reader.wait_for(b'forum> ')
        reader.send(f'show {thread}\r')
        reader.wait_for(f'forum #{thread}> '.encode())
        times = []
        for _ in range(arguments.rounds):
            text = f'live-{uuid.uuid4().hex[:10]}'
            start = time.monotonic()
            writer.send(f'comment {thread} {text}\r')
            times.append(reader.wait_for(text.encode()) - start)
            writer.wait_for(f'Posted {thread}/'.encode())
            writer.seen = b''
            time.sleep(0.05)
        writer.close()
        reader.close()
        return sorted(t * 1000 for t in times)

    live_remote = live(remote)
    live_local = live(local)

    # A script of comments piped into one process.
    def script(base):
        lines = ''.join(f'comment {thread} piped {i}\n' for i in range(arguments.comments))
        start = time.monotonic()
        run(base + ['--profile', 'bob'], input=lines)
        return arguments.comments / (time.monotonic() - start)

    piped_remote = script(remote)
    piped_local = script(local)
    loads.append(uptime())

    pct = bench_support.percentile

    print(f'load {loads[0]}–{loads[-1]}; forum {forum}')
    print('| what | remote | local (floor) | ratio |')
    print('|---|---|---|---|')
    for label, words in [('list', ['list']), (f'show {thread} --page 1',
                                              ['show', thread, '--page', '1']),
                         ('show 1 --page 1', ['show', '1', '--page', '1'])]:
        r = timing(' '.join(remote + ['--profile', 'alice'] + words))
        l = timing(' '.join(local + ['--profile', 'alice'] + words))
        print(f'| `{label}` median (mean ± sd) | {r[0]:.1f} ms ({r[1]:.1f} ± {r[2]:.1f}) | '
              f'{l[0]:.1f} ms ({l[1]:.1f} ± {l[2]:.1f}) | {r[0] / l[0]:.2f}x |')
    print(f'| requests: list / show | {counts["list"]} / {counts["show"]} | — | — |')
    print(f'| comment → another screen p50 / p95 / max | {pct(live_remote, .5):.1f} / '
          f'{pct(live_remote, .95):.1f} / {live_remote[-1]:.1f} ms | {pct(live_local, .5):.1f} / '
          f'{pct(live_local, .95):.1f} / {live_local[-1]:.1f} ms | '
          f'{pct(live_remote, .5) / pct(live_local, .5):.2f}x |')
    print(f'| {arguments.comments} piped comments | {piped_remote:.0f}/s | {piped_local:.0f}/s | '
          f'{piped_local / piped_remote:.2f}x the time |')
    if arguments.main:
        for label, mine, theirs in [('--version', forum + ' --version', main + ' --version'),
                                    ('local list', ' '.join(local + ['--profile', 'alice', 'list']),
                                     ' '.join([main, '--db', board, '--profile', 'alice',
                                               'list']))]:
            m, t = timing(mine), timing(theirs)
            print(f'| `{label}` beside main | {m[0]:.2f} ms | main {t[0]:.2f} ms | '
                  f'{m[0] / t[0]:.2f}x |')
finally:
    server.send_signal(signal.SIGTERM)
    server.wait()
    shutil.rmtree(root, ignore_errors=True)
