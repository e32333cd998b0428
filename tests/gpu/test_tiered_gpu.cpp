// tests/gpu/test_tiered_gpu.cpp: tiered first calls on a device (issue 35). With
// CUFUSE_TIERED=interpret every elementwise group runs on the prebuilt bytecode interpreter
// (no NVRTC), checked against the host reference on random inputs: every op and dtype, casts,
// layouts, several outputs, long programs, a grid-stride size. With the default, a new plan's
// first run is interpreted, its kernel compiles in the background, and a later run swaps in
// the compiled kernel with the same bits; fuse() entries too (and then their graph launch);
// the process-start warm-up has loaded the image. A new process's first call whose hint is on
// disk takes the kernel loaded beside its source (exec/hint_preload.hpp), compiles where that
// CUBIN does not load, and two threads making it at once share one kernel.
#include "core/op_table.hpp"
#include "compile/disk_cache.hpp"
#include "exec/startup.hpp"
#include "exec/tiered.hpp"
#include "plan/signature.hpp"
#include "runtime/device.hpp"
#include "gpu_compare.hpp"
#include "op_cases.hpp"
#include "test_sandbox.hpp"

using namespace cf::detail;
using cufuse_test::Sandbox;
using cufuse_test::ScopedEnv;

namespace {

using cufuse_test::kAllDTypes;

// The interpreter ran `r`'s one kernel, and NVRTC compiled nothing for it.
void check_interpreted(const cf::Array& r, double ulps, const std::string& what, double atol = 0) {
  const auto before = cf::stats();
  CHECK_MESSAGE(check_against_reference(r, ulps, what, atol) == 0, what);
  const auto after = cf::stats();
  CHECK_MESSAGE(after.interpreted_launches > before.interpreted_launches, what);
  CHECK_MESSAGE(after.kernels_compiled == before.kernels_compiled, what);
}

}  // namespace

TEST_CASE("CUFUSE_TIERED=interpret: every op on every dtype runs on the interpreter as on the reference") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  const cf::Shape shape{3, 1031};
  cufuse_test::for_each_op_case([&](const OpRow& row, cf::DType t, const cf::DType* in, const OpTyping& ty) {
    auto a = random_array(in[0], shape);
    auto b = random_array(in[1], shape, cufuse_test::small_second_operand(row, t) ? 2 : 0);
    auto c = random_array(in[2], shape);
    cf::Array r = row.arity == 1 ? cf::apply(row.name, {a}) : row.arity == 2 ? cf::apply(row.name, {a, b}) : cf::apply(row.name, {a, b, c});
    double atol = 0;  // logaddexp's cancellation near 0 (as tests/gpu/test_elementwise_gpu.cpp)
    if ((row.id == Op::Logaddexp || row.id == Op::Logaddexp2) && cf::is_float(ty.result)) {
      const double big = std::max(cf::max(cf::abs(a)).item<double>(), cf::max(cf::abs(b)).item<double>());
      atol = 4 * ulp_of(ty.result, std::max(1.0, big));
    }
    check_interpreted(r, compare_ulps(row.precision, ty.result), std::string(row.name) + " " + std::string(cf::name(t)), atol);
  });
}

