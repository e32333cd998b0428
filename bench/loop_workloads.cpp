// bench/loop_workloads.cpp: the workloads of issue 37 (lazy across statements and loops):
// W13 the Adam step written in place, W14 cumsum (1-D and along rows), W15 CuPy's
// Black-Scholes example, W16 CuPy's conjugate-gradient example, and three more iterative
// programs that read one scalar back per iteration (L1 k-means, L2 EM, L3 gradient descent).
// The programs are in loop_programs.hpp. Each result is checked against the host in double
// before it is timed; the iterative ones are timed per iteration and counted per iteration
// (kernels, plans built, plan-cache hits, compiles) in their steady state.
#include <cmath>
#include <cstdio>

#include "cufuse/cufuse.hpp"
#include "harness.hpp"
#include "loop_programs.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

bool on_reference() { return cf::current_backend() == cf::Backend::Reference; }

std::vector<double> to_host_f64(const cf::Array& a) {
  std::vector<double> v(static_cast<size_t>(a.size()));
  a.copy_to_host(v.data(), v.size() * sizeof(double));
  return v;
}

// ------------------------------------------------------------------ W13
void run_w13(Ctx& ctx, Record& r) {
  const int64_t n = on_reference() ? int64_t(1) << 16 : int64_t(1) << 26;
  set_bandwidth_floor(ctx, r, 7.0 * 4.0 * double(n));  // read w, g, m, v; write w, m, v
  cf::Array w = cf::random::normal({n}, cf::f32, 131);
  cf::Array g = cf::random::normal({n}, cf::f32, 132);
  cf::Array m = cf::random::normal({n}, cf::f32, 133, 0.0, 0.1);
  cf::Array v = cf::square(cf::random::normal({n}, cf::f32, 134, 0.0, 0.1));
  cf::eval(w, g, m, v);
  {  // one step, checked element for element (sampled) against the host
    const std::vector<float> hw = to_host_f32(w), hg = to_host_f32(g), hm = to_host_f32(m), hv = to_host_f32(v);
    loops::adam_step(w, g, m, v);
    add_check(r, check_sample(to_host_f32(w), [&](size_t i) { return loops::adam_host(hw[i], hg[i], hm[i], hv[i]).w; },
                              1e-6, 1e-6), "w");
    add_check(r, check_sample(to_host_f32(m), [&](size_t i) { return loops::adam_host(hw[i], hg[i], hm[i], hv[i]).m; },
                              1e-6, 1e-7), "m");
    add_check(r, check_sample(to_host_f32(v), [&](size_t i) { return loops::adam_host(hw[i], hg[i], hm[i], hv[i]).v; },
                              1e-6, 1e-9), "v");
  }
  auto call = [&] { loops::adam_step(w, g, m, v); };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = strf("m *= b1; m += (1-b1)*g; v *= b2; v += (1-b2)*g*g; w -= lr*(m/c1)/(sqrt(v/c2)+eps); eval(w, m, v): "
                 "%g kernel(s) per step (goal: 1)", r.kernels_per_call);
}

// ------------------------------------------------------------------ W14
// Checks a cumsum: against the prefix sums in double (|error| <= atol: float32 rounding of the
// running sum grows along it) and, tighter, y[i] - y[i-1] against x[i] inside each row.
Check check_cumsum(const std::vector<float>& x, const std::vector<float>& y, int64_t row, double atol) {
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = double(x[i]) + (i % size_t(row) ? want[i - 1] : 0.0);
  Check c = check_sample(y, [&](size_t i) { return want[i]; }, 1e-6, atol);
  std::vector<float> step(y.size());
  for (size_t i = 0; i < y.size(); ++i) step[i] = i % size_t(row) ? y[i] - y[i - 1] : y[i];
  const Check d = check_sample(step, [&](size_t i) { return double(x[i]); }, 0,
                               1e-2);  // two roundings of a running sum of magnitude < 2^13
  c.ok = c.ok && d.ok;
  c.detail += "; y[i] - y[i-1] = x[i]: " + d.detail;
  return c;
}

