// tests/gpu/test_fuzz_gpu.cpp: random array programs (tests/fuzz_program.hpp) on the device
// against the host reference evaluator, on fresh seeds each run (printed; a failing program
// is printed whole and CUFUSE_FUZZ_SEED=<n> replays it). Exact paths must match bitwise;
// inexact ones (transcendentals, sums, matmul) within the bounds fuzz::bounds propagates.
// A program that writes in place (tests/fuzz_writes.hpp) runs lazily, evaluated once at the
// end, and eagerly, each statement evaluated as made, each against the model: every statement
// computed by the host reference evaluator as it is made, each write stored by the fuzzer.
// Each program without an in-place write also runs through fuse(), as a trace and as a
// replay on new inputs (a third of them as CUDA graphs), bitwise equal to the lazy result.
// User kernels run here (fused with the ops around them) against their lazy twins' reference;
// some programs run on a new stream, destroyed while their results are still alive.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <doctest/doctest.h>

#include <random>

#include "fuzz_program.hpp"
#include "gpu_compare.hpp"
#include "test_sandbox.hpp"

namespace cf = cufuse;

namespace {
// The run's counts: a doctest MESSAGE (shown with a failure) and a line on stdout always, which
// scripts/fuzz-campaign.sh reads (doctest prints messages of passing tests only with -s).
void summary(const std::string& line) {
  MESSAGE(line);
  std::printf("fuzz summary: %s\n", line.c_str());
  std::fflush(stdout);
}
}  // namespace

TEST_CASE("fuzz: random programs on the device against the reference evaluator") {
  const fuzz::Config cfg = fuzz::device_config();  // up to 130 x 130, 4 x 130 x 130; one in 10 long
  const fuzz::Seeds seeds = fuzz::seeds(std::random_device{}() % 1000000000ULL * 1000, 300);
  MESSAGE("fuzz seeds " << seeds.first << " .. " << seeds.first + static_cast<uint64_t>(seeds.count) - 1);
  const fuzz::Summary sum = fuzz::run_many(seeds, cfg, /*strict=*/false, /*with_fuse=*/true);
  for (const auto& r : sum.reports) FAIL_CHECK(r);
  std::ostringstream line;
  line << sum.programs << " programs, " << sum.failed << " failed; " << sum.inplace << " with in-place writes ("
       << sum.writes.stmts << " statements, " << sum.writes.views << " through views, " << sum.writes.alias_reads
       << " reading the array written, " << sum.writes.lazy_targets << " into lazy values), " << sum.fused
       << " also through fuse(), " << sum.early << " with early evaluations, " << sum.convolutions << " convolutions, "
       << sum.user << " with user kernels, " << sum.streams << " on a new stream, " << sum.finite
       << " on finite inputs; " << sum.inexact_outputs << " outputs compared within a bound";
  summary(line.str());
  // The coverage floors hold for the suite's own 300 programs (a campaign's batches, given
  // CUFUSE_FUZZ_FIRST, count programs and failures only).
  if (!seeds.replay && seeds.count >= 300 && !std::getenv("CUFUSE_FUZZ_FIRST")) {
    CHECK(sum.kinds.size() == static_cast<size_t>(fuzz::kKinds));
    CHECK(sum.inplace >= 40);
    CHECK(sum.eager == sum.inplace);
    CHECK(sum.writes.views >= 20);
    CHECK(sum.writes.alias_reads >= 10);
    CHECK(sum.writes.copies >= 10);
    CHECK(sum.writes.lazy_targets >= 5);
    CHECK(sum.fused >= 100);
    CHECK(sum.early >= 40);
    CHECK(sum.user >= 15);
    CHECK(sum.streams >= 40);
    CHECK(sum.finite >= 100);
  }
}

