// tests/test_op_rows.cpp: the op table as the one source of each elementwise op
// (cufuse/op_rows.hpp): every row is reachable by its public function, by apply() and by the
// CLI with its NumPy signature; composites compile to kernels; and the rows added to prove
// it (logaddexp, logaddexp2, fmod, heaviside, sinc, deg2rad, rad2deg, round, nan_to_num,
// isclose and NumPy 2's aliases) have NumPy's semantics on the values that decide them.
// (Every dtype of every row against NumPy itself: tests/test_reference_oracle.cpp.)
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "cli/registry.hpp"
#include "core/op_table.hpp"
#include "test_core_helpers.hpp"

using namespace cf::detail;

namespace {

const cf::DType kAll[] = {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8,  cf::u16,
                          cf::u32,   cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};

template <class T>
cf::Array arr(std::vector<T> v) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> b(v.begin(), v.end());
    return cf::from_host(b).astype(cf::bool_);
  } else {
    return cf::from_host(v);
  }
}

std::vector<double> values(const cf::Array& a) {
  std::vector<double> out;
  const cf::Array d = a.astype(cf::f64);
  for (double v : d.to_host<double>()) out.push_back(v);
  return out;
}

// Equal elementwise, NaN equal to NaN.
bool same_values(const cf::Array& a, const cf::Array& b) {
  const auto x = values(a), y = values(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
  return true;
}

}  // namespace

TEST_CASE("the table: names are unique, aliases name kernel rows, every signature has its operands") {
  std::set<std::string> names;
  for (const OpFunction& f : op_functions()) {
    CHECK_MESSAGE(names.insert(f.name).second, f.name);
    const Signature& s = signature(f.sig);
    CHECK(s.n_operands >= 1);
    if (f.kind != OpFunction::Composite) {
      CHECK(op_row(f.op).arity == s.n_operands);
      CHECK(op_row(f.op).precision.kind == f.precision.kind);
    }
  }
  CHECK(python_params(Sig::ISCLOSE) == "a, b, rtol=1e-05, atol=1e-08, equal_nan=False");
  CHECK(python_params(Sig::NAN_TO_NUM) == "x, copy=True, nan=0.0, posinf=None, neginf=None");
  CHECK(find_function("pow")->op == Op::Power);
  CHECK(find_function("astype") == nullptr);  // a cast is astype(x, dtype), not a table call
  CHECK(compare_ulps(op_row(Op::Sin).precision, cf::f32) == 4);
  CHECK(compare_ulps(op_row(Op::Sin).precision, cf::f16) == 2);
  CHECK(compare_ulps(op_row(Op::Sin).precision, cf::i32) == 0);
  CHECK(compare_ulps(op_row(Op::Fmod).precision, cf::f64) == 0);
  CHECK(precision_name(op_row(Op::Logaddexp).precision) == "2 ulps");
}

TEST_CASE("every row: its public function, apply() and the CLI's row give the same node") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto xf = arr<double>({-2.5, -1, -0.0, 0.5, 0.75, 3});
  auto yf = arr<double>({1.5, -1, 0.0, 2, 0.75, -4});
  auto xi = arr<int32_t>({-3, -1, 0, 1, 2, 5});
  auto yi = arr<int32_t>({2, 1, 3, 1, 0, 1});
  for (const OpFunction& f : op_functions()) {
    if (f.sig == Sig::CAST) continue;  // astype(x, dtype)
    const Signature& s = signature(f.sig);
    const bool ints = f.kind != OpFunction::Composite && (op_row(f.op).accepts & kKF) == 0;  // bitwise ops
    const cf::Array& x = ints ? xi : xf;
    const cf::Array& y = ints ? yi : yf;
    std::vector<cf::Operand> args{x};
    if (s.n_operands >= 2) args.push_back(y);
    if (s.n_operands == 3) args = {x > 0, x, y};
    INFO(f.name);
    cf::Array r = cf::apply(f.name, args);
    // An alias is its kernel row under another name.
    if (f.kind == OpFunction::Alias) {
      cf::Array k = cf::apply(op_row(f.op).name, args);
      CHECK(same_values(r, k));
      CHECK(r.dtype() == k.dtype());
    }
    // The CLI knows it, with NumPy's parameters.
    const cf::cli::FunctionRow* row = cf::cli::find_function(f.name);
    REQUIRE(row != nullptr);
    CHECK(std::string(row->params) == python_params(f.sig));
  }
  // The public functions the rows declare.
  const cf::Array& x = xf;
  const cf::Array& y = yf;
  CHECK(same_values(cf::pow(x, 2), cf::power(x, 2)));
  CHECK(same_values(cf::atan2(x, y), cf::arctan2(x, y)));
  CHECK(same_values(cf::asin(x), cf::arcsin(x)));
  CHECK(values(cf::bitwise_invert(arr<int8_t>({0, 5}))) == std::vector<double>{-1, -6});
  CHECK(values(cf::bitwise_left_shift(arr<int32_t>({1, 3}), 2)) == std::vector<double>{4, 12});
  CHECK(values(cf::bitwise_right_shift(arr<int32_t>({-8, 8}), 2)) == std::vector<double>{-2, 2});
  CHECK(cf::permute_dims(cf::zeros({2, 3, 4}), cf::Axes{2, 0, 1}).shape() == cf::Shape{4, 2, 3});
  // apply's errors: NumPy's names
  CHECK_THROWS_AS(cf::apply("isclose", {x, y}, {{"rtl", cf::Scalar(0.1)}}), cf::TypeError);
  CHECK_THROWS_AS(cf::apply("sinc", {x, y}), cf::ValueError);
  CHECK_THROWS_AS(cf::apply("no_such_op", {x}), cf::ValueError);
}

