# Sourced by the bench-*.sh scripts: a throwaway PostgreSQL cluster in a new temporary folder
# (initdb as the postgres user when run as root, which PostgreSQL refuses), listening only on a
# private socket folder ($work/socket, no TCP) on port $port, stopped and removed on exit.
# Sets: work, port, binaries, as_postgres; defines psql_as ROLE [DATABASE] (SQL on stdin).
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

psql_as() {  # psql_as ROLE [DATABASE]: SQL on standard input, unaligned output
  psql -X -q -v ON_ERROR_STOP=1 -At -h "$work/socket" -p "$port" -U "$1" -d "${2:-board}"
}
