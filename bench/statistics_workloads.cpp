// bench/statistics_workloads.cpp: issue 33's statistics workloads.
//   H1  histogram(x, 1024 bins, range=(-4, 4)), x normal f32[2^26]: the 1025 uniform edges into
//       memory, the counters' fill and one scatter kernel computing each bin (NumPy's edge rule,
//       its two edges read from the cache) and adding it into per-block counters in shared
//       memory, merged once. Floor: read x once.
//   H2  bincount(x), x int32[2^26] uniform in [0, 1024): one min/max reduction (its maximum
//       read back: the length), the fill and one privatized scatter kernel. Floor: read x
//       twice (the reduction and the scatter).
#include <cmath>
#include <cstdio>

#include "cufuse/array.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "cufuse/statistics.hpp"
#include "harness.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

constexpr int64_t kN = int64_t(1) << 26;
constexpr int64_t kBins = 1024;

// Exact counts on the host compared with the device's (every bin).
Check check_counts(const std::vector<int64_t>& got, const std::vector<int64_t>& want) {
  if (got.size() != want.size()) return Check{true, false, strf("%zu bins, want %zu", got.size(), want.size())};
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return Check{true, false, strf("bin %zu: %lld, want %lld", i, static_cast<long long>(got[i]),
                                     static_cast<long long>(want[i]))};
  return Check{true, true, "every bin exact"};
}

void run_h1(Ctx& ctx, Record& r) {
  set_bandwidth_floor(ctx, r, double(kN) * 4);
  cf::Array x = cf::random::normal({kN}, cf::f32, 41);
  x.eval();
  {  // check: every bin against the host (NumPy's rule on float32 data and float32 edges)
    auto h = cf::histogram(x, kBins, cf::Range{-4.0, 4.0});
    const std::vector<float> hx = to_host_f32(x), he = to_host_f32(h.bin_edges);
    std::vector<int64_t> want(kBins, 0);
    for (float v : hx) {
      if (!(v >= -4.0f && v <= 4.0f)) continue;
      auto it = std::upper_bound(he.begin(), he.end(), v);
      int64_t b = (it - he.begin()) - 1;
      if (b >= kBins) b = kBins - 1;
      ++want[static_cast<size_t>(b)];
    }
    r.check = check_counts(h.hist.to_host<int64_t>(), want);
  }
  auto call = [&] {
    auto h = cf::histogram(x, kBins, cf::Range{-4.0, 4.0});
    h.hist.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "the edges, fill of the counters, one scatter kernel: bins by NumPy's rule, shared-memory counters per block";
}

void run_h2(Ctx& ctx, Record& r) {
  set_bandwidth_floor(ctx, r, double(kN) * 4 * 2);
  cf::Array x = cf::astype(cf::floor(cf::random::uniform({kN}, cf::f64, 42) * double(kBins)), cf::i32);
  x.eval();
  {
    const std::vector<int32_t> hx = x.to_host<int32_t>();
    std::vector<int64_t> want(kBins, 0);
    int32_t mx = 0;
    for (int32_t v : hx) ++want[static_cast<size_t>(v)], mx = std::max(mx, v);
    want.resize(static_cast<size_t>(mx) + 1);
    r.check = check_counts(cf::bincount(x).to_host<int64_t>(), want);
  }
  auto call = [&] {
    cf::Array c = cf::bincount(x);
    c.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "min/max reduction (length read back), fill, one scatter kernel with shared-memory counters";
}

}  // namespace

void add_statistics_workloads(Registry& r) {
  r.push_back({"H1", "histogram of f32[2^26] into 1024 bins, range given", FloorKind::Bandwidth, run_h1});
  r.push_back({"H2", "bincount of int32[2^26] in [0, 1024)", FloorKind::Bandwidth, run_h2});
}

}  // namespace bench
