// tests/gpu/test_fuse_gpu.cpp: cufuse::fuse on a device: replays give the unfused
// expression's bits (same kernels) and the reference's values, one kernel launch per
// kernel, traced once per signature; strided, reversed and misaligned arguments; captured
// arrays; scalar arguments; reductions with workspaces; library calls; several results;
// CUDA graph replay; user streams.
#include <tuple>

#include "gpu_compare.hpp"

namespace {

auto sqdiff = [](auto x, auto y) { return (x - y) * (x - y); };
auto w7b = [](auto x, auto y) { return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1); };

template <class T>
std::vector<T> host(const cf::Array& a) {
  return a.to_host<T>();
}

uint64_t launches() { return cf::stats().kernels_launched; }

}  // namespace

TEST_CASE("fuse gpu: W7a and W7b: the unfused bits, one launch per call, one trace") {
  auto f = cf::fuse(sqdiff);
  auto g = cf::fuse(w7b);
  for (int round = 0; round < 4; ++round) {
    auto x = random_array(cf::f32, {10000});
    auto y = random_array(cf::f32, {10000});
    auto a = f(x, y);
    auto b = g(x, y);
    CHECK(same_bits(a, sqdiff(x, y)));
    CHECK(same_bits(b, w7b(x, y)));
    CHECK(check_against_reference(sqdiff(x, y), 0, "W7a") == 0);
    cf::synchronize();
    const uint64_t before = launches();
    auto c = f(x, y);
    CHECK(launches() - before == 1);
    CHECK(same_bits(c, a));
  }
  CHECK(f.stats().traces == 1);
  CHECK(g.stats().traces == 1);
}

TEST_CASE("fuse gpu: seed 004's arange and reversed arange, strided and misaligned arguments") {
  auto f = cf::fuse(sqdiff);
  auto base = cf::arange(10000).eval();
  auto x = cf::arange(10000).eval();
  auto y = base[{cf::slice(cf::none, cf::none, -1)}];
  CHECK(same_bits(f(x, y), sqdiff(x, y)));
  auto big = random_array(cf::f32, {20011});
  auto xs = big[{cf::slice(1, 20001, 2)}];         // strided, 4 bytes off alignment
  auto ym = big[{cf::slice(3, 10003)}];            // contiguous, 12 bytes off
  auto z = f(xs, ym);
  CHECK(same_bits(z, sqdiff(xs, ym)));
  CHECK(check_against_reference(sqdiff(xs, ym), 0, "strided/misaligned") == 0);
  auto m = random_array(cf::f64, {300, 200});
  CHECK(same_bits(f(m.T(), m.T() * 2), sqdiff(m.T(), m.T() * 2)));
  CHECK(f.stats().traces == 3);  // (i64, i64 reversed), (f32 strided, f32 misaligned), (f64 transposed, f64)
}

TEST_CASE("fuse gpu: captured arrays are read at every call; scalars are parameters") {
  auto w = random_array(cf::f32, {4096});
  auto f = cf::fuse([w](auto x, auto a, auto b) { return x * w * a + b; });
  auto x = random_array(cf::f32, {4096});
  for (double a : {1.5, -2.0, 0.375}) {
    CHECK(same_bits(f(x, a, 3), x * w * a + 3));
    w += 1.0f;
  }
  CHECK(f.stats().traces == 1);
}

TEST_CASE("fuse gpu: reductions (split with workspaces), softmax, several results") {
  auto stats = cf::fuse([](auto x, auto y) {
    auto d = x - y;
    return std::make_tuple(cf::sum(d * d), cf::max(cf::abs(d), 1), d * 2);
  });
  auto softmax = cf::fuse([](auto a) {
    auto e = cf::exp(a - cf::max(a, 1, true));
    return e / cf::sum(e, 1, true);
  });
  for (int round = 0; round < 3; ++round) {
    auto x = random_array(cf::f32, {512, 2048}, kFinite);
    auto y = random_array(cf::f32, {512, 2048}, kFinite);
    auto [s, m, d2] = stats(x, y);
    auto d = x - y;
    CHECK(same_bits(s, cf::sum(d * d)));
    CHECK(same_bits(m, cf::max(cf::abs(d), 1)));
    CHECK(same_bits(d2, d * 2));
    auto p = softmax(x);
    auto e = cf::exp(x - cf::max(x, 1, true));
    CHECK(same_bits(p, e / cf::sum(e, 1, true)));
  }
  CHECK(stats.stats().traces == 1);
}

