// examples/seed003_convolve.cpp: seed 003's lesson in C++: a 2048x2048 image of deltas (a
// 16x16 unit with a one in the middle, tiled 128x128 times) blurred by a 15x15 Gaussian with
// convolve2d, on the host (cufuse's reference evaluator, one core, in place of SciPy) and on
// the GPU (one generated kernel); the results compared (np.allclose); the GPU timed with and
// without the transfers; then the 1-D convolution of the flattened image with the Gaussian's
// diagonal (np.convolve). Plotting is left out. Without a CUDA device it says so, runs a
// 64x64 image on the host and prints the kernel the GPU would run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include <cufuse/cufuse.hpp>

namespace cf = cufuse;

namespace {

// np.tile(primary_unit, (n, n)) of a 16x16 unit with a one at [8, 8].
cf::Array deltas(int64_t n) {
  cf::Array unit = cf::zeros({16, 16}, cf::f64);
  unit[{8, 8}] = 1.0;
  return cf::tile(unit, {n, n});
}

// x, y = meshgrid(linspace(-2, 2, 15), linspace(-2, 2, 15)); exp(-(dst - muu)^2 / (2 sigma^2)).
cf::Array gauss() {
  const auto xy = cf::meshgrid({cf::linspace(-2, 2, 15), cf::linspace(-2, 2, 15)});
  const cf::Array &x = xy[0], &y = xy[1];
  const cf::Array dst = cf::sqrt(x * x + y * y);
  const double sigma = 1, muu = 0;
  return cf::exp(-(cf::square(dst - muu) / (2.0 * sigma * sigma)));
}

// img[first:first+n, first:first+n]
void print_window(const cf::Array& img, int64_t first, int64_t n) {
  const auto c = img[{cf::slice(first, first + n), cf::slice(first, first + n)}].copy().to_host<double>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) std::printf(" %5.3f", c[static_cast<size_t>(i * n + j)]);
    std::printf("\n");
  }
}

}  // namespace

int main() {
  try {
    if (!cf::Device::available()) {
      std::printf("no CUDA device (%s): the GPU part is skipped.\n\n", cf::Device::unavailable_reason().c_str());
      cf::BackendScope host(cf::Backend::Reference);
      const cf::Array img = deltas(4).eval(), g = gauss().eval();
      const cf::Array out = cf::signal::convolve2d(img, g);
      std::printf("convolve2d of a 64x64 image of deltas with the 15x15 Gaussian, on the host: shape (%lld, %lld)\n",
                  static_cast<long long>(out.shape()[0]), static_cast<long long>(out.shape()[1]));
      std::printf("out[8:16, 8:16], around the first blurred delta (the Gaussian's peak is at [15, 15]):\n");
      print_window(out, 8, 8);
      std::printf("\nthe GPU would run this plan (2048x2048 image):\n%s",
                  cf::plan_dump({cf::signal::convolve2d(cf::placeholder(cf::f64, {2048, 2048}),
                                                        cf::placeholder(cf::f64, {15, 15}))})
                      .c_str());
      return 0;
    }

    // ---- the image and the Gaussian, on the host first (as the notebook builds them in NumPy)
    std::vector<double> deltas_host, gauss_host;
    {
      cf::BackendScope host(cf::Backend::Reference);
      deltas_host = deltas(128).to_host<double>();
      gauss_host = gauss().to_host<double>();
    }
    std::printf("deltas: (2048, 2048), gauss: (15, 15)\n");

    // ---- on the host: cufuse's reference evaluator stands in for scipy.signal.convolve2d
    std::vector<double> on_cpu;
    double cpu_ms = 0;
    {
      cf::BackendScope host(cf::Backend::Reference);
      const cf::Array d = cf::from_host(deltas_host, cf::Shape{2048, 2048}), g = cf::from_host(gauss_host, cf::Shape{15, 15});
      auto t0 = std::chrono::steady_clock::now();
      on_cpu = cf::signal::convolve2d(d, g).to_host<double>();
      cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    std::printf("host convolve2d (reference evaluator, one core): %.1f ms\n", cpu_ms);

    // ---- on the GPU
    const cf::Array deltas_gpu = cf::from_host(deltas_host, cf::Shape{2048, 2048});
    const cf::Array gauss_gpu = cf::from_host(gauss_host, cf::Shape{15, 15});
    cf::Array convolved = cf::signal::convolve2d(deltas_gpu, gauss_gpu).eval();
    const double gpu_ms = cf::profiler::benchmark([&] { cf::signal::convolve2d(deltas_gpu, gauss_gpu).eval(); }, 20, 1).gpu_mean() * 1e3;
    std::printf("GPU convolve2d: %.3f ms (speedup %.0fx)\n", gpu_ms, cpu_ms / gpu_ms);
    std::printf("convolved[10:16, 10:16]:\n");
    print_window(convolved, 10, 6);
    const bool close = cf::allclose(convolved, cf::from_host(on_cpu, convolved.shape()));
    std::printf("allclose(GPU, host): %s\n", close ? "True" : "False");
    if (!close) return 1;

    // ---- with the transfers: copy in, convolve, copy back
    const double round_trip_ms = 1e3 * cf::profiler::benchmark(
        [&] {
          const cf::Array d = cf::from_host(deltas_host, cf::Shape{2048, 2048});
          const cf::Array g = cf::from_host(gauss_host, cf::Shape{15, 15});
          volatile double sink = cf::signal::convolve2d(d, g).to_host<double>()[0];
          (void)sink;
        },
        10, 1).gpu_mean();
    std::printf("transfer, compute, transfer back: %.3f ms (speedup %.0fx)\n", round_trip_ms, cpu_ms / round_trip_ms);

    // ---- 1-D: np.convolve of the flattened image with the Gaussian's diagonal
    const cf::Array deltas_1d = deltas_gpu.ravel();
    const cf::Array gauss_1d = cf::diagonal(gauss_gpu);
    const double conv1d_ms = cf::profiler::benchmark([&] { cf::convolve(deltas_1d, gauss_1d).eval(); }, 20, 1).gpu_mean() * 1e3;
    const cf::Array c1 = cf::convolve(deltas_1d, gauss_1d);
    std::printf("1-D convolve of %lld values with %lld taps on the GPU: %.3f ms, result shape (%lld,)\n",
                static_cast<long long>(deltas_1d.size()), static_cast<long long>(gauss_1d.size()), conv1d_ms,
                static_cast<long long>(c1.size()));
    // ... checked against the host (np.convolve), with its speed-up
    std::vector<double> c1_host;
    double cpu1_ms = 0;
    {
      cf::BackendScope host(cf::Backend::Reference);
      const cf::Array d = cf::from_host(deltas_host, cf::Shape{2048 * 2048});
      const cf::Array g = cf::diagonal(cf::from_host(gauss_host, cf::Shape{15, 15}));
      auto t0 = std::chrono::steady_clock::now();
      c1_host = cf::convolve(d, g).to_host<double>();
      cpu1_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    const bool close1 = cf::allclose(c1, cf::from_host(c1_host, c1.shape()));
    std::printf("1-D on the host: %.1f ms (speedup %.0fx); allclose(GPU, host): %s\n", cpu1_ms, cpu1_ms / conv1d_ms,
                close1 ? "True" : "False");
    if (!close1) return 1;
  } catch (const cf::Error& e) {
    std::printf("cufuse error: %s\n", e.what());
    return 1;
  }
  return 0;
}