TEST_CASE("logaddexp, logaddexp2: NumPy's formula, float loops for integers") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = arr<double>({0, 1, -INFINITY, INFINITY, 1000, NAN});
  auto b = arr<double>({0, 2, -INFINITY, INFINITY, 1000, 1});
  auto r = values(cf::logaddexp(a, b));
  CHECK(r[0] == doctest::Approx(std::log(2.0)));
  CHECK(r[1] == doctest::Approx(std::log(std::exp(1.0) + std::exp(2.0))));
  CHECK(r[2] == -INFINITY);
  CHECK(r[3] == INFINITY);
  CHECK(r[4] == doctest::Approx(1000 + std::log(2.0)));
  CHECK(std::isnan(r[5]));
  auto r2 = values(cf::logaddexp2(a, b));
  CHECK(r2[0] == 1.0);
  CHECK(r2[1] == doctest::Approx(std::log2(2.0 + 4.0)));
  // float32 near 0: no cancellation (computed in double), within an ulp of the exact value
  const float x32 = -0.5f, y32 = -1.5f;
  const double exact = std::log(std::exp(double(x32)) + std::exp(double(y32)));
  CHECK(values(cf::logaddexp(arr<float>({x32}), arr<float>({y32})))[0] == double(float(exact)));
  CHECK(cf::logaddexp(arr<int32_t>({1}), arr<int32_t>({2})).dtype() == cf::f64);
  CHECK(cf::logaddexp(arr<int8_t>({1}), arr<int8_t>({2})).dtype() == cf::f16);
}

TEST_CASE("fmod: the sign of the dividend; integers by C's %, 0 for a zero divisor; bool computes as int8") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(values(cf::fmod(arr<double>({-7, 7, -7, 7}), arr<double>({3, -3, -3, 3}))) == std::vector<double>{-1, 1, -1, 1});
  CHECK(values(cf::remainder(arr<double>({-7, 7}), arr<double>({3, -3}))) == std::vector<double>{2, -2});
  CHECK(values(cf::fmod(arr<int32_t>({-7, 7, 5, INT32_MIN}), arr<int32_t>({3, -3, 0, -1}))) ==
        std::vector<double>{-1, 1, 0, 0});
  CHECK(std::isnan(values(cf::fmod(arr<float>({1}), 0.0f))[0]));
  CHECK(cf::fmod(arr<bool>({true}), arr<bool>({true})).dtype() == cf::i8);
  CHECK(cf::fmod(arr<uint8_t>({7}), arr<int8_t>({3})).dtype() == cf::i16);
}

TEST_CASE("heaviside(x, h0), deg2rad, rad2deg") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto h = values(cf::heaviside(arr<double>({-1.5, -0.0, 0.0, 2, NAN}), 0.5));
  CHECK(h[0] == 0);
  CHECK(h[1] == 0.5);
  CHECK(h[2] == 0.5);
  CHECK(h[3] == 1);
  CHECK(std::isnan(h[4]));
  CHECK(cf::heaviside(arr<int8_t>({1}), arr<int8_t>({1})).dtype() == cf::f16);
  CHECK(values(cf::deg2rad(arr<double>({180})))[0] == 180 * (M_PI / 180));
  CHECK(values(cf::rad2deg(arr<double>({M_PI})))[0] == M_PI * (180 / M_PI));
  CHECK(values(cf::deg2rad(arr<float>({90})))[0] == double(90.0f * (3.14159265358979323846f / 180.0f)));
  CHECK(cf::deg2rad(arr<int64_t>({1})).dtype() == cf::f64);
}

TEST_CASE("sinc: 1 at 0, NumPy's pi x formula, integers to float64") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto s = values(cf::sinc(arr<double>({0, 0.5, 1, -1.5})));
  CHECK(s[0] == 1);
  CHECK(s[1] == doctest::Approx(2 / M_PI));
  CHECK(std::fabs(s[2]) < 1e-15);
  CHECK(s[3] == doctest::Approx(std::sin(-1.5 * M_PI) / (-1.5 * M_PI)));
  CHECK(values(cf::sinc(arr<cf::half>({cf::half(0.0f)})))[0] == 1);
  CHECK(cf::sinc(arr<int32_t>({0, 1})).dtype() == cf::f64);
  CHECK(cf::sinc(arr<float>({0})).dtype() == cf::f32);
}

