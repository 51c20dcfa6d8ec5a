#!/usr/bin/env python3
"""Issue 34: an app's GeoPoint queries through `forum serve`, before and after `forum index geo
Spot location`, on both engines. SPOTS public spots spread over Japan (SQLite: an NCMB export of
them brought in by `forum import ncmb`; PostgreSQL: inserted by the owner with psql), then, as the Swift
SDK sends them (Fixtures/sdk-wire/swift.py), a box of about 0.2 x 0.3 degrees around Tokyo and a
$nearSphere within 5 km of Tokyo station, each REQUESTS times one after another: the median and
p99 of each, first with no index (the class's rows walked), then with the index (the server
restarted). Each request's box or point is a millionth of a degree from the last, so no read
cache answers it. PostgreSQL's own EXPLAIN ANALYZE of the engine's statements is in
PostgresGeoIndexTests; this is the whole request.

usage: Scripts/bench-geo.py [--build DIR] [--spots N] [--requests N] [--engines sqlite,postgres]
The PostgreSQL cluster is a throwaway one (bench_support.py: initdb as the postgres user when run
as root); it and the servers are stopped at the end."""
import json, os, shutil, signal, statistics, subprocess, sys, time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', 'Fixtures', 'sdk-wire'))
import swift  # noqa: E402
import bench_support  # noqa: E402

build = os.path.join(here, '..', '.build', 'debug')
spots, requests, engines = 100_000, 200, ['sqlite', 'postgres']
args = sys.argv[1:]
while args:
    option, value, args = args[0], args[1], args[2:]
    if option == '--build':
        build = value
    elif option == '--spots':
        spots = int(value)
    elif option == '--requests':
        requests = int(value)
    elif option == '--engines':
        engines = value.split(',')
    else:
        sys.exit('unknown option ' + option)
forum = os.path.join(build, 'forum')
root, env = bench_support.scratch('bench-geo.')
stops = []


def spot(i):
    """The i-th spot: a fixed pseudo-random spread over 30-45 N, 128-146 E."""
    return {'name': 'spot %d' % i, 'location': {
        '__type': 'GeoPoint', 'latitude': 30 + (i * 7919 % 100003) / 100003 * 15,
        'longitude': 128 + (i * 104729 % 99991) / 99991 * 18}}


def postgres_board():
    cluster, server, owner = bench_support.postgres_board(forum, root, env)
    stops.append(cluster.stop)
    cluster.psql('owner', """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        SELECT 'Spot', 'S' || lpad(i::text, 15, '0'), '{*}', '{*}',
          jsonb_build_object('name', 'spot ' || i, 'location', jsonb_build_object(
            '__type', 'GeoPoint', 'latitude', 30 + (i * 7919 %% 100003) / 100003.0 * 15,
            'longitude', 128 + (i * 104729 %% 99991) / 99991.0 * 18))
        FROM generate_series(1::bigint, %d) AS i;
        ANALYZE forum.objects;""" % spots)
    return server, owner


def serve(db):
    server = subprocess.Popen([forum, '--db', db, 'serve', '--listen', '127.0.0.1:0'], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    stops.append(lambda: server.poll() is None and server.kill())
    line = server.stdout.readline()
    port = int(line.split('127.0.0.1:')[1].split()[0].rstrip('/').split('/')[0])
    return server, port


def stop(server):
    server.send_signal(signal.SIGTERM)
    server.wait(30)


def measure(port, keys):
    app = swift.SwiftSDK(port, keys['applicationKey'], keys['clientKey'])
    app.automatic_user()
    def point(latitude, longitude):
        return {'__type': 'GeoPoint', 'latitude': latitude, 'longitude': longitude}
    # Each request a millionth of a degree apart: no two alike, so no cache answers one.
    queries = {
        'box': lambda d: {'location': {'$within': {'$box': [
            point(35.6 + d, 139.6), point(35.8 + d, 139.9)]}}},
        'near 5 km': lambda d: {'location': {'$nearSphere': point(35.681 + d, 139.767),
                                             '$maxDistanceInKilometers': 5}},
    }
    figures = {}
    for name, where in queries.items():
        times, found = [], None
        for n in range(requests):
            started = time.perf_counter()
            answer = app.find('Spot', where(n / 1e6), limit=100)
            times.append((time.perf_counter() - started) * 1000)
            assert answer.status == 200, answer
            found = len(answer.json['results'])
        times.sort()
        figures[name] = {'found': found, 'median_ms': round(statistics.median(times), 2),
                         'p99_ms': round(times[int(len(times) * 0.99) - 1], 2)}
    return figures


try:
    report = {'spots': spots, 'requests': requests, 'load': os.getloadavg()}
    for engine in engines:
        if engine == 'postgres':
            db, owner = postgres_board()
        else:
            db = owner = root + '/board.sqlite'
            subprocess.run([forum, '--db', db, 'init'], env=env, check=True, capture_output=True)
        keys = bench_support.board_keys(forum, owner, env)
        if engine == 'sqlite':
            # As an app moving here brings them: an NCMB export of the class, imported.
            export = root + '/export'
            os.makedirs(export, exist_ok=True)
            with open(export + '/Spot.json', 'w') as out:
                json.dump({'results': [dict(spot(i), objectId='S%015d' % i,
                                            createDate='2024-01-01T00:00:00.000Z',
                                            updateDate='2024-01-01T00:00:00.000Z',
                                            acl={'*': {'read': True, 'write': True}})
                                       for i in range(1, spots + 1)]}, out)
            subprocess.run([forum, '--db', db, 'import', 'ncmb', export], env=env, check=True,
                           capture_output=True)
        server, port = serve(db)
        scan = measure(port, keys)
        stop(server)
        subprocess.run([forum, '--db', owner, 'index', 'geo', 'Spot', 'location'], env=env,
                       check=True, capture_output=True)
        server, port = serve(db)
        indexed = measure(port, keys)
        stop(server)
        report[engine] = {'scan': scan, 'indexed': indexed}
    report['load after'] = os.getloadavg()
    print(json.dumps(report, indent=1))
finally:
    for action in stops:
        action()
    shutil.rmtree(root, ignore_errors=True)
