// tests/test_library_signal.cpp: convolve/correlate (NumPy) and signal::convolve2d/
// correlate2d (SciPy) through the reference backend: values against SciPy 1.x and NumPy 2
// (computed with them when this file was written), a shifted-sum identity on random inputs,
// result dtypes (integer wrap, bool, half), strided and lazy inputs, plans, NumPy's and
// SciPy's errors, and NVRTC compiling the generated kernel in each of its shapes.
#include <cmath>
#include <random>

#include "codegen/conv_kernel.hpp"
#include "compile/compiler.hpp"
#include "library/convolve_call.hpp"
#include "test_core_helpers.hpp"

namespace {

size_t groups_of(const std::shared_ptr<cf::detail::Executable>& ex, bool library) {
  size_t n = 0;
  for (const auto& g : ex->plan.groups) n += (g.kind == cf::detail::GroupKind::Library) == library;
  return n;
}
std::vector<double> hd(const cf::Array& a) { return host<double>(a.dtype() == cf::f64 ? a : a.astype(cf::f64)); }
void check_close(const cf::Array& got, const cf::Shape& shape, const std::vector<double>& want, double tol = 1e-12) {
  REQUIRE(got.shape() == shape);
  const auto g = hd(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i)
    CHECK_MESSAGE(std::fabs(g[i] - want[i]) <= tol * (1 + std::fabs(want[i])), "element " << i << ": " << g[i]
                                                                                         << " vs " << want[i]);
}

const std::vector<double> kX = {1, -2, 3, 0.5, 4, 5, -6, 7, 8, -9, 10, 2};  // (3, 4)
const std::vector<double> kK2 = {1, 2, 3, -5};                              // (2, 2)
const std::vector<double> kK3 = {0.5, 1, -1, 2, 0, 3, 1, -2, 1};            // (3, 3)

struct Case {
  const char* fn;
  const char* k;
  const char* mode;
  const char* boundary;
  cf::Shape shape;
  std::vector<double> want;
};

// scipy.signal.{convolve2d,correlate2d}(kX, k, mode, boundary, fillvalue=0.5 for fill, else 0)
const std::vector<Case> kScipy = {
  {"conv", "k2", "full", "fill", {4, 5}, {1, -1, -2, 5.5, 0.5, 5.5, 2, 23, -18.5, 13.5, 18.5, 2, -51, 73, -29, 23, -65.5, 76.5, -42.5, -7}},
  {"conv", "k2", "full", "wrap", {4, 5}, {16, -67, 74, -37.5, 16, 18.5, 2, 23, -18.5, 18.5, -11, 2, -51, 73, -11, 16, -67, 74, -37.5, 16}},
  {"conv", "k2", "full", "symm", {4, 5}, {1, -11, 18, -7, 0.5, 10, 2, 23, -18.5, 20, 16, 2, -51, 73, -8, 8, -60, 67, -22, 2}},
  {"conv", "k2", "same", "fill", {3, 4}, {1, -1, -2, 5.5, 5.5, 2, 23, -18.5, 18.5, 2, -51, 73}},
  {"conv", "k2", "same", "wrap", {3, 4}, {16, -67, 74, -37.5, 18.5, 2, 23, -18.5, -11, 2, -51, 73}},
  {"conv", "k2", "same", "symm", {3, 4}, {1, -11, 18, -7, 10, 2, 23, -18.5, 16, 2, -51, 73}},
  {"conv", "k2", "valid", "fill", {2, 3}, {2, 23, -18.5, 2, -51, 73}},
  {"conv", "k3", "full", "fill", {5, 6}, {3, 2, 1, 7.75, 0.25, 2.75, 5.5, 3.5, 7, -12.5, 23.25, -3.75, 14, 11, -4, 41.5, -22.25, 20.75, 21.25, -18.75, 32.25, 1.25, 11.75, 13.75, 10.25, -21.75, 38.75, -24.25, 9.25, 4.25}},
  {"conv", "k3", "full", "wrap", {5, 6}, {28, -8.5, 30.5, 6.25, 28, -8.5, 40, -26, 43, -39.5, 40, -26, -11, 29, -4, 41.5, -11, 29, 28, -8.5, 30.5, 6.25, 28, -8.5, 40, -26, 43, -39.5, 40, -26}},
  {"conv", "k3", "full", "symm", {5, 6}, {0.5, -1, -4.5, 24.25, -5.25, -4, -6, -1.5, 15, -20, 29, 7, 41, 14.5, -4, 41.5, -8.5, 16.5, 11, 2.5, 20, 21, 14, 18, -27, -8.5, 78, -57.5, 58.5, 31}},
  {"conv", "k3", "same", "fill", {3, 4}, {3.5, 7, -12.5, 23.25, 11, -4, 41.5, -22.25, -18.75, 32.25, 1.25, 11.75}},
  {"conv", "k3", "same", "wrap", {3, 4}, {-26, 43, -39.5, 40, 29, -4, 41.5, -11, -8.5, 30.5, 6.25, 28}},
  {"conv", "k3", "same", "symm", {3, 4}, {-1.5, 15, -20, 29, 14.5, -4, 41.5, -8.5, 2.5, 20, 21, 14}},
  {"conv", "k3", "valid", "fill", {1, 2}, {-4, 41.5}},
  {"corr", "k2", "full", "fill", {4, 5}, {-2, 14.5, -19.5, 8, 0.5, -16, -16, 49, -49, 20, -30, 83, -84, 28, 11.5, 15.5, -11, 10, 13, 2}},
  {"corr", "k2", "full", "wrap", {4, 5}, {14.5, 3, -10, 20.5, 14.5, 3.5, -16, 49, -49, 3.5, -19, 83, -84, 28, -19, 14.5, 3, -10, 20.5, 14.5}},
  {"corr", "k2", "full", "symm", {4, 5}, {1, 10, -17, 10.5, 0.5, -5, -16, 49, -49, -12.5, -4, 83, -84, 28, 17, 8, 59, -66, 34, 2}},
  {"corr", "k2", "same", "fill", {3, 4}, {-16, 49, -49, 20, 83, -84, 28, 11.5, -11, 10, 13, 2}},
  {"corr", "k2", "same", "wrap", {3, 4}, {-16, 49, -49, 3.5, 83, -84, 28, -19, 3, -10, 20.5, 14.5}},
  {"corr", "k2", "same", "symm", {3, 4}, {-16, 49, -49, -12.5, 83, -84, 28, 17, 59, -66, 34, 2}},
  {"corr", "k2", "valid", "fill", {2, 3}, {-16, 49, -49, 83, -84, 28}},
  {"corr", "k3", "full", "fill", {5, 6}, {3.25, -0.75, 10.75, -4.75, 5.25, 2.75, 7.75, -7.25, -0.75, 21.75, -11.75, 9.25, 20.25, -5.25, 21.5, 5.5, -2.5, 17.25, 21.75, -26.75, 59, -22.5, 25, 9, -4.75, 19.75, -12.5, 6, 9, 3.5}},
  {"corr", "k3", "full", "wrap", {5, 6}, {47, -24, 67, -30, 47, -24, -8, 17, -16, 25, -8, 17, 15, 9.25, 21.5, 5.5, 15, 9.25, 47, -24, 67, -30, 47, -24, -8, 17, -16, 25, -8, 17}},
  {"corr", "k3", "full", "symm", {5, 6}, {-1.5, -6, 32, -20.5, 7, 29, -1, 0.5, -5.5, 23, -4, -5.25, 4, 9.5, 21.5, 5.5, 18.5, 1.75, -8.5, -27, 95, -49.5, 31, 58.5, 2.5, 11, 19, 15.5, 18, 14}},
  {"corr", "k3", "same", "fill", {3, 4}, {-7.25, -0.75, 21.75, -11.75, -5.25, 21.5, 5.5, -2.5, -26.75, 59, -22.5, 25}},
  {"corr", "k3", "same", "wrap", {3, 4}, {17, -16, 25, -8, 9.25, 21.5, 5.5, 15, -24, 67, -30, 47}},
  {"corr", "k3", "same", "symm", {3, 4}, {0.5, -5.5, 23, -4, 9.5, 21.5, 5.5, 18.5, -27, 95, -49.5, 31}},
  {"corr", "k3", "valid", "fill", {1, 2}, {21.5, 5.5}},
};

// Full convolution written with cufuse's own slicing and elementwise ops: the image scaled
// by each filter tap, added at that tap's shift.
cf::Array shifted_sum(const cf::Array& x, const cf::Array& w) {
  const int64_t m1 = x.shape()[0], n1 = x.shape()[1], m2 = w.shape()[0], n2 = w.shape()[1];
  auto out = cf::zeros({m1 + m2 - 1, n1 + n2 - 1}, cf::f64);
  for (int64_t k = 0; k < m2; ++k)
    for (int64_t l = 0; l < n2; ++l) {
      auto region = out[{cf::slice(k, k + m1), cf::slice(l, l + n1)}];
      region.assign(region + x * w[{k, l}]);
    }
  return out;
}

cf::Array random_f64(const cf::Shape& s, std::mt19937& g) {
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> v(static_cast<size_t>(cf::numel(s)));
  for (auto& e : v) e = d(g);
  return cf::from_host(v, s);
}

}  // namespace

