// examples/demo_fusion.cpp: the main demo. Seed 004's lesson on kernel fusion, in C++:
// `(x - y) * (x - y)` and a longer elementwise chain (WORKLOADS.md's W1), each run
// unfused (one kernel per op, every intermediate written to memory, as plain CuPy does)
// and fused (cufuse's lazy evaluation: one kernel), with times and kernel counts.
// On a machine with no GPU it says so and prints the kernels cufuse generates instead.
#include <cstdio>

#include <cufuse/cufuse.hpp>

namespace cf = cufuse;

// W1: (x*2.5+1)*sin(x) - exp(-x*x) + sqrt(abs(x)). `eager` materializes after every op.
static cf::Array w1(const cf::Array& x, bool eager) {
  auto step = [&](cf::Array a) { return eager ? a.eval() : a; };
  auto a = step(x * 2.5f);
  auto b = step(a + 1);
  auto c = step(cf::sin(x));
  auto d = step(b * c);
  auto e = step(x * x);
  auto f = step(-e);
  auto g = step(cf::exp(f));
  auto h = step(d - g);
  auto i = step(cf::abs(x));
  auto j = step(cf::sqrt(i));
  return step(h + j);
}

static cf::Array squared_diff(const cf::Array& x, const cf::Array& y, bool eager) {
  auto d = x - y;
  if (eager) d.eval();
  return d * d;
}

int main() {
  if (!cf::Device::available()) {
    std::printf("No CUDA device here (%s).\n", cf::Device::unavailable_reason().c_str());
    std::printf("Nothing can run, so here are the kernels cufuse generates (planned and compiled for sm_90):\n\n");
    auto x = cf::placeholder(cf::f32, {1 << 27});
    auto y = cf::placeholder(cf::f32, {1 << 27});
    std::printf("=== (x - y) * (x - y) ===\n%s\n", cf::plan_dump({squared_diff(x, y, false)}).c_str());
    std::printf("=== (x*2.5+1)*sin(x) - exp(-x*x) + sqrt(abs(x)) ===\n%s\n", cf::plan_dump({w1(x, false)}, false).c_str());
    return 0;
  }
  const auto dev = cf::Device::current();
  std::printf("cufuse demo on %s (sm_%d)\n\n", dev.name().c_str(), dev.compute_capability());

  // Seed 004: x = arange(10000), y = arange(10000)[::-1]
  {
    auto x = cf::arange(10000).astype(cf::f32).eval();
    auto y = cf::arange(10000)[{cf::slice(cf::none, cf::none, -1)}].astype(cf::f32).eval();
    cf::reset_stats();
    squared_diff(x, y, true).eval();
    const auto k_unfused = cf::stats().kernels_launched;
    cf::reset_stats();
    auto r = squared_diff(x, y, false).eval();
    const auto k_fused = cf::stats().kernels_launched;
    const double t_unfused = cf::profiler::benchmark([&] { squared_diff(x, y, true).eval(); }, 200, 3).gpu_mean() * 1e3;
    const double t_fused = cf::profiler::benchmark([&] { squared_diff(x, y, false).eval(); }, 200, 3).gpu_mean() * 1e3;
    std::printf("(x - y) * (x - y), 10000 elements (seed 004):\n");
    std::printf("  unfused: %llu kernels, %8.1f us per call\n", (unsigned long long)k_unfused, t_unfused * 1e3);
    std::printf("  fused:   %llu kernel,  %8.1f us per call   (r[0] = %g, expected %g)\n\n",
                (unsigned long long)k_fused, t_fused * 1e3, r[{0}].item<float>(), 9999.0 * 9999.0);
  }
  // W1 on 2^27 float32 elements: memory traffic is the cost.
  {
    auto x = cf::random::normal({1 << 27}, cf::f32, 42).eval();
    cf::reset_stats();
    w1(x, true);
    const auto k_unfused = cf::stats().kernels_launched;
    cf::reset_stats();
    w1(x, false).eval();
    const auto k_fused = cf::stats().kernels_launched;
    const double t_unfused = cf::profiler::benchmark([&] { w1(x, true); }, 10, 3).gpu_mean() * 1e3;
    const double t_fused = cf::profiler::benchmark([&] { w1(x, false).eval(); }, 20, 3).gpu_mean() * 1e3;
    const double gb = 2.0 * (1 << 27) * 4 / 1e9;
    std::printf("(x*2.5+1)*sin(x) - exp(-x*x) + sqrt(abs(x)), 2^27 float32 elements (W1):\n");
    std::printf("  unfused: %llu kernels, %8.3f ms per call\n", (unsigned long long)k_unfused, t_unfused);
    std::printf("  fused:   %llu kernel,  %8.3f ms per call   (%.0f GB/s of the 1.07 GB that must move)\n",
                (unsigned long long)k_fused, t_fused, gb / (t_fused * 1e-3));
    std::printf("  speedup: %.1fx\n", t_unfused / t_fused);
  }
  return 0;
}