TEST_CASE("round: half to even, integers unchanged, decimals as NumPy scales") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(values(cf::round(arr<double>({0.5, 1.5, 2.5, -0.5, -2.5, 2.675}))) ==
        std::vector<double>{0, 2, 2, -0.0, -2, 3});
  CHECK(values(cf::round(arr<double>({2.675, 1.25}), 2)) == std::vector<double>{2.68, 1.25});  // 2.675 * 100 is 267.5
  CHECK(values(cf::round(arr<int16_t>({125, 135, -125}), -1)) == std::vector<double>{120, 140, -120});
  CHECK(cf::round(arr<int16_t>({7})).dtype() == cf::i16);
  CHECK(cf::round(arr<bool>({true})).dtype() == cf::f16);  // rint's loop for bool
  CHECK_THROWS_AS(cf::round(arr<bool>({true}), 2), cf::TypeError);
}

TEST_CASE("nan_to_num: NaN -> 0, inf -> the dtype's max, -inf -> its lowest; integers unchanged") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto v = arr<float>({NAN, INFINITY, -INFINITY, 1.5f});
  CHECK(values(cf::nan_to_num(v)) ==
        std::vector<double>{0, std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(), 1.5});
  CHECK(values(cf::nan_to_num(v, -1, 7, -7)) == std::vector<double>{-1, 7, -7, 1.5});
  CHECK(values(cf::nan_to_num(v, 1e300))[0] == INFINITY);  // converted to float32, as NumPy's copyto
  CHECK(values(cf::nan_to_num(arr<cf::half>({cf::half(INFINITY)})))[0] == 65504);
  CHECK(cf::nan_to_num(arr<int8_t>({3})).dtype() == cf::i8);
  CHECK(cf::apply("nan_to_num", {v}, {{"posinf", cf::Scalar(int64_t{5})}}).to_host<float>()[1] == 5);
}

TEST_CASE("isclose: |a - b| <= atol + rtol |b|, infinities by equality, equal_nan, bool results") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = arr<double>({1.0, 1.0, 1e10, INFINITY, INFINITY, NAN, 0.0});
  auto b = arr<double>({1.0 + 1e-6, 1.1, 1.00001e10, INFINITY, -INFINITY, NAN, 1e-9});
  auto r = cf::isclose(a, b);
  CHECK(r.dtype() == cf::bool_);
  CHECK(values(r) == std::vector<double>{1, 0, 1, 1, 0, 0, 1});
  CHECK(values(cf::isclose(a, b, 1e-5, 1e-8, true)) == std::vector<double>{1, 0, 1, 1, 0, 1, 1});
  CHECK(values(cf::isclose(a, b, 0.2, 0.0)) == std::vector<double>{1, 1, 1, 1, 0, 0, 0});
  // b as float: abs(INT_MIN) cannot wrap
  CHECK(values(cf::isclose(arr<int8_t>({-128, 5}), arr<int8_t>({-128, 6}))) == std::vector<double>{1, 0});
  CHECK(values(cf::isclose(a, 1.0)) == std::vector<double>{1, 1, 0, 0, 0, 0, 0});
  CHECK(values(cf::isclose(a, INFINITY)) == std::vector<double>{0, 0, 0, 1, 1, 0, 0});
}

TEST_CASE("bad inputs: NumPy's TypeError naming the dtypes") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = arr<float>({1.5f});
  CHECK_THROWS_WITH_AS(cf::bitwise_invert(f), doctest::Contains("float32"), cf::TypeError);
  // NumPy names the ufunc an alias stands for: np.bitwise_left_shift is np.left_shift
  CHECK_THROWS_WITH_AS(cf::bitwise_left_shift(f, 1), doctest::Contains("left_shift"), cf::TypeError);
  CHECK_THROWS_WITH_AS(cf::fmod(arr<float>({1, 2, 3}), arr<float>({1, 2})), doctest::Contains("(3,) (2,)"), cf::ValueError);
}

TEST_CASE("composites compile: their steps fuse into one kernel per dtype") {
  for (cf::DType t : kAll) {
    auto a = cf::placeholder(t, {64});
    auto b = cf::placeholder(t, {64});
    std::vector<cf::Array> outs;
    for (const OpFunction& f : op_functions()) {
      if (f.kind != OpFunction::Composite) continue;
      try {
        outs.push_back(signature(f.sig).n_operands == 1 ? cf::apply(f.name, {a}) : cf::apply(f.name, {a, b}));
      } catch (const cf::TypeError&) {
      }
    }
    INFO("dtype " << cf::name(t));
    REQUIRE(outs.size() >= 3);
    auto ex = plan_of(outs, /*compile=*/true);
    CHECK(ex->steps.size() == 1);
    CHECK(ex->steps[0].kernel->cubin.size() > 0);
  }
}
