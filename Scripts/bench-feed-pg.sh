#!/usr/bin/env bash
# Scripts/bench-feed.py on PostgreSQL: a throwaway cluster (initdb as the postgres user when run
# as root, a private socket), a board made by its owner, two servers connecting as a role granted
# forum_member and forum_server.
# Usage: Scripts/bench-feed-pg.sh FORUM-BINARY [--posts N]
set -euo pipefail
cd "$(dirname "$0")/.."
forum="$1"
shift
source Scripts/pg-cluster.sh
psql_as postgres postgres <<'SQL'
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
