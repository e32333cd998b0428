// bench/loop_programs.hpp: the programs of the loop workloads as a user writes them with
// cufuse, statement by statement (W13's in-place Adam step, W15's Black-Scholes, W16's
// conjugate gradient, L1 k-means, L2 EM, L3 gradient descent), each beside the host
// computation in double its results are checked against. peers_common.py writes the same
// programs for CuPy and JAX, peers_frameworks.py for PyTorch: same constants, same sizes.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cufuse/cufuse.hpp"
#include "harness.hpp"

namespace bench::loops {

namespace cf = cufuse;

// ------------------------------------------------------------------ W13: Adam, in place
inline constexpr double kLr = 1e-3, kB1 = 0.9, kB2 = 0.999, kEps = 1e-8;
inline constexpr int kAdamStep = 10;  // the bias corrections' step, a constant
inline const double kC1 = 1 - std::pow(kB1, kAdamStep), kC2 = 1 - std::pow(kB2, kAdamStep);

// The step as C++ numeric code is written: in place, one statement at a time.
inline void adam_step(cf::Array& w, const cf::Array& g, cf::Array& m, cf::Array& v) {
  m *= kB1;
  m += (1 - kB1) * g;
  v *= kB2;
  v += (1 - kB2) * g * g;
  w -= kLr * (m / kC1) / (cf::sqrt(v / kC2) + kEps);
  cf::eval(w, m, v);
}
// One element of the same step, in double: {w, m, v} after it.
struct AdamHost {
  double w, m, v;
};
inline AdamHost adam_host(double w, double g, double m, double v) {
  m = kB1 * m + (1 - kB1) * g;
  v = kB2 * v + (1 - kB2) * g * g;
  return {w - kLr * (m / kC1) / (std::sqrt(v / kC2) + kEps), m, v};
}

// ------------------------------------------------------------------ W15: Black-Scholes
// CuPy's examples/finance/black_scholes.py, black_scholes(xp, s, x, t, r, v).
inline constexpr double kRiskFree = 0.02, kVolatility = 0.3;
// Written once for cf::Array and for double: the same statements and constants.
template <class T, class Ops>
std::pair<T, T> black_scholes(const Ops& xp, const T& s, const T& x, const T& t, double r, double v) {
  const T sqrt_t = xp.sqrt(t);
  const T d1 = (xp.log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t);
  const T d2 = d1 - v * sqrt_t;
  auto get_cumulative_normal_distribution = [&](const T& z) {
    const double A1 = 0.31938153, A2 = -0.356563782, A3 = 1.781477937, A4 = -1.821255978, A5 = 1.330274429;
    const double RSQRT2PI = 0.39894228040143267793994605993438, W = 0.2316419;
    const T k = 1 / (1 + W * xp.abs(z));
    const T cnd = RSQRT2PI * xp.exp(-z * z / 2) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
    return xp.where(z > 0, 1 - cnd, cnd);
  };
  const T cnd_d1 = get_cumulative_normal_distribution(d1);
  const T cnd_d2 = get_cumulative_normal_distribution(d2);
  const T exp_rt = xp.exp(-r * t);
  T call = s * cnd_d1 - x * exp_rt * cnd_d2;
  T put = x * exp_rt * (1 - cnd_d2) - s * (1 - cnd_d1);
  return {call, put};
}
struct CufuseOps {
  static cf::Array where(const cf::Array& c, const cf::Array& a, const cf::Array& b) { return cf::where(c, a, b); }
  static cf::Array exp(const cf::Array& a) { return cf::exp(a); }
  static cf::Array log(const cf::Array& a) { return cf::log(a); }
  static cf::Array sqrt(const cf::Array& a) { return cf::sqrt(a); }
  static cf::Array abs(const cf::Array& a) { return cf::abs(a); }
};
struct HostOps {
  static double where(bool c, double a, double b) { return c ? a : b; }
  static double exp(double a) { return std::exp(a); }
  static double log(double a) { return std::log(a); }
  static double sqrt(double a) { return std::sqrt(a); }
  static double abs(double a) { return std::fabs(a); }
};

// ------------------------------------------------------------------ the iterative programs
// One solve, one iteration at a time: reset() makes the initial state, step() runs one
// iteration including its read-back of the convergence scalar and says whether it converged.
class Loop {
 public:
  virtual ~Loop() = default;
  virtual void reset() = 0;
  virtual bool step() = 0;
  // The state after `iters` iterations from reset() against the host's (a fresh run).
  virtual Check check(int iters) = 0;
  // After a solve to convergence: what it reached, in words ("" for nothing).
  virtual std::string summary() { return ""; }
};

// W16's integers (R and x_ans): element i of stream s is splitmix64(s * 2^40 + i) mod 100 - 50.
// peers_common.int_stream makes the same numbers with NumPy (examples/cg.cpp too).
uint64_t splitmix64(uint64_t z);
std::vector<double> int_stream(uint64_t stream, size_t n);

// W16: CuPy's examples/cg/cg.py, fit(): N float64, A = R R^T, b = A x_ans, tol 0.1.
class ConjugateGradient : public Loop {
 public:
  explicit ConjugateGradient(int64_t n, double tol = 0.1);
  void reset() override;
  bool step() override;
  Check check(int iters) override;
  std::string summary() override;

 private:
  int64_t n_;
  double tol_;
  cf::Array A_, b_, x_ans_, x_, r0_, p_;
};

// L1: k-means of n points in 2-D (16 blobs on a 4x4 grid), k centers starting at the first k
// points; assignments by argmin of the squared distances, centers by masked sums, and
// `all(new_pred == pred)` read back each iteration (as CuPy's examples/kmeans/kmeans.py).
class KMeans : public Loop {
 public:
  KMeans(int64_t n, int64_t k);
  void reset() override;
  bool step() override;
  Check check(int iters) override;
  std::string summary() override;

 private:
  int64_t n_, k_;
  cf::Array X_, centers_, pred_;
  int iterations_ = 0;
};

// L2: EM for a 1-D mixture of 4 Gaussians (at -3, -1, 1, 3, sd 0.5) of n float32 points;
// the mean log-likelihood read back each iteration, converged when it moves less than tol.
class GaussianMixtureEM : public Loop {
 public:
  explicit GaussianMixtureEM(int64_t n, double tol = 1e-6);
  void reset() override;
  bool step() override;
  Check check(int iters) override;
  std::string summary() override;

 private:
  int64_t n_;
  double tol_, ll_ = 0, prev_ll_ = 0;
  cf::Array x_, w_, mu_, var_;
};

// L3: least squares by gradient descent, A f32[m, k], b = A x_true + noise, lr 0.5, the
// update in place (x -= lr * g), |g| read back each iteration, converged below tol.
class GradientDescent : public Loop {
 public:
  GradientDescent(int64_t m, int64_t k, double tol = 1e-4);
  void reset() override;
  bool step() override;
  Check check(int iters) override;
  std::string summary() override;

 private:
  int64_t m_, k_;
  double tol_, gnorm_ = 0;
  cf::Array A_, b_, x_;
};

}  // namespace bench::loops
