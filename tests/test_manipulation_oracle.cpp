// tests/test_manipulation_oracle.cpp: issue 30's joining, splitting and rearranging functions
// against NumPy 2 (and ml_dtypes' bfloat16), from the cases tests/oracle/gen_manipulation.py
// writes (its docstring has the format): concatenate (every dtype, every dtype pair's
// promotion, axis None and negative, empty parts, many parts), stack and the *stack family,
// split / array_split / hsplit / vsplit / dsplit by sections and indices, tile, repeat (scalar
// and per element), flip, fliplr, flipud, roll (flattened, one axis, several), rot90, pad in
// every mode and pad_width form, broadcast_arrays and atleast_nd, with NumPy's errors.
// Results are compared bit for bit (these functions only move elements, or cast them as
// NumPy's promotion does); errors by kind (NumPy's AxisError counts as an IndexError).
//
// CTest runs gen_manipulation.py first (tests/numpy_oracles.cmake, fixture
// `cufuse_manipulation_oracle`) and points CUFUSE_MANIPULATION_ORACLE_DIR at its output.
#include <cstdlib>
#include <fstream>
#include <map>

#include "oracle_text.hpp"
#include "test_core_helpers.hpp"

namespace {

using namespace oracle_text;

std::string oracle_path() {
  const char* d = std::getenv("CUFUSE_MANIPULATION_ORACLE_DIR");
  return std::string(d ? d : CUFUSE_TEST_BINARY_DIR "/oracle_manipulation") + "/manipulation.txt";
}




// A parameter: "None", an int, a string, `L1,2` (ints) or `P1:2;3:4` (pairs).
struct Param {
  std::string raw;
  bool none() const { return raw == "None"; }
  int64_t i() const { return std::stoll(raw); }
  bool is_list() const { return !raw.empty() && raw[0] == 'L'; }
  std::vector<int64_t> ints() const {
    if (!is_list()) return {i()};
    std::vector<int64_t> v;
    if (raw.size() > 1)
      for (auto& x : split_fields(raw.substr(1), ',')) v.push_back(std::stoll(x));
    return v;
  }
  std::vector<std::pair<int64_t, int64_t>> pairs() const {
    std::vector<std::pair<int64_t, int64_t>> v;
    for (auto& x : split_fields(raw.substr(1), ';')) {
      auto ab = split_fields(x, ':');
      v.emplace_back(std::stoll(ab[0]), std::stoll(ab[1]));
    }
    return v;
  }
};

std::map<std::string, Param> parse_typed_params(const std::string& s) {
  std::map<std::string, Param> m;
  if (s == "-") return m;
  for (auto& kv : split_fields(s, ' ')) {
    auto at = kv.find('=');
    m[kv.substr(0, at)] = Param{kv.substr(at + 1)};
  }
  return m;
}

std::optional<int> opt_axis(std::map<std::string, Param>& p) {
  return p["axis"].none() ? std::optional<int>() : std::optional<int>(static_cast<int>(p["axis"].i()));
}

std::vector<cf::Array> run(const std::string& f, std::map<std::string, Param>& p, const std::vector<cf::Array>& in) {
  auto ax = [&] { return static_cast<int>(p["axis"].i()); };
  auto sections_or = [&](auto by_n, auto by_idx) {
    return p.count("sections") ? by_n(p["sections"].i()) : by_idx(p["indices"].ints());
  };
  if (f == "concatenate") return {cf::concatenate(in, opt_axis(p))};
  if (f == "stack") return {cf::stack(in, ax())};
  if (f == "vstack") return {cf::vstack(in)};
  if (f == "hstack") return {cf::hstack(in)};
  if (f == "dstack") return {cf::dstack(in)};
  if (f == "column_stack") return {cf::column_stack(in)};
  const cf::Array& a = in.at(0);
  if (f == "split")
    return sections_or([&](int64_t n) { return cf::split(a, n, ax()); },
                       [&](const std::vector<int64_t>& i) { return cf::split(a, i, ax()); });
  if (f == "array_split")
    return sections_or([&](int64_t n) { return cf::array_split(a, n, ax()); },
                       [&](const std::vector<int64_t>& i) { return cf::array_split(a, i, ax()); });
  if (f == "hsplit")
    return sections_or([&](int64_t n) { return cf::hsplit(a, n); }, [&](const std::vector<int64_t>& i) { return cf::hsplit(a, i); });
  if (f == "vsplit")
    return sections_or([&](int64_t n) { return cf::vsplit(a, n); }, [&](const std::vector<int64_t>& i) { return cf::vsplit(a, i); });
  if (f == "dsplit")
    return sections_or([&](int64_t n) { return cf::dsplit(a, n); }, [&](const std::vector<int64_t>& i) { return cf::dsplit(a, i); });
  if (f == "tile") return {cf::tile(a, p["reps"].ints())};
  if (f == "repeat") {
    if (p["repeats"].is_list()) return {cf::repeat(a, p["repeats"].ints(), opt_axis(p))};
    return {cf::repeat(a, p["repeats"].i(), opt_axis(p))};
  }
  if (f == "flip") {
    if (p["axis"].none()) return {cf::flip(a)};
    const auto v = p["axis"].ints();
    cf::Axes axes;
    for (auto x : v) axes.push_back(static_cast<int>(x));
    return {cf::flip(a, axes)};
  }
  if (f == "fliplr") return {cf::fliplr(a)};
  if (f == "flipud") return {cf::flipud(a)};
  if (f == "roll") {
    if (p["axis"].none()) return {cf::roll(a, p["shift"].i())};
    const auto axes = p["axis"].ints();
    return {cf::roll(a, p["shift"].ints(), std::vector<int>(axes.begin(), axes.end()))};
  }
  if (f == "rot90") {
    const auto axes = p["axes"].ints();
    return {cf::rot90(a, static_cast<int>(p["k"].i()), {static_cast<int>(axes[0]), static_cast<int>(axes[1])})};
  }
  if (f == "pad") {
    cf::Scalar cv(0);
    if (p.count("constant_values")) {
      const std::string& r = p["constant_values"].raw;
      cv = r.find('.') != std::string::npos ? cf::Scalar(std::stod(r)) : cf::Scalar(std::stoll(r));
    }
    return {cf::pad(a, p["pad_width"].pairs(), p["mode"].raw, cv)};
  }
  if (f == "broadcast_arrays") return cf::broadcast_arrays(in);
  if (f == "atleast_1d") return in.size() == 1 ? std::vector<cf::Array>{cf::atleast_1d(a)} : cf::atleast_1d(in);
  if (f == "atleast_2d") return in.size() == 1 ? std::vector<cf::Array>{cf::atleast_2d(a)} : cf::atleast_2d(in);
  if (f == "atleast_3d") return in.size() == 1 ? std::vector<cf::Array>{cf::atleast_3d(a)} : cf::atleast_3d(in);
  FAIL("unknown function " << f);
  return {};
}

}  // namespace

