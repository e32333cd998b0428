// tests/test_complex_oracle.cpp: issue 33's complex dtypes against NumPy 2, from the cases
// tests/oracle/gen_complex.py writes (its docstring has the format): every op row that takes
// complex, beside every dtype, with Python scalars and over special values, casts both ways,
// reductions, NumPy's order of complex values (comparisons, maximum, max/argmax, sort, argsort,
// searchsorted, unique, isin, clip), repr, and the ops NumPy has no complex loop for. Runs on
// the host reference backend.
//
// Result dtypes and shapes exactly; bool and integer values bit for bit; float and complex
// values part by part within a relative bound of the value's magnitude (NumPy's complex
// functions are C99's from libm, cufuse's its own formulas: codegen/device_helpers.inc), NaN
// where NumPy has NaN (either part), and infinities exactly.
#include <cmath>
#include <complex>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>

#include "oracle_text.hpp"
#include "test_core_helpers.hpp"

namespace {

using namespace oracle_text;
using c128 = std::complex<double>;

std::string oracle_path() {
  const char* d = std::getenv("CUFUSE_COMPLEX_ORACLE_DIR");
  return std::string(d ? d : CUFUSE_TEST_BINARY_DIR "/oracle_complex") + "/complex.txt";
}

cf::AxisArg axis_of(const std::string& s) { return s == "None" ? cf::AxisArg{} : cf::AxisArg(std::stoi(s)); }

// What a case computes: a cufuse array, or a string (repr).
struct Got {
  cf::Array a;
  std::string text;
};

Got run(const std::string& f, std::map<std::string, std::string>& p, const std::vector<cf::Array>& in) {
  if (f == "astype") return {in[0].astype(cf::parse_dtype(p["dtype"]))};
  if (f == "repr") return {cf::Array(), cf::array_repr(in[0])};
  if (f == "scalar") {
    cf::Scalar s;
    if (p["kind"] == "complex") s = cf::Scalar(c128(std::stod(p["re"]), std::stod(p["im"])));
    else if (p["kind"] == "float") s = cf::Scalar(std::stod(p["re"]));
    else s = cf::Scalar(static_cast<int64_t>(std::stod(p["re"])));
    return {cf::apply(p["op"], {in[0], s})};
  }
  if (f == "sum") return {cf::sum(in[0], axis_of(p["axis"]))};
  if (f == "prod") return {cf::prod(in[0], axis_of(p["axis"]))};
  if (f == "mean") return {cf::mean(in[0], axis_of(p["axis"]))};
  if (f == "var") return {cf::var(in[0], axis_of(p["axis"]))};
  if (f == "std") return {cf::std(in[0], axis_of(p["axis"]))};
  if (f == "cumsum") return {cf::cumsum(in[0], std::stoi(p["axis"]))};
  // NumPy's order of complex values
  if (f == "max") return {cf::max(in[0], axis_of(p["axis"]))};
  if (f == "min") return {cf::min(in[0], axis_of(p["axis"]))};
  if (f == "nanmax") return {cf::nanmax(in[0], axis_of(p["axis"]))};
  if (f == "nanmin") return {cf::nanmin(in[0], axis_of(p["axis"]))};
  auto opt_axis = [&]() -> std::optional<int> {
    if (p["axis"] == "None") return std::nullopt;
    return std::stoi(p["axis"]);
  };
  if (f == "median") return {cf::median(in[0], axis_of(p["axis"]))};
  if (f == "nanmedian") return {cf::nanmedian(in[0], axis_of(p["axis"]))};
  if (f == "quantile") return {cf::quantile(in[0], 0.5)};
  if (f == "digitize") return {cf::digitize(in[0], cf::array({0.0, 1.0}))};
  if (f == "argmax") return {cf::argmax(in[0], opt_axis())};
  if (f == "argmin") return {cf::argmin(in[0], opt_axis())};
  if (f == "any") return {cf::any(in[0])};
  if (f == "all") return {cf::all(in[0])};
  if (f == "sort") return {cf::sort(in[0], std::stoi(p["axis"]))};
  if (f == "argsort") return {cf::argsort(in[0], std::stoi(p["axis"]))};
  if (f == "searchsorted") return {cf::searchsorted(in[0], in[1], p["side"])};
  if (f == "isin") return {cf::isin(in[0], in[1])};
  if (f == "clip") return {cf::clip(in[0], in[1], in[2])};
  if (f == "unique") {
    const cf::UniqueResult u = cf::unique(in[0], true, true, true);
    const std::string& k = p["out"];
    return {k == "values" ? u.values : k == "indices" ? u.indices : k == "inverse" ? u.inverse : u.counts};
  }
  const std::vector<cf::Operand> args(in.begin(), in.end());
  return {cf::apply(f, args)};
}

// The relative bound of a function's values (float32 parts: a few ulps of 2^-24 scaled by
// the formulas' conditioning; float64 likewise).
double rel_bound(const std::string& f, cf::DType t) {
  const bool single = t == cf::c64 || t == cf::f32 || cf::is_half(t);
  const bool transcendental = f == "exp" || f == "log" || f == "sin" || f == "cos" || f == "tan" || f == "sinh" ||
                              f == "cosh" || f == "tanh" || f == "power" || f == "sqrt" || f == "angle" || f == "exp2" ||
                              f == "expm1" || f == "log2" || f == "log10" || f == "log1p" || f == "arcsin" ||
                              f == "arccos" || f == "arctan" || f == "arcsinh" || f == "arccosh" || f == "arctanh" ||
                              f == "sign";
  const bool summed = f == "sum" || f == "prod" || f == "mean" || f == "var" || f == "std" || f == "cumsum" ||
                      f == "median" || f == "nanmedian";
  if (cf::is_half(t)) return 2e-3;
  const double u = single ? 6e-8 : 1.2e-16;
  return u * (transcendental ? 64 : (summed ? 64 : 4));
}

void check_values(const cf::Array& got, const OracleArray& want, const std::string& f) {
  if (!cf::is_float(want.dtype) && !cf::is_complex(want.dtype)) {
    CHECK(bytes_of(got) == want.bytes);
    return;
  }
  const auto g = got.astype(cf::c128).ravel().to_host<c128>();
  const auto w = to_array(want).astype(cf::c128).ravel().to_host<c128>();
  const double rel = rel_bound(f, want.dtype);
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool wnan = std::isnan(w[i].real()) || std::isnan(w[i].imag());
    const bool gnan = std::isnan(g[i].real()) || std::isnan(g[i].imag());
    bool ok;
    if (wnan || gnan) {
      ok = wnan == gnan;
    } else if (std::isinf(w[i].real()) || std::isinf(w[i].imag())) {
      ok = g[i] == w[i];
    } else {
      const double mag = std::abs(w[i]);
      ok = std::abs(g[i].real() - w[i].real()) <= rel * mag + 1e-300 &&
           std::abs(g[i].imag() - w[i].imag()) <= rel * mag + 1e-300;
    }
    if (!ok && bad++ < 3) CHECK_MESSAGE(false, "element " << i << ": " << g[i] << " vs NumPy's " << w[i]);
  }
  CHECK(bad == 0);
}

