// tests/test_sorting_sets.cpp: unique (flat and along an axis), isin and the set functions,
// median, quantile, percentile and their nan* forms on the host reference backend: values
// against NumPy 2 (written out when this file was written), dtypes, keepdims, methods, the one
// read-back of unique, and NumPy's errors.
#include <cmath>
#include <limits>

#include "test_core_helpers.hpp"
#include "sorting_test_values.hpp"
#include "test_values.hpp"

namespace {
using test_values::f64;
using test_values::i64;
using test_values::iarr;
using test_values::message_of;
using sorting_test_values::darr;
using sorting_test_values::kInf;
using sorting_test_values::kNaN;
using sorting_test_values::same_values;
}  // namespace

TEST_CASE("unique: values, first indices, inverse, counts; NaNs one value; empty") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = darr({3, 1, kNaN, 2, 1, kNaN, 3, -0.0, 0.0});
  auto r = cf::unique(a, true, true, true);
  CHECK(same_values(f64(r.values), {-0.0, 1, 2, 3, kNaN}));
  CHECK(std::signbit(f64(r.values)[0]));  // the first zero, -0.0
  CHECK(i64(r.indices) == std::vector<int64_t>{7, 1, 3, 0, 2});
  CHECK(i64(r.inverse) == std::vector<int64_t>{3, 1, 4, 2, 1, 4, 3, 0, 0});
  CHECK(i64(r.counts) == std::vector<int64_t>{2, 2, 1, 2, 2});
  auto plain = cf::unique(a);
  CHECK(!plain.indices.defined());
  CHECK(!plain.inverse.defined());
  CHECK(same_values(f64(cf::unique_values(a)), {0, 1, 2, 3, kNaN}));
  // the inverse keeps a's shape (NumPy 2, axis=None)
  auto m = iarr({0, 1, 0, 1, 0, 1}, cf::Shape{2, 3});
  auto rm = cf::unique(m, false, true);
  CHECK(rm.inverse.shape() == cf::Shape{2, 3});
  CHECK(i64(rm.values) == std::vector<int64_t>{0, 1});
  // every dtype keeps its dtype
  for (cf::DType t : {cf::bool_, cf::i8, cf::u16, cf::i32, cf::u64, cf::f16, cf::bf16, cf::f32}) {
    CAPTURE(cf::name(t));
    auto u = cf::unique_values(iarr({2, 0, 2, 1}).astype(t));
    CHECK(u.dtype() == t);
    CHECK(i64(u) == (t == cf::bool_ ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0, 1, 2}));
  }
  auto e = cf::unique(cf::zeros({0}, cf::i32), true, true, true);
  CHECK(e.values.shape() == cf::Shape{0});
  CHECK(e.values.dtype() == cf::i32);
  CHECK(e.counts.shape() == cf::Shape{0});
}

TEST_CASE("unique along an axis: rows compared lexicographically") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto b = iarr({1, 2, 3, 4, 1, 2, 0, 9}, cf::Shape{4, 2});
  auto r = cf::unique(b, true, true, true, 0);
  CHECK(r.values.shape() == cf::Shape{3, 2});
  CHECK(i64(r.values) == std::vector<int64_t>{0, 9, 1, 2, 3, 4});
  CHECK(i64(r.indices) == std::vector<int64_t>{3, 0, 1});
  CHECK(i64(r.inverse) == std::vector<int64_t>{1, 2, 1, 0});
  CHECK(i64(r.counts) == std::vector<int64_t>{1, 2, 1});
  auto c = cf::unique(b.T(), false, false, false, 1);
  CHECK(c.values.shape() == cf::Shape{2, 3});
  CHECK(i64(c.values) == std::vector<int64_t>{0, 1, 3, 9, 2, 4});
  CHECK_THROWS_AS(cf::unique(b, false, false, false, 2), cf::IndexError);
}

TEST_CASE("unique reads back one number: a sort, the count, then the gathers") {
  cf::BackendScope ref(cf::Backend::Reference);
  // values 0, 1000, ..., 6000: a range wider than the 1000 elements, so sorted, not counted
  auto x = (cf::remainder(cf::arange(1000), 7) * 1000).astype(cf::i32);
  x.eval();
  cf::reset_stats();
  auto u = cf::unique(x, false, false, true);
  // min and max read back first (the range decides: too wide to count); then flatnonzero of
  // the run starts: the sort node, the run-start mask (written: a handle names it) and the
  // selection (one pass); the count read back
  CHECK(cf::stats().evaluations == 2);
  CHECK(cf::stats().kernels_launched == 4);
  // then values and counts: one evaluation, one kernel gathering the values and taking the
  // differences of the starts (the starts are in memory already)
  cf::eval(u.values, u.counts);
  CHECK(cf::stats().evaluations == 3);
  CHECK(cf::stats().kernels_launched == 5);
  CHECK(i64(u.values) == std::vector<int64_t>{0, 1000, 2000, 3000, 4000, 5000, 6000});
  CHECK(i64(u.counts) == std::vector<int64_t>{143, 143, 143, 143, 143, 143, 142});
}

