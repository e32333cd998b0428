// examples/seed004_streams.cpp: seed 004's kernel-fusion and streams parts in C++.
//   1. squared_diff plain, through cufuse::fuse, and as a CuPy-style ElementwiseKernel,
//      timed with profiler::benchmark (cupyx.profiler.benchmark's output);
//   2. two matrix inversions on the default stream, then on two streams with events.
// Without a CUDA device it says so plainly (and shows the fused plan) and exits 0.
#include <chrono>
#include <cstdio>

#include <cufuse/cufuse.hpp>

namespace cf = cufuse;

static double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main() {
  if (!cf::Device::available()) {
    std::printf("no CUDA device (%s); nothing to run.\n", cf::Device::unavailable_reason().c_str());
    auto x = cf::placeholder(cf::i64, {10000});
    std::printf("squared_diff through fuse() would be this plan:\n%s",
                cf::plan_dump({(x - x[{cf::slice(cf::none, cf::none, -1)}]) * (x - x[{cf::slice(cf::none, cf::none, -1)}])},
                              false)
                    .c_str());
    return 0;
  }
  try {
    // ---- kernel fusion
    auto squared_diff = [](const cf::Array& x, const cf::Array& y) { return (x - y) * (x - y); };
    auto fused_squared_diff = cf::fuse([](auto x, auto y) { return (x - y) * (x - y); });
    const cf::ElementwiseKernel squared_diff_kernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff");

    const int64_t size = 10000;
    cf::Array x = cf::arange(size).eval();
    cf::Array y = cf::arange(size).eval()[{cf::slice(cf::none, cf::none, -1)}];
    std::printf("%s\n", cf::profiler::benchmark([&] { squared_diff(x, y).eval(); }, 10, 10, "squared_diff").str().c_str());
    std::printf("%s\n",
                cf::profiler::benchmark([&] { fused_squared_diff(x, y); }, 10, 10, "fused_squared_diff").str().c_str());
    std::printf("%s\n",
                cf::profiler::benchmark([&] { squared_diff_kernel(x, y).eval(); }, 10, 10, "elementwise_kernel").str().c_str());
    const auto a = fused_squared_diff(x, y).to_host<int64_t>();
    const auto b = squared_diff_kernel(x, y).to_host<int64_t>();
    std::printf("fused and ElementwiseKernel agree: %s (first values %lld %lld %lld)\n", a == b ? "yes" : "NO",
                static_cast<long long>(a[0]), static_cast<long long>(a[1]), static_cast<long long>(a[2]));

    // ---- streams and events
    const int64_t n = 6000;
    cf::Array eye = (cf::arange(n).reshape({n, 1}) == cf::arange(n)).astype(cf::f32);
    cf::Array A_gpu = (cf::random::uniform({n, n}, cf::f32, 0) + eye * float(n)).eval();
    cf::linalg::inv(A_gpu).eval();  // compile and create the solver handles outside the timing
    cf::synchronize();

    auto t0 = std::chrono::steady_clock::now();
    cf::Array C1 = cf::linalg::inv(A_gpu).eval();
    cf::Array C2 = cf::linalg::inv(A_gpu).eval();
    cf::Stream::null().synchronize();
    std::printf("Baseline implementation time: %.4f seconds\n", seconds_since(t0));

    t0 = std::chrono::steady_clock::now();
    cf::Stream stream1, stream2;
    cf::Event event1, event2;
    {
      cf::StreamScope on(stream1);
      C1 = cf::linalg::inv(A_gpu).eval();
      event1.record(stream1);
    }
    {
      cf::StreamScope on(stream2);
      C2 = cf::linalg::inv(A_gpu).eval();
      event2.record(stream2);
    }
    event1.synchronize();
    event2.synchronize();
    std::printf("Stream and event time: %.4f seconds\n", seconds_since(t0));
    const float err = cf::max(cf::abs(cf::matmul(A_gpu, C1) - eye)).item<float>();
    std::printf("max |A @ inv(A) - I| = %.2e\n", static_cast<double>(err));
  } catch (const cf::Error& e) {
    std::printf("cufuse error: %s\n", e.what());
    return 1;
  }
  return 0;
}