std::string unhex(const std::string& h) {
  std::string s;
  for (size_t i = 0; i + 1 < h.size(); i += 2) s.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return s;
}

}  // namespace

TEST_CASE("complex dtypes match NumPy: ops, scalars, casts, reductions, repr, errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int n = oracle_text::for_each_case(oracle_path(), "oracle_complex_cases", 4, [&](const std::vector<std::string>& f) {
    auto p = parse_params(f[1]);
    std::vector<cf::Array> ins;
    for (auto& t : split_fields(f[2], ' ')) ins.push_back(to_array(parse_array(t)));
    Got got;
    std::string what;
    const std::string err = error_of(
        [&] {
          got = run(f[0], p, ins);
          if (got.a.defined()) got.a.eval();
        },
        what);
    CAPTURE(what);
    const std::string& expected = f[3];
    if (expected.rfind("error", 0) == 0) {
      CHECK(err == expected);
      return;
    }
    REQUIRE(err.empty());
    if (expected.rfind("str ", 0) == 0) {
      CHECK(got.text == unhex(expected.substr(4)));
      return;
    }
    OracleArray want = parse_array(expected);
    CHECK(cf::name(got.a.dtype()) == cf::name(want.dtype));
    CHECK(got.a.shape() == want.shape);
    if (got.a.shape() == want.shape && got.a.dtype() == want.dtype) check_values(got.a, want, f[0]);
  });
  CHECK(n > 1200);
}
