// tests/test_dist_helpers.hpp: what the dist test files share: a world for one test case
// (dist::init / finalize) on the host reference backend or the planning world.
#pragma once
#include <doctest/doctest.h>

#include <cufuse/cufuse.hpp>
#include <string>
#include <vector>

namespace cf = cufuse;
namespace dist = cufuse::dist;

// A world of n simulated devices for one scope.
struct WorldScope {
  WorldScope(dist::World w, int n) { dist::init(w, n); }
  ~WorldScope() { dist::finalize(); }
  WorldScope(const WorldScope&) = delete;
  WorldScope& operator=(const WorldScope&) = delete;
};

// The reference backend with a host world of n devices.
struct HostWorld {
  cf::BackendScope ref{cf::Backend::Reference};
  WorldScope world;
  explicit HostWorld(int n) : world(dist::World::Host, n) {}
};

inline std::vector<dist::Step> collectives_of(const dist::DArray& d) {
  std::vector<dist::Step> out;
  for (const auto& s : dist::plan(d))
    if (s.kind == "collective") out.push_back(s);
  return out;
}

inline int kernel_steps(const dist::DArray& d) {
  int n = 0;
  for (const auto& s : dist::plan(d)) n += s.kind == "kernels" ? s.kernels : 0;
  return n;
}

// The message of the cufuse::Error that f throws ("" when none, a failing check when another kind).
template <class F>
std::string error_of(F f, cf::ErrorKind kind) {
  try {
    f();
  } catch (const cf::Error& e) {
    CHECK_MESSAGE(e.kind() == kind, e.what());
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }
