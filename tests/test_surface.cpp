// tests/test_surface.cpp: issue 30's creation, printing and testing functions on the host
// reference backend: values, dtypes and shapes of eye/identity/tri/triu/tril/diag/meshgrid/
// logspace and nested cf::array, their kernel counts (they fuse: triu(a * 2) is one kernel),
// NumPy's repr for a few hand-checked arrays (tests/oracle/gen_surface.py checks many more
// against NumPy itself), allclose / array_equal and the AssertionError messages.
#include <cmath>
#include <limits>
#include <sstream>

#include "test_core_helpers.hpp"

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
std::vector<double> as_f64(const cf::Array& a) { return a.astype(cf::f64).to_host<double>(); }
}  // namespace

TEST_CASE("eye, identity and tri are index arithmetic with NumPy's values") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto e = cf::eye(3, 4, 1);
  CHECK(e.dtype() == cf::f64);
  CHECK(e.shape() == cf::Shape{3, 4});
  CHECK(as_f64(e) == std::vector<double>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  CHECK(as_f64(cf::eye(3, std::nullopt, -2, cf::i32)) == std::vector<double>{0, 0, 0, 0, 0, 0, 1, 0, 0});
  CHECK(cf::eye(2, 3, 0, cf::bool_).to_host<bool>() == std::vector<bool>{true, false, false, false, true, false});
  CHECK(as_f64(cf::identity(2, cf::f16)) == std::vector<double>{1, 0, 0, 1});
  CHECK(cf::identity(2, cf::f16).dtype() == cf::f16);
  CHECK(cf::eye(0).shape() == cf::Shape{0, 0});
  CHECK_THROWS_AS(cf::eye(-1), cf::ValueError);
  CHECK_THROWS_AS(cf::eye(2, -1), cf::ValueError);
  CHECK(as_f64(cf::tri(3, 2, 0)) == std::vector<double>{1, 0, 1, 1, 1, 1});
  CHECK(as_f64(cf::tri(2, 3, -1, cf::f16)) == std::vector<double>{0, 0, 0, 1, 0, 0});
  CHECK(cf::tri(-1).shape() == cf::Shape{0, 0});  // as np.tri(-1)
}

TEST_CASE("triu and tril keep the dtype, work on stacks and on 1-d input") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(1, 10).reshape({3, 3}).astype(cf::i16);
  auto u = cf::triu(a);
  CHECK(u.dtype() == cf::i16);
  CHECK(as_f64(u) == std::vector<double>{1, 2, 3, 0, 5, 6, 0, 0, 9});
  CHECK(as_f64(cf::tril(a, -1)) == std::vector<double>{0, 0, 0, 4, 0, 0, 7, 8, 0});
  CHECK(as_f64(cf::triu(a, 1)) == std::vector<double>{0, 2, 3, 0, 0, 6, 0, 0, 0});
  auto s = cf::triu(cf::ones({2, 2, 3}, cf::f32), -1);
  CHECK(s.shape() == cf::Shape{2, 2, 3});
  CHECK(as_f64(s) == std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  auto v = cf::triu(cf::arange(3));  // np.triu(np.arange(3)): a 3 x 3 result
  CHECK(v.shape() == cf::Shape{3, 3});
  CHECK(as_f64(v) == std::vector<double>{0, 1, 2, 0, 1, 2, 0, 0, 2});
  CHECK(cf::tril(cf::ones({2, 2}, cf::bool_)).dtype() == cf::bool_);
  CHECK_THROWS_AS(cf::triu(cf::full({}, 5)), cf::TypeError);
}

TEST_CASE("diag builds a matrix from 1-d input and views the diagonal of 2-d input") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto v = cf::array({1.f, 2.f, 3.f});
  auto d = cf::diag(v);
  CHECK(d.dtype() == cf::f32);
  CHECK(as_f64(d) == std::vector<double>{1, 0, 0, 0, 2, 0, 0, 0, 3});
  auto up = cf::diag(v, 1);
  CHECK(up.shape() == cf::Shape{4, 4});
  CHECK(as_f64(up) == std::vector<double>{0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0});
  auto down = cf::diag(cf::array({int64_t{5}, int64_t{6}}), -2);
  CHECK(as_f64(down) == std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 6, 0, 0});
  CHECK(down.shape() == cf::Shape{4, 4});
  auto m = cf::arange(12).reshape({3, 4});
  CHECK(as_f64(cf::diag(m)) == std::vector<double>{0, 5, 10});
  CHECK(as_f64(cf::diag(m, 2)) == std::vector<double>{2, 7});
  CHECK(as_f64(cf::diag(m, -1)) == std::vector<double>{4, 9});
  CHECK(cf::diag(m, 9).shape() == cf::Shape{0});
  CHECK_THROWS_AS(cf::diag(cf::ones({2, 2, 2})), cf::ValueError);
  CHECK_THROWS_AS(cf::diag(cf::full({}, 1.0)), cf::ValueError);
}

