// examples/seed004_streams.cpp: seed 004 ("Notebook 1: Introduction to CuPy"), every computing
// cell in order, in C++. Where the notebook runs NumPy, this runs cufuse's host reference
// backend (the same functions on the CPU); where it runs CuPy, the GPU. Each block names the
// cell it follows ("In [n]") and prints what the cell prints.
// Without a CUDA device it says so plainly, runs the host cells, and exits 0.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <cufuse/cufuse.hpp>

namespace cf = cufuse;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// %timeit -n 5: the mean of 5 runs (after one untimed run), in ms.
template <class F>
double mean_ms(F&& f, int n = 5) {
  f();
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) f();
  return 1e3 * seconds_since(t0) / n;
}

cf::Array uniform_pm1(int64_t n, int64_t m) { return cf::random::uniform({n, m}, cf::f32) * 2.0f - 1.0f; }

void host_cells() {
  cf::BackendScope host(cf::Backend::Reference);
  // In [1]-[2]: QR of a 512x512 matrix on the host
  cf::Array A = cf::random::randn({512, 512}).eval();
  // (The host reference's QR is an unblocked loop nest: one timed run, not %timeit's 5 x 7.)
  auto t0 = Clock::now();
  cf::linalg::qr(A).R.eval();
  std::printf("In [2]  host QR 512x512: %.1f ms (one run)\n", 1e3 * seconds_since(t0));
  // In [5]: a small int32 array on the host
  std::printf("In [5]  A_cpu is a host array\nWith initial values:\n%s\n",
              cf::to_string(cf::array({{1, 2, 3}, {4, 5, 6}})).c_str());
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line as it is printed
  host_cells();
  if (!cf::Device::available()) {
    std::printf("no CUDA device (%s): the GPU cells (In [3]-[4], [6]-[7], [10]-[22] and the streams) do not run.\n",
                cf::Device::unavailable_reason().c_str());
    auto x = cf::placeholder(cf::i64, {10000});
    auto y = x[{cf::slice(cf::none, cf::none, -1)}];
    std::printf("squared_diff through fuse() would be this plan:\n%s", cf::plan_dump({(x - y) * (x - y)}, false).c_str());
    return 0;
  }
  try {
    // In [3]-[4]: the same QR on the GPU
    {
      cf::Array A = cf::random::randn({512, 512}).eval();
      auto QR = cf::linalg::qr(A);
      std::printf("In [4]  GPU QR 512x512: %.2f ms per loop (mean of 5)\n", mean_ms([&] {
                    cf::linalg::qr(A).R.eval();
                    cf::synchronize();
                  }));
    }
    // In [5]-[7]: host data to the device, squared there, back to the host
    std::vector<int32_t> A_cpu = {1, 2, 3, 4, 5, 6};
    cf::Array A_gpu = cf::from_host(A_cpu, cf::Shape{2, 3});
    std::printf("In [6]  A_gpu is a device array (%s, device %d)\n", cf::name(A_gpu.dtype()).data(), A_gpu.device());
    A_gpu = cf::square(A_gpu);
    A_cpu = A_gpu.to_host<int32_t>();
    {
      cf::BackendScope host(cf::Backend::Reference);
      std::printf("In [7]  Squared values:\n%s\n", cf::to_string(cf::from_host(A_cpu, cf::Shape{2, 3})).c_str());
    }
    // In [10]: square again, on the device
    std::printf("In [10] %s\n", cf::to_string(cf::square(A_gpu)).c_str());

    // In [11]-[12]: a 4096x4096 float32 matmul, host then GPU. The host reference's matmul is
    // a plain loop nest, not a BLAS: it runs at 512 here and the time is scaled by the work.
    {
      const int64_t size = 4096, host_size = 512;
      auto t0 = Clock::now();
      {
        cf::BackendScope host(cf::Backend::Reference);
        cf::Array a = uniform_pm1(host_size, host_size), b = uniform_pm1(host_size, host_size);
        cf::matmul(a, b).eval();
      }
      const double host_s = seconds_since(t0);
      std::printf("In [11] Elapsed wall clock time for the host reference at %lld: %g seconds (at %lld: ~%g s)\n",
                  static_cast<long long>(host_size), host_s, static_cast<long long>(size), host_s * 512.0);
      cf::Array a = uniform_pm1(size, size).eval(), b = uniform_pm1(size, size).eval();
      cf::matmul(a, b).eval();  // exclude one-time overhead
      cf::synchronize();
      t0 = Clock::now();
      cf::Array c = cf::matmul(a, b).eval();
      cf::synchronize();
      std::printf("In [12] Elapsed wall clock time for cufuse = %g seconds.\n", seconds_since(t0));
    }

    // In [13]: det's first call pays for compiling and creating handles; later ones do not
    std::printf("In [13] det of 512x512, five calls:\n");
    for (int i = 0; i < 5; ++i) {
      cf::Array A = cf::random::randn({512, 512}, cf::f32).eval();
      cf::synchronize();
      auto t0 = Clock::now();
      cf::linalg::det(A).eval();
      cf::synchronize();
      std::printf("%.4f\n", seconds_since(t0));
    }

    // In [15]: QR over sizes, host and GPU
    for (int64_t size : {64, 128, 256, 512, 1024, 2048}) {
      std::printf("\nIn [15] Input Matrix size: %lld x %lld\n", static_cast<long long>(size), static_cast<long long>(size));
      if (size <= 256) {
        cf::BackendScope host(cf::Backend::Reference);
        cf::Array A = uniform_pm1(size, size).eval();
        cf::linalg::qr(A).R.eval();
        auto t0 = Clock::now();
        cf::linalg::qr(A).R.eval();
        std::printf("host %f\n", seconds_since(t0));
      } else {
        std::printf("host (skipped: the host reference QR is an unblocked loop nest, ~8x the time per doubling)\n");
      }
      cf::Array A = uniform_pm1(size, size).eval();
      cf::linalg::qr(A).R.eval();
      cf::synchronize();
      auto t0 = Clock::now();
      cf::linalg::qr(A).R.eval();
      cf::synchronize();
      std::printf("cufuse %f\n", seconds_since(t0));
    }

    // In [16]-[18]: squared_diff, plain and fused, with profiler::benchmark
    {
      auto squared_diff = [](const cf::Array& x, const cf::Array& y) { return ((x - y) * (x - y)).eval(); };
      auto fused_squared_diff = cf::fuse([](auto x, auto y) { return (x - y) * (x - y); });
      const int64_t size = 10000;
      cf::Array x = cf::arange(size).eval();
      cf::Array y = cf::arange(size).eval()[{cf::slice(cf::none, cf::none, -1)}];
      std::printf("\nIn [18]\n%s\n", cf::profiler::benchmark([&] { squared_diff(x, y); }, 10, 10, "squared_diff").str().c_str());
      std::printf("%s\n", cf::profiler::benchmark([&] { fused_squared_diff(x, y); }, 10, 10, "fused_squared_diff").str().c_str());
      const bool same = cf::array_equal(squared_diff(x, y), fused_squared_diff(x, y));
      std::printf("plain and fused agree: %s\n", same ? "yes" : "NO");
      if (!same) return 1;
    }

    // In [21]: dot of 1e8 float32 values made on each side. The host side is a plain C++ loop
    // (NumPy's rand and dot): a fast generator filling the vectors, then the dot product.
    const int64_t n = 100000000;
    auto host_rand = [](std::vector<float>& v, uint64_t seed) {
      uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
      for (auto& e : v) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        e = static_cast<float>(x >> 40) * (1.0f / 16777216.0f);
      }
    };
    auto host_dot = [](const std::vector<float>& a, const std::vector<float>& b) {
      double s = 0;
      for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * double(b[i]);
      return s;
    };
    std::vector<float> a_cpu(static_cast<size_t>(n)), b_cpu(static_cast<size_t>(n));
    double cpu_time = 0;
    for (int i = 0; i < 3; ++i) {
      std::printf("In [21] Iteration %d\n", i);
      auto t0 = Clock::now();
      host_rand(a_cpu, 2 * i + 1);
      host_rand(b_cpu, 2 * i + 2);
      const double c_cpu = host_dot(a_cpu, b_cpu);
      cpu_time = seconds_since(t0);
      std::printf("host = %g seconds (dot %.6g)\n", cpu_time, c_cpu);
      t0 = Clock::now();
      cf::Array a = cf::random::rand({n}, cf::f32), b = cf::random::rand({n}, cf::f32);
      cf::dot(a, b).eval();
      cf::synchronize();
      const double gpu_time = seconds_since(t0);
      std::printf("cufuse = %g seconds\nSpeedup = %.2f\n", gpu_time, cpu_time / gpu_time);
    }
    // In [22]: the same with the data made on the host and copied over
    for (int i = 0; i < 3; ++i) {
      std::printf("In [22] Iteration %d\n", i);
      auto t0 = Clock::now();
      host_rand(a_cpu, 2 * i + 7);
      host_rand(b_cpu, 2 * i + 8);
      cf::Array a = cf::from_host(a_cpu, cf::Shape{n}), b = cf::from_host(b_cpu, cf::Shape{n});
      const double c_gpu = cf::dot(a, b).item<float>();
      const double gpu_time = seconds_since(t0);
      std::printf("cufuse with host data = %g seconds (dot %.6g, host %.6g)\nSpeedup = %.2f\n", gpu_time, c_gpu,
                  host_dot(a_cpu, b_cpu), cpu_time / gpu_time);
    }

    // In [?]: the current stream
    std::printf("current stream: %p (the null stream: %s)\n", cf::Stream::current().native(),
                cf::Stream::current() == cf::Stream::null() ? "yes" : "no");

    // Two inversions on one stream, then on two streams with events. CuPy checks no solver
    // status by default; cufuse waits for cuSOLVER's status unless told to ignore it, and that
    // wait would serialize the streams: linalg::ErrorScope(Errors::Ignore), as CuPy does.
    cf::linalg::ErrorScope ignore(cf::linalg::Errors::Ignore);
    const int64_t size = 6000;
    cf::Array A = (cf::random::rand({size, size}, cf::f32) + cf::eye(size, std::nullopt, 0, cf::f32) * float(size)).eval();
    cf::linalg::inv(A).eval();  // compile and create the solver handles outside the timing
    cf::synchronize();
    auto t0 = Clock::now();
    cf::Array C1 = cf::linalg::inv(A).eval();
    cf::Array C2 = cf::linalg::inv(A).eval();
    cf::Stream::null().synchronize();
    std::printf("Baseline implementation time: %.4f seconds\n", seconds_since(t0));

    t0 = Clock::now();
    cf::Stream stream1, stream2;
    cf::Event start1, start2, event1, event2;
    {
      cf::StreamScope on(stream1);
      start1.record(stream1);
      C1 = cf::linalg::inv(A).eval();
      event1.record(stream1);
    }
    {
      cf::StreamScope on(stream2);
      start2.record(stream2);
      C2 = cf::linalg::inv(A).eval();
      event2.record(stream2);
    }
    event1.synchronize();
    event2.synchronize();
    std::printf("Stream and event time: %.4f seconds\n", seconds_since(t0));
    // Overlap, from the events: each stream's busy time against the span of both.
    const double d1 = cf::Event::elapsed_ms(start1, event1), d2 = cf::Event::elapsed_ms(start2, event2);
    const double s2 = cf::Event::elapsed_ms(start1, start2), e2 = cf::Event::elapsed_ms(start1, event2);
    const double span = std::max(d1, e2) - std::min(0.0, s2);
    std::printf("stream 1: %.2f ms, stream 2: %.2f ms, both: %.2f ms, overlap %.2f ms (%.0f%% of the shorter)\n", d1, d2,
                span, d1 + d2 - span, 100.0 * (d1 + d2 - span) / std::min(d1, d2));
    const float err = cf::max(cf::abs(cf::matmul(A, C2) - cf::eye(size, std::nullopt, 0, cf::f32))).item<float>();
    std::printf("max |A @ inv(A) - I| = %.2e\n", static_cast<double>(err));
    if (!(err < 1e-3f)) return 1;
  } catch (const cf::Error& e) {
    std::printf("cufuse error: %s\n", e.what());
    return 1;
  }
  return 0;
}