TEST_CASE("convolve2d and correlate2d against SciPy: every mode and boundary") {
  cf::BackendScope ref(cf::Backend::Reference);
  const auto x = cf::from_host(kX, cf::Shape{3, 4});
  for (const auto& c : kScipy) {
    CAPTURE(c.fn);
    CAPTURE(c.k);
    CAPTURE(c.mode);
    CAPTURE(c.boundary);
    const auto k = std::string(c.k) == "k2" ? cf::from_host(kK2, cf::Shape{2, 2}) : cf::from_host(kK3, cf::Shape{3, 3});
    const double fill = std::string(c.boundary) == "fill" ? 0.5 : 0.0;
    const auto got = std::string(c.fn) == "conv" ? cf::signal::convolve2d(x, k, c.mode, c.boundary, fill)
                                                 : cf::signal::correlate2d(x, k, c.mode, c.boundary, fill);
    check_close(got, c.shape, c.want);
  }
}

TEST_CASE("convolve2d: 'valid' swaps inputs; filters larger than the image wrap and reflect again") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<double> big(20);
  for (int i = 0; i < 20; ++i) big[static_cast<size_t>(i)] = i - 7;
  const auto b = cf::from_host(big, cf::Shape{4, 5});
  const auto s = cf::from_host(std::vector<double>{1, -1, 2, 3}, cf::Shape{2, 2});
  check_close(cf::signal::convolve2d(s, b, "valid"), {3, 4}, {-32, -27, -22, -17, -7, -2, 3, 8, 18, 23, 28, 33});
  check_close(cf::signal::correlate2d(s, b, "valid"), {3, 4}, {57, 52, 47, 42, 32, 27, 22, 17, 7, 2, -3, -8});

  std::vector<double> f(15);
  for (int i = 0; i < 15; ++i) f[static_cast<size_t>(i)] = i - 4;
  const auto img = cf::from_host(std::vector<double>{1, 2, 3, -4}, cf::Shape{2, 2});
  const auto flt = cf::from_host(f, cf::Shape{3, 5});
  check_close(cf::signal::convolve2d(img, flt, "full", "wrap"), {4, 6},
              {45, 30, 45, 30, 45, 30, 27, -12, 27, -12, 27, -12, 45, 30, 45, 30, 45, 30, 27, -12, 27, -12, 27, -12});
  check_close(cf::signal::convolve2d(img, flt, "same", "wrap"), {2, 2}, {27, -12, 45, 30});
  check_close(cf::signal::convolve2d(img, flt, "full", "symmetric"), {4, 6},
              {10, -45, -35, 20, 10, -45, 70, 95, 105, 80, 70, 95, 44, 45, 71, 70, 44, 45, -16, -95, -69, 10, -16, -95});
  check_close(cf::signal::convolve2d(img, flt, "same", "symm"), {2, 2}, {105, 80, 71, 70});
}

