#!/usr/bin/env bash
# scripts/demo.sh: builds cufuse and runs the main demo (seed 004's fusion lesson):
# fused against unfused timings on a GPU, or the generated kernels where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target demo_fusion
./build/examples/demo_fusion
