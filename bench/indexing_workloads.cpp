// bench/indexing_workloads.cpp: issue 30's indexing workloads.
//   I1  x[mask], half of the mask True, x f32[2^26]: one selection kernel over tiles (a
//       decoupled look-back places each tile; the buffer of 256 MiB is under
//       CUFUSE_SELECT_ONE_PASS_BYTES), the count read back. With CUFUSE_SELECT_ONE_PASS_BYTES=0,
//       two passes: the mask's tile counts and their scan (one integer read back), then one
//       compaction kernel. Floor: read x and the mask, write the selected half.
//   I1-lazy  (x*2)[sin(x) > 0.5], x f32[2^26] normal (about 30% selected): the mask and the
//       values computed by their producers inside the selection kernel (rule fused-input;
//       in two passes, inside the count and compaction kernels), nothing but the result (and
//       the count) written. Floor: read x once, write the selected values.
//   I2  take(x, idx), idx random int64 in [0, 2^26), x f32[2^26]: one gather kernel. Floor:
//       read idx and x (each element once), write the result.
//   I3  add_at(bins, idx, v): 2^24 float32 values into 2^20 bins, idx random: one scatter
//       kernel with atomics (after a fill of the bins). Floor: read idx and v, read and write
//       the bins once.
#include <cmath>
#include <cstdio>

#include "cufuse/array.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "harness.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

constexpr int64_t kN = int64_t(1) << 26;
constexpr int64_t kAtN = int64_t(1) << 24, kBins = int64_t(1) << 20;

// Uniform random integers in [0, n) as int64 (lazy: floor(u * n)).
cf::Array random_index(int64_t count, int64_t n, uint64_t seed) {
  return cf::astype(cf::floor(cf::random::uniform({count}, cf::f64, seed) * double(n)), cf::i64);
}

std::vector<double> to_f64(const cf::Array& a) { return cf::astype(a, cf::f64).to_host<double>(); }

void run_i1(Ctx& ctx, Record& r) {
  set_bandwidth_floor(ctx, r, double(kN) * 4 + double(kN) * 1 + double(kN) / 2 * 4);
  cf::Array x = cf::random::normal({kN}, cf::f32, 11);
  cf::Array mask = cf::random::normal({kN}, cf::f32, 12) > 0;
  cf::eval(x, mask);
  {  // check: the count, and a sample of the selected values in order
    cf::Array s = x[mask];
    const std::vector<double> hx = to_f64(x);
    const std::vector<bool> hm = mask.to_host<bool>();
    std::vector<float> want;
    for (size_t i = 0; i < hx.size(); ++i)
      if (hm[i]) want.push_back(static_cast<float>(hx[i]));
    if (static_cast<int64_t>(want.size()) != s.size()) {
      r.check = Check{true, false, strf("count %lld, want %zu", static_cast<long long>(s.size()), want.size())};
    } else {
      r.check = check_sample(to_host_f32(s), [&](size_t i) { return double(want[i]); }, 0, 0);
    }
  }
  auto call = [&] {
    cf::Array s = x[mask];
    s.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "one pass: one selection kernel (tiles by look-back), one count read back; two passes "
            "(CUFUSE_SELECT_ONE_PASS_BYTES=0): tile counts and their scan, the count, one compaction kernel";
}

void run_i1_lazy(Ctx& ctx, Record& r) {
  cf::Array x = cf::random::normal({kN}, cf::f32, 13);
  cf::eval(x);
  {  // check: the count, and a sample of the selected values in order
    cf::Array s = (x * 2.0f)[cf::sin(x) > 0.5f];
    const std::vector<float> hx = to_host_f32(x);
    std::vector<float> want;
    for (float v : hx)
      if (std::sin(v) > 0.5f) want.push_back(v * 2.0f);
    set_bandwidth_floor(ctx, r, double(kN) * 4 + double(s.size()) * 4);
    // sin on the device and on the host may differ in the last bit near 0.5: a count within 0.01%
    const double dc = std::fabs(double(s.size()) - double(want.size()));
    if (dc > 1e-4 * double(want.size())) {
      r.check = Check{true, false, strf("count %lld, want %zu", static_cast<long long>(s.size()), want.size())};
    } else if (dc == 0) {
      r.check = check_sample(to_host_f32(s), [&](size_t i) { return double(want[i]); }, 0, 0);
    } else {
      r.check = Check{true, true, strf("count %lld, host %zu (sin rounding at 0.5)", static_cast<long long>(s.size()),
                                       want.size())};
    }
  }
  auto call = [&] {
    cf::Array s = (x * 2.0f)[cf::sin(x) > 0.5f];
    s.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "mask and values computed in the kernels (fused-input): one pass, one selection kernel and one count "
            "read back (two passes: tile counts, their scan, the count, one compaction kernel)";
}

void run_i2(Ctx& ctx, Record& r) {
  set_bandwidth_floor(ctx, r, double(kN) * 8 + double(kN) * 4 + double(kN) * 4);
  cf::Array x = cf::random::normal({kN}, cf::f32, 21);
  cf::Array idx = random_index(kN, kN, 22);
  cf::eval(x, idx);
  {
    cf::Array y = cf::take(x, idx);
    y.eval();
    const std::vector<float> hx = to_host_f32(x), hy = to_host_f32(y);
    const std::vector<int64_t> hi = idx.to_host<int64_t>();
    r.check = check_sample(hy, [&](size_t i) { return double(hx[static_cast<size_t>(hi[i])]); }, 0, 0);
  }
  auto call = [&] {
    cf::Array y = cf::take(x, idx);
    y.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "one fused gather kernel, indices checked on the device";
}

void run_i3(Ctx& ctx, Record& r) {
  set_bandwidth_floor(ctx, r, double(kAtN) * 8 + double(kAtN) * 4 + double(kBins) * 4 * 2);
  cf::Array v = cf::random::normal({kAtN}, cf::f32, 31);
  cf::Array idx = random_index(kAtN, kBins, 32);
  cf::eval(v, idx);
  {
    cf::Array bins = cf::zeros({kBins}, cf::f32);
    cf::add_at(bins, idx, v);
    const std::vector<double> hv = to_f64(v);
    const std::vector<int64_t> hi = idx.to_host<int64_t>();
    std::vector<double> want(static_cast<size_t>(kBins), 0.0);
    for (size_t i = 0; i < hv.size(); ++i) want[static_cast<size_t>(hi[i])] += hv[i];
    r.check = check_sample(to_host_f32(bins), [&](size_t i) { return want[i]; }, 1e-4, 1e-4);
  }
  auto call = [&] {
    cf::Array bins = cf::zeros({kBins}, cf::f32);
    cf::add_at(bins, idx, v);
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "a fill of the bins, then one scatter kernel with float atomics (order-dependent rounding)";
}

}  // namespace

void add_indexing_workloads(Registry& r) {
  r.push_back({"I1", "x[mask], half of the mask True, x f32[2^26]", FloorKind::Bandwidth, run_i1});
  r.push_back({"I1-lazy", "(x*2)[sin(x) > 0.5], x f32[2^26]", FloorKind::Bandwidth, run_i1_lazy});
  r.push_back({"I2", "take(x, idx), idx random int64, x f32[2^26]", FloorKind::Bandwidth, run_i2});
  r.push_back({"I3", "add_at of 2^24 f32 values into 2^20 bins, random idx", FloorKind::Bandwidth, run_i3});
}

}  // namespace bench
