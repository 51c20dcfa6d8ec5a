#!/bin/bash
# Expects a PostgreSQL cluster with `log_min_duration_statement = 0` and `log_line_prefix = '%p %u '`
# logging to /tmp/wo30pg/server.log, its socket in /tmp/wo30pg/sock on port 5491, a board made
# by `forum init` in database `forum` and members `alice` and `bob` (BENCHMARKS.md, rows
# W3 and W4). Change LOG and U below for another cluster.
# Usage: Scripts/bench-pg-roundtrips.sh FORUM_BINARY LABEL — PostgreSQL round trips (Parse of a new prepared
# statement, Execute of a prepared one, or a simple query) per one-shot command, from the server's log.
F=$1; L=$2; LOG=/tmp/wo30pg/server.log
U='postgresql:///forum?host=/tmp/wo30pg/sock&port=5491'
export HOME=/tmp/wo30home-$L; mkdir -p $HOME
count() { # role, args...
  local role=$1; shift
  local before=$(wc -l < $LOG)
  "$F" --db "$U&user=$role" "$@" > /dev/null 2>/tmp/wo30-err || { echo "FAILED $*: $(cat /tmp/wo30-err)"; }
  sleep 0.3
  local lines=$(tail -n +$((before+1)) $LOG)
  local parse=$(grep -c "duration: .* parse " <<< "$lines")
  local exec=$(grep -c "duration: .* execute " <<< "$lines")
  local simple=$(grep -c "duration: .* statement: " <<< "$lines")
  echo "$L $role $*: $((parse+exec+simple)) round trips (parse $parse, execute $exec, simple $simple)"
}
count alice list   # warm: sign in once
count bob list
count alice new --title "T $L" --description "D"
N=$("$F" --db "$U&user=alice" --json list 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(max(t["number"] for t in (d["results"])))')
count bob comment $N "a comment"
count bob comment $N "another"
count alice edit $N --title "T2 $L"
count bob edit $N/1 "edited comment"
count bob delete $N/2 --yes
count alice delete $N --yes
count alice list
