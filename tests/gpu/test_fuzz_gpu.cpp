// tests/gpu/test_fuzz_gpu.cpp: random array programs (tests/fuzz_program.hpp) on the device
// against the host reference evaluator, on fresh seeds each run (printed; a failing program
// is printed whole and CUFUSE_FUZZ_SEED=<n> replays it). Exact paths must match bitwise;
// inexact ones (transcendentals, sums, matmul) within the bounds fuzz::bounds propagates.
// Each program without an in-place write also runs through fuse(), as a trace and as a
// replay on new inputs (a third of them as CUDA graphs), bitwise equal to the lazy result.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "fuzz_program.hpp"

namespace cf = cufuse;

TEST_CASE("fuzz: random programs on the device against the reference evaluator") {
  const fuzz::Config cfg = fuzz::device_config();  // up to 130 x 130, 4 x 130 x 130; one in 10 long
  const fuzz::Seeds seeds = fuzz::seeds(std::random_device{}() % 1000000000ULL * 1000, 300);
  MESSAGE("fuzz seeds " << seeds.first << " .. " << seeds.first + static_cast<uint64_t>(seeds.count) - 1);
  int inplace = 0, fused = 0, failed = 0, inexact = 0;
  std::map<int, int> kinds;
  for (int i = 0; i < seeds.count; ++i) {
    const uint64_t s = seeds.first + static_cast<uint64_t>(i);
    fuzz::Outcome o = fuzz::run_program(s, cfg, /*strict=*/false, /*with_fuse=*/true);
    inplace += o.inplace_ran;
    fused += o.fused;
    inexact += o.inexact_outputs;
    for (const auto& in : o.program.code) kinds[static_cast<int>(in.kind)]++;
    if (o.bad) {
      ++failed;
      FAIL_CHECK(o.report);
    }
  }
  MESSAGE(seeds.count << " programs, " << failed << " failed; " << inplace << " with an in-place write, " << fused
                      << " also through fuse(); " << inexact << " outputs compared within a bound");
  if (!seeds.replay && seeds.count >= 300) {
    CHECK(kinds.size() == 14);
    CHECK(inplace >= 10);
    CHECK(fused >= 100);
  }
}
