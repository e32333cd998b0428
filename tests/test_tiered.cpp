// tests/test_tiered.cpp: tiered first calls without a device (issue 35): which steps start on
// the bytecode interpreter, the background compile (one per key), CUFUSE_TIERED's three
// modes, and the plan dump's tier lines. The launches themselves are tests/gpu/test_tiered_gpu.cpp's.
#include <doctest/doctest.h>

#include <cufuse/cufuse.hpp>

#include "exec/executable.hpp"
#include "exec/tiered.hpp"
#include "plan/signature.hpp"
#include "test_sandbox.hpp"

namespace cf = cufuse;
using namespace cf::detail;
using cufuse_test::Sandbox;
using cufuse_test::ScopedEnv;

namespace {

// The executable a lazy evaluation on the device would build for these roots (compiled for
// sm_90, tiered), without running it.
std::shared_ptr<Executable> build_tiered(const std::vector<cf::Array>& outs) {
  std::vector<NodePtr> roots;
  for (const auto& a : outs) roots.push_back(a.node());
  GraphScan scan;
  scan_graph(roots, {}, scan);
  return build_executable(roots, {}, scan, /*compile=*/true, 90, nullptr, /*tiered=*/true);
}

// An input in memory (evaluating it compiles its kernel on the reference backend too).
cf::Array input(int64_t n) {
  cf::Array x = cf::zeros(cf::Shape{n}, cf::f32);
  x.eval();
  return x;
}

// An elementwise expression over x (its kernel in no cache: `salt` is in its text).
cf::Array fresh_expression(const cf::Array& x, double salt) {
  return cf::tanh(x * 2.0f + static_cast<float>(salt)) * cf::exp(x);
}

}  // namespace

TEST_CASE("CUFUSE_TIERED=interpret: elementwise steps run on the interpreter, nothing is compiled") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = cf::ones(cf::Shape{64, 33}, cf::f32), y = cf::ones(cf::Shape{7}, cf::f32);
  x.eval();
  y.eval();
  cf::reset_stats();
  auto ex = build_tiered({y * 3.0f + 1.0f, cf::sum(x * x, 1), cf::cumsum(x, 1)});
  REQUIRE(ex->steps.size() == 3);
  int interpreted = 0, rows = 0, compiled = 0;
  for (const auto& st : ex->steps) {
    if (st.tier) {
      ++interpreted;
      CHECK(!st.kernel);
      CHECK(!st.tier->background);
      CHECK(describe_tier(st).find("never compiled") != std::string::npos);
      if (st.tier->interp.name == kInterpRowsKernelName) {  // the row reduction (issue 35's row programs)
        ++rows;
        CHECK(st.tier->interp.numel == 64 * 33);
      } else {
        CHECK(st.tier->interp.name == kInterpKernelName);
        CHECK(st.tier->interp.numel == 7);
      }
    } else {
      ++compiled;
      CHECK(st.kernel);
      CHECK(st.interp_refusal == "a scan");
    }
  }
  CHECK(interpreted == 2);
  CHECK(rows == 1);
  CHECK(compiled == 1);
  CHECK(cf::stats().kernels_compiled == 1);  // the scan's only
  CHECK(cf::stats().background_compiles == 0);
}

TEST_CASE("CUFUSE_TIERED=interpret: a group whose kernel a cache holds still runs on the interpreter") {
  Sandbox sb;
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = input(1000);
  {
    ScopedEnv off("CUFUSE_TIERED", "0");  // compiled into the memory and disk caches
    auto ex = build_tiered({fresh_expression(x, 0.625)});
    REQUIRE(ex->steps.size() == 1);
    CHECK(ex->steps[0].kernel);
    CHECK(!ex->steps[0].tier);
  }
  {
    ScopedEnv on("CUFUSE_TIERED", "1");  // the default takes the cached kernel
    auto ex = build_tiered({fresh_expression(x, 0.625)});
    CHECK(ex->steps[0].kernel);
    CHECK(!ex->steps[0].tier);
  }
  ScopedEnv interp("CUFUSE_TIERED", "interpret");
  auto ex = build_tiered({fresh_expression(x, 0.625)});
  REQUIRE(ex->steps.size() == 1);
  CHECK(!ex->steps[0].kernel);
  REQUIRE(ex->steps[0].tier);
  CHECK(describe_tier(ex->steps[0]).find("never compiled") != std::string::npos);
}

TEST_CASE("CUFUSE_TIERED=1: the compile goes to the background pool, once per key") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", std::nullopt);  // the default: on
  cf::BackendScope ref(cf::Backend::Reference);
  wait_for_background_compiles();
  cf::Array x = input(1000);
  cf::reset_stats();
  // Two plans (different roots) whose one kernel is the same text, asked for back to back.
  auto a = build_tiered({fresh_expression(x, 0.3125)});
  auto b = build_tiered({fresh_expression(x, 0.3125)});
  REQUIRE(a->steps.size() == 1);
  REQUIRE(b->steps.size() == 1);
  const Step& sa = a->steps[0];
  REQUIRE(sa.tier);
  CHECK(sa.tier->background);
  wait_for_background_compiles();
  CHECK(cf::stats().kernels_compiled == 1);
  CHECK(cf::stats().background_compiles == 1);
  REQUIRE(sa.tier->compiled());
  CHECK(sa.tier->compiled()->name == sa.spec.name);
  CHECK(current_kernel(sa) == sa.tier->compiled().get());
  CHECK(describe_tier(sa).find("taken over") != std::string::npos);
  // b waited for the same compile or found its kernel in the memory cache.
  const Step& sb2 = b->steps[0];
  CHECK(current_kernel(sb2) == sa.tier->compiled().get());
  // Later plans find the kernel in the cache: no tier.
  auto d = build_tiered({fresh_expression(x, 0.3125)});
  CHECK(!d->steps[0].tier);
  CHECK(d->steps[0].kernel.get() == sa.tier->compiled().get());
}

TEST_CASE("CUFUSE_TIERED=0 compiles at once; groups the interpreter cannot run say why") {
  Sandbox sb;
  cf::BackendScope ref(cf::Backend::Reference);
  {
    ScopedEnv tiered("CUFUSE_TIERED", "0");
    auto ex = build_tiered({fresh_expression(input(1000), 0.75)});
    REQUIRE(ex->steps.size() == 1);
    CHECK(!ex->steps[0].tier);
    CHECK(ex->steps[0].kernel);
    CHECK(ex->steps[0].interp_refusal == "CUFUSE_TIERED=0");
  }
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  cf::Array x = cf::ones(cf::Shape{100}, cf::f32);
  x.eval();
  auto ex = build_tiered({x + cf::arange(100.0f)});
  REQUIRE(ex->steps.size() == 1);
  CHECK(!ex->steps[0].tier);
  CHECK(ex->steps[0].kernel);
  CHECK(describe_tier(ex->steps[0]).find("generator") != std::string::npos);
  CHECK(describe_executable(*ex, false).find("tier: compiled (the interpreter cannot: a generator") != std::string::npos);
}

TEST_CASE("the plan text names the interpreter's program") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = cf::ones(cf::Shape{4, 5}, cf::f16);
  x.eval();
  auto ex = build_tiered({cf::sqrt(x) * x});
  const std::string text = describe_executable(*ex, false);
  CHECK(text.find("tier: interpreter (bytecode interpreter: ") != std::string::npos);
}