// Four threads at once, each on its own stream, share the plan and kernel caches (a key
// several threads miss at once is compiled once), the memory pool and its small-block
// cache (a block freed on one stream is not handed to another while in use), the
// pending-roots registry and the library handles. Every program is compared as above.
TEST_CASE("fuzz: random programs on four threads at once, each on its own stream") {
  const fuzz::Config cfg = fuzz::device_config();
  const int per_thread = fuzz::seeds(0, 60).count;
  const uint64_t first = fuzz::seeds(std::random_device{}() % 1000000000ULL * 1000 + 500, 60).first;
  constexpr int kThreads = 4;
  MESSAGE("fuzz seeds " << first << " .. " << first + static_cast<uint64_t>(kThreads * per_thread) - 1 << " on "
                        << kThreads << " threads");
  std::vector<fuzz::Summary> sums(kThreads);
  const std::vector<std::string> errors = on_threads_with_own_streams(kThreads, [&](int t) {
    sums[static_cast<size_t>(t)] =
        fuzz::run_many(fuzz::Seeds{first + static_cast<uint64_t>(t * per_thread), per_thread, false}, cfg,
                       /*strict=*/false, /*with_fuse=*/true);
  });
  int programs = 0, failed = 0, fused = 0, streams = 0;
  for (int t = 0; t < kThreads; ++t) {
    const auto& s = sums[static_cast<size_t>(t)];
    for (const auto& r : s.reports) FAIL_CHECK("thread " << t << ": " << r);
    if (!errors[static_cast<size_t>(t)].empty()) FAIL_CHECK("thread " << t << " threw: " << errors[static_cast<size_t>(t)]);
    programs += s.programs;
    failed += s.failed;
    fused += s.fused;
    streams += s.streams;
  }
  std::ostringstream line;
  line << programs << " programs on " << kThreads << " threads, " << failed << " failed; " << fused
       << " also through fuse(), " << streams << " on a further new stream";
  summary(line.str());
  CHECK(programs == kThreads * per_thread);
}

// The programs the device campaigns (scripts/fuzz-campaign.sh) found wrong, replayed every run.
// Fixed: the first five each also have a test of their own on the reference backend
// (tests/test_core_inplace_fuzzfound.cpp); 668319586329 and 672694075134 were user code's signed
// overflow folded by NVVM into what fused with it (codegen/user_kernel.cpp isolates integer user
// code; tests/test_user_kernel.cpp); 668613078532 read the sign of a NaN that an in-place
// `x %= x` wrote into copysign's sign operand, which NumPy leaves unspecified (x86 -NaN, GPU +NaN):
// the fuzzer no longer writes into such an input (tests/fuzz_writes.hpp), so it replays as a
// program without that write. 717923282040 lost a write through a view of an evaluated view
// of a lazy array (graph/array.cpp: apply_view; a test of its own in
// tests/test_core_inplace_fuzzfound.cpp, and replayed on the reference backend by tests/test_fuzz.cpp).
// 786083882611 (an f16 row max of 3 * hypot of int8 absolute values, 23008 for 394.5 on every
// device run) was NVVM making |x| of a vector-loaded byte without sign-extending it before the
// float conversion (device_helpers.inc: cf_abs; tests/test_ptx_patterns.cpp). 728327525901 and
// 728217886719 failed only on a fresh machine's first runs, where the interpreter runs the
// launches: a row program stored a write in place before another output loaded that array
// (codegen/bytecode_rows.cpp), and 1 / nanmin of signed zeros took the sign of whichever zero
// the combining order kept (max and min now order -0 below +0); tests/test_fuzz.cpp replays
// both on the interpreter's host build.
// Each runs on the tier the machine gives it (compiled, once the disk cache holds its kernels)
// and again with every launch interpreted (CUFUSE_TIERED=interpret).
TEST_CASE("fuzz: the programs the campaigns found, fixed") {
  const fuzz::Config cfg = fuzz::device_config();
  for (const char* tier : {"default", "interpret"}) {
    std::optional<cufuse_test::ScopedEnv> env;
    if (std::string(tier) == "interpret") env.emplace("CUFUSE_TIERED", "interpret");
    for (uint64_t seed : {919799036265ULL, 668317566486ULL, 668519814251ULL, 668221497370ULL, 668608028892ULL,
                          668319586329ULL, 672694075134ULL, 668613078532ULL, 717923282040ULL, 786083882611ULL,
                          728327525901ULL, 728217886719ULL}) {
      CAPTURE(tier);
      const fuzz::Outcome o = fuzz::run_program(seed, cfg, /*strict=*/false, /*with_fuse=*/true);
      CHECK_MESSAGE(o.bad == 0, o.report);
    }
  }
}

