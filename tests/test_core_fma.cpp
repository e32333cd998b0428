// tests/test_core_fma.cpp: the op row `fma` and the rule `contract-multiply-add`
// (src/graph/elementwise.cpp): float32/float64 a * b + c built as one Fma, rounded once, in
// every backend alike; Config::contract_fma (CUFUSE_FMA) turns it off.
#include <cmath>
#include <random>

#include "core/op_table.hpp"
#include "test_core_helpers.hpp"

namespace {

using cf::detail::Op;

uint16_t op_of(const cf::Array& a) { return a.node()->op; }
cf::detail::NodeKind kind_of_node(const cf::Array& a) { return a.node()->k(); }
bool is_op(const cf::Array& a, Op op) {
  return kind_of_node(a) == cf::detail::NodeKind::Elementwise && op_of(a) == static_cast<uint16_t>(op);
}
bool input_is_op(const cf::Array& a, int i, Op op) {
  const auto& n = a.node()->inputs[i];
  return n->k() == cf::detail::NodeKind::Elementwise && n->op == static_cast<uint16_t>(op);
}

template <class T>
std::vector<T> randoms(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-4, 4);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(u(g));
  return v;
}

}  // namespace

TEST_CASE("float a * b + c is one Fma node; the product's other forms too") {
  FmaScope on(true);
  for (cf::DType t : {cf::f32, cf::f64}) {
    auto x = cf::placeholder(t, {8}), y = cf::placeholder(t, {8}), z = cf::placeholder(t, {8});
    CHECK(is_op(x * y + z, Op::Fma));
    CHECK(is_op(z + x * y, Op::Fma));
    CHECK(is_op(x * 2.5 + 1, Op::Fma));  // weak scalars take the array's dtype
    auto d = x * y - z;
    CHECK(is_op(d, Op::Fma));
    CHECK(input_is_op(d, 2, Op::Negative));  // a * b + (-c)
    auto e = z - x * y;
    CHECK(is_op(e, Op::Fma));
    CHECK(input_is_op(e, 0, Op::Negative));  // (-a) * b + c
    // Both operands products: the second is contracted, so the in-place form of a statement
    // (`m *= b1; m += k * g`) and its functional form (`b1 * m + k * g`) are one node.
    auto both = x * y + z * x;
    CHECK(is_op(both, Op::Fma));
    CHECK(input_is_op(both, 2, Op::Multiply));
    CHECK((x * y + z).dtype() == t);
  }
}

TEST_CASE("contract-multiply-add leaves other dtypes, casts and written products alone") {
  FmaScope on(true);
  auto h = cf::placeholder(cf::f16, {4}), i = cf::placeholder(cf::i32, {4}), c = cf::placeholder(cf::c64, {4});
  auto f = cf::placeholder(cf::f32, {4}), d = cf::placeholder(cf::f64, {4});
  CHECK(is_op(h * h + h, Op::Add));  // float16 rounds each op to float16: no contraction
  CHECK(is_op(i * i + i, Op::Add));
  CHECK(is_op(c * c + c, Op::Add));
  // A float32 product promoted to float64 by its addend is rounded to float32 first, as NumPy does.
  CHECK(is_op(f * f + d, Op::Add));
  CHECK(is_op(d + f * f, Op::Add));
  // An int32 array times a float64: the product is float64, the int converted exactly.
  auto mixed = i * d + d;
  CHECK(is_op(mixed, Op::Fma));
  // c - a * b with an integer a: b (float64) is negated, never the integer.
  auto neg = d - i * d;
  CHECK(is_op(neg, Op::Fma));
  CHECK(input_is_op(neg, 1, Op::Negative));
  // d - i * i: the product is int32, promoted: no contraction.
  CHECK(is_op(d - i * i, Op::Subtract));
  CHECK(is_op(cf::astype(f * f, cf::f32) + f, Op::Add));  // the product is a Cast
}

TEST_CASE("contraction stays within an expression: a named product is rounded as named") {
  FmaScope on(true);
  auto x = cf::placeholder(cf::f32, {4}), y = cf::placeholder(cf::f32, {4});
  cf::Array p = x * y;
  CHECK(is_op(p + y, Op::Add));  // p names its value: as C++'s -ffp-contract=on, not across statements
  CHECK(is_op(y - p, Op::Subtract));
  CHECK(is_op(cf::add(x * y, y), Op::Add));  // a function's operands are shared, never the operators' own
  CHECK(is_op(cf::add(p, y), Op::Add));
  CHECK(is_op(std::move(p) + y, Op::Fma));  // given up by its name: a temporary again
}

