// bench/reduction_workloads.cpp: the reduction workloads: W2 sum of squared differences,
// W3 row softmax, W4 row layernorm, W5 as sum(a*b, axis=1), W9 product along an axis, and
// the latency of a full reduction of f32[10000] (R10k). Each a plain lazy expression built
// and evaluated per call; floors are bytes that must move / copy bandwidth.
#include <cmath>
#include <cstdio>

#include "cufuse/cufuse.hpp"
#include "harness.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

std::vector<double> to_host_f64(const cf::Array& a) {
  std::vector<double> v(static_cast<size_t>(a.size()));
  a.copy_to_host(v.data(), v.size() * sizeof(double));
  return v;
}

template <class Expr>
void time_expr(Ctx& ctx, Record& r, Expr expr) {
  auto call = [&] {
    cf::Array y = expr();
    y.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
}

void run_w2(Ctx& ctx, Record& r) {
  const int64_t n = int64_t(1) << 27;
  set_bandwidth_floor(ctx, r, 2.0 * double(n) * 4.0);
  auto x = cf::random::normal({n}, cf::f32, 11).eval();
  auto y = cf::random::normal({n}, cf::f32, 12).eval();
  auto expr = [&] { return cf::sum((x - y) * (x - y)); };
  const double want = cf::sum((x.astype(cf::f64) - y.astype(cf::f64)) * (x.astype(cf::f64) - y.astype(cf::f64))).item<double>();
  const std::vector<float> got{expr().item<float>()};
  r.check = check_sample(got, [&](size_t) { return want; }, 1e-5, 0);
  time_expr(ctx, r, expr);
  r.notes = "one kernel: prologue fused, rows split over blocks, last block finishes (deterministic)";
}

void run_w3(Ctx& ctx, Record& r) {
  const int64_t m = 8192, n = 8192;
  set_bandwidth_floor(ctx, r, 2.0 * double(m * n) * 4.0);
  auto a = cf::random::normal({m, n}, cf::f32, 13).eval();
  auto expr = [&] {
    auto e = cf::exp(a - cf::max(a, 1, true));
    return e / cf::sum(e, 1, true);
  };
  {
    auto s = expr();
    s.eval();
    auto ha = to_host_f32(a), hs = to_host_f32(s);
    // softmax of the rows 0, 4097 and 8191 in double
    std::vector<double> want(hs.size(), NAN);
    for (int64_t row : {int64_t(0), int64_t(4097), m - 1}) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, double(ha[row * n + j]));
      for (int64_t j = 0; j < n; ++j) sum += std::exp(double(ha[row * n + j]) - mx);
      for (int64_t j = 0; j < n; ++j) want[row * n + j] = std::exp(double(ha[row * n + j]) - mx) / sum;
    }
    std::vector<float> got;
    std::vector<double> w;
    for (size_t i = 0; i < hs.size(); ++i)
      if (!std::isnan(want[i])) {
        got.push_back(hs[i]);
        w.push_back(want[i]);
      }
    r.check = check_sample(got, [&](size_t i) { return w[i]; }, 1e-5, 1e-9);
  }
  time_expr(ctx, r, expr);
  r.notes = "one row kernel (rule rows): max and sum in registers, row read once";
}

void run_w4(Ctx& ctx, Record& r) {
  const int64_t m = 8192, n = 8192;
  set_bandwidth_floor(ctx, r, 2.0 * double(m * n) * 4.0);
  auto a = cf::random::normal({m, n}, cf::f32, 14).eval();
  auto g = cf::random::normal({n}, cf::f32, 15).eval();
  auto b = cf::random::normal({n}, cf::f32, 16).eval();
  auto expr = [&] {
    auto mu = cf::mean(a, 1, true);
    return (a - mu) / cf::sqrt(cf::var(a, 1, 0, true) + 1e-5f) * g + b;
  };
  {
    auto s = expr();
    s.eval();
    auto ha = to_host_f32(a), hs = to_host_f32(s), hg = to_host_f32(g), hb = to_host_f32(b);
    std::vector<float> got;
    std::vector<double> w;
    for (int64_t row : {int64_t(0), int64_t(777), m - 1}) {
      double mu = 0, var = 0;
      for (int64_t j = 0; j < n; ++j) mu += ha[row * n + j];
      mu /= double(n);
      for (int64_t j = 0; j < n; ++j) var += (ha[row * n + j] - mu) * (ha[row * n + j] - mu);
      var /= double(n);
      for (int64_t j = 0; j < n; j += 7) {
        got.push_back(hs[row * n + j]);
        w.push_back((ha[row * n + j] - mu) / std::sqrt(var + 1e-5) * hg[j] + hb[j]);
      }
    }
    r.check = check_sample(got, [&](size_t i) { return w[i]; }, 1e-4, 1e-4);
  }
  time_expr(ctx, r, expr);
  r.notes = "one row kernel (rule rows): mean and variance in registers, row read once";
}