TEST_CASE("convolve and correlate against NumPy: every mode, either input longer") {
  cf::BackendScope ref(cf::Backend::Reference);
  const auto a = cf::from_host(std::vector<double>{1, -2, 3, 4, 0.5}, cf::Shape{5});
  struct C1 { std::vector<double> v; const char* mode; std::vector<double> conv, corr; };
  const std::vector<C1> cases = {
    {{1, 10}, "full", {1, 8, -17, 34, 40.5, 5}, {10, -19, 28, 43, 9, 0.5}},
    {{1, 10}, "same", {1, 8, -17, 34, 40.5}, {10, -19, 28, 43, 9}},
    {{1, 10}, "valid", {8, -17, 34, 40.5}, {-19, 28, 43, 9}},
    {{2, -1, 3}, "full", {2, -5, 11, -1, 6, 11.5, 1.5}, {3, -7, 13, 5, 3.5, 7.5, 1}},
    {{2, -1, 3}, "same", {-5, 11, -1, 6, 11.5}, {-7, 13, 5, 3.5, 7.5}},
    {{2, -1, 3}, "valid", {11, -1, 6}, {13, 5, 3.5}},
    {{1, 2, 3, 4, 5, 6, 7}, "full", {1, 0, 2, 8, 14.5, 21, 27.5, 26, 47.5, 31, 3.5}, {7, -8, 14, 40, 37.5, 31, 24.5, 18, 12.5, 5, 0.5}},
    {{1, 2, 3, 4, 5, 6, 7}, "same", {2, 8, 14.5, 21, 27.5, 26, 47.5}, {14, 40, 37.5, 31, 24.5, 18, 12.5}},
    {{1, 2, 3, 4, 5, 6, 7}, "valid", {14.5, 21, 27.5}, {37.5, 31, 24.5}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.v.size());
    CAPTURE(c.mode);
    const auto v = cf::from_host(c.v, cf::Shape{static_cast<int64_t>(c.v.size())});
    check_close(cf::convolve(a, v, c.mode), {static_cast<int64_t>(c.conv.size())}, c.conv);
    check_close(cf::correlate(a, v, c.mode), {static_cast<int64_t>(c.corr.size())}, c.corr);
  }
  // Defaults: convolve 'full', correlate 'valid'; a 0-d input is one element.
  check_close(cf::convolve(a, cf::from_host(std::vector<double>{2}, cf::Shape{})), {5}, {2, -4, 6, 8, 1});
  check_close(cf::correlate(a, cf::from_host(std::vector<double>{1, 10}, cf::Shape{2})), {4}, {-19, 28, 43, 9});
}

