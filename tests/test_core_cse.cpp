// tests/test_core_cse.cpp: common-subexpression elimination (src/plan/cse.hpp) on the
// reference backend: identical subexpressions of one evaluation are computed once (a GEMM
// written twice is one GEMM), values match a run without the pass, duplicates held by
// their own handles stay their own arrays, and what differs (seeds, -0.0 and 0.0,
// placeholders, user code) is never merged.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <time.h>

#include "test_core_helpers.hpp"

#include "plan/cse.hpp"

namespace cd = cf::detail;

namespace {

std::vector<cd::NodePtr> roots_of(const std::vector<cf::Array>& arrs) {
  std::vector<cd::NodePtr> roots;
  for (const auto& a : arrs) {
    bool dup = false;
    for (const auto& r : roots) dup |= r.get() == a.node().get();
    if (!a.node()->is_materialized() && !dup) roots.push_back(a.node());
  }
  return roots;
}

// The pass over these results' graph, as the executor runs it at the start of an evaluation
// (on for this call unless `as_set`: then as CUFUSE_CSE / set_cse_enabled say).
int cse(const std::vector<cf::Array>& arrs, bool as_set = false) {
  std::lock_guard<std::recursive_mutex> lk(cd::graph_mutex());
  const bool was = cd::cse_enabled();
  if (!as_set) cd::set_cse_enabled(true);
  const int d = cd::eliminate_common_subexpressions(roots_of(arrs));
  cd::set_cse_enabled(was);
  return d;
}

// Runs the pass, then evaluates; returns the kernels (library calls included) launched.
uint64_t eval_with_cse(const std::vector<cf::Array>& arrs, int* dups = nullptr) {
  cf::reset_stats();
  const int d = cse(arrs);
  if (dups) *dups = d;
  cf::eval_all(arrs);
  return cf::stats().kernels_launched;
}

// The pass off (for the executor's own call too) while it lives.
struct CseOff {
  bool was = cd::cse_enabled();
  CseOff() { cd::set_cse_enabled(false); }
  ~CseOff() { cd::set_cse_enabled(was); }
};

uint64_t eval_without_cse(const std::vector<cf::Array>& arrs) {
  CseOff off;
  cf::reset_stats();
  CHECK(cse(arrs, true) == 0);  // off: changes nothing
  cf::eval_all(arrs);
  return cf::stats().kernels_launched;
}

size_t library_groups(const std::vector<cf::Array>& outs) {
  const auto ex = plan_of(outs);
  size_t n = 0;
  for (const auto& g : ex->plan.groups) n += g.kind == cd::GroupKind::Library;
  return n;
}
size_t reductions_planned(const std::vector<cf::Array>& outs) {
  const auto ex = plan_of(outs);
  size_t n = 0;
  for (const auto& g : ex->plan.groups) n += g.reductions.size();
  return n;
}

cf::Array vec(int n, double scale, double shift) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = std::sin(scale * (i + 1)) + shift;
  return cf::from_host(v);
}
cf::Array mat(int n) {
  std::vector<double> v(static_cast<size_t>(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) v[static_cast<size_t>(i) * n + j] = (i == j ? n : 0.0) + 1.0 / (1 + i + j);
  return cf::from_host(v, cf::Shape{n, n});
}

double thread_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

template <class T>
void check_same(const cf::Array& a, const cf::Array& b) {
  const auto x = host<T>(a), y = host<T>(b);
  REQUIRE(x.size() == y.size());
  for (size_t i = 0; i < x.size(); ++i) CHECK(std::memcmp(&x[i], &y[i], sizeof(T)) == 0);
}

// CuPy's conjugate-gradient example, ported literally: A @ p and r0 . r0 twice.
struct CgStep {
  cf::Array alpha, r1, norm;
};
CgStep cg_step(const cf::Array& A, const cf::Array& p, const cf::Array& r0) {
  CgStep s;
  s.alpha = cf::inner(r0, r0) / cf::inner(p, cf::dot(A, p));
  s.r1 = r0 - s.alpha * cf::dot(A, p);
  s.norm = cf::linalg::norm(s.r1);
  return s;
}

}  // namespace

