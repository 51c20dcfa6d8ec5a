#!/usr/bin/env bash
# Scripts/fuzz.sh TARGET SECONDS   build one libFuzzer target and run it for SECONDS
# Scripts/fuzz.sh all SECONDS      every target in turn, SECONDS each
# Scripts/fuzz.sh list             the targets
#
# C targets are built with clang -fsanitize=fuzzer,address, Swift ones with
# swiftc -sanitize=fuzzer,address over the source files they test. Seeds come from
# Fixtures/corpus, Fuzz/seeds and Fixtures/fuzz (the kept crashes); what a run finds goes to
# .build/fuzz/corpus/TARGET, crashes to .build/fuzz/crashes/TARGET/. A crash fails the script:
# copy it into Fixtures/fuzz/TARGET/ so `swift test` replays it, then fix it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
# Swift's own crash handler would race ASan's report.
export SWIFT_BACKTRACE=enable=no

targets=(png jpeg gif webp resample containers json tokenizer multipart)
out=.build/fuzz
# The decoders with their loader (libraries.c): the image libraries are opened with dlopen on
# first use, as in forum itself, so nothing is linked with -l.
decoder_sources=(Sources/CImageDecode/*.c)

build() {
  local target=$1 binary="$out/bin/$1"
  mkdir -p "$out/bin"
  case $target in
    png | jpeg | gif | webp)
      # The libraries the target must load before it runs (it stops if one cannot).
      local libraries="CIMG_LIBRARY_${target^^}"
      [ "$target" = webp ] && libraries+=",CIMG_LIBRARY_WEBPDEMUX"
      clang -g -O1 -fsanitize=fuzzer,address -DCIMG_FUZZ_DECODER="cimg_decode_$target" \
        -DCIMG_FUZZ_LIBRARIES="$libraries" -I Sources/CImageDecode/include Fuzz/C/decode.c \
        "${decoder_sources[@]}" -o "$binary" ;;
    resample)
      clang -g -O1 -fsanitize=fuzzer,address -I Sources/CImageDecode/include Fuzz/C/resample.c \
        Sources/CImageDecode/resample.c Sources/CImageDecode/budget.c -o "$binary" ;;
    containers)
      swiftc -sanitize=fuzzer,address -parse-as-library -g -module-name FuzzContainers \
        Sources/Forum/Images/*.swift Sources/Refusals/*.swift Fuzz/Swift/containers.swift \
        -o "$binary" ;;
    json)
      swiftc -sanitize=fuzzer,address -parse-as-library -g -module-name FuzzJSON \
        Sources/Datastore/JSONValue.swift Sources/Datastore/CanonicalJSON.swift \
        Sources/Datastore/DatastoreError.swift Sources/Datastore/PlainText.swift \
        Sources/Refusals/*.swift \
        Fuzz/Swift/json.swift -o "$binary" ;;
    tokenizer)
      # The tokenizer the prompt, scripts and argv share (the grammar above it needs the
      # whole ForumCLI module and is not fuzzed here).
      swiftc -sanitize=fuzzer,address -parse-as-library -g -module-name FuzzTokenizer \
        Sources/ForumCLI/Input/CommandWords.swift Fuzz/Swift/tokenizer.swift -o "$binary" ;;
    multipart)
      # forum serve's reader of an upload's multipart/form-data body.
      swiftc -sanitize=fuzzer,address -parse-as-library -g -module-name FuzzMultipart \
        Sources/NCMBServer/MultipartForm.swift Fuzz/Swift/multipart.swift -o "$binary" ;;
    *) echo "unknown target $target (one of: ${targets[*]})" >&2; exit 2 ;;
  esac
}

# Seed directories for a target (libFuzzer reads them recursively).
seeds() {
  local dirs=()
  case $1 in
    png) dirs=(Fixtures/corpus/png Fuzz/seeds/png) ;;
    jpeg) dirs=(Fixtures/corpus/jpeg Fuzz/seeds/jpeg) ;;
    gif) dirs=(Fuzz/seeds/gif) ;;
    webp) dirs=(Fuzz/seeds/webp) ;;
    resample) dirs=(Fuzz/seeds/resample) ;;
    containers) dirs=(Fixtures/corpus Fuzz/seeds/png Fuzz/seeds/jpeg Fuzz/seeds/gif Fuzz/seeds/webp) ;;
    json) dirs=(Fuzz/seeds/json) ;;
    tokenizer) dirs=(Fuzz/seeds/tokenizer) ;;
    multipart) dirs=(Fuzz/seeds/multipart) ;;
  esac
  [ -d "Fixtures/fuzz/$1" ] && dirs+=("Fixtures/fuzz/$1")
  for d in "${dirs[@]}"; do [ -d "$d" ] && echo "$d"; done
}

run() {
  local target=$1 seconds=$2
  mkdir -p "$out"
  # The ASan runtime makes the linker chatty; its output is shown only when the build fails.
  if ! build "$target" >"$out/$target.build.log" 2>&1; then
    grep -v "Cannot export local symbol" "$out/$target.build.log" | tail -20 >&2
    return 1
  fi
  mkdir -p "$out/corpus/$target" "$out/crashes/$target"
  local started=$SECONDS
  local status=0
  # -timeout: one input taking 10 s is a hang (the decode budget is 2 s of CPU).
  "$out/bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 \
    -max_len=262144 -print_final_stats=1 -artifact_prefix="$out/crashes/$target/" \
    "$out/corpus/$target" $(seeds "$target") >"$out/$target.log" 2>&1 || status=$?
  local ran=$((SECONDS - started))
  local stats
  stats=$(grep -E "stat::number_of_executed_units" "$out/$target.log" | tail -1 | awk '{print $2}')
  echo "fuzz $target: ${ran}s, ${stats:-?} inputs, exit $status (log $out/$target.log)"
  if [ "$status" -ne 0 ]; then
    grep -E "ERROR|SUMMARY|Test unit written" "$out/$target.log" | head -5 >&2
    return 1
  fi
}

case "${1:-}" in
  list) printf '%s\n' "${targets[@]}" ;;
  all)
    failed=0
    for t in "${targets[@]}"; do run "$t" "${2:?seconds}" || failed=1; done
    exit $failed ;;
  "") sed -n '2,10p' "$0"; exit 2 ;;
  *) run "$1" "${2:?seconds}" ;;
esac