void run_w5(Ctx& ctx, Record& r) {
  const int64_t m = 65536, n = 1024;
  set_bandwidth_floor(ctx, r, 2.0 * double(m * n) * 4.0 + double(m) * 4.0);
  auto a = cf::random::normal({m, n}, cf::f32, 17).eval();
  auto b = cf::random::normal({m, n}, cf::f32, 18).eval();
  auto expr = [&] { return cf::sum(a * b, 1); };
  {
    auto s = to_host_f32(expr());
    auto ha = to_host_f32(a), hb = to_host_f32(b);
    std::vector<float> got;
    std::vector<double> w;
    for (int64_t row = 0; row < m; row += 4099) {
      double acc = 0;
      for (int64_t j = 0; j < n; ++j) acc += double(ha[row * n + j]) * hb[row * n + j];
      got.push_back(s[row]);
      w.push_back(acc);
    }
    r.check = check_sample(got, [&](size_t i) { return w[i]; }, 1e-4, 1e-3);
  }
  time_expr(ctx, r, expr);
  r.notes = "as sum(a*b, axis=1): one fused reduction kernel, a warp per row";
}

void run_w9(Ctx& ctx, Record& r) {
  const int64_t z = 4096, y = 512, x = 512;
  set_bandwidth_floor(ctx, r, double(z * y * x) * 8.0 + double(y * x) * 8.0);
  // values near 1 so that the product of 4096 of them stays finite
  auto v = (cf::random::uniform({z, y, x}, cf::f64, 19, -1, 1) * 1e-3 + 1).eval();
  auto expr = [&] { return cf::prod(v, 0); };
  {
    auto p = to_host_f64(expr());
    std::vector<float> got;
    std::vector<double> w;
    for (int64_t j : {int64_t(0), int64_t(1000), y * x - 1}) {
      auto col = to_host_f64(v[{cf::_, j / x, j % x}]);
      double acc = 1;
      for (double c : col) acc *= c;
      got.push_back(static_cast<float>(p[j]));
      w.push_back(acc);
    }
    r.check = check_sample(got, [&](size_t i) { return w[i]; }, 1e-6, 0);
  }
  time_expr(ctx, r, expr);
  r.notes = "a thread per output, coalesced along the kept axes";
}

void run_r10k(Ctx& ctx, Record& r) {
  r.unit = "us";
  auto x = cf::random::normal({10000}, cf::f32, 20).eval();
  auto hx = to_host_f32(x);
  double want = 0;
  for (float v : hx) want += v;
  const std::vector<float> got{cf::sum(x).item<float>()};
  r.check = check_sample(got, [&](size_t) { return want; }, 1e-5, 1e-4);
  auto call = [&] {
    cf::Array s = cf::sum(x);
    s.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_loop(ctx, call));
  r.notes = "full reduction of f32[10000] as a lazy expression, per call (loop then one sync)";
}

}  // namespace

void add_reduction_workloads(Registry& r) {
  r.push_back({"W2", "sum((x-y)*(x-y)), x, y f32[2^27]", FloorKind::Bandwidth, run_w2});
  r.push_back({"W3", "row softmax exp(a - max(a,1,keepdims)) / sum(...), a f32[8192,8192]", FloorKind::Bandwidth, run_w3});
  r.push_back({"W4", "row layernorm (a-mean)/sqrt(var+1e-5)*g+b, a f32[8192,8192]", FloorKind::Bandwidth, run_w4});
  r.push_back({"W5", "sum(a*b, axis=1), a, b f32[65536,1024]", FloorKind::Bandwidth, run_w5});
  r.push_back({"W9", "prod(axis=0) of f64[4096,512,512]", FloorKind::Bandwidth, run_w9});
  r.push_back({"R10k", "full reduction sum(x) of f32[10000], latency per call", FloorKind::None, run_r10k});
}

}  // namespace bench
