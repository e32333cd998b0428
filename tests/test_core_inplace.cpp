// tests/test_core_inplace.cpp: writes into memory (+=, slice assignment, assign) keep the
// promise that a lazy expression sees the values its inputs had when it was written.
#include <atomic>
#include <functional>
#include <thread>

#include "core/registry.hpp"
#include "test_core_helpers.hpp"

using cf::_;
using cf::none;
using cf::slice;

TEST_CASE("a pending expression is settled before its input is written") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<float>{1, 2, 3});
  auto y = x * 2;  // lazy, reads x
  x += 10;
  CHECK(host<float>(y) == std::vector<float>{2, 4, 6});
  CHECK(host<float>(x) == std::vector<float>{11, 12, 13});
  // through a view of x too
  auto z = x[{slice(none, none, -1)}] + 0;
  x[{0}] = 0.0f;
  CHECK(host<float>(z) == std::vector<float>{13, 12, 11});
  // and an alias of the handle sees the write (Python's names)
  auto alias = x;
  x *= 2;
  CHECK(host<float>(alias) == std::vector<float>{0, 24, 26});
}

TEST_CASE("overlapping reads go through a temporary, as NumPy does") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<int32_t>{1, 2, 3, 4});
  x[{slice(1, none)}] += x[{slice(none, -1)}];
  CHECK(host<int32_t>(x) == std::vector<int32_t>{1, 3, 5, 7});
  auto m = cf::arange(9).reshape({3, 3}).astype(cf::f64).eval();
  m += m.T();
  CHECK(host<double>(m) == std::vector<double>{0, 4, 8, 4, 8, 12, 8, 12, 16});
}

TEST_CASE("assign from a held expression: the expression keeps its own values") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<float>{1, 2});
  auto v = x + 1;
  x.assign(v * 10);
  CHECK(host<float>(x) == std::vector<float>{20, 30});
  CHECK(host<float>(v) == std::vector<float>{2, 3});
  x.assign(v);
  CHECK(host<float>(x) == std::vector<float>{2, 3});
}

TEST_CASE("a library result goes into a reversed, strided or transposed view through one scatter kernel") {
  // A library call writes densely from the pointer it gets: where the view is not dense, it
  // writes its own buffer and one elementwise kernel scatters it (device fuzz seed
  // 912959838175: a GEMM wrote v1[::-1] from its last row on, past the end of v1).
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::from_host(std::vector<double>{1, 2, 3, 4, 5, 6}, cf::Shape{3, 2});
  auto b = cf::from_host(std::vector<double>{1, 0, 2, -1}, cf::Shape{2, 2});  // a @ b: 5 -2, 11 -4, 17 -6
  auto steps = [](const std::function<void()>& f) {
    cf::reset_stats();
    f();
    return cf::stats().kernels_launched;
  };
  auto d = cf::zeros({3, 2}).eval();
  CHECK(steps([&] { d[{slice(none, none, -1)}] = cf::matmul(a, b); d.eval(); }) == 2);
  CHECK(host<double>(d) == std::vector<double>{17, -6, 11, -4, 5, -2});
  auto e = cf::zeros({6, 2}).eval();
  CHECK(steps([&] { e[{slice(none, none, 2)}] = cf::matmul(a, b); e.eval(); }) == 2);
  CHECK(host<double>(e) == std::vector<double>{5, -2, 0, 0, 11, -4, 0, 0, 17, -6, 0, 0});
  auto t = cf::zeros({2, 3}).eval();
  CHECK(steps([&] { t.T().assign(cf::matmul(a, b)); t.eval(); }) == 2);
  CHECK(host<double>(t) == std::vector<double>{5, 11, 17, -2, -4, -6});
  auto inv = cf::zeros({2, 2}).eval();
  CHECK(steps([&] { inv[{slice(none, none, -1)}] = cf::linalg::inv(b); inv.eval(); }) == 2);
  CHECK(host<double>(inv) == std::vector<double>{2, -1, 1, 0});
  // dense rows at an offset: the call writes them itself
  auto c = cf::zeros({4, 2}).eval();
  CHECK(steps([&] { c[{slice(1, none)}] = cf::matmul(a, b); c.eval(); }) == 1);
  CHECK(host<double>(c) == std::vector<double>{0, 0, 5, -2, 11, -4, 17, -6});
}

