#!/usr/bin/env bash
# Image budget benchmark: the worst CPU time and peak memory of attaching and previewing every
# image of the corpus (Fixtures/corpus, Fuzz/seeds) and every generated hostile or huge file
# (forum-bench images: frame bombs, scan bombs, honest 100-megapixel pictures), each beside its
# budget. Uses the release `forum` and GNU time (Debian's `time` package).
#
# Attach = `forum new --image F` (container walk, budgets, a trial decode of every row).
# Preview = the larger of `forum --images kitty image 1` with COLUMNS=LINES=1000 (the largest
# decode there is: 1600 pixels a side) and `forum --images blocks show 1` (the thumbnail).
# Memory is the process's peak RSS; "above floor" subtracts `forum list` on the same board.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install -y time)" >&2; exit 1; }

swift build -c release --product forum >/dev/null
swift build -c release --product forum-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data"
"$bin/forum-bench" images --out "$work/generated" >/dev/null

# "user+sys seconds" and "peak RSS in MB" of one command, its output discarded.
measure() {
  /usr/bin/time -f "%U %S %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || true
  # GNU time puts "Command exited with non-zero status" first when the command fails.
  tail -1 "$work/time" | awk '{printf "%.2f %.1f\n", $1 + $2, $3 / 1024}'
}

floor_db="$work/floor.sqlite"
"$bin/forum" --db "$floor_db" new --title floor >/dev/null
read -r floor_cpu floor_mb < <(measure "$bin/forum" --db "$floor_db" list)

# One file: name, result, attach cpu/MB, preview cpu/MB.
bench() {
  local file=$1 db="$work/$RANDOM$RANDOM.sqlite"
  local attach preview="- -" result
  attach=$(measure "$bin/forum" --db "$db" new --title t --image "$file")
  if [ -s "$work/stderr" ]; then
    # "forum: cannot attach image: PATH: reason" → the reason.
    result="refused: $(sed "s|^forum: cannot attach image: ||; s|^$file: ||" "$work/stderr" |
      head -1 | cut -c1-90)"
  else
    result="previewed"
    local big small
    big=$(COLUMNS=1000 LINES=1000 measure "$bin/forum" --db "$db" --images kitty image 1)
    small=$(measure "$bin/forum" --db "$db" --images blocks show 1)
    preview=$(printf '%s\n%s\n' "$big" "$small" | sort -k1,1nr | head -1 | cut -d' ' -f1)
    preview="$preview $(printf '%s\n%s\n' "$big" "$small" | sort -k2,2nr | head -1 | cut -d' ' -f2)"
  fi
  rm -f "$db"
  echo "$(basename "$file")|$result|$attach|$preview"
}

corpus=$(find Fixtures/corpus Fuzz/seeds -type f \( -name '*.png' -o -name '*.jpg' -o -name '*.gif' -o -name '*.webp' \) | sort)
echo "process floor (forum list): ${floor_cpu} s CPU, ${floor_mb} MB"
echo
echo "| file | result | attach CPU s | attach peak MB | preview CPU s | preview peak MB |"
echo "|---|---|---|---|---|---|"
worst_cpu=0 worst_mb=0 count=0
for file in $corpus; do
  IFS='|' read -r name result attach preview < <(bench "$file")
  count=$((count + 1))
  for pair in "$attach" "$preview"; do
    read -r cpu mb <<<"$pair"
    [ "$cpu" = "-" ] && continue
    worst_cpu=$(awk -v a="$worst_cpu" -v b="$cpu" 'BEGIN{print (b>a)?b:a}')
    worst_mb=$(awk -v a="$worst_mb" -v b="$mb" 'BEGIN{print (b>a)?b:a}')
  done
done
echo "| corpus and seeds: worst of $count files | | ${worst_cpu} (any step) | ${worst_mb} (any step) | | |"
for file in "$work"/generated/*; do
  IFS='|' read -r name result attach preview < <(bench "$file")
  read -r acpu amb <<<"$attach"
  read -r pcpu pmb <<<"$preview"
  echo "| $name | $result | $acpu | $amb | $pcpu | $pmb |"
done
echo
echo "budgets: 2 s of CPU per decode; 64 MB for decoder and resampler above the process floor" \
  "(${floor_mb} MB)"
