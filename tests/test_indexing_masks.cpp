// tests/test_indexing_masks.cpp: issue 30's selections by mask on the host reference backend:
// x[mask] (whole-shape and leading-dims masks), nonzero, where(cond), argwhere, flatnonzero,
// extract, compress: values, dtypes, empty results, NumPy's errors, and their kernel counts
// (one selection kernel, or in two passes the mask's tile counts and their scan, then one
// compaction kernel: test_indexing_compaction.cpp).
#include "test_core_helpers.hpp"

#include "test_values.hpp"

namespace {
using test_values::f64;
using test_values::i64;
cf::Array barr(std::vector<bool> v, std::optional<cf::Shape> s = std::nullopt) {
  std::vector<uint8_t> b(v.begin(), v.end());
  return cf::from_host(b.data(), cf::bool_, s ? *s : cf::Shape{static_cast<int64_t>(v.size())});
}
}  // namespace

TEST_CASE("x[mask]: the selected elements in order, every dtype, empty selections") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (cf::DType t : {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u16, cf::u32, cf::u64, cf::f16,
                      cf::bf16, cf::f32, cf::f64}) {
    CAPTURE(cf::name(t));
    auto x = cf::arange(6).astype(t);
    cf::Array s = x[x > 2];
    CHECK(s.dtype() == t);
    if (t == cf::bool_) CHECK(s.shape() == cf::Shape{0});
    else CHECK(f64(s) == std::vector<double>{3, 4, 5});
  }
  auto x = cf::arange(12).astype(cf::f32).reshape({3, 4});
  cf::Array all = x[x >= 0];
  CHECK(all.shape() == cf::Shape{12});
  cf::Array none = x[x > 100];
  CHECK(none.shape() == cf::Shape{0});
  CHECK(none.dtype() == cf::f32);
  // a mask over the leading dims selects rows
  cf::Array rows = x[barr({true, false, true})];
  CHECK(rows.shape() == cf::Shape{2, 4});
  CHECK(f64(rows) == std::vector<double>{0, 1, 2, 3, 8, 9, 10, 11});
  CHECK(x.index({barr({false, true, false}), cf::_}).shape() == cf::Shape{1, 4});
  // an empty array
  cf::Array e = cf::zeros({0, 3})[cf::zeros({0, 3}) > 0];
  CHECK(e.shape() == cf::Shape{0});
  // NumPy's errors
  CHECK_THROWS_AS(static_cast<cf::Array>(x[barr({true, false})]), cf::IndexError);
  CHECK_THROWS_AS(static_cast<cf::Array>(x[cf::ones({3, 4, 1}, cf::bool_)]), cf::IndexError);
}

TEST_CASE("x[mask] of lazy producers: computed in the selection's one kernel, never written") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(1000).astype(cf::f32);
  x.eval();
  cf::reset_stats();
  cf::Array s = (x * 2)[cf::sin(x) > 0.5f];
  // one kernel, mask and values computed in it (rule fused-input); the count read back as a copy
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(cf::stats().evaluations == 1);
  s.eval();  // the first rows of the selection's buffer: nothing left to run
  CHECK(cf::stats().kernels_launched == 1);
  auto v = f64(s);
  CHECK(v[0] == 2 * 1);  // sin(1) > 0.5
  CHECK(v.size() == static_cast<size_t>(cf::count_nonzero(cf::sin(x) > 0.5f).item<int64_t>()));
}

TEST_CASE("nonzero, where(cond), argwhere and flatnonzero") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::from_host(std::vector<int32_t>{0, 3, 0, -1, 5, 0}, cf::Shape{2, 3});
  auto nz = cf::nonzero(a);
  REQUIRE(nz.size() == 2);
  CHECK(nz[0].dtype() == cf::i64);
  CHECK(i64(nz[0]) == std::vector<int64_t>{0, 1, 1});
  CHECK(i64(nz[1]) == std::vector<int64_t>{1, 0, 1});
  auto w = cf::where(a > 0);
  CHECK(i64(w[0]) == std::vector<int64_t>{0, 1});
  CHECK(i64(w[1]) == std::vector<int64_t>{1, 1});
  auto aw = cf::argwhere(a);
  CHECK(aw.shape() == cf::Shape{3, 2});
  CHECK(i64(aw) == std::vector<int64_t>{0, 1, 1, 0, 1, 1});
  CHECK(cf::argwhere(cf::zeros({2, 2})).shape() == cf::Shape{0, 2});
  CHECK(cf::argwhere(cf::full({}, 3)).shape() == cf::Shape{1, 0});
  CHECK(cf::argwhere(cf::full({}, 0)).shape() == cf::Shape{0, 0});
  CHECK(i64(cf::flatnonzero(a)) == std::vector<int64_t>{1, 3, 4});
  CHECK(i64(cf::nonzero(cf::from_host(std::vector<double>{0, 0.5, -0.0, NAN}))[0]) == std::vector<int64_t>{1, 3});
  CHECK(cf::flatnonzero(cf::zeros({0})).shape() == cf::Shape{0});
  CHECK_THROWS_AS(cf::nonzero(cf::full({}, 1)), cf::ValueError);
  // a nonzero() result indexes the array it came from
  CHECK(i64(a.index({nz[0], nz[1]})) == std::vector<int64_t>{3, -1, 5});
}

TEST_CASE("extract and compress") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(12).reshape({3, 4});
  CHECK(i64(cf::extract(cf::remainder(a, 3) == 0, a)) == std::vector<int64_t>{0, 3, 6, 9});
  CHECK(i64(cf::extract(barr({true, false, true}), a)) == std::vector<int64_t>{0, 2});  // a shorter condition
  CHECK_THROWS_AS(cf::extract(cf::ones({13}, cf::bool_), a).eval(), cf::IndexError);
  CHECK(i64(cf::compress(barr({false, true, true}), a, 0)) == std::vector<int64_t>{4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(i64(cf::compress(barr({false, true}), a, 1)) == std::vector<int64_t>{1, 5, 9});
  CHECK(i64(cf::compress(barr({false, true, false, false, true}), a)) == std::vector<int64_t>{1, 4});
  CHECK_THROWS_AS(cf::compress(barr({true, true, true, true}), a, 0).eval(), cf::IndexError);
  CHECK_THROWS_AS(cf::compress(cf::ones({2, 2}, cf::bool_), a), cf::ValueError);
}
