#!/bin/bash
# BENCHMARKS S5: pages of `forum list` beside page 1, timed by hyperfine in alternated blocks
# (ROUNDS blocks of 15 runs of every page in turn) so that a drift of the machine's speed
# falls on every page alike; prints each page's mean and median and its ratio to the first.
# Usage: Scripts/bench-list-pages.sh FORUM BOARD ROUNDS PAGE... (the first PAGE is the base,
# usually 1; BOARD a copy of the 1M board signed in once: `FORUM --db BOARD list`).
set -euo pipefail
forum=$1 board=$2 rounds=$3
shift 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for round in $(seq "$rounds"); do
  commands=()
  for page in "$@"; do
    if [ "$page" = 1 ]; then commands+=("$forum --db $board list")
    else commands+=("$forum --db $board list --page $page"); fi
  done
  hyperfine -N -w 2 -r 15 --export-json "$out/$round.json" "${commands[@]}" > /dev/null
done
python3 - "$out" "$rounds" "$@" <<'PY'
import json, statistics, sys
out, rounds, pages = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
times = {page: [] for page in pages}
for round in range(1, rounds + 1):
    results = json.load(open(f"{out}/{round}.json"))["results"]
    for page, result in zip(pages, results):
        times[page] += result["times"]
base_mean = statistics.mean(times[pages[0]])
base_median = statistics.median(times[pages[0]])
for page in pages:
    mean, median = statistics.mean(times[page]), statistics.median(times[page])
    print(f"page {page}: mean {mean * 1000:.2f} ms, median {median * 1000:.2f} ms; "
          f"{mean / base_mean:.2f}x / {median / base_median:.2f}x page {pages[0]}")
PY
