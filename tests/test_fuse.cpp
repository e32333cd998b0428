// tests/test_fuse.cpp: cufuse::fuse without a GPU: tracing and replay on the reference backend
// (same results as the unfused expression, traced once per signature, new signatures trace
// again, captured arrays, scalar arguments, results of every shape, nested fused calls), and
// the replay binding table checked byte for byte against the lazy path's kernel parameters.
#include <cmath>
#include <tuple>

#include "fuse/engine.hpp"
#include "exec/binding.hpp"
#include "test_core_helpers.hpp"

using cf::detail::FuseArg;

namespace {

std::vector<float> seq(int n, float a, float b) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = a + b * static_cast<float>(i) + 0.25f * static_cast<float>(i % 7);
  return v;
}

auto sqdiff = [](auto x, auto y) { return (x - y) * (x - y); };
auto w7b = [](auto x, auto y) { return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1); };

}  // namespace

TEST_CASE("fuse: replays give the unfused expression's values, traced once per signature") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = cf::fuse(sqdiff);
  auto g = cf::fuse(w7b);
  for (int round = 0; round < 3; ++round) {
    auto x = cf::from_host(seq(1000, float(round), 0.5f));
    auto y = cf::from_host(seq(1000, 2.0f, -0.25f * float(round + 1)));
    CHECK(host<float>(f(x, y)) == host<float>(sqdiff(x, y)));
    CHECK(host<float>(g(x, y)) == host<float>(w7b(x, y)));
  }
  CHECK(f.stats().traces == 1);
  CHECK(f.stats().replays == 3);
  CHECK(g.stats().traces == 1);
  CHECK(f.stats().signatures == 1);
}

TEST_CASE("fuse: a new dtype, shape, layout or alignment is a new signature") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = cf::fuse(sqdiff);
  auto x = cf::from_host(seq(64, 1, 1));
  auto y = cf::from_host(seq(64, 3, -1));
  f(x, y);
  CHECK(f.stats().traces == 1);
  f(x.astype(cf::f64).eval(), y);  // dtype
  CHECK(f.stats().traces == 2);
  auto x2 = cf::from_host(seq(32, 1, 1));
  auto y2 = cf::from_host(seq(32, 0, 2));
  f(x2, y2);  // shape
  CHECK(f.stats().traces == 3);
  // strided and reversed views, misaligned slices: each its own trace, each right
  auto xs = x[{cf::slice(cf::none, cf::none, 2)}];
  auto yr = y[{cf::slice(cf::none, cf::none, -2)}];
  CHECK(host<float>(f(xs, yr)) == host<float>(sqdiff(xs, yr)));
  CHECK(f.stats().traces == 4);
  auto x1 = x[{cf::slice(1, 33)}];  // 4 bytes past a 64-byte boundary
  CHECK(host<float>(f(x1, y2)) == host<float>(sqdiff(x1, y2)));
  CHECK(f.stats().traces == 5);
  // the first signature is still there
  f(x, y);
  CHECK(f.stats().traces == 5);
  CHECK(f.stats().signatures == 5);
  f.clear();
  f(x, y);
  CHECK(f.stats().traces == 6);
}

TEST_CASE("fuse: max_signatures drops the least recently used trace") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::FuseOptions opt;
  opt.max_signatures = 2;
  auto f = cf::fuse([](auto x) { return x + 1; }, opt);
  auto a = cf::from_host(seq(4, 0, 1)), b = cf::from_host(seq(5, 0, 1)), c = cf::from_host(seq(6, 0, 1));
  f(a);
  f(b);
  f(a);  // a is now the most recent
  f(c);  // drops b
  CHECK(f.stats().signatures == 2);
  CHECK(f.stats().traces == 3);
  f(a);
  CHECK(f.stats().traces == 3);
  f(b);
  CHECK(f.stats().traces == 4);
}

TEST_CASE("fuse: scalar arguments are parameters: new values replay without a trace") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = cf::fuse([](auto x, auto a, auto b) { return x * a + b; });
  auto x = cf::from_host(seq(100, -3, 0.125f));
  for (double a : {2.5, -1.0, 0.375, 1000.375}) {
    for (int b : {0, 3, -7}) {
      CHECK(host<float>(f(x, a, b)) == host<float>(x * a + b));
    }
  }
  CHECK(f.stats().traces == 1);
  // weak scalars keep NumPy 2's rules: float32 stays float32
  CHECK(f(x, 2.0, 1).dtype() == cf::f32);
  // a new scalar kind is a new signature
  CHECK(host<float>(f(x, 2, 1.5)) == host<float>(x * 2 + 1.5));
  CHECK(f.stats().traces == 2);
}

