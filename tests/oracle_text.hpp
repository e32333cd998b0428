// tests/oracle_text.hpp: reading the NumPy oracle case files that tests/oracle/gen_*.py write
// (one case a line, fields split by a separator, arrays as dtype:shape:hex bytes), shared by
// the oracle tests.
#pragma once
#include <doctest/doctest.h>

#include <cufuse/cufuse.hpp>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace oracle_text {

// s cut at every `sep` (empty fields kept).
inline std::vector<std::string> split_fields(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  while (true) {
    size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

// An array as the case file spells it: its dtype, shape and raw little-endian bytes.
struct OracleArray {
  cufuse::DType dtype;
  cufuse::Shape shape;
  std::vector<unsigned char> bytes;
};

// "float32:2,3:0000803f..." -> OracleArray.
inline OracleArray parse_array(const std::string& tok) {
  auto f = split_fields(tok, ':');
  REQUIRE(f.size() == 3);
  OracleArray h;
  h.dtype = cufuse::parse_dtype(f[0]);
  if (!f[1].empty())
    for (auto& d : split_fields(f[1], ',')) h.shape.push_back(std::stoll(d));
  for (size_t i = 0; i + 1 < f[2].size(); i += 2)
    h.bytes.push_back(static_cast<unsigned char>(std::stoi(f[2].substr(i, 2), nullptr, 16)));
  return h;
}

inline cufuse::Array to_array(const OracleArray& h) { return cufuse::from_host(h.bytes.data(), h.dtype, h.shape); }

// An array's raw bytes, row-major, for a bit-for-bit comparison.
inline std::vector<unsigned char> bytes_of(const cufuse::Array& a) {
  std::vector<unsigned char> b(static_cast<size_t>(a.nbytes()));
  a.copy_to_host(b.data(), b.size());
  return b;
}

// A case's parameters, "k=v k=v" ("-" for none), as strings by name.
inline std::map<std::string, std::string> parse_params(const std::string& s) {
  std::map<std::string, std::string> m;
  if (s == "-") return m;
  for (auto& kv : split_fields(s, ' ')) {
    auto at = kv.find('=');
    m[kv.substr(0, at)] = kv.substr(at + 1);
  }
  return m;
}

// Each case of an oracle file: a line of exactly `fields` tab-separated fields, `fn(fields)`
// called with the line captured (its first `capture` characters); empty lines and the meta
// line ("meta\t" and numpy's and ml_dtypes' versions) skipped. Returns the number of cases.
// A missing file fails the test, naming the CTest entry that writes it.
template <class F>
int for_each_case(const std::string& path, const std::string& writer, size_t fields, F&& fn, size_t capture = 200) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "no oracle cases at " << path << ": run `ctest -R " << writer << "` (numpy>=2, ml_dtypes)");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line.rfind("meta\t", 0) == 0) continue;
    const auto f = split_fields(line, '\t');
    REQUIRE(f.size() == fields);
    CAPTURE(line.substr(0, capture));
    fn(f);
    ++n;
  }
  return n;
}

// Runs `f`: "" when it returns, else "error <Kind>" of the cufuse::Error it threw (the form
// the case files give an expected error in), its message in `what`.
template <class F>
std::string error_of(F&& f, std::string& what) {
  try {
    f();
  } catch (const cufuse::Error& e) {
    what = e.what();
    return std::string("error ") + cufuse::error_kind_name(e.kind());
  }
  return {};
}

}  // namespace oracle_text