TEST_CASE("meshgrid: xy swaps the first two axes, ij does not; sparse keeps them thin") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(3), y = cf::arange(10, 12);
  auto xy = cf::meshgrid({x, y});
  REQUIRE(xy.size() == 2);
  CHECK(xy[0].shape() == cf::Shape{2, 3});
  CHECK(as_f64(xy[0]) == std::vector<double>{0, 1, 2, 0, 1, 2});
  CHECK(as_f64(xy[1]) == std::vector<double>{10, 10, 10, 11, 11, 11});
  auto ij = cf::meshgrid({x, y}, "ij");
  CHECK(ij[0].shape() == cf::Shape{3, 2});
  CHECK(as_f64(ij[1]) == std::vector<double>{10, 11, 10, 11, 10, 11});
  auto sp = cf::meshgrid({x, y, cf::arange(4)}, "xy", true);
  CHECK(sp[0].shape() == cf::Shape{1, 3, 1});
  CHECK(sp[1].shape() == cf::Shape{2, 1, 1});
  CHECK(sp[2].shape() == cf::Shape{1, 1, 4});
  CHECK(cf::meshgrid({}).empty());
  CHECK_THROWS_AS(cf::meshgrid({x}, "q"), cf::ValueError);
  // copies by default (writable, as NumPy's)
  xy[0].index({0, 0}) = 7;
  CHECK(as_f64(xy[0])[0] == 7);
  CHECK(as_f64(x)[0] == 0);
}

TEST_CASE("logspace is base ** linspace in float64, cast to the dtype") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto l = cf::logspace(0, 3, 4);
  auto h = l.to_host<double>();
  REQUIRE(h.size() == 4);
  CHECK(h[0] == 1);
  CHECK(h[3] == doctest::Approx(1000));
  auto b2 = cf::logspace(0, 4, 4, false, 2.0, cf::i32);
  CHECK(b2.dtype() == cf::i32);
  CHECK(as_f64(b2) == std::vector<double>{1, 2, 4, 8});
  CHECK_THROWS_AS(cf::logspace(0, 1, -1), cf::ValueError);
}

TEST_CASE("nested initializer lists make N-d arrays; ragged ones are a ValueError") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::array({{1.f, 2.f}, {3.f, 4.f}});
  CHECK(a.dtype() == cf::f32);
  CHECK(a.shape() == cf::Shape{2, 2});
  CHECK(a.to_host<float>() == std::vector<float>{1, 2, 3, 4});
  auto b = cf::array({{{1, 2, 3}}, {{4, 5, 6}}});
  CHECK(b.dtype() == cf::i32);
  CHECK(b.shape() == cf::Shape{2, 1, 3});
  auto c = cf::array({{true, false}, {false, true}});
  CHECK(c.dtype() == cf::bool_);
  CHECK(c.to_host<bool>() == std::vector<bool>{true, false, false, true});
  CHECK_THROWS_AS(cf::array({{1.0, 2.0}, {3.0}}), cf::ValueError);
  CHECK_THROWS_AS(cf::array({{{1.0}, {2.0}}, {{3.0}}}), cf::ValueError);
}

TEST_CASE("creation fuses: eye, tri and triu are no kernels of their own") {
  auto x = cf::placeholder(cf::f32, {64, 64});
  CHECK(plan_of({cf::triu(x * 2)})->steps.size() == 1);
  CHECK(plan_of({cf::tril(cf::exp(x), -3) + cf::eye(64, std::nullopt, 0, cf::f32)})->steps.size() == 1);
  CHECK(plan_of({cf::sum(cf::triu(x) * cf::tri(64, 64, 2, cf::f32))})->steps.size() == 1);
  auto v = cf::placeholder(cf::f64, {64});
  CHECK(plan_of({cf::diag(v * 3) + 1})->steps.size() == 1);
  auto g = cf::meshgrid({v, v});
  CHECK(plan_of({g[0] * g[1]})->steps.size() == 1);
  CHECK(plan_of({cf::logspace(0, 1, 64) * v})->steps.size() == 1);
}

