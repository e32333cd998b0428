// tests/test_core_long_programs.cpp: long programs (issue 37). A program of hundreds of
// elementwise statements over one iteration space is one kernel (Black-Scholes as CuPy's
// example writes it; 600 dependent statements); the pending-node budget does not split it;
// past the kernel-size limit work is cut and the plan dump names the limit; and nothing that
// walks the graph recurses per node: a chain of 100,000 ops is scanned, planned, emitted,
// compiled and evaluated (reference backend: no GPU needed).
#include <chrono>
#include <cmath>
#include <random>

#include "codegen/elementwise_kernel.hpp"
#include "codegen/reduction_kernel.hpp"
#include "plan/kernel_size.hpp"
#include "plan/plan.hpp"
#include "test_core_helpers.hpp"

namespace {

using cf::detail::GroupKind;
using cf::detail::NodePtr;
using cf::detail::Rule;

constexpr int kChain = 100000;

// Lifts the pending-node budget, which would otherwise evaluate a long chain as it grows.
struct NoAutoEval {
  cf::Config saved = cf::config();
  NoAutoEval() {
    cf::Config c = saved;
    c.max_pending_nodes = 1 << 30;
    cf::set_config(c);
  }
  ~NoAutoEval() { cf::set_config(saved); }
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// x + 1, x - 0.5, x + 1, ...: `ops` ops, each reading the one before.
cf::Array add_chain(cf::Array x, int ops) {
  for (int i = 0; i < ops; ++i) x = i % 2 == 0 ? x + 1.0 : x - 0.5;
  return x;
}

int groups_with_rule(const cf::detail::Plan& p, Rule r) {
  int n = 0;
  for (const auto& g : p.groups) n += g.rule == r;
  return n;
}

// A binding for emitting kernels straight from a graph (no plan): leaves numbered by the scan.
struct Binding {
  cf::detail::GraphScan scan;
  cf::detail::LeafBinding bind;
  explicit Binding(const std::vector<NodePtr>& roots) {
    cf::detail::scan_graph(roots, {}, scan);
    bind = cf::detail::LeafBinding{[this](const cf::detail::Node* n) { return scan.leaf_index(n); },
                                   [](const cf::detail::Node*) { return true; },
                                   [](const cf::detail::Node*) { return -1; }};
  }
};

// ---- Black-Scholes, as CuPy's examples/finance/black_scholes.py writes it.
constexpr double kA1 = 0.31938153, kA2 = -0.356563782, kA3 = 1.781477937, kA4 = -1.821255978, kA5 = 1.330274429;
constexpr double kRsqrt2Pi = 0.39894228040143267793994605993438, kW = 0.2316419;

template <class T, class Abs, class Exp, class Where>
T cnd(const T& x, Abs abs_, Exp exp_, Where where_) {
  T k = 1.0 / (1.0 + kW * abs_(x));
  T c = kRsqrt2Pi * exp_(-x * x / 2.0) * k * (kA1 + k * (kA2 + k * (kA3 + k * (kA4 + k * kA5))));
  return where_(x, 1.0 - c, c);
}

std::pair<cf::Array, cf::Array> black_scholes(const cf::Array& s, const cf::Array& x, const cf::Array& t, double r,
                                              double v) {
  auto abs_ = [](const cf::Array& a) { return cf::abs(a); };
  auto exp_ = [](const cf::Array& a) { return cf::exp(a); };
  auto where_ = [](const cf::Array& d, const cf::Array& a, const cf::Array& b) { return cf::where(d > 0, a, b); };
  cf::Array sqrt_t = cf::sqrt(t);
  cf::Array d1 = (cf::log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t);
  cf::Array d2 = d1 - v * sqrt_t;
  cf::Array cnd_d1 = cnd(d1, abs_, exp_, where_);
  cf::Array cnd_d2 = cnd(d2, abs_, exp_, where_);
  cf::Array exp_rt = cf::exp(-r * t);
  cf::Array call = s * cnd_d1 - x * exp_rt * cnd_d2;
  cf::Array put = x * exp_rt * (1.0 - cnd_d2) - s * (1.0 - cnd_d1);
  return {call, put};
}

std::pair<double, double> black_scholes_host(double s, double x, double t, double r, double v) {
  auto abs_ = [](double a) { return std::fabs(a); };
  auto exp_ = [](double a) { return std::exp(a); };
  auto where_ = [](double d, double a, double b) { return d > 0 ? a : b; };
  const double sqrt_t = std::sqrt(t);
  const double d1 = (std::log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t);
  const double d2 = d1 - v * sqrt_t;
  const double c1 = cnd(d1, abs_, exp_, where_), c2 = cnd(d2, abs_, exp_, where_);
  const double exp_rt = std::exp(-r * t);
  return {s * c1 - x * exp_rt * c2, x * exp_rt * (1.0 - c2) - s * (1.0 - c1)};
}

// ---- 600 dependent statements: symplectic Euler steps of a harmonic oscillator, each
// statement reading the other's last value (a graph whose tree of uses doubles per step).
constexpr int kSteps = 150;  // 4 ops a step
template <class T>
void oscillate(T& q, T& p, double dt) {
  for (int i = 0; i < kSteps; ++i) {
    p = p - q * dt;
    q = q + p * dt;
  }
}

}  // namespace

TEST_CASE("long programs: a chain of 100,000 ops scans, plans, compiles and evaluates") {
  cf::BackendScope ref(cf::Backend::Reference);
  NoAutoEval no_auto;
  const auto t0 = std::chrono::steady_clock::now();
  auto x = cf::from_host(std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
  cf::Array y = add_chain(x, kChain);
  // One pending graph: the plan cuts it every max_kernel_ops() ops (rule kernel-size).
  auto ex = plan_of({y});
  const int64_t limit = cf::detail::max_kernel_ops();
  const size_t kernels = static_cast<size_t>((kChain + limit - 1) / limit);
  CHECK(ex->plan.groups.size() == kernels);
  CHECK(groups_with_rule(ex->plan, Rule::KernelSize) == static_cast<int>(kernels) - 1);
  cf::reset_stats();
  y.eval();  // compiles every kernel with NVRTC (the segments share one source), then runs the host reference
  CHECK(cf::stats().kernels_launched == kernels);
  CHECK(cf::stats().kernels_compiled + cf::stats().memory_cache_hits + cf::stats().disk_cache_hits == kernels);
  CHECK(cf::stats().kernels_compiled + cf::stats().disk_cache_hits <= 3);
  const auto v = host<double>(y);
  for (int i = 0; i < 8; ++i) CHECK(v[i] == i + kChain / 4);
  MESSAGE("a chain of " << kChain << " ops: built, planned, compiled and evaluated in " << ms_since(t0) << " ms ("
                        << kernels << " kernels of at most " << limit << " ops)");
}

TEST_CASE("long programs: the signature walk of a 100,000-op chain") {
  auto x = cf::placeholder(cf::f32, {16});
  NoAutoEval no_auto;
  cf::Array a = add_chain(x, kChain), b = add_chain(x, kChain);
  cf::Array c = add_chain(x, kChain - 1) * 2.0;  // the last op differs
  cf::detail::GraphScan sa, sb, sc;
  cf::detail::scan_graph({a.node()}, {}, sa);
  cf::detail::scan_graph({b.node()}, {}, sb);
  cf::detail::scan_graph({c.node()}, {}, sc);
  CHECK(sa.key == sb.key);  // structurally equal: one plan serves both
  CHECK(sa.key != sc.key);
  REQUIRE(sa.leaves.size() == sb.leaves.size());
  CHECK(sa.leaves[0] == x.node().get());  // the walk reaches the bottom of the chain first
  CHECK(sa.key.size() > size_t(6) * kChain);  // an entry list per op: every node was walked
}

TEST_CASE("long programs: emitters walk a 100,000-op chain without recursing") {
  NoAutoEval no_auto;
  auto x = cf::placeholder(cf::f32, {4, 8});
  cf::Array y = add_chain(x, kChain);
  {  // elementwise: one kernel of 100,000 statements (no plan: emitted directly)
    Binding b({y.node()});
    const auto spec = cf::detail::emit_elementwise_kernel(
        {4, 8}, {cf::detail::EwOutput{y.node(), cf::detail::contiguous_layout({4, 8}), 0, true}}, b.bind);
    CHECK(count_of(spec.source, " + b); }") + count_of(spec.source, " - b); }") == size_t(kChain));
  }
  {  // a reduction over it, and an epilogue of 100,000 ops after
    cf::Array s = cf::sum(y, 1);
    cf::Array e = add_chain(s, kChain);
    Binding b({e.node()});
    cf::detail::ReductionSpec rs;
    rs.S = {4, 8};
    rs.axes = {1};
    rs.reductions = {s.node().get()};
    rs.phase = {0};
    rs.outputs.push_back(
        cf::detail::RedOutput{e.node(), cf::detail::OutKind::Epilogue, cf::detail::contiguous_layout({4}), 0, true});
    const auto spec = cf::detail::emit_reduction_kernel(rs, b.bind);
    CHECK(count_of(spec.source, " + b); }") + count_of(spec.source, " - b); }") >= size_t(2 * kChain));
  }
  {  // a chain of 100,000 index remaps (View nodes), read by one op
    NodePtr v = x.node();
    for (int i = 0; i < kChain; ++i) v = cf::detail::make_view(v, cf::detail::contiguous_layout({4, 8}));
    cf::Array z = cf::Array(v) + 1.0f;
    Binding b({z.node()});
    const auto spec = cf::detail::emit_elementwise_kernel(
        {4, 8}, {cf::detail::EwOutput{z.node(), cf::detail::contiguous_layout({4, 8}), 0, true}}, b.bind);
    CHECK(count_of(spec.source, "_sh[1];") >= size_t(kChain));
  }
}

TEST_CASE("long programs: movement ops and diagonals push down through a 100,000-op chain") {
  NoAutoEval no_auto;
  auto x = cf::placeholder(cf::f32, {8, 8});
  cf::Array y = add_chain(x, kChain);
  cf::Array t = y.T(), d = cf::diagonal(y);
  CHECK(t.node()->k() == cf::detail::NodeKind::Elementwise);  // rebuilt over the moved leaf, no View
  CHECK(d.node()->k() == cf::detail::NodeKind::Elementwise);
  CHECK(d.shape() == cf::Shape{8});
  auto ex = plan_of({t});
  CHECK(ex->plan.groups.size() == static_cast<size_t>((kChain + cf::detail::max_kernel_ops() - 1) / cf::detail::max_kernel_ops()));
}

TEST_CASE("long programs: Black-Scholes (call and put, float64) is one kernel") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = 4096;
  std::mt19937_64 rng(37);
  std::uniform_real_distribution<double> us(5, 30), ux(1, 100), ut(0.25, 10);
  std::vector<double> hs(n), hx(n), ht(n);
  for (int64_t i = 0; i < n; ++i) hs[i] = us(rng), hx[i] = ux(rng), ht[i] = ut(rng);
  const double r = 0.02, v = 0.3;
  auto s = cf::from_host(hs), x = cf::from_host(hx), t = cf::from_host(ht);
  cf::reset_stats();
  auto [call, put] = black_scholes(s, x, t, r, v);
  CHECK(cf::stats().auto_evaluations == 0);  // the default budget keeps the whole program pending
  auto ex = plan_of({call, put});
  REQUIRE(ex->plan.groups.size() == 1);
  CHECK(ex->plan.groups[0].outputs.size() == 2);
  cf::eval(call, put);
  CHECK(cf::stats().kernels_launched == 1);
  const auto hc = host<double>(call), hp = host<double>(put);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto [c, p] = black_scholes_host(hs[i], hx[i], ht[i], r, v);
    bad += std::fabs(hc[i] - c) > 1e-12 * (1 + std::fabs(c)) || std::fabs(hp[i] - p) > 1e-12 * (1 + std::fabs(p));
  }
  CHECK(bad == 0);
}

