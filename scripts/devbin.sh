#!/usr/bin/env bash
# scripts/devbin.sh: puts binaries built on this machine, with the shared libraries the GPU
# machine lacks (fmt, FFTW), into .devbin/ (git-ignored), for the device tool to carry
# (carry: [".deps", ".devbin"]). A device call then runs them at once, without the four to five
# minutes of a build there: a compute-sanitizer pass, a replay, a bench row or two.
#   bash scripts/devbin.sh build/tests/cufuse_gpu_tests build/bench/cufuse-bench
# On the device: cd .devbin && LD_LIBRARY_PATH=$PWD:$LD_LIBRARY_PATH ./cufuse_gpu_tests ...
# They carry this machine's interpreter images: a build with -DCUFUSE_INTERP_ARCHS=compute_80
# JIT-compiles them on the device (slow, and the first interpreted call with it); for the
# interpreter's speed build with -DCUFUSE_INTERP_ARCHS=sm_90. The carry is 64 MiB at most.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .devbin
for b in "$@"; do cp "$b" .devbin/; done
for lib in libfmt.so libfftw3.so libfftw3f.so; do
  p=$(ldd "$@" 2>/dev/null | awk -v l="$lib" 'index($1, l) == 1 { print $3; exit }')
  [ -n "$p" ] && cp -L "$p" .devbin/
done
grep -qx ".devbin/" .git/info/exclude 2>/dev/null || echo ".devbin/" >> .git/info/exclude
du -sh .devbin
