// tests/test_core_reduce.cpp: reductions: the planner's rules pinned by kernel counts
// (no GPU), and NumPy's semantics through the reference backend.
#include <cmath>

#include "test_core_helpers.hpp"
#include "test_sandbox.hpp"

using cf::_;
using cf::none;
using cf::slice;

static size_t kernels(const std::vector<cf::Array>& outs) { return plan_of(outs)->steps.size(); }
static bool has_rule(const std::shared_ptr<cf::detail::Executable>& ex, cf::detail::Rule r) {
  for (const auto& g : ex->plan.groups) {
    if (g.rule == r) return true;
    for (auto f : g.fused)
      if (f == r) return true;
  }
  return false;
}

TEST_CASE("kernel counts: the patterns the issue pins") {
  auto x = cf::placeholder(cf::f32, {1 << 27});
  auto y = cf::placeholder(cf::f32, {1 << 27});
  CHECK(kernels({cf::sum((x - y) * (x - y))}) == 1);  // prologue + full reduction, one kernel
  auto a = cf::placeholder(cf::f32, {8192, 8192});
  auto e = cf::exp(a - cf::max(a, 1, true));
  auto softmax = e / cf::sum(e, 1, true);
  auto ex = plan_of({softmax});
  CHECK(ex->steps.size() == 1);
  CHECK(has_rule(ex, cf::detail::Rule::Rows));
  CHECK(ex->steps[0].spec.summary.find("row on chip") != std::string::npos);
  auto g = cf::placeholder(cf::f32, {8192});
  auto b = cf::placeholder(cf::f32, {8192});
  auto mu = cf::mean(a, 1, true);
  auto layernorm = (a - mu) / cf::sqrt(cf::var(a, 1, 0, true) + 1e-5f) * g + b;
  CHECK(kernels({layernorm}) == 1);
  auto m = cf::mean(a, 1);
  auto v = cf::var(a, 1);
  auto mv = plan_of({m, v});
  CHECK(mv->steps.size() == 1);  // mean and var of one input: one kernel
  auto a512 = cf::placeholder(cf::f32, {512, 8192});
  CHECK(kernels({cf::mean(a512, 0), cf::var(a512, 0)}) == 1);  // across threads, short rows: one kernel
  // Over axis 0 of f32[8192,8192] the row kernel would give each of 8192 rows of 8192
  // elements to one thread, phases included (1.8 ms for var on the H100): the mean (with its
  // sibling) and the variance run as two kernels split over blocks instead
  CHECK(kernels({cf::mean(a, 0), cf::var(a, 0)}) == 2);
  CHECK(kernels({cf::min(a, {0, 1}), cf::max(a)}) == 1);  // siblings
  CHECK(kernels({cf::sum(a * a, 1)}) == 1);               // W5 as sum(a*b, axis=1)
  CHECK(kernels({cf::sqrt(cf::sum(a * a, 1)) + 1}) == 1); // epilogue
  CHECK(kernels({cf::ptp(a, 1)}) == 1);
  auto w9 = cf::placeholder(cf::f64, {4096, 512, 512});
  auto ex9 = plan_of({cf::prod(w9, 0)});
  CHECK(ex9->steps.size() == 1);
  CHECK(ex9->steps[0].spec.summary.find("a thread per row") != std::string::npos);
  // columns of a tall array: fewer rows than fill the GPU, so each row gets strided lanes,
  // and long rows split over blocks as well
  auto tall = plan_of({cf::sum(cf::placeholder(cf::f32, {1 << 20, 16}), 0)});
  CHECK(tall->steps[0].spec.summary.find("16 strided lanes per row, split over") != std::string::npos);
  auto cols = plan_of({cf::max(cf::placeholder(cf::f32, {600, 256}), 0)});
  CHECK(cols->steps[0].spec.summary.find("8 strided lanes per row") != std::string::npos);
  // scans: a 1-D cumsum and an outer-axis one under 2^18 columns are cut into tiles over many
  // blocks (look-back); 2^18 columns or more get a thread each; contiguous rows of a tile
  // (4096 f32) or more are tiled, shorter ones get 1 to 32 lanes each; other layouts a block
  // per row. 4-byte rows of 2^18 elements or more take tiles of 8192.
  auto scan_mode = [&](const cf::Array& r) { return plan_of({r})->steps[0].spec.summary; };
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {1 << 26}))).find("tiles of 8192 elements, 32 a thread, a tile a block, look-back by groups of 32 tiles") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {(1 << 18) - 1}))).find("tiles of 4096 elements, 16 a thread, a tile a block, look-back by groups of 32 tiles") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f64, {1 << 26}))).find("tiles of 2048 elements, 8 a thread") != std::string::npos);
  // a tile a block while the tiles fit the grid (2^20 blocks), else blocks loop over tickets
  const std::string past_grid = scan_mode(cf::cumsum(cf::placeholder(cf::f64, {int64_t(1) << 32})));
  CHECK(past_grid.find("a tile a block") == std::string::npos);
  CHECK(past_grid.find("tiles of 2048 elements, 8 a thread, look-back by groups of 32 tiles") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f64, {int64_t(1) << 31}))).find("a tile a block") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {16384, 4096}), 1)).find("tiles of 4096 elements, 16 a thread, a tile a row") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {64, 1 << 20}), 1)).find("look-back by groups of 32 tiles") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {1 << 20, 64}), 1)).find("4 lane(s) a row, 4 vector(s) of 4") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {4096, 1000}), 1)).find("32 lane(s) a row") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {4096, 33}), 1)).find("16 lane(s) a row, 4 vector(s) of 1") != std::string::npos);
  auto every_other = cf::placeholder(cf::f32, {300, 200})[{slice(none, none), slice(none, none, 2)}];
  CHECK(scan_mode(cf::cumsum(every_other, 1)).find("a block per row") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {16384, 4096}), 0)).find("tiles of 32 rows x 128 elements") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f16, {1 << 20, 5}), 0)).find("tiles of 8 rows x 512 elements") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {64, 1 << 18}), 0)).find("a thread per row in order") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {4096, 32}), 1)).find("2 lane(s) a row, 4 vector(s) of 4") != std::string::npos);
  CHECK(scan_mode(cf::cumsum(cf::placeholder(cf::f32, {1 << 22, 16}), 1)).find("1 lane(s) a row, 4 vector(s) of 4") != std::string::npos);
  // log_softmax and rmsnorm: one kernel each
  auto mx = cf::max(a, -1, true);
  auto lsm = (a - mx) - cf::log(cf::sum(cf::exp(a - mx), -1, true));
  CHECK(kernels({lsm}) == 1);
  auto rms = a / cf::sqrt(cf::mean(a * a, -1, true) + 1e-6f) * g;
  CHECK(kernels({rms}) == 1);
  CHECK(kernels({a - cf::mean(a, 1, true)}) == 1);
  // softmax of a transpose: the rows are read across threads (a thread per row), so the
  // row-shaped result is not written by that kernel along its rows but by a tiled one
  auto t = a.T();
  auto et = cf::exp(t - cf::max(t, 1, true));
  auto ext = plan_of({et / cf::sum(et, 1, true)});
  REQUIRE(ext->steps.size() == 3);  // max, sum(exp(x.T - max)), the result
  CHECK(ext->steps[0].spec.summary.find("split over") != std::string::npos);
  CHECK(ext->steps[1].spec.summary.find("split over") != std::string::npos);
  CHECK(ext->steps[2].spec.summary.find("tiled rank 2") != std::string::npos);
  // over axis 0 the same: two split reductions, then a rows-mode kernel for the result
  auto e0 = cf::exp(a - cf::max(a, 0, true));
  auto ex0 = plan_of({e0 / cf::sum(e0, 0, true)});
  REQUIRE(ex0->steps.size() == 3);
  CHECK(ex0->steps[2].spec.summary.find("rows rank 2") != std::string::npos);
  // short rows (512) keep the one row kernel
  auto e5 = cf::exp(a512 - cf::max(a512, 0, true));
  CHECK(kernels({e5 / cf::sum(e5, 0, true)}) == 1);
}

