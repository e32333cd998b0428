#!/usr/bin/env bash
# scripts/fuzz-replay.sh: replays device-fuzzer seeds many times each, alone and while other
# processes load the GPU (the conditions of a campaign: fuzz-campaign.sh runs batches side by
# side), under CUFUSE_GRAPHS=1 and =all, and counts the failing runs per seed and condition.
# A seed that fails only under load points at a missing stream ordering, not a wrong kernel.
#
#   FUZZ_SEEDS="728327525901 728217886719" FUZZ_REPEAT=20 FUZZ_LOAD=6 bash scripts/fuzz-replay.sh
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${FUZZ_BIN:-$PWD/build-gpu/tests/cufuse_gpu_tests}
REPEAT=${FUZZ_REPEAT:-10}
LOAD=${FUZZ_LOAD:-6}
BUDGET=${FUZZ_BUDGET:-240}
OUTDIR=${FUZZ_OUTDIR:-$PWD/build-gpu/fuzz-replay}
mkdir -p "$OUTDIR"
TC='fuzz: random programs on the device against the reference evaluator'
DEADLINE=$(( $(date +%s) + BUDGET ))
replay() {  # replay SEED GRAPHS LABEL: REPEAT runs, prints "seed label graphs failed/runs"
  local seed=$1 graphs=$2 label=$3 bad=0 runs=0 i
  for i in $(seq "$REPEAT"); do
    [ "$(date +%s)" -ge "$DEADLINE" ] && break
    runs=$((runs + 1))
    if ! CUFUSE_GRAPHS=$graphs CUFUSE_FUZZ_SEED=$seed timeout 120 "$BIN" "--test-case=$TC" --no-colors \
        >"$OUTDIR/$seed-$label-$graphs-$i.out" 2>&1; then
      bad=$((bad + 1))
    else
      rm -f "$OUTDIR/$seed-$label-$graphs-$i.out"
    fi
  done
  echo "replay seed=$seed $label graphs=$graphs failed=$bad/$runs"
}
for seed in ${FUZZ_SEEDS:?}; do
  for g in 1 all; do replay "$seed" "$g" alone; done
done
# Load: LOAD campaign-like processes on fresh seeds for the rest of the budget.
pids=()
for j in $(seq "$LOAD"); do
  ( while [ "$(date +%s)" -lt "$DEADLINE" ]; do
      CUFUSE_FUZZ_FIRST=$(( $(date +%s%N) % 1000000000 * 1000 + j * 7919 )) CUFUSE_FUZZ_RUNS=40 \
        timeout 120 "$BIN" "--test-case=$TC" --no-colors >/dev/null 2>&1
    done ) &
  pids+=($!)
done
sleep 3
for seed in ${FUZZ_SEEDS:?}; do
  for g in 1 all; do replay "$seed" "$g" loaded; done
done
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
ls "$OUTDIR" | head -20
