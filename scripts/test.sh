#!/usr/bin/env bash
# scripts/test.sh: builds cufuse and runs every test (ctest). GPU tests skip, saying why,
# where there is no CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --tests
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
cd build && ctest --output-on-failure -j"$(nproc)"