TEST_CASE("creation runs the kernels it plans (reference backend)") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(16).astype(cf::f32).reshape({4, 4});
  a.eval();
  cf::reset_stats();
  auto t = cf::triu(a * 2);
  t.eval();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(as_f64(t)[4] == 0);
  CHECK(as_f64(t)[5] == 10);
  cf::reset_stats();
  auto e = cf::eye(4, std::nullopt, 0, cf::f32) * a + 1;
  e.eval();
  CHECK(cf::stats().kernels_launched == 1);
}

TEST_CASE("repr is NumPy's") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(cf::to_string(cf::array({{1.f, 2.f}, {3.f, 4.f}})) == "array([[1., 2.],\n       [3., 4.]], dtype=float32)");
  CHECK(cf::to_string(cf::array({1.0, 2.5})) == "array([1. , 2.5])");
  CHECK(cf::to_string(cf::arange(5)) == "array([0, 1, 2, 3, 4])");
  CHECK(cf::to_string(cf::arange(3).astype(cf::i8)) == "array([0, 1, 2], dtype=int8)");
  CHECK(cf::to_string(cf::array({true, false})) == "array([ True, False])");
  CHECK(cf::to_string(cf::full({}, 1.5)) == "array(1.5)");
  CHECK(cf::to_string(cf::full({}, true)) == "array(True)");
  CHECK(cf::to_string(cf::zeros({0})) == "array([], dtype=float64)");
  CHECK(cf::to_string(cf::zeros({2, 0, 3}, cf::i8)) == "array([], shape=(2, 0, 3), dtype=int8)");
  CHECK(cf::to_string(cf::array({1e-5, 1.0})) == "array([1.e-05, 1.e+00])");
  CHECK(cf::to_string(cf::array({0.1f, 1e-5f, NAN, -INFINITY})) ==
        "array([1.e-01, 1.e-05,    nan,   -inf], dtype=float32)");
  CHECK(cf::to_string(cf::arange(1001)) == "array([   0,    1,    2, ...,  998,  999, 1000], shape=(1001,))");
  CHECK(cf::to_string(cf::arange(2000.0)) ==
        "array([0.000e+00, 1.000e+00, 2.000e+00, ..., 1.997e+03, 1.998e+03,\n       1.999e+03], shape=(2000,))");
  std::ostringstream os;
  os << cf::array({-0.0, 1.0});
  CHECK(os.str() == "array([-0.,  1.])");
  CHECK(fmt::format("{}", cf::arange(3)) == "array([0, 1, 2])");
  CHECK(cf::array_str(cf::array({{1, 2}, {3, 4}})) == "[[1 2]\n [3 4]]");
}

TEST_CASE("allclose and array_equal: NumPy's rules, one fused reduction") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::array({1.0, 2.0, kNaN});
  auto b = cf::array({1.0, 2.0 + 1e-9, kNaN});
  CHECK_FALSE(cf::allclose(a, b));
  CHECK(cf::allclose(a, b, 1e-5, 1e-8, true));
  CHECK(cf::allclose(cf::array({double(INFINITY)}), cf::array({double(INFINITY)})));
  CHECK_FALSE(cf::allclose(cf::array({double(INFINITY)}), cf::array({-double(INFINITY)})));
  CHECK(cf::allclose(cf::arange(3), cf::arange(3).astype(cf::f32)));
  CHECK(cf::allclose(cf::array({1.0f, 1.0001f}), cf::Scalar(1.0), 1e-3));
  CHECK_THROWS_AS(cf::allclose(cf::ones({3}), cf::ones({4})), cf::ValueError);
  CHECK(cf::array_equal(cf::arange(3), cf::arange(3).astype(cf::u8)));
  CHECK_FALSE(cf::array_equal(cf::ones({3}), cf::ones({1, 3})));
  CHECK_FALSE(cf::array_equal(a, a));
  CHECK(cf::array_equal(a, a, true));
  // the check is one fused reduction over the operands' producers: it launches what a plain
  // all() of one elementwise expression over them launches
  auto xr = cf::arange(1000).astype(cf::f32);
  cf::reset_stats();
  CHECK(cf::all(xr * 2 == xr + xr).item<bool>());
  const auto plain = cf::stats().kernels_launched;
  cf::reset_stats();
  CHECK(cf::allclose(xr * 2, xr + xr));
  CHECK(cf::stats().kernels_launched == plain);
  auto x = cf::placeholder(cf::f32, {1000});
  auto y = cf::placeholder(cf::f32, {1000});
  CHECK(plan_of({cf::all(cf::less_equal(cf::abs(x * 2 - y), 1e-8f + 1e-5f * cf::abs(y)))})->steps.size() ==
        plan_of({cf::all(x * 2 == y)})->steps.size());
}