TEST_CASE("CUFUSE_TIERED=interpret: casts, layouts, several outputs, long programs") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  for (cf::DType from : kAllDTypes) {
    auto a = random_array(from, cf::Shape{4099});
    for (cf::DType to : kAllDTypes) check_interpreted(a.astype(to), 0, fmt::format("astype {} -> {}", cf::name(from), cf::name(to)));
  }
  auto a = random_array(cf::f32, cf::Shape{37, 41}), col = random_array(cf::f64, cf::Shape{37, 1});
  auto row = random_array(cf::i32, cf::Shape{41}), big = random_array(cf::f32, cf::Shape{41, 37});
  check_interpreted(a * col + row, 0, "broadcast");
  check_interpreted(a + big.T(), 0, "transposed read");
  check_interpreted(a[{cf::slice(cf::none, cf::none, -1), cf::slice(1, cf::none, 3)}] * 2.0f, 0, "reversed, strided");
  auto h = random_array(cf::f16, cf::Shape{5000});
  check_interpreted((h * 3.0 + h) / 7.0, 0, "f16 chain, rounded after each op");
  // Two outputs of one kernel.
  {
    const auto before = cf::stats();
    cf::Array s = a * 2.0f, d = cf::maximum(a, big.T());
    cf::eval(s, d);
    CHECK(cf::stats().interpreted_launches == before.interpreted_launches + 1);
    CHECK(check_against_reference(s, 0, "output 0") == 0);
    CHECK(check_against_reference(d, 0, "output 1") == 0);
  }
  // Many live values: more registers, fewer threads a block.
  std::vector<cf::Array> parts;
  cf::Array acc = random_array(cf::f32, cf::Shape{3000});
  for (int i = 0; i < 12; ++i) parts.push_back(acc * static_cast<float>(i + 1) - static_cast<float>(i));
  cf::Array tot = parts[0];
  for (int i = 1; i < 12; ++i) tot = tot * parts[i] + parts[12 - i];
  check_interpreted(tot, 0, "12 live values");
  // Past one pass of the grid: the grid-stride loop.
  auto x = random_array(cf::f32, cf::Shape{(int64_t(1) << 23) + 3});
  // (exp is within 2 ulps of the host's; the subtraction can double that relative to its result)
  check_interpreted(cf::exp(x) - x, 8, "2^23 + 3 elements");
  // 0-d.
  check_interpreted(random_array(cf::f64, cf::Shape{}) * 3.0, 0, "0-d");
}

TEST_CASE("the default tier: the first run is interpreted, the compiled kernel takes over with the same bits") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", std::nullopt);
  wait_for_background_compiles();
  auto x = random_array(cf::f32, cf::Shape{1 << 20}), y = random_array(cf::f32, cf::Shape{1 << 20});
  auto f = [&] { return cf::tanh(x * 1.25f + y) * cf::exp(y * 0.375f) - x; };
  cf::reset_stats();
  cf::Array first = f();
  first.eval();
  CHECK(cf::stats().interpreted_launches == 1);
  wait_for_background_compiles();
  CHECK(cf::stats().background_compiles == 1);
  CHECK(cf::stats().kernels_compiled == 1);
  cf::Array second = f();
  second.eval();
  CHECK(cf::stats().interpreted_launches == 1);  // the compiled kernel ran
  CHECK(cf::stats().tier_swaps == 1);
  CHECK(same_bits(first, second));
  CHECK(check_against_reference(second, 2, "compiled") == 0);
  {  // the first run made the source after its launch; the kernel's hint is on disk for the
     // next process, whose first call then finds the kernel before its launch
    cf::Array g = f();
    GraphScan scan;
    scan_graph({g.node()}, {}, scan);
    CHECK(disk_cache_has_hint(tier_hint_key(scan, 0, default_arch())));
  }
  // Third and later runs: the graph launch of the compiled kernel.
  for (int i = 0; i < 3; ++i) f().eval();
  CHECK(cf::stats().interpreted_launches == 1);
  CHECK(cf::stats().tier_swaps == 1);
}

TEST_CASE("deferred sources: a plan of a scan, an elementwise and a row group, interpreted first, then compiled") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", std::nullopt);
  wait_for_background_compiles();
  // small integers: the scan's sums are exact in any order, so the row group's input is the
  // reference's to the bit and its check is the softmax's own
  auto x = random_array(cf::f32, cf::Shape{37, 1000}, kSmallInts);
  auto f = [&] {
    cf::Array c = cf::cumsum(x, 1);
    cf::Array e = cf::exp(c * 0.001f + x * 0.01f);
    return std::vector<cf::Array>{c, e / cf::sum(e, 1, true)};
  };
  cf::reset_stats();
  std::vector<cf::Array> first = f();
  cf::eval_all(first);
  CHECK(cf::stats().interpreted_launches >= 1);
  wait_for_background_compiles();
  CHECK(cf::stats().background_compiles == cf::stats().interpreted_launches);
  std::vector<cf::Array> second = f();
  cf::eval_all(second);
  CHECK(cf::stats().tier_swaps == cf::stats().interpreted_launches);
  for (const auto* r : {&first, &second}) {
    CHECK(check_against_reference((*r)[0], 0, "cumsum") == 0);
    CHECK(check_against_reference((*r)[1], red_tol(cf::f32), "softmax of it") == 0);
  }
  CHECK(same_bits(first[0], second[0]));  // the scan was compiled in both runs
}