TEST_CASE("convolve2d equals the sum of shifted, scaled copies on random inputs") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::mt19937 g(1234);
  for (auto dims : std::vector<std::array<int64_t, 4>>{{7, 9, 3, 4}, {5, 5, 5, 5}, {1, 12, 1, 3}, {9, 2, 4, 1}}) {
    CAPTURE(dims[0]);
    CAPTURE(dims[1]);
    const auto x = random_f64({dims[0], dims[1]}, g), w = random_f64({dims[2], dims[3]}, g);
    const auto want = hd(shifted_sum(x, w));
    check_close(cf::signal::convolve2d(x, w), {dims[0] + dims[2] - 1, dims[1] + dims[3] - 1}, want, 1e-12);
    // correlation is convolution with the filter reversed on both axes (full mode)
    const auto wr = w[{cf::slice(std::nullopt, std::nullopt, -1), cf::slice(std::nullopt, std::nullopt, -1)}];
    check_close(cf::signal::correlate2d(x, wr), {dims[0] + dims[2] - 1, dims[1] + dims[3] - 1}, want, 1e-12);
  }
}

TEST_CASE("convolution result dtypes: NumPy's promotion, integer wrap, bool, half types") {
  cf::BackendScope ref(cf::Backend::Reference);
  const auto i8 = cf::full({2, 2}, 100, cf::i8);
  auto r = cf::signal::convolve2d(i8, i8);
  CHECK(r.dtype() == cf::i8);
  CHECK(host<int8_t>(r) == std::vector<int8_t>{16, 32, 16, 32, 64, 32, 16, 32, 16});  // 10000 wraps as in SciPy
  CHECK(cf::signal::convolve2d(i8, cf::ones({2, 2}, cf::f32)).dtype() == cf::f32);
  CHECK(cf::signal::convolve2d(i8, cf::ones({2, 2}, cf::i16)).dtype() == cf::i16);
  const auto u8 = cf::from_host(std::vector<uint8_t>{200, 1, 2}, cf::Shape{3});
  CHECK(host<uint8_t>(cf::convolve(u8, cf::from_host(std::vector<uint8_t>{2}, cf::Shape{1}))) ==
        std::vector<uint8_t>{144, 2, 4});
  const auto b = cf::from_host(std::vector<uint8_t>{1, 0, 0, 1}, cf::Shape{4}).astype(cf::bool_);
  const auto bv = cf::from_host(std::vector<uint8_t>{1, 0}, cf::Shape{2}).astype(cf::bool_);
  auto rb = cf::convolve(b, bv);
  CHECK(rb.dtype() == cf::bool_);
  CHECK(host<bool>(rb) == std::vector<bool>{true, false, false, true, false});
  const auto h = cf::from_host(std::vector<double>{0.5, 1.5, 2.5}, cf::Shape{3}).astype(cf::f16);
  auto rh = cf::convolve(h, h);
  CHECK(rh.dtype() == cf::f16);
  check_close(rh, {5}, {0.25, 1.5, 4.75, 7.5, 6.25});
  // the fill value is cast to the result dtype (2.5 -> 2 for integers)
  const auto o = cf::ones({3, 3}, cf::i32);
  CHECK(host<int32_t>(cf::signal::convolve2d(o, cf::ones({2, 2}, cf::i32), "full", "fill", 2.5)) ==
        std::vector<int32_t>{7, 6, 6, 7, 6, 4, 4, 6, 6, 4, 4, 6, 7, 6, 6, 7});
}

