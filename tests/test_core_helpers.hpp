// tests/test_core_helpers.hpp: small helpers shared by the core test files.
#pragma once
#include <doctest/doctest.h>

#include <cufuse/cufuse.hpp>
#include <string>
#include <vector>

#include "exec/executable.hpp"
#include "plan/signature.hpp"

namespace cf = cufuse;

// The executable cufuse would build for these results (compiled when `compile`), without running it.
inline std::shared_ptr<cf::detail::Executable> plan_of(const std::vector<cf::Array>& outs, bool compile = false) {
  std::vector<cf::detail::NodePtr> roots;
  for (const auto& a : outs) roots.push_back(a.node());
  cf::detail::GraphScan scan;
  cf::detail::scan_graph(roots, {}, scan);
  return cf::detail::build_executable(roots, {}, scan, compile, 90);
}

inline size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

template <class T>
std::vector<T> host(const cf::Array& a) {
  return a.to_host<T>();
}

// Sets Config::contract_fma (rule contract-multiply-add) for a scope: tests of a graph's exact
// shape written with `a * b + c` turn it off; tests of the rule turn it on.
struct FmaScope {
  bool old;
  explicit FmaScope(bool on) : old(cf::config().contract_fma) {
    cf::Config c = cf::config();
    c.contract_fma = on;
    cf::set_config(c);
  }
  ~FmaScope() {
    cf::Config c = cf::config();
    c.contract_fma = old;
    cf::set_config(c);
  }
  FmaScope(const FmaScope&) = delete;
  FmaScope& operator=(const FmaScope&) = delete;
};
