// tests/test_statistics_oracle.cpp: issue 33's statistics (cufuse/statistics.hpp) against
// NumPy 2, from the cases tests/oracle/gen_statistics.py writes (its docstring has the
// format): bincount (every integer dtype, weights, minlength, empty, errors), histogram
// (every real dtype, counts and explicit edges, range, values on and one ulp around every
// edge, NaN and inf, weights, density, errors), histogram_bin_edges, histogram2d, average,
// cov, corrcoef, nanvar, nanstd, nanprod, nanargmax/min, diff, ediff1d, gradient, trapezoid,
// cumulative_sum. Result dtypes and shapes must match. Integer and bool results, and every
// result of a case marked cmp=exact (histogram counts and edges, diff, uniform gradients), are
// compared bit for bit; other float results (sums whose order differs from NumPy's pairwise
// or BLAS order) within rtol 1e-12 (float64), 1e-5 (float32), 1e-2 (float16) of the largest
// magnitude in the result. Errors by kind (NumPy's ZeroDivisionError counts as ValueError).
//
// CTest runs gen_statistics.py first (tests/statistics_oracle.cmake, fixture
// `cufuse_statistics_oracle`) and points CUFUSE_STATISTICS_ORACLE_DIR at its output.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include "oracle_text.hpp"
#include "test_core_helpers.hpp"

