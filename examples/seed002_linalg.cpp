// examples/seed002_linalg.cpp: seed 002 ("CuPy", NumPy's drop-in on GPUs) in C++.
//   1. X = randn(100, 100); U, S, Vh = svd(X), checked by U diag(S) Vh == X, U and Vh
//      orthogonal and S^2 == eigvalsh(X^T X); timed on the GPU and on the host reference
//      evaluator (cufuse's own host path, standing in for NumPy);
//   2. the TF32 study: 15000 x 15000 float32 matmuls, best of 3 x 10 synchronized calls
//      with TF32 off and on (CUPY_TF32=0/1 there, CUFUSE_TF32 or TF32Scope here), the speed-up,
//      and the notebook's question "is there a loss of precision?": the 3 x 3 X @ X both ways,
//      and both big products against a float64 product and against host dot products.
// cufuse's Philox numbers are not CuPy's, so randn(3, 3) with seed 42 has other values.
// Skipped: conda/Slurm/Singularity set-up (nothing to port). The closing remark on CUB,
// cuTENSOR and half-precision FFTs has no code cell; cufuse's FFTs are cufuse/fft.hpp (cuFFT;
// float16 input computes in complex64, as NumPy's; a float16 cuFFT path is not there yet).
// Without a CUDA device it says so, runs the SVD part and the 3 x 3 product on the host
// reference backend (which has no TF32: both settings give float32 results), and prints the
// plan of the big matmul with TF32 on; it exits 0.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cufuse/cufuse.hpp>
#include <functional>
#include <string>
#include <vector>

namespace cf = cufuse;

using Clock = std::chrono::steady_clock;
static double sec_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Mean ms per call over `reps` calls after one warm-up: the GPU time (profiler::benchmark) on
// a GPU, the host time on the reference backend.
static double mean_ms(const std::function<void()>& f, int reps, bool gpu) {
  if (gpu) return cf::profiler::benchmark(f, reps, 1, "svd").gpu_mean() * 1e3;
  f();
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) f();
  return sec_since(t0) * 1e3 / reps;
}

static double max_abs(const cf::Array& a) { return cf::max(cf::abs(a)).item<double>(); }

static void print_matrix(const char* label, const cf::Array& a) {
  const auto v = a.astype(cf::f64).to_host<double>();
  const int64_t r = a.shape(0), c = a.shape(1);
  std::printf("%s\n", label);
  for (int64_t i = 0; i < r; ++i) {
    std::printf("  %s", i ? " [" : "[[");
    for (int64_t j = 0; j < c; ++j) std::printf("%s%12.8f", j ? ", " : "", v[i * c + j]);
    std::printf("]%s\n", i + 1 == r ? "]" : ",");
  }
}

// svd(X) and the identities that say it is right. Returns the mean time in ms.
static double svd_part(const cf::Array& X, bool gpu, bool quiet = false) {
  const int64_t n = X.shape(0);
  auto [U, S, Vh] = cf::linalg::svd(X);
  cf::eval(U, S, Vh);
  const double ms = mean_ms(
      [&] {
        auto r = cf::linalg::svd(X);
        cf::eval(r.U, r.S, r.Vh);
      },
      10, gpu);
  if (quiet) return ms;
  const cf::Array I = (cf::arange(n)[{cf::_, cf::newaxis}] == cf::arange(n)).astype(cf::f64);
  const double recon = max_abs(cf::matmul(U * S[{cf::newaxis, cf::_}], Vh) - X);
  const double orth_u = max_abs(cf::matmul(U.T(), U) - I);
  const double orth_v = max_abs(cf::matmul(Vh, Vh.T()) - I);
  // eigvalsh is ascending, S descending.
  const cf::Array ev = cf::linalg::eigvalsh(cf::matmul(X.T(), X))[{cf::slice(cf::none, cf::none, -1)}];
  const double s2 = max_abs(S * S - ev) / (S[{0}] * S[{0}]).item<double>();
  const bool sorted = cf::all(S[{cf::slice(0, n - 1)}] >= S[{cf::slice(1, n)}]).item<bool>();
  std::printf("U %s  S %s  Vh %s, S from %.4g down to %.4g%s\n", cf::to_string(U.shape()).c_str(),
              cf::to_string(S.shape()).c_str(), cf::to_string(Vh.shape()).c_str(), S[{0}].item<double>(),
              S[{n - 1}].item<double>(), sorted ? " (descending)" : " (NOT SORTED)");
  const bool ok = recon < 1e-10 && orth_u < 1e-10 && orth_v < 1e-10 && s2 < 1e-10 && sorted;
  std::printf("max |U diag(S) Vh - X| %.1e, |U^T U - I| %.1e, |Vh Vh^T - I| %.1e, |S^2 - eig(X^T X)|/S0^2 %.1e  %s\n",
              recon, orth_u, orth_v, s2, ok ? "(match)" : "(MISMATCH)");
  return ms;
}

static void tiny_tf32(bool gpu) {
  std::printf("\n---- is there a loss of precision? X = randn(3, 3, float32, seed 42)\n");
  const cf::Array X = cf::random::normal({3, 3}, cf::f32, 42).eval();
  cf::Array off, on;
  {
    cf::TF32Scope tf32(false);
    off = cf::matmul(X, X).eval();
  }
  {
    cf::TF32Scope tf32(true);
    on = cf::matmul(X, X).eval();
  }
  print_matrix("X @ X, TF32 off:", off);
  print_matrix("X @ X, TF32 on:", on);
  std::printf("max |difference| %.2e%s\n", max_abs(on - off),
              gpu ? "" : "  (the reference backend has no TF32: both are float32)");
}