TEST_CASE("joining, splitting and rearranging agree with NumPy bit for bit, errors by kind") {
  std::ifstream file(oracle_path());
  REQUIRE_MESSAGE(file.good(), "no oracle cases at " << oracle_path()
                                                     << ": run `ctest -R oracle_manipulation_cases` (python3 with "
                                                        "numpy>=2 and ml_dtypes)");
  cf::BackendScope ref(cf::Backend::Reference);
  int checked = 0, failed = 0;
  std::string line;
  while (std::getline(file, line)) {
    auto r = split_fields(line, '\t');
    if (r.empty() || r[0] != "make") continue;
    ++checked;
    auto p = parse_typed_params(r[2]);
    std::vector<cf::Array> in;
    if (r[3] != "-")
      for (auto& t : split_fields(r[3], ' ')) {
        const OracleArray h = parse_array(t);
        in.push_back(cf::from_host(h.bytes.data(), h.dtype, h.shape));
      }
    const std::string what = r[1] + "(" + r[2] + ") on " + r[3].substr(0, 50);
    if (r[4].rfind("error ", 0) == 0) {
      std::string got = "no error";
      try {
        for (auto& o : run(r[1], p, in)) o.eval();
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
      out = run(r[1], p, in);
    } catch (const cf::Error& e) {
      ++failed;
      MESSAGE(what << ": threw " << e.what());
      continue;
    }
    const auto expected = split_fields(r[4], ' ');
    if (out.size() != expected.size()) {
      ++failed;
      MESSAGE(what << ": " << out.size() << " results, NumPy " << expected.size());
      continue;
    }
    for (size_t i = 0; i < out.size(); ++i) {
      const OracleArray e = parse_array(expected[i]);
      if (out[i].dtype() != e.dtype || out[i].shape() != e.shape) {
        ++failed;
        MESSAGE(what << " [" << i << "]: " << cf::name(out[i].dtype()) << cf::to_string(out[i].shape()) << ", NumPy "
                     << cf::name(e.dtype) << cf::to_string(e.shape));
        continue;
      }
      if (bytes_of(out[i]) != e.bytes) {
        ++failed;
        MESSAGE(what << " [" << i << "]: values differ: " << cf::to_string(out[i]));
      }
    }
  }
  MESSAGE(checked << " cases checked");
  CHECK(checked > 1000);
  CHECK(failed == 0);
}