TEST_CASE("convolve2d's fill value converts as SciPy's: np.asarray(fillvalue, dtype), else ValueError") {
  // Found by the SciPy oracle (tests/oracle): we wrapped or saturated what SciPy refuses.
  cf::BackendScope ref(cf::Backend::Reference);
  const auto u8 = cf::ones({3, 3}, cf::u8), i8 = cf::ones({3, 3}, cf::i8), i32 = cf::ones({3, 3}, cf::i32);
  for (const cf::Scalar& bad : {cf::Scalar(-1), cf::Scalar(256), cf::Scalar(-1.0), cf::Scalar(256.0),
                                cf::Scalar(NAN), cf::Scalar(INFINITY)}) {
    INFO(bad.str());
    CHECK_THROWS_WITH_AS(cf::signal::convolve2d(u8, u8, "full", "fill", bad), doctest::Contains("could not cast `fillvalue`"),
                         cf::ValueError);
    CHECK_THROWS_AS(cf::signal::correlate2d(u8, u8, "valid", "pad", bad), cf::ValueError);  // 'valid' converts it too
    CHECK(cf::signal::convolve2d(u8, u8, "same", "wrap", bad).shape() == cf::Shape{3, 3});  // ignored: no error
  }
  CHECK_THROWS_AS(cf::signal::convolve2d(i8, i8, "full", "fill", 128), cf::ValueError);
  CHECK_THROWS_AS(cf::signal::convolve2d(i8, i8, "full", "fill", -129.0), cf::ValueError);
  CHECK_THROWS_AS(cf::signal::convolve2d(i32, i32, "full", "fill", uint64_t(1) << 63), cf::ValueError);
  // What np.asarray takes: truncation within range, -0.9 -> 0 for uint8, a bool, any value
  // for a float result, and a strong scalar, cast as NumPy casts a 0-d array (np.int16(-1)).
  // out[0, 0] of 'full' is 1 + 8 * fill (one tap on the image, eight on the fill).
  CHECK(host<uint8_t>(cf::signal::convolve2d(u8, u8, "full", "fill", 255.9))[0] == 249);  // 2041 wraps
  CHECK(host<uint8_t>(cf::signal::convolve2d(u8, u8, "full", "fill", -0.9))[0] == 1);
  CHECK(host<int8_t>(cf::signal::convolve2d(i8, i8, "full", "fill", -128.9))[0] == 1);    // -1023 wraps
  CHECK(host<int32_t>(cf::signal::convolve2d(i32, i32, "full", "fill", true))[0] == 9);
  CHECK(hd(cf::signal::convolve2d(cf::ones({3, 3}, cf::f32), cf::ones({3, 3}, cf::f32), "full", "fill", -1))[0] == -7);
  CHECK(host<uint8_t>(cf::signal::convolve2d(u8, u8, "full", "fill", cf::Scalar::typed(cf::Scalar(-1), cf::i16)))[0] ==
        249);
}

