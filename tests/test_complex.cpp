// tests/test_complex.cpp: complex64 / complex128 through the engine on the host reference
// backend: dtype facts and names, NumPy 2 promotion (weak C++ complex scalars included), host
// transfers and item, creation, arithmetic and the complex functions against std::complex,
// casts (complex -> real keeps the real part: the documented choice where NumPy warns),
// comparisons and max/min/sort in NumPy's order, reductions (sum, prod, mean, var), printing,
// .npy files, and kernel counts. NumPy's own values are tests/test_complex_oracle.cpp's.
#include <complex>
#include <filesystem>
#include <random>

#include "core/op_table.hpp"
#include "test_core_helpers.hpp"

namespace {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

template <class T>
std::vector<std::complex<T>> random_complex(size_t n, unsigned seed, T scale = T(4)) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<T> d(-scale, scale);
  std::vector<std::complex<T>> v(n);
  for (auto& z : v) z = {d(g), d(g)};
  return v;
}

// |got - want| within rel * |want| (plus a tiny absolute floor), per element.
template <class T>
void check_close(const std::vector<std::complex<T>>& got, const std::vector<std::complex<T>>& want, double rel) {
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(std::complex<double>(got[i]) - std::complex<double>(want[i]));
    if (!(err <= rel * std::abs(std::complex<double>(want[i])) + 1e-30) && bad++ < 3)
      CHECK_MESSAGE(false, "element " << i << ": " << got[i] << " vs " << want[i]);
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("complex dtypes: names, sizes, kinds, parsing and C++ types") {
  CHECK(cf::name(cf::c64) == "complex64");
  CHECK(cf::name(cf::c128) == "complex128");
  CHECK(cf::itemsize(cf::c64) == 8);
  CHECK(cf::itemsize(cf::c128) == 16);
  CHECK(cf::is_complex(cf::c64));
  CHECK(!cf::is_float(cf::c64));
  CHECK(cf::kind(cf::c128) == cf::DKind::Complex);
  CHECK(cf::real_dtype(cf::c64) == cf::f32);
  CHECK(cf::real_dtype(cf::c128) == cf::f64);
  CHECK(cf::real_dtype(cf::i8) == cf::i8);
  CHECK(cf::parse_dtype("c64") == cf::c64);
  CHECK(cf::parse_dtype("complex128") == cf::c128);
  CHECK(cf::parse_dtype("complex") == cf::c128);
  CHECK(cf::dtype_of<c64>() == cf::c64);
  CHECK(cf::dtype_of<c128>() == cf::c128);
  CHECK(cf::float_for(cf::c64) == cf::c64);
}

TEST_CASE("complex promotion follows NumPy 2's table") {
  using cf::promote_types;
  CHECK(promote_types(cf::c64, cf::c128) == cf::c128);
  CHECK(promote_types(cf::c64, cf::f32) == cf::c64);
  CHECK(promote_types(cf::c64, cf::f16) == cf::c64);
  CHECK(promote_types(cf::c64, cf::bf16) == cf::c64);
  CHECK(promote_types(cf::c64, cf::f64) == cf::c128);
  CHECK(promote_types(cf::i16, cf::c64) == cf::c64);
  CHECK(promote_types(cf::u16, cf::c64) == cf::c64);
  CHECK(promote_types(cf::i32, cf::c64) == cf::c128);
  CHECK(promote_types(cf::u64, cf::c64) == cf::c128);
  CHECK(promote_types(cf::bool_, cf::c64) == cf::c64);
  CHECK(promote_types(cf::f64, cf::c128) == cf::c128);
  CHECK(cf::can_cast_safe(cf::f32, cf::c64));
  CHECK(!cf::can_cast_safe(cf::c64, cf::f64));
  // weak C++ scalars: a complex takes a float array's precision, a real takes a complex array's
  auto xf = cf::zeros({3}, cf::f32), xh = cf::zeros({3}, cf::f16), xi = cf::zeros({3}, cf::i8);
  auto z = cf::zeros({3}, cf::c64);
  CHECK((xf * cf::Scalar(c128(0, 1))).dtype() == cf::c64);
  CHECK((xh * cf::Scalar(c128(0, 1))).dtype() == cf::c64);
  CHECK((xi * cf::Scalar(c128(0, 1))).dtype() == cf::c128);
  CHECK((z * 2.5).dtype() == cf::c64);
  CHECK((z + 3).dtype() == cf::c64);
  CHECK((z / 3).dtype() == cf::c64);
  CHECK((xi / z).dtype() == cf::c64);
  CHECK((cf::zeros({3}, cf::i32) + z).dtype() == cf::c128);
}

TEST_CASE("complex arrays round-trip through the host, item, creation and copies") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto v = random_complex<float>(37, 1);
  auto a = cf::from_host(v);
  CHECK(a.dtype() == cf::c64);
  CHECK(a.to_host<c64>() == v);
  CHECK(a[{5}].item<c64>() == v[5]);
  CHECK(a[{5}].item<double>() == double(v[5].real()));
  auto b = cf::array({c128(1, 2), c128(-3, 0.5)});
  CHECK(b.dtype() == cf::c128);
  CHECK(b.to_host<c128>()[1] == c128(-3, 0.5));
  auto f = cf::full({4}, c128(1.5, -2));
  CHECK(f.dtype() == cf::c128);
  CHECK(f.to_host<c128>()[3] == c128(1.5, -2));
  CHECK(cf::full({2}, c128(0.1, 0.2), cf::c64).to_host<c64>()[0] == c64(0.1f, 0.2f));
  CHECK(cf::zeros({2}, cf::c64).to_host<c64>()[1] == c64(0, 0));
  CHECK(cf::ones({2}, cf::c128).to_host<c128>()[1] == c128(1, 0));
  // views and copies move whole pairs
  auto r = a[{cf::slice(cf::none, cf::none, -3)}].copy().to_host<c64>();
  CHECK(r[1] == v[33]);
  CHECK(a.reshape({37, 1}).T().copy().to_host<c64>()[36] == v[36]);
}