TEST_CASE("cse: matmul(A, p) twice in one expression is one GEMM") {
  cf::BackendScope ref(cf::Backend::Reference);
  const auto A = mat(48);
  const auto p = vec(48, 0.3, 0.1);
  auto build = [&] { return cf::matmul(A, p) * 2 + cf::sin(cf::matmul(A, p)); };
  auto plain = build();
  CHECK(library_groups({plain}) == 2);
  CHECK(eval_without_cse({plain}) == 3);  // two GEMMs and the kernel after them

  auto y = build();
  CHECK(cse({y}) == 1);  // the second matmul node
  CHECK(library_groups({y}) == 1);
  CHECK(eval_with_cse({y}) == 2);  // one GEMM and the kernel after it
  check_same<double>(y, plain);
}

TEST_CASE("cse: sum(x*x) and inner(r0, r0) used twice are reduced once") {
  cf::BackendScope ref(cf::Backend::Reference);
  const auto x = vec(1000, 0.01, 0.5);
  auto build = [&] { return cf::sum(x * x) / (cf::sum(x * x) + 1); };
  auto plain = build();
  CHECK(reductions_planned({plain}) == 2);
  CHECK(eval_without_cse({plain}) == 1);  // siblings: both sums already share one kernel...

  auto y = build();
  CHECK(cse({y}) == 2);  // x*x and its sum
  CHECK(reductions_planned({y}) == 1);  // ...which now reduces once
  CHECK(eval_with_cse({y}) == 1);  // the division is its epilogue
  check_same<double>(y, plain);

  auto build_inner = [&] { return cf::inner(x, x) * cf::inner(x, x); };
  auto plain_i = build_inner();
  CHECK(reductions_planned({plain_i}) == 2);
  eval_without_cse({plain_i});
  auto yi = build_inner();
  CHECK(cse({yi}) == 5);  // the second vector_dot: its astype copies, product, sum and cast
  CHECK(reductions_planned({yi}) == 1);
  CHECK(eval_with_cse({yi}) == 1);
  check_same<double>(yi, plain_i);
}

TEST_CASE("cse: the conjugate-gradient step runs one GEMV, with NumPy's values") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int n = 64;
  const auto A = mat(n);
  const auto p = vec(n, 0.7, 0.0);
  const auto r0 = vec(n, 0.2, 0.3);

  CgStep plain = cg_step(A, p, r0);
  CHECK(library_groups({plain.norm}) == 2);
  // r0 . r0; GEMV; p . Ap (materialized); GEMV again; r1 and its norm; alpha and r1, which
  // handles name, are written out too (exec/executor.cpp: gather_roots).
  CHECK(eval_without_cse({plain.norm}) == 7);

  CgStep s = cg_step(A, p, r0);
  CHECK(library_groups({s.norm}) == 2);
  CHECK(cse({s.norm}) >= 1);
  CHECK(library_groups({s.norm}) == 1);
  cf::reset_stats();
  cf::eval_all({s.norm});
  // r0 . r0; one GEMV; p . Ap with alpha; r1 and its norm (Ap is one value now).
  CHECK(cf::stats().kernels_launched == 5);
  check_same<double>(s.norm, plain.norm);
  // alpha and r1 are interior nodes their handles hold: untouched, evaluated on their own.
  check_same<double>(s.alpha, plain.alpha);
  check_same<double>(s.r1, plain.r1);

  // All three results in one evaluation: one GEMV for the lot.
  CgStep t = cg_step(A, p, r0);
  CHECK(library_groups({t.alpha, t.r1, t.norm}) == 2);
  CHECK(cse({t.alpha, t.r1, t.norm}) >= 1);
  CHECK(library_groups({t.alpha, t.r1, t.norm}) == 1);
  cf::eval_all({t.alpha, t.r1, t.norm});
  check_same<double>(t.alpha, plain.alpha);
  check_same<double>(t.r1, plain.r1);
  check_same<double>(t.norm, plain.norm);

  // The host values of the CG step, computed here in double: the pass changed no value.
  const auto Ah = host<double>(A), ph = host<double>(p), rh = host<double>(r0);
  double rr = 0, pAp = 0;
  std::vector<double> Ap(n, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) Ap[i] += Ah[static_cast<size_t>(i) * n + j] * ph[j];
    rr += rh[i] * rh[i];
  }
  for (int i = 0; i < n; ++i) pAp += ph[i] * Ap[i];
  const double a = rr / pAp;
  double nn = 0;
  for (int i = 0; i < n; ++i) nn += (rh[i] - a * Ap[i]) * (rh[i] - a * Ap[i]);
  CHECK(t.alpha.item<double>() == doctest::Approx(a).epsilon(1e-12));
  CHECK(t.norm.item<double>() == doctest::Approx(std::sqrt(nn)).epsilon(1e-12));
}

