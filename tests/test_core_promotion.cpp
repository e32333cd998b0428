// tests/test_core_promotion.cpp: NumPy 2 promotion as users meet it through the Array API:
// weak C++ scalars, mixed dtypes, broadcasting errors, type errors.
#include "test_core_helpers.hpp"

TEST_CASE("C++ scalars are weak like Python scalars") {
  auto h = cf::placeholder(cf::f16, {4});
  auto u8 = cf::placeholder(cf::u8, {4});
  auto i8 = cf::placeholder(cf::i8, {4});
  auto b = cf::placeholder(cf::bool_, {4});
  auto f32 = cf::placeholder(cf::f32, {4});
  CHECK((h * 2.5).dtype() == cf::f16);
  CHECK((u8 + 1).dtype() == cf::u8);
  CHECK((i8 + 1.5).dtype() == cf::f64);
  CHECK((b + 1).dtype() == cf::i64);
  CHECK((b + 1.0).dtype() == cf::f64);
  CHECK((b & true).dtype() == cf::bool_);
  CHECK((f32 * 2).dtype() == cf::f32);
  CHECK((2 * f32).dtype() == cf::f32);
  CHECK((f32 / 2).dtype() == cf::f32);
  CHECK((i8 / 2).dtype() == cf::f64);
  CHECK(cf::sqrt(i8).dtype() == cf::f16);
  CHECK((u8 < -1).dtype() == cf::bool_);
  CHECK_THROWS_WITH_AS(u8 + 300, doctest::Contains("out of bounds for uint8"), cf::OverflowError);
  CHECK_THROWS_AS(u8 + (-1), cf::OverflowError);
  CHECK(cf::where(b, f32, 0).dtype() == cf::f32);
  CHECK(cf::where(b, 1, 2.0).dtype() == cf::f64);
  CHECK(cf::Scalar::typed(3, cf::i8).weak() == false);
  CHECK((u8 + cf::Scalar::typed(3, cf::i8)).dtype() == cf::i16);  // a strong scalar promotes like an array
}

TEST_CASE("strong dtypes promote by NumPy's table") {
  auto mk = [](cf::DType t) { return cf::placeholder(t, {2}); };
  CHECK((mk(cf::i32) + mk(cf::f32)).dtype() == cf::f64);
  CHECK((mk(cf::u8) + mk(cf::i8)).dtype() == cf::i16);
  CHECK((mk(cf::u64) + mk(cf::i64)).dtype() == cf::f64);
  CHECK((mk(cf::f16) + mk(cf::bf16)).dtype() == cf::f32);
  CHECK((mk(cf::bf16) + mk(cf::i8)).dtype() == cf::bf16);
  CHECK((mk(cf::f16) + mk(cf::i16)).dtype() == cf::f32);
  CHECK((mk(cf::bool_) + mk(cf::bool_)).dtype() == cf::bool_);
  CHECK(cf::floor_divide(mk(cf::bool_), mk(cf::bool_)).dtype() == cf::i8);
}

TEST_CASE("bad dtypes and shapes are errors naming them") {
  auto f = cf::placeholder(cf::f32, {3, 4});
  auto g = cf::placeholder(cf::f32, {5});
  CHECK_THROWS_WITH_AS(f + g, doctest::Contains("(3, 4) (5,)"), cf::ValueError);
  CHECK_THROWS_WITH_AS(f & f, doctest::Contains("bitwise_and"), cf::TypeError);
  auto b = cf::placeholder(cf::bool_, {2});
  CHECK_THROWS_WITH_AS(b - b, doctest::Contains("subtract"), cf::TypeError);
  CHECK_THROWS_AS(-b, cf::TypeError);
  CHECK_THROWS_AS(~f, cf::TypeError);
  CHECK_THROWS_AS(cf::apply("no_such_op", {f}), cf::ValueError);
  CHECK_THROWS_AS(cf::apply("add", {f}), cf::ValueError);
  CHECK_THROWS_AS(cf::parse_dtype("float128"), cf::TypeError);
  CHECK_THROWS_AS(cf::random::normal({3}, cf::i32, 1), cf::TypeError);
}

