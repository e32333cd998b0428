// examples/iterative_loops.cpp: three iterative programs written the plain way, each reading
// one scalar back per iteration to test convergence (the bench's L1-L3): k-means (argmin of
// the distances, centers by masked sums, `all(new == old)`), EM for a 1-D mixture of four
// Gaussians (the mean log-likelihood), and least squares by gradient descent with an in-place
// update (the gradient's norm). Prints iterations, time per iteration and what cufuse ran per
// iteration (kernels, evaluations, plans built, plan-cache hits). With no GPU: small sizes
// on the host reference backend.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <cufuse/cufuse.hpp>

namespace cf = cufuse;
using cf::_;
using cf::newaxis;

// Runs step() until it says converged (or max_iter, or ~6 s: the GPU check gives an example
// 30 s), then prints the figures.
static void run(const char* name, int max_iter, bool gpu, const std::function<bool()>& step,
                const std::function<std::string()>& result) {
  if (gpu) cf::Device::current().synchronize();
  cf::reset_stats();
  const auto t0 = std::chrono::steady_clock::now();
  int it = 0;
  bool converged = false;
  double s = 0;
  while (it < max_iter && !converged && s < 6) {
    converged = step();
    ++it;
    s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const cf::Stats st = cf::stats();
  std::printf("%s: %s after %d iterations, %.1f us per iteration (first iterations compile), %s\n", name,
              converged ? "converged" : "stopped", it, s / it * 1e6, result().c_str());
  std::printf("  per iteration: %.1f kernels, %.2f evaluations, %.2f plans built, %.2f plan-cache hits, %.2f compiles\n",
              double(st.kernels_launched) / it, double(st.evaluations) / it, double(st.plans_built) / it,
              double(st.plan_cache_hits) / it, double(st.kernels_compiled) / it);
}

static void kmeans(int64_t n, int64_t k, bool gpu) {
  // 16 blobs on the grid {0, 1, 2, 3}^2; the first k points are the first centers
  const cf::Array X = (cf::floor(cf::random::uniform({n, 2}, cf::f32, 1) * 4) +
                       cf::random::normal({n, 2}, cf::f32, 2) * 0.15f).eval();
  cf::Array centers = X[{cf::slice(0, k), _}].copy();
  cf::Array pred = cf::zeros({n}, cf::i64);
  auto step = [&] {
    const cf::Array d = cf::sum(cf::square(X[{_, newaxis, _}] - centers[{newaxis, _, _}]), 2);
    const cf::Array new_pred = cf::argmin(d, 1);
    if (cf::all(new_pred == pred).item<bool>()) return true;
    pred = new_pred;
    const cf::Array mask = pred[{_, newaxis}] == cf::arange(k)[{newaxis, _}];
    const cf::Array counts = cf::sum(mask, 0, false, cf::f32);
    const cf::Array sums = cf::sum(cf::where(mask[{_, _, newaxis}], X[{_, newaxis, _}], 0.0f), 0);
    centers = sums / counts[{_, newaxis}];
    return false;
  };
  run("k-means", 300, gpu, step, [&] {
    const auto c = centers.to_host<float>();
    return "first center (" + std::to_string(c[0]) + ", " + std::to_string(c[1]) + ")";
  });
}

static void em(int64_t n, bool gpu) {
  // four Gaussians at -3, -1, 1, 3 with standard deviation 0.5
  const cf::Array x = (cf::floor(cf::random::uniform({n}, cf::f32, 3) * 4) * 2 - 3 +
                       cf::random::normal({n}, cf::f32, 4) * 0.5f).eval();
  cf::Array w = cf::full({4}, 0.25f, cf::f32), var = cf::ones({4}, cf::f32);
  cf::Array mu = cf::from_host(std::vector<float>{-2.0f, -0.5f, 0.5f, 2.0f});
  double prev = -INFINITY, ll = 0;
  auto step = [&] {
    const cf::Array xc = x[{_, newaxis}];
    const cf::Array dev = xc - mu;
    const cf::Array lp = -0.5f * dev * dev / var - 0.5f * cf::log(6.283185307179586f * var) + cf::log(w);
    const cf::Array mx = cf::max(lp, 1, true);
    const cf::Array lse = mx + cf::log(cf::sum(cf::exp(lp - mx), 1, true));
    const cf::Array resp = cf::exp(lp - lse);
    const cf::Array nk = cf::sum(resp, 0);
    w = nk / float(n);
    mu = cf::sum(resp * xc, 0) / nk;
    var = cf::sum(resp * cf::square(xc - mu), 0) / nk;
    ll = cf::mean(lse).item<double>();
    const bool done = std::fabs(ll - prev) < 1e-6;
    prev = ll;
    return done;
  };
  run("EM", 500, gpu, step, [&] {
    const auto m = mu.to_host<float>();
    return "means " + std::to_string(m[0]) + " " + std::to_string(m[1]) + " " + std::to_string(m[2]) + " " +
           std::to_string(m[3]) + ", log-likelihood " + std::to_string(ll);
  });
}

static void gradient_descent(int64_t m, int64_t k, bool gpu) {
  const cf::Array A = cf::random::normal({m, k}, cf::f32, 5).eval();
  const cf::Array x_true = cf::random::normal({k}, cf::f32, 6).eval();
  const cf::Array b = (cf::matmul(A, x_true) + cf::random::normal({m}, cf::f32, 7) * 0.01f).eval();
  cf::Array x = cf::zeros({k}, cf::f32);
  double gnorm = 0;
  auto step = [&] {
    const cf::Array r = cf::matmul(A, x) - b;
    const cf::Array g = cf::matmul(r, A) / float(m);
    x -= 0.5f * g;
    gnorm = cf::linalg::norm(g).item<double>();
    return gnorm < 1e-4;
  };
  run("gradient descent", 1000, gpu, step, [&] {
    return "|g| " + std::to_string(gnorm) + ", |x - x_true| " +
           std::to_string(cf::linalg::norm(x - x_true).item<double>());
  });
}

int main() {
  const bool gpu = cf::Device::available();
  std::optional<cf::BackendScope> host;
  if (gpu) {
    const auto dev = cf::Device::current();
    std::printf("iterative loops on %s (sm_%d)\n", dev.name().c_str(), dev.compute_capability());
  } else {
    std::printf("No CUDA device here (%s).\n", cf::Device::unavailable_reason().c_str());
    std::printf("Running small problems on the host reference backend instead (timings mean nothing).\n");
    host.emplace(cf::Backend::Reference);
  }
  try {
    kmeans(gpu ? int64_t(1) << 20 : 2048, 16, gpu);
    em(gpu ? int64_t(1) << 22 : 2048, gpu);
    gradient_descent(gpu ? 8192 : 256, gpu ? 1024 : 32, gpu);
  } catch (const cf::Error& e) {
    std::printf("cufuse error: %s\n", e.what());
    return 1;
  }
  return 0;
}
