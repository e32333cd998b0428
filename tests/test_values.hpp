// tests/test_values.hpp: small helpers the surface tests share: an array's values as host
// doubles or int64s, an int64 array from a list, and the message an Error carries.
#pragma once
#include <cufuse/cufuse.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace test_values {

inline std::vector<double> f64(const cufuse::Array& a) { return a.astype(cufuse::f64).to_host<double>(); }
inline std::vector<int64_t> i64(const cufuse::Array& a) { return a.astype(cufuse::i64).to_host<int64_t>(); }
inline cufuse::Array iarr(std::vector<int64_t> v, std::optional<cufuse::Shape> s = std::nullopt) {
  return cufuse::from_host(v, s);
}
// What f throws as a cufuse::Error ("" when it throws nothing).
inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const cufuse::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace test_values
