// tests/test_core_inplace_fuzzfound.cpp: in-place programs the fuzzer found evaluated wrong,
// built directly with the public API on the reference backend and checked against plain host
// arithmetic (each names the seed that replays it in tests/test_fuzz.cpp).
#include <cstdint>
#include <vector>

#include "test_core_helpers.hpp"

using cf::none;
using cf::slice;

namespace {
// (64, 2) int64 values in [-5, 5], row-major.
std::vector<int64_t> small_ints() {
  std::vector<int64_t> h(128);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<int64_t>(i % 11) - 5;
  return h;
}
int64_t column_max(const std::vector<int64_t>& h, size_t c) {
  int64_t m = h[c];
  for (size_t r = 0; r < 64; ++r) m = std::max(m, h[r * 2 + c]);
  return m;
}
}  // namespace

// CUFUSE_FUZZ_SEED=864574886171 (CUFUSE_FUZZ_DEVICE_CONFIG=1): `y &= y[:, :-1]` into a lazy
// y = x * x that a view names goes to memory, so Array::write evaluates y first, and with it
// the pending write into x. The value `y & y[:, :-1]` was built before that: its view of the
// lazy y is x[:, :-1] * x[:, :-1], a read of x's memory, so it must be computed before x is
// written (it read x's new values, the column maxima).
TEST_CASE("a write into a lazy array reads the values its value was built on, not a pending write's") {
  cf::BackendScope ref(cf::Backend::Reference);
  const std::vector<int64_t> hx = small_ints();
  auto x = cf::from_host(hx).reshape({64, 2});
  auto y = x * x;
  x.assign(cf::max(x, 0, true));  // x[...] = x.max(axis=0, keepdims=True), lazy
  y &= y[{slice(none, none), slice(none, -1)}];
  std::vector<int64_t> want_y(128), want_x(128);
  for (size_t r = 0; r < 64; ++r)
    for (size_t c = 0; c < 2; ++c) {
      want_y[r * 2 + c] = (hx[r * 2 + c] * hx[r * 2 + c]) & (hx[r * 2] * hx[r * 2]);
      want_x[r * 2 + c] = column_max(hx, c);
    }
  CHECK(host<int64_t>(y) == want_y);
  CHECK(host<int64_t>(x) == want_x);
}

TEST_CASE("the fuzz program of seed 864574886171, statement by statement, on the reference backend") {
  cf::BackendScope ref(cf::Backend::Reference);
  const std::vector<int64_t> h2 = small_ints();
  const int64_t h1 = 3;
  auto v1 = cf::from_host(std::vector<int64_t>{h1}).reshape({});
  auto v2 = cf::from_host(h2).reshape({64, 2});
  auto v6 = cf::logical_not(v1);
  auto v7 = v2 * v2;
  auto v8 = v6.astype(cf::DType::Int16);
  v2.assign(cf::max(v2, 0, true));
  auto v11 = v1 * v7 + v1;  // fuzz_madd's lazy twin (a user kernel does not run on the host)
  v7 &= v7[{slice(none, none), slice(none, -1)}];
  auto v2t = v2.T();
  v2t.assign(v8);
  cf::eval(v11, v7);
  std::vector<int64_t> want7(128), want11(128), want2(128, h1 == 0 ? 1 : 0);
  for (size_t i = 0; i < 128; ++i) {
    const int64_t sq = h2[i] * h2[i], first = h2[i - i % 2] * h2[i - i % 2];
    want7[i] = sq & first;
    want11[i] = h1 * sq + h1;
  }
  CHECK(host<int64_t>(v7) == want7);
  CHECK(host<int64_t>(v11) == want11);
  CHECK(host<int64_t>(v2) == want2);
}

// CUFUSE_FUZZ_SEED=919799036265 (CUFUSE_FUZZ_DEVICE_CONFIG=1): `v13 = diagonal(v6)` of a lazy
// view v6 = cumsum(v2)[:, ::-1], then `v6[::-2] <<= v6.min()`. NumPy's diagonal is a view, so
// v13 sees the write into the cumsum's memory; cufuse's diagonal of a lazy array had no lazy
// base, so it kept the values from before the write (element 0 differed on every backend).
TEST_CASE("the diagonal of a lazy array is a view of it: a later write into that array is seen") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto v2 = cf::from_host(std::vector<int32_t>{-1750118495, -738729243, -5, 1, 8, -3}).reshape({3, 2});
  auto v4 = cf::cumsum(v2, 0);
  auto v6 = v4[{slice(none, none), slice(none, none, -1)}];
  auto v13 = cf::diagonal(v6);
  auto rows = v6[{slice(none, none, -2)}];
  rows <<= cf::min(v6);
  // v4 = [[-1750118495, -738729243], [-1750118500, -738729242], [-1750118492, -738729245]];
  // v6 = v4[:, ::-1]; rows 2 and 0 of v6 are shifted by a negative count (0, as NumPy gives).
  CHECK(host<int64_t>(v13) == std::vector<int64_t>{0, -1750118500});
  CHECK(host<int64_t>(v4) == std::vector<int64_t>{0, 0, -1750118500, -738729242, 0, 0});

  // The same through a diagonal of the lazy array itself, and with an offset.
  auto a = cf::arange(16.0).reshape({4, 4}) * 1.0;
  auto d0 = cf::diagonal(a);
  auto d1 = cf::diagonal(a, 1);
  a += 100.0;
  CHECK(host<double>(d0) == std::vector<double>{100, 105, 110, 115});
  CHECK(host<double>(d1) == std::vector<double>{101, 106, 111});
  // Still read-only, as NumPy's diagonal is.
  CHECK_THROWS_AS(d0 += 1.0, cf::ValueError);
}