TEST_CASE("a product written in place or evaluated is not contracted") {
  FmaScope on(true);
  cf::BackendScope ref(cf::Backend::Reference);
  auto m = cf::from_host(std::vector<float>{1, 2, 3, 4});
  auto g = cf::from_host(std::vector<float>{0.5f, 0.25f, 2, 3});
  m *= 0.9f;  // a pending write: m's new version
  auto s = std::move(m) + g;
  CHECK(is_op(s, Op::Add));
  auto p = g * g;
  p.eval();
  CHECK(is_op(std::move(p) + g, Op::Add));
  // The in-place Adam moment equals its functional form bit for bit.
  auto m0 = cf::from_host(randoms<float>(64, 1)), g0 = cf::from_host(randoms<float>(64, 2));
  auto mi = m0.copy();
  auto functional = 0.9f * m0 + (1 - 0.9f) * g0;
  mi *= 0.9f;
  mi += (1 - 0.9f) * g0;
  CHECK(host<float>(functional) == host<float>(mi));
}

TEST_CASE("contracted values are fma's, once rounded, on the reference backend; off: op by op") {
  cf::BackendScope ref(cf::Backend::Reference);
  const size_t n = 4096;
  auto xs = randoms<double>(n, 11), ys = randoms<double>(n, 12), zs = randoms<double>(n, 13);
  auto xf = randoms<float>(n, 21), yf = randoms<float>(n, 22), zf = randoms<float>(n, 23);
  auto x = cf::from_host(xs), y = cf::from_host(ys), z = cf::from_host(zs);
  auto a = cf::from_host(xf), b = cf::from_host(yf), c = cf::from_host(zf);
  {
    FmaScope on(true);
    auto r64 = host<double>(x * y + z), s64 = host<double>(z - x * y), t64 = host<double>(x * y - z);
    auto r32 = host<float>(a * b + c), p32 = host<float>(cf::fma(a, b, c));
    int differ = 0;
    for (size_t i = 0; i < n; ++i) {
      REQUIRE(r64[i] == std::fma(xs[i], ys[i], zs[i]));
      REQUIRE(s64[i] == std::fma(-xs[i], ys[i], zs[i]));
      REQUIRE(t64[i] == std::fma(xs[i], ys[i], -zs[i]));
      REQUIRE(r32[i] == std::fma(xf[i], yf[i], zf[i]));
      REQUIRE(p32[i] == std::fma(xf[i], yf[i], zf[i]));
      differ += r64[i] != xs[i] * ys[i] + zs[i];
    }
    CHECK(differ > 0);  // the inputs do tell one rounding from two
  }
  {
    FmaScope off(false);
    auto r64 = host<double>(x * y + z);
    auto r32 = host<float>(a * b + c);
    for (size_t i = 0; i < n; ++i) {
      volatile double p = xs[i] * ys[i];
      volatile float q = xf[i] * yf[i];
      REQUIRE(r64[i] == p + zs[i]);
      REQUIRE(r32[i] == q + zf[i]);
    }
    CHECK(is_op(x * y + z, Op::Add));
    CHECK(is_op(cf::fma(x, y, z), Op::Fma));  // the op itself stays
  }
}

TEST_CASE("fma, the op: NumPy-style typing and errors") {
  auto f = cf::placeholder(cf::f32, {3}), i = cf::placeholder(cf::i32, {3});
  CHECK(cf::fma(f, f, f).dtype() == cf::f32);
  CHECK(cf::fma(f, 2, 1.5).dtype() == cf::f32);
  CHECK(cf::fma(i, f, f).dtype() == cf::f64);
  CHECK(cf::fma(cf::placeholder(cf::f16, {3}), 1, 1).dtype() == cf::f16);
  CHECK_THROWS_WITH_AS(cf::fma(i, i, i), doctest::Contains("fma"), cf::TypeError);
  CHECK_THROWS_AS(cf::fma(cf::placeholder(cf::c64, {3}), f, f), cf::TypeError);
  CHECK_THROWS_WITH_AS(cf::fma(f, cf::placeholder(cf::f32, {4}), f), doctest::Contains("(3,) (4,)"), cf::ValueError);
  CHECK(cf::apply("fma", {f, f, f}).dtype() == cf::f32);
}

TEST_CASE("W1's expression, contracted, is still one kernel of the same inputs") {
  FmaScope on(true);
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(randoms<float>(1000, 5));
  auto w1 = (x * 2.5f + 1) * cf::sin(x) - cf::exp(-x * x) + cf::sqrt(cf::abs(x));
  cf::reset_stats();
  auto v = host<float>(w1);
  CHECK(cf::stats().kernels_launched == 1);
  auto xs = host<float>(x);
  for (size_t i = 0; i < xs.size(); ++i) {
    const float e = std::fma(std::fma(xs[i], 2.5f, 1.0f), std::sin(xs[i]), -std::exp(-xs[i] * xs[i])) +
                    std::sqrt(std::fabs(xs[i]));
    REQUIRE(std::fabs(v[i] - e) <= 4e-6f * (1 + std::fabs(e)));
  }
}
