// tests/test_surface_oracle.cpp: issue 30's creation, printing and testing functions against
// NumPy 2 (and ml_dtypes' bfloat16), from the cases tests/oracle/gen_surface.py writes (its
// docstring has the format): eye, identity, tri, triu, tril, diag, logspace, meshgrid in every
// dtype with negative and out-of-range k, empty inputs and NumPy's errors; np.array_repr (at
// precision 8 and 6) and str for ints, floats with nan/inf/-0., tiny and huge values, bool,
// float16, bfloat16, 0-d, empty, 3-D and 4-D, wrapped and summarised arrays; allclose,
// array_equal, and the messages of assert_allclose / assert_array_equal.
//
// CTest runs gen_surface.py first (tests/numpy_oracles.cmake, fixture `cufuse_surface_oracle`)
// and points CUFUSE_SURFACE_ORACLE_DIR at its output. Everything runs on the host reference
// backend. Results are compared bit for bit, except logspace's floats (base ** y through libm:
// within 4 units in the last place, 1 for float16/bfloat16). The assert messages are NumPy's
// exactly, less the one line cufuse adds (where the largest violation is, when it is not among
// the first five shown), and but for the operands shown after "inf values mismatch:" (NumPy
// shows only their infinite elements, cufuse the whole operands).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "oracle_text.hpp"
#include "test_core_helpers.hpp"

namespace {

using namespace oracle_text;

std::string oracle_path() {
  const char* d = std::getenv("CUFUSE_SURFACE_ORACLE_DIR");
  return std::string(d ? d : CUFUSE_TEST_BINARY_DIR "/oracle_surface") + "/surface.txt";
}

std::string unescape(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char c = s[++i];
      o.push_back(c == 'n' ? '\n' : c == 't' ? '\t' : c);
    } else {
      o.push_back(s[i]);
    }
  }
  return o;
}

// Units in the last place between two values of a float dtype (read as double).
double ulps(double a, double b, cf::DType t) {
  if (a == b || (std::isnan(a) && std::isnan(b))) return 0;
  const int mant = t == cf::f64 ? 52 : t == cf::f32 ? 23 : t == cf::f16 ? 10 : 7;
  int e;
  std::frexp(std::max(std::fabs(a), std::fabs(b)), &e);
  return std::fabs(a - b) / std::ldexp(1.0, e - 1 - mant);
}

std::vector<double> values_f64(const cf::Array& a) { return a.astype(cf::f64).to_host<double>(); }

struct Cases {
  std::vector<std::vector<std::string>> rows;
  Cases() {
    std::ifstream in(oracle_path());
    if (!in) return;
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) rows.push_back(split_fields(line, '\t'));
  }
};
const Cases& cases() {
  static Cases c;
  return c;
}

#define REQUIRE_CASES()                                                                                   \
  REQUIRE_MESSAGE(!cases().rows.empty(), "no oracle cases at " << oracle_path()                           \
                                                               << ": run `ctest -R oracle_surface_cases` " \
                                                                  "(python3 with numpy>=2 and ml_dtypes)")

// Runs a creation function of a `make` record.
std::vector<cf::Array> run_make(const std::string& func, std::map<std::string, std::string>& p,
                                const std::vector<cf::Array>& in) {
  auto opt = [&](const char* k) {
    return p[k] == "None" ? std::optional<int64_t>() : std::optional<int64_t>(std::stoll(p[k]));
  };
  auto dt = [&] { return cf::parse_dtype(p["dtype"]); };
  if (func == "eye") return {cf::eye(std::stoll(p["N"]), opt("M"), std::stoll(p["k"]), dt())};
  if (func == "tri") return {cf::tri(std::stoll(p["N"]), opt("M"), std::stoll(p["k"]), dt())};
  if (func == "identity") return {cf::identity(std::stoll(p["n"]), dt())};
  if (func == "triu") return {cf::triu(in.at(0), std::stoll(p["k"]))};
  if (func == "tril") return {cf::tril(in.at(0), std::stoll(p["k"]))};
  if (func == "diag") return {cf::diag(in.at(0), std::stoll(p["k"]))};
  if (func == "logspace")
    return {cf::logspace(std::stod(p["start"]), std::stod(p["stop"]), std::stoll(p["num"]), p["endpoint"] == "1",
                         std::stod(p["base"]), dt())};
  if (func == "meshgrid") return cf::meshgrid(in, p["indexing"], p["sparse"] == "1");
  FAIL("unknown function " << func);
  return {};
}

}  // namespace

