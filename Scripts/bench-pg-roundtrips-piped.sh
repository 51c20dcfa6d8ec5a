#!/bin/bash
# Expects a PostgreSQL cluster with `log_min_duration_statement = 0` and `log_line_prefix = '%p %u '`
# logging to /tmp/wo30pg/server.log, its socket in /tmp/wo30pg/sock on port 5491, a board made
# by `forum init` in database `forum` and members `alice` and `bob` (BENCHMARKS.md, rows
# W3 and W4). Change LOG and U below for another cluster.
F=$1; L=$2; LOG=/tmp/wo30pg/server.log; U='postgresql:///forum?host=/tmp/wo30pg/sock&port=5491'
export HOME=/tmp/wo30home-$L
before=$(wc -l < $LOG)
for i in $(seq 1 100); do echo "comment 1 piped comment $i"; done | "$F" --db "$U&user=bob" > /dev/null 2>/tmp/wo30-err || cat /tmp/wo30-err
sleep 0.5
lines=$(tail -n +$((before+1)) $LOG)
p=$(grep -c "duration: .* parse " <<< "$lines"); e=$(grep -c "duration: .* execute " <<< "$lines"); s=$(grep -c "duration: .* statement: " <<< "$lines")
echo "$L: 100 piped comments: $((p+e+s)) round trips (parse $p, execute $e, simple $s)"
