#!/usr/bin/env bash
# scripts/test.sh: builds cufuse and runs every test (ctest). GPU tests skip, saying why,
# where there is no CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --tests
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
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