TEST_CASE("values through the reference backend follow the promotions") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto u = cf::from_host(std::vector<uint8_t>{250, 3});
  CHECK(host<uint8_t>(u + 10) == std::vector<uint8_t>{4, 13});          // wraps in uint8
  CHECK(host<bool>(u < -1) == std::vector<bool>{false, false});
  auto h = cf::from_host(std::vector<cf::half>{cf::half(1.0f), cf::half(2049.0f)});
  CHECK(static_cast<float>(host<cf::half>(h + 1)[1]) == 2048.0f);       // rounds in float16
  CHECK(host<double>(cf::from_host(std::vector<int32_t>{7, -7}) / 2) == std::vector<double>{3.5, -3.5});
  CHECK(host<int32_t>(cf::floor_divide(cf::from_host(std::vector<int32_t>{7, -7}), 2)) == std::vector<int32_t>{3, -4});
  CHECK(host<int32_t>(cf::from_host(std::vector<int32_t>{7, -7}) % 3) == std::vector<int32_t>{1, 2});
}

TEST_CASE("a Python int too large for an integer array: OverflowError only where NumPy's loop is an integer one") {
  // NumPy 2 (NEP 50) picks the loop as if the int had the array's dtype and converts the int
  // to the loop's dtype: int8 / 300 runs the float64 loop, arctan2(int8, 300) the float16 one.
  // Found by the in-place oracle (tests/test_reference_oracle.cpp): we raised OverflowError.
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::from_host(std::vector<int8_t>{0, 3, -6});
  auto q = a / 300;
  CHECK(q.dtype() == cf::f64);
  CHECK(host<double>(q) == std::vector<double>{0.0, 3.0 / 300, -6.0 / 300});
  auto t = cf::arctan2(a, 300);
  CHECK(t.dtype() == cf::f16);
  CHECK(cf::hypot(a, 300).dtype() == cf::f16);
  CHECK(static_cast<float>(host<cf::half>(cf::hypot(a, 300))[0]) == 300.0f);
  CHECK(cf::copysign(a, -300).dtype() == cf::f16);
  CHECK(static_cast<float>(host<cf::half>(cf::copysign(a, -300))[1]) == -3.0f);
  auto u = cf::from_host(std::vector<uint8_t>{1, 2});
  CHECK(host<double>(u / 1000) == std::vector<double>{0.001, 0.002});
  CHECK(host<double>(u / -1) == std::vector<double>{-1.0, -2.0});  // -1 does not fit uint8: float64 loop
  // integer loops still raise, as NumPy does
  CHECK_THROWS_AS(a + 300, cf::OverflowError);
  CHECK_THROWS_AS(cf::floor_divide(a, 300), cf::OverflowError);
  CHECK_THROWS_AS(cf::maximum(a, 300), cf::OverflowError);
  CHECK_THROWS_AS(cf::power(a, 300), cf::OverflowError);
  CHECK_THROWS_AS(u - -1, cf::OverflowError);
  // and an in-place division of an integer array is a same_kind cast error, not an overflow
  auto b = cf::from_host(std::vector<int8_t>{1, 2, 3});
  CHECK_THROWS_AS(b /= 300, cf::TypeError);
}

