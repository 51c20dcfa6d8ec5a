#!/usr/bin/env bash
# Image benchmark: attaching a ~5 MB JPEG and previewing a 4000×3000 JPEG with the release
# `forum` binary, each a hyperfine median beside its floor (the same command without the image
# work). Needs cjpeg (libjpeg-turbo-progs) and hyperfine, both Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in cjpeg hyperfine python3; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install -y libjpeg-turbo-progs hyperfine)" >&2; exit 1; }
done

swift build -c release --product forum >/dev/null
forum="$(swift build -c release --show-bin-path)/forum"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data"

# A 4000×3000 photo-like picture: a gradient with noise, so the JPEG is as large as a real photo.
python3 - "$work/photo.ppm" <<'PY'
import os, sys
width, height = 4000, 3000
with open(sys.argv[1], "wb") as out:
    out.write(b"P6 %d %d 255\n" % (width, height))
    for y in range(height):
        base = 40 + (y * 150) // height
        table = bytes(min(255, base + (b & 0x3F)) for b in range(256))
        out.write(os.urandom(width * 3).translate(table))
PY
# The largest quality whose JPEG stays under the 5 MB attachment limit.
for quality in 95 92 90 88 85 80 75 70 60 50; do
  cjpeg -quality "$quality" "$work/photo.ppm" > "$work/photo.jpg"
  [ "$(stat -c %s "$work/photo.jpg")" -le 5000000 ] && break
done
size=$(stat -c %s "$work/photo.jpg")
echo "test image: 4000×3000 JPEG, quality $quality, $size bytes"

db="$work/board.sqlite"
"$forum" --db "$db" new --title "photo" --image "$work/photo.jpg" >/dev/null
"$forum" --db "$db" new --title "no image" >/dev/null

hyperfine --warmup 2 --runs 15 --export-markdown "$work/attach.md" \
  -n "new with the 5 MB JPEG" "$forum --db $db new --title t --image $work/photo.jpg" \
  -n "new without image (floor)" "$forum --db $db new --title t"
hyperfine --warmup 2 --runs 15 --export-markdown "$work/preview.md" \
  -n "show with 4000×3000 preview (blocks)" "$forum --db $db --images blocks show 1" \
  -n "show, text line only (floor)" "$forum --db $db --images none show 1"
cat "$work/attach.md" "$work/preview.md"
