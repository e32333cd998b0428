// tests/test_core_loop_shapes.cpp: four iterative programs written the plain way (a solver,
// a clustering loop, an EM loop, gradient descent), each reading one scalar back per
// iteration as its convergence test, on the reference backend at small sizes. Their values
// match a plain host computation in double; and after the first iterations each iteration
// is a steady state: nothing planned from scratch, nothing compiled, a fixed number of
// kernels (issue 37, "loops never lose to eager"; the bench's W16 and L1-L3 at full size).
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "test_core_helpers.hpp"

namespace {

constexpr int kWarmIterations = 3;  // iterations before the steady state is counted
constexpr int kIterations = 9;

// Small deterministic host data (a 64-bit LCG), so that the host reference sees the same inputs.
struct Lcg {
  uint64_t s;
  explicit Lcg(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return s >> 11;
  }
  double uniform() { return double(next()) * 0x1.0p-53; }                  // [0, 1)
  double normal() { return std::sqrt(-2 * std::log(1 - uniform())) * std::cos(6.283185307179586 * uniform()); }
  int64_t integer(int64_t lo, int64_t hi) { return lo + int64_t(next() % uint64_t(hi - lo)); }  // [lo, hi)
};

// One iteration's counters (cf::reset_stats() before it, cf::stats() after it).
struct LoopRun {
  std::vector<cf::Stats> per_iteration;
  std::string name;
};

// Runs `step` kIterations times, counting each iteration on its own.
LoopRun count_iterations(const std::string& name, const std::function<void()>& step) {
  LoopRun r;
  r.name = name;
  for (int i = 0; i < kIterations; ++i) {
    cf::reset_stats();
    step();
    r.per_iteration.push_back(cf::stats());
  }
  return r;
}

// The steady state the engine promises after the first iterations: every evaluation a
// plan-cache hit, nothing compiled, and exactly `kernels` kernels per iteration (one
// materialization point per iteration: the convergence scalar read back).
void check_steady_state(const LoopRun& r, uint64_t kernels) {
  for (int i = kWarmIterations; i < kIterations; ++i) {
    const cf::Stats& s = r.per_iteration[size_t(i)];
    MESSAGE(r.name << " iteration " << i << ": " << s.kernels_launched << " kernels, " << s.evaluations
                   << " evaluations (" << s.auto_evaluations << " automatic), " << s.plans_built << " plans built, "
                   << s.plan_cache_hits << " plan-cache hits, " << s.kernels_compiled << " compiled");
    CHECK(s.plans_built == 0);
    CHECK(s.kernels_compiled == 0);
    CHECK(s.plan_cache_hits > 0);
    CHECK(s.kernels_launched == kernels);
    CHECK(s.evaluations == 1);
    CHECK(s.auto_evaluations == 0);
  }
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol,
                 const char* what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]),
                  what << "[" << i << "] = " << got[i] << ", host " << want[i]);
}

std::vector<double> as_f64(const cf::Array& a) { return host<double>(a.astype(cf::f64)); }

// ------------------------------------------------------------------ conjugate gradient
// CuPy's examples/cg/cg.py, fit(): A = R R^T with R integers in [-50, 50), b = A x_ans.
struct CgCase {
  int64_t n = 24;
  std::vector<double> A, b;
  cf::Array dA, db, x, r0, p;
  std::vector<double> hx, hr0, hp;  // the host's run, in step
  bool converged = false, host_converged = false;
  double tol = 0.1;

