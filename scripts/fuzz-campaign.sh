#!/usr/bin/env bash
# scripts/fuzz-campaign.sh: the device fuzzer (tests/gpu/test_fuzz_gpu.cpp, programs from
# tests/fuzz_program.hpp: in-place writes, views, user kernels, library calls, fuse()) run
# for a time budget across processes and threads, on fresh seed ranges, appending one line
# per batch to a log: time, seeds, mode, CUFUSE_GRAPHS, programs, failures, exit status and
# seconds. A failing batch's output is kept beside the log and its seeds listed (replay one
# with CUFUSE_FUZZ_SEED=<n>). Run it on the GPU machine; issue 38 counts toward 100,000 programs.
#
#   bash scripts/fuzz-campaign.sh                     # 540 s, 2 processes, build-gpu's binary
#   FUZZ_BUDGET=3600 FUZZ_PROCS=3 bash scripts/fuzz-campaign.sh
#   FUZZ_BIN=build/tests/cufuse_gpu_tests FUZZ_LOG=fuzz.log FUZZ_BATCH=200 bash ...
# Batches cycle through three modes: one thread (CUFUSE_GRAPHS=1), one thread with every
# plan a CUDA graph from its first run (CUFUSE_GRAPHS=all), and four threads on their own
# streams (FUZZ_BATCH/4 programs each). Exit status 1 if any program failed or a batch crashed.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
BUDGET=${FUZZ_BUDGET:-540}
PROCS=${FUZZ_PROCS:-2}
BATCH=${FUZZ_BATCH:-300}
BIN=${FUZZ_BIN:-$ROOT/build-gpu/tests/cufuse_gpu_tests}
LOG=${FUZZ_LOG:-$ROOT/build-gpu/fuzz-campaign.log}
KEEP=$(dirname "$LOG")/fuzz-failures
mkdir -p "$(dirname "$LOG")" "$KEEP"
START=$(date +%s)
DEADLINE=$((START + BUDGET))
if [ ! -x "$BIN" ]; then
  echo "fuzz-campaign: $BIN is not built (cmake --build build-gpu --target cufuse_gpu_tests)"
  exit 2
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "fuzz-campaign: no GPU here (nvidia-smi failed); the device fuzzer needs one"
  exit 2
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo "# $(date -u +%FT%TZ) campaign start: budget ${BUDGET}s, ${PROCS} processes, batches of ${BATCH}, $("$BIN" --version 2>/dev/null | head -1)" >>"$LOG"

# doctest's --test-case splits its filter at commas: the names are given up to the first one.
SINGLE='fuzz: random programs on the device against the reference evaluator'
THREADS='fuzz: random programs on four threads at once*'

# batch ID: one process, one seed range; appends its line to the log.
batch() {
  local id=$1 mode=$((id % 3)) t0 rc first runs graphs=1 tc out=$WORK/batch-$1.out secs programs failed
  # Seed ranges far apart per batch: time in ms and the batch id (printed, so replayable).
  first=$(( ( $(date +%s%N) / 1000000 % 1000000000 ) * 1000 + id * 7919 ))
  runs=$BATCH
  case $mode in
    0) tc=$SINGLE ;;
    1) tc=$SINGLE; graphs=all ;;
    2) tc=$THREADS; runs=$(( BATCH / 4 > 1 ? BATCH / 4 : 1 )) ;;
  esac
  local left=$(( DEADLINE - $(date +%s) ))
  [ $left -lt 20 ] && return 0
  t0=$(date +%s)
  CUFUSE_GRAPHS=$graphs CUFUSE_FUZZ_FIRST=$first CUFUSE_FUZZ_RUNS=$runs \
    timeout --kill-after=10 "$left" "$BIN" "--test-case=$tc" --no-colors >"$out" 2>&1
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  # "N programs, F failed" (one thread) or "N programs on 4 threads, F failed".
  programs=$(grep -oE "[0-9]+ programs(,| on [0-9]+ threads,) [0-9]+ failed" "$out" | tail -1 | grep -oE "^[0-9]+")
  failed=$(grep -oE "[0-9]+ programs(,| on [0-9]+ threads,) [0-9]+ failed" "$out" | tail -1 | grep -oE "[0-9]+ failed" | grep -oE "[0-9]+")
  local status=ok
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then status="timeout (budget reached)"
  elif [ -z "$programs" ]; then status="CRASH (exit $rc, no summary)"
  elif [ "${failed:-0}" -gt 0 ] || [ $rc -ne 0 ]; then status="FAIL (exit $rc)"
  fi
  local seeds=""
  if [ "$status" != ok ] && [ "$status" != "timeout (budget reached)" ]; then
    cp "$out" "$KEEP/batch-$first.out"
    seeds=$(grep -oE "CUFUSE_FUZZ_SEED=[0-9]+" "$out" | sort -u | sed 's/CUFUSE_FUZZ_SEED=//' | tr '\n' ' ')
  fi
  printf '%s first=%s runs=%s mode=%s graphs=%s programs=%s failed=%s status=%s secs=%s%s\n' \
    "$(date -u +%FT%TZ)" "$first" "$runs" "$([ $mode = 2 ] && echo threads4 || echo single)" "$graphs" \
    "${programs:-0}" "${failed:-0}" "$status" "$secs" "${seeds:+ failing_seeds=$seeds}" >>"$LOG"
}

id=0
while [ $(( DEADLINE - $(date +%s) )) -ge 20 ]; do
  for _ in $(seq "$PROCS"); do
    batch $id &
    id=$((id + 1))
    sleep 1  # distinct seed ranges (the first seed is from the clock)
  done
  wait
done

# Totals: this campaign's lines (after its start marker), and the whole log's.
this=$(awk '/# .* campaign start/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$LOG")
sum() { grep -oE "$1=[0-9]+" | cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }'; }
P=$(echo "$this" | sum programs); F=$(echo "$this" | sum failed)
BAD=$(echo "$this" | grep -cE "status=(FAIL|CRASH)")
TP=$(sum programs <"$LOG"); TF=$(sum failed <"$LOG")
echo "fuzz-campaign: $P programs checked in $(( $(date +%s) - START ))s, $F failed, $BAD bad batches; log $LOG (all campaigns: $TP programs, $TF failed)"
echo "# $(date -u +%FT%TZ) campaign end: $P programs, $F failed, $BAD bad batches" >>"$LOG"
[ "$F" -eq 0 ] && [ "$BAD" -eq 0 ]