TEST_CASE("groups the interpreter cannot run wait for their compile") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  auto x = random_array(cf::f32, cf::Shape{64, 100}, kFinite);
  cf::reset_stats();
  cf::Array s = cf::cumsum(x * x, 1);
  CHECK(check_against_reference(s, red_tol(cf::f32), "cumsum") == 0);
  CHECK(cf::stats().interpreted_launches == 0);
  CHECK(cf::stats().kernels_compiled == 1);
}

TEST_CASE("CUFUSE_TIERED=interpret: row reductions, their forms and the row normalizations run on the interpreter") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  for (cf::DType t : {cf::f32, cf::f64, cf::f16, cf::i32, cf::i8, cf::u16, cf::i64}) {
    auto x = random_array(t, cf::Shape{37, 1000}, kFinite);
    const std::string dt(cf::name(t));
    const bool fl = cf::is_float(t);
    const double tol = fl ? red_tol(t) : 0;
    // the interpreter adds by a tree, the reference one term after another: as
    // tests/gpu/test_reduce_gpu.cpp, their difference is bounded by sum_atol (cancellation
    // leaves sums near 0, where ulps of the result say nothing)
    const double atol = fl ? sum_atol(x, 1000) : 0;
    check_interpreted(cf::sum(x, 1), tol, "sum " + dt, atol);
    check_interpreted(cf::max(x * 2, 1), 0, "max " + dt);
    check_interpreted(cf::min(x, 0), 0, "min over axis 0 " + dt);
    check_interpreted(cf::argmax(x, 1), 0, "argmax " + dt);
    check_interpreted(cf::argmin(x, 0), 0, "argmin over axis 0 " + dt);
    if (fl) {
      check_interpreted(cf::prod(x * 0.01 + 1, 1), tol, "prod " + dt);
      check_interpreted(cf::mean(x, 1), tol, "mean " + dt, atol / 1000);
      check_interpreted(cf::var(x, 1), std::max(1024.0, 2.0 * 1000), "var " + dt);
    }
  }
  auto a = random_array(cf::f32, cf::Shape{129, 777}, kFinite);
  auto g = random_array(cf::f32, cf::Shape{777}, kFinite), b = random_array(cf::f32, cf::Shape{777}, kFinite);
  cf::Array e = cf::exp(a - cf::max(a, 1, true));
  check_interpreted(e / cf::sum(e, 1, true), red_tol(cf::f32), "softmax");
  cf::Array mu = cf::mean(a, 1, true);
  // the normalized value's error: the mean's and the deviation's sums (sum_depth roundings of
  // their terms, a few sigma), times |g|, plus the products' own roundings
  const double sig = cf::min(cf::sqrt(cf::var(a, 1))).item<double>();
  const double gmax = cf::max(cf::abs(g)).item<double>(), amax = cf::max(cf::abs(a)).item<double>();
  const double ln_atol = 4 * sum_depth(777) * unit_roundoff(cf::f32) * (amax / sig) * gmax;
  check_interpreted((a - mu) / cf::sqrt(cf::var(a, 1, 0, true) + 1e-5f) * g + b, 4 * red_tol(cf::f32),
                    "layernorm", ln_atol);
  // 100,233 positive terms: the reference adds them one after another in float32, and that
  // rounding is biased as the partial sum grows (NumPy, same data: -13 +- 4 from the exact
  // 9.0e5; sum_atol's max-term bound, about 17, failed one run in seven). The bound here is
  // the one layernorm uses: a few sigma of sum_depth roundings of the sum itself.
  const double ssq = cf::sum(a.astype(cf::f64) * a.astype(cf::f64)).item<double>();
  check_interpreted(cf::sum(a * a, {0, 1}), red_tol(cf::f32), "a full reduction",
                    4 * sum_depth(129 * 777) * unit_roundoff(cf::f32) * ssq);
}