TEST_CASE("long programs: 600 dependent statements are one kernel") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = 1000;
  std::vector<double> hq(n), hp(n);
  for (int64_t i = 0; i < n; ++i) hq[i] = std::cos(0.01 * i), hp[i] = std::sin(0.01 * i);
  cf::Array q = cf::from_host(hq), p = cf::from_host(hp);
  cf::reset_stats();
  oscillate(q, p, 0.01);
  CHECK(cf::stats().auto_evaluations == 0);
  CHECK(q.node()->pending <= 4 * kSteps);  // nodes, not uses: the tree of uses is ~2^150
  auto ex = plan_of({q, p});
  CHECK(ex->plan.groups.size() == 1);
  cf::eval(q, p);
  CHECK(cf::stats().kernels_launched == 1);
  for (int64_t i = 0; i < n; ++i) oscillate(hq[i], hp[i], 0.01);
  const auto gq = host<double>(q), gp = host<double>(p);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += std::fabs(gq[i] - hq[i]) > 1e-12 || std::fabs(gp[i] - hp[i]) > 1e-12;
  CHECK(bad == 0);
}

TEST_CASE("long programs: a write of a 600-statement loop's result walks its graph once per node") {
  // The write checks whether the value reads the target other than element for element; a
  // walk of the graph's paths (~2^150 of them here) never ended.
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = 16;
  std::vector<double> hq(n), hp(n);
  for (int64_t i = 0; i < n; ++i) hq[i] = 1.0 + i, hp[i] = 0.5 * i;
  cf::Array q = cf::from_host(hq), p = cf::from_host(hp);
  cf::Array t = cf::zeros({n}, cf::f64);
  oscillate(q, p, 0.01);
  t += q;
  t += p;
  for (int64_t i = 0; i < n; ++i) oscillate(hq[i], hp[i], 0.01);
  const auto got = host<double>(t);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += std::fabs(got[i] - (hq[i] + hp[i])) > 1e-12;
  CHECK(bad == 0);
}