TEST_CASE("rows too long for one block: a multi-pass plan") {
  auto a = cf::placeholder(cf::f32, {4, 1 << 20});
  auto e = cf::exp(a - cf::max(a, 1, true));
  auto sm = e / cf::sum(e, 1, true);
  auto ex = plan_of({sm});
  CHECK(ex->steps.size() == 3);
  CHECK(has_rule(ex, cf::detail::Rule::MultiPass));
}

TEST_CASE("a reduction read through a reshape is materialized, then read as memory") {
  auto a = cf::placeholder(cf::f32, {64, 32});
  auto s = cf::sum(a, 1);                 // (64,)
  auto t = s.reshape({8, 8}).T() + 1;     // not an epilogue: a remap of the result
  auto ex = plan_of({t});
  CHECK(ex->steps.size() == 2);
  CHECK(has_rule(ex, cf::detail::Rule::Materialize));
  auto c = cf::cumsum(a, 1) * 2;
  CHECK(kernels({c}) == 2);  // scan kernel, then its consumer
}

TEST_CASE("every reduction kernel shape compiles (NVRTC, sm_90)") {
  std::vector<cf::Array> outs;
  for (cf::DType t : {cf::f32, cf::f64, cf::f16, cf::bf16, cf::i8, cf::i32, cf::u64, cf::bool_}) {
    auto a = cf::placeholder(t, {37, 129});
    std::vector<cf::Array> v = {cf::sum(a, 1), cf::prod(a, 0), cf::max(a, 1), cf::min(a), cf::nanmax(a, 0),
                                cf::argmax(a, 1), cf::argmin(a), cf::any(a, 0), cf::all(a), cf::mean(a, 1),
                                cf::var(a, 0, 1), cf::cumsum(a, 1), cf::cumprod(a, 0)};
    for (auto& x : v) CHECK(plan_of({x}, true)->steps.size() >= 1);
  }
  auto big = cf::placeholder(cf::f32, {1 << 24});
  CHECK(plan_of({cf::sum(big)}, true)->steps[0].spec.summary.find("split") != std::string::npos);
  // scans along contiguous rows: tiles with the look-back (status words of 8 bytes, or of 16
  // for 8-byte sums), a tile a row, and lanes a row, vectors or not
  for (cf::DType t : {cf::f32, cf::f64, cf::i8, cf::i64, cf::f16}) {
    std::vector<cf::Array> scans = {cf::cumsum(cf::placeholder(t, {1 << 20})), cf::cumprod(cf::placeholder(t, {3, 70001}), 1),
                                    cf::cumsum(cf::placeholder(t, {100, 4096}), 1), cf::cumsum(cf::placeholder(t, {1000, 100}), 1),
                                    cf::cumsum(cf::placeholder(t, {1000, 37}), 1)};
    for (auto& x : scans) CHECK(plan_of({x}, true)->steps.size() >= 1);
  }
  auto rows = cf::placeholder(cf::f16, {100, 8192});
  auto e = cf::exp(rows - cf::max(rows, 1, true));
  CHECK(plan_of({e / cf::sum(e, 1, true)}, true)->steps.size() == 1);
  auto w = cf::placeholder(cf::f32, {3, 5, 7, 11});
  CHECK(plan_of({cf::sum(w, {0, 2}), cf::sum(w.transpose({2, 0, 3, 1}), {1, 3})}, true)->steps.size() >= 1);
}