TEST_CASE("in-place casting rules: same_kind for operators, unsafe for assignment") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto i = cf::from_host(std::vector<int32_t>{1, 2});
  CHECK_THROWS_WITH_AS(i += 1.5, doctest::Contains("same_kind"), cf::TypeError);
  i[{_}] = 2.7;
  CHECK(host<int32_t>(i) == std::vector<int32_t>{2, 2});
  i.assign(cf::from_host(std::vector<double>{-1.9, 7.2}));
  CHECK(host<int32_t>(i) == std::vector<int32_t>{-1, 7});
  auto f = cf::from_host(std::vector<float>{1, 2});
  f += cf::from_host(std::vector<double>{0.5, 0.25});  // float64 -> float32 is same_kind
  CHECK(host<float>(f) == std::vector<float>{1.5f, 2.25f});
  CHECK_THROWS_WITH_AS(f += cf::zeros({3}), doctest::Contains("broadcast"), cf::ValueError);
  CHECK_THROWS_AS(f += cf::zeros({2, 2}), cf::ValueError);
  auto p = cf::placeholder(cf::f32, {2});
  CHECK_THROWS_AS(p += 1, cf::ValueError);
}

TEST_CASE("writing into a lazy array materializes it first") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(4).astype(cf::f32) * 2;  // lazy
  auto keep = a;                                 // the same array under another name
  auto later = a + 1;                            // an expression on the old values
  a[{slice(0, 2)}] = 9.0f;
  CHECK(host<float>(keep) == std::vector<float>{9, 9, 4, 6});
  CHECK(host<float>(later) == std::vector<float>{1, 3, 5, 7});
}

// The pending-roots registry holds plain pointers to nodes that other threads build and
// drop: a write walks every thread's roots while they come and go.
TEST_CASE("writes settle pending expressions while other threads build and drop theirs") {
  constexpr int kThreads = 4, kSteps = 300;
  std::atomic<int> wrong{0};
  auto work = [&](int t) {
    cf::BackendScope ref(cf::Backend::Reference);
    auto x = cf::from_host(std::vector<float>{1, 2, 3, 4});
    for (int i = 0; i < kSteps; ++i) {
      auto y = x * 2 + float(t);                 // pending, reads x
      { auto dropped = (x - 1) * (x + 1) / 3; }  // registered, then destroyed unevaluated
      auto kept = x - float(i);                  // a second root reading x
      x += 1.0f;                                 // settles y and kept first
      auto hy = host<float>(y);
      auto hk = host<float>(kept);
      for (int k = 0; k < 4; ++k) {
        if (hy[k] != float(2 * (k + 1 + i) + t)) wrong++;
        if (hk[k] != float(k + 1)) wrong++;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (auto& th : threads) th.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("the pending-roots registry does not grow with the arrays a program keeps") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<float>{1, 2, 3});
  const size_t before = cf::detail::registered_roots();
  std::vector<cf::Array> kept;
  for (int i = 0; i < 500; ++i) {
    kept.push_back(x * float(i) + 1);  // registered while lazy
    kept.back().eval();                // realized: off the registry
  }
  auto lazy = x * 5;  // one pending root
  CHECK(cf::detail::registered_roots() <= before + 1);
  x += 1;  // settles `lazy` only
  CHECK(host<float>(lazy) == std::vector<float>{5, 10, 15});
  CHECK(host<float>(kept[499]) == std::vector<float>{500, 999, 1498});
}

TEST_CASE("Array handles count exactly when threads copy and assign one array at once") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<float>{1, 2, 3});
  cf::Array shared = x * 2;  // lazy: its count decides whether a write settles it
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50000; ++i) {
        cf::Array assigned;
        assigned = shared;
        cf::Array copy(shared);
      }
    });
  for (auto& th : threads) th.join();
  CHECK(shared.node()->array_refs.load() == 1);
  x += 1;  // still counted as held: settled first
  CHECK(host<float>(shared) == std::vector<float>{2, 4, 6});
}

TEST_CASE("an op's temporaries leave the pending-roots registry when the op takes them") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<float>{1, 2, 3});
  auto y = cf::from_host(std::vector<float>{4, 5, 6});
  const size_t before = cf::detail::registered_roots();
  // Ten temporaries, each held by an Array for a moment: only the named result stays listed.
  cf::Array z = ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1);
  CHECK(cf::detail::registered_roots() == before + 1);
  // A temporary whose node another Array also holds stays listed, and a write settles it.
  cf::Array t = x - y;
  cf::Array u = t;
  cf::Array w = std::move(t) * 2;
  CHECK(cf::detail::registered_roots() == before + 3);  // z, u (= t's node) and w
  x += 10;
  CHECK(host<float>(u) == std::vector<float>{-3, -3, -3});
  CHECK(host<float>(w) == std::vector<float>{-6, -6, -6});
  CHECK(host<float>(z) == std::vector<float>{-13, -35, -75});
  // Held by an Array again after its temporary gave it up: listed again, and settled.
  FmaScope op_by_op(false);  // x * y stays a node of its own
  cf::Array q = x * y + 1;
  cf::Array inner(q.node()->inputs[0]);  // the given-up node of x * y
  y += 1;
  CHECK(host<float>(inner) == std::vector<float>{44, 60, 78});
  CHECK(host<float>(q) == std::vector<float>{45, 61, 79});
}