TEST_CASE("cse: a whole conjugate-gradient iteration, ported literally, evaluated at once") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int n = 64;
  const auto A = mat(n);
  const auto x0 = vec(n, 0.0, 0.0);
  const auto b = vec(n, 0.4, 0.2);
  // CuPy's example: dot(A, p) and inner(r0, r0) are each written twice per iteration.
  auto iteration = [&](const cf::Array& x, const cf::Array& r0, const cf::Array& p) {
    auto a = cf::inner(r0, r0) / cf::inner(p, cf::dot(A, p));
    auto x1 = x + a * p;
    auto r1 = r0 - a * cf::dot(A, p);
    auto beta = cf::inner(r1, r1) / cf::inner(r0, r0);
    auto p1 = r1 + beta * p;
    return std::vector<cf::Array>{x1, r1, p1, cf::linalg::norm(r1)};
  };
  auto run = [&](bool with_cse, int iters, uint64_t& gemvs, uint64_t& kernels) {
    CseOff off_when_asked;
    if (with_cse) cd::set_cse_enabled(true);
    cf::Array x = x0, r0 = b - cf::dot(A, x0), p = r0;
    r0.eval();
    gemvs = kernels = 0;
    std::vector<cf::Array> out;
    for (int i = 0; i < iters; ++i) {
      out = iteration(x, r0, p);
      if (with_cse) CHECK(cse(out) >= 3);  // dot(A, p), inner(r0, r0), and what reads only them
      gemvs += library_groups(out);
      cf::reset_stats();
      cf::eval_all(out);
      kernels += cf::stats().kernels_launched;
      x = out[0], r0 = out[1], p = out[2];
    }
    return out;
  };
  uint64_t g0, k0, g1, k1;
  const auto plain = run(false, 3, g0, k0);
  const auto merged = run(true, 3, g1, k1);
  CHECK(g0 == 3 * 2);  // two GEMVs an iteration without the pass
  CHECK(g1 == 3 * 1);  // one with it
  CHECK(k0 == 3 * 7);
  CHECK(k1 == 3 * 6);  // one GEMV fewer an iteration
  for (size_t i = 0; i < plain.size(); ++i) check_same<double>(merged[i], plain[i]);
}

