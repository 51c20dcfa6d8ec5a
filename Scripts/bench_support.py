"""What the bench scripts share: a scratch home for `forum` (its own HOME and XDG folders, so no
profile of the person running it is read or written), a throwaway PostgreSQL cluster holding one
board, and NCMB's request signature. Imported by the bench-*.py scripts beside it.

The cluster is initdb'd by the postgres user when run as root (PostgreSQL refuses root), listens
only on a private socket folder (no TCP), trusts local connections, and is stopped by `stop()`
(the scripts call it in their `finally`)."""
import base64, datetime, hashlib, hmac, json, os, shutil, socket, subprocess, tempfile
import urllib.parse


def scratch(prefix, one_folder=False):
    """A new temporary folder and the environment that makes `forum` keep its state in it.
    one_folder: HOME and every XDG folder are the folder itself (bench-serve.py's layout)."""
    root = tempfile.mkdtemp(prefix=prefix)
    os.chmod(root, 0o755)
    if one_folder:
        folders = dict(XDG_CONFIG_HOME=root, XDG_STATE_HOME=root, XDG_DATA_HOME=root)
    else:
        folders = dict(XDG_CONFIG_HOME=root + '/config', XDG_STATE_HOME=root + '/state',
                       XDG_DATA_HOME=root + '/data')
    return root, dict(os.environ, HOME=root, LANG='C', **folders)


class Cluster:
    """A PostgreSQL cluster in `root`/pgdata with its socket in `root`/pgsocket, started with
    `settings` (extra `-c name=value` words, e.g. ['max_connections=200'])."""

    def __init__(self, root, settings=(), stop_mode='immediate'):
        versions = sorted(os.listdir('/usr/lib/postgresql'))
        self.binaries = '/usr/lib/postgresql/%s/bin' % versions[-1]
        self.as_postgres = ['runuser', '-u', 'postgres', '--'] if os.getuid() == 0 else []
        self.data, self.sockets = root + '/pgdata', root + '/pgsocket'
        self.stop_mode = stop_mode
        self.running = False
        os.mkdir(self.sockets)
        os.mkdir(self.data)
        if self.as_postgres:
            shutil.chown(self.sockets, 'postgres', 'postgres')
            shutil.chown(self.data, 'postgres', 'postgres')
        subprocess.run(self.as_postgres + [self.binaries + '/initdb', '-D', self.data, '-U',
                                           'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C',
                                           '--no-instructions'],
                       check=True, capture_output=True)
        probe = socket.socket()
        probe.bind(('127.0.0.1', 0))
        self.port = probe.getsockname()[1]
        probe.close()
        options = '-k %s -c listen_addresses= -p %d' % (self.sockets, self.port)
        options += ''.join(' -c ' + setting for setting in settings)
        subprocess.run(self.as_postgres + [self.binaries + '/pg_ctl', '-D', self.data, '-l',
                                           self.sockets + '/server.log', '-w', '-o', options,
                                           'start'],
                       check=True, capture_output=True)
        self.running = True

    def uri(self, role, database='board'):
        return 'postgresql://%s@/%s?host=%s&port=%d' % (role, database, self.sockets, self.port)

    def psql(self, role, sql, database='board'):
        """Runs `sql` as `role`, stopping at the first error; its unaligned output."""
        return subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-At', '-h',
                               self.sockets, '-p', str(self.port), '-U', role, '-d', database],
                              input=sql, text=True, check=True, capture_output=True).stdout

    def stop(self, remove=False):
        """Stops the cluster (once); remove: its folders go too, so another can start in root."""
        if self.running:
            subprocess.run(self.as_postgres + [self.binaries + '/pg_ctl', '-D', self.data, '-m',
                                               self.stop_mode, 'stop'], capture_output=True)
            self.running = False
        if remove:
            shutil.rmtree(self.data, ignore_errors=True)
            shutil.rmtree(self.sockets, ignore_errors=True)


def sqlite_board(forum, root, env):
    """A new SQLite board in `root` (`forum init`): its path and its keys (`forum --json keys`)."""
    db = os.path.join(root, 'board.db')
    subprocess.run([forum, '--db', db, 'init'], env=env, check=True, capture_output=True)
    return db, board_keys(forum, db, env)


def board_keys(forum, db, env):
    """The board's application and client keys (`forum --json keys`, as its owner)."""
    return json.loads(subprocess.run([forum, '--db', db, '--json', 'keys'], env=env, check=True,
                                     capture_output=True, text=True).stdout)


