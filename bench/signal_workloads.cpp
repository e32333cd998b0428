// bench/signal_workloads.cpp: W10, seed 003's convolve2d (full) of an f64[2048,2048] image
// with a 15x15 Gaussian: one generated direct-convolution kernel. The floor is compute:
// 2062^2 outputs x 225 multiply-adds at the device's float64 FMA rate (64 per SM per clock
// on sm_80/sm_90/sm_100 parts, 2 on the others), the "~0.06 ms compute" of WORKLOADS.md.
#include <cmath>
#include <cstdio>

#include <cuda_runtime_api.h>

#include "cufuse/cufuse.hpp"
#include "harness.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

constexpr int64_t kImage = 2048, kTaps = 15;

// Peak float64 flop rate of the current device (FMA = 2 flops), or NaN when unknown.
double fp64_peak_flops() {
  int dev = 0, sms = 0, khz = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    cudaGetLastError();
    return std::nan("");
  }
  const bool fp64_rich = minor == 0 && (major == 8 || major == 9 || major == 10);
  return double(sms) * double(khz) * 1e3 * (fp64_rich ? 64.0 : 2.0) * 2.0;
}

// The same Gaussian as peers.py's gaussian_kernel(): sigma 3, normalized.
cf::Array gaussian() {
  std::vector<double> g(kTaps * kTaps);
  double s = 0;
  for (int64_t i = 0; i < kTaps; ++i)
    for (int64_t j = 0; j < kTaps; ++j) {
      const double a = double(i - kTaps / 2), b = double(j - kTaps / 2);
      s += g[static_cast<size_t>(i * kTaps + j)] = std::exp(-(a * a + b * b) / (2 * 3.0 * 3.0));
    }
  for (auto& v : g) v /= s;
  return cf::from_host(g, cf::Shape{kTaps, kTaps});
}

void run_w10(Ctx& ctx, Record& r) {
  const int64_t out = kImage + kTaps - 1;
  auto img = cf::random::normal({kImage, kImage}, cf::f64, 103).eval();
  auto k = gaussian();
  r.flops = 2.0 * double(out) * double(out) * double(kTaps * kTaps);
  const double peak = fp64_peak_flops();
  if (std::isfinite(peak)) r.floor_ms = r.flops / peak * 1e3;
  auto expr = [&] { return cf::signal::convolve2d(img, k); };
  {
    const cf::Array y = expr();
    std::vector<double> hi(static_cast<size_t>(kImage * kImage)), hk(static_cast<size_t>(kTaps * kTaps));
    img.copy_to_host(hi.data(), hi.size() * sizeof(double));
    k.copy_to_host(hk.data(), hk.size() * sizeof(double));
    const std::vector<std::pair<int64_t, int64_t>> at = {{0, 0}, {7, 2000}, {1024, 1024}, {2061, 2061}, {2050, 13}};
    std::vector<float> got;
    std::vector<double> want;
    for (auto [i, j] : at) {
      double acc = 0;
      for (int64_t u = 0; u < kTaps; ++u)
        for (int64_t v = 0; v < kTaps; ++v)
          if (i - u >= 0 && i - u < kImage && j - v >= 0 && j - v < kImage)
            acc += hi[static_cast<size_t>((i - u) * kImage + (j - v))] * hk[static_cast<size_t>(u * kTaps + v)];
      want.push_back(acc);
      got.push_back(static_cast<float>(y[{i, j}].item<double>()));
    }
    r.check = check_sample(got, [&](size_t i) { return want[i]; }, 1e-6, 1e-6);
  }
  auto call = [&] {
    cf::Array y = expr();
    y.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = strf("one generated direct-convolution kernel (f64 FMA); floor: %.1f TFLOP/s float64 peak of this device",
                 peak / 1e12);
}

}  // namespace

void add_signal_workloads(Registry& r) {
  r.push_back({"W10", "convolve2d (full) of f64[2048,2048] with a 15x15 Gaussian", FloorKind::None, run_w10});
}

}  // namespace bench