TEST_CASE("signed integers against uint64 compare exactly, as NumPy 2 does (not through float64)") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::from_host(std::vector<int64_t>{INT64_MAX, -1, (int64_t(1) << 53) + 1, 5, -7});
  auto b = cf::from_host(std::vector<uint64_t>{uint64_t(1) << 63, UINT64_MAX, uint64_t(1) << 53, 5, 0});
  using V = std::vector<bool>;
  auto host = [](const cf::Array& x) {
    V v;
    for (auto c : x.astype(cf::u8).to_host<uint8_t>()) v.push_back(c != 0);
    return v;
  };
  // numpy 2.4: a < b, a == b, a > b for these pairs
  CHECK(host(a < b) == V{true, true, false, false, true});
  CHECK(host(a <= b) == V{true, true, false, true, true});
  CHECK(host(a == b) == V{false, false, false, true, false});
  CHECK(host(a != b) == V{true, true, true, false, true});
  CHECK(host(a > b) == V{false, false, true, false, false});
  CHECK(host(a >= b) == V{false, false, true, true, false});
  // the other order, and a narrower signed type
  CHECK(host(b > a) == V{true, true, false, false, true});
  CHECK(host(b == a) == host(a == b));
  auto s8 = cf::from_host(std::vector<int8_t>{-1, 5, 0, 5, -7});
  CHECK(host(s8 < b) == V{true, true, true, false, true});
  CHECK((a < b).dtype() == cf::bool_);
  // still one kernel
  CHECK(plan_of({cf::placeholder(cf::i64, {64}) < cf::placeholder(cf::u64, {64})})->steps.size() == 1);
}

TEST_CASE("a repeated C++ constant takes one scalar leaf; other values, dtypes and shapes their own") {
  auto a = cf::placeholder(cf::f32, {4});
  auto b = cf::placeholder(cf::f32, {4});
  auto leaf = [](const cf::Array& r) { return r.node()->inputs[1].get(); };
  CHECK(leaf(a * 3) == leaf(b * 3));                 // same value, dtype and shape
  CHECK(leaf(a * 3) != leaf(a * 4));                 // another value
  CHECK(leaf(a * 3) != leaf(a * 3.0));               // another kind (int vs float) is not the same scalar
  CHECK(leaf(a * 3) != leaf(cf::placeholder(cf::f64, {4}) * 3));  // another dtype
  CHECK(leaf(a * 3) != leaf(cf::placeholder(cf::f32, {5}) * 3));  // another shape
  CHECK(leaf(a * -0.0) != leaf(a * 0.0));            // bits, not ==
  auto m = cf::placeholder(cf::bool_, {4});
  CHECK(leaf(m & true) != leaf(m & false));
  CHECK(leaf(m & true) == leaf(m & true));
  CHECK(leaf(m & true)->scalar.to_bool());
  CHECK_FALSE(leaf(m & false)->scalar.to_bool());
  // More distinct constants than the cache holds still give each operation its own value.
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<float>{1, 2});
  cf::Array acc = x * 0;
  for (int k = 1; k <= 20; ++k) acc = acc + x * k;  // sum of k * x for k = 1..20 = 210 x
  CHECK(host<float>(acc) == std::vector<float>{210, 420});
  CHECK(host<float>(x * 3 + x * 3.5 + x / 2) == std::vector<float>{7, 14});
}

TEST_CASE("an Operand made from a temporary holds it: kept in a variable or a vector, it still computes") {
  // Operands once pointed at their Array; one made from a temporary then outlived it (a
  // std::vector<Operand> for apply, or a named Operand) and read freed memory.
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<double> xv = {1, -2, 3, -4}, yv = {0.5, 0.5, -1, 2};
  cf::Array x = cf::from_host(xv, cf::Shape{4}), y = cf::from_host(yv, cf::Shape{4});
  std::vector<cf::Operand> args = {x > y, x * 10, y};  // two temporaries, gone after this line
  std::vector<cf::Operand> copy = args;                 // copies share the arrays
  std::vector<cf::Operand> moved = std::move(copy);
  const cf::Operand named = x - y;                      // a named one, used twice
  CHECK(host<double>(cf::apply("where", args)) == std::vector<double>{10, 0.5, 30, 2});
  CHECK(host<double>(cf::apply("where", moved)) == std::vector<double>{10, 0.5, 30, 2});
  CHECK(host<double>(cf::add(named, 1)) == std::vector<double>{1.5, -1.5, 5, -5});
  CHECK(host<double>(cf::multiply(named, named)) == std::vector<double>{0.25, 6.25, 16, 36});
  CHECK(host<double>(cf::apply("where", args)) == std::vector<double>{10, 0.5, 30, 2});  // the op took no node twice
}
