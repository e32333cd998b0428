// bench/overhead.cpp: the host-overhead workloads, W7a and W7b, each as a plain lazy
// expression (built, planned from the plan cache and launched every call), through
// cufuse::fuse (traced once, then replayed) and as a typed expression over cufuse::Tensor
// (cufuse/typed.hpp: planned once per expression type, then replayed as fuse() does): small
// arrays, where the time per call is host work. A loop of many calls then one synchronize; floor: one tiny kernel's launch cost,
// measured in this run (cufuse replays a cached plan as a CUDA graph launch, which costs the
// host less than that: runtime/kernel_chain.hpp).
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "cufuse/array.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/fuse.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "cufuse/typed.hpp"
#include "harness.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

constexpr int64_t kSmallN = 10000;

// Written once, generic over cf::Array (lazy and fused) and double (the host check).
constexpr auto kW7a = [](auto x, auto y) { return (x - y) * (x - y); };
constexpr auto kW7b = [](auto x, auto y) { return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1); };
// The typed rows take their Tensors by reference: an expression keeps the addresses of the
// named Tensors it reads (as Eigen's do), so it must not outlive them.
constexpr auto kW7aTyped = [](const auto& x, const auto& y) { return (x - y) * (x - y); };
constexpr auto kW7bTyped = [](const auto& x, const auto& y) {
  return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1);
};
// A long program (issue 37): 150 symplectic Euler steps of an oscillator, 601 nodes, each
// statement reading the other's last value; one kernel, its plan found by the signature walk.
constexpr auto kW7long = [](auto q, auto p) {
  for (int i = 0; i < 150; ++i) {
    p = p - q * 0.01;
    q = q + p * 0.01;
  }
  return q + p;
};

// The unit, the launch floor and the inputs (x, y: f32[10000], in memory) of a W7 row.
std::pair<cf::Array, cf::Array> w7_inputs(Ctx& ctx, Record& r) {
  r.unit = "us";
  r.launch_us = ctx.floors.launch_us();
  r.floor_ms = r.launch_us * 1e-3;
  cf::Array x = cf::random::normal({kSmallN}, cf::f32, /*seed=*/2);
  cf::Array y = cf::random::normal({kSmallN}, cf::f32, /*seed=*/3);
  cf::eval(x, y);
  if (x.is_lazy() || y.is_lazy()) throw std::runtime_error(r.id + ": inputs still lazy after eval()");
  return {x, y};
}

// `batches`: timed in batches sized to the call's cost (time_batches) instead of a loop of
// thousands of calls (a long program's call costs hundreds of microseconds on a device, and
// far more on the reference backend).
template <class F>
void run_w7(Ctx& ctx, Record& r, F fn, bool through_fuse, double rtol, double atol, bool batches = false) {
  const std::pair<cf::Array, cf::Array> xy = w7_inputs(ctx, r);
  const cf::Array &x = xy.first, &y = xy.second;
  if (ctx.opt.dump) std::fprintf(stderr, "--- %s plan\n%s\n", r.id.c_str(), cf::plan_dump({fn(x, y)}).c_str());

  auto fused = cf::fuse(fn);
  auto once = [&]() -> cf::Array {
    if (through_fuse) return fused(x, y);
    cf::Array z = fn(x, y);
    z.eval();
    return z;
  };
  {  // check every element against the host in double (through fuse(), this call traces)
    cf::Array z = once();
    std::vector<float> hx = to_host_f32(x), hy = to_host_f32(y), hz = to_host_f32(z);
    r.check = check_sample(hz, [&](size_t i) { return fn(double(hx[i]), double(hy[i])); }, rtol, atol);
  }
  auto call = [&] { once(); };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, batches ? time_batches(ctx, call) : time_loop(ctx, call));
  if (through_fuse) {
    const cf::FuseStats s = fused.stats();
    r.notes = strf("through cufuse::fuse: %llu trace(s) for %llu calls, %llu as a CUDA graph launch; goal <= 4 us per call",
                   static_cast<unsigned long long>(s.traces), static_cast<unsigned long long>(s.replays),
                   static_cast<unsigned long long>(s.graph_launches));
  } else {
    const cf::Stats before = cf::stats();
    once();
    const bool graph = cf::stats().graph_launches > before.graph_launches;
    r.notes = std::string("plain lazy expression, built and evaluated each call") +
              (graph ? ", its cached plan one CUDA graph launch" : "") + " (fuse(): the W7a-fuse and W7b-fuse rows)";
  }
}

