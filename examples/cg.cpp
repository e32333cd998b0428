// examples/cg.cpp: CuPy's examples/cg/cg.py in C++. Solves A x = b by conjugate gradients
// written as plain statements, as cg.py's fit() does (x += a * p; r1 = r0 - a * dot(A, p);
// `if norm(r1) < tol` every iteration; p = r1 + b * p; r0 = r1), with N = 2000 float64,
// A = R R^T for R integers in [-50, 50), b = A x_ans, tol 0.1 (the bench's W16). Prints the
// iterations, the time per iteration, kernels and plans per iteration (cufuse::stats), and
// the error against the known answer. With no GPU: N = 48 on the host reference backend.
//
//   cg [N] [tol] [max_iter]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include <cufuse/cufuse.hpp>

namespace cf = cufuse;

// R's and x_ans's integers: element i of stream s is splitmix64(s * 2^40 + i) mod 100 - 50.
// bench/peers_common.py (int_stream) makes the same numbers with NumPy, so that cufuse, CuPy,
// PyTorch and JAX solve the same system.
static uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static std::vector<double> int_stream(uint64_t stream, size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = double(splitmix64((stream << 40) + i) % 100) - 50.0;
  return v;
}

struct Fit {
  cf::Array x;
  int iterations = 0;
  bool converged = false;
};

// cg.py's fit(), statement for statement.
static Fit fit(const cf::Array& A, const cf::Array& b, double tol, int max_iter) {
  cf::Array x = cf::zeros_like(b, cf::f64);
  cf::Array r0 = b - cf::dot(A, x);
  cf::Array p = r0;
  for (int i = 0; i < max_iter; ++i) {
    cf::Array a = cf::inner(r0, r0) / cf::inner(p, cf::dot(A, p));
    x += a * p;
    cf::Array r1 = r0 - a * cf::dot(A, p);
    if (cf::linalg::norm(r1).item<double>() < tol) return {x, i + 1, true};
    cf::Array bb = cf::inner(r1, r1) / cf::inner(r0, r0);
    p = r1 + bb * p;
    r0 = r1;
  }
  return {x, max_iter, false};
}

static double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char** argv) {
  const bool gpu = cf::Device::available();
  std::optional<cf::BackendScope> host;
  if (gpu) {
    const auto dev = cf::Device::current();
    std::printf("CuPy's cg.py on %s (sm_%d)\n", dev.name().c_str(), dev.compute_capability());
  } else {
    std::printf("No CUDA device here (%s).\n", cf::Device::unavailable_reason().c_str());
    std::printf("Running a small system on the host reference backend instead (timings mean nothing).\n");
    host.emplace(cf::Backend::Reference);
  }
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : (gpu ? 2000 : 48);
  const double tol = argc > 2 ? std::atof(argv[2]) : 0.1;
  const int max_iter = argc > 3 ? std::atoi(argv[3]) : 5000;
  try {
    const cf::Array R = cf::from_host(int_stream(1, size_t(n * n)), cf::Shape{n, n});
    const cf::Array x_ans = cf::from_host(int_stream(2, size_t(n)), cf::Shape{n});
    const cf::Array A = cf::matmul(R, R.T()).eval();  // integers: exact in float64
    const cf::Array b = cf::dot(A, x_ans).eval();
    std::printf("N = %lld, tol %g, max_iter %d\n\n", static_cast<long long>(n), tol, max_iter);

    // A short warm-up solve compiles the kernels; then the whole solve.
    for (int trial = 0; trial < 2; ++trial) {
      const int iters = trial == 0 ? std::min(max_iter, 20) : max_iter;
      if (gpu) cf::Device::current().synchronize();
      cf::reset_stats();
      const auto t0 = std::chrono::steady_clock::now();
      const Fit f = fit(A, b, tol, iters);
      if (gpu) cf::Device::current().synchronize();
      const double s = seconds_since(t0);
      const cf::Stats st = cf::stats();
      const double it = f.iterations;
      const double err = cf::linalg::norm(f.x - x_ans).item<double>();
      std::printf("%s: %s after %d iterations, %.3f s (%.1f us per iteration)\n", trial ? "Solve" : "Warm-up",
                  f.converged ? "converged" : "stopped", f.iterations, s, s / it * 1e6);
      std::printf("  |x - x_ans| = %.6g\n", err);
      std::printf("  per iteration: %.1f kernels, %.2f evaluations, %.2f plans built, %.2f plan-cache hits, "
                  "%.2f NVRTC compiles\n",
                  double(st.kernels_launched) / it, double(st.evaluations) / it, double(st.plans_built) / it,
                  double(st.plan_cache_hits) / it, double(st.kernels_compiled) / it);
    }
  } catch (const cf::Error& e) {
    std::printf("cufuse error: %s\n", e.what());
    return 1;
  }
  return 0;
}
