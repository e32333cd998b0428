#!/usr/bin/env bash
# scripts/fuzz-cli.sh: fuzzes the CLI's program parser (lexer, parser, number folding) with
# libFuzzer (clang with -fsanitize=fuzzer,address,undefined) for SECONDS_TOTAL seconds (default
# 120), starting from and adding to the corpus in tests/fuzz_cli/corpus (seeded from the
# programs the CLI tests use). New inputs are merged into the corpus (minimized: -merge=1),
# crashers are copied there too and the script fails; tests/test_cli_corpus.cpp replays the
# corpus in every test run. Runs niced: other work on the machine goes first.
#
#   bash scripts/fuzz-cli.sh                 # 2 minutes
#   SECONDS_TOTAL=3600 bash scripts/fuzz-cli.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=${FUZZ_CXX:-clang++}
OUT=${FUZZ_OUT:-build-fuzz}
SECS=${SECONDS_TOTAL:-120}
mkdir -p "$OUT"
SRC=(src/cli/lexer.cpp src/cli/parser.cpp src/cli/numbers.cpp src/core/dtype.cpp)
FMT_INC=$(dirname "$(dirname "$(find /usr/include ${CUFUSE_EXTRA_INCLUDE:-} -name format.h -path '*fmt/*' 2>/dev/null | head -1)")")
BIN=$OUT/fuzz_cli_program
if [ ! -x "$BIN" ] || [ -n "$(find tests/fuzz_cli/fuzz_program.cpp "${SRC[@]}" src/cli/syntax.hpp src/cli/numbers.hpp include/cufuse -newer "$BIN" | head -1)" ]; then
  echo "== building $BIN"
  nice -n 19 "$CXX" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DFMT_HEADER_ONLY=1 -Iinclude -Isrc -I"$FMT_INC" tests/fuzz_cli/fuzz_program.cpp "${SRC[@]}" -o "$BIN"
fi
corpus=tests/fuzz_cli/corpus
work=$OUT/work_cli
mkdir -p "$work" "$OUT/crash_cli" "$corpus"
echo "== fuzzing the program parser for ${SECS}s"
rc=0
# A stack 8 MiB deep like a program's main thread; -max_len lets deep nesting through.
if ! nice -n 19 "$BIN" -max_total_time="$SECS" -max_len=65536 -len_control=200 -rss_limit_mb=2048 -timeout=10 \
     -dict=tests/fuzz_cli/program.dict -artifact_prefix="$OUT/crash_cli/" "$work" "$corpus" >"$OUT/fuzz_cli.log" 2>&1; then
  echo "fuzz_cli FOUND A CRASH: see $OUT/fuzz_cli.log"
  tail -40 "$OUT/fuzz_cli.log"
  cp "$OUT/crash_cli"/* "$corpus"/ 2>/dev/null || true
  rc=1
fi
grep -E "^#[0-9]+.*(DONE|pulse)" "$OUT/fuzz_cli.log" | tail -1 || true
nice -n 19 "$BIN" -merge=1 "$corpus" "$work" >/dev/null 2>&1 || true
echo "== corpus $corpus: $(ls "$corpus" | wc -l) files"
exit $rc
