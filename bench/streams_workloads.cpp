// bench/streams_workloads.cpp: seed 004's two matrix inversions (inv f32[6000, 6000]) on one
// stream and on two streams with events. (W7 through fuse() is in overhead.cpp.)
#include <cmath>
#include <cstdio>

#include "cufuse/array.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "cufuse/reduce.hpp"
#include "cufuse/stream.hpp"
#include "harness.hpp"
#include "cufuse/linalg.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

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
}  // namespace

void add_stream_workloads(Registry& r) {
  r.push_back({"S004", "seed 004: two inv f32[6000,6000] on one stream, then on two streams with events",
               FloorKind::None, run_seed004_streams});
}

}  // namespace bench