TEST_CASE("complex arithmetic and functions agree with std::complex") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto va = random_complex<double>(200, 2), vb = random_complex<double>(200, 3);
  auto a = cf::from_host(va), b = cf::from_host(vb);
  auto map2 = [&](auto f) {
    std::vector<c128> r(va.size());
    for (size_t i = 0; i < r.size(); ++i) r[i] = f(va[i], vb[i]);
    return r;
  };
  auto map1 = [&](auto f) {
    std::vector<c128> r(va.size());
    for (size_t i = 0; i < r.size(); ++i) r[i] = f(va[i]);
    return r;
  };
  check_close((a + b).to_host<c128>(), map2([](c128 x, c128 y) { return x + y; }), 0);
  check_close((a - b).to_host<c128>(), map2([](c128 x, c128 y) { return x - y; }), 0);
  check_close((a * b).to_host<c128>(), map2([](c128 x, c128 y) { return x * y; }), 1e-15);
  check_close((a / b).to_host<c128>(), map2([](c128 x, c128 y) { return x / y; }), 1e-15);
  check_close(cf::power(a, b).to_host<c128>(), map2([](c128 x, c128 y) { return std::pow(x, y); }), 1e-12);
  check_close(cf::power(a, 3).to_host<c128>(), map1([](c128 x) { return x * x * x; }), 1e-15);
  check_close(cf::power(a, -2).to_host<c128>(), map1([](c128 x) { return 1.0 / (x * x); }), 1e-14);
  check_close((-a).to_host<c128>(), map1([](c128 x) { return -x; }), 0);
  check_close(cf::square(a).to_host<c128>(), map1([](c128 x) { return x * x; }), 1e-15);
  check_close(cf::reciprocal(a).to_host<c128>(), map1([](c128 x) { return 1.0 / x; }), 1e-15);
  check_close(cf::sqrt(a).to_host<c128>(), map1([](c128 x) { return std::sqrt(x); }), 1e-15);
  check_close(cf::exp(a).to_host<c128>(), map1([](c128 x) { return std::exp(x); }), 1e-14);
  check_close(cf::log(a).to_host<c128>(), map1([](c128 x) { return std::log(x); }), 1e-14);
  check_close(cf::sin(a).to_host<c128>(), map1([](c128 x) { return std::sin(x); }), 1e-14);
  check_close(cf::cos(a).to_host<c128>(), map1([](c128 x) { return std::cos(x); }), 1e-14);
  check_close(cf::tan(a).to_host<c128>(), map1([](c128 x) { return std::tan(x); }), 1e-13);
  check_close(cf::sinh(a).to_host<c128>(), map1([](c128 x) { return std::sinh(x); }), 1e-14);
  check_close(cf::cosh(a).to_host<c128>(), map1([](c128 x) { return std::cosh(x); }), 1e-14);
  check_close(cf::tanh(a).to_host<c128>(), map1([](c128 x) { return std::tanh(x); }), 1e-13);
  check_close(cf::conjugate(a).to_host<c128>(), map1([](c128 x) { return std::conj(x); }), 0);
  check_close(cf::conj(a).to_host<c128>(), map1([](c128 x) { return std::conj(x); }), 0);
  // with real operands and weak scalars
  check_close((a * 2).to_host<c128>(), map1([](c128 x) { return x * 2.0; }), 0);
  check_close((a + cf::Scalar(c128(0, 1))).to_host<c128>(), map1([](c128 x) { return x + c128(0, 1); }), 0);
  check_close((a / 4).to_host<c128>(), map1([](c128 x) { return x / 4.0; }), 0);
  auto re = cf::real(b);
  check_close((a * re).to_host<c128>(), map2([](c128 x, c128 y) { return x * y.real(); }), 1e-15);
}