TEST_CASE("convolve2d's boundary 'pad' is SciPy's other name for 'fill'") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::mt19937 g(7);
  const auto x = random_f64({5, 6}, g), w = random_f64({3, 2}, g);
  for (const char* mode : {"full", "same", "valid"}) {
    INFO(mode);
    CHECK(hd(cf::signal::convolve2d(x, w, mode, "pad", 1.5)) == hd(cf::signal::convolve2d(x, w, mode, "fill", 1.5)));
    CHECK(hd(cf::signal::correlate2d(x, w, mode, "pad", -2)) == hd(cf::signal::correlate2d(x, w, mode, "fill", -2)));
  }
}

TEST_CASE("convolution inputs: views read through strides, lazy inputs, an elementwise epilogue") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::mt19937 g(99);
  const auto base = random_f64({8, 10}, g), w = random_f64({3, 2}, g);
  const auto view = base[{cf::slice(7, std::nullopt, -2), cf::slice(1, 9, 1)}].T();  // (8, 4), strided, reversed
  const auto want = hd(cf::signal::convolve2d(view.copy(), w.copy(), "same", "symm"));
  check_close(cf::signal::convolve2d(view, w, "same", "symm"), {8, 4}, want);
  // a lazy input is materialized by one kernel, the work after it is one kernel
  auto lazy = cf::signal::convolve2d(base * 2.0, w) + 1.0;
  const auto want2 = hd(cf::signal::convolve2d((base * 2.0).copy(), w));
  auto got2 = hd(lazy);
  REQUIRE(got2.size() == want2.size());
  for (size_t i = 0; i < got2.size(); ++i) CHECK(got2[i] == doctest::Approx(want2[i] + 1.0).epsilon(1e-12));
  auto ex = plan_of({cf::signal::convolve2d(base * 2.0, w) + 1.0});
  CHECK(groups_of(ex, false) == 2);   // base * 2.0 written once, the + 1.0 epilogue
  CHECK(groups_of(ex, true) == 1);
  auto ex2 = plan_of({cf::signal::convolve2d(view, w)});
  CHECK(groups_of(ex2, false) == 0);  // a view goes in as it is
  CHECK(groups_of(ex2, true) == 1);
}

