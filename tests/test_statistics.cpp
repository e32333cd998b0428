// tests/test_statistics.cpp: cufuse/statistics.hpp on the host reference backend: values
// against hand-computed NumPy results, result dtypes, NumPy's errors, and the kernel counts
// that show the composites fuse (diff of an expression is one kernel, trapezoid one reduction,
// a histogram one scatter kernel after the counters' fill). tests/oracle/gen_statistics.py
// checks many more cases against NumPy itself.
#include <cmath>

#include "test_core_helpers.hpp"

#include "test_values.hpp"

namespace {
using test_values::f64;
using test_values::i64;
using test_values::iarr;
cf::Array farr(std::vector<double> v) { return cf::from_host(v); }
}  // namespace

TEST_CASE("bincount: counts, minlength, weights, errors; one read-back reduction and a scatter") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = iarr({0, 1, 1, 3, 2, 1, 7});
  auto c = cf::bincount(x);
  CHECK(c.dtype() == cf::i64);
  CHECK(i64(c) == std::vector<int64_t>{1, 3, 1, 1, 0, 0, 0, 1});
  CHECK(i64(cf::bincount(x, std::nullopt, 10)).size() == 10);
  auto w = cf::bincount(iarr({0, 1, 1, 2}), farr({0.5, 1.0, 2.0, -1.0}));
  CHECK(w.dtype() == cf::f64);
  CHECK(f64(w) == std::vector<double>{0.5, 3.0, -1.0});
  CHECK(i64(cf::bincount(iarr({}), std::nullopt, 3)) == std::vector<int64_t>{0, 0, 0});
  CHECK(cf::bincount(cf::array({true, false, true})).shape() == cf::Shape{2});
  CHECK_THROWS_AS(cf::bincount(iarr({0, -1})), cf::ValueError);
  CHECK_THROWS_AS(cf::bincount(farr({1.0})), cf::TypeError);
  CHECK_THROWS_AS(cf::bincount(iarr({1, 2}).reshape({1, 2})), cf::ValueError);
  CHECK_THROWS_AS(cf::bincount(x, std::nullopt, -1), cf::ValueError);
  CHECK_THROWS_AS(cf::bincount(x, farr({1.0})), cf::ValueError);
  auto big = cf::arange(1000).astype(cf::i32);
  big.eval();
  cf::reset_stats();
  auto b = cf::bincount(big);
  b.eval();
  // min/max of the input (one sibling reduction), the counters' fill, the scatter-add
  CHECK(cf::stats().kernels_launched == 3);
  cf::reset_stats();
  b = cf::bincount(cf::remainder(big * 7, 13));
  b.eval();
  // the lazy input, named by the caller's temporary, is written out once beside its min/max
  CHECK(cf::stats().kernels_launched == 4);
  CHECK(i64(cf::sum(b)) == std::vector<int64_t>{1000});
}

TEST_CASE("histogram: equal bins with NumPy's edge rule, range, weights, density, explicit edges") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = farr({0.0, 0.5, 1.0, 1.5, 2.0, 2.0, -1.0, 3.0, NAN});
  auto h = cf::histogram(a, 4, cf::Range{0.0, 2.0});
  CHECK(h.hist.dtype() == cf::i64);
  CHECK(i64(h.hist) == std::vector<int64_t>{1, 1, 1, 3});  // the last bin is closed; outside and NaN dropped
  CHECK(f64(h.bin_edges) == std::vector<double>{0.0, 0.5, 1.0, 1.5, 2.0});
  auto auto_range = cf::histogram(farr({1, 2, 2, 3, 4}), 3);
  CHECK(i64(auto_range.hist) == std::vector<int64_t>{1, 2, 2});
  CHECK_THROWS_AS(cf::histogram(a, 4), cf::ValueError);  // autodetected range [nan, nan]
  CHECK_THROWS_AS(cf::histogram(a, 0, cf::Range{0, 1}), cf::ValueError);
  CHECK_THROWS_AS(cf::histogram(a, 3, cf::Range{2, 1}), cf::ValueError);
  CHECK_THROWS_AS(cf::histogram(a, 3, cf::Range{0, INFINITY}), cf::ValueError);
  auto weighted = cf::histogram(farr({0.1, 0.2, 0.9}), 2, cf::Range{0, 1}, farr({1.0, 2.0, 4.0}));
  CHECK(weighted.hist.dtype() == cf::f64);
  CHECK(f64(weighted.hist) == std::vector<double>{3.0, 4.0});
  auto dens = cf::histogram(farr({0.1, 0.2, 0.9, 0.95}), 2, cf::Range{0, 1}, std::nullopt, true);
  CHECK(f64(dens.hist) == std::vector<double>{1.0, 1.0});
  auto edges = cf::histogram(farr({0, 1, 2, 3, 4, 5}), cf::Bins(farr({0, 1, 1, 4, 5})));
  CHECK(i64(edges.hist) == std::vector<int64_t>{1, 0, 3, 2});
  CHECK_THROWS_AS(cf::histogram(a, cf::Bins(farr({0, 2, 1}))), cf::ValueError);
  CHECK(i64(cf::histogram(cf::zeros({0}), 3).hist) == std::vector<int64_t>{0, 0, 0});
  // float32 data: float32 edges (NumPy's bin dtype is the data's)
  CHECK(cf::histogram_bin_edges(farr({0, 1}).astype(cf::f32), 3).dtype() == cf::f32);
}