void run_w14(Ctx& ctx, Record& r) {
  const bool ref = on_reference();
  const int64_t n = ref ? int64_t(1) << 16 : int64_t(1) << 26;
  const int64_t rows = ref ? 16 : 16384, cols = ref ? 4096 : 4096;
  set_bandwidth_floor(ctx, r, 2.0 * 4.0 * double(n));  // read x, write y (both parts move as much)
  cf::Array x1 = cf::random::normal({n}, cf::f32, 141).eval();
  cf::Array x2 = cf::random::normal({rows, cols}, cf::f32, 142).eval();
  add_check(r, check_cumsum(to_host_f32(x1), to_host_f32(cf::cumsum(x1)), n, 1.0), "1-D");
  add_check(r, check_cumsum(to_host_f32(x2), to_host_f32(cf::cumsum(x2, 1)), cols, 1e-3), "rows");
  auto one_d = [&] { cf::cumsum(x1).eval(); };
  auto along_rows = [&] { cf::cumsum(x2, 1).eval(); };
  const Timing t1 = time_batches(ctx, one_d), t2 = time_batches(ctx, along_rows);
  r.kernels_per_call = kernels_per_call(one_d);
  r.parts = {Part{"1-D", t1.median_ms, r.floor_ms, t1.batch_ms, strf("%g kernel(s)", r.kernels_per_call)},
             Part{"rows", t2.median_ms, r.floor_ms, t2.batch_ms, strf("%g kernel(s)", kernels_per_call(along_rows))}};
  apply_timing(r, t1);
  r.notes = strf("cumsum(x), x f32[%lld]: %s; cumsum(x, axis=1), x f32[%lld, %lld]: %s; goal <= 1.1x floor",
                 static_cast<long long>(n), r.parts[0].notes.c_str(), static_cast<long long>(rows),
                 static_cast<long long>(cols), r.parts[1].notes.c_str());
}