// Few long rows split over blocks (issue 35, W2: one row of 2^27): each block's partials in
// the step's workspace, the last block of a row (a ticket, zeroed at each launch) combines them
// in a fixed order, so a second run gives the same bits; several rows, strided rows, ties.
TEST_CASE("CUFUSE_TIERED=interpret: few long rows split over blocks, the same bits every run") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  const int64_t n = (int64_t(1) << 22) + 5;
  auto x = random_array(cf::f32, cf::Shape{n}, kFinite), y = random_array(cf::f32, cf::Shape{n}, kFinite);
  auto z = random_array(cf::f32, cf::Shape{5, 300001}, kFinite), zt = random_array(cf::f32, cf::Shape{300001, 3}, kFinite);
  auto i = random_array(cf::i32, cf::Shape{3, 200000}, kSmallInts);
  const cf::Array d = (x - y) * (x - y);
  const double ssq = cf::sum(d.astype(cf::f64)).item<double>();
  const double zat = sum_atol(z, 300001), ztat = sum_atol(zt, 300001);
  // The long sums against their float64 value, not the reference's: the reference adds a row's
  // elements one after another in float32, 0.4% off over 2^22 terms of (x - y)^2 (the H200 run
  // that first split this row: device 7.50669e+07, reference 7.47527e+07, float64 7.5067e+07).
  auto check_near = [&](const cf::Array& r, double expect, double tol, const char* what) {
    const auto before = cf::stats();
    const double v = r.item<double>();
    CHECK_MESSAGE(std::abs(v - expect) <= tol, what << ": device " << v << ", float64 " << expect << ", tolerance " << tol);
    const auto after = cf::stats();
    CHECK_MESSAGE(after.interpreted_launches > before.interpreted_launches, what);
    CHECK_MESSAGE(after.kernels_compiled == before.kernels_compiled, what);
  };
  check_near(cf::sum((x - y) * (x - y)), ssq, 4 * sum_depth(n) * unit_roundoff(cf::f32) * ssq, "W2's form");
  check_near(cf::sqrt(cf::sum((x - y) * (x - y))) * 0.5f, std::sqrt(ssq) * 0.5,
             4 * sum_depth(n) * unit_roundoff(cf::f32) * std::sqrt(ssq), "an epilogue");
  check_interpreted(cf::max(x), 0, "max");
  check_interpreted(cf::argmax(x), 0, "argmax");
  check_interpreted(cf::argmin(y * 2.0f), 0, "argmin");
  check_interpreted(cf::sum(z, 1), red_tol(cf::f32), "5 rows: sum", zat);
  check_interpreted(cf::argmax(z, 1), 0, "5 rows: argmax");
  check_interpreted(cf::sum(zt, 0), red_tol(cf::f32), "3 strided rows: sum", ztat);
  check_interpreted(cf::argmin(zt, 0), 0, "3 strided rows: argmin");
  check_interpreted(cf::sum(i, 1), 0, "i32 rows: sum");
  check_interpreted(cf::argmax(i, 1), 0, "i32 rows: argmax over ties");
  // One plan, launched again: the same bits each time.
  cf::Array a0 = cf::sum((x - y) * (x - y)), b0 = cf::sum(z, 1);
  cf::eval_all({a0, b0});
  for (int run = 0; run < 2; ++run) {
    cf::Array a = cf::sum((x - y) * (x - y)), b = cf::sum(z, 1);
    cf::eval_all({a, b});
    CHECK(same_bits(a, a0));
    CHECK(same_bits(b, b0));
  }
}