TEST_CASE("abs, angle, real and imag give real dtypes; their values") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto v = random_complex<float>(64, 4);
  auto a = cf::from_host(v);
  auto ab = cf::abs(a), an = cf::angle(a), re = cf::real(a), im = cf::imag(a);
  CHECK(ab.dtype() == cf::f32);
  CHECK(an.dtype() == cf::f32);
  CHECK(re.dtype() == cf::f32);
  CHECK(im.dtype() == cf::f32);
  auto h_ab = ab.to_host<float>(), h_an = an.to_host<float>(), h_re = re.to_host<float>(), h_im = im.to_host<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    CHECK(h_ab[i] == std::hypot(v[i].real(), v[i].imag()));
    CHECK(h_an[i] == std::atan2(v[i].imag(), v[i].real()));
    CHECK(h_re[i] == v[i].real());
    CHECK(h_im[i] == v[i].imag());
  }
  // on real inputs (NumPy: real is the array, imag zeros, angle arctan2(0, x), conj x)
  auto x = cf::array({-2.0f, 0.0f, 3.0f});
  CHECK(cf::real(x).to_host<float>() == std::vector<float>{-2, 0, 3});
  CHECK(cf::imag(x).to_host<float>() == std::vector<float>{0, 0, 0});
  CHECK(cf::angle(x).dtype() == cf::f32);
  CHECK(cf::angle(x).to_host<float>()[0] == std::atan2(0.0f, -2.0f));
  CHECK(cf::angle(cf::array({int8_t(1)})).dtype() == cf::f16);
  CHECK(cf::angle(cf::array({true})).dtype() == cf::f64);
  CHECK(cf::conjugate(cf::array({true})).dtype() == cf::i8);
  CHECK(cf::abs(cf::array({true})).dtype() == cf::bool_);
  CHECK(cf::abs(cf::zeros({2}, cf::c128)).dtype() == cf::f64);
}

TEST_CASE("complex casts: to real keeps the real part, to bool tests both parts, from real sets imag 0") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::array({c128(2.75, -1), c128(0, 3), c128(0, 0), c128(-1e300, 5)});
  CHECK(a.astype(cf::f64).to_host<double>() == std::vector<double>{2.75, 0, 0, -1e300});
  CHECK(a.astype(cf::i32).to_host<int32_t>() == std::vector<int32_t>{2, 0, 0, INT32_MIN});
  CHECK(a.astype(cf::bool_).to_host<bool>() == std::vector<bool>{true, true, false, true});
  auto c = a.astype(cf::c64).to_host<c64>();
  CHECK(c[0] == c64(2.75f, -1.f));
  CHECK(std::isinf(c[3].real()));
  auto f = cf::array({1.5f, -2.f}).astype(cf::c128).to_host<c128>();
  CHECK(f == std::vector<c128>{c128(1.5, 0), c128(-2, 0)});
  CHECK(cf::array({int16_t(-7)}).astype(cf::c64).to_host<c64>()[0] == c64(-7, 0));
  CHECK(cf::array({true, false}).astype(cf::c64).to_host<c64>()[0] == c64(1, 0));
}