TEST_CASE("reductions follow NumPy (reference backend)") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(12).reshape({3, 4});
  CHECK(host<int64_t>(cf::sum(a, 0)) == std::vector<int64_t>{12, 15, 18, 21});
  CHECK(host<int64_t>(cf::sum(a, -1)) == std::vector<int64_t>{6, 22, 38});
  CHECK(cf::sum(a, 1, true).shape() == cf::Shape{3, 1});
  CHECK(host<int64_t>(cf::sum(a)) == std::vector<int64_t>{66});
  CHECK(cf::sum(a.astype(cf::i8)).dtype() == cf::i64);
  CHECK(cf::sum(a.astype(cf::u8)).dtype() == cf::u64);
  CHECK(cf::sum(a.astype(cf::f16)).dtype() == cf::f16);
  CHECK(cf::mean(a).dtype() == cf::f64);
  CHECK(cf::mean(a.astype(cf::f32)).dtype() == cf::f32);
  CHECK(host<double>(cf::mean(a, 1)) == std::vector<double>{1.5, 5.5, 9.5});
  CHECK(host<double>(cf::var(a, 1)) == std::vector<double>{1.25, 1.25, 1.25});
  CHECK(host<double>(cf::var(a, 1, 1))[0] == doctest::Approx(5.0 / 3));
  CHECK(host<double>(cf::std(a, 0))[0] == doctest::Approx(std::sqrt(32.0 / 3)));
  CHECK(host<int64_t>(cf::max(a, 0)) == std::vector<int64_t>{8, 9, 10, 11});
  CHECK(host<int64_t>(cf::min(a, {0, 1})) == std::vector<int64_t>{0});
  CHECK(host<int64_t>(cf::ptp(a, 1)) == std::vector<int64_t>{3, 3, 3});
  CHECK(host<int64_t>(cf::prod(a[{_, slice(1, 3)}], 1)) == std::vector<int64_t>{2, 30, 90});
  CHECK(host<int64_t>(cf::argmax(a)) == std::vector<int64_t>{11});
  CHECK(host<int64_t>(cf::argmin(a, 1)) == std::vector<int64_t>{0, 0, 0});
  CHECK(host<int64_t>(cf::cumsum(a, 1)) == std::vector<int64_t>{0, 1, 3, 6, 4, 9, 15, 22, 8, 17, 27, 38});
  CHECK(host<int64_t>(cf::cumsum(a)).back() == 66);
  CHECK(host<int64_t>(cf::cumprod(a[{_, slice(1, 3)}], 0)) == std::vector<int64_t>{1, 2, 5, 12, 45, 120});
  CHECK(host<int64_t>(cf::count_nonzero(a, 1)) == std::vector<int64_t>{3, 4, 4});
  CHECK(host<bool>(cf::any(a > 10, 1)) == std::vector<bool>{false, false, true});
  CHECK(host<bool>(cf::all(a >= 0)) == std::vector<bool>{true});
  auto f = cf::from_host(std::vector<float>{1, NAN, 3, -2});
  CHECK(std::isnan(host<float>(cf::max(f))[0]));
  CHECK(host<float>(cf::nanmax(f))[0] == 3.0f);
  CHECK(host<float>(cf::nanmin(f))[0] == -2.0f);
  CHECK(host<float>(cf::nansum(f))[0] == 2.0f);
  CHECK(host<float>(cf::nanmean(f))[0] == doctest::Approx(2.0f / 3));
  CHECK(host<int64_t>(cf::argmax(f)) == std::vector<int64_t>{1});  // NaN is the maximum
  CHECK(host<float>(cf::linalg::norm(cf::from_host(std::vector<float>{3, 4}))) == std::vector<float>{5.0f});
  auto v = cf::from_host(std::vector<double>{1, -2, 3});
  CHECK(host<double>(cf::linalg::norm(v, 1.0))[0] == 6.0);
  CHECK(host<double>(cf::linalg::norm(v, INFINITY))[0] == 3.0);
  CHECK(host<double>(cf::linalg::norm(v, -INFINITY))[0] == 1.0);
  CHECK(host<double>(cf::linalg::norm(v, 0.0))[0] == 3.0);
  CHECK(host<double>(cf::linalg::norm(v, 3.0))[0] == doctest::Approx(std::cbrt(36.0)));
  CHECK(host<double>(cf::linalg::norm(a.astype(cf::f64), cf::none, 1))[2] == doctest::Approx(std::sqrt(64. + 81 + 100 + 121)));
}