TEST_CASE("fuse(): the first call is interpreted; a call after the compile swaps the kernel in, then graph launches") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", std::nullopt);
  wait_for_background_compiles();
  // finite inputs: an infinite one makes inf - inf, and allclose (equal_nan false) is false
  auto x = random_array(cf::f32, cf::Shape{1 << 20}, kFinite), y = random_array(cf::f32, cf::Shape{1 << 20}, kFinite);
  auto body = [](const cf::Array& a, const cf::Array& b) { return cf::tanh(a * 1.75f + b) * cf::exp(b * 0.625f) - a; };
  auto f = cf::fuse(body);
  cf::reset_stats();
  cf::Array first = f(x, y);
  CHECK(cf::stats().interpreted_launches == 1);
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(f.stats().graph_launches == 0);  // no graph holds the interpreter
  wait_for_background_compiles();
  CHECK(cf::stats().background_compiles == 1);
  CHECK(cf::stats().kernels_compiled == 1);
  cf::Array second = f(x, y);
  CHECK(cf::stats().interpreted_launches == 1);  // the compiled kernel ran
  CHECK(cf::stats().tier_swaps == 1);
  CHECK(f.stats().graph_launches == 1);  // the entry's chain, made at the swap
  CHECK(same_bits(first, second));
  for (int i = 0; i < 3; ++i) (void)f(x, y);
  CHECK(f.stats().graph_launches == 4);
  CHECK(f.stats().traces == 1);
  CHECK(cf::stats().tier_swaps == 1);
  CHECK(cf::stats().interpreted_launches == 1);
  // the same math in another kernel (fused into allclose's reduction): a few ulps of terms up to ~20
  CHECK(cf::allclose(second, body(x, y), 1e-5, 1e-5));

  // Without graphs: each call launches the compiled kernel once the swap is made.
  auto g = cf::fuse([](const cf::Array& a) { return cf::sin(a) * 3.5f + a; }, cf::FuseOptions{false, 64, "g"});
  cf::reset_stats();
  cf::Array g1 = g(x);
  wait_for_background_compiles();
  cf::Array g2 = g(x);
  cf::Array g3 = g(x);
  CHECK(cf::stats().interpreted_launches == 1);
  CHECK(cf::stats().tier_swaps == 1);
  CHECK(cf::stats().kernels_launched == 3);
  CHECK(g.stats().graph_launches == 0);
  CHECK(same_bits(g1, g3));

  // A full reduction split over blocks: the interpreted first call's workspace is the
  // interpreter's (its partials), not the compiled kernel's; the compiled kernel's sum, in
  // its own order, agrees to a few roundings of the sum.
  auto h = cf::fuse([](const cf::Array& a, const cf::Array& b) { return cf::sum((a - b) * (a - b)); });
  cf::reset_stats();
  cf::Array h1 = h(x, y);
  CHECK(cf::stats().interpreted_launches == 1);
  wait_for_background_compiles();
  cf::Array h2 = h(x, y);
  CHECK(cf::stats().interpreted_launches == 1);
  CHECK(cf::stats().tier_swaps == 1);
  const double want = cf::sum((x.astype(cf::f64) - y.astype(cf::f64)) * (x.astype(cf::f64) - y.astype(cf::f64))).item<double>();
  const double bound = 4 * sum_depth(1 << 20) * unit_roundoff(cf::f32) * want;
  CHECK(std::fabs(h1.item<double>() - want) <= bound);
  CHECK(std::fabs(h2.item<double>() - want) <= bound);
}

TEST_CASE("process start: the interpreter's image is loaded and NVRTC warmed on a background thread") {
  // The test process used a device before this case: the warm-up started then, unless the
  // process began with CUFUSE_TIERED=0 (ctest's default for the GPU tests).
  const char* t = std::getenv("CUFUSE_TIERED");
  if (t && std::string(t) == "0") {
    CHECK(startup_warmup().phase() == StartupWarmup::Phase::Idle);
    return;
  }
  startup_warmup().wait();
  CHECK(startup_warmup().phase() == StartupWarmup::Phase::Done);
  CHECK(interpreter_kernel(cf::detail::current_device()) != nullptr);
  CHECK(interpreter_kernel(cf::detail::current_device(), cf::detail::kInterpNarrowKernelName) != nullptr);
  CHECK(interpreter_kernel(cf::detail::current_device(), cf::detail::kInterpRowsKernelName) != nullptr);
  MESSAGE("start-up warm-up: image " << startup_warmup().load_ms() << " ms, NVRTC " << startup_warmup().warm_ms() << " ms");
}