TEST_CASE("histogram fuses the input's producer and the bin computation into one scatter kernel") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::random::uniform({4096}, cf::f32, 7);
  x.eval();
  cf::reset_stats();
  auto h = cf::histogram(x * 2 - 0.5, 64, cf::Range{0.0, 1.0});
  h.hist.eval();
  CHECK(cf::stats().kernels_launched == 3);  // the edges, the counters' fill, the fused scatter-add
  cf::reset_stats();
  auto e = cf::histogram(x, cf::Bins(cf::linspace(0, 1, 17)));
  e.hist.eval();
  // the monotonicity check (the edges, a generator, made inline by each reader; the comparison
  // a temporary the reduction takes, not written out), the fill, the scatter-add
  CHECK(cf::stats().kernels_launched == 3);
  CHECK(i64(cf::sum(e.hist)) == std::vector<int64_t>{4096});
}

TEST_CASE("histogram2d: counts, outliers, density") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = farr({0.0, 0.5, 1.0, 0.2, 2.0});
  auto y = farr({0.0, 0.9, 1.0, 0.6, 0.5});
  auto h = cf::histogram2d(x, y, 2, std::nullopt, std::pair{cf::Range{0, 1}, cf::Range{0, 1}});
  CHECK(h.hist.dtype() == cf::f64);
  CHECK(f64(h.hist) == std::vector<double>{1, 1, 0, 2});
  CHECK(h.xedges.shape() == cf::Shape{3});
  CHECK_THROWS_AS(cf::histogram2d(x, farr({1}), 2), cf::ValueError);
}

TEST_CASE("diff, ediff1d: values, prepend/append, bool, errors; one kernel over an expression") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = farr({1, 2, 4, 7, 0});
  CHECK(f64(cf::diff(a)) == std::vector<double>{1, 2, 3, -7});
  CHECK(f64(cf::diff(a, 2)) == std::vector<double>{1, 1, -10});
  CHECK(f64(cf::diff(a, 1, -1, cf::Operand(0.0), cf::Operand(1.0))) == std::vector<double>{1, 1, 2, 3, -7, 1});
  auto m = cf::arange(6).reshape({2, 3});
  CHECK(i64(cf::diff(m, 1, 0)) == std::vector<int64_t>{3, 3, 3});
  CHECK(cf::diff(cf::array({true, false, false})).dtype() == cf::bool_);
  CHECK_THROWS_AS(cf::diff(a, -1), cf::ValueError);
  CHECK_THROWS_AS(cf::diff(cf::full({}, 1.0)), cf::ValueError);
  CHECK(f64(cf::ediff1d(a, cf::Operand(9.0), cf::Operand(-9.0))) == std::vector<double>{-9, 1, 2, 3, -7, 9});
  CHECK_THROWS_AS(cf::ediff1d(iarr({1, 2}), cf::Operand(0.5)), cf::TypeError);
  auto x = farr({1, 2, 3, 4});
  auto y = farr({0, 1, 0, 1});
  cf::reset_stats();
  auto d = cf::diff(x * 2 + y, 2);
  d.eval();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(f64(d) == std::vector<double>{-2, 2});
}

TEST_CASE("gradient: uniform and coordinate spacings, edge orders, axes") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = farr({1, 2, 4, 7, 11, 16});
  CHECK(f64(cf::gradient(f)[0]) == std::vector<double>{1, 1.5, 2.5, 3.5, 4.5, 5});
  CHECK(f64(cf::gradient(f, {2.0})[0]) == std::vector<double>{0.5, 0.75, 1.25, 1.75, 2.25, 2.5});
  CHECK(f64(cf::gradient(f, {}, {}, 2)[0]) == std::vector<double>{0.5, 1.5, 2.5, 3.5, 4.5, 5.5});
  auto xc = farr({0, 1, 1.5, 3.5, 4, 6});
  auto g = f64(cf::gradient(f, {xc})[0]);
  CHECK(g[0] == doctest::Approx(1.0));
  CHECK(g[1] == doctest::Approx(3.0));  // NumPy: 3.0
  auto m = cf::from_host(std::vector<double>{1, 2, 6, 3, 4, 5}, cf::Shape{2, 3});
  auto gs = cf::gradient(m);
  REQUIRE(gs.size() == 2);
  CHECK(f64(gs[0]) == std::vector<double>{2, 2, -1, 2, 2, -1});
  CHECK(f64(gs[1]) == std::vector<double>{1, 2.5, 4, 1, 1, 1});
  CHECK(cf::gradient(iarr({1, 2, 4})).at(0).dtype() == cf::f64);
  CHECK_THROWS_AS(cf::gradient(farr({1})), cf::ValueError);
  CHECK_THROWS_AS(cf::gradient(f, {}, {}, 3), cf::ValueError);
  CHECK_THROWS_AS(cf::gradient(f, {1.0, 2.0}), cf::TypeError);
  cf::reset_stats();
  auto one = cf::gradient(f * f)[0];
  one.eval();
  CHECK(cf::stats().kernels_launched == 1);
}

