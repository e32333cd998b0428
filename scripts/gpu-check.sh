#!/usr/bin/env bash
# scripts/gpu-check.sh: the one script to run on the GPU machine. Builds Release with all
# cores, runs ctest (unit + gpu suites), every example, cufuse-bench, the peers and the report;
# keeps going past a failing step; copies table, chart, JSON and logs to $OUT when it is set;
# prints a short summary last. Finishes within GPU_CHECK_BUDGET seconds (default 580: the
# device tool's 600-second call limit, less a margin).
#
#   bash scripts/gpu-check.sh            # from anywhere; works in the repository root
#   GPU_CHECK_FULL=1 bash scripts/...    # full repetitions for bench and peers (slower)
#   GPU_CHECK_ONLY=W13,W16,L1 bash ...   # bench and peers run only these workloads
#   GPU_CHECK_PART=build bash ...        # the build only: a first call on a cold machine, so the
#                                        # next call (warm, its build a no-op) has its whole time
#   GPU_CHECK_PART=tests bash ...        # build, tests and examples only (a first device call)
#   GPU_CHECK_CMAKE_ARGS="-DCUFUSE_INTERP_ARCHS=sm_90;compute_90" bash ...   # extra CMake cache
#                                        # settings (default: the interpreter for this GPU's arch only)
#   GPU_CHECK_PART=bench bash ...        # build (a no-op on a warm machine), bench, peers, report
#   GPU_CHECK_PART=sanitize bash ...     # build, compute-sanitizer (memcheck, racecheck, initcheck,
#                                        # synccheck) over a quick GPU subset, and a fuzz slice
# The tests part also runs a short fuzz slice (scripts/fuzz-campaign.sh) when time is left.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
START=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET:-580}
DEADLINE=$((START + BUDGET))
BUILD=$ROOT/build-gpu
LOGS=$BUILD/gpu-check
PY=${PYTHON:-python3}
JOBS=$(nproc 2>/dev/null || echo 4)
QUICK=--quick
[ "${GPU_CHECK_FULL:-0}" = 1 ] && QUICK=
ONLY=()
[ -n "${GPU_CHECK_ONLY:-}" ] && ONLY=(--only "$GPU_CHECK_ONLY")
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log "$LOGS"/*.json "$LOGS"/*.md "$LOGS"/*.png "$LOGS"/*.tar.gz "$LOGS"/summary.txt

declare -A STATUS SECS
STEPS=()

left() { echo $((DEADLINE - $(date +%s))); }

# step NAME CAP_SECONDS RESERVE_SECONDS LOGFILE CMD...: runs CMD under a time limit of
# min(CAP, time left - RESERVE), output to LOGFILE; records ok / FAIL(rc) / TIMEOUT / skipped.
step() {
  local name=$1 cap=$2 reserve=$3 log=$4
  shift 4
  STEPS+=("$name")
  local t
  t=$(( $(left) - reserve ))
  [ "$t" -gt "$cap" ] && t=$cap
  if [ "$t" -lt 10 ]; then
    STATUS[$name]="skipped (no time left)"
    SECS[$name]=0
    echo "== $name: skipped, no time left" | tee -a "$log"
    return 0
  fi
  echo "== $name (limit ${t}s): $*"
  local s0 rc
  s0=$(date +%s)
  timeout --kill-after=10 "$t" "$@" >>"$log" 2>&1
  rc=$?
  SECS[$name]=$(( $(date +%s) - s0 ))
  if [ $rc -eq 0 ]; then STATUS[$name]=ok
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then STATUS[$name]="TIMEOUT after ${t}s"
  else STATUS[$name]="FAIL (exit $rc)"
  fi
  echo "== $name: ${STATUS[$name]} in ${SECS[$name]}s"
  return 0
}

# Time kept back for what matters most at the end: bench (60), peers (150), report (15).
RESERVE_TAIL=225
CTEST_CAP=260
# A tests-only call keeps nothing back for the bench, and lets the GPU suite run longer.
[ "${GPU_CHECK_PART:-all}" = tests ] && { RESERVE_TAIL=20; CTEST_CAP=420; }
[ "${GPU_CHECK_PART:-all}" = sanitize ] && RESERVE_TAIL=20
[ "${GPU_CHECK_PART:-all}" = build ] && { RESERVE_TAIL=0; BUILD_CAP=560; }

# ------------------------------------------------------------------ configure + build
EXTRA=()
[ -d "$ROOT/.deps/include" ] && EXTRA+=("-DCUFUSE_EXTRA_INCLUDE=$ROOT/.deps/include")
# No libdlpack-dev on the GPU machine: use the DLPack header a Python framework ships (CuPy, ...).
if [ ! -f /usr/include/dlpack/dlpack.h ] && [ ! -f "$ROOT/.deps/include/dlpack/dlpack.h" ]; then
  # Every site-packages directory (Ubuntu's pip installs go to dist-packages, which sysconfig's
  # purelib does not name), then /usr/local and /opt.
  SITES=$("$PY" -c 'import site, sysconfig; print(" ".join(site.getsitepackages() + [sysconfig.get_paths()["purelib"]]))' 2>/dev/null)
  DLH=$(find $SITES /usr/local /opt -path '*/dlpack/dlpack.h' 2>/dev/null | head -1)
  [ -n "$DLH" ] && EXTRA+=("-DDLPACK_INCLUDE_DIR=$(dirname "$(dirname "$DLH")")")
