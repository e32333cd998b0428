// tests/gpu/test_fuzz_gpu.cpp: random array programs (tests/fuzz_program.hpp) on the device
// against the host reference evaluator, on fresh seeds each run (printed; a failing program
// is printed whole and CUFUSE_FUZZ_SEED=<n> replays it). Exact paths must match bitwise;
// inexact ones (transcendentals, sums, matmul) within the bounds fuzz::bounds propagates.
// Each program without an in-place write also runs through fuse(), as a trace and as a
// replay on new inputs (a third of them as CUDA graphs), bitwise equal to the lazy result.
// User kernels run here (fused with the ops around them) against their lazy twins' reference;
// some programs run on a new stream, destroyed while their results are still alive.
#include <doctest/doctest.h>

#include <random>

#include "fuzz_program.hpp"

namespace cf = cufuse;

TEST_CASE("fuzz: random programs on the device against the reference evaluator") {
  const fuzz::Config cfg = fuzz::device_config();  // up to 130 x 130, 4 x 130 x 130; one in 10 long
  const fuzz::Seeds seeds = fuzz::seeds(std::random_device{}() % 1000000000ULL * 1000, 300);
  MESSAGE("fuzz seeds " << seeds.first << " .. " << seeds.first + static_cast<uint64_t>(seeds.count) - 1);
  const fuzz::Summary sum = fuzz::run_many(seeds, cfg, /*strict=*/false, /*with_fuse=*/true);
  for (const auto& r : sum.reports) FAIL_CHECK(r);
  MESSAGE(sum.programs << " programs, " << sum.failed << " failed; " << sum.inplace << " with an in-place write, "
                       << sum.fused << " also through fuse(), " << sum.early << " with early evaluations, " << sum.convolutions << " convolutions, " << sum.user
                       << " with user kernels, " << sum.streams << " on a new stream, " << sum.finite
                       << " on finite inputs; " << sum.inexact_outputs << " outputs compared within a bound");
  if (!seeds.replay && seeds.count >= 300) {
    CHECK(sum.kinds.size() == static_cast<size_t>(fuzz::kKinds));
    CHECK(sum.inplace >= 10);
    CHECK(sum.fused >= 100);
    CHECK(sum.early >= 40);
    CHECK(sum.user >= 15);
    CHECK(sum.streams >= 40);
    CHECK(sum.finite >= 100);
  }
}