// A diagnosis of one seed, off unless CUFUSE_FUZZ_DIAG=<seed>: every non-empty subset of the
// program's outputs evaluated together (on the default stream, then on a new stream), each
// output compared with the reference, and the outputs' device addresses printed.
TEST_CASE("fuzz: diagnose one seed (CUFUSE_FUZZ_DIAG)") {
  const char* env = std::getenv("CUFUSE_FUZZ_DIAG");
  if (!env) return;
  const uint64_t seed = std::strtoull(env, nullptr, 10);
  const fuzz::Config cfg = fuzz::device_config();
  fuzz::Generator gen(seed, cfg);
  gen.choose_inputs();
  const std::vector<cf::Array> in = fuzz::random_inputs(gen.program(), seed);
  const fuzz::Program p = gen.build(in);
  std::printf("%s", p.text().c_str());
  std::vector<cf::detail::NodePtr> roots;
  for (const auto& v : fuzz::values(p, in)) roots.push_back(v.node());
  const auto ref = cf::detail::reference_evaluate(roots);
  const std::vector<double> E = fuzz::bounds(p, ref);
  // Every value of the program alone: which is the first to go wrong.
  for (int i = p.n_inputs(); i < p.n_values(); ++i) {
    std::vector<cf::Array> vals = fuzz::values(p, in);
    cf::Array a = vals[static_cast<size_t>(i)];
    vals.clear();
    a.eval();
    std::string d;
    const int64_t n = fuzz::compare(fuzz::host_of(a), ref[static_cast<size_t>(i)], p.exact[static_cast<size_t>(i)] ? 0.0 : E[static_cast<size_t>(i)], d);
    std::printf("value v%d alone: %s\n%s", i, n ? ("BAD " + std::to_string(n)).c_str() : "ok", n ? d.c_str() : "");
  }
  const size_t k = p.outputs.size();
  for (int on_stream = 0; on_stream < 2; ++on_stream)
    for (unsigned mask = 1; mask < (1u << k); ++mask) {
      cf::Device().synchronize();
      std::optional<cf::Stream> s;
      std::optional<cf::StreamScope> scope;
      if (on_stream) {
        s.emplace();
        scope.emplace(*s);
      }
      std::vector<cf::Array> vals = fuzz::values(p, in);
      std::vector<cf::Array> outs;
      std::vector<size_t> which;
      for (size_t j = 0; j < k; ++j)
        if (mask & (1u << j)) {
          outs.push_back(vals[static_cast<size_t>(p.outputs[j])]);
          which.push_back(static_cast<size_t>(p.outputs[j]));
        }
      vals.clear();
      cf::eval_all(outs);
      std::string line = "stream " + std::to_string(on_stream) + " mask " + std::to_string(mask) + ":";
      for (size_t j = 0; j < outs.size(); ++j) {
        std::string d;
        const int64_t n = fuzz::compare(fuzz::host_of(outs[j]), ref[which[j]], p.exact[which[j]] ? 0.0 : E[which[j]], d);
        char buf[96];
        std::snprintf(buf, sizeof buf, " v%zu %s (%p)", which[j], n ? ("BAD " + std::to_string(n)).c_str() : "ok",
                      outs[j].data_ptr());
        line += buf;
      }
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
}