  CgCase() {
    Lcg g(37);
    std::vector<double> R(static_cast<size_t>(n * n)), xa(static_cast<size_t>(n));
    for (auto& v : R) v = double(g.integer(-50, 50));
    for (auto& v : xa) v = double(g.integer(-50, 50));
    A.assign(size_t(n * n), 0.0);
    b.assign(size_t(n), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t k = 0; k < n; ++k) s += R[size_t(i * n + k)] * R[size_t(j * n + k)];
        A[size_t(i * n + j)] = s;
      }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) b[size_t(i)] += A[size_t(i * n + j)] * xa[size_t(j)];
    dA = cf::from_host(A, cf::Shape{n, n});
    db = cf::from_host(b);
    x = cf::zeros_like(db, cf::f64);
    r0 = db - cf::dot(dA, x);
    p = r0;
    hx.assign(size_t(n), 0.0);
    hr0 = b;
    hp = b;
  }
  std::vector<double> matvec(const std::vector<double>& v) const {
    std::vector<double> o(size_t(n), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) o[size_t(i)] += A[size_t(i * n + j)] * v[size_t(j)];
    return o;
  }
  static double inner(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  }
  void step() {  // cufuse, as cg.py writes it
    if (converged) return;
    cf::Array a = cf::inner(r0, r0) / cf::inner(p, cf::dot(dA, p));
    x += a * p;
    cf::Array r1 = r0 - a * cf::dot(dA, p);
    if (cf::linalg::norm(r1).item<double>() < tol) {
      converged = true;
      return;
    }
    cf::Array bb = cf::inner(r1, r1) / cf::inner(r0, r0);
    p = r1 + bb * p;
    r0 = r1;
  }
  void host_step() {
    if (host_converged) return;
    const std::vector<double> Ap = matvec(hp);
    const double a = inner(hr0, hr0) / inner(hp, Ap);
    std::vector<double> r1(static_cast<size_t>(n));
    for (size_t i = 0; i < r1.size(); ++i) {
      hx[i] += a * hp[i];
      r1[i] = hr0[i] - a * Ap[i];
    }
    if (std::sqrt(inner(r1, r1)) < tol) {
      host_converged = true;
      return;
    }
    const double bb = inner(r1, r1) / inner(hr0, hr0);
    for (size_t i = 0; i < r1.size(); ++i) hp[i] = r1[i] + bb * hp[i];
    hr0 = r1;
  }
};

LoopRun run_cg(CgCase& c) {
  return count_iterations("cg", [&] {
    c.step();
    c.host_step();
  });
}

// ------------------------------------------------------------------ k-means
// Points in blobs on a 2x2 grid; assignments by argmin of the distances to the centers; the
// centers updated by masked sums; `all(new_pred == pred)` read back each iteration (CuPy's
// examples/kmeans/kmeans.py tests convergence so).
struct KmeansCase {
  int64_t n = 512, k = 4;
  std::vector<double> X, C;   // host data and centers
  std::vector<int64_t> hpred;
  cf::Array dX, centers, pred;
  bool done = false;

  KmeansCase() {
    Lcg g(11);
    X.resize(size_t(n * 2));
    for (int64_t i = 0; i < n; ++i)
      for (int d = 0; d < 2; ++d) X[size_t(i * 2 + d)] = float(double(g.integer(0, 2)) * 3 + 0.4 * g.normal());
    C.assign(X.begin(), X.begin() + k * 2);
    std::vector<float> xf(X.begin(), X.end());
    dX = cf::from_host(xf, cf::Shape{n, 2});
    centers = dX[{cf::slice(0, k), cf::_}].copy();
    pred = cf::zeros({n}, cf::i64);
    hpred.assign(size_t(n), 0);
  }
  void step() {
    cf::Array d = cf::sum(cf::square(dX[{cf::_, cf::newaxis, cf::_}] - centers[{cf::newaxis, cf::_, cf::_}]), 2);
    cf::Array new_pred = cf::argmin(d, 1);
    done = cf::all(new_pred == pred).item<bool>();  // read back every iteration
    pred = new_pred;
    cf::Array mask = pred[{cf::_, cf::newaxis}] == cf::arange(k)[{cf::newaxis, cf::_}];  // [n, k]
    cf::Array counts = cf::sum(mask, 0, false, cf::f32);
    cf::Array sums = cf::sum(cf::where(mask[{cf::_, cf::_, cf::newaxis}], dX[{cf::_, cf::newaxis, cf::_}], 0.0f), 0);
    centers = sums / counts[{cf::_, cf::newaxis}];
  }
  void host_step() {
    std::vector<double> sums(size_t(k * 2), 0.0), counts(size_t(k), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t best = 0;
      double bd = INFINITY;
      for (int64_t c = 0; c < k; ++c) {
        const double dx = X[size_t(i * 2)] - C[size_t(c * 2)], dy = X[size_t(i * 2 + 1)] - C[size_t(c * 2 + 1)];
        if (dx * dx + dy * dy < bd) {
          bd = dx * dx + dy * dy;
          best = c;
        }
      }
      hpred[size_t(i)] = best;
      counts[size_t(best)] += 1;
      sums[size_t(best * 2)] += X[size_t(i * 2)];
      sums[size_t(best * 2 + 1)] += X[size_t(i * 2 + 1)];
    }
    for (int64_t c = 0; c < k; ++c)
      for (int d = 0; d < 2; ++d) C[size_t(c * 2 + d)] = sums[size_t(c * 2 + d)] / counts[size_t(c)];
  }
};

