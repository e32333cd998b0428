// tests/test_core_inplace_fuzzfound.cpp: in-place programs the fuzzer found evaluated wrong,
// built directly with the public API on the reference backend and checked against plain host
// arithmetic (each names the seed that replays it in tests/test_fuzz.cpp).
#include <cstdint>
#include <vector>

#include "test_core_helpers.hpp"
#include "test_sandbox.hpp"

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

// CUFUSE_FUZZ_SEED=668317566486 and 668519814251 (device config, found by the campaign):
// `a.assign(b)` into a lazy a gave a b's own lazy node, so the two handles named one node;
// a later write through b made that node memory and changed a too.
TEST_CASE("assigning a lazy value gives the array its own node: a later write into the value's array is not seen") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<int64_t>{1, 2, 3, 4});
  auto a = cf::positive(x);  // lazy
  auto b = cf::negative(a);
  a.assign(b);
  b += 100;
  CHECK(host<int64_t>(a) == std::vector<int64_t>{-1, -2, -3, -4});
  CHECK(host<int64_t>(b) == std::vector<int64_t>{99, 98, 97, 96});
  CHECK(host<int64_t>(x) == std::vector<int64_t>{1, 2, 3, 4});
  // A second handle on the same array still sees its writes (the same array, not a copy).
  auto c = x * 2;
  auto c2 = c;
  c2 += 1;
  CHECK(host<int64_t>(c) == std::vector<int64_t>{3, 5, 7, 9});
}

// CUFUSE_FUZZ_SEED=668221497370 and 668608028892: `h2[:, :, ::-1] = v3` (h2 a second handle on
// v2, v3 = v2[:, ::-1]) then cumsum(v3): the ravel inside cumsum made a view of v2's memory
// without carrying out the pending write first, so the planner took it for a read of the old
// values and computed the cumsum before the write.
TEST_CASE("a view of memory made after a pending write through another handle reads the new values") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<uint32_t> h(2 * 5 * 3);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint32_t>(i);
  auto v2 = cf::from_host(h).reshape({2, 5, 3});
  auto h2 = v2;
  auto v3 = v2[{slice(none, none), slice(none, none, -1)}];
  h2[{slice(none, none), slice(none, none), slice(none, none, -1)}] = v3;
  auto v7 = cf::cumsum(v3);  // ravel of a strided view: a copy made after the write
  auto t = v3.T();           // a strided view: a leaf on the written memory
  // v2 now holds v2_old[i, 4 - j, 2 - k]; v3 = v2[:, ::-1] holds v2_old[i, j, 2 - k].
  std::vector<uint64_t> want(h.size());
  uint64_t run = 0;
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 5; ++j)
      for (size_t k = 0; k < 3; ++k) want[(i * 5 + j) * 3 + k] = run += h[(i * 5 + j) * 3 + (2 - k)];
  CHECK(host<uint64_t>(v7) == want);
  CHECK(host<uint32_t>(t.T().copy().ravel()) == host<uint32_t>(v3.copy().ravel()));
  CHECK(host<uint32_t>(v3.ravel())[0] == 2u);
}