TEST_CASE("complex comparisons: NumPy's order (real part, then imaginary part); real-only ops raise TypeError") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::array({c64(1, 2), c64(1, 0), c64(NAN, 0)});
  auto b = cf::array({c64(1, 2), c64(1, 1), c64(NAN, 0)});
  CHECK((a == b).to_host<bool>() == std::vector<bool>{true, false, false});
  CHECK((a != b).to_host<bool>() == std::vector<bool>{false, true, true});
  CHECK((a == 1).to_host<bool>() == std::vector<bool>{false, true, false});
  CHECK(cf::isnan(a).to_host<bool>() == std::vector<bool>{false, false, true});
  CHECK(cf::isfinite(a).to_host<bool>() == std::vector<bool>{true, true, false});
  CHECK(cf::logical_not(a).to_host<bool>() == std::vector<bool>{false, false, false});
  CHECK_THROWS_AS(cf::floor(a), cf::TypeError);
  CHECK_THROWS_AS(cf::arctan2(a, b), cf::TypeError);
  CHECK_THROWS_AS(a % b, cf::TypeError);
  CHECK_THROWS_AS(cf::cbrt(a), cf::TypeError);

  // Every pair of values from a set with ties, signed zeros, infinities and NaN parts, against
  // the order written out with std::complex: (ar < br, neither imaginary part NaN) or
  // (ar == br and ai < bi); maximum keeps the first operand on a tie and propagates NaN.
  const double inf = INFINITY, nan = NAN;
  std::vector<c128> set;
  for (double r : {-1.0, 0.0, -0.0, 2.0, inf, nan})
    for (double i : {-inf, -1.0, 0.0, 3.0, nan}) set.push_back({r, i});
  std::vector<c128> xs, ys;
  for (const c128& x : set)
    for (const c128& y : set) xs.push_back(x), ys.push_back(y);
  auto lt = [](c128 p, c128 q) {
    return (p.real() < q.real() && !std::isnan(p.imag()) && !std::isnan(q.imag())) ||
           (p.real() == q.real() && p.imag() < q.imag());
  };
  auto le = [](c128 p, c128 q) {
    return (p.real() < q.real() && !std::isnan(p.imag()) && !std::isnan(q.imag())) ||
           (p.real() == q.real() && p.imag() <= q.imag());
  };
  auto isn = [](c128 p) { return std::isnan(p.real()) || std::isnan(p.imag()); };
  const auto X = cf::from_host(xs), Y = cf::from_host(ys);
  const auto l = (X < Y).to_host<bool>(), lq = (X <= Y).to_host<bool>(), g = (X > Y).to_host<bool>(),
             gq = (X >= Y).to_host<bool>();
  const auto mx = cf::maximum(X, Y).to_host<c128>(), mn = cf::minimum(X, Y).to_host<c128>(),
             fx = cf::fmax(X, Y).to_host<c128>();
  auto same = [&](c128 p, c128 q) {  // bit for bit, NaNs alike
    return (std::isnan(p.real()) ? std::isnan(q.real()) : p.real() == q.real() && std::signbit(p.real()) == std::signbit(q.real())) &&
           (std::isnan(p.imag()) ? std::isnan(q.imag()) : p.imag() == q.imag() && std::signbit(p.imag()) == std::signbit(q.imag()));
  };
  int bad = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    const c128 x = xs[k], y = ys[k];
    const bool ok = l[k] == lt(x, y) && lq[k] == le(x, y) && g[k] == lt(y, x) && gq[k] == le(y, x) &&
                    same(mx[k], isn(x) || le(y, x) ? x : y) && same(mn[k], isn(x) || le(x, y) ? x : y) &&
                    same(fx[k], isn(y) || le(y, x) ? x : y);
    if (!ok && bad++ < 3) CHECK_MESSAGE(false, x << " vs " << y);
  }
  CHECK(bad == 0);
}