namespace {

using namespace oracle_text;

std::string oracle_path() {
  const char* d = std::getenv("CUFUSE_STATISTICS_ORACLE_DIR");
  return std::string(d ? d : CUFUSE_TEST_BINARY_DIR "/oracle_statistics") + "/statistics.txt";
}


// One parameter: None, True/False, an int, a float, `@k` (input k), or a list `L...`.
struct Param {
  std::string raw;
  bool none() const { return raw.empty() || raw == "None"; }
  bool is_input() const { return !raw.empty() && raw[0] == '@'; }
  bool is_list() const { return !raw.empty() && raw[0] == 'L'; }
  bool is_int() const { return !none() && raw.find_first_not_of("-0123456789") == std::string::npos; }
  bool b() const { return raw == "True"; }
  int64_t i() const { return std::stoll(raw); }
  double d() const { return raw == "inf" ? INFINITY : std::stod(raw); }
  std::vector<Param> items() const {
    std::vector<Param> v;
    if (raw.size() > 1)
      for (auto& x : split_fields(raw.substr(1), ',')) v.push_back(Param{x});
    return v;
  }
};

struct Case {
  std::map<std::string, Param> p;
  std::vector<cf::Array> in;
  Param get(const std::string& k) const {
    auto it = p.find(k);
    return it == p.end() ? Param{} : it->second;
  }
  cf::Array input(const Param& q) const { return in.at(static_cast<size_t>(std::stoll(q.raw.substr(1)))); }
  std::optional<cf::Array> opt_array(const std::string& k) const {
    Param q = get(k);
    if (q.none()) return std::nullopt;
    return input(q);
  }
  std::optional<cf::Operand> opt_operand(const std::string& k) const {
    Param q = get(k);
    if (q.none()) return std::nullopt;
    if (q.is_input()) return cf::Operand(input(q));
    if (q.is_list()) {
      std::vector<int64_t> v;
      for (auto& x : q.items()) v.push_back(x.i());
      return cf::Operand(cf::from_host(v));
    }
    if (q.is_int()) return cf::Operand(q.i());
    return cf::Operand(q.d());
  }
  cf::AxisArg axis() const {
    Param q = get("axis");
    if (q.none()) return {};
    if (q.is_list()) {
      cf::Axes a;
      for (auto& x : q.items()) a.push_back(static_cast<int>(x.i()));
      return a;
    }
    return static_cast<int>(q.i());
  }
  std::optional<int> opt_axis() const {
    Param q = get("axis");
    return q.none() ? std::nullopt : std::optional<int>(static_cast<int>(q.i()));
  }
  int int_or(const std::string& k, int dflt) const {
    Param q = get(k);
    return q.none() ? dflt : static_cast<int>(q.i());
  }
  bool flag(const std::string& k) const { return get(k).b(); }
  std::optional<cf::DType> dtype() const {
    Param q = get("dtype");
    return q.none() ? std::nullopt : std::optional<cf::DType>(cf::parse_dtype(q.raw));
  }
  cf::Bins bins(const Param& q) const {
    if (q.none()) return 10;
    if (q.is_input()) return cf::Bins(input(q));
    return cf::Bins(q.i());
  }
  std::optional<cf::Range> range(const Param& q) const {
    if (q.none()) return std::nullopt;
    auto it = q.items();
    return cf::Range{it.at(0).d(), it.at(1).d()};
  }
};

std::vector<cf::Array> run(const std::string& f, const Case& c) {
  const auto& in = c.in;
  if (f == "bincount") return {cf::bincount(in[0], c.opt_array("weights"), c.int_or("minlength", 0))};
  if (f == "histogram") {
    auto h = cf::histogram(in[0], c.bins(c.get("bins")), c.range(c.get("range")), c.opt_array("weights"),
                           c.flag("density"));
    return {h.hist, h.bin_edges};
  }
  if (f == "histogram_bin_edges")
    return {cf::histogram_bin_edges(in[0], c.bins(c.get("bins")), c.range(c.get("range")), c.opt_array("weights"))};
  if (f == "histogram2d") {
    Param b = c.get("bins");
    cf::Bins bx = 10;
    std::optional<cf::Bins> by;
    if (b.is_list()) {
      bx = c.bins(b.items().at(0));
      by = c.bins(b.items().at(1));
    } else {
      bx = c.bins(b);
    }
    std::optional<std::pair<cf::Range, cf::Range>> r;
    Param rp = c.get("range");
    if (!rp.none()) {  // L-2.0,5.0,0.0,10.0 written flat: [[a, b], [c, d]] -> "LL..." not used; see below
      auto it = rp.items();
      r = std::pair{cf::Range{it.at(0).d(), it.at(1).d()}, cf::Range{it.at(2).d(), it.at(3).d()}};
    }
    auto h = cf::histogram2d(in[0], in[1], bx, by, r, c.opt_array("weights"), c.flag("density"));
    return {h.hist, h.xedges, h.yedges};
  }
  if (f == "average") {
    if (c.flag("returned")) {
      auto [a, s] = cf::average_returned(in[0], c.axis(), c.opt_array("weights"), c.flag("keepdims"));
      return {a, s};
    }
    return {cf::average(in[0], c.axis(), c.opt_array("weights"), c.flag("keepdims"))};
  }
  if (f == "cov") {
    Param dd = c.get("ddof");
    Param rv = c.get("rowvar");
    return {cf::cov(in[0], c.opt_array("y"), rv.none() || rv.b(), c.flag("bias"),
                    dd.none() ? std::nullopt : std::optional<int64_t>(dd.i()), c.dtype())};
  }
  if (f == "corrcoef") {
    Param rv = c.get("rowvar");
    return {cf::corrcoef(in[0], c.opt_array("y"), rv.none() || rv.b(), c.dtype())};
  }
  if (f == "nanvar") return {cf::nanvar(in[0], c.axis(), c.int_or("ddof", 0), c.flag("keepdims"), c.dtype())};
  if (f == "nanstd") return {cf::nanstd(in[0], c.axis(), c.int_or("ddof", 0), c.flag("keepdims"), c.dtype())};
  if (f == "nanprod") return {cf::nanprod(in[0], c.axis(), c.flag("keepdims"), c.dtype())};
  if (f == "nanargmax") return {cf::nanargmax(in[0], c.opt_axis())};
  if (f == "nanargmin") return {cf::nanargmin(in[0], c.opt_axis())};
  if (f == "diff")
    return {cf::diff(in[0], c.int_or("n", 1), c.int_or("axis", -1), c.opt_operand("prepend"), c.opt_operand("append"))};
  if (f == "ediff1d") return {cf::ediff1d(in[0], c.opt_operand("to_end"), c.opt_operand("to_begin"))};
  if (f == "gradient") {
    std::vector<cf::Operand> sp;
    Param s = c.get("spacing");
    if (!s.none())
      for (auto& x : s.items()) sp.push_back(x.is_input() ? cf::Operand(c.input(x)) : cf::Operand(x.d()));
    return cf::gradient(in[0], sp, c.axis(), c.int_or("edge_order", 1));
  }
  if (f == "trapezoid") {
    Param dx = c.get("dx");
    return {cf::trapezoid(in[0], c.opt_array("x"), dx.none() ? 1.0 : dx.d(), c.int_or("axis", -1))};
  }
  if (f == "cumulative_sum") return {cf::cumulative_sum(in[0], c.opt_axis(), c.dtype(), c.flag("include_initial"))};
  FAIL("unknown function " << f);
  return {};
}

double tolerance(cf::DType t) {
  switch (t) {
    case cf::DType::Float64: return 1e-12;
    case cf::DType::Float32: return 1e-5;
    default: return 1e-2;
  }
}

// Compares got with want: dtype and shape always; bytes where exact, else within tolerance.
void compare(const cf::Array& got, const OracleArray& want, bool exact, const std::string& where) {
  INFO(where);
  REQUIRE(cf::name(got.dtype()) == cf::name(want.dtype));
  REQUIRE(cf::to_string(got.shape()) == cf::to_string(want.shape));
  if (exact || !cf::is_float(want.dtype)) {
    CHECK(bytes_of(got) == want.bytes);
    return;
  }
  const auto g = got.astype(cf::f64).to_host<double>();
  const auto w = to_array(want).astype(cf::f64).to_host<double>();
  double scale = 0;
  for (double v : w)
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  const double tol = tolerance(want.dtype) * std::max(scale, 1e-300);
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i]) || std::isinf(w[i])) {
      CHECK_MESSAGE((std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]), "element " << i << ": " << g[i] << " vs " << w[i]);
      continue;
    }
    CHECK_MESSAGE(std::abs(g[i] - w[i]) <= tol, "element " << i << ": " << g[i] << " vs " << w[i]);
  }
}

}  // namespace