TEST_CASE("fuse gpu: a library call inside a fused function") {
  auto f = cf::fuse([](auto a, auto b) { return cf::matmul(a, b.T()) * 0.5f + 1; });
  auto a = random_array(cf::f32, {64, 96}, kFinite);
  auto b = random_array(cf::f32, {80, 96}, kFinite);
  for (int i = 0; i < 2; ++i) CHECK(same_bits(f(a, b), cf::matmul(a, b.T()) * 0.5f + 1));
  CHECK(f.stats().traces == 1);
}

TEST_CASE("fuse gpu: CUDA graph replay of a plan of several kernels") {
  cf::FuseOptions opt;
  opt.cuda_graph = true;
  auto body = [](auto x, auto y, auto s) {
    return std::make_tuple(x * y + s, cf::sum(x * y, 1), cf::cumsum(x, 1) - s);
  };
  auto f = cf::fuse(body, opt);
  for (int round = 0; round < 4; ++round) {
    auto x = random_array(cf::f32, {256, 300}, kFinite);
    auto y = random_array(cf::f32, {256, 300}, kFinite);
    const double s = 0.5 * round - 1;
    auto [a, r, c] = f(x, y, s);
    auto [ea, er, ec] = body(x, y, s);
    CHECK(same_bits(a, ea));
    CHECK(same_bits(r, er));
    CHECK(same_bits(c, ec));
  }
  CHECK(f.stats().traces == 1);
  CHECK(f.stats().graph_launches == 4);
}

TEST_CASE("fuse gpu: calls on a user stream, results used on another") {
  auto f = cf::fuse(w7b);
  cf::Stream s1, s2;
  auto x = random_array(cf::f32, {1 << 18});
  auto y = random_array(cf::f32, {1 << 18});
  cf::synchronize();
  cf::Array r;
  {
    cf::StreamScope on(s1);
    r = f(x, y);
  }
  cf::Event done;
  done.record(s1);
  s2.wait(done);
  cf::Array t;
  {
    cf::StreamScope on(s2);
    t = (r + 1).eval();
  }
  s2.synchronize();
  // r is a named result: r + 1 is rounded after r (no fma across it), as e + 1 is.
  const cf::Array e = w7b(x, y);
  CHECK(same_bits(t, e + 1));
}

// One fused function (and its CUDA-graph twin) called from four threads at once, each on
// its own stream, sharing one read-only argument: traces, replays and graph launches of
// one engine interleave, and every result keeps the bits of the same body run lazily.
TEST_CASE("fuse gpu: one fused function called from four threads at once, each on its own stream") {
  constexpr int kThreads = 4, kCalls = 150;
  auto body = [](auto x, auto y, auto s) {
    auto d = w7b(x, y) * s;
    return std::make_tuple(d, cf::sum(d * x, 1), cf::cumsum(y, 1) - s);
  };
  for (bool graph : {false, true}) {
    CAPTURE(graph);
    cf::FuseOptions opt;
    opt.cuda_graph = graph;
    auto f = cf::fuse(body, opt);
    auto x = random_array(cf::f32, {64, 1000}, kFinite);  // every thread reads it
    std::vector<cf::Array> ys;
    for (int t = 0; t < kThreads; ++t) ys.push_back(random_array(cf::f32, {64, 1000}, kFinite));
    cf::synchronize();
    std::vector<int> wrong(kThreads, 0);
    const std::vector<std::string> errors = on_threads_with_own_streams(kThreads, [&](int t) {
      const cf::Array& y = ys[static_cast<size_t>(t)];
      for (int i = 0; i < kCalls; ++i) {
        const double scale = 0.25 * (i % 7) - 0.5 + t;
        auto [a, r, c] = f(x, y, scale);
        if (i % 10 != 0) continue;  // every tenth call checked, the others keep the engine busy
        auto [ea, er, ec] = body(x, y, scale);
        wrong[static_cast<size_t>(t)] += !same_bits(a, ea) + !same_bits(r, er) + !same_bits(c, ec);
      }
    });
    for (int t = 0; t < kThreads; ++t) {
      CAPTURE(t);
      CHECK(errors[static_cast<size_t>(t)] == "");
      CHECK(wrong[static_cast<size_t>(t)] == 0);
    }
    CHECK(f.stats().traces >= 1);
    CHECK(f.stats().replays == static_cast<uint64_t>(kThreads * kCalls));
    if (graph) CHECK(f.stats().graph_launches > 0);
  }
}