LoopRun run_kmeans(KmeansCase& c) {
  return count_iterations("k-means", [&] {
    c.step();
    c.host_step();
  });
}

// ------------------------------------------------------------------ EM, 1-D Gaussian mixture
// E-step (log-responsibilities by log-sum-exp), M-step (weights, means, variances), and the
// mean log-likelihood read back each iteration for the convergence test.
struct EmCase {
  int64_t n = 1024, k = 4;
  std::vector<double> x, w, mu, var;
  cf::Array dx, dw, dmu, dvar;
  double ll = 0, host_ll = 0;

  EmCase() {
    Lcg g(5);
    x.resize(size_t(n));
    for (auto& v : x) v = float(-3.0 + 2.0 * double(g.integer(0, 4)) + 0.5 * g.normal());
    w.assign(size_t(k), 0.25);
    mu = {-2.0, -0.5, 0.5, 2.0};
    var.assign(size_t(k), 1.0);
    dx = cf::from_host(std::vector<float>(x.begin(), x.end()));
    dw = cf::full({k}, 0.25f, cf::f32);
    dmu = cf::from_host(std::vector<float>{-2.0f, -0.5f, 0.5f, 2.0f});
    dvar = cf::ones({k}, cf::f32);
  }
  void step() {
    const cf::Array xc = dx[{cf::_, cf::newaxis}];  // [n, 1]
    const cf::Array dev = xc - dmu;                 // [n, k]
    const cf::Array lp = -0.5f * dev * dev / dvar - 0.5f * cf::log(6.283185307179586f * dvar) + cf::log(dw);
    const cf::Array mx = cf::max(lp, 1, true);
    const cf::Array lse = mx + cf::log(cf::sum(cf::exp(lp - mx), 1, true));  // [n, 1]
    const cf::Array resp = cf::exp(lp - lse);
    const cf::Array nk = cf::sum(resp, 0);
    dw = nk / float(n);
    dmu = cf::sum(resp * xc, 0) / nk;
    dvar = cf::sum(resp * cf::square(xc - dmu), 0) / nk;
    ll = cf::mean(lse).item<double>();  // the convergence scalar
  }
  void host_step() {
    std::vector<double> nk(size_t(k), 0.0), sx(size_t(k), 0.0), resp(size_t(n * k));
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      double lp[4], mx = -INFINITY;
      for (int64_t c = 0; c < k; ++c) {
        const double d = x[size_t(i)] - mu[size_t(c)];
        lp[c] = -0.5 * d * d / var[size_t(c)] - 0.5 * std::log(6.283185307179586 * var[size_t(c)]) + std::log(w[size_t(c)]);
        mx = std::max(mx, lp[c]);
      }
      double s = 0;
      for (int64_t c = 0; c < k; ++c) s += std::exp(lp[c] - mx);
      const double lse = mx + std::log(s);
      total += lse;
      for (int64_t c = 0; c < k; ++c) {
        resp[size_t(i * k + c)] = std::exp(lp[c] - lse);
        nk[size_t(c)] += resp[size_t(i * k + c)];
        sx[size_t(c)] += resp[size_t(i * k + c)] * x[size_t(i)];
      }
    }
    for (int64_t c = 0; c < k; ++c) {
      w[size_t(c)] = nk[size_t(c)] / double(n);
      mu[size_t(c)] = sx[size_t(c)] / nk[size_t(c)];
      double sv = 0;
      for (int64_t i = 0; i < n; ++i) sv += resp[size_t(i * k + c)] * (x[size_t(i)] - mu[size_t(c)]) * (x[size_t(i)] - mu[size_t(c)]);
      var[size_t(c)] = sv / nk[size_t(c)];
    }
    host_ll = total / double(n);
  }
};

LoopRun run_em(EmCase& c) {
  return count_iterations("EM", [&] {
    c.step();
    c.host_step();
  });
}

// ------------------------------------------------------------------ gradient descent
// Least squares by gradient descent, the update written in place (x -= lr * g), the
// gradient's norm read back each iteration for the convergence test.
struct GdCase {
  int64_t m = 64, k = 16;
  double lr = 0.5;
  std::vector<double> A, b, x;
  cf::Array dA, db, dx;
  double gnorm = 0, host_gnorm = 0;