TEST_CASE("unique of integers over a narrow range is counted, not sorted: two read-backs, no sort") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = (cf::remainder(cf::arange(1000), 7) - 3).astype(cf::i16);  // -3 .. 3
  x.eval();
  cf::reset_stats();
  auto u = cf::unique(x, false, false, true);
  // min and max (one kernel, read back); the counters' fill and the scatter-add; flatnonzero of
  // the counters: one selection kernel, the mask computed there, the count read back
  CHECK(cf::stats().evaluations == 4);
  CHECK(cf::stats().kernels_launched == 4);
  cf::eval(u.values, u.counts);  // one kernel gathers both (the positions are in memory already)
  CHECK(cf::stats().kernels_launched == 5);
  CHECK(u.values.dtype() == cf::i16);
  CHECK(i64(u.values) == std::vector<int64_t>{-3, -2, -1, 0, 1, 2, 3});
  CHECK(i64(u.counts) == std::vector<int64_t>{143, 143, 143, 143, 143, 143, 142});
  // every result against the sorted form's (a copy of x spread wider than its length)
  for (cf::DType t : {cf::i8, cf::u8, cf::i32, cf::u32, cf::i64, cf::u64, cf::bool_}) {
    CAPTURE(cf::name(t));
    auto v = cf::remainder(cf::arange(997) * 31, 11).astype(t);
    auto c = cf::unique(v, true, true, true);
    auto s = cf::unique(v.astype(cf::i64) * 1000, true, true, true);  // range 10000 > 997: sorted
    CHECK(i64(c.values.astype(cf::i64) * 1000) == i64(s.values));
    CHECK(i64(c.indices) == i64(s.indices));
    CHECK(i64(c.inverse) == i64(s.inverse));
    CHECK(i64(c.counts) == i64(s.counts));
  }
  // uint64 values past int64's range
  std::vector<uint64_t> big = {UINT64_MAX, UINT64_MAX - 2, UINT64_MAX, UINT64_MAX - 1};
  auto b = cf::unique(cf::from_host(big), true, true, true);
  CHECK(b.values.to_host<uint64_t>() == std::vector<uint64_t>{UINT64_MAX - 2, UINT64_MAX - 1, UINT64_MAX});
  CHECK(i64(b.indices) == std::vector<int64_t>{1, 3, 0});
  CHECK(i64(b.inverse) == std::vector<int64_t>{2, 0, 2, 1});
  CHECK(i64(b.counts) == std::vector<int64_t>{1, 1, 2});
  // int64 extremes: a span past int64 is sorted, never wrapped
  std::vector<int64_t> ext = {INT64_MAX, INT64_MIN, 0, INT64_MAX};
  CHECK(i64(cf::unique(cf::from_host(ext)).values) == std::vector<int64_t>{INT64_MIN, 0, INT64_MAX});
}

TEST_CASE("isin and the set functions (NumPy 2)") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto isin = cf::isin(darr({1, 2, kNaN, 4}), darr({4, kNaN, 1}));
  CHECK(i64(isin) == std::vector<int64_t>{1, 0, 0, 1});
  CHECK(isin.dtype() == cf::bool_);
  auto inv = cf::isin(iarr({1, 5, 7, 2}, cf::Shape{2, 2}), iarr({2, 7}), false, true);
  CHECK(inv.shape() == cf::Shape{2, 2});
  CHECK(i64(inv) == std::vector<int64_t>{1, 1, 0, 0});
  CHECK(i64(cf::isin(iarr({1, 2}), cf::zeros({0}, cf::i64))) == std::vector<int64_t>{0, 0});
  CHECK(same_values(f64(cf::intersect1d(darr({1, 3, 4, 3, kNaN}), darr({3, 1, 2, 1, kNaN}))), {1, 3}));
  CHECK(i64(cf::union1d(iarr({-1, 0, 1}), iarr({-2, 0, 2}))) == std::vector<int64_t>{-2, -1, 0, 1, 2});
  CHECK(i64(cf::setdiff1d(iarr({1, 2, 3, 2, 4, 1}), iarr({3, 4, 5, 6}))) == std::vector<int64_t>{1, 2});
  CHECK(i64(cf::setxor1d(iarr({1, 2, 3, 2, 4}), iarr({2, 3, 5, 7, 5}))) == std::vector<int64_t>{1, 4, 5, 7});
  CHECK(cf::setxor1d(cf::zeros({0}), cf::zeros({0})).shape() == cf::Shape{0});
  CHECK(cf::intersect1d(iarr({1}), iarr({2})).shape() == cf::Shape{0});
}

