// bench/overhead.cpp: the host-overhead workloads (W7a, W7b): small arrays, where the time per
// call is building the expression, planning (or the plan cache) and launching. A loop of many
// calls then one synchronize; floor: one tiny kernel's launch cost, measured in this run.
#include <cmath>
#include <cstdio>

#include "cufuse/array.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "harness.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

constexpr int64_t kSmallN = 10000;

template <class Expr, class Host>
void run_overhead(Ctx& ctx, Record& r, Expr expr, Host host, double rtol, double atol) {
  r.unit = "us";
  r.launch_us = ctx.floors.launch_us();
  r.floor_ms = r.launch_us * 1e-3;

  cf::Array x = cf::random::normal({kSmallN}, cf::f32, /*seed=*/2);
  cf::Array y = cf::random::normal({kSmallN}, cf::f32, /*seed=*/3);
  cf::eval(x, y);
  if (x.is_lazy() || y.is_lazy()) throw std::runtime_error(r.id + ": inputs still lazy after eval()");
  if (ctx.opt.dump) std::fprintf(stderr, "--- %s plan\n%s\n", r.id.c_str(), cf::plan_dump({expr(x, y)}).c_str());

  {  // check every element against the host in double
    cf::Array z = expr(x, y);
    z.eval();
    std::vector<float> hx = to_host_f32(x), hy = to_host_f32(y), hz = to_host_f32(z);
    r.check = check_sample(hz, [&](size_t i) { return host(double(hx[i]), double(hy[i])); }, rtol, atol);
  }
  auto call = [&] {
    cf::Array z = expr(x, y);
    z.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_loop(ctx, call));
  r.notes = "plain lazy expression, built and evaluated each call (fuse(): the W7a-fuse and W7b-fuse rows)";
}

void run_w7a(Ctx& ctx, Record& r) {
  run_overhead(
      ctx, r, [](const cf::Array& x, const cf::Array& y) { return (x - y) * (x - y); },
      [](double x, double y) { return (x - y) * (x - y); }, 1e-5, 1e-6);
}

void run_w7b(Ctx& ctx, Record& r) {
  run_overhead(
      ctx, r,
      [](const cf::Array& x, const cf::Array& y) { return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1); },
      [](double x, double y) { return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1); },
      // f32 rounding of terms up to ~30, then scaled by x*x+1: allow 1e-4 relative, 1e-3 absolute
      1e-4, 1e-3);
}

}  // namespace

void add_overhead_workloads(Registry& r) {
  r.push_back({"W7a", "(x-y)*(x-y), x,y f32[10000], time per call", FloorKind::Launch, run_w7a});
  r.push_back({"W7b", "((x-y)*(x+y)*0.5 + x*3 - y/2) * (x*x+1), x,y f32[10000], time per call", FloorKind::Launch,
               run_w7b});
}

}  // namespace bench