TEST_CASE("a new process's first call: its hint's kernel loaded beside its source; a CUBIN that does not load is compiled; two threads") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", std::nullopt);
  wait_for_background_compiles();
  constexpr int64_t n = 1 << 18;
  const int arch = default_arch();
  // (The checks below are about which kernel runs: the bounds are loose where the terms cancel.)
  auto x = random_array(cf::f32, cf::Shape{n}, kFinite);
  constexpr double atol = 1e-4;  // a few ulps of terms up to ~20
  // A new process: nothing in memory; the disk keeps the kernels and the hints precompile stored.
  auto new_process = [] {
    wait_for_preloads();
    clear_memory_cache();
    forget_tier_hints();
    cf::reset_stats();
  };
  auto counts = [](const char* what, uint64_t interpreted, uint64_t compiled) {
    CHECK_MESSAGE(cf::stats().interpreted_launches == interpreted, what);
    CHECK_MESSAGE(cf::stats().kernels_compiled == compiled, what);
  };
  {  // the hint's kernel, loaded by the loader thread while the source was made, runs the call
    auto f = [](const cf::Array& a) { return cf::tanh(a * 1.375f - 0.25f) * cf::exp(a * 0.125f) + a; };
    REQUIRE(cf::precompile(f, cf::signature(cf::ArgType{cf::f32, {n}})).kernels == 1);
    new_process();
    CHECK(check_against_reference(f(x), 4, "the hint's kernel", atol) == 0);
    counts("the hint's kernel", 0, 0);
    CHECK(cf::stats().disk_cache_hits >= 1);
  }
  {  // a hint whose CUBIN the driver refuses (its compile key is right): interpreted, then compiled
    auto h = [](const cf::Array& a) { return cf::sin(a * 0.875f + 0.5f) * cf::exp(a * 0.25f) - a; };
    cf::Array r = h(x);
    GraphScan scan;
    scan_graph({r.node()}, {}, scan);
    const KernelSpec spec = build_executable({r.node()}, {}, scan, false, arch)->steps.at(0).spec;
    const std::string hint = tier_hint_key(scan, 0, arch);
    const std::string junk = "this is no kernel image";  // NUL-ended: the driver reads it as PTX text
    REQUIRE(disk_cache_store_hint(hint, compile_key(spec.source, spec.name, arch),
                                  std::vector<char>(junk.c_str(), junk.c_str() + junk.size() + 1), ""));
    new_process();
    CHECK(check_against_reference(r, 4, "a hint that does not load", atol) == 0);
    counts("a hint that does not load", 1, 0);
    wait_for_background_compiles();
    CHECK(cf::stats().kernels_compiled == 1);
    const auto entry = disk_cache_load_hint(hint);  // stored again with the compiled kernel
    REQUIRE(entry);
    CHECK(entry->cubin.size() > junk.size() + 1);
    CHECK(check_against_reference(h(x), 4, "compiled after it", atol) == 0);
  }
  // Two threads making the same first call (a new plan each round: another size, the same kernel).
  auto k = [](const cf::Array& a) { return cf::cos(a * 0.625f + 0.125f) * cf::exp(a * 0.5f) + a * a; };
  for (int64_t m = n; m < n + 3; ++m) {
    auto xs = random_array(cf::f32, cf::Shape{m}, kFinite);
    REQUIRE(cf::precompile(k, cf::signature(cf::ArgType{cf::f32, {m}})).kernels == 1);
    new_process();
    cf::Array r[2];
    for (const auto& e : on_threads_with_own_streams(2, [&](int t) {
           r[t] = k(xs);
           r[t].eval();
         }))
      CHECK_MESSAGE(e.empty(), e);
    counts("two threads", 0, 0);
    CHECK(same_bits(r[0], r[1]));
    CHECK(check_against_reference(k(xs), 4, "two threads", atol) == 0);
  }
}