TEST_CASE("convolution errors: NumPy's and SciPy's messages, with the shapes") {
  cf::BackendScope ref(cf::Backend::Reference);
  const auto m = cf::ones({3, 3}, cf::f64), v = cf::ones({3}, cf::f64);
  CHECK_THROWS_WITH_AS(cf::signal::convolve2d(v, m), doctest::Contains("must both be 2-D arrays (got shapes (3,) and (3, 3))"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::signal::convolve2d(m, m, "bad"), doctest::Contains("Acceptable mode flags"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::signal::convolve2d(m, m, "full", "reflect"), doctest::Contains("Acceptable boundary flags"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::signal::correlate2d(cf::ones({3, 1}, cf::f64), cf::ones({2, 2}, cf::f64), "valid"),
                       doctest::Contains("one must be at least as large as the other in every dimension (got shapes (3, 1) and (2, 2))"),
                       cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::signal::convolve2d(cf::ones({0, 3}, cf::f64), m, "full", "wrap"),
                       doctest::Contains("needs a non-empty in1"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::signal::convolve2d(cf::ones({0, 5}, cf::f64), cf::ones({0, 5}, cf::f64)),
                       doctest::Contains("negative dimensions are not allowed"), cf::ValueError);  // as SciPy
  CHECK(cf::signal::correlate2d(cf::ones({0, 5}, cf::f64), cf::ones({0, 5}, cf::f64), "valid").shape() == cf::Shape{1, 1});
  // An empty filter reads nothing, so an empty image takes any boundary: zeros (fuzz seed
  // 418149582683; SciPy 1.17 itself dies of SIGFPE on the wrapped case).
  for (const char* b : {"wrap", "symm", "fill"})
    for (auto [s1, s2] : {std::pair{cf::Shape{0, 33}, cf::Shape{33, 0}}, std::pair{cf::Shape{4, 0}, cf::Shape{0, 3}}}) {
      INFO(b << " " << cf::to_string(s1) << " " << cf::to_string(s2));
      auto r = cf::signal::correlate2d(cf::ones(s1, cf::f32), cf::ones(s2, cf::f32), "full", b);
      CHECK(r.shape() == cf::Shape{s1[0] + s2[0] - 1, s1[1] + s2[1] - 1});
      CHECK(host<float>(r) == std::vector<float>(static_cast<size_t>(r.size()), 0.0f));
      // the device's kernel is emitted (the host reference does not emit it) and compiles
      auto lazy = cf::signal::convolve2d(cf::placeholder(cf::f32, s1), cf::placeholder(cf::f32, s2), "full", b);
      cf::detail::KernelSpec spec;
      REQUIRE(cf::detail::library_attrs(*lazy.node()).call->generated_kernel(spec));
      CHECK(cf::detail::compile_kernel(spec.source, spec.name, 90)->cubin.size() > 0);
    }
  CHECK(host<double>(cf::signal::correlate2d(cf::ones({0, 5}, cf::f64), cf::ones({3, 2}, cf::f64), "full", "fill", 0.5)) ==
        std::vector<double>(12, 3.0));  // SciPy: (2, 6) of the fill value's terms
  CHECK_THROWS_WITH_AS(cf::convolve(cf::ones({0}, cf::f64), v), doctest::Contains("a cannot be empty"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::correlate(v, cf::ones({0}, cf::f64)), doctest::Contains("v cannot be empty"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::convolve(m, v), doctest::Contains("must be 1-D, got shape (3, 3)"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::convolve(v, v, "nope"), doctest::Contains("mode must be one of 'valid', 'same', or 'full' (got 'nope')"), cf::ValueError);
  // Empty 2-D inputs follow the shape formulas, as SciPy's do.
  CHECK(cf::signal::convolve2d(cf::ones({0, 3}, cf::f64), cf::ones({2, 2}, cf::f64)).shape() == cf::Shape{1, 4});
  CHECK(hd(cf::signal::convolve2d(cf::ones({3, 3}, cf::f64), cf::ones({0, 2}, cf::f64), "same")) == std::vector<double>(9, 0.0));
}

TEST_CASE("the convolution kernel compiles with NVRTC in each of its shapes") {
  using namespace cf::detail;
  struct K { cf::DType img, flt, out; ConvBoundary b; bool flip; int64_t rows, kh, kw; };
  const std::vector<K> ks = {
    {cf::f64, cf::f64, cf::f64, ConvBoundary::Fill, true, 2048, 15, 15},  // W10
    {cf::f32, cf::f32, cf::f32, ConvBoundary::Wrap, false, 100, 3, 3},
    {cf::f16, cf::f16, cf::f16, ConvBoundary::Symm, true, 64, 5, 7},
    {cf::i8, cf::i16, cf::i16, ConvBoundary::Fill, true, 10, 2, 40},
    {cf::bool_, cf::bool_, cf::bool_, ConvBoundary::Fill, true, 1, 1, 9},  // one row (np.convolve)
    {cf::f64, cf::f32, cf::f64, ConvBoundary::Fill, false, 300, 45, 70},   // row-chunked filter
  };
  for (const auto& k : ks) {
    ConvProblem p;
    p.img_dtype = k.img, p.flt_dtype = k.flt, p.out_dtype = k.out, p.boundary = k.b, p.flip = k.flip;
    p.img_rows = k.rows, p.img_cols = 100, p.img_row_stride = 100, p.img_col_stride = 1;
    p.kh = k.kh, p.kw = k.kw, p.flt_row_stride = k.kw, p.flt_col_stride = 1;
    p.out_rows = k.rows + k.kh - 1, p.out_cols = 100 + k.kw - 1;
    const KernelSpec spec = emit_conv_kernel(p);
    CAPTURE(spec.name);
    const auto ck = compile_kernel(spec.source, spec.name, 90);
    CHECK(ck->cubin.size() > 0);
    CHECK(ck->spill_stores == 0);
    CHECK(spec.dims.block[0] * spec.dims.grid[0] >= static_cast<unsigned>(std::min<int64_t>(p.out_cols, 256)));
  }
}

TEST_CASE("convolution inside fuse(): replays give the unfused values, a new filter size traces again") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::mt19937 g(5);
  auto blur = cf::fuse([](auto x, auto k) { return cf::sqrt(cf::abs(cf::signal::convolve2d(x, k, "same", "symm"))) + 1.0; });
  for (int call = 0; call < 3; ++call) {
    const auto x = random_f64({9, 11}, g), k = random_f64({3, 3}, g);
    const auto want = hd(cf::sqrt(cf::abs(cf::signal::convolve2d(x, k, "same", "symm"))) + 1.0);
    check_close(blur(x, k), {9, 11}, want, 1e-15);
  }
  CHECK(blur.stats().traces == 1);
  const auto x = random_f64({9, 11}, g), k = random_f64({5, 2}, g);
  check_close(blur(x, k), {9, 11}, hd(cf::sqrt(cf::abs(cf::signal::convolve2d(x, k, "same", "symm"))) + 1.0), 1e-15);
  CHECK(blur.stats().traces == 2);
}

TEST_CASE("convolution calls that differ only in the fill value are different plans") {
  const auto x = cf::placeholder(cf::f32, {8, 8}), k = cf::placeholder(cf::f32, {3, 3});
  auto hash_of = [](const cf::Array& a) {
    return cf::detail::library_attrs(*a.node()).call->attributes_hash();
  };
  const auto h0 = hash_of(cf::signal::convolve2d(x, k, "same", "fill", 0.0));
  CHECK(h0 == hash_of(cf::signal::convolve2d(x, k, "same", "fill", 0.0)));
  CHECK(h0 != hash_of(cf::signal::convolve2d(x, k, "same", "fill", 1.5)));
  CHECK(h0 != hash_of(cf::signal::convolve2d(x, k, "same", "wrap")));
  CHECK(h0 != hash_of(cf::signal::correlate2d(x, k, "same", "fill", 0.0)));
  CHECK(hash_of(cf::signal::convolve2d(x.astype(cf::bool_), k.astype(cf::bool_), "full", "fill", true)) ==
        hash_of(cf::signal::convolve2d(x.astype(cf::bool_), k.astype(cf::bool_), "full", "fill", true)));
  CHECK(plan_of({cf::signal::convolve2d(x, k, "same", "fill", 0.0)})->steps.size() == 1);
}

TEST_CASE("a convolution kernel's source depends on shapes and dtypes only; the rest is parameters") {
  using namespace cf::detail;
  ConvProblem a;
  a.img_rows = 100, a.img_cols = 90, a.img_row_stride = 90, a.img_col_stride = 1;
  a.kh = 5, a.kw = 7, a.flt_row_stride = 7, a.flt_col_stride = 1;
  a.out_rows = 104, a.out_cols = 96, a.row0 = -4, a.col0 = -6;
  ConvProblem b = a;  // other memory, strides, offsets and fill value
  b.img_row_stride = -1, b.img_col_stride = 200, b.flt_row_stride = 1, b.flt_col_stride = 5;
  b.row0 = -2, b.col0 = -3, b.fill = 2.5;
  b.img = reinterpret_cast<const void*>(uintptr_t(0x1000));
  const KernelSpec ka = emit_conv_kernel(a), kb = emit_conv_kernel(b);
  CHECK(ka.name == kb.name);
  CHECK(ka.source == kb.source);
  CHECK(ka.dims.grid[0] == kb.dims.grid[0]);
  CHECK(ka.dims.grid[1] == kb.dims.grid[1]);
  CHECK(ka.params == conv_param_bytes(a));
  CHECK(kb.params == conv_param_bytes(b));
  CHECK(ka.params != kb.params);
}
