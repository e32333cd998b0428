// bench/fft_workloads.cpp: issue 33's FFT workloads (peers: bench/peers_fft.py).
//   FF1  fft(z), z c64[2^24]: one cuFFT C2C call (plan from the cache, work area from the pool).
//   FF2  rfft2(x), x f32[4096, 4096]: one cuFFT R2C 2-D call.
//   FF3  abs(fft(z * w)) ** 2, z c64[2^24], w f32[2^24]: a fused spectrum, one kernel writing
//        z * w, the FFT, one kernel for abs(.) ** 2.
// Floors: reading the input and writing the result once (an FFT of this size makes several
// passes over memory; the peers are the measure). Checks: a few bins against a direct DFT sum
// in double on the host.
#include <cmath>
#include <complex>
#include <numbers>

#include "cufuse/array.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/fft.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "harness.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

constexpr int64_t kN = int64_t(1) << 24;
constexpr int64_t kSide = 4096;

using c128 = std::complex<double>;

// Bins k of the DFT of z (host values), in double, against the transform's values there.
Check check_bins(const std::vector<c128>& z, const std::vector<c128>& got, const std::vector<int64_t>& bins,
                 const std::function<double(c128)>& post) {
  const int64_t n = static_cast<int64_t>(z.size());
  double worst = 0, scale = 0;
  for (int64_t k : bins) {
    c128 s = 0;
    for (int64_t j = 0; j < n; ++j)
      s += z[size_t(j)] * std::polar(1.0, -2 * std::numbers::pi * double((j * k) % n) / double(n));
    const double want = post(s), g = post(got[size_t(k)]);
    worst = std::max(worst, std::abs(g - want));
    scale = std::max(scale, std::abs(want));
  }
  const bool ok = worst <= 1e-4 * std::max(scale, 1.0) + 1e-3 * std::sqrt(double(n));
  return Check{true, ok, strf("%zu bins against a direct DFT: max error %.3g (scale %.3g)", bins.size(), worst, scale)};
}

std::vector<c128> host_c(const cf::Array& a) { return a.astype(cf::c128).to_host<c128>(); }

cf::Array complex_input(uint64_t seed) {
  return cf::random::normal({kN}, cf::f32, seed) + cf::random::normal({kN}, cf::f32, seed + 1) * cf::Scalar(std::complex<double>(0, 1));
}

void run_ff1(Ctx& ctx, Record& r) {
  set_bandwidth_floor(ctx, r, double(kN) * 8 * 2);
  cf::Array z = complex_input(71);
  z.eval();
  {
    cf::Array f = cf::fft::fft(z);
    r.check = check_bins(host_c(z), host_c(f), {0, 1, 12345, kN / 2, kN - 1}, [](c128 v) { return v.real(); });
  }
  auto call = [&] {
    cf::Array f = cf::fft::fft(z);
    f.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "one cuFFT C2C call (cached plan, pool work area)";
}

void run_ff2(Ctx& ctx, Record& r) {
  set_bandwidth_floor(ctx, r, double(kSide) * kSide * 4 + double(kSide) * (kSide / 2 + 1) * 8);
  cf::Array x = cf::random::normal({kSide, kSide}, cf::f32, 72);
  x.eval();
  {
    // row 0's 1-D transform of the column sums is bin (0, k) of the 2-D transform
    cf::Array f = cf::fft::rfft2(x);
    std::vector<c128> col(size_t(kSide), 0.0);
    const auto hx = to_host_f32(x);
    for (int64_t i = 0; i < kSide; ++i)
      for (int64_t j = 0; j < kSide; ++j) col[size_t(j)] += hx[size_t(i * kSide + j)];
    const auto row0 = host_c(f.index({0}));
    std::vector<c128> padded(row0.begin(), row0.end());
    padded.resize(size_t(kSide));
    r.check = check_bins(col, padded, {0, 1, 100, kSide / 2}, [](c128 v) { return v.real(); });
  }
  auto call = [&] {
    cf::Array f = cf::fft::rfft2(x);
    f.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "cuFFT R2C over the rows, C2C down the columns written transposed (the result a strided view)";
}

void run_ff3(Ctx& ctx, Record& r) {
  set_bandwidth_floor(ctx, r, double(kN) * (8 + 4 + 4));
  cf::Array z = complex_input(73);
  cf::Array w = cf::random::uniform({kN}, cf::f32, 75);
  z.eval();
  w.eval();
  auto op = [&] { return cf::power(cf::abs(cf::fft::fft(z * w)), 2); };
  {
    cf::Array s = op();
    const auto hz = host_c(z);
    const auto hw = to_host_f32(w);
    std::vector<c128> zw(hz.size());
    for (size_t i = 0; i < zw.size(); ++i) zw[i] = hz[i] * double(hw[i]);
    const auto hs = host_c(s);
    r.check = check_bins(zw, hs, {0, 7, kN / 3}, [](c128 v) { return v.imag() == 0 ? v.real() : std::norm(v); });
  }
  auto call = [&] {
    cf::Array s = op();
    s.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "z * w kernel, cuFFT C2C, abs ** 2 kernel";
}

}  // namespace

void add_fft_workloads(Registry& r) {
  r.push_back({"FF1", "fft(z), z c64[2^24]", FloorKind::Bandwidth, run_ff1});
  r.push_back({"FF2", "rfft2(x), x f32[4096,4096]", FloorKind::Bandwidth, run_ff2});
  r.push_back({"FF3", "abs(fft(z * w)) ** 2, z c64[2^24], w f32[2^24]", FloorKind::Bandwidth, run_ff3});
}

}  // namespace bench
