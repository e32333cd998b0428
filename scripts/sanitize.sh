#!/usr/bin/env bash
# scripts/sanitize.sh: the sanitizer builds CI runs (.ci/run, after scripts/test.sh; issue 38),
# each failing on any report:
#   asan — AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer) over the CPU test
#          suite (every ctest unit_* entry, on the host reference backend) and the CLI cases
#          (cli_*, cli_bad_inputs);
#   tsan — ThreadSanitizer over the tests that run threads: the threaded stress test (8 threads
#          building, evaluating and compiling at once), streams, contexts, the runtime, the
#          compiler's and the disk kernel cache's concurrent use, in-place writes across
#          threads, the start-up warm-up and the tiered compiler's background thread.
#
#   bash scripts/sanitize.sh            # both
#   bash scripts/sanitize.sh asan       # one
#   SANITIZE_JOBS=1 bash scripts/sanitize.sh tsan
#   SANITIZE_OPT=-O1 bash scripts/sanitize.sh     # faster tests, ~2.4x the compile time
#   SANITIZE_ASAN_TESTS="test_cli_limits.cpp;test_reliability.cpp" bash scripts/sanitize.sh asan
#
# Reports stop the test at once (halt_on_error, -fno-sanitize-recover=all); suppressions, each
# with its reason, only for third-party code: scripts/sanitizers/*.supp.
#
# What keeps both within CI's 40 minutes on the 2-core machine (clean clone, after test.sh's
# ~24 minutes), measured there:
#   - own build directories (build-asan/, build-tsan/) with only what the tests need: no
#     benchmarks or examples, and in TSan's only the threaded tests' files;
#   - unity builds (cmake/unity.cmake): the library in batches of 16 files (230 s of CPU
#     instead of ~720 under ASan+UBSan), the CPU tests in groups (a group of 7 files: 18 s
#     instead of 54);
#   - -O0 (SANITIZE_OPT): -O1 compiles ~2.4x slower (planner.cpp: 40 s against 17 s) for
#     tests that run at most ~2x faster;
#   - device code for one PTX arch only, never run here and never instrumented (sanitizers
#     see host code): CUB's sorts (cub_sort.cu) for compute_80 alone (nvcc: 126 s instead of
#     237), and no interpreter image at all (CUFUSE_INTERP_ARCHS empty; test.sh builds and
#     checks one);
#   - the NumPy oracle tests compile none of the kernels they plan (CUFUSE_ORACLE_REFERENCE_COMPILE=0,
#     tests/CMakeLists.txt): what they check under the sanitizers is the host code; test.sh's
#     run has checked those sources (ptx), and the compiler's own tests run NVRTC here;
#   - CUB's sorts not compiled again where build/ has them for that arch: its object is linked
#     (CUFUSE_CUB_SORT_OBJECT, cub_sort_object below; ~140 s of nvcc saved in each build);
#   - the kernel cache seeded from build/ (SANITIZE_KERNEL_CACHE): the kernels test.sh's run
#     compiled with NVRTC (third-party, uninstrumented, ~2/3 of the CPU suite's time on a cold
#     cache) are read from the disk cache (instrumented) instead of compiled again; tests of
#     the compiler and the disk cache use directories of their own, so NVRTC still runs under
#     the sanitizers there; and ctest's cost data from build/, so the longest tests start first.
# No test is left out of ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${SANITIZE_JOBS:-$(nproc)}
MODES=("$@")
[ ${#MODES[@]} -eq 0 ] && MODES=(asan tsan)
SUPP=$ROOT/scripts/sanitizers
OPT=${SANITIZE_OPT:--O0}
ASAN_TESTS=${SANITIZE_ASAN_TESTS:-}  # empty: every tests/test_*.cpp
SEED=${SANITIZE_KERNEL_CACHE:-$ROOT/build/tests/kernel-cache}

# The threaded tests (TSan). Keep this list to files that start threads or exercise
# cross-thread state; every CPU test runs under ASan+UBSan.
TSAN_TESTS="test_threads.cpp;test_streams.cpp;test_context.cpp;test_runtime.cpp;test_compiler.cpp;test_disk_cache.cpp;test_disk_cache_faults.cpp;test_core_inplace_lazy.cpp;test_core_inplace.cpp;test_startup.cpp;test_tiered.cpp"
TSAN_REGEX="^unit_(threads|streams|context|runtime|compiler|disk_cache|disk_cache_faults|core_inplace_lazy|core_inplace|startup|tiered)$"
# Tests that start MPI (a singleton MPI_Init): OpenMPI's plugins are built without frame
# pointers, so their allocation stacks end in an unloaded plugin ("<unknown module>") unless
# ASan unwinds them the slow way; with the whole stack lsan.supp's OpenMPI entries match.
# (Everywhere else the fast unwinder: the slow one on every malloc costs minutes.)
ASAN_SLOW_UNWIND_REGEX="^unit_dist_mesh$"

configure() {  # configure DIR FLAGS [extra cmake args]
  local dir=$1 flags=$2 gen=()
  shift 2
  [ -f "$dir/CMakeCache.txt" ] || ! command -v ninja >/dev/null || gen=(-G Ninja)
  # --as-needed: GCC links with --no-as-needed under -fsanitize, which would make every
  # program need libcuda.so.1 (CUDA::nvrtc names the driver stub) and fail to start without
  # a driver.
  cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags -Wl,--as-needed" -DCMAKE_SHARED_LINKER_FLAGS="$flags -Wl,--as-needed" \
    -DCUFUSE_BUILD_BENCH=OFF -DCUFUSE_BUILD_EXAMPLES=OFF -DCUFUSE_INTERP_ARCHS= \
    -DCMAKE_CUDA_ARCHITECTURES=80-virtual -DCMAKE_PROJECT_INCLUDE="$ROOT/cmake/unity.cmake" \
    "-DCUFUSE_CUB_SORT_OBJECT=$(cub_sort_object)" -DCUFUSE_ORACLE_REFERENCE_COMPILE=0 "$@" >/dev/null
}

# build/'s CUB sorts object where build/ compiled it for the same arch (.ci/run's build does):
# nvcc's 2-3 minutes spent once, not once per build directory. Its host code is uninstrumented
# either way (the sanitizer flags are the C++ compiler's). Empty: compile it here.
cub_sort_object() {
  local obj=$ROOT/build/CMakeFiles/cufuse.dir/src/library/cub_sort.cu.o
  # (the cache types it STRING, or UNINITIALIZED where -D gave it no type, as .ci/run's configure)
  if [ -f "$obj" ] && grep -qxE "CMAKE_CUDA_ARCHITECTURES:[A-Z]+=80-virtual" "$ROOT/build/CMakeCache.txt" 2>/dev/null; then
    echo "$obj"
  fi
}

seed_cache() {  # seed_cache DIR: build/'s kernel cache (ASan only: TSan's threads compile their own)
  if [ -d "$SEED" ] && [ ! -e "$1/tests/kernel-cache" ]; then
    # Hard links: the cache writes a new file and renames it over, never in place.
    cp -al "$SEED" "$1/tests/kernel-cache" 2>/dev/null || cp -r "$SEED" "$1/tests/kernel-cache"
    echo "== $1: kernel cache seeded from $SEED ($(find "$1/tests/kernel-cache" -type f | wc -l) files)"
  fi
}

seed_costs() {  # seed_costs DIR: ctest's cost data from build/, so the longest tests start first
  local cost=$ROOT/build/Testing/Temporary/CTestCostData.txt
  if [ -f "$cost" ] && [ ! -e "$1/Testing/Temporary/CTestCostData.txt" ]; then
    mkdir -p "$1/Testing/Temporary" && cp "$cost" "$1/Testing/Temporary/"
  fi
}

timed() {  # timed LABEL CMD...: runs CMD, prints how long it took
  local label=$1 t0 rc=0
  shift
  t0=$(date +%s)
  "$@" || rc=$?
  echo "== $label: $(( $(date +%s) - t0 ))s"
  return $rc
}

rc=0
for mode in "${MODES[@]}"; do
  case $mode in
    asan)
      dir=build-asan
      configure $dir "$OPT -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
        "-DCUFUSE_TEST_FILES=$ASAN_TESTS"
      if ! timed "asan build" cmake --build $dir -j"$JOBS" --target cufuse_tests cufuse-dump-kernels; then
        echo "== asan: BUILD FAILED"; rc=1; continue
      fi
      seed_cache $dir
      seed_costs $dir
      export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:strict_string_checks=1:check_initialization_order=1"
      export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0"
      export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$SUPP/ubsan.supp"
      ok=1
      (cd $dir && timed "asan tests" ctest -j"$JOBS" --output-on-failure --timeout 900 -R "^(unit_|cli_)" \
        -E "$ASAN_SLOW_UNWIND_REGEX") || ok=0
      (cd $dir && ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" timed "asan tests (MPI, slow unwinder)" \
        ctest -j"$JOBS" --output-on-failure --timeout 900 -R "$ASAN_SLOW_UNWIND_REGEX") || ok=0
      if [ $ok = 1 ]; then echo "== asan: clean"; else echo "== asan: FAILED"; rc=1; fi
      ;;
    tsan)
      dir=build-tsan
      configure $dir "$OPT -g1 -fno-omit-frame-pointer -fsanitize=thread" "-DCUFUSE_TEST_FILES=$TSAN_TESTS"
      if ! timed "tsan build" cmake --build $dir -j"$JOBS" --target cufuse_tests; then
        echo "== tsan: BUILD FAILED"; rc=1; continue
      fi
      seed_costs $dir
      export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$SUPP/tsan.supp"
      if ! (cd $dir && timed "tsan tests" ctest -j"$JOBS" --output-on-failure --timeout 900 -R "$TSAN_REGEX"); then
        echo "== tsan: FAILED"; rc=1
      else echo "== tsan: clean"; fi
      ;;
    *) echo "unknown mode '$mode' (asan or tsan)"; exit 2 ;;
  esac
done
exit $rc