// The typed form: a Tensor assigned the expression (evaluated: one replay of the plan its
// type made at the first call).
template <class F>
void run_w7_typed(Ctx& ctx, Record& r, F fn, double rtol, double atol) {
  const std::pair<cf::Array, cf::Array> xy = w7_inputs(ctx, r);
  const cf::Array &x = xy.first, &y = xy.second;
  const auto tx = cf::tensor_cast<float, 1>(x), ty = cf::tensor_cast<float, 1>(y);
  auto once = [&]() -> cf::Array {
    cf::Tensor<float, 1> z = fn(tx, ty);
    return z.array();
  };
  {
    cf::Array z = once();
    std::vector<float> hx = to_host_f32(x), hy = to_host_f32(y), hz = to_host_f32(z);
    r.check = check_sample(hz, [&](size_t i) { return fn(double(hx[i]), double(hy[i])); }, rtol, atol);
  }
  auto call = [&] { once(); };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_loop(ctx, call));
  const cf::Stats before = cf::stats();
  once();
  r.notes = std::string("typed expression over cufuse::Tensor<float, 1> (cufuse/typed.hpp), planned once per type") +
            (cf::stats().graph_launches > before.graph_launches ? ", replayed as one CUDA graph launch" : "") +
            "; goal: at or below the -fuse row";
}

// W7b: f32 rounding of terms up to ~30, then scaled by x*x+1: 1e-4 relative, 1e-3 absolute.
void run_w7a(Ctx& ctx, Record& r) { run_w7(ctx, r, kW7a, false, 1e-5, 1e-6); }
void run_w7b(Ctx& ctx, Record& r) { run_w7(ctx, r, kW7b, false, 1e-4, 1e-3); }
void run_w7a_fused(Ctx& ctx, Record& r) { run_w7(ctx, r, kW7a, true, 1e-5, 1e-6); }
void run_w7b_fused(Ctx& ctx, Record& r) { run_w7(ctx, r, kW7b, true, 1e-4, 1e-3); }
void run_w7a_typed(Ctx& ctx, Record& r) { run_w7_typed(ctx, r, kW7aTyped, 1e-5, 1e-6); }
void run_w7b_typed(Ctx& ctx, Record& r) { run_w7_typed(ctx, r, kW7bTyped, 1e-4, 1e-3); }
// f32 rounding over 150 steps of values below ~5: 1e-4 relative and absolute.
void run_w7long(Ctx& ctx, Record& r) { run_w7(ctx, r, kW7long, false, 1e-4, 1e-4, true); }

}  // namespace

void add_overhead_workloads(Registry& r) {
  r.push_back({"W7a", "(x-y)*(x-y), x,y f32[10000], time per call", FloorKind::Launch, run_w7a});
  r.push_back({"W7b", "((x-y)*(x+y)*0.5 + x*3 - y/2) * (x*x+1), x,y f32[10000], time per call", FloorKind::Launch,
               run_w7b});
  r.push_back({"W7a-fuse", "(x-y)*(x-y), x,y f32[10000], through fuse(), time per call", FloorKind::Launch,
               run_w7a_fused});
  r.push_back({"W7b-fuse", "((x-y)*(x+y)*0.5 + x*3 - y/2) * (x*x+1), f32[10000], through fuse(), time per call",
               FloorKind::Launch, run_w7b_fused});
  r.push_back({"W7a-typed", "(x-y)*(x-y), x,y f32[10000], as a typed expression over Tensors, time per call",
               FloorKind::Launch, run_w7a_typed});
  r.push_back({"W7b-typed", "((x-y)*(x+y)*0.5 + x*3 - y/2) * (x*x+1), f32[10000], typed expression, time per call",
               FloorKind::Launch, run_w7b_typed});
  r.push_back({"W7-600", "150 steps of p = p - q*0.01; q = q + p*0.01 (601 nodes), q,p f32[10000], time per call",
               FloorKind::Launch, run_w7long});
}

}  // namespace bench
