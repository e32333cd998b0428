// tests/test_fuse_indexing.cpp: issue 30's indexing inside cufuse::fuse (host reference
// backend). Gathers (take, x[idx]) trace and replay like any lazy op; scatters and selections
// by a mask that depends on an argument are refused at trace time with a NotSupportedError
// naming the operation (src/graph/trace_refusals.cpp); a selection over captured data is
// argument-independent work, computed at trace time; where(mask, v, x) traces.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cufuse/cufuse.hpp"
#include "test_values.hpp"

namespace cf = cufuse;

namespace {
using test_values::f64;
using test_values::iarr;

// The message of the NotSupportedError calling f(x) throws ("" when it throws none).
template <class F>
std::string refusal(F& f, const cf::Array& x) {
  try {
    f(x);
  } catch (const cf::NotSupportedError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("fuse: gathers trace and replay; take's modes too") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array idx = iarr({3, -1, 7});
  auto f = cf::fuse([&](auto x) { return cf::take(x * 2, idx, 0, "wrap") + 1; });
  for (int round = 0; round < 2; ++round) {
    auto x = cf::arange(5).astype(cf::f32) + float(round);
    CHECK(f64(f(x)) == f64(cf::take(x * 2, idx, 0, "wrap") + 1));
  }
  CHECK(f.stats().traces == 1);
  CHECK(f.stats().replays == 2);
}

TEST_CASE("fuse: scatters are refused at trace time, naming the op") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array x = cf::arange(6).astype(cf::f32);
  const cf::Array idx = iarr({0, 2});
  auto put = cf::fuse([&](auto a) {
    cf::Array b = cf::zeros({6}, cf::f32);
    cf::put(b, idx, a[{cf::slice(0, 2)}]);
    return b;
  });
  const std::string m = refusal(put, x);
  CHECK(m.find("put cannot be traced by cufuse::fuse") != std::string::npos);
  CHECK(m.find("call it outside the fused function") != std::string::npos);
  auto add = cf::fuse([&](auto a) {
    cf::Array b = cf::zeros({3}, cf::f32);
    cf::add_at(b, idx, a[{cf::slice(0, 2)}]);
    return b;
  });
  CHECK(refusal(add, x).find("add_at cannot be traced") != std::string::npos);
  auto maxat = cf::fuse([&](auto a) {
    cf::Array b = cf::zeros({3}, cf::f32);
    cf::maximum_at(b, idx, 1.0f);
    return b + a[{cf::slice(0, 3)}];
  });
  CHECK(refusal(maxat, x).find("maximum_at cannot be traced") != std::string::npos);
  auto setidx = cf::fuse([&](auto a) {
    cf::Array b = a * 1;
    b[idx] = 5.0f;
    return b;
  });
  CHECK(refusal(setidx, x).find("x[idx] = v cannot be traced") != std::string::npos);
  auto addidx = cf::fuse([&](auto a) {
    cf::Array b = cf::zeros({6}, cf::f32);
    b[idx] += a[{cf::slice(0, 2)}];
    return b;
  });
  CHECK(refusal(addidx, x).find("x[idx] op= v cannot be traced") != std::string::npos);
  auto setmask = cf::fuse([&](auto a) {
    cf::Array b = cf::zeros({6}, cf::f32);
    b[a > 2] = cf::arange(3).astype(cf::f32);  // one value per selected element: a scatter
    return b;
  });
  CHECK(refusal(setmask, x).find("x[mask] = v cannot be traced") != std::string::npos);
  // a refused trace leaves nothing behind: the same function outside fuse still works
  cf::Array b = cf::zeros({6}, cf::f32);
  cf::put(b, idx, x[{cf::slice(0, 2)}]);
  CHECK(f64(b) == std::vector<double>{0, 0, 1, 0, 0, 0});
}

TEST_CASE("fuse: selections by a mask that reads an argument are refused; over captured data they are constants") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array x = cf::arange(6).astype(cf::f32);
  auto sel = cf::fuse([](auto a) -> cf::Array { return a[a > 2]; });
  CHECK(refusal(sel, x).find("x[mask] cannot be traced by cufuse::fuse: its result's shape depends on the values") !=
        std::string::npos);
  auto nz = cf::fuse([](auto a) { return cf::nonzero(a)[0]; });
  CHECK(refusal(nz, x).find("nonzero cannot be traced") != std::string::npos);
  auto fz = cf::fuse([](auto a) { return cf::flatnonzero(a > 1); });
  CHECK(refusal(fz, x).find("flatnonzero cannot be traced") != std::string::npos);
  auto aw = cf::fuse([](auto a) { return cf::argwhere(a.reshape({2, 3})); });
  CHECK(refusal(aw, x).find("argwhere cannot be traced") != std::string::npos);
  auto ex = cf::fuse([](auto a) { return cf::extract(a > 1, a); });
  CHECK(refusal(ex, x).find("extract cannot be traced") != std::string::npos);
  auto cp = cf::fuse([](auto a) { return cf::compress(a > 1, a); });
  CHECK(refusal(cp, x).find("compress cannot be traced") != std::string::npos);
  // a selection over a captured array depends on no argument: computed once, at trace time
  const cf::Array c = cf::arange(8);
  auto cap = cf::fuse([&](auto a) { return a[{cf::slice(0, 3)}] + cf::flatnonzero(c % 3 == 0).astype(cf::f32); });
  CHECK(f64(cap(x)) == std::vector<double>{0, 4, 8});
  CHECK(f64(cap(x + 1)) == std::vector<double>{1, 5, 9});
  CHECK(cap.stats().traces == 1);
}

TEST_CASE("fuse: x[mask] = v is refused too; where(mask, v, x), its lazy form, traces") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto setmask = cf::fuse([](auto a) {
    cf::Array b = a * 1;
    b[b < 0] = 0.0f;
    return b;
  });
  auto x = cf::arange(6).astype(cf::f32) - 3;
  CHECK(refusal(setmask, x).find("x[mask] = v cannot be traced") != std::string::npos);
  auto addmask = cf::fuse([](auto a) {
    cf::Array b = a * 1;
    b[b < 0] += 1.0f;
    return b;
  });
  CHECK(refusal(addmask, x).find("x[mask] op= v cannot be traced") != std::string::npos);
  auto clampneg = cf::fuse([](auto a) { return cf::where(a < 0, 0.0f, a); });
  CHECK(f64(clampneg(x)) == std::vector<double>{0, 0, 0, 0, 1, 2});
  CHECK(f64(clampneg(x * 2)) == std::vector<double>{0, 0, 0, 0, 2, 4});
  CHECK(clampneg.stats().traces == 1);
}