TEST_CASE("assert_allclose and assert_array_equal throw AssertionError with NumPy's message") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(100.0);
  cf::testing::assert_allclose(x, x * 1.0);
  cf::testing::assert_array_equal(x, x);
  auto y = cf::where(cf::remainder(cf::arange(100), 37) == 5, 0.0, x);
  try {
    cf::testing::assert_allclose(x, y);
    FAIL("no AssertionError");
  } catch (const cf::AssertionError& e) {
    const std::string m = e.what();
    CHECK(m.rfind("Not equal to tolerance rtol=1e-07, atol=0\n\nMismatched elements: 3 / 100 (3%)\n"
                  "Mismatch at indices:\n [5]: 5.0 (ACTUAL), 0.0 (DESIRED)\n [42]: 42.0 (ACTUAL), 0.0 (DESIRED)\n"
                  " [79]: 79.0 (ACTUAL), 0.0 (DESIRED)\nMax absolute difference among violations: 79.\n"
                  "Max relative difference among violations: inf\n ACTUAL: array([ 0.,  1.,",
                  0) == 0);
    CHECK(e.kind() == cf::ErrorKind::Assertion);
  }
  try {
    cf::testing::assert_allclose(cf::ones({3}), cf::ones({4}));
    FAIL("no AssertionError");
  } catch (const cf::AssertionError& e) {
    CHECK(std::string(e.what()) == "Not equal to tolerance rtol=1e-07, atol=0\n\n(shapes (3,), (4,) mismatch)\n"
                                   " ACTUAL: array([1., 1., 1.])\n DESIRED: array([1., 1., 1., 1.])");
  }
  try {
    cf::testing::assert_array_equal(cf::arange(6).reshape({2, 3}), cf::array({{0, 1, 2}, {3, 5, 5}}).astype(cf::i64));
    FAIL("no AssertionError");
  } catch (const cf::AssertionError& e) {
    CHECK(std::string(e.what()) ==
          "Arrays are not equal\n\nMismatched elements: 1 / 6 (16.7%)\nMismatch at index:\n [1, 1]: 4 (ACTUAL), 5 "
          "(DESIRED)\nMax absolute difference among violations: 1\nMax relative difference among violations: 0.2\n"
          " ACTUAL: array([[0, 1, 2],\n       [3, 4, 5]])\n DESIRED: array([[0, 1, 2],\n       [3, 5, 5]])");
  }
  try {
    cf::testing::assert_allclose(cf::array({1.0, 2.0, kNaN}), cf::array({1.f, 2.5f, 3.f}));
    FAIL("no AssertionError");
  } catch (const cf::AssertionError& e) {
    CHECK(std::string(e.what()) == "Not equal to tolerance rtol=1e-07, atol=0\n\nnan location mismatch:\n"
                                   " ACTUAL: array([ 1.,  2., nan])\n DESIRED: array([1. , 2.5, 3. ], dtype=float32)");
  }
  // the largest violation is named when it is not among the first five
  try {
    cf::testing::assert_allclose(cf::arange(10.0), cf::zeros({10}) + 0.5);
    FAIL("no AssertionError");
  } catch (const cf::AssertionError& e) {
    CHECK(std::string(e.what()).find("Largest absolute difference at index:\n [9]: 9.0 (ACTUAL), 0.5 (DESIRED)") !=
          std::string::npos);
  }
  CHECK_NOTHROW(cf::testing::assert_allclose(cf::array({1.0, kNaN}), cf::array({1.0, kNaN})));
  // complex NaN and inf are flagged as NumPy flags them (inexact dtypes)
  const auto zn = cf::array({1.0, kNaN, std::numeric_limits<double>::infinity()}).astype(cf::c128);
  CHECK_NOTHROW(cf::testing::assert_allclose(zn, zn.copy()));
  CHECK_NOTHROW(cf::testing::assert_array_equal(zn.astype(cf::c64), zn.astype(cf::c64).copy()));
  CHECK_THROWS_AS(cf::testing::assert_allclose(zn, zn.copy(), 1e-7, 0, false), cf::AssertionError);
  CHECK_THROWS_AS(cf::testing::assert_allclose(cf::array({1.0, kNaN}), cf::array({1.0, kNaN}), 1e-7, 0, false),
                  cf::AssertionError);
  CHECK_NOTHROW(cf::testing::assert_allclose(cf::array({1.0, 1.0 + 1e-9}), cf::Scalar(1.0), 1e-7));
}