fi
# GPU_CHECK_CMAKE_ARGS: more cache settings. Unless they name the interpreter's archs, build its
# image for this machine's GPU only (sm_90 on an H100): each image is a long NVRTC compile on the
# build's critical path, and the others would serve no test here.
read -r -a MORE <<<"${GPU_CHECK_CMAKE_ARGS:-}"
if [[ "${GPU_CHECK_CMAKE_ARGS:-}" != *CUFUSE_INTERP_ARCHS* ]]; then
  CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  [[ "$CC" =~ ^[0-9]+$ ]] && MORE+=("-DCUFUSE_INTERP_ARCHS=sm_$CC")
fi
step configure 120 $RESERVE_TAIL "$LOGS/configure.log" \
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${EXTRA[@]}" "${MORE[@]}"
KEEP_GOING=(-- -k)
[ -f "$BUILD/build.ninja" ] && KEEP_GOING=(-- -k 0)
if [ "${STATUS[configure]}" = ok ]; then
  step build "${BUILD_CAP:-300}" $RESERVE_TAIL "$LOGS/build.log" cmake --build "$BUILD" -j "$JOBS" "${KEEP_GOING[@]}"
else
  STEPS+=(build); STATUS[build]="skipped (configure failed)"; SECS[build]=0
fi

PART=${GPU_CHECK_PART:-all}
# part P...: this call's part is one of P... (all: everything but sanitize; build: the build only).
part() { local p; for p in "$@"; do [ "$PART" = "$p" ] && return 0; done; return 1; }
# ------------------------------------------------------------------ tests
if ! part all tests; then
  STEPS+=(ctest); STATUS[ctest]="skipped (GPU_CHECK_PART=$PART)"; SECS[ctest]=0
elif [ -f "$BUILD/CTestTestfile.cmake" ]; then
  # One CTest entry per test file: -j spreads them over the cores (the GPU ones that time
  # streams run alone, RUN_SERIAL in tests/CMakeLists.txt).
  step ctest $CTEST_CAP $RESERVE_TAIL "$LOGS/ctest.log" \
    ctest --test-dir "$BUILD" -V -j "$JOBS" --timeout 240
else
  STEPS+=(ctest); STATUS[ctest]="skipped (no CTest files)"; SECS[ctest]=0
fi

# ------------------------------------------------------------------ several GPUs: dist under mpirun
# With 2 or more GPUs (issue 32): tests/programs/dist_mpi_check under `mpirun -np 2`, one process
# per GPU, every result compared with the unsharded run; then its failure mode (rank 1 sits out
# an allreduce: rank 0 must raise a CollectiveError within CUFUSE_DIST_TIMEOUT=3, not hang).
# The single-process multi-GPU suite (gpu_dist) runs in ctest above.
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if ! part all tests; then
  STEPS+=(dist_mpi); STATUS[dist_mpi]="skipped (GPU_CHECK_PART=$PART)"; SECS[dist_mpi]=0
elif [ "${NGPU:-0}" -lt 2 ]; then
  STEPS+=(dist_mpi); STATUS[dist_mpi]="skipped (${NGPU:-0} GPU)"; SECS[dist_mpi]=0
elif ! command -v mpirun >/dev/null || [ ! -x "$BUILD/tests/dist_mpi_check" ]; then
  STEPS+=(dist_mpi); STATUS[dist_mpi]="skipped (no mpirun, or no tests/dist_mpi_check)"; SECS[dist_mpi]=0
else
  step dist_mpi 120 $RESERVE_TAIL "$LOGS/dist_mpi.log" bash -c \
    "mpirun --allow-run-as-root --oversubscribe -np 2 '$BUILD/tests/dist_mpi_check' &&
     CUFUSE_DIST_TIMEOUT=3 mpirun --allow-run-as-root --oversubscribe -np 2 -x CUFUSE_DIST_TIMEOUT '$BUILD/tests/dist_mpi_check' failure"
fi

# ------------------------------------------------------------------ examples
EX_OK=0; EX_FAIL=(); EX_SKIP=0
: >"$LOGS/examples.log"
if [ -d "$BUILD/examples" ] && part all tests; then
  while IFS= read -r ex; do
    t=$(( $(left) - RESERVE_TAIL ))
    [ "$t" -gt 45 ] && t=45  # seed 001 moves 8 GB stacks (the notebook sizes)
    if [ "$t" -lt 5 ]; then EX_SKIP=$((EX_SKIP + 1)); continue; fi
    echo "== example $(basename "$ex")" >>"$LOGS/examples.log"
    (cd "$BUILD/examples" && timeout --kill-after=5 "$t" "$ex") >>"$LOGS/examples.log" 2>&1
    rc=$?
    echo "== exit $rc" >>"$LOGS/examples.log"
    if [ $rc -eq 0 ]; then EX_OK=$((EX_OK + 1)); else EX_FAIL+=("$(basename "$ex") (exit $rc)"); fi
  done < <(find "$BUILD/examples" -maxdepth 1 -type f -perm -u+x | sort)
fi
STEPS+=(examples)
if ! part all tests; then STATUS[examples]="skipped (GPU_CHECK_PART=$PART)"
elif [ $((EX_OK + ${#EX_FAIL[@]} + EX_SKIP)) -eq 0 ]; then STATUS[examples]="none built"
else STATUS[examples]="$EX_OK ok, ${#EX_FAIL[@]} failed${EX_FAIL:+: ${EX_FAIL[*]}}$([ $EX_SKIP -gt 0 ] && echo ", $EX_SKIP skipped (no time)")"
fi
SECS[examples]=0

# ------------------------------------------------------------------ DLPack with other frameworks
# cufuse <-> NumPy / PyTorch / CuPy / JAX through capsules and libcufuse_dlpack_bridge.so
# (scripts/dlpack_check.py; frameworks that are not installed are reported as skipped).
if part all tests && [ -f "$BUILD/libcufuse_dlpack_bridge.so" ]; then
  step dlpack 60 $RESERVE_TAIL "$LOGS/dlpack.log" \
    "$PY" "$ROOT/scripts/dlpack_check.py" --lib "$BUILD/libcufuse_dlpack_bridge.so"
elif part all tests; then
  STEPS+=(dlpack); STATUS[dlpack]="skipped (no dlpack/dlpack.h found: the bridge was not built)"; SECS[dlpack]=0
fi

# ------------------------------------------------------------------ compute-sanitizer
# memcheck, racecheck, initcheck and synccheck over a quick subset of the GPU suite (the
# elementwise, reduction and stream files: generated kernels with shared memory, tiles,
# split reductions, cross-stream waits), each verdict ("N errors") in the summary. Only in
# GPU_CHECK_PART=sanitize (each tool slows kernels 10-100x); skipped where compute-sanitizer is absent.
# Each tool gets the files where its kind of bug can live, without the cases that are slow under
# it (2^27 and 2^31 elements, a million lazy steps, thousands of kernels loaded) or that fail API calls on purpose (the
# out-of-memory case in "bad input on the device", which memcheck reports as an API error).
# CUFUSE_TIERED=0 as in the ctest entries: the tools check the compiled kernels. No --leak-check:
# the runtime context keeps its pool and cuBLAS/cuSOLVER/cuFFT handles for the process's life
# (freed with the CUDA context at exit); leaks across cycles are the pool-bytes tests' job.
SAN_EXCLUDE=${GPU_CHECK_SANITIZE_EXCLUDE:-"*a million times*,*2^27*,*2^31*,*bad input on the device*,*overlaps*,*thousands of arrays*"}
SAN_VERDICTS=()
CSAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
san_files() {
  case $1 in
    memcheck) echo "${GPU_CHECK_SANITIZE_TESTS:-*test_elementwise_gpu.cpp,*test_reduce_gpu.cpp,*test_streams_gpu.cpp}" ;;
    racecheck) echo "${GPU_CHECK_SANITIZE_TESTS:-*test_reduce_gpu.cpp}" ;;   # shared-memory tiles
    initcheck) echo "${GPU_CHECK_SANITIZE_TESTS:-*test_elementwise_gpu.cpp}" ;;
    synccheck) echo "${GPU_CHECK_SANITIZE_TESTS:-*test_reduce_gpu.cpp}" ;;
  esac
}
# Per tool, cases too slow under it: memcheck spent its 140 s on the reduction sweep (every
# reduction, dtype and axis set: thousands of kernels), which racecheck and synccheck cover.
san_exclude() {
  case $1 in
    memcheck) echo ",*every reduction*" ;;
  esac
}
if [ "$PART" = sanitize ]; then
  if [ -z "$CSAN" ]; then
    STEPS+=(sanitizer); STATUS[sanitizer]="skipped (compute-sanitizer not found)"; SECS[sanitizer]=0
  elif [ ! -x "$BUILD/tests/cufuse_gpu_tests" ]; then
    STEPS+=(sanitizer); STATUS[sanitizer]="skipped (cufuse_gpu_tests not built)"; SECS[sanitizer]=0
  else
    for tool in memcheck racecheck initcheck synccheck; do
      # Kernels compile once (a warm disk cache) so the tools time the kernels, not NVRTC.
      cap=100; [ $tool = memcheck ] && cap=140
      step "$tool" $cap 40 "$LOGS/sanitizer-$tool.log" \
        env CUFUSE_TIERED=0 CUFUSE_CACHE_DIR="$BUILD/kernel-cache" "$CSAN" --tool $tool --error-exitcode 99 \
        --print-limit 20 "$BUILD/tests/cufuse_gpu_tests" "--source-file=$(san_files $tool)" \
        "--test-case-exclude=$SAN_EXCLUDE$(san_exclude $tool)" --no-colors
      v=$(grep -E "(ERROR|RACECHECK) SUMMARY: [0-9]+ (error|hazard)" "$LOGS/sanitizer-$tool.log" | tail -1 | sed -E 's/^=+ *//')
      SAN_VERDICTS+=("$tool: ${STATUS[$tool]}${v:+, $v}")
    done
  fi