// max, min, nanmax and nanmin order -0 below +0 (codegen/device_helpers.inc: cf_red_max), so
// the zero they give does not depend on the order they combine in: NumPy's own does (down a
// column it keeps the last of equal zeros, along a row the first), and fuzz seed 728217886719
// took 1 / nanmin of a column of zeros as +inf on the interpreter's first device launches and
// -inf compiled. Every arrangement of three signed zeros, along rows and down columns, on the
// reference and on the interpreter's host build.
TEST_CASE("max and min reductions of signed zeros do not depend on the order they combine in") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<double> h;
  for (int m = 0; m < 8; ++m)
    for (int k = 0; k < 3; ++k) h.push_back((m >> k) & 1 ? -0.0 : 0.0);
  for (const char* interp : {"0", "1"}) {
    cufuse_test::ScopedEnv env("CUFUSE_REFERENCE_INTERPRET", interp);
    for (cf::DType t : {cf::f32, cf::f64}) {
      auto rows = cf::from_host(h).reshape({8, 3}).astype(t);
      auto cols = cf::from_host(h).reshape({8, 3}).T().copy().astype(t);  // (3, 8): a column each
      for (int via_cols = 0; via_cols < 2; ++via_cols) {
        const int axis = via_cols ? 0 : 1;
        const cf::Array& x = via_cols ? cols : rows;
        const std::vector<double> mx = host<double>(cf::max(x, axis).astype(cf::f64));
        const std::vector<double> mn = host<double>(cf::min(x, axis).astype(cf::f64));
        const std::vector<double> nmx = host<double>(cf::nanmax(x, axis).astype(cf::f64));
        const std::vector<double> nmn = host<double>(cf::nanmin(x, axis).astype(cf::f64));
        for (int m = 0; m < 8; ++m) {
          CAPTURE(interp);
          CAPTURE(m);
          CAPTURE(via_cols);
          const bool all_neg = m == 7, any_neg = m != 0;
          CHECK(std::signbit(mx[static_cast<size_t>(m)]) == all_neg);
          CHECK(std::signbit(nmx[static_cast<size_t>(m)]) == all_neg);
          CHECK(std::signbit(mn[static_cast<size_t>(m)]) == any_neg);
          CHECK(std::signbit(nmn[static_cast<size_t>(m)]) == any_neg);
        }
      }
    }
  }
}

