// tests/gpu/test_graph_launch_gpu.cpp: plans replayed as one CUDA graph launch
// (src/runtime/kernel_chain.hpp). A lazy plan goes out as a graph from its third run, a fused
// function's from its first; every run binds its own inputs, scalars, outputs and workspaces
// and gives the bits of one launch per kernel; each stream has its graph, so a blocked stream
// holds up no other (and more streams than a chain keeps graphs for still work); and a
// stream being captured by the user gets the kernels one by one, captured as kernels.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <tuple>

#include "gpu_compare.hpp"
#include "runtime/kernel_chain.hpp"

namespace {

auto body = [](auto x, auto y, auto s) {
  auto d = (x - y) * (x + y) * s + x * 3;
  return std::make_tuple(d, cf::sum(d * x, 1), cf::cumsum(y, 1) - s);
};

uint64_t graph_launches() { return cf::stats().graph_launches; }

// The counts below assume graphs on (CUFUSE_GRAPHS unset).
#define SKIP_WITHOUT_GRAPHS()                                                \
  if (!cf::detail::chains_enabled()) {                                       \
    MESSAGE("skipped: CUFUSE_GRAPHS=0 turns graph launches off");            \
    return;                                                                  \
  }

cf::FuseOptions no_graph() {
  cf::FuseOptions o;
  o.cuda_graph = false;
  return o;
}

}  // namespace

TEST_CASE("graph launches: a lazy plan run repeatedly goes out as one graph launch from its third run") {
  SKIP_WITHOUT_GRAPHS();
  auto direct = cf::fuse(body, no_graph());  // the same kernels, one launch each
  for (int round = 0; round < 6; ++round) {
    CAPTURE(round);
    auto x = random_array(cf::f32, {96, 3000}, kFinite);  // split row sums: a workspace each run
    auto y = random_array(cf::f32, {96, 3000}, kFinite);
    const double s = 0.25 * round - 0.6;
    auto [a, r, c] = body(x, y, s);
    CHECK(check_against_reference(a, 2, "elementwise") == 0);
    cf::synchronize();
    const uint64_t before = graph_launches();
    cf::eval(a, r, c);
    // One plan of one structure: from its third run on, one graph (an earlier test may have
    // run a plan of this structure already: plans are generic over sizes).
    if (round >= 2) CHECK(graph_launches() - before == 1);
    else CHECK(graph_launches() - before <= 1);
    auto [ea, er, ec] = direct(x, y, s);
    CHECK(same_bits(a, ea));
    CHECK(same_bits(r, er));
    CHECK(same_bits(c, ec));
  }
  CHECK(direct.stats().graph_launches == 0);
}

TEST_CASE("graph launches: fused calls replay as graphs by default, with the bits of plain launches") {
  SKIP_WITHOUT_GRAPHS();
  auto f = cf::fuse(body);
  auto direct = cf::fuse(body, no_graph());
  cf::Array x, y;
  for (int round = 0; round < 5; ++round) {
    CAPTURE(round);
    // The same inputs twice in a row (parameters unchanged: no node update), then new ones.
    if (round % 2 == 0) {
      x = random_array(cf::f32, {40, 513}, kFinite);
      y = random_array(cf::f32, {40, 513}, kFinite);
    }
    const double s = round == 3 ? 0.5 : 1.5;
    auto [a, r, c] = f(x, y, s);
    auto [ea, er, ec] = direct(x, y, s);
    CHECK(same_bits(a, ea));
    CHECK(same_bits(r, er));
    CHECK(same_bits(c, ec));
  }
  CHECK(f.stats().traces == 1);
  CHECK(f.stats().graph_launches == 5);
  // A call with empty arrays has no kernel to run: no graph, and empty results.
  auto [a, r, c] = f(cf::zeros({0, 7}, cf::f32), cf::zeros({0, 7}, cf::f32), 1.0);
  CHECK(a.size() == 0);
  CHECK(r.size() == 0);
  CHECK(f.stats().graph_launches == 5);
}

