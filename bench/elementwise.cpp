// bench/elementwise.cpp: the memory-bound elementwise workloads (W1), each a plain lazy
// expression built and evaluated once per call. Floor: bytes that must move / copy bandwidth.
#include <cmath>
#include <cstdio>

#include "cufuse/array.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "harness.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

// W1: (x*2.5+1)*sin(x) - exp(-x*x) + sqrt(abs(x))
cf::Array w1_expr(const cf::Array& x) {
  return (x * 2.5 + 1) * cf::sin(x) - cf::exp(-x * x) + cf::sqrt(cf::abs(x));
}
double w1_host(double v) { return (v * 2.5 + 1) * std::sin(v) - std::exp(-v * v) + std::sqrt(std::fabs(v)); }

void run_w1(Ctx& ctx, Record& r) {
  const int64_t n = int64_t(1) << 27;
  set_bandwidth_floor(ctx, r, 2.0 * double(n) * 4.0);  // read x, write the result

  cf::Array x = cf::random::normal({n}, cf::f32, /*seed=*/1);
  x.eval();
  if (x.is_lazy()) throw std::runtime_error("W1: input still lazy after eval()");
  if (ctx.opt.dump) std::fprintf(stderr, "--- W1 plan\n%s\n", cf::plan_dump({w1_expr(x)}).c_str());

  {  // check before timing: a strided sample against the host in double
    cf::Array y = w1_expr(x);
    y.eval();
    std::vector<float> hx = to_host_f32(x), hy = to_host_f32(y);
    r.check = check_sample(hy, [&](size_t i) { return w1_host(hx[i]); }, 1e-4, 1e-4);
  }
  auto call = [&] {
    cf::Array y = w1_expr(x);
    y.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "plain lazy expression, built and evaluated each call";
}

}  // namespace

std::string elementwise_plan_dump() {
  cf::Array x = cf::placeholder(cf::f32, {int64_t(1) << 27});
  return cf::plan_dump({w1_expr(x)});
}

void add_elementwise_workloads(Registry& r) {
  r.push_back({"W1", "(x*2.5+1)*sin(x) - exp(-x*x) + sqrt(abs(x)), x f32[2^27]", FloorKind::Bandwidth, run_w1});
}

}  // namespace bench