TEST_CASE("fuse: a scalar used in C++ arithmetic is part of the signature, still right") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = cf::fuse([](auto x, auto s) { return x * (s * 2); });
  auto x = cf::from_host(seq(50, 1, 1));
  CHECK(host<float>(f(x, 1.5)) == host<float>(x * 3.0));
  CHECK(host<float>(f(x, 2.5)) == host<float>(x * 5.0));
  CHECK(host<float>(f(x, 1.5)) == host<float>(x * 3.0));
  CHECK(f.stats().traces == 2);  // one per value, the repeat replays
  // a branch on a scalar too
  auto h = cf::fuse([](auto x, auto s) { return s > 0 ? x + 1 : x - 1; });
  CHECK(host<float>(h(x, 1)) == host<float>(x + 1));
  CHECK(host<float>(h(x, -1)) == host<float>(x - 1));
}

TEST_CASE("fuse: NumPy 2's OverflowError for a Python int that does not fit") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = cf::fuse([](auto x, auto s) { return x + s; });
  std::vector<uint8_t> v{1, 2, 3};
  auto x = cf::from_host(v);
  CHECK(host<uint8_t>(f(x, 4)) == std::vector<uint8_t>{5, 6, 7});
  CHECK_THROWS_AS(f(x, 300), cf::OverflowError);
  CHECK(host<uint8_t>(f(x, 250)) == std::vector<uint8_t>{251, 252, 253});
}

TEST_CASE("fuse: strong Scalar arguments promote like 0-d arrays") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = cf::fuse([](auto x, auto s) { return x * s; });
  auto x = cf::from_host(seq(8, 1, 1));
  auto r = f(x, cf::Scalar::typed(2.0, cf::f64));
  CHECK(r.dtype() == cf::f64);
  CHECK(host<double>(r) == host<double>(x * cf::Scalar::typed(2.0, cf::f64)));
  CHECK(host<double>(f(x, cf::Scalar::typed(-4.0, cf::f64))) == host<double>(x * cf::Scalar::typed(-4.0, cf::f64)));
  CHECK(f.stats().traces == 1);
}

TEST_CASE("fuse: captured arrays are read from their memory at every call") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto w = cf::from_host(seq(16, 1, 2));
  auto f = cf::fuse([w](auto x) { return x * w + 1; });
  auto x = cf::from_host(seq(16, 0, 1));
  CHECK(host<float>(f(x)) == host<float>(x * w + 1));
  w += 10;  // written in place: the next call sees it
  CHECK(host<float>(f(x)) == host<float>(x * w + 1));
  CHECK(f.stats().traces == 1);
  // a captured lazy expression and constants built inside are computed once, at trace
  auto lazy = w * 2;
  auto g = cf::fuse([lazy](auto x) { return x + lazy + cf::arange(16).astype(cf::f32); });
  auto r1 = host<float>(g(x));
  auto r2 = host<float>(g(x));
  CHECK(r1 == r2);
  CHECK(r1 == host<float>(x + w * 2 + cf::arange(16).astype(cf::f32)));
  w += 1;  // the lazy capture kept its value; work on captured memory inside sees the write
  CHECK(host<float>(g(x)) == r1);
  auto hsum = cf::fuse([w](auto x) { return x + cf::sum(w); });
  auto before = host<float>(hsum(x));
  w += 1;
  auto after = host<float>(hsum(x));
  CHECK(after[0] == doctest::Approx(before[0] + 16));
}

TEST_CASE("fuse: results: tuples, pairs, arrays, vectors; an argument returned is copied") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(seq(10, 1, 1));
  auto y = cf::from_host(seq(10, 5, -1));
  auto t = cf::fuse([](auto a, auto b) { return std::make_tuple(a + b, a - b, cf::sum(a * b)); });
  auto [s, d, dot] = t(x, y);
  CHECK(host<float>(s) == host<float>(x + y));
  CHECK(host<float>(d) == host<float>(x - y));
  CHECK(dot.item<float>() == doctest::Approx(cf::sum(x * y).item<float>()));
  auto p = cf::fuse([](auto a) { return std::make_pair(a * 2, a); });
  auto [twice, same] = p(x);
  CHECK(host<float>(twice) == host<float>(x * 2));
  CHECK(host<float>(same) == host<float>(x));
  same += 1;  // a new array: x is unchanged
  CHECK(host<float>(x) == seq(10, 1, 1));
  auto v = cf::fuse([](auto a) { return std::vector<cf::Array>{a + 1, a + 2, a + 1}; });
  auto r = v(x);
  REQUIRE(r.size() == 3);
  CHECK(host<float>(r[1]) == host<float>(x + 2));
  auto arr = cf::fuse([](auto a) { return std::array<cf::Array, 2>{a, a}; });
  auto two = arr(x);
  CHECK(two[0].node() == two[1].node());  // one array returned twice is one array
}