TEST_CASE("graph launches: one fused function on more streams than a chain keeps graphs for") {
  SKIP_WITHOUT_GRAPHS();
  auto f = cf::fuse(body);
  std::vector<cf::Stream> streams(11);
  auto x = random_array(cf::f32, {16, 700}, kFinite);
  auto y = random_array(cf::f32, {16, 700}, kFinite);
  auto [ea, er, ec] = body(x, y, 2.0);
  cf::eval(ea, er, ec);
  cf::synchronize();
  int wrong = 0;
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < streams.size(); ++i) {
      cf::Array a, r, c;
      {
        cf::StreamScope on(streams[i]);
        std::tie(a, r, c) = f(x, y, 2.0);
      }
      streams[i].synchronize();
      wrong += !same_bits(a, ea) + !same_bits(r, er) + !same_bits(c, ec);
    }
  CHECK(wrong == 0);
  CHECK(f.stats().graph_launches == 33);
}

// Launches of one executable graph are ordered behind each other on any stream: a chain
// sharing one across streams would make stream 2 wait for stream 1. Stream 1 is held by a
// host function until stream 2's call is done (or 10 s pass: then the test fails, not hangs).
TEST_CASE("graph launches: a stream held up holds up no other stream's graph of the same function") {
  SKIP_WITHOUT_GRAPHS();
  auto f = cf::fuse(body);
  auto x = random_array(cf::f32, {8, 300}, kFinite);
  auto y = random_array(cf::f32, {8, 300}, kFinite);
  cf::Stream s1, s2;
  for (cf::Stream* s : {&s1, &s2}) {  // both streams' graphs exist before the test proper
    cf::StreamScope on(*s);
    f(x, y, 1.0);
    s->synchronize();
  }
  std::atomic<bool> release{false};
  auto hold = [](void* flag) {
    auto* r = static_cast<std::atomic<bool>*>(flag);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!r->load() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  REQUIRE(cudaLaunchHostFunc(static_cast<cudaStream_t>(s1.native()), hold, &release) == cudaSuccess);
  cf::Array a1, a2;
  {
    cf::StreamScope on(s1);
    a1 = std::get<0>(f(x, y, 1.0));
  }
  {
    cf::StreamScope on(s2);
    a2 = std::get<0>(f(x, y, 1.0));
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!s2.query() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool s2_done_while_s1_held = s2.query();
  const bool s1_still_held = !s1.query();
  release = true;
  s1.synchronize();
  CHECK(s2_done_while_s1_held);
  CHECK(s1_still_held);
  CHECK(same_bits(a1, a2));
}

// cudaGraphLaunch is refused inside a stream capture (and the capture would fail): there a
// plan whose chain exists launches its kernels one by one, and the capture holds them.
TEST_CASE("graph launches: inside a user's stream capture the kernels are captured one by one") {
  SKIP_WITHOUT_GRAPHS();
  auto x = random_array(cf::f32, {64, 257}, kFinite);
  auto y = random_array(cf::f32, {64, 257}, kFinite);
  cf::Array z = cf::zeros({64, 257}, cf::f32);
  cf::Array t = cf::zeros({64}, cf::f32);
  cf::Stream s;
  cf::StreamScope on(s);
  auto write = [&] {
    z.assign(x * y + 1);
    t.assign(cf::sum(x * y + 1, 1));
  };
  for (int i = 0; i < 3; ++i) write();  // the plans' chains exist now
  s.synchronize();
  const auto cs = static_cast<cudaStream_t>(s.native());
  REQUIRE(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  const uint64_t before = graph_launches();
  z.assign(cf::zeros({64, 257}, cf::f32));
  write();
  cudaGraph_t g = nullptr;
  REQUIRE(cudaStreamEndCapture(cs, &g) == cudaSuccess);
  CHECK(graph_launches() == before);
  cudaGraphExec_t ex = nullptr;
  REQUIRE(cudaGraphInstantiate(&ex, g, 0) == cudaSuccess);
  // New values in x: the captured kernels read its memory when the user's graph runs.
  auto x2 = random_array(cf::f32, {64, 257}, kFinite);
  x.assign(x2);
  z.assign(cf::zeros({64, 257}, cf::f32));
  s.synchronize();
  REQUIRE(cudaGraphLaunch(ex, cs) == cudaSuccess);
  s.synchronize();
  CHECK(same_bits(z, (x2 * y + 1).eval()));
  CHECK(same_bits(t, cf::sum(x2 * y + 1, 1).eval()));
  cudaGraphExecDestroy(ex);
  cudaGraphDestroy(g);
}
