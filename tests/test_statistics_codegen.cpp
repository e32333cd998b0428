// tests/test_statistics_codegen.cpp: the privatized scatter-add (codegen/elementwise_kernel.cpp:
// each block counts into shared memory, merged into global memory at the end) as histogram
// and bincount plan it: chosen for a small dense target with many updates (every dtype it
// takes compiles with NVRTC), global atomics otherwise. Planned on placeholders; not run.
#include "test_core_helpers.hpp"

#include "exec/executable.hpp"
#include "graph/gather.hpp"
#include "graph/indexing.hpp"

namespace {
namespace d = cf::detail;

// The kernel source of a scatter-add of `val` into a placeholder target of `nbins` elements
// at index `idx % nbins`, compiled with NVRTC.
std::string scatter_source(cf::DType t, int64_t nbins, int64_t n, bool contiguous_updates = true) {
  auto target = cf::placeholder(t, {nbins});
  auto x = cf::placeholder(cf::f32, {n});
  cf::Array xs = contiguous_updates ? x : cf::placeholder(cf::f32, {n, 2})[{cf::_, 0}];
  auto idx = cf::remainder((xs * 1000.0f).astype(cf::i64), nbins);
  auto s = d::make_scatter(target.node(), {idx.node()}, {0}, {n}, (xs * 2).astype(t).node(), d::ScatterModeArg::Add,
                           (xs > 0).node());
  auto ex = plan_of({cf::Array(s)}, true);
  REQUIRE(ex->steps.size() == 1);
  return d::describe_executable(*ex, true);
}

}  // namespace

TEST_CASE("scatter-add into a small target is privatized in shared memory; every type compiles") {
  for (cf::DType t : {cf::i32, cf::u32, cf::i64, cf::u64, cf::f32, cf::f64}) {
    CAPTURE(cf::name(t));
    const std::string src = scatter_source(t, 1024, 1 << 20);
    CHECK(src.find("__shared__") != std::string::npos);
    CHECK(src.find("scatter-add privatized: 1024") != std::string::npos);
    CHECK(src.find("contiguous,") != std::string::npos);  // contiguous updates: loads first, U per thread
    CHECK(src.find("for (I t0 = ") != std::string::npos);  // a grid-stride loop over a capped grid
  }
  // strided updates: the privatized strided loop
  const std::string strided = scatter_source(cf::i64, 256, 1 << 16, false);
  CHECK(strided.find("scatter-add privatized: 256") != std::string::npos);
  CHECK(strided.find("strided rank") != std::string::npos);
}

TEST_CASE("an integer scatter-add of one value counts in 32 bits and merges count x value") {
  for (cf::DType t : {cf::i64, cf::u32}) {
    auto target = cf::placeholder(t, {4096});
    auto x = cf::placeholder(cf::i32, {1 << 20});
    auto s = d::make_scatter(target.node(), {cf::remainder(x, 4096).astype(cf::i64).node()}, {0}, {1 << 20},
                             cf::full({1 << 20}, 3, t).node(), d::ScatterModeArg::Add);
    auto ex = plan_of({cf::Array(s)}, true);
    const std::string src = d::describe_executable(*ex, true);
    CHECK(src.find("privatized: 4096 uint32 (count x value)") != std::string::npos);
    CHECK(src.find("__shared__ unsigned int cf_priv[4096]") != std::string::npos);
  }
}

TEST_CASE("scatter-add with few updates, a large target or another type uses global atomics") {
  CHECK(scatter_source(cf::i64, 1024, 4096).find("privatized") == std::string::npos);       // few updates
  CHECK(scatter_source(cf::i64, 8192, 1 << 20).find("privatized") == std::string::npos);    // 64 KB of counters
  CHECK(scatter_source(cf::i32, 12288, 1 << 20).find("privatized: 12288") != std::string::npos);  // 48 KB
  CHECK(scatter_source(cf::f16, 1024, 1 << 20).find("privatized") == std::string::npos);    // a CAS loop
}
