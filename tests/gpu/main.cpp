// tests/gpu/main.cpp: doctest's main for the GPU suite. With no usable device it says why
// and exits 77, which CTest reports as skipped. A crash, or a hang ended by `timeout` (the
// fuzz campaign's batches), prints a backtrace first.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "cufuse/stream.hpp"
#include "runtime/crash_trace.hpp"

int main(int argc, char** argv) {
  if (!cufuse::Device::available()) {
    std::printf("SKIPPED: GPU tests need a CUDA device: %s\n", cufuse::Device::unavailable_reason().c_str());
    return 77;
  }
  cufuse::detail::install_crash_backtrace("cufuse_gpu_tests", true);
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
