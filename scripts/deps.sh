#!/usr/bin/env bash
# scripts/deps.sh: installs what cufuse builds with, where it is missing (Debian/Ubuntu):
# Boost (Hana), fmt, doctest, CLI11, DLPack headers, zlib, FFTW; and NumPy + ml_dtypes + SciPy for the
# tests' NumPy/SciPy oracle when called with --tests. Needs root (or sudo) only if something is missing.
set -euo pipefail
need=()
[ -f /usr/include/boost/hana.hpp ] || need+=(libboost-dev)
[ -f /usr/include/fmt/format.h ] || need+=(libfmt-dev)
[ -f /usr/include/doctest/doctest.h ] || need+=(doctest-dev)
[ -f /usr/include/CLI/CLI.hpp ] || need+=(libcli11-dev)
[ -f /usr/include/dlpack/dlpack.h ] || need+=(libdlpack-dev)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
[ -f /usr/include/fftw3.h ] || need+=(libfftw3-dev)  # the FFT node's host reference
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "installing: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ "${1:-}" = "--tests" ]; then
  python3 -c "import numpy, ml_dtypes, scipy" 2>/dev/null || python3 -m pip install -q numpy ml_dtypes scipy
fi
[ -d /usr/local/cuda ] || { echo "the CUDA toolkit is expected in /usr/local/cuda"; exit 1; }