TEST_CASE("cse: duplicates held by their own handles stay independent arrays") {
  cf::BackendScope ref(cf::Backend::Reference);
  FmaScope op_by_op(false);  // the counts below are of the op-by-op graphs
  const auto x = vec(256, 0.05, 0.0);
  const auto xs = host<double>(x);

  SUBCASE("two elementwise roots: one kernel writes both") {
    auto a = x * 2 + 1, b = x * 2 + 1;
    int dups = 0;
    CHECK(eval_with_cse({a, b}, &dups) == 1);
    CHECK(dups == 2);
    CHECK(a.node().get() != b.node().get());
    CHECK(a.node()->storage != b.node()->storage);
    a += 1;
    const auto av = host<double>(a), bv = host<double>(b);
    for (size_t i = 0; i < xs.size(); ++i) {
      CHECK(av[i] == xs[i] * 2 + 1 + 1);
      CHECK(bv[i] == xs[i] * 2 + 1);
    }
  }
  SUBCASE("two reduction roots: one kernel") {
    auto a = cf::sum(x * x), b = cf::sum(x * x);
    CHECK(eval_with_cse({a, b}) == 1);
    const double s = b.item<double>();
    b += 1;
    CHECK(a.item<double>() == s);
    CHECK(b.item<double>() == s + 1);
  }
  SUBCASE("two GEMM roots: one GEMM and a copy") {
    const auto A = mat(32);
    const auto p = vec(32, 0.9, 0.0);
    auto plain = cf::matmul(A, p);
    eval_without_cse({plain});
    auto a = cf::matmul(A, p), b = cf::matmul(A, p);
    CHECK(library_groups({a, b}) == 2);
    CHECK(cse({a, b}) == 1);
    CHECK(library_groups({a, b}) == 1);
    cf::reset_stats();
    cf::eval_all({a, b});
    CHECK(cf::stats().kernels_launched == 2);  // the GEMM, and b's copy of it
    a += 1;
    check_same<double>(b, plain);
    check_same<double>(a, plain + 1);
  }
  SUBCASE("interior duplicates held by handles keep their own graphs") {
    auto a = x * 3, b = x * 3;
    auto c = a + b;
    int dups = 0;
    CHECK(eval_with_cse({c}, &dups) == 1);
    CHECK(dups == 1);
    // a, named by a handle and read by c, is written out with c; b (merged into a before the
    // evaluation, so no longer under c) keeps its own lazy graph.
    CHECK(a.node()->is_materialized());
    CHECK_FALSE(b.node()->is_materialized());
    a += 1;
    const auto av = host<double>(a), bv = host<double>(b), cv = host<double>(c);
    for (size_t i = 0; i < xs.size(); ++i) {
      CHECK(av[i] == xs[i] * 3 + 1);
      CHECK(bv[i] == xs[i] * 3);
      CHECK(cv[i] == xs[i] * 3 + xs[i] * 3);
    }
  }
}

