// bench/loop_programs.cpp: the iterative programs of loop_programs.hpp (W16's conjugate
// gradient, L1 k-means, L2 EM, L3 gradient descent) and their host references in double.
#include "loop_programs.hpp"

#include <algorithm>
#include <cmath>

namespace bench::loops {

using cf::_;
using cf::newaxis;

namespace {

std::vector<double> to_host_f64(const cf::Array& a) {
  const cf::Array d = a.astype(cf::f64);
  std::vector<double> v(static_cast<size_t>(d.size()));
  d.copy_to_host(v.data(), v.size() * sizeof(double));
  return v;
}

// A check of several arrays: all must pass, details joined.
void merge(Check& into, const Check& c, const std::string& label) {
  const bool first = !into.done;
  into.done = true;
  into.ok = (first || into.ok) && c.ok;
  into.detail += (first ? "" : "; ") + label + ": " + c.detail;
}

double dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<double> int_stream(uint64_t stream, size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = double(splitmix64((stream << 40) + i) % 100) - 50.0;
  return v;
}

// ------------------------------------------------------------------ W16: conjugate gradient
ConjugateGradient::ConjugateGradient(int64_t n, double tol) : n_(n), tol_(tol) {
  const cf::Array R = cf::from_host(int_stream(1, size_t(n * n)), cf::Shape{n, n});
  x_ans_ = cf::from_host(int_stream(2, size_t(n)), cf::Shape{n});
  A_ = cf::matmul(R, R.T()).eval();  // integers below 2^53: exact, whatever the summation order
  b_ = cf::dot(A_, x_ans_).eval();
}

void ConjugateGradient::reset() {
  x_ = cf::zeros_like(b_, cf::f64);
  r0_ = b_ - cf::dot(A_, x_);
  p_ = r0_;
}

bool ConjugateGradient::step() {  // cg.py's loop body, statement for statement
  cf::Array a = cf::inner(r0_, r0_) / cf::inner(p_, cf::dot(A_, p_));
  x_ += a * p_;
  cf::Array r1 = r0_ - a * cf::dot(A_, p_);
  if (cf::linalg::norm(r1).item<double>() < tol_) return true;
  cf::Array b = cf::inner(r1, r1) / cf::inner(r0_, r0_);
  p_ = r1 + b * p_;
  r0_ = r1;
  return false;
}

Check ConjugateGradient::check(int iters) {
  reset();
  for (int i = 0; i < iters; ++i)
    if (step()) break;
  const std::vector<double> got = to_host_f64(x_), A = to_host_f64(A_), b = to_host_f64(b_);
  const int64_t n = n_;
  std::vector<double> x(size_t(n), 0.0), r0 = b, p = b, Ap(static_cast<size_t>(n)), r1(static_cast<size_t>(n));
  for (int it = 0; it < iters; ++it) {
    for (int64_t i = 0; i < n; ++i) Ap[size_t(i)] = dot(&A[size_t(i * n)], p.data(), n);
    const double a = dot(r0.data(), r0.data(), n) / dot(p.data(), Ap.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      x[size_t(i)] += a * p[size_t(i)];
      r1[size_t(i)] = r0[size_t(i)] - a * Ap[size_t(i)];
    }
    if (std::sqrt(dot(r1.data(), r1.data(), n)) < tol_) break;
    const double bb = dot(r1.data(), r1.data(), n) / dot(r0.data(), r0.data(), n);
    for (int64_t i = 0; i < n; ++i) p[size_t(i)] = r1[size_t(i)] + bb * p[size_t(i)];
    r0 = r1;
  }
  double scale = 0;
  for (double v : x) scale = std::max(scale, std::fabs(v));
  Check c = check_sample(got, [&](size_t i) { return x[i]; }, 1e-7, 1e-9 * scale);
  c.detail = strf("x after %d iterations: ", iters) + c.detail;
  return c;
}

std::string ConjugateGradient::summary() {
  return strf("|x - x_ans| = %.3g", cf::linalg::norm(x_ - x_ans_).item<double>());
}

// ------------------------------------------------------------------ L1: k-means
KMeans::KMeans(int64_t n, int64_t k) : n_(n), k_(k) {
  const cf::Array u = cf::random::uniform({n, 2}, cf::f32, 171);
  const cf::Array z = cf::random::normal({n, 2}, cf::f32, 172);
  X_ = (cf::floor(u * 4) + z * 0.15f).eval();  // 16 blobs on the grid {0, 1, 2, 3}^2
}

void KMeans::reset() {
  centers_ = X_[{cf::slice(0, k_), _}].copy();
  pred_ = cf::zeros({n_}, cf::i64);
  iterations_ = 0;
}

bool KMeans::step() {
  ++iterations_;
  const cf::Array d = cf::sum(cf::square(X_[{_, newaxis, _}] - centers_[{newaxis, _, _}]), 2);  // [n, k]
  const cf::Array new_pred = cf::argmin(d, 1);
  if (cf::all(new_pred == pred_).item<bool>()) return true;
  pred_ = new_pred;
  const cf::Array mask = pred_[{_, newaxis}] == cf::arange(k_)[{newaxis, _}];  // [n, k]
  const cf::Array counts = cf::sum(mask, 0, false, cf::f32);
  const cf::Array sums = cf::sum(cf::where(mask[{_, _, newaxis}], X_[{_, newaxis, _}], 0.0f), 0);  // [k, 2]
  centers_ = sums / counts[{_, newaxis}];
  return false;
}

Check KMeans::check(int iters) {
  reset();
  for (int i = 0; i < iters; ++i)
    if (step()) break;
  const std::vector<double> got = to_host_f64(centers_), X = to_host_f64(X_);
  std::vector<double> C(X.begin(), X.begin() + k_ * 2);
  std::vector<int64_t> pred(size_t(n_), 0);
  for (int it = 0; it < iters; ++it) {
    std::vector<double> sums(size_t(k_ * 2), 0.0), counts(size_t(k_), 0.0);
    bool same = true;
    for (int64_t i = 0; i < n_; ++i) {
      int64_t best = 0;
      double bd = INFINITY;
      for (int64_t c = 0; c < k_; ++c) {
        const double dx = X[size_t(i * 2)] - C[size_t(c * 2)], dy = X[size_t(i * 2 + 1)] - C[size_t(c * 2 + 1)];
        if (dx * dx + dy * dy < bd) {
          bd = dx * dx + dy * dy;
          best = c;
        }
      }
      same = same && pred[size_t(i)] == best;
      pred[size_t(i)] = best;
      counts[size_t(best)] += 1;
      sums[size_t(best * 2)] += X[size_t(i * 2)];
      sums[size_t(best * 2 + 1)] += X[size_t(i * 2 + 1)];
    }
    if (same) break;
    for (int64_t c = 0; c < k_ * 2; ++c) C[size_t(c)] = sums[size_t(c)] / counts[size_t(c / 2)];
  }
  // A point nearly equidistant from two centers may go either way in float32: each moves a
  // center by ~1/65536 of a grid step, so 1e-3 still catches a wrong assignment rule.
  Check c = check_sample(got, [&](size_t i) { return C[i]; }, 0, 1e-3);
  c.detail = strf("centers after %d iterations: ", iters) + c.detail;
  return c;
}

std::string KMeans::summary() { return strf("%d iterations to a fixed assignment", iterations_); }

// ------------------------------------------------------------------ L2: EM, 1-D Gaussian mixture
GaussianMixtureEM::GaussianMixtureEM(int64_t n, double tol) : n_(n), tol_(tol) {
  const cf::Array u = cf::random::uniform({n}, cf::f32, 181);
  const cf::Array z = cf::random::normal({n}, cf::f32, 182);
  x_ = (cf::floor(u * 4) * 2 - 3 + z * 0.5f).eval();
}

void GaussianMixtureEM::reset() {
  w_ = cf::full({4}, 0.25f, cf::f32);
  mu_ = cf::from_host(std::vector<float>{-2.0f, -0.5f, 0.5f, 2.0f});
  var_ = cf::ones({4}, cf::f32);
  prev_ll_ = -INFINITY;
}

bool GaussianMixtureEM::step() {
  // E-step: log responsibilities by log-sum-exp over the components
  const cf::Array xc = x_[{_, newaxis}];  // [n, 1]
  const cf::Array dev = xc - mu_;         // [n, 4]
  const cf::Array lp = -0.5f * dev * dev / var_ - 0.5f * cf::log(6.283185307179586f * var_) + cf::log(w_);
  const cf::Array mx = cf::max(lp, 1, true);
  const cf::Array lse = mx + cf::log(cf::sum(cf::exp(lp - mx), 1, true));  // [n, 1]
  const cf::Array resp = cf::exp(lp - lse);
  // M-step
  const cf::Array nk = cf::sum(resp, 0);
  w_ = nk / float(n_);
  mu_ = cf::sum(resp * xc, 0) / nk;
  var_ = cf::sum(resp * cf::square(xc - mu_), 0) / nk;
  // convergence: the mean log-likelihood, read back
  ll_ = cf::mean(lse).item<double>();
  const bool done = std::fabs(ll_ - prev_ll_) < tol_;
  prev_ll_ = ll_;
  return done;
}

Check GaussianMixtureEM::check(int iters) {
  reset();
  for (int i = 0; i < iters; ++i) step();
  const std::vector<double> x = to_host_f64(x_);
  std::vector<double> w(4, 0.25), mu{-2.0, -0.5, 0.5, 2.0}, var(4, 1.0);
  double ll = 0;
  for (int it = 0; it < iters; ++it) {
    double nk[4] = {}, sx[4] = {}, sv[4] = {}, total = 0;
    std::vector<double> resp(x.size() * 4);
    for (size_t i = 0; i < x.size(); ++i) {
      double lp[4], mx = -INFINITY, s = 0;
      for (int c = 0; c < 4; ++c) {
        const double d = x[i] - mu[size_t(c)];
        lp[c] = -0.5 * d * d / var[size_t(c)] - 0.5 * std::log(6.283185307179586 * var[size_t(c)]) + std::log(w[size_t(c)]);
        mx = std::max(mx, lp[c]);
      }
      for (int c = 0; c < 4; ++c) s += std::exp(lp[c] - mx);
      const double lse = mx + std::log(s);
      total += lse;
      for (int c = 0; c < 4; ++c) {
        resp[i * 4 + size_t(c)] = std::exp(lp[c] - lse);
        nk[c] += resp[i * 4 + size_t(c)];
        sx[c] += resp[i * 4 + size_t(c)] * x[i];
      }
    }
    for (int c = 0; c < 4; ++c) mu[size_t(c)] = sx[c] / nk[c];
    for (size_t i = 0; i < x.size(); ++i)
      for (int c = 0; c < 4; ++c) sv[c] += resp[i * 4 + size_t(c)] * (x[i] - mu[size_t(c)]) * (x[i] - mu[size_t(c)]);
    for (int c = 0; c < 4; ++c) {
      w[size_t(c)] = nk[c] / double(x.size());
      var[size_t(c)] = sv[c] / nk[c];
    }
    ll = total / double(x.size());
  }
  Check c;
  merge(c, check_sample(to_host_f64(w_), [&](size_t i) { return w[i]; }, 1e-4, 1e-6), "weights");
  merge(c, check_sample(to_host_f64(mu_), [&](size_t i) { return mu[i]; }, 1e-4, 1e-5), "means");
  merge(c, check_sample(to_host_f64(var_), [&](size_t i) { return var[i]; }, 1e-4, 1e-5), "variances");
  merge(c, check_sample(std::vector<double>{ll_}, [&](size_t) { return ll; }, 1e-5, 0), "log-likelihood");
  c.detail = strf("after %d iterations: ", iters) + c.detail;
  return c;
}

std::string GaussianMixtureEM::summary() { return strf("mean log-likelihood %.7g", ll_); }

// ------------------------------------------------------------------ L3: gradient descent
GradientDescent::GradientDescent(int64_t m, int64_t k, double tol) : m_(m), k_(k), tol_(tol) {
  A_ = cf::random::normal({m, k}, cf::f32, 191).eval();
  const cf::Array x_true = cf::random::normal({k}, cf::f32, 192);
  b_ = (cf::matmul(A_, x_true) + cf::random::normal({m}, cf::f32, 193) * 0.01f).eval();
}

void GradientDescent::reset() { x_ = cf::zeros({k_}, cf::f32); }

bool GradientDescent::step() {
  const cf::Array r = cf::matmul(A_, x_) - b_;
  const cf::Array g = cf::matmul(r, A_) / float(m_);
  x_ -= 0.5f * g;
  gnorm_ = cf::linalg::norm(g).item<double>();
  return gnorm_ < tol_;
}

Check GradientDescent::check(int iters) {
  reset();
  for (int i = 0; i < iters; ++i) step();
  const std::vector<double> A = to_host_f64(A_), b = to_host_f64(b_), got = to_host_f64(x_);
  std::vector<double> x(size_t(k_), 0.0), r(static_cast<size_t>(m_)), g(static_cast<size_t>(k_));
  for (int it = 0; it < iters; ++it) {
    for (int64_t i = 0; i < m_; ++i) r[size_t(i)] = dot(&A[size_t(i * k_)], x.data(), k_) - b[size_t(i)];
    std::fill(g.begin(), g.end(), 0.0);
    for (int64_t i = 0; i < m_; ++i)
      for (int64_t j = 0; j < k_; ++j) g[size_t(j)] += r[size_t(i)] * A[size_t(i * k_ + j)];
    for (int64_t j = 0; j < k_; ++j) x[size_t(j)] -= 0.5 * g[size_t(j)] / double(m_);
  }
  Check c = check_sample(got, [&](size_t i) { return x[i]; }, 1e-4, 1e-5);
  c.detail = strf("x after %d iterations: ", iters) + c.detail;
  return c;
}

std::string GradientDescent::summary() { return strf("|g| = %.3g", gnorm_); }

}  // namespace bench::loops