TEST_CASE("long programs: past the kernel-size limit, the plan dump names the cut and its limit") {
  NoAutoEval no_auto;
  const int64_t limit = cf::detail::max_kernel_ops();
  auto x = cf::placeholder(cf::f32, {1024});
  cf::Array y = add_chain(x, static_cast<int>(limit) + 10);
  const std::string dump = cf::plan_dump({y}, false);
  CHECK(count_of(dump, "kernel(s)") == 1);
  CHECK(count_of(dump, "plan: 1 root(s), 2 kernel(s)") == 1);
  CHECK(count_of(dump, "[rule: kernel-size (limit " + std::to_string(limit) + " ops a kernel)]") == 1);
  // A reduction's prologue is cut the same way; the reduction reads the cut part from memory.
  cf::Array s = cf::sum(add_chain(x, static_cast<int>(limit) + 10));
  auto ex = plan_of({s});
  REQUIRE(ex->plan.groups.size() == 2);
  CHECK(ex->plan.groups[0].rule == Rule::KernelSize);
  CHECK(ex->plan.groups[1].kind == GroupKind::Reduction);
  // Just below the limit: one kernel.
  cf::Array w = add_chain(x, static_cast<int>(limit));
  CHECK(plan_of({w})->plan.groups.size() == 1);
}