TEST_CASE("cse: what differs is never merged") {
  cf::BackendScope ref(cf::Backend::Reference);
  FmaScope op_by_op(false);  // the counts below are of the op-by-op graphs
  SUBCASE("random generators: different seeds or fresh counters differ; one seed is one value") {
    auto u1 = cf::random::uniform({512}, cf::f32, 1), u2 = cf::random::uniform({512}, cf::f32, 2);
    auto d = u1 - u2;
    CHECK(cse({d}) == 0);
    auto r1 = cf::random::uniform({512}, cf::f32), r2 = cf::random::uniform({512}, cf::f32);
    auto e = r1 - r2;
    CHECK(cse({e}) == 0);
    cf::eval_all({d, e});
    CHECK(cf::max(cf::abs(d)).item<float>() > 0);
    CHECK(cf::max(cf::abs(e)).item<float>() > 0);
    auto s1 = cf::random::normal({512}, cf::f32, 7), s2 = cf::random::normal({512}, cf::f32, 7);
    auto z = s1 * 2 - s2 * 2;
    CHECK(cse({z}) == 2);  // the same seed and counters: the same numbers (and their doubles)
    CHECK(cf::max(cf::abs(z)).item<float>() == 0);
  }
  SUBCASE("0.0 and -0.0 are different scalars") {
    auto x = cf::from_host(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
    auto a = 1.0 / (x * 0.0), b = 1.0 / (x * -0.0);
    CHECK(cse({a, b}) == 0);
    cf::eval_all({a, b});
    CHECK(host<double>(a)[3] == INFINITY);
    CHECK(host<double>(b)[3] == -INFINITY);
  }
  SUBCASE("equal views of one array are one leaf; other offsets are not") {
    const auto x = vec(64, 0.1, 0.0);
    using cf::slice;
    auto a = x[{slice(1, 33)}] * 2 + x[{slice(1, 33)}] * 2;
    auto b = x[{slice(1, 33)}] * 2 + x[{slice(2, 34)}] * 2;
    CHECK(cse({a}) == 2);  // the second view leaf and the second product
    CHECK(cse({b}) == 0);
    const auto xs = host<double>(x), av = host<double>(a), bv = host<double>(b);
    for (size_t i = 0; i < 32; ++i) {
      CHECK(av[i] == xs[i + 1] * 2 + xs[i + 1] * 2);
      CHECK(bv[i] == xs[i + 1] * 2 + xs[i + 2] * 2);
    }
  }
  SUBCASE("placeholders are only themselves") {
    auto p = cf::placeholder(cf::f32, {16}), q = cf::placeholder(cf::f32, {16});
    CHECK(cse({p * 2 + q * 2}) == 0);
    CHECK(cse({p * 2 + p * 2}) == 1);  // one placeholder read twice is one value
  }
  SUBCASE("user kernels: their code may not be a function of the inputs alone") {
    static const cf::ElementwiseKernel k("T x", "T z", "z = x * x", "square");
    auto p = cf::placeholder(cf::f32, {16});
    CHECK(cse({k(p) + k(p)}) == 0);
  }
  SUBCASE("different reductions of one input") {
    const auto m = mat(16);
    auto y = cf::sum(m, 0) + cf::sum(m, 1);
    auto z = cf::sum(m, 0) + cf::max(m, 0);
    CHECK(cse({y, z}) == 1);  // sum(m, 0) twice; the rest differs
  }
}

TEST_CASE("cse: a large graph (hash tables) merges what repeats and keeps the values") {
  cf::BackendScope ref(cf::Backend::Reference);
  FmaScope op_by_op(false);  // x * k + x * k stays two products
  const auto x = vec(128, 0.02, 0.0);
  auto build = [&] {
    cf::Array acc = x;
    for (int i = 0; i < 40; ++i) acc = acc + (x * (i + 1) + x * (i + 1)) / (i + 2);
    return acc;
  };
  auto plain = build();
  eval_without_cse({plain});
  auto y = build();
  CHECK(cse({y}) == 40);  // the second x * (i + 1) each time
  CHECK(cse({y}) == 0);   // and nothing left on a second pass
  cf::eval_all({y});
  check_same<double>(y, plain);
}

TEST_CASE("cse: the pass's host cost (10 and 600 nodes)") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Config saved = cf::config();
  cf::Config c = saved;
  c.max_pending_nodes = 100000;
  cf::set_config(c);
  const auto x = vec(64, 0.1, 0.0), yv = vec(64, 0.2, 0.1);
  // 10 nodes (4 leaves, 6 ops), no duplicate.
  auto small = cf::sqrt(x * yv + 1.5) - x / 3.0 * yv;
  // 600 nodes in a chain, each with its own scalar leaf, no duplicate.
  cf::Array big = x;
  for (int i = 0; i < 300; ++i) big = big * (1.0 + i * 1e-6);
  auto time_it = [](const cf::Array& a, int reps) {
    std::lock_guard<std::recursive_mutex> lk(cd::graph_mutex());
    std::vector<cd::NodePtr> roots{a.node()};
    CHECK(cd::eliminate_common_subexpressions(roots) == 0);
    // The thread's CPU time, the best of five rounds: other processes sharing the cores
    // do not count.
    double best = 1e300;
    for (int round = 0; round < 5; ++round) {
      const double t0 = thread_ns();
      for (int r = 0; r < reps; ++r) cd::eliminate_common_subexpressions(roots);
      best = std::min(best, (thread_ns() - t0) / reps);
    }
    return best;
  };
  // The signature scan every evaluation runs, as the yardstick.
  auto time_scan = [](const cf::Array& a, int reps) {
    std::lock_guard<std::recursive_mutex> lk(cd::graph_mutex());
    std::vector<cd::NodePtr> roots{a.node()};
    thread_local cd::GraphScan scan;
    double best = 1e300;
    for (int round = 0; round < 5; ++round) {
      const double t0 = thread_ns();
      for (int r = 0; r < reps; ++r) cd::scan_graph(roots, {}, scan);
      best = std::min(best, (thread_ns() - t0) / reps);
    }
    return best;
  };
  const double ns_small = time_it(small, 20000), ns_big = time_it(big, 100);
  const double scan_small = time_scan(small, 20000), scan_big = time_scan(big, 100);
  MESSAGE("cse pass, no duplicate: 10 nodes " << ns_small << " ns, 600 nodes " << ns_big << " ns; signature scan: "
                                               << scan_small << " ns, " << scan_big << " ns");
  cf::set_config(saved);
}