def postgres_board(forum, root, env, settings=(), stop_mode='immediate'):
    """A throwaway cluster with one board: `forum init` by its owner (`owner`), and a server role
    (`server`) granted forum_member and forum_server. Returns the cluster, the server's URI and
    the owner's."""
    cluster = Cluster(root, settings, stop_mode)
    cluster.psql('postgres', 'CREATE ROLE forum_member NOLOGIN; CREATE ROLE owner LOGIN CREATEROLE; '
                 'CREATE DATABASE board OWNER owner;', database='postgres')
    subprocess.run([forum, '--db', cluster.uri('owner'), 'init'], env=env, check=True,
                   capture_output=True)
    cluster.psql('postgres', 'CREATE ROLE server LOGIN; GRANT forum_member, forum_server TO server;')
    return cluster, cluster.uri('server'), cluster.uri('owner')


def timestamp():
    """Now as NCMB's X-NCMB-Timestamp (UTC, milliseconds, `Z`)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'


def signature(client_key, method, host, path, parameters):
    """NCMB's X-NCMB-Signature: base64 of the HMAC-SHA256, keyed by the client key, of the method,
    host, path and `parameters` (the signed NAME=VALUE text, in its order), one a line."""
    text = '\n'.join([method, host, path, parameters])
    return base64.b64encode(hmac.new(client_key.encode(), text.encode(),
                                     hashlib.sha256).digest()).decode()


def signed_text(application_key, stamp, query=''):
    """The signed parameters of a request whose query string (already encoded) is `query`."""
    pairs = ['SignatureMethod=HmacSHA256', 'SignatureVersion=2',
             'X-NCMB-Application-Key=' + application_key, 'X-NCMB-Timestamp=' + stamp]
    pairs += query.split('&') if query else []
    return '&'.join(sorted(pairs))


def signed_query_text(application_key, stamp, query):
    """The signed parameters of a request whose query is the dict `query` (values not encoded)."""
    parameters = {'SignatureMethod': 'HmacSHA256', 'SignatureVersion': '2',
                  'X-NCMB-Application-Key': application_key, 'X-NCMB-Timestamp': stamp}
    parameters.update({k: urllib.parse.quote(v, safe='') for k, v in (query or {}).items()})
    return '&'.join(f'{k}={urllib.parse.quote(v, safe=":") if k == "X-NCMB-Timestamp" else v}'
                    for k, v in sorted(parameters.items()))


def signed_request(keys, host, stamp, method, path, query=None, session=None):
    """`path` under NCMB's version with its query (`query`: a dict, percent-encoded), and the
    headers of a request signed with `keys` (applicationKey, clientKey) at `stamp` for `host`,
    with `session`'s token when given: as an SDK sends a request."""
    app_key, client_key = keys['applicationKey'], keys['clientKey']
    full = '/2013-09-01/' + path
    headers = {'X-NCMB-Application-Key': app_key, 'X-NCMB-Timestamp': stamp,
               'X-NCMB-Signature': signature(client_key, method, host, full,
                                             signed_query_text(app_key, stamp, query)),
               'Content-Type': 'application/json'}
    if session:
        headers['X-NCMB-Apps-Session-Token'] = session
    if query:
        full += '?' + '&'.join(f'{k}={urllib.parse.quote(v, safe="")}' for k, v in query.items())
    return full, headers


class Pane:
    """`words` run in a pseudo-terminal with `env` (a tall window: a thread's page is drawn,
    never paged), and what it has written so far (`seen`)."""

    def __init__(self, words, env):
        import fcntl, pty, struct, termios
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvpe(words[0], words, env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack('HHHH', 500, 120, 0, 0))
        self.seen = b''

    def wait_for(self, text, timeout=20):
        """Reads until `text` was written; the monotonic time it was seen."""
        import select, time
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit(f'timed out waiting for {text!r}: {self.seen[-300:]!r}')
            if select.select([self.fd], [], [], left)[0]:
                try:
                    self.seen += os.read(self.fd, 65536)
                except OSError:
                    raise SystemExit(f'pane closed: {self.seen[-300:]!r}')
        return time.monotonic()

    def send(self, text):
        os.write(self.fd, text.encode())

    def close(self):
        try:
            self.send('quit\r')
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def percentile(values, p):
    """The `p` quantile (0–1) of `values`, in the values' unit."""
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def copy_synced(source, destination):
    """Copies a board and writes the copy to the disk before anything is measured: a fresh
    copy's gigabyte of dirty pages would otherwise be flushed by the server's first checkpoint
    (its `fdatasync`) inside the run, a stall a board in use never has."""
    shutil.copy(source, destination)
    descriptor = os.open(destination, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)