TEST_CASE("median: axes, keepdims, NaN rows, dtypes") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = darr({10, 7, 4, 3, 2, 1}, cf::Shape{2, 3}).astype(cf::f32);
  auto m = cf::median(x);
  CHECK(m.dtype() == cf::f32);
  CHECK(m.shape() == cf::Shape{});
  CHECK(f64(m) == std::vector<double>{3.5});
  CHECK(f64(cf::median(x, 0)) == std::vector<double>{6.5, 4.5, 2.5});
  CHECK(f64(cf::median(x, 1)) == std::vector<double>{7, 2});
  auto k = cf::median(cf::arange(6).reshape({2, 3}), 1, true);
  CHECK(k.shape() == cf::Shape{2, 1});
  CHECK(k.dtype() == cf::f64);
  CHECK(f64(k) == std::vector<double>{1, 4});
  auto y = darr({1, kNaN, 3, 4, kNaN, kNaN, kNaN, kNaN, 5, 2, kNaN, 1}, cf::Shape{3, 4});
  CHECK(same_values(f64(cf::median(y, 1)), {kNaN, kNaN, kNaN}));
  CHECK(same_values(f64(cf::nanmedian(y, 1)), {3, kNaN, 2}));
  CHECK(cf::median(cf::arange(3).astype(cf::f16)).dtype() == cf::f16);
  CHECK(std::isnan(f64(cf::median(cf::zeros({0})))[0]));
}

TEST_CASE("quantile and percentile: NumPy 2's methods, dtypes, vector q, nan forms, errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = darr({10, 7, 4, 3, 2, 1}, cf::Shape{2, 3}).astype(cf::f32);
  struct M {
    const char* m;
    std::vector<double> rows;  // np.quantile(x, 0.3, axis=1, method=m) (float32)
    std::vector<double> pct;   // np.percentile(np.arange(7), [10, 65], method=m)
  };
  const std::vector<M> ms = {
    {"linear", {5.800000190734863, 1.600000023841858}, {0.6000000000000001, 3.9000000000000004}},
    {"lower", {4, 1}, {0, 3}},
    {"higher", {7, 2}, {1, 4}},
    {"midpoint", {5.5, 1.5}, {0.5, 3.5}},
    {"nearest", {7, 2}, {1, 4}},
    {"hazen", {5.199999809265137, 1.399999976158142}, {0.20000000000000018, 4.05}},
    {"weibull", {4.599999904632568, 1.2000000476837158}, {0.0, 4.2}},
    {"median_unbiased", {5.0, 1.3333333730697632}, {0.06666666666666665, 4.1}},
    {"normal_unbiased", {5.050000190734863, 1.350000023841858}, {0.10000000000000009, 4.0874999999999995}},
    {"interpolated_inverted_cdf", {4, 1}, {0.0, 3.55}},
    {"inverted_cdf", {4, 1}, {0, 4}},
    {"averaged_inverted_cdf", {4, 1}, {0.0, 4.0}},
    {"closest_observation", {4, 1}, {0, 4}},
  };
  for (const auto& m : ms) {
    CAPTURE(m.m);
    auto q = cf::quantile(x, 0.3, 1, m.m);
    CHECK(q.dtype() == cf::f32);
    CHECK(f64(q) == m.rows);
    auto p = cf::percentile(cf::arange(7), {10.0, 65.0}, {}, m.m);
    CHECK(p.shape() == cf::Shape{2});
    CHECK(f64(p) == m.pct);
  }
  // a vector q on float32 gives float64 (NumPy: q is a float64 array); a scalar q keeps float32
  CHECK(cf::quantile(x, std::vector<double>{0.3}, 1).dtype() == cf::f64);
  CHECK(cf::quantile(cf::arange(4), 0.3, {}, "lower").dtype() == cf::i64);
  CHECK(cf::quantile(cf::arange(24).reshape({2, 3, 4}), {0.25, 0.5}, {0, 2}, "linear", true).shape() ==
        cf::Shape{2, 1, 3, 1});
  auto y = darr({1, kNaN, 3, 4, kNaN, kNaN, kNaN, kNaN, 5, 2, kNaN, 1}, cf::Shape{3, 4});
  CHECK(same_values(f64(cf::nanquantile(y, 0.4, 1)), {2.6, kNaN, 1.8}, 1e-15));
  CHECK(same_values(f64(cf::nanpercentile(y, {40.0, 90.0}, 1)), {2.6, kNaN, 1.8, 3.8, kNaN, 4.4}, 1e-15));
  CHECK(same_values(f64(cf::quantile(y, 0.5, 1)), {kNaN, kNaN, kNaN}));
  // errors
  CHECK(message_of([&] { cf::quantile(x, 1.5); }) == "Quantiles must be in the range [0, 1]");
  CHECK(message_of([&] { cf::percentile(x, -1.0); }) == "Percentiles must be in the range [0, 100]");
  CHECK(message_of([&] { cf::quantile(x, 0.5, {}, "foo"); }).find("'foo' is not a valid method. Use one of:") == 0);
  CHECK(message_of([&] { cf::quantile(cf::zeros({0}), 0.5); }) == "index -1 is out of bounds for axis 0 with size 0");
  CHECK_THROWS_AS(cf::quantile(cf::ones({2}, cf::bool_), 0.5), cf::TypeError);
  CHECK_THROWS_AS(cf::median(x, 2), cf::IndexError);
  CHECK_THROWS_AS(cf::median(x, {1, 1}), cf::ValueError);
}