fi

# ------------------------------------------------------------------ fuzz slice
# A short slice of the fuzz campaign (scripts/fuzz-campaign.sh): fresh seeds, one line each
# batch in $BUILD/fuzz-campaign.log (kept across runs), its total in the summary.
if part tests sanitize && [ -x "$BUILD/tests/cufuse_gpu_tests" ]; then
  FZ=$(( $(left) - RESERVE_TAIL - 10 ))
  [ "$FZ" -gt 150 ] && FZ=150
  if [ "$FZ" -ge 40 ]; then
    step fuzz $((FZ + 15)) $RESERVE_TAIL "$LOGS/fuzz.log" \
      env FUZZ_BUDGET=$FZ FUZZ_PROCS=2 FUZZ_BATCH=${GPU_CHECK_FUZZ_BATCH:-100} FUZZ_BIN="$BUILD/tests/cufuse_gpu_tests" \
      FUZZ_LOG="$BUILD/fuzz-campaign.log" bash "$ROOT/scripts/fuzz-campaign.sh"
  else
    STEPS+=(fuzz); STATUS[fuzz]="skipped (no time left)"; SECS[fuzz]=0
  fi
fi

# ------------------------------------------------------------------ bench, peers, report
BENCH_JSON=$LOGS/cufuse-bench.json
PEERS_JSON=$LOGS/peers.json
if ! part all bench; then
  STEPS+=(bench); STATUS[bench]="skipped (GPU_CHECK_PART=$PART)"; SECS[bench]=0
elif [ -x "$BUILD/bench/cufuse-bench" ]; then
  step bench 120 165 "$LOGS/bench.log" \
    env CUFUSE_CACHE_DIR="$BUILD/kernel-cache-bench" \
    "$BUILD/bench/cufuse-bench" $QUICK ${ONLY[@]+"${ONLY[@]}"} --json "$BENCH_JSON" --child-timeout 90
else
  STEPS+=(bench); STATUS[bench]="skipped (cufuse-bench not built)"; SECS[bench]=0
fi

PEERS_T=$(( $(left) - 15 ))
[ "$PEERS_T" -gt 240 ] && PEERS_T=240
if part all bench; then
step peers 240 15 "$LOGS/peers.log" \
  env PYTHONUNBUFFERED=1 "$PY" "$ROOT/bench/peers.py" $QUICK ${ONLY[@]+"${ONLY[@]}"} --json "$PEERS_JSON" --budget $((PEERS_T - 20))