TEST_CASE("trapezoid, cumulative_sum") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto y = farr({1, 2, 3});
  CHECK(f64(cf::trapezoid(y)) == std::vector<double>{4});
  CHECK(f64(cf::trapezoid(y, farr({4, 6, 8}))) == std::vector<double>{8});
  CHECK(f64(cf::trapezoid(y, std::nullopt, 0.5)) == std::vector<double>{2});
  auto m = cf::arange(6).reshape({2, 3});
  CHECK(f64(cf::trapezoid(m, std::nullopt, 1.0, 0)) == std::vector<double>{1.5, 2.5, 3.5});
  cf::reset_stats();
  auto t = cf::trapezoid(cf::exp(y) * 2);
  t.eval();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(i64(cf::cumulative_sum(iarr({1, 2, 3}), std::nullopt, std::nullopt, true)) == std::vector<int64_t>{0, 1, 3, 6});
  CHECK(i64(cf::cumulative_sum(m, 1)) == std::vector<int64_t>{0, 1, 3, 3, 7, 12});
  CHECK_THROWS_AS(cf::cumulative_sum(m), cf::ValueError);
  CHECK(cf::cumulative_sum(iarr({1}).astype(cf::i8)).dtype() == cf::i64);
}

TEST_CASE("average, cov, corrcoef") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(6).reshape({3, 2});
  CHECK(f64(cf::average(a)) == std::vector<double>{2.5});
  CHECK(f64(cf::average(a, 1, farr({0.25, 0.75}))) == std::vector<double>{0.75, 2.75, 4.75});
  auto [avg, scl] = cf::average_returned(a, 0, farr({1, 2, 1}));
  CHECK(f64(avg) == std::vector<double>{2, 3});
  CHECK(f64(scl) == std::vector<double>{4, 4});
  CHECK_THROWS_AS(cf::average(a, {}, farr({1, 2})), cf::TypeError);
  CHECK_THROWS_AS(cf::average(a, 0, farr({1, 2})), cf::ValueError);
  CHECK_THROWS_AS(cf::average(a, 0, farr({1, -1, 0})), cf::ValueError);  // weights sum to zero
  auto x = cf::from_host(std::vector<double>{0, 1, 2, 2, 1, 0}, cf::Shape{2, 3});
  auto c = cf::cov(x);
  CHECK(c.dtype() == cf::f64);
  CHECK(f64(c) == std::vector<double>{1, -1, -1, 1});
  CHECK(f64(cf::cov(x, std::nullopt, true, true)) == std::vector<double>{2.0 / 3, -2.0 / 3, -2.0 / 3, 2.0 / 3});
  CHECK(cf::cov(farr({1, 2, 4})).ndim() == 0);
  CHECK(f64(cf::corrcoef(x)) == std::vector<double>{1, -1, -1, 1});
  CHECK_THROWS_AS(cf::cov(cf::zeros({1, 1, 1})), cf::ValueError);
}

TEST_CASE("nanvar, nanstd, nanprod, nanargmax, nanargmin") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = farr({1, NAN, 3, 5});
  CHECK(f64(cf::nanvar(a)) == std::vector<double>{8.0 / 3});
  CHECK(f64(cf::nanvar(a, {}, 1)) == std::vector<double>{4});
  CHECK(f64(cf::nanstd(a, {}, 1)) == std::vector<double>{2});
  CHECK(std::isnan(f64(cf::nanvar(farr({NAN, 1}), {}, 1))[0]));
  CHECK(cf::nanvar(a.astype(cf::f32)).dtype() == cf::f32);
  CHECK(f64(cf::nanprod(a)) == std::vector<double>{15});
  CHECK(i64(cf::nanargmax(a)) == std::vector<int64_t>{3});
  CHECK(i64(cf::nanargmin(farr({NAN, 2, 1}))) == std::vector<int64_t>{2});
  CHECK_THROWS_AS(cf::nanargmax(farr({NAN, NAN})), cf::ValueError);
  auto m = cf::from_host(std::vector<double>{1, NAN, 3, 4}, cf::Shape{2, 2});
  CHECK(f64(cf::nanvar(m, 1)) == std::vector<double>{0, 0.25});
  cf::reset_stats();
  auto v = cf::nanvar(m, 1);
  v.eval();
  CHECK(cf::stats().kernels_launched <= 2);
}