// ------------------------------------------------------------------ W15
void run_w15(Ctx& ctx, Record& r) {
  const int64_t n = on_reference() ? 20000 : 10000000;
  set_bandwidth_floor(ctx, r, 5.0 * 8.0 * double(n));  // read s, x, t; write call, put (400 MB)
  // the example's rand_range(m, M): m + (M - m) * rand(n), float64
  const cf::Array s = cf::random::uniform({n}, cf::f64, 151, 5, 30).eval();
  const cf::Array x = cf::random::uniform({n}, cf::f64, 152, 1, 100).eval();
  const cf::Array t = cf::random::uniform({n}, cf::f64, 153, 0.25, 10).eval();
  auto program = [&] { return loops::black_scholes(loops::CufuseOps{}, s, x, t, loops::kRiskFree, loops::kVolatility); };
  if (ctx.opt.dump) {
    auto [call, put] = program();
    std::fprintf(stderr, "--- W15 plan\n%s\n", cf::plan_dump({call, put}).c_str());
  }
  {
    auto [call, put] = program();
    cf::eval(call, put);
    const std::vector<double> hs = to_host_f64(s), hx = to_host_f64(x), ht = to_host_f64(t);
    auto host = [&](size_t i) {
      return loops::black_scholes(loops::HostOps{}, hs[i], hx[i], ht[i], loops::kRiskFree, loops::kVolatility);
    };
    add_check(r, check_sample(to_host_f64(call), [&](size_t i) { return host(i).first; }, 1e-9, 1e-9), "call");
    add_check(r, check_sample(to_host_f64(put), [&](size_t i) { return host(i).second; }, 1e-9, 1e-9), "put");
  }
  auto call = [&] {
    auto [c, p] = program();
    cf::eval(c, p);
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = strf("%lld float64 options, call and put as the example writes them, eval(call, put): %g kernel(s) "
                 "(goal: 1)", static_cast<long long>(n), r.kernels_per_call);
}

// ------------------------------------------------------------------ the iterative programs
// Checks `check_iters` iterations against the host, counts iterations 4 to 13 (4 to 8 with
// --quick; the steady state: kernels, evaluations, plans built, plan-cache hits, compiles, per iteration), times
// single iterations (the solve restarts when it converges), then solves to convergence once
// when that fits the time allowed (quick: 15 s, else 60 s).
void run_loop(Ctx& ctx, Record& r, loops::Loop& loop, int check_iters, int max_iter) {
  r.unit = "us";
  r.check = loop.check(check_iters);

  loop.reset();
  for (int i = 0; i < 3; ++i) loop.step();
  device_sync();
  cf::reset_stats();
  int counted = 0;
  const int to_count = ctx.opt.quick ? 5 : 10;
  const double t0 = now_ms(), allowed_count_ms = ctx.opt.quick ? 10000 : 20000;
  while (counted < to_count) {
    ++counted;
    if (loop.step() || now_ms() - t0 > allowed_count_ms) break;  // a loop that compiles every iteration stops early
  }
  device_sync();
  const cf::Stats st = cf::stats();
  const double it = counted;
  r.kernels_per_call = double(st.kernels_launched) / it;
  const double lookups = double(st.plans_built + st.plan_cache_hits);
  const std::string counts =
      strf("per iteration (steady state, %d counted): %.1f kernels, %.1f evaluations (%.1f automatic), %.1f plans "
           "built, %.1f plan-cache hits (%.0f%% of lookups), %.1f compiles",
           counted, r.kernels_per_call, double(st.evaluations) / it, double(st.auto_evaluations) / it,
           double(st.plans_built) / it, double(st.plan_cache_hits) / it,
           lookups > 0 ? 100.0 * double(st.plan_cache_hits) / lookups : 0.0, double(st.kernels_compiled) / it);

  loop.reset();
  auto call = [&] {
    if (loop.step()) loop.reset();
  };
  apply_timing(r, time_batches(ctx, call));

  std::string solve;
  const double allowed_ms = ctx.opt.quick ? 15000 : 60000;
  if (r.time_ms * max_iter <= allowed_ms) {
    loop.reset();
    device_sync();
    const double s0 = now_ms();
    int iters = 0;
    bool converged = false;
    while (iters < max_iter && !converged) {
      converged = loop.step();
      ++iters;
    }
    device_sync();
    const double ms = now_ms() - s0;
    solve = strf("solve: %s after %d iterations in %.1f ms (%.1f us per iteration)%s%s",
                 converged ? "converged" : "stopped", iters, ms, ms / iters * 1e3,
                 loop.summary().empty() ? "" : ", ", loop.summary().c_str());
  } else {
    solve = strf("solve to convergence skipped (up to %d iterations at %.0f us would pass %.0f s)", max_iter,
                 r.time_ms * 1e3, allowed_ms / 1e3);
  }
  r.notes = counts + "; " + solve;
}

void run_w16(Ctx& ctx, Record& r) {
  loops::ConjugateGradient cg(on_reference() ? 64 : 2000);
  run_loop(ctx, r, cg, 10, 5000);
}

void run_l1(Ctx& ctx, Record& r) {
  loops::KMeans km(on_reference() ? int64_t(1) << 12 : int64_t(1) << 20, 16);
  run_loop(ctx, r, km, 3, 300);
}

void run_l2(Ctx& ctx, Record& r) {
  loops::GaussianMixtureEM em(on_reference() ? int64_t(1) << 12 : int64_t(1) << 22);
  run_loop(ctx, r, em, 3, 500);
}

void run_l3(Ctx& ctx, Record& r) {
  const bool ref = on_reference();
  loops::GradientDescent gd(ref ? 256 : 8192, ref ? 32 : 1024);
  run_loop(ctx, r, gd, 3, 1000);
}

}  // namespace

void add_loop_workloads(Registry& r) {
  r.push_back({"W13", "Adam step in place, statement by statement, eval(w, m, v), f32[2^26] each",
               FloorKind::Bandwidth, run_w13});
  r.push_back({"W14", "cumsum of f32[2^26] / cumsum(x, axis=1) of f32[16384,4096]", FloorKind::Bandwidth, run_w14});
  r.push_back({"W15", "CuPy's black_scholes.py: 10M float64 options, call and put, eval(call, put)",
               FloorKind::Bandwidth, run_w15});
  r.push_back({"W16", "CuPy's cg.py: N = 2000 float64, A = R R^T, tol 0.1, time per iteration", FloorKind::None,
               run_w16});
  r.push_back({"L1", "k-means, 2^20 points in 2-D, 16 centers, all(new == old) read back, time per iteration",
               FloorKind::None, run_l1});
  r.push_back({"L2", "EM for a 1-D mixture of 4 Gaussians, 2^22 points, log-likelihood read back, per iteration",
               FloorKind::None, run_l2});
  r.push_back({"L3", "gradient descent for least squares, A f32[8192,1024], |g| read back, per iteration",
               FloorKind::None, run_l3});
}

}  // namespace bench