TEST_CASE("fuse: reductions, views and several kernels inside one function") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto softmax = cf::fuse([](auto a) {
    auto e = cf::exp(a - cf::max(a, 1, true));
    return e / cf::sum(e, 1, true);
  });
  std::vector<float> v = seq(12 * 40, -2, 0.01f);
  auto a = cf::from_host(v, cf::Shape{12, 40});
  auto want = [](const cf::Array& a) {
    auto e = cf::exp(a - cf::max(a, 1, true));
    return e / cf::sum(e, 1, true);
  };
  CHECK(host<float>(softmax(a)) == host<float>(want(a)));
  auto mixed = cf::fuse([](auto a) { return std::make_tuple(a.T() * 2, cf::sum(a, 0), a(cf::_, 3) + 1); });
  auto [t2, s0, c3] = mixed(a);
  CHECK(host<float>(t2) == host<float>(a.T() * 2));
  CHECK(host<float>(s0) == host<float>(cf::sum(a, 0)));
  CHECK(host<float>(c3) == host<float>(a(cf::_, 3) + 1));
}

TEST_CASE("fuse: a fused function called inside another is inlined into its trace") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto inner = cf::fuse(sqdiff);
  auto outer = cf::fuse([inner](auto x, auto y) { return cf::sqrt(inner(x, y)) + 1; });
  auto x = cf::from_host(seq(20, 1, 1));
  auto y = cf::from_host(seq(20, 0, 3));
  CHECK(host<float>(outer(x, y)) == host<float>(cf::sqrt(sqdiff(x, y)) + 1));
  CHECK(inner.stats().traces == 0);
  // the whole function is one kernel
  auto en = outer.engine()->entries.at(0);
  CHECK(en->ex->steps.size() == 1);
}

TEST_CASE("fuse: errors name the argument and what was expected") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = cf::fuse(sqdiff);
  cf::Array empty;
  auto x = cf::from_host(seq(8, 0, 1));
  try {
    f(x, empty);
    FAIL("an empty handle was accepted");
  } catch (const cf::ValueError& e) {
    CHECK(std::string(e.what()).find("argument 1") != std::string::npos);
  }
  auto y = cf::from_host(seq(9, 0, 1));
  try {
    f(x, y);
    FAIL("shapes that do not broadcast were accepted");
  } catch (const cf::ValueError& e) {
    const std::string w = e.what();
    CHECK(w.find("(8,)") != std::string::npos);
    CHECK(w.find("(9,)") != std::string::npos);
    CHECK(w.find("while tracing") != std::string::npos);
  }
  auto g = cf::fuse([](auto a) { return a + cf::sum(a).template item<float>(); });
  try {
    g(x);
    FAIL("item() inside a trace was accepted");
  } catch (const cf::ValueError& e) {
    CHECK(std::string(e.what()).find("move item()") != std::string::npos);
  }
  auto p = cf::placeholder(cf::f32, {8});
  CHECK_THROWS_WITH_AS(f(x, p), doctest::Contains("argument 1 is a placeholder"), cf::ValueError);
  auto h = cf::fuse([p](auto a) { return a + p; });
  CHECK_THROWS_WITH_AS(h(x), doctest::Contains("not one of its arguments"), cf::ValueError);
}

// The binding table: the parameters a replay launches with are the bytes the lazy path
// computes for the same expression on the same arrays (buffers and workspace alike).
TEST_CASE("fuse: replay parameters equal the lazy path's, byte for byte") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto w = cf::from_host(seq(64, 2, 0.5f), cf::Shape{8, 8});
  auto body = [w](const cf::Array& x, const cf::Array& y, double s) {
    auto v = (x - y.T()) * s + cf::arange(8).astype(cf::f32) + w(cf::_, cf::slice(cf::none, cf::none, -1));
    return std::make_tuple(v, cf::sum(v * v, 1), cf::exp(x[{cf::slice(1, 8)}] * 2.5f));
  };
  auto f = cf::fuse([body](auto x, auto y, auto s) { return body(x, y, s); });
  auto big = cf::from_host(seq(80, -1, 0.25f));
  auto x = big[{cf::slice(3, 67)}].reshape({8, 8});  // 12 bytes off a 64-byte boundary
  auto y = cf::from_host(seq(64, 1, -0.5f), cf::Shape{8, 8});
  const double s = 1.75;
  f(x, y, s);
  REQUIRE(f.stats().traces == 1);
  const auto& en = *f.engine()->entries.at(0);

  auto [v, r, e] = body(x, y, s);
  std::vector<cf::detail::NodePtr> roots{v.node(), r.node(), e.node()};
  cf::detail::GraphScan scan;
  cf::detail::scan_graph(roots, {}, scan);
  auto lazy = cf::detail::build_executable(roots, {}, scan, false, 90);
  REQUIRE(lazy->steps.size() == en.ex->steps.size());

  FuseArg args[3];
  args[0].array = &x;
  args[1].array = &y;
  args[2].scalar = cf::Scalar(s);
  const char* data[3];
  REQUIRE(cf::detail::matches(en, args, 3, data));
  std::vector<void*> bufs;
  for (size_t b = 0; b < std::max(lazy->buffers.size(), en.ex->buffers.size()); ++b)
    bufs.push_back(reinterpret_cast<void*>(0x10000 * (b + 1)));
  void* ws = reinterpret_cast<void*>(0x7770000);
  const cf::detail::ScanSource src(scan);
  for (size_t k = 0; k < lazy->steps.size(); ++k) {
    CHECK(lazy->steps[k].spec.source == en.ex->steps[k].spec.source);
    std::vector<unsigned char> want, got;
    cf::detail::apply_patches(want, lazy->steps[k].spec, src, bufs, ws);
    cf::detail::bind_step(en, k, args, data, bufs.data(), ws, got);
    CHECK_MESSAGE(want == got, "step " << k << ": " << lazy->steps[k].spec.name);
  }
  // and a second call with other arrays and another scalar binds those
  auto x2 = cf::from_host(seq(80, 7, 0.5f))[{cf::slice(3, 67)}].reshape({8, 8});
  auto y2 = cf::from_host(seq(64, 0, 1), cf::Shape{8, 8});
  args[0].array = &x2;
  args[1].array = &y2;
  args[2].scalar = cf::Scalar(-0.5);
  REQUIRE(cf::detail::matches(en, args, 3, data));
  auto [v2, r2, e2] = body(x2, y2, -0.5);
  std::vector<cf::detail::NodePtr> roots2{v2.node(), r2.node(), e2.node()};
  cf::detail::GraphScan scan2;
  cf::detail::scan_graph(roots2, {}, scan2);
  const cf::detail::ScanSource src2(scan2);
  for (size_t k = 0; k < lazy->steps.size(); ++k) {
    std::vector<unsigned char> want, got;
    cf::detail::apply_patches(want, lazy->steps[k].spec, src2, bufs, ws);
    cf::detail::bind_step(en, k, args, data, bufs.data(), ws, got);
    CHECK_MESSAGE(want == got, "second call, step " << k);
  }
}

TEST_CASE("fuse: what a trace assumed is checked at every call") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = cf::fuse(sqdiff);
  auto x = cf::from_host(seq(16, 0, 1));
  auto y = cf::from_host(seq(16, 1, 1));
  f(x, y);
  const auto& en = *f.engine()->entries.at(0);
  FuseArg args[2];
  const char* data[2];
  args[0].array = &x;
  args[1].array = &y;
  CHECK(cf::detail::matches(en, args, 2, data));
  auto xd = x.astype(cf::f64).eval();
  args[0].array = &xd;
  CHECK_FALSE(cf::detail::matches(en, args, 2, data));
  auto xs = cf::from_host(seq(32, 0, 1))[{cf::slice(cf::none, cf::none, 2)}];
  args[0].array = &xs;
  CHECK_FALSE(cf::detail::matches(en, args, 2, data));
  auto xo = cf::from_host(seq(17, 0, 1))[{cf::slice(1, 17)}];  // same shape and strides, misaligned
  args[0].array = &xo;
  CHECK_FALSE(cf::detail::matches(en, args, 2, data));
  args[0].array = nullptr;
  args[0].scalar = cf::Scalar(1.0);
  CHECK_FALSE(cf::detail::matches(en, args, 2, data));
}
