// bench/fuse_workloads.cpp: the workloads of issue 5 (fuse(), streams): W7a and W7b through
// cufuse::fuse (time per call, a loop of calls then one synchronize; floor: one tiny kernel's
// launch, measured in this run; goal <= 4 us), and seed 004's two matrix inversions
// (inv f32[6000, 6000]) on one stream and on two streams with events (when
// cufuse/linalg.hpp provides linalg::inv).
#include <cmath>
#include <cstdio>

#include "cufuse/array.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/fuse.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "cufuse/reduce.hpp"
#include "cufuse/stream.hpp"
#include "harness.hpp"
#if __has_include("cufuse/linalg.hpp")
#include "cufuse/linalg.hpp"
#define CUFUSE_BENCH_HAVE_LINALG 1
#endif

namespace cf = cufuse;

namespace bench {
namespace {

constexpr int64_t kSmallN = 10000;

template <class F, class Host>
void run_fused(Ctx& ctx, Record& r, F fn, Host host, double rtol, double atol) {
  r.unit = "us";
  r.launch_us = ctx.floors.launch_us();
  r.floor_ms = r.launch_us * 1e-3;
  cf::Array x = cf::random::normal({kSmallN}, cf::f32, /*seed=*/2);
  cf::Array y = cf::random::normal({kSmallN}, cf::f32, /*seed=*/3);
  cf::eval(x, y);
  auto fused = cf::fuse(fn);
  {  // check every element against the host in double (this call traces)
    cf::Array z = fused(x, y);
    std::vector<float> hx = to_host_f32(x), hy = to_host_f32(y), hz = to_host_f32(z);
    r.check = check_sample(hz, [&](size_t i) { return host(double(hx[i]), double(hy[i])); }, rtol, atol);
  }
  if (ctx.opt.dump) std::fprintf(stderr, "--- %s plan\n%s\n", r.id.c_str(), cf::plan_dump({fn(x, y)}).c_str());
  auto call = [&] { fused(x, y); };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_loop(ctx, call));
  const cf::FuseStats s = fused.stats();
  r.notes = strf("through cufuse::fuse: %llu trace(s) for %llu calls; goal <= 4 us per call",
                 static_cast<unsigned long long>(s.traces), static_cast<unsigned long long>(s.replays));
}

void run_w7a_fused(Ctx& ctx, Record& r) {
  run_fused(
      ctx, r, [](auto x, auto y) { return (x - y) * (x - y); }, [](double x, double y) { return (x - y) * (x - y); },
      1e-5, 1e-6);
}

void run_w7b_fused(Ctx& ctx, Record& r) {
  run_fused(
      ctx, r, [](auto x, auto y) { return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1); },
      [](double x, double y) { return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1); }, 1e-4, 1e-3);
}

#ifdef CUFUSE_BENCH_HAVE_LINALG
// Seed 004: two inversions of one matrix, on one stream, then on two streams with events.
void run_seed004_streams(Ctx& ctx, Record& r) {
  const int64_t size = ctx.opt.quick ? 2048 : 6000;
  // uniform in [0, 1) plus size on the diagonal: well conditioned, so the check is meaningful
  cf::Array eye = (cf::arange(size).reshape({size, 1}) == cf::arange(size)).astype(cf::f32);
  cf::Array A = cf::random::uniform({size, size}, cf::f32, /*seed=*/4) + eye * float(size);
  A.eval();
  cf::Stream s1, s2;
  // As CuPy runs the seed (cupyx.errstate(linalg='ignore') is its default): no read-back of
  // cuSOLVER's info, which would wait for each stream before the next inversion is queued.
  cf::linalg::ErrorScope no_wait(cf::linalg::Errors::Ignore);
  auto one_stream = [&] {
    cf::StreamScope on(s1);
    cf::Array c1 = cf::linalg::inv(A).eval();
    cf::Array c2 = cf::linalg::inv(A).eval();
    s1.synchronize();
  };
  auto two_streams = [&] {
    cf::Event e1, e2;
    cf::Array c1, c2;
    {
      cf::StreamScope on(s1);
      c1 = cf::linalg::inv(A).eval();
      e1.record(s1);
    }
    {
      cf::StreamScope on(s2);
      c2 = cf::linalg::inv(A).eval();
      e2.record(s2);
    }
    e1.synchronize();
    e2.synchronize();
  };
  {  // check: A @ inv(A) is the identity on a sample of rows (and both streams agree)
    cf::Array c;
    {
      cf::StreamScope on(s2);
      c = cf::linalg::inv(A).eval();
    }
    s2.synchronize();
    const int64_t rows = 64;
    cf::Array prod = cf::matmul(A[{cf::slice(0, rows), cf::_}], c);
    std::vector<float> hp = to_host_f32(prod);
    r.check = check_sample(hp, [&](size_t i) { return (int64_t(i) / size == int64_t(i) % size) ? 1.0 : 0.0; },
                           1e-3, 1e-3);
  }
  Timing t1 = time_batches(ctx, one_stream, 1);
  Timing t2 = time_batches(ctx, two_streams, 1);
  r.parts = {Part{"one stream", t1.median_ms, kNaN, t1.batch_ms, "two inversions one after the other"},
             Part{"two streams", t2.median_ms, kNaN, t2.batch_ms, "one inversion per stream, events"}};
  apply_timing(r, t2);
  r.notes = strf("inv f32[%lld, %lld] twice, linalg errors ignored as in CuPy: one stream %.2f ms, two streams %.2f ms "
                 "(%.0f%% of the one-stream time)",
                 static_cast<long long>(size), static_cast<long long>(size), t1.median_ms, t2.median_ms,
                 100.0 * t2.median_ms / t1.median_ms);
}
#endif

}  // namespace

void add_fuse_workloads(Registry& r) {
  r.push_back({"W7a-fuse", "(x-y)*(x-y), x,y f32[10000], through fuse(), time per call", FloorKind::Launch,
               run_w7a_fused});
  r.push_back({"W7b-fuse", "((x-y)*(x+y)*0.5 + x*3 - y/2) * (x*x+1), f32[10000], through fuse(), time per call",
               FloorKind::Launch, run_w7b_fused});
#ifdef CUFUSE_BENCH_HAVE_LINALG
  r.push_back({"S004", "seed 004: two inv f32[6000,6000] on one stream, then on two streams with events",
               FloorKind::None, run_seed004_streams});
#endif
}

}  // namespace bench
