// tests/test_sorting_oracle.cpp: issue 33's sorting, searching, sets and order statistics
// against NumPy 2, from the cases tests/oracle/gen_sorting.py writes (its docstring has the
// format): sort/argsort over every dtype, axis and empty shape with NaNs of both signs, -0.0,
// infinities and ties; lexsort; searchsorted (sides, sorter) and digitize; unique with every
// flag (flat and along axes), isin and the set functions; median, the quantiles with NumPy 2's
// thirteen methods, their nan* forms, keepdims and the errors. Runs on the host reference backend.
//
// Integer and bool results (indices, counts, integer values) are compared bit for bit; float
// results as values: NaN equals NaN (a sorted NaN comes back as the default NaN, not NumPy's
// payload) and -0.0 equals 0.0 (NumPy's partition may pick either zero; cufuse's sort puts -0.0
// first). Errors by kind (NumPy's AxisError is cufuse's IndexError).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include "oracle_text.hpp"
#include "test_core_helpers.hpp"

namespace {

using namespace oracle_text;

std::string oracle_path() {
  const char* d = std::getenv("CUFUSE_SORTING_ORACLE_DIR");
  return std::string(d ? d : CUFUSE_TEST_BINARY_DIR "/oracle_sorting") + "/sorting.txt";
}


std::optional<int> opt_axis(const std::string& s) {
  return s == "None" ? std::optional<int>() : std::optional<int>(std::stoi(s));
}
cf::AxisArg axes(const std::string& s) {
  if (s == "None") return cf::AxisArg{};
  cf::Axes ax;
  for (auto& t : split_fields(s, ',')) ax.push_back(std::stoi(t));
  return cf::AxisArg(ax);
}

std::vector<cf::Array> run(const std::string& f, std::map<std::string, std::string>& p, std::vector<cf::Array> in) {
  if (f == "sort") return {cf::sort(in[0], opt_axis(p["axis"]))};
  if (f == "argsort") return {cf::argsort(in[0], opt_axis(p["axis"]))};
  if (f == "lexsort") return {cf::lexsort(in, std::stoi(p["axis"]))};
  if (f == "searchsorted") {
    std::optional<cf::Array> sorter;
    if (in.size() > 2) sorter = in[2];
    return {cf::searchsorted(in[0], in[1], p["side"], sorter)};
  }
  if (f == "digitize") return {cf::digitize(in[0], in[1], p["right"] == "1")};
  if (f == "unique") {
    const std::string fl = p["flags"];
    const bool ri = fl.find('i') != std::string::npos, rv = fl.find('v') != std::string::npos,
               rc = fl.find('c') != std::string::npos;
    std::optional<int> axis;
    if (p.count("axis")) axis = std::stoi(p["axis"]);
    auto r = cf::unique(in[0], ri, rv, rc, axis);
    std::vector<cf::Array> out{r.values};
    if (ri) out.push_back(r.indices);
    if (rv) out.push_back(r.inverse);
    if (rc) out.push_back(r.counts);
    return out;
  }
  if (f == "isin") return {cf::isin(in[0], in[1], false, p["invert"] == "1")};
  if (f == "intersect1d") return {cf::intersect1d(in[0], in[1])};
  if (f == "union1d") return {cf::union1d(in[0], in[1])};
  if (f == "setdiff1d") return {cf::setdiff1d(in[0], in[1])};
  if (f == "setxor1d") return {cf::setxor1d(in[0], in[1])};
  const bool keep = p["keepdims"] == "1";
  if (f == "median") return {cf::median(in[0], axes(p["axis"]), keep)};
  if (f == "nanmedian") return {cf::nanmedian(in[0], axes(p["axis"]), keep)};
  const std::string qt = p["q"];
  const bool many = qt.find('l') != std::string::npos;
  std::vector<double> qs;
  for (auto& t : split_fields(qt, 'l')) qs.push_back(std::stod(t));
  const auto ax = axes(p["axis"]);
  const std::string m = p["method"];
  if (f == "quantile") return {many ? cf::quantile(in[0], qs, ax, m, keep) : cf::quantile(in[0], qs[0], ax, m, keep)};
  if (f == "nanquantile")
    return {many ? cf::nanquantile(in[0], qs, ax, m, keep) : cf::nanquantile(in[0], qs[0], ax, m, keep)};
  if (f == "percentile")
    return {many ? cf::percentile(in[0], qs, ax, m, keep) : cf::percentile(in[0], qs[0], ax, m, keep)};
  if (f == "nanpercentile")
    return {many ? cf::nanpercentile(in[0], qs, ax, m, keep) : cf::nanpercentile(in[0], qs[0], ax, m, keep)};
  FAIL("unknown oracle function " << f);
  return {};
}

const char* kind_name(cf::ErrorKind k) {
  switch (k) {
    case cf::ErrorKind::Value: return "ValueError";
    case cf::ErrorKind::Type: return "TypeError";
    case cf::ErrorKind::Index: return "IndexError";
    default: return "OtherError";
  }
}

// Float results as values (NaN == NaN, -0.0 == 0.0); the rest bit for bit.
void check_same(const cf::Array& got, const OracleArray& want) {
  if (!cf::is_float(want.dtype)) {
    CHECK(bytes_of(got) == want.bytes);
    return;
  }
  const auto g = got.astype(cf::f64).to_host<double>();
  const auto w = to_array(want).astype(cf::f64).to_host<double>();
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (!(g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i])))) {
      if (bad++ < 3) CHECK_MESSAGE(false, "element " << i << ": " << g[i] << " vs NumPy's " << w[i]);
    }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("sorting, searching, sets and order statistics match NumPy") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int n = oracle_text::for_each_case(
      oracle_path(), "oracle_sorting_cases", 4, [&](const std::vector<std::string>& f) {
    auto p = parse_params(f[1]);
    std::vector<cf::Array> ins;
    for (auto& t : split_fields(f[2], ' ')) ins.push_back(to_array(parse_array(t)));
    std::string expected = f[3];
    if (expected == "error AxisError") expected = "error IndexError";
    std::vector<cf::Array> got;
    std::string err, what;
    try {
      got = run(f[0], p, ins);
      for (auto& g : got) g.eval();
    } catch (const cf::Error& e) {
      err = std::string("error ") + kind_name(e.kind());
      what = e.what();
    }
    CAPTURE(what);
    if (expected.rfind("error", 0) == 0) {
      CHECK(err == expected);
      return;
    }
    REQUIRE(err.empty());
    auto want = split_fields(expected, ' ');
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      OracleArray h = parse_array(want[k]);
      CHECK(cf::name(got[k].dtype()) == cf::name(h.dtype));
      CHECK(got[k].shape() == h.shape);
      if (got[k].shape() == h.shape && got[k].dtype() == h.dtype) check_same(got[k], h);
    }
  }, 240);
  CHECK(n > 2000);
}
