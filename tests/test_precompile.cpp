// tests/test_precompile.cpp: cufuse::precompile (include/cufuse/precompile.hpp) without a GPU:
// a lazy function's and a fuse()'d function's kernels compiled into a private disk cache
// without running anything, found there by a later evaluation (a fresh memory cache stands
// for a new process), the trace a fused function keeps, and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "compile/compiler.hpp"
#include "compile/disk_cache.hpp"
#include "compile/nvrtc.hpp"
#include "cufuse/cufuse.hpp"
#include "exec/precompile.hpp"
#include "exec/tiered.hpp"
#include "plan/signature.hpp"
#include "test_sandbox.hpp"

namespace cf = cufuse;

namespace {

int files_in(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

cf::Array softmax(const cf::Array& x) {
  cf::Array e = cf::exp(x - cf::max(x, 1, true));
  return e / cf::sum(e, 1, true);
}

// Host arrays of random values, in memory (their generator kernel compiled before the counts).
cf::Array host_random(const cf::Shape& s, cf::DType t, uint64_t seed) {
  cf::Array a = cf::random::uniform(s, t, seed);
  a.eval();
  return a;
}

}  // namespace

TEST_CASE("precompile: a lazy function's kernels go to the disk cache without running; a later evaluation compiles none") {
  cufuse_test::Sandbox sandbox;
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array x = host_random({64, 1000}, cf::f32, 1);
  const int before = files_in(sandbox.dir.path);
  cf::reset_stats();
  const cf::PrecompileStats s = cf::precompile(softmax, cf::signature(cf::ArgType{cf::f32, {64, 1000}}));
  CHECK(s.signatures == 1);
  CHECK(s.kernels == 1);  // softmax is one kernel
  CHECK(s.compiled == 1);
  CHECK(s.cached == 0);
  CHECK(cf::stats().kernels_compiled == 1);
  CHECK(cf::stats().evaluations == 0);
  CHECK(cf::stats().kernels_launched == 0);
  CHECK(files_in(sandbox.dir.path) == before + 2);  // the kernel and its hint (exec/tiered.hpp)
  {  // the hint is the one an evaluation of softmax(x) looks for before its first launch
    cf::Array y = softmax(x);
    cf::detail::GraphScan scan;
    cf::detail::scan_graph({y.node()}, {}, scan);
    CHECK(cf::detail::disk_cache_has_hint(cf::detail::tier_hint_key(scan, 0, cf::detail::default_arch())));
  }

  // Again: in memory now.
  const cf::PrecompileStats again = cf::precompile(softmax, cf::signature(cf::ArgType{cf::f32, {64, 1000}}));
  CHECK(again.compiled == 0);
  CHECK(again.cached == 1);

  // A fresh memory cache (what a new process has): the evaluation finds the kernel on disk.
  cf::detail::clear_memory_cache();
  cf::reset_stats();
  cf::Array y = softmax(x);
  y.eval();
  CHECK(cf::stats().kernels_compiled == 0);
  CHECK(cf::stats().disk_cache_hits == 1);
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(cf::allclose(cf::sum(y, 1), cf::ones({64}, cf::f32)));
}

TEST_CASE("precompile: several signatures, tuples of results, and kernels shared between signatures") {
  cufuse_test::Sandbox sandbox;
  cf::BackendScope ref(cf::Backend::Reference);
  auto two = [](const cf::Array& a, const cf::Array& b) { return std::make_tuple(a * b, cf::sqrt(a * a + b)); };
  cf::reset_stats();
  const cf::PrecompileStats s = cf::precompile(two, cf::signature(cf::ArgType{cf::f32, {128, 64}}, cf::ArgType{cf::f32, {64}}),
                                               cf::signature(cf::ArgType{cf::f64, {32}}, cf::ArgType{cf::f64, {32}}),
                                               cf::signature(cf::ArgType{cf::f32, {128, 64}}, cf::ArgType{cf::f32, {64}}));
  CHECK(s.signatures == 3);
  CHECK(s.kernels == 3);   // both results of a signature in one kernel
  CHECK(s.compiled == 2);  // the third signature is the first's
  CHECK(s.cached == 1);
  CHECK(cf::stats().kernels_compiled == 2);
}

TEST_CASE("precompile: a fuse()'d function keeps its trace, so its first call replays; its kernels are on disk") {
  cufuse_test::Sandbox sandbox;
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = cf::fuse([](const cf::Array& x, const cf::Array& b, float s) { return cf::exp(x * s + b); });
  const cf::Array x = host_random({256, 128}, cf::f32, 2), b = host_random({128}, cf::f32, 3);
  cf::reset_stats();
  const cf::PrecompileStats s = cf::precompile(f, cf::signature(cf::ArgType{cf::f32, {256, 128}}, cf::ArgType{cf::f32, {128}}, 2.0f),
                                               cf::signature(cf::ArgType{cf::f64, {16}}, cf::ArgType{cf::f64, {16}}, 1.0f));
  CHECK(s.signatures == 2);
  CHECK(s.kernels == 2);
  CHECK(s.compiled == 2);
  CHECK(cf::stats().kernels_launched == 0);
  CHECK(f.stats().traces == 2);
  CHECK(f.stats().signatures == 2);
  CHECK(f.stats().replays == 0);

  cf::Array y = f(x, b, 3.0f);  // a new scalar value: a kernel parameter, the same trace
  CHECK(f.stats().traces == 2);
  CHECK(f.stats().replays == 1);
  CHECK(cf::allclose(y, cf::exp(x * 3.0f + b)));

  // A new process's view: the kernels come from disk.
  cf::detail::clear_memory_cache();
  auto g = cf::fuse([](const cf::Array& x, const cf::Array& b, float s) { return cf::exp(x * s + b); });
  const cf::PrecompileStats warm = cf::precompile(g, cf::signature(cf::ArgType{cf::f32, {256, 128}}, cf::ArgType{cf::f32, {128}}, 2.0f));
  CHECK(warm.compiled == 0);
  CHECK(warm.cached == 1);
}

TEST_CASE("precompile without a device on the CUDA backend: the kernels are cached, the fused trace is not kept") {
  cufuse_test::Sandbox sandbox;
  if (cf::detail::precompile_has_device()) return;  // (this case is about build machines without a GPU)
  auto f = cf::fuse([](const cf::Array& x) { return cf::tanh(x) * 2; });
  const cf::PrecompileStats s = cf::precompile(f, cf::signature(cf::ArgType{cf::f16, {4096}}));
  CHECK(s.kernels == 1);
  CHECK(s.compiled == 1);
  CHECK(f.stats().signatures == 0);
  CHECK(files_in(sandbox.dir.path) == 1);
  const cf::PrecompileStats lazy = cf::precompile([](const cf::Array& x) { return cf::tanh(x) * 2; },
                                                  cf::signature(cf::ArgType{cf::f16, {4096}}));
  CHECK(lazy.kernels == 1);
}

TEST_CASE("precompile: errors are the call's, and a function that reads values says why it cannot be precompiled") {
  cufuse_test::Sandbox sandbox;
  cf::BackendScope ref(cf::Backend::Reference);
  auto add = [](const cf::Array& a, const cf::Array& b) { return a + b; };
  CHECK_THROWS_AS(cf::precompile(add, cf::signature(cf::ArgType{cf::f32, {3}}, cf::ArgType{cf::f32, {4}})), cf::ValueError);
  auto reads = [](const cf::Array& a) { return a * cf::sum(a).item<float>(); };
  CHECK_THROWS_WITH_AS(cf::precompile(reads, cf::signature(cf::ArgType{cf::f32, {8}})),
                       doctest::Contains("precompiling a lazy function"), cf::ValueError);
  auto fused_add = cf::fuse(add);
  CHECK_THROWS_AS(cf::precompile(fused_add, cf::signature(cf::ArgType{cf::f32, {3}}, cf::ArgType{cf::f32, {4}})),
                  cf::ValueError);
  CHECK(fused_add.stats().signatures == 0);
  // Nothing to compute: the result is the argument itself.
  const cf::PrecompileStats none = cf::precompile([](const cf::Array& a) { return a; }, cf::signature(cf::ArgType{cf::f32, {8}}));
  CHECK(none.kernels == 0);
}

TEST_CASE("reference compile: CUFUSE_REFERENCE_COMPILE=ptx checks each kernel's source without a CUBIN; 0 compiles nothing") {
  cufuse_test::Sandbox sandbox;
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array x = host_random({16, 300}, cf::f32, 7);
  const int files0 = files_in(sandbox.dir.path);
  {
    cufuse_test::ScopedEnv ptx("CUFUSE_REFERENCE_COMPILE", "ptx");
    cf::reset_stats();
    const auto calls0 = cf::detail::nvrtc::compile_calls();
    const cf::Array y = softmax(cf::tanh(cf::cos(x)) * 3 - 1);  // plans no other case here makes
    const cf::Array z = cf::cumsum(cf::cosh(x), 1);
    cf::eval(y, z);
    CHECK(cf::stats().kernels_compiled == 0);  // no CUBIN
    CHECK(cf::detail::nvrtc::compile_calls() >= calls0 + 2);  // each kernel's source checked
    CHECK(files_in(sandbox.dir.path) == files0);  // nothing cached on disk
    // The values are the reference backend's, as with CUBINs.
    const std::vector<float> xs = x.to_host<float>(), ys = y.to_host<float>();
    double row = 0;
    for (int j = 0; j < 300; ++j) row += ys[static_cast<size_t>(j)];
    CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
    CHECK(z.to_host<float>()[0] == doctest::Approx(std::cosh(xs[0])));
  }
  {
    cufuse_test::ScopedEnv off("CUFUSE_REFERENCE_COMPILE", "0");
    const auto calls0 = cf::detail::nvrtc::compile_calls();
    const cf::Array z = cf::sinh(cf::abs(x)) + 2;
    z.eval();
    CHECK(cf::detail::nvrtc::compile_calls() == calls0);
    CHECK(cf::stats().kernels_compiled == 0);
  }
}
