#!/usr/bin/env bash
# scripts/test.sh: builds cufuse and runs every test (ctest). GPU tests skip, saying why,
# where there is no CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --tests
# Without a GPU the interpreter's images serve nothing: build one PTX image only, which still
# proves NVRTC compiles the generated interpreter (each image costs minutes on 2 cores).
INTERP=()
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || INTERP=(-DCUFUSE_INTERP_ARCHS=compute_80)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${INTERP[@]}" >/dev/null
cmake --build build -j"$(nproc)"
cd build
rc=0
ctest --output-on-failure -j"$(nproc)" || rc=$?
# CTest lists a skipped test as "Skipped" without its output: print each reason once (the
# GPU suite prints "SKIPPED: ..." and exits 77 where there is no device).
if [ -f Testing/Temporary/LastTest.log ]; then
  grep -h "^SKIPPED: " Testing/Temporary/LastTest.log | sort | uniq -c |
    sed -E 's/^ *([0-9]+) SKIPPED: /skipped (\1 test entries): /' || true
fi
exit $rc