TEST_CASE("statistics against NumPy (tests/oracle/gen_statistics.py)") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::ifstream f(oracle_path());
  REQUIRE_MESSAGE(f.good(), "no oracle cases at " << oracle_path() << ": run tests/oracle/gen_statistics.py --out <dir>");
  std::string line;
  int cases = 0;
  while (std::getline(f, line)) {
    auto fields = split_fields(line, '\t');
    if (fields.size() < 5 || fields[0] != "case") continue;
    ++cases;
    Case c;
    if (fields[2] != "-")
      for (auto& kv : split_fields(fields[2], ' ')) {
        auto at = kv.find('=');
        c.p[kv.substr(0, at)] = Param{kv.substr(at + 1)};
      }
    if (fields[3] != "-")
      for (auto& t : split_fields(fields[3], ' ')) c.in.push_back(to_array(parse_array(t)));
    const std::string where = fields[1] + " " + fields[2] + " (line " + std::to_string(cases + 1) + ")";
    const std::string& want = fields[4];
    if (want.rfind("error ", 0) == 0) {
      std::string got = "no error";
      try {
        auto r = run(fields[1], c);
        for (auto& x : r) x.eval();
      } catch (const cf::Error& e) {
        got = cufuse::error_kind_name(e.kind());
      }
      CHECK_MESSAGE(got == want.substr(6), where);
      continue;
    }
    std::vector<cf::Array> got;
    try {
      got = run(fields[1], c);
    } catch (const cf::Error& e) {
      FAIL_CHECK(where << ": raised " << e.what());
      continue;
    }
    auto toks = split_fields(want, ' ');
    REQUIRE_MESSAGE(got.size() == toks.size(), where);
    for (size_t k = 0; k < toks.size(); ++k) compare(got[k], parse_array(toks[k]), c.get("cmp").raw == "exact", where);
  }
  CHECK(cases > 400);
}
