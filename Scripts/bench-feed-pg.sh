#!/usr/bin/env bash
# Scripts/bench-feed.py on PostgreSQL: a throwaway cluster (initdb as the postgres user when run
# as root, a private socket), a board made by its owner, two servers connecting as a role granted
# forum_member and forum_server.
# Usage: Scripts/bench-feed-pg.sh FORUM-BINARY [--posts N]
set -euo pipefail
cd "$(dirname "$0")/.."
forum="$1"
shift
binaries="/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -1)/bin"
as_postgres=()
[ "$(id -u)" = 0 ] && as_postgres=(runuser -u postgres --)
work=$(mktemp -d)
chmod 755 "$work"
mkdir "$work/socket"
[ "$(id -u)" = 0 ] && chown postgres "$work" "$work/socket"
port=$((20000 + RANDOM % 20000))
stop() {
  "${as_postgres[@]}" "$binaries/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap stop EXIT
"${as_postgres[@]}" "$binaries/initdb" -D "$work/data" -U postgres --auth=trust -E UTF8 \
  --locale=C --no-instructions >/dev/null
"${as_postgres[@]}" "$binaries/pg_ctl" -D "$work/data" -l "$work/socket/server.log" -w \
  -o "-k $work/socket -c listen_addresses= -p $port" start >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -h "$work/socket" -p "$port" -U postgres -d postgres <<'SQL'
CREATE ROLE forum_member NOLOGIN;
CREATE ROLE forum_server NOLOGIN;
CREATE ROLE owner LOGIN CREATEROLE;
CREATE DATABASE board OWNER owner;
CREATE ROLE server LOGIN IN ROLE forum_member, forum_server;
SQL
owner="postgresql://owner@/board?host=$work/socket&port=$port"
"$forum" --db "$owner" init >/dev/null
python3 Scripts/bench-feed.py "$forum" "postgresql://server@/board?host=$work/socket&port=$port" \
  --owner-db "$owner" "$@"