TEST_CASE("long programs: host time per call of a 600-node lazy program") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = 1000;
  cf::Array q0 = cf::from_host(std::vector<double>(n, 1.0)), p0 = cf::from_host(std::vector<double>(n, 0.0));
  auto build = [&] {
    cf::Array q = q0, p = p0;
    oscillate(q, p, 0.01);
    return std::make_pair(q, p);
  };
  {  // warm: the kernel compiled once
    auto [q, p] = build();
    cf::eval(q, p);
  }
  // What a plan-cache hit costs on a device, before the launch: building the graph, its
  // signature walk, and the key's hash and compare (the plan cache's lookup).
  const int reps = 200;
  double build_ms = 0, scan_ms = 0;
  size_t hash_sum = 0;
  cf::detail::GraphScan first;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto [q, p] = build();
    build_ms += ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    thread_local cf::detail::GraphScan scan;
    cf::detail::scan_graph({q.node(), p.node()}, {}, scan);
    hash_sum += cf::detail::KeyHash{}(scan.key);
    if (i == 0) first = scan;
    const bool same = scan.key == first.key;
    scan_ms += ms_since(t0);
    CHECK(same);
  }
  CHECK(hash_sum != 0);
  // The reference backend plans every evaluation again (no plan cache there): the cost of
  // re-planning and emitting the 600-op kernel (its compile is a memory-cache hit).
  double eval_ms = 0;
  for (int i = 0; i < 20; ++i) {
    auto [q, p] = build();
    const auto t0 = std::chrono::steady_clock::now();
    cf::eval(q, p);
    eval_ms += ms_since(t0);
  }
  MESSAGE("600-node lazy program, host time per call: build " << 1000 * build_ms / reps << " us, signature walk + key hash "
                                                               << 1000 * scan_ms / reps << " us (the plan-cache hit); "
                                                               << "re-plan + emit + reference run " << 1000 * eval_ms / 20
                                                               << " us");
}