TEST_CASE("complex max/min/argmax/argmin and sort in NumPy's order") {
  cf::BackendScope ref(cf::Backend::Reference);
  const double nan = NAN;
  // argmax: the first NaN (either part) wins, else the largest by real then imaginary part
  auto v = cf::array({c128(1, 5), c128(2, -1), c128(2, 3), c128(-4, 9), c128(2, 3)});
  CHECK(cf::argmax(v).item<int64_t>() == 2);
  CHECK(cf::argmin(v).item<int64_t>() == 3);
  CHECK(cf::max(v).item<c128>() == c128(2, 3));
  CHECK(cf::min(v).item<c128>() == c128(-4, 9));
  auto w = cf::array({c128(1, 5), c128(0, nan), c128(9, 0), c128(nan, 0)});
  CHECK(cf::argmax(w).item<int64_t>() == 1);
  CHECK(cf::argmin(w).item<int64_t>() == 1);
  CHECK(std::isnan(cf::max(w).item<c128>().imag()));
  CHECK(cf::nanmax(w).item<c128>() == c128(9, 0));
  CHECK(cf::nanmin(w).item<c128>() == c128(1, 5));
  CHECK_THROWS_AS(cf::max(cf::zeros({0}, cf::c64)), cf::ValueError);
  CHECK(cf::any(cf::array({c64(0, 0), c64(0, 1)})).item<bool>());  // truth values: either part nonzero
  CHECK_FALSE(cf::all(cf::array({c64(0, 0), c64(0, 1)})).item<bool>());

  // sort: finite values by (re, im), then NaN imaginary parts by re, NaN real parts by im, then both NaN
  const std::vector<c128> in_v = {c128(nan, 2),  c128(3, nan), c128(1, 2),   c128(nan, nan), c128(1, -1),
                          c128(-2, nan), c128(nan, -5), c128(-0.0, 1), c128(0, 0),     c128(1, 2)};
  const std::vector<c128>& in = in_v;
  const cf::Array arr = cf::from_host(in_v);
  const auto s = cf::sort(arr).to_host<c128>();
  const auto idx = cf::argsort(arr).to_host<int64_t>();
  const std::vector<int64_t> want_idx = {8, 7, 4, 2, 9, 5, 1, 6, 0, 3};  // stable: ties keep their order
  CHECK(idx == want_idx);
  for (size_t k = 0; k < in.size(); ++k) {
    const c128 e = in[static_cast<size_t>(want_idx[k])];
    CHECK(((std::isnan(e.real()) && std::isnan(s[k].real())) || e.real() == s[k].real()));
    CHECK(((std::isnan(e.imag()) && std::isnan(s[k].imag())) || e.imag() == s[k].imag()));
  }
  // searchsorted on the sorted values finds each value's first and last place
  const cf::Array sorted = cf::sort(arr);
  const auto left = cf::searchsorted(sorted, cf::array({c128(1, 2), c128(nan, 0), c128(-1, 0)})).to_host<int64_t>();
  const auto right = cf::searchsorted(sorted, cf::array({c128(1, 2), c128(nan, 0), c128(-1, 0)}), "right").to_host<int64_t>();
  CHECK(left == std::vector<int64_t>{3, 8, 0});
  CHECK(right == std::vector<int64_t>{5, 8, 0});
  // unique: every value with a NaN part is one value (NumPy 2's equal_nan), the first in order
  const cf::UniqueResult u = cf::unique(arr, true, false, true);
  CHECK(u.values.size() == 5);
  CHECK(u.indices.to_host<int64_t>() == std::vector<int64_t>{8, 7, 4, 2, 5});
  CHECK(u.counts.to_host<int64_t>() == std::vector<int64_t>{1, 1, 1, 2, 5});
}

