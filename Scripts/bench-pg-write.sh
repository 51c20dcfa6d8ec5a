#!/usr/bin/env bash
# One large write on PostgreSQL (issue 28 item 6), beside its floor, in one run:
#   floor   a plain INSERT of the same bytes into a table with no check and no trigger
#   board   a member's INSERT INTO forum.objects (every trigger and check of the board)
#   before  the same, with forum.texts_within put back as schema step 3 made it
# The object is `{"a":[[0],[0],…]}` (the issue's shape: the most nodes per byte), as a request
# body of 256 KiB and of 1 MiB. Each figure is the median of 3 statements (`\timing` in psql,
# the bytes sent on a local socket each time); "before" runs once per size (it takes minutes).
# A throwaway cluster (initdb as the postgres user when run as root, a private socket).
# Usage: Scripts/bench-pg-write.sh [BUILD_DIR]   (default: swift build's debug directory; only
# `forum init` runs from it)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
build="${1:-$(swift build --show-bin-path)}"
forum="$build/forum"
[ -x "$forum" ] || { echo "no forum binary at $forum (swift build first)" >&2; exit 1; }
source Scripts/pg-cluster.sh
psql_as postgres postgres <<'SQL'
CREATE ROLE forum_member NOLOGIN;
CREATE ROLE owner LOGIN CREATEROLE;
CREATE DATABASE board OWNER owner;
CREATE ROLE alice LOGIN IN ROLE forum_member;
SQL
"$forum" --db "postgresql://owner@/board?host=$work/socket&port=$port" init >/dev/null
me=$(echo "SELECT forum.sign_in()" | psql_as alice)
psql_as owner <<'SQL'
CREATE TABLE public.floor(data jsonb);
GRANT INSERT ON public.floor TO alice;
SQL

# The body: `count` items of `[0]`, four bytes each with their commas.
body() {
  python3 -c "import sys; n = int(sys.argv[1]); sys.stdout.write('{\"a\":[' + ','.join(['[0]'] * n) + ']}')" "$1"
}
# Milliseconds of each of `runs` INSERTs of the file's text into `target` (floor or board).
timings() {  # timings FILE TARGET RUNS
  local statements="" i id
  for i in $(seq 1 "$3"); do
    id=$(printf 'bench%011d' $((RANDOM * 32768 + RANDOM)))
    if [ "$2" = floor ]; then
      statements+="INSERT INTO public.floor VALUES (:'doc');"$'\n'
    else
      statements+="INSERT INTO forum.objects(class, object_id, readers, writers, data) VALUES ('Bomb', '$id', '{*}', '{$me}', :'doc');"$'\n'
    fi
  done
  printf '\\set doc `cat %s`\n\\timing on\n%s' "$1" "$statements" | psql_as alice |
    sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

old_check=$(cat <<'SQL'
CREATE OR REPLACE FUNCTION forum.texts_within(document jsonb, maximum integer) RETURNS boolean
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog
  AS $$
    SELECT NOT EXISTS (
      SELECT 1 FROM jsonb_path_query(document, 'strict $.**') AS item
      WHERE jsonb_typeof(item) = 'string' AND octet_length(item #>> '{}') > maximum)
  $$;
SQL
)
new_check=$(echo "SELECT pg_get_functiondef('forum.texts_within(jsonb, integer)'::regprocedure)" |
  psql_as owner)

printf '%-8s %12s %12s %12s %12s\n' body bytes floor_ms board_ms before_ms
for count in 65536 262144; do
  body "$count" >"$work/body.json"
  bytes=$(stat -c %s "$work/body.json")
  floor=$(timings "$work/body.json" floor 3 | median)
  board=$(timings "$work/body.json" board 3 | median)
  echo "$old_check" | psql_as owner
  before=$(timings "$work/body.json" board 1 | median)
  echo "$new_check" | psql_as owner
  printf '%-8s %12s %12s %12s %12s\n' "$((bytes / 1024))KiB" "$bytes" "$floor" "$board" "$before"
done