// One (i, j) entry of X @ Y as a double dot product on the host.
static double host_entry(const cf::Array& X, const cf::Array& Y, int64_t i, int64_t j) {
  const auto row = X[{i}].to_host<float>();
  const auto col = Y[{cf::_, j}].to_host<float>();
  double s = 0;
  for (size_t k = 0; k < row.size(); ++k) s += double(row[k]) * double(col[k]);
  return s;
}

static void big_tf32(int64_t N) {
  std::printf("\n---- TF32: %lld x %lld float32 matmul, best of 3 x 10 synchronized calls\n", (long long)N,
              (long long)N);
  const auto dev = cf::Device::current();
  if (dev.compute_capability() < 80)
    std::printf("(sm_%d: TF32 needs sm_80 or newer; CuPy warns and uses the default compute type)\n",
                dev.compute_capability());
  const cf::Array X = cf::random::normal({N, N}, cf::f32, 1).eval();
  const cf::Array Y = cf::random::normal({N, N}, cf::f32, 2).eval();
  const double flop = 2.0 * double(N) * double(N) * double(N);
  cf::Array Z[2];
  double best[2];
  for (int tf = 0; tf < 2; ++tf) {
    cf::TF32Scope scope(tf == 1);
    Z[tf] = cf::matmul(X, Y).eval();  // compile and plan outside the timing
    cf::synchronize();
    std::vector<double> times;
    for (int r = 0; r < 3; ++r) {
      auto t0 = Clock::now();
      for (int i = 0; i < 10; ++i) {
        Z[tf] = cf::matmul(X, Y).eval();
        cf::synchronize();
      }
      times.push_back(sec_since(t0));
    }
    std::sort(times.begin(), times.end());
    best[tf] = times[0];
    std::printf("  TF32 %-3s  %7.3f s (median %7.3f s)  %6.1f TFLOP/s%s\n", tf ? "on" : "off", times[0], times[1],
                10 * flop / times[0] / 1e12, tf ? "" : "   (the notebook's A100: 4.0 s off, 0.8 s on)");
  }
  std::printf("  speed-up from TF32: %.1fx\n", best[0] / best[1]);

  // Precision: against a float64 product of the same inputs, and a few host dot products.
  cf::Array Z64 = cf::matmul(X.astype(cf::f64), Y.astype(cf::f64)).eval();
  const double scale = max_abs(Z64);
  const double e_off = max_abs(Z[0].astype(cf::f64) - Z64) / scale;
  const double e_on = max_abs(Z[1].astype(cf::f64) - Z64) / scale;
  std::printf("  max |Z - Z_float64| / max |Z_float64|: TF32 off %.1e, TF32 on %.1e\n", e_off, e_on);
  Z64 = cf::Array();
  double h_off = 0, h_on = 0;
  const int64_t picks[4][2] = {{0, 0}, {1, N - 1}, {N / 2, N / 3}, {N - 1, 7}};
  for (const auto& p : picks) {
    const double h = host_entry(X, Y, p[0], p[1]);
    h_off = std::max(h_off, std::abs(Z[0][{p[0], p[1]}].item<double>() - h));
    h_on = std::max(h_on, std::abs(Z[1][{p[0], p[1]}].item<double>() - h));
  }
  std::printf("  4 entries against host dot products: max |error| TF32 off %.1e %s, TF32 on %.1e %s\n", h_off,
              h_off < 1e-3 * scale ? "(match)" : "(MISMATCH)", h_on,
              h_on < 2e-2 * scale ? "(match to TF32's ~3 digits)" : "(MISMATCH)");
}

int main() {
  const bool gpu = cf::Device::available();
  try {
    if (gpu) {
      const auto dev = cf::Device::current();
      std::printf("seed 002 on %s (sm_%d)\n\n", dev.name().c_str(), dev.compute_capability());
      std::printf("---- X = randn(100, 100); U, S, Vh = svd(X)\n");
      const cf::Array X = cf::random::normal({100, 100}, cf::f64, 0).eval();
      const double t_gpu = svd_part(X, true);
      const auto hx = X.to_host<double>();
      double t_host = 0;
      {
        cf::BackendScope host(cf::Backend::Reference);
        t_host = svd_part(cf::from_host(hx, cf::Shape{100, 100}), false, true);
      }
      std::printf("svd times: GPU (cuSOLVER) %.2f ms, host reference evaluator %.2f ms (mean of 10)\n", t_gpu,
                  t_host);
      tiny_tf32(true);
      big_tf32(15000);
      return 0;
    }
    std::printf("No CUDA device here (%s).\n", cf::Device::unavailable_reason().c_str());
    std::printf("Running the SVD and the 3 x 3 product on the host reference backend instead.\n\n");
    {
      cf::BackendScope host(cf::Backend::Reference);
      std::printf("---- X = randn(100, 100); U, S, Vh = svd(X)\n");
      const double t = svd_part(cf::random::normal({100, 100}, cf::f64, 0).eval(), false);
      std::printf("svd time on the host reference evaluator: %.2f ms (mean of 10)\n", t);
      tiny_tf32(false);
    }
    cf::TF32Scope tf32(true);
    std::printf(
        "\nOn a GPU the 15000 x 15000 product with TF32 on would run as:\n%s",
        cf::plan_dump({cf::matmul(cf::placeholder(cf::f32, {15000, 15000}), cf::placeholder(cf::f32, {15000, 15000}))},
                      false)
            .c_str());
  } catch (const cf::Error& e) {
    std::printf("cufuse error: %s\n", e.what());
    return 1;
  }
  return 0;
}