TEST_CASE("creation functions agree with NumPy: values, dtypes, shapes and errors") {
  REQUIRE_CASES();
  cf::BackendScope ref(cf::Backend::Reference);
  int checked = 0, failed = 0;
  for (const auto& r : cases().rows) {
    if (r[0] != "make") continue;
    ++checked;
    const std::string& func = r[1];
    auto p = parse_params(r[2]);
    std::vector<cf::Array> in;
    if (r[3] != "-")
      for (auto& t : split_fields(r[3], ' ')) in.push_back(to_array(parse_array(t)));
    const std::string what = func + "(" + r[2] + ") on " + r[3].substr(0, 60);
    if (r[4].rfind("error ", 0) == 0) {
      std::string got = "no error";
      try {
        auto out = run_make(func, p, in);
        for (auto& o : out) o.eval();
      } catch (const cf::Error& e) {
        got = cufuse::error_kind_name(e.kind());
      }
      if (got != r[4].substr(6)) {
        ++failed;
        MESSAGE(what << ": NumPy raises " << r[4].substr(6) << ", cufuse: " << got);
      }
      continue;
    }
    std::vector<cf::Array> out;
    try {
      out = run_make(func, p, in);
    } catch (const cf::Error& e) {
      ++failed;
      MESSAGE(what << ": threw " << e.what());
      continue;
    }
    auto expected = split_fields(r[4], ' ');
    if (out.size() != expected.size()) {
      ++failed;
      MESSAGE(what << ": " << out.size() << " results, NumPy " << expected.size());
      continue;
    }
    for (size_t i = 0; i < out.size(); ++i) {
      const OracleArray e = parse_array(expected[i]);
      if (out[i].dtype() != e.dtype || out[i].shape() != e.shape) {
        ++failed;
        MESSAGE(what << ": " << cf::name(out[i].dtype()) << cf::to_string(out[i].shape()) << ", NumPy "
                     << cf::name(e.dtype) << cf::to_string(e.shape));
        continue;
      }
      if (func == "logspace" && cf::is_float(e.dtype)) {
        auto got = values_f64(out[i]), want = values_f64(to_array(e));
        const double tol = cf::is_half(e.dtype) ? 1 : 4;
        for (size_t k = 0; k < got.size(); ++k)
          if (ulps(got[k], want[k], e.dtype) > tol) {
            ++failed;
            MESSAGE(what << ": element " << k << " is " << got[k] << ", NumPy " << want[k]);
            break;
          }
      } else if (bytes_of(out[i]) != e.bytes) {
        ++failed;
        MESSAGE(what << ": got " << cf::to_string(out[i]) << "\nNumPy " << cf::to_string(to_array(e)));
      }
    }
  }
  MESSAGE(checked << " creation cases");
  CHECK(checked > 1000);
  CHECK(failed == 0);
}

TEST_CASE("repr and str agree with NumPy's") {
  REQUIRE_CASES();
  cf::BackendScope ref(cf::Backend::Reference);
  int checked = 0, failed = 0;
  for (const auto& r : cases().rows) {
    std::string got, want;
    if (r[0] == "repr") {
      cf::PrintOptions o;
      o.precision = std::stoi(r[1]);
      got = cf::array_repr(to_array(parse_array(r[2])), o);
      want = unescape(r[3]);
    } else if (r[0] == "str") {
      got = cf::array_str(to_array(parse_array(r[1])));
      want = unescape(r[2]);
    } else {
      continue;
    }
    ++checked;
    if (got != want) {
      ++failed;
      if (failed <= 25) MESSAGE(r[0] << " of " << r[r[0] == "repr" ? 2 : 1].substr(0, 40) << ":\ngot:\n" << got << "\nNumPy:\n" << want);
    }
  }
  MESSAGE(checked << " repr/str cases");
  CHECK(checked > 500);
  CHECK(failed == 0);
}

TEST_CASE("allclose, array_equal and the assert messages agree with NumPy's") {
  REQUIRE_CASES();
  cf::BackendScope ref(cf::Backend::Reference);
  int checked = 0, failed = 0;
  for (const auto& r : cases().rows) {
    if (r[0] != "close" && r[0] != "assert") continue;
    ++checked;
    auto p = parse_params(r[2]);
    const cf::Array a = to_array(parse_array(r[3])), b = to_array(parse_array(r[4]));
    std::string want = unescape(r[5]);
    std::string got;
    if (r[0] == "close") {
      try {
        bool v = r[1] == "allclose" ? cf::allclose(a, b, std::stod(p["rtol"]), std::stod(p["atol"]), p["equal_nan"] == "1")
                                    : cf::array_equal(a, b, p["equal_nan"] == "1");
        got = v ? "True" : "False";
      } catch (const cf::Error& e) {
        got = std::string("error ") + cufuse::error_kind_name(e.kind());
      }
    } else {
      try {
        if (r[1] == "assert_allclose")
          cf::testing::assert_allclose(a, b, std::stod(p["rtol"]), std::stod(p["atol"]), p["equal_nan"] == "1");
        else
          cf::testing::assert_array_equal(a, b);
        got = "PASS";
      } catch (const cf::AssertionError& e) {
        got = e.what();
        const size_t at = got.find("\nLargest absolute difference at index:\n");  // cufuse's extra line
        if (at != std::string::npos) {
          const size_t end = got.find('\n', got.find('\n', at + 1) + 1);
          got.erase(at, end - at);
        }
      }
    }
    // Known difference: for "inf values mismatch" NumPy shows only the infinite elements
    // (x[infs_mask]); cufuse shows the whole operands. The lines before them must agree.
    const std::string infs = "inf values mismatch:";
    if (want.find(infs) != std::string::npos && got.find(infs) != std::string::npos)
      got = got.substr(0, got.find(infs)), want = want.substr(0, want.find(infs));
    if (got != want) {
      ++failed;
      if (failed <= 25) MESSAGE(r[1] << "(" << r[2] << ") on " << cf::to_string(a) << ", " << cf::to_string(b) << ":\ngot:\n" << got << "\nNumPy:\n" << want);
    }
  }
  MESSAGE(checked << " comparison cases");
  CHECK(checked > 150);
  CHECK(failed == 0);
}
