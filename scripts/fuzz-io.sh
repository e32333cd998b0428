#!/usr/bin/env bash
# scripts/fuzz-io.sh: fuzzes the .npy and .npz readers with libFuzzer (clang with
# -fsanitize=fuzzer,address,undefined), SECONDS_EACH seconds each (default 120), starting from
# and adding to the corpus in tests/io/corpus/{npy,npz} (seeded from files cufuse and NumPy
# write). New inputs are merged into the corpus (minimized: -merge=1), crashers are copied
# there too and the script fails; tests/test_io_corpus.cpp replays the corpus in every test run.
#
#   bash scripts/fuzz-io.sh            # 2 minutes each
#   SECONDS_EACH=600 bash scripts/fuzz-io.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=${FUZZ_CXX:-clang++}
OUT=${FUZZ_OUT:-build-fuzz}
SECS=${SECONDS_EACH:-120}
mkdir -p "$OUT"
ZLIB_FLAGS=()
[ -f /usr/include/zlib.h ] && ZLIB_FLAGS=(-DCUFUSE_HAVE_ZLIB=1 -lz)
SRC=(src/io/byte_source.cpp src/io/npy_format.cpp src/io/zip.cpp src/core/dtype.cpp)
FMT_INC=$(dirname "$(dirname "$(find /usr/include ${CUFUSE_EXTRA_INCLUDE:-} -name format.h -path '*fmt/*' 2>/dev/null | head -1)")")
rc=0
for t in npy npz; do
  # Rebuilt when a source is newer than the binary.
  if [ ! -x "$OUT/fuzz_$t" ] || [ -n "$(find tests/fuzz_io "${SRC[@]}" src/io include/cufuse -newer "$OUT/fuzz_$t" | head -1)" ]; then
    echo "== building fuzz_$t"
    "$CXX" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
      -DFMT_HEADER_ONLY=1 -Iinclude -Isrc -I"$FMT_INC" "tests/fuzz_io/fuzz_$t.cpp" "${SRC[@]}" \
      "${ZLIB_FLAGS[@]}" -o "$OUT/fuzz_$t"
  fi
  corpus=tests/io/corpus/$t
  work=$OUT/work_$t
  mkdir -p "$work" "$OUT/crash_$t"
  echo "== fuzzing $t for ${SECS}s"
  if ! "$OUT/fuzz_$t" -max_total_time="$SECS" -max_len=4096 -rss_limit_mb=2048 -timeout=10 \
       -artifact_prefix="$OUT/crash_$t/" "$work" "$corpus" >"$OUT/fuzz_$t.log" 2>&1; then
    echo "fuzz_$t FOUND A CRASH: see $OUT/fuzz_$t.log"
    tail -40 "$OUT/fuzz_$t.log"
    cp "$OUT/crash_$t"/* "$corpus"/ 2>/dev/null || true
    rc=1
  fi
  grep -E "^#[0-9]+.*(DONE|pulse)" "$OUT/fuzz_$t.log" | tail -1 || true
  # Keep a minimized set: what covers new edges, into the checked-in corpus.
  "$OUT/fuzz_$t" -merge=1 "$corpus" "$work" >/dev/null 2>&1 || true
  echo "== corpus $corpus: $(ls "$corpus" | wc -l) files"
done
exit $rc