TEST_CASE("empty reductions: NumPy's answers and errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto e = cf::zeros({0, 3}, cf::f32);
  CHECK(host<float>(cf::sum(e, 0)) == std::vector<float>{0, 0, 0});
  CHECK(host<float>(cf::prod(e)) == std::vector<float>{1});
  CHECK(cf::max(e, 1).shape() == cf::Shape{0});
  CHECK_THROWS_WITH_AS(cf::max(e), doctest::Contains("zero-size array to reduction operation maximum"), cf::ValueError);
  CHECK_THROWS_AS(cf::max(e, 0), cf::ValueError);
  CHECK_THROWS_AS(cf::argmax(e), cf::ValueError);
  CHECK(std::isnan(host<float>(cf::mean(e))[0]));
  CHECK(host<bool>(cf::any(e)) == std::vector<bool>{false});
  CHECK(host<bool>(cf::all(e)) == std::vector<bool>{true});
  CHECK(host<float>(cf::cumsum(e)).empty());
  // no rows of long ones: nothing to split over blocks (device fuzz seed 1069303610878: the
  // reduction emitter divided by the number of row blocks, 0, and the process died of SIGFPE)
  auto none_long = cf::sum(cf::zeros({0, 20011}, cf::f32), 1);
  auto none_long3 = cf::sum(cf::ones({2, 0, 9000}, cf::f32) * 2, 2);
  cf::eval(none_long, none_long3);
  CHECK(none_long.shape() == cf::Shape{0});
  CHECK(none_long3.shape() == cf::Shape{2, 0});
  auto a = cf::zeros({2, 3});
  CHECK_THROWS_AS(cf::sum(a, 2), cf::IndexError);
  CHECK_THROWS_AS(cf::sum(a, {0, 0}), cf::ValueError);
  CHECK_THROWS_AS(cf::argmax(a, 5), cf::IndexError);
  CHECK(host<double>(cf::linalg::norm(cf::ones({2, 3}), 1.0))[0] == 2.0);  // matrix 1-norm: max column sum
}

TEST_CASE("fused reductions compute what the unfused ones do (reference backend)") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::random::normal({13, 67}, cf::f32, 3).eval();
  auto e = cf::exp(a - cf::max(a, 1, true));
  auto sm = e / cf::sum(e, 1, true);
  auto s = host<float>(cf::sum(sm, 1));
  for (float v : s) CHECK(v == doctest::Approx(1.0f).epsilon(1e-5));
  auto mu = cf::mean(a, 1, true);
  auto ln = (a - mu) / cf::sqrt(cf::var(a, 1, 0, true) + 1e-5f);
  auto lh = host<float>(ln);
  auto ah = host<float>(a);
  double m = 0, vv = 0;
  for (int j = 0; j < 67; ++j) m += ah[j];
  m /= 67;
  for (int j = 0; j < 67; ++j) vv += (ah[j] - m) * (ah[j] - m);
  vv /= 67;
  CHECK(lh[5] == doctest::Approx((ah[5] - m) / std::sqrt(vv + 1e-5)).epsilon(1e-4));
}