// CUFUSE_FUZZ_SEED=717923282040 (device config; the same on the reference backend): v7 =
// expand_dims(v6) of a lazy v6 = -v0, evaluated early, then `h7.T /= 0.5` through a second
// handle on v7: the write was lost (v6 and v7 kept the old values). Evaluating a view of a
// lazy array alone computes it into memory of its own, which the handle drops for the base's
// memory once the base is in memory; a view made of it meanwhile (h7.T) was a view of that
// private memory with no lazy base, so the write went there and was never seen. NumPy: a view
// of a view is a view of the same memory.
TEST_CASE("a view of an evaluated view of a lazy array is a view of that array: writes and reads through it") {
  cf::BackendScope ref(cf::Backend::Reference);
  const std::vector<float> hx{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<float> twice(hx.size());
  for (size_t i = 0; i < hx.size(); ++i) twice[i] = -2 * hx[i];

  // The fuzz program's statements: v6 = -v0; v7 = v6[:, :, None]; h7 = v7; v7 evaluated;
  // h7.T /= 0.5 (NumPy: v6, v7 and h7 all hold -2 * v0; v0 is untouched).
  {
    auto v0 = cf::from_host(hx).reshape({4, 3, 1});
    auto v6 = cf::negative(v0);
    auto v7 = v6.expand_dims(2);
    auto h7 = v7;
    v7.eval();
    {
      auto t = h7.T();
      t /= 0.5;
    }
    CHECK(host<float>(v6) == twice);
    CHECK(host<float>(v7) == twice);
    CHECK(host<float>(h7) == twice);
    CHECK(host<float>(v0) == hx);
  }
  // The smallest form: one handle, y read only after the write.
  {
    auto x = cf::from_host(hx).reshape({4, 3});
    auto y = cf::negative(x);
    auto v = y.reshape({3, 4});
    v.eval();
    auto t = v.T();
    t /= 0.5;
    CHECK(host<float>(v) == twice);
    CHECK(host<float>(y) == twice);
  }
  // Reads: a view (and a diagonal) of the evaluated view sees a later write into the base.
  {
    auto x = cf::from_host(hx).reshape({4, 3});
    auto y = cf::negative(x);
    auto v = y[{slice(1, none)}];  // rows 1..3: a (3, 3) view
    v.eval();
    auto row = v[{0}];
    auto d = cf::diagonal(v);
    y += 100.0f;
    CHECK(host<float>(row) == std::vector<float>{96, 95, 94});
    CHECK(host<float>(d) == std::vector<float>{96, 92, 88});
    CHECK(host<float>(v) == std::vector<float>{96, 95, 94, 93, 92, 91, 90, 89, 88});
  }
}

// Seed 50566: v5 = expand_dims(v3) of a lazy v3, v3 written in place (so v5's base is in
// memory once a later write settles it), then v5.assign(v5). assign took shape() -- a reference
// into the handle's node -- before node() rebound the handle to its base's memory and freed
// that node: NumPy's broadcast message named a freed node's shape ((4, 4) for (5, 1, 4)).
TEST_CASE("x.assign(x) of a view whose lazy base went to memory meanwhile") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<int32_t> h(20);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<int32_t>(i) * 3 - 25;
  auto v1 = cf::from_host(h).reshape({5, 4});
  auto v3 = cf::true_divide(v1, -3);
  auto v5 = cf::expand_dims(v3, 1);
  auto v8 = cf::maximum(v5, 0.001);
  v3.index({slice(1, none)}) /= v3.index({slice(none, -1)});
  v1.index({slice(1, none)}) = 3;
  v5.assign(v5);
  CHECK(v5.shape() == cf::Shape{5, 1, 4});
  // v3 (and v5, its view): row 0 is h / -3, row i > 0 the old row i over the old row i - 1.
  const auto got = v5.template to_host<double>();
  const auto mx = v8.template to_host<double>();
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) {
      const double a = h[static_cast<size_t>(i * 4 + j)] / -3.0;
      const double want = i == 0 ? a : a / (h[static_cast<size_t>((i - 1) * 4 + j)] / -3.0);
      CHECK(got[static_cast<size_t>(i * 4 + j)] == doctest::Approx(want));
      CHECK(mx[static_cast<size_t>(i * 4 + j)] == doctest::Approx(std::max(a, 0.001)));  // v8 read v3 before the write
    }
}

// CUFUSE_FUZZ_SEED=728327525901 (device, on its first launches, which the interpreter runs): a
// row program (a reduction with outputs over its rows) that writes v in place and reads v for
// another output stored each output as it was computed, so w = v ^ any(u) read v's new
// values. It now computes every value before its first store. The interpreter's host build
// runs the plan here, writing the target in place as the device does.
TEST_CASE("a row program writing an array in place reads it before the write (the interpreter's host build)") {
  cf::BackendScope ref(cf::Backend::Reference);
  cufuse_test::ScopedEnv interp("CUFUSE_REFERENCE_INTERPRET", "1");
  std::vector<int64_t> hv(80);
  for (size_t i = 0; i < hv.size(); ++i) hv[i] = static_cast<int64_t>(i * 7 % 13) + 2;
  auto u = cf::from_host(std::vector<double>(80, 1.5)).reshape({5, 16});
  auto v = cf::from_host(hv).reshape({5, 16});
  auto m = cf::any(u, {0, 1}, true);  // (1, 1): true
  auto w = cf::bitwise_xor(v, m);
  v.assign(m.astype(cf::DType::Int64) * 100);  // v[...] = 100 * any(u), lazy
  cf::reset_stats();
  cf::eval(v, w);
  CHECK(cf::stats().interpreted_launches >= 1);
  const auto hw = host<int64_t>(w);
  const auto hv2 = host<int64_t>(v);
  for (size_t i = 0; i < hv.size(); ++i) {
    CHECK(hw[i] == (hv[i] ^ 1));
    CHECK(hv2[i] == 100);
  }
}