step report 30 0 "$LOGS/report.log" \
  "$PY" "$ROOT/bench/report.py" --bench "$BENCH_JSON" --peers "$PEERS_JSON" \
  --md "$LOGS/bench-table.md" --png "$LOGS/bench-chart.png"
"$PY" "$ROOT/bench/report.py" --bench "$BENCH_JSON" --peers "$PEERS_JSON" --compact >"$LOGS/compact.txt" 2>&1
fi

# ------------------------------------------------------------------ summary
CTEST_LINE=$(grep -E "tests passed|tests failed out of" "$LOGS/ctest.log" 2>/dev/null | tail -1)
CTEST_FAILED=$(sed -n '/The following tests FAILED:/,/^Errors while running/p' "$LOGS/ctest.log" 2>/dev/null |
  grep -E "^\s+[0-9]+ - " | sed -E 's/^\s+[0-9]+ - //' | tr '\n' ';')
CTEST_SKIPPED=$(grep -E "Test +#[0-9]+: .*\*\*\*Skipped" "$LOGS/ctest.log" 2>/dev/null | sed -E 's/.*Test +#[0-9]+: //; s/ +\.+.*//' | sort -u | tr '\n' ' ')
# One doctest summary per test process: add them up.
DOCTEST=$(grep -E "\[doctest\] test cases:" "$LOGS/ctest.log" 2>/dev/null | sed -E 's/^[0-9]+: //' |
  awk -F'|' '{ split($1, a, ":"); n += a[2]; p += $2; f += $3; c++ } END { if (c) printf "%d test cases in %d processes: %d passed, %d failed", n, c, p, f }')
DOCTEST_FAILS=
if grep -qE "\[doctest\] test cases:.*\| +[1-9][0-9]* failed" "$LOGS/ctest.log" 2>/dev/null; then
  DOCTEST_FAILS=$(grep -B4 -E ": (ERROR|FATAL ERROR):" "$LOGS/ctest.log" | grep -E "TEST CASE: " | sed -E 's/^([0-9]+: )?TEST CASE: +//' | sort -u | head -15)
fi
BUILD_ERRORS=$(grep -E "error:|Error [0-9]+|undefined reference" "$LOGS/build.log" 2>/dev/null | grep -v "^make.*Waiting" | head -8)

{
  echo "==== gpu-check summary ($(( $(date +%s) - START ))s of ${BUDGET}s; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)) ===="
  for s in "${STEPS[@]}"; do printf '%-10s %s%s\n' "$s:" "${STATUS[$s]}" "$([ "${SECS[$s]:-0}" -gt 0 ] && echo " (${SECS[$s]}s)")"; done
  if [ -n "$BUILD_ERRORS" ] && [ "${STATUS[build]}" != ok ]; then echo "build errors (first lines):"; echo "$BUILD_ERRORS" | cut -c1-220 | sed 's/^/  /'; fi
  [ -n "$CTEST_LINE" ] && echo "ctest: $CTEST_LINE"
  [ -n "$CTEST_FAILED" ] && echo "ctest failed: $CTEST_FAILED"
  [ -n "$CTEST_SKIPPED" ] && echo "ctest skipped: $CTEST_SKIPPED"
  [ -n "$DOCTEST" ] && echo "doctest: $DOCTEST"
  [ -n "$DOCTEST_FAILS" ] && { echo "doctest failing cases:"; echo "$DOCTEST_FAILS" | cut -c1-160 | sed 's/^/  /'; }
  for v in ${SAN_VERDICTS[@]+"${SAN_VERDICTS[@]}"}; do echo "compute-sanitizer $v"; done
  grep -hE "^fuzz-campaign: " "$LOGS/fuzz.log" 2>/dev/null | tail -1
  grep -E "no CUDA device" "$LOGS/bench.log" 2>/dev/null | head -1
  echo "---- bench table (full: bench-table.md, chart: bench-chart.png) ----"
  cat "$LOGS/compact.txt" 2>/dev/null
} >"$LOGS/summary.txt"

# ------------------------------------------------------------------ $OUT (at most 8 files)
if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
  (cd "$LOGS" && tar -czf gpu-check-logs.tar.gz ./*.log compact.txt "$BUILD/fuzz-campaign.log" "$BUILD/fuzz-failures" 2>/dev/null)
  for f in summary.txt bench-table.md bench-chart.png cufuse-bench.json peers.json gpu-check-logs.tar.gz; do
    [ -f "$LOGS/$f" ] && cp "$LOGS/$f" "$OUT/"
  done
fi
echo
cat "$LOGS/summary.txt"