  GdCase() {
    Lcg g(3);
    A.resize(size_t(m * k));
    for (auto& v : A) v = float(g.normal());
    std::vector<double> xt(static_cast<size_t>(k));
    for (auto& v : xt) v = g.normal();
    b.assign(size_t(m), 0.0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j) b[size_t(i)] += A[size_t(i * k + j)] * xt[size_t(j)];
      b[size_t(i)] = float(b[size_t(i)] + 0.01 * g.normal());
    }
    x.assign(size_t(k), 0.0);
    dA = cf::from_host(std::vector<float>(A.begin(), A.end()), cf::Shape{m, k});
    db = cf::from_host(std::vector<float>(b.begin(), b.end()));
    dx = cf::zeros({k}, cf::f32);
  }
  void step() {
    const cf::Array r = cf::matmul(dA, dx) - db;
    const cf::Array g = cf::matmul(r, dA) / float(m);
    dx -= float(lr) * g;
    gnorm = cf::linalg::norm(g).item<double>();
  }
  void host_step() {
    std::vector<double> r(size_t(m), 0.0), g(size_t(k), 0.0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j) r[size_t(i)] += A[size_t(i * k + j)] * x[size_t(j)];
      r[size_t(i)] -= b[size_t(i)];
    }
    double s = 0;
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t i = 0; i < m; ++i) g[size_t(j)] += r[size_t(i)] * A[size_t(i * k + j)];
      g[size_t(j)] /= double(m);
      s += g[size_t(j)] * g[size_t(j)];
      x[size_t(j)] -= lr * g[size_t(j)];
    }
    host_gnorm = std::sqrt(s);
  }
};

LoopRun run_gd(GdCase& c) {
  return count_iterations("gradient descent", [&] {
    c.step();
    c.host_step();
  });
}

}  // namespace

// ------------------------------------------------------------------ values
TEST_CASE("loop shapes: conjugate gradient (cg.py) matches the host") {
  cf::BackendScope ref(cf::Backend::Reference);
  CgCase c;
  run_cg(c);
  CHECK(c.converged == c.host_converged);
  check_close(as_f64(c.x), c.hx, 1e-9, 1e-9, "x");
  check_close(as_f64(c.p), c.hp, 1e-9, 1e-6, "p");
}

TEST_CASE("loop shapes: k-means matches the host") {
  cf::BackendScope ref(cf::Backend::Reference);
  KmeansCase c;
  run_kmeans(c);
  check_close(as_f64(c.centers), c.C, 1e-5, 1e-5, "centers");
  const std::vector<int64_t> pred = host<int64_t>(c.pred);
  CHECK(pred == c.hpred);
}

TEST_CASE("loop shapes: EM for a 1-D Gaussian mixture matches the host") {
  cf::BackendScope ref(cf::Backend::Reference);
  EmCase c;
  run_em(c);
  CHECK(c.ll == doctest::Approx(c.host_ll).epsilon(1e-5));
  check_close(as_f64(c.dw), c.w, 1e-4, 1e-6, "weights");
  check_close(as_f64(c.dmu), c.mu, 1e-4, 1e-5, "means");
  check_close(as_f64(c.dvar), c.var, 1e-4, 1e-5, "variances");
}

TEST_CASE("loop shapes: gradient descent with an in-place update matches the host") {
  cf::BackendScope ref(cf::Backend::Reference);
  GdCase c;
  run_gd(c);
  CHECK(c.gnorm == doctest::Approx(c.host_gnorm).epsilon(1e-4));
  check_close(as_f64(c.dx), c.x, 1e-4, 1e-5, "x");
}

// ------------------------------------------------------------------ steady state
TEST_CASE("loop shapes: conjugate gradient reaches a steady state") {
  cf::BackendScope ref(cf::Backend::Reference);
  CgCase c;
  const LoopRun r = run_cg(c);
  REQUIRE(!c.converged);  // every counted iteration is a whole one
  check_steady_state(r, 7);  // matmul(A, p) written twice is one GEMM (plan/cse.cpp)
}

TEST_CASE("loop shapes: k-means reaches a steady state") {
  cf::BackendScope ref(cf::Backend::Reference);
  KmeansCase c;
  check_steady_state(run_kmeans(c), 6);
}

TEST_CASE("loop shapes: EM reaches a steady state") {
  cf::BackendScope ref(cf::Backend::Reference);
  EmCase c;
  check_steady_state(run_em(c), 6);
}

TEST_CASE("loop shapes: gradient descent reaches a steady state") {
  cf::BackendScope ref(cf::Backend::Reference);
  GdCase c;
  check_steady_state(run_gd(c), 5);
}
