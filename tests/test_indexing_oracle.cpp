// tests/test_indexing_oracle.cpp: issue 30's advanced indexing, masks and scatters against
// NumPy 2, from the cases tests/oracle/gen_indexing.py writes (its docstring has the format):
// take and take_along_axis with every index dtype, negative indices and axes, empty arrays and
// out-of-bounds errors; x[...] with index arrays mixed with ints, slices, new axes and an
// ellipsis (NumPy's placement of the broadcast dims); x[mask]; nonzero, argwhere, flatnonzero,
// extract, compress; put, add_at / maximum_at / minimum_at with duplicates; x[idx] = v,
// x[mask] = v, += through both. Every dtype; results compared bit for bit, errors by kind
// (NumPy's AxisError is cufuse's IndexError). Runs on the host reference backend.
//
// CTest runs gen_indexing.py first (tests/numpy_oracles.cmake, fixture
// `cufuse_indexing_oracle`) and points CUFUSE_INDEXING_ORACLE_DIR at its output.
#include <cstdlib>
#include <fstream>
#include <map>

#include "oracle_text.hpp"
#include "test_core_helpers.hpp"

namespace {

using namespace oracle_text;

std::string oracle_path() {
  const char* d = std::getenv("CUFUSE_INDEXING_ORACLE_DIR");
  return std::string(d ? d : CUFUSE_TEST_BINARY_DIR "/oracle_indexing") + "/indexing.txt";
}

std::optional<int> opt_axis(const std::string& s) {
  return s == "None" ? std::optional<int>() : std::optional<int>(std::stoi(s));
}

std::vector<cf::Index> spec_index(const std::string& spec, const std::vector<cf::Array>& arrays) {
  std::vector<cf::Index> out;
  for (const auto& item : split_fields(spec, ';')) {
    if (item[0] == 'a') out.emplace_back(arrays.at(std::stoul(item.substr(1))));
    else if (item == ":") out.emplace_back(cf::_);
    else if (item == "None") out.emplace_back(cf::newaxis);
    else if (item == "...") out.emplace_back(cf::ellipsis);
    else if (item.find(':') != std::string::npos) {
      auto pq = split_fields(item, ':');
      std::optional<int64_t> p, q;
      if (!pq[0].empty()) p = std::stoll(pq[0]);
      if (!pq[1].empty()) q = std::stoll(pq[1]);
      out.emplace_back(cf::slice(p, q));
    } else {
      out.emplace_back(static_cast<int64_t>(std::stoll(item)));
    }
  }
  return out;
}

std::vector<cf::Array> run(const std::string& f, std::map<std::string, std::string>& p, std::vector<cf::Array> in) {
  if (f == "take") return {cf::take(in[0], in[1], opt_axis(p["axis"]), p.count("mode") ? p["mode"] : "raise")};
  if (f == "take_along_axis") return {cf::take_along_axis(in[0], in[1], std::stoi(p["axis"]))};
  if (f == "index") {
    std::vector<cf::Array> arrays(in.begin() + 1, in.end());
    return {in[0].index(spec_index(p["spec"], arrays))};
  }
  if (f == "mask") return {in[0][in[1]]};
  if (f == "nonzero") return cf::nonzero(in[0]);
  if (f == "argwhere") return {cf::argwhere(in[0])};
  if (f == "flatnonzero") return {cf::flatnonzero(in[0])};
  if (f == "extract") return {cf::extract(in[0], in[1])};
  if (f == "compress") return {cf::compress(in[0], in[1], opt_axis(p["axis"]))};
  cf::Array a = in[0];
  if (f == "put") cf::put(a, in[1], in[2], p.count("mode") ? p["mode"] : "raise");
  else if (f == "add_at") cf::add_at(a, in[1], in[2]);
  else if (f == "maximum_at") cf::maximum_at(a, in[1], in[2]);
  else if (f == "minimum_at") cf::minimum_at(a, in[1], in[2]);
  else if (f == "setidx" || f == "setmask") a[in[1]] = in[2];
  else if (f == "iaddidx" || f == "iaddmask") a[in[1]] += in[2];
  else FAIL("unknown oracle function " << f);
  return {a};
}


}  // namespace

TEST_CASE("advanced indexing, masks and scatters match NumPy") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int n = oracle_text::for_each_case(oracle_path(), "oracle_indexing_cases", 4, [&](const std::vector<std::string>& f) {
    auto p = parse_params(f[1]);
    std::vector<cf::Array> ins;
    for (auto& t : split_fields(f[2], ' ')) ins.push_back(to_array(parse_array(t)));
    std::string expected = f[3];
    if (expected == "error AxisError") expected = "error IndexError";
    std::vector<cf::Array> got;
    std::string what;
    const std::string err = error_of(
        [&] {
          got = run(f[0], p, ins);
          for (auto& g : got) g.eval();
        },
        what);
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
      if (got[k].shape() == h.shape && got[k].dtype() == h.dtype) CHECK(bytes_of(got[k]) == h.bytes);
    }
  });
  CHECK(n > 800);
}