TEST_CASE("complex reductions: sum, prod, mean, var, cumsum") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto v = random_complex<double>(60, 5, 1.0);
  auto a = cf::from_host(v).reshape({6, 10});
  c128 s = 0, p = 1;
  for (auto z : v) s += z;
  for (int i = 0; i < 10; ++i) p *= v[size_t(i)];
  CHECK(cf::sum(a).dtype() == cf::c128);
  CHECK(std::abs(cf::sum(a).item<c128>() - s) < 1e-12);
  CHECK(std::abs(cf::prod(a[{0}]).item<c128>() - p) < 1e-12);
  CHECK(std::abs(cf::mean(a).item<c128>() - s / 60.0) < 1e-13);
  auto rows = cf::sum(a, 1).to_host<c128>();
  c128 r3 = 0;
  for (int j = 0; j < 10; ++j) r3 += v[size_t(30 + j)];
  CHECK(std::abs(rows[3] - r3) < 1e-13);
  double var = 0;
  for (auto z : v) var += std::norm(z - s / 60.0);
  auto vr = cf::var(a);
  CHECK(vr.dtype() == cf::f64);
  CHECK(std::abs(vr.item<double>() - var / 60) < 1e-13);
  CHECK(cf::std(a).dtype() == cf::f64);
  auto cs = cf::cumsum(a.ravel()).to_host<c128>();
  CHECK(std::abs(cs[59] - s) < 1e-12);
  CHECK(cf::mean(cf::zeros({4}, cf::c64)).dtype() == cf::c64);
  // a long row (the device's tiled scan path; the reference evaluates it all the same)
  auto ones = cf::full({10000}, c128(1, -1));
  CHECK(cf::cumsum(ones).to_host<c128>()[9999] == c128(10000, -10000));
}

TEST_CASE("complex printing follows NumPy's repr") {
  cf::BackendScope ref(cf::Backend::Reference);
  // the strings are NumPy 2.4's repr of the same arrays
  CHECK(cf::array_repr(cf::array({c64(1, 2), c64(-0.f, -0.5f), c64(3, 0)})) ==
        "array([ 1.+2.j , -0.-0.5j,  3.+0.j ], dtype=complex64)");
  CHECK(cf::array_repr(cf::array({c128(1, 2), c128(NAN, 1)})) == "array([ 1.+2.j, nan+1.j])");
  CHECK(cf::array_repr(cf::array({c128(0, 1e-10), c128(1e10, 1)})) ==
        "array([0.e+00+1.e-10j, 1.e+10+1.e+00j])");
  CHECK(cf::to_string(cf::full({}, c128(1, 2))) == "array(1.+2.j)");
}

TEST_CASE("complex .npy files: '<c8' and '<c16' round-trip") {
  cf::BackendScope ref(cf::Backend::Reference);
  const auto dir = std::filesystem::temp_directory_path() / "cufuse_test_complex_npy";
  std::filesystem::create_directories(dir);
  auto v = random_complex<double>(12, 6);
  auto a = cf::from_host(v).reshape({3, 4});
  cf::save(dir / "c16.npy", a);
  cf::save(dir / "c8.npy", a.astype(cf::c64));
  auto b = cf::load(dir / "c16.npy");
  CHECK(b.dtype() == cf::c128);
  CHECK(b.shape() == cf::Shape{3, 4});
  CHECK(b.ravel().to_host<c128>() == v);
  auto c = cf::load(dir / "c8.npy");
  CHECK(c.dtype() == cf::c64);
  CHECK(c.ravel().to_host<c64>()[7] == c64(v[7]));
  std::filesystem::remove_all(dir);
}

TEST_CASE("complex kernel counts: elementwise work fuses, reductions take their producer") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(random_complex<float>(1000, 7));
  auto w = cf::linspace(0, 1, 1000).astype(cf::f32);
  x.eval();
  w.eval();
  cf::reset_stats();
  auto spec = cf::power(cf::abs(x * w), 2);
  spec.eval();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(spec.dtype() == cf::f32);
  cf::reset_stats();
  auto e = cf::sum(x * cf::conj(x));
  e.eval();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(std::abs(e.item<c64>().imag()) <= 1e-3f * e.item<c64>().real());
}

TEST_CASE("complex scatters: assignment works, accumulation is refused") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::zeros({5}, cf::c128);
  auto idx = cf::array({int64_t(1), int64_t(3)});
  a[{idx}] = cf::array({c128(1, 1), c128(2, -2)});
  CHECK(a.to_host<c128>()[3] == c128(2, -2));
  CHECK_THROWS_AS(cf::add_at(a, idx, cf::array({c128(1, 1), c128(1, 1)})), cf::NotSupportedError);
}
