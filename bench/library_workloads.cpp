// bench/library_workloads.cpp: the library-node workloads — W5 (einsum "ij,ij->i": a fused
// reduction, no GEMM), W6 (seed 000's distance matrix: GEMM + kernels; floor: the bare GEMM
// measured in this run), W8 (seed 002's 15000^2 matmul, fp32 and TF32; floor: cuBLAS's
// cublasGemmEx, the call CuPy makes, in this run) and W11 (seed 004's qr, det and inv). Each
// result is checked against a float64 host computation before timing. A floor is timed in
// batches alternating with the workload's (time_interleaved): the GPU's clocks drift with its
// temperature over a minute of large GEMMs, by more than the gaps measured.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include <cublas_v2.h>

#include "core/node.hpp"
#include "cufuse/array.hpp"
#include "cufuse/backend.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "cufuse/reduce.hpp"
#include "harness.hpp"
#include "runtime/storage.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

std::vector<float> rows_to_host(const cf::Array& a, int64_t first, int64_t count) {
  return to_host_f32(a[{cf::slice(first, first + count), cf::_}]);
}

// ------------------------------------------------------------------ W5
void run_w5(Ctx& ctx, Record& r) {
  const int64_t n = 65536, d = 1024;
  set_bandwidth_floor(ctx, r, double(n) * d * 4 * 2 + double(n) * 4);
  cf::Array a = cf::random::normal({n, d}, cf::f32, 51), b = cf::random::normal({n, d}, cf::f32, 52);
  cf::eval(a, b);
  if (ctx.opt.dump) std::fprintf(stderr, "--- W5 plan\n%s\n", cf::plan_dump({cf::einsum("ij,ij->i", a, b)}).c_str());
  {
    cf::Array y = cf::einsum("ij,ij->i", a, b);
    y.eval();
    const int64_t rows = 512;
    std::vector<float> got = to_host_f32(y);
    for (int64_t first : {int64_t(0), n - rows}) {
      std::vector<float> ha = rows_to_host(a, first, rows), hb = rows_to_host(b, first, rows);
      std::vector<float> part(got.begin() + first, got.begin() + first + rows);
      Check c = check_sample(part, [&](size_t i) {
        double s = 0;
        for (int64_t k = 0; k < d; ++k) s += double(ha[i * d + k]) * double(hb[i * d + k]);
        return s;
      }, 1e-4, 1e-3);
      add_check(r, c, first == 0 ? "first rows" : "last rows");
    }
  }
  auto call = [&] { cf::einsum("ij,ij->i", a, b).eval(); };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "einsum -> sum(a*b, axis=1): one fused reduction kernel, no GEMM";
}

// ------------------------------------------------------------------ W6
cf::Array w6_expr(const cf::Array& q, const cf::Array& p) {
  return cf::sqrt(cf::maximum(cf::sum(q * q, 1)[{cf::_, cf::newaxis}] - 2 * cf::matmul(q, p.T()) +
                                  cf::sum(p * p, 1)[{cf::newaxis, cf::_}], 0));
}

void run_w6(Ctx& ctx, Record& r) {
  const int64_t n = 10000, px = 784;
  r.flops = 2.0 * n * n * px;
  cf::Array p = cf::random::uniform({n, px}, cf::f32, 61), q = cf::random::uniform({n, px}, cf::f32, 62);
  cf::eval(p, q);
  if (ctx.opt.dump) std::fprintf(stderr, "--- W6 plan\n%s\n", cf::plan_dump({w6_expr(q, p)}).c_str());
  {
    cf::Array dist = w6_expr(q, p);
    dist.eval();
    std::vector<float> got = to_host_f32(dist), hp = to_host_f32(p), hq = to_host_f32(q);
    r.check = check_sample(got, [&](size_t idx) {
      const size_t i = idx / size_t(n), j = idx % size_t(n);
      double s = 0;
      for (int64_t k = 0; k < px; ++k) {
        const double t = double(hq[i * px + k]) - double(hp[j * px + k]);
        s += t * t;
      }
      return std::sqrt(s);
    }, 1e-3, 2e-2, size_t(1) << 14);
  }
  auto gemm = [&] { cf::matmul(q, p.T()).eval(); };
  auto call = [&] { w6_expr(q, p).eval(); };
  r.kernels_per_call = kernels_per_call(call);
  const auto [t, g] = time_interleaved(ctx, call, gemm);  // the floor: the bare GEMM in this run
  r.floor_ms = g.median_ms;
  apply_timing(r, t);
  r.notes = strf("full fp32 (TF32 off); floor = q@p.T alone, batches alternating with W6's (%.1f TFLOP/s); GEMM + %g kernel(s)",
                 r.flops / (g.median_ms * 1e-3) / 1e12, r.kernels_per_call - 1);
}

// ------------------------------------------------------------------ W8
void run_w8(Ctx& ctx, Record& r) {
  const int64_t n = 15000;
  r.flops = 2.0 * double(n) * n * n;
  cf::Array x = cf::random::normal({n, n}, cf::f32, 81), y = cf::random::normal({n, n}, cf::f32, 82);
  cf::eval(x, y);
  std::vector<float> hy = to_host_f32(y);
  const int64_t sample_rows[] = {0, 7777, n - 1};
  const bool ref = cf::current_backend() == cf::Backend::Reference;
  auto cublas_ok = [](cublasStatus_t st) {
    if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(strf("W8 floor: cuBLAS status %d", int(st)));
  };
  struct Handle {
    cublasHandle_t h = nullptr;
    ~Handle() { if (h) cublasDestroy(h); }
  } own;
  if (!ref) cublas_ok(cublasCreate(&own.h));
  cublasHandle_t handle = own.h;
  // Column-major C^T = y^T x^T: row-major x @ y, as CuPy passes it.
  const void* px = x.node()->storage->ptr;
  const void* py = y.node()->storage->ptr;
  cf::Array out = cf::empty({n, n}, cf::f32).eval();
  std::vector<Part> parts;
  for (bool tf32 : {false, true}) {
    cf::TF32Scope scope(tf32);
    cf::Array z = cf::matmul(x, y);
    z.eval();
    for (int64_t i : sample_rows) {
      std::vector<float> xi = rows_to_host(x, i, 1), zi = rows_to_host(z, i, 1);
      std::vector<double> want(size_t(n), 0.0), mag(size_t(n), 0.0);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < n; ++j) {
          const double v = double(xi[k]) * double(hy[size_t(k * n + j)]);
          want[j] += v;
          mag[j] += std::fabs(v);
        }
      // |error| within 2e-5 (fp32) / 4e-3 (TF32) of the summed magnitudes
      size_t bad = 0;
      for (int64_t j = 0; j < n; ++j)
        bad += !(std::fabs(zi[j] - want[j]) <= (tf32 ? 4e-3 : 2e-5) * mag[j]);
      Check c;
      c.done = true;
      c.ok = bad == 0;
      c.detail = strf("row %lld: %zu of %lld beyond the bound", (long long)i, bad, (long long)n);
      add_check(r, c, tf32 ? "tf32" : "fp32");
    }
    auto call = [&] { cf::matmul(x, y).eval(); };
    if (!tf32) r.kernels_per_call = kernels_per_call(call);
    Timing t, f;
    if (ref) {
      t = time_batches(ctx, call, 3);
    } else {
      // The floor: cuBLAS's own cublasGemmEx on the same inputs into a buffer of its own.
      auto floor_call = [&] {
        const float one = 1, zero = 0;
        cublas_ok(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, py, CUDA_R_32F, int(n),
                               px, CUDA_R_32F, int(n), &zero, out.node()->storage->ptr, CUDA_R_32F, int(n),
                               tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      };
      std::tie(t, f) = time_interleaved(ctx, call, floor_call, 3);
    }
    parts.push_back(Part{tf32 ? "tf32" : "fp32", t.median_ms, f.median_ms, t.batch_ms,
                         strf("%.1f TFLOP/s", r.flops / (t.median_ms * 1e-3) / 1e12)});
    if (!tf32) {
      r.floor_ms = f.median_ms;  // before apply_timing, which takes the percentage of it
      apply_timing(r, t);
    }
  }
  r.parts = parts;
  r.notes = "cuBLASLt; " + parts[0].notes + " fp32, " + parts[1].notes +
            " TF32 (cufuse::TF32Scope); floor = cublasGemmEx (CuPy's call), batches alternating with cufuse's";
}

// ------------------------------------------------------------------ W11
double host_det_log(const std::vector<float>& a, int64_t n, double& sign) {
  std::vector<double> m(a.begin(), a.end());
  sign = 1;
  double logdet = 0;
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < n; ++i)
      if (std::fabs(m[i * n + j]) > std::fabs(m[p * n + j])) p = i;
    if (m[p * n + j] == 0) {
      sign = 0;
      return -INFINITY;
    }
    if (p != j) {
      for (int64_t c = 0; c < n; ++c) std::swap(m[j * n + c], m[p * n + c]);
      sign = -sign;
    }
    const double d = m[j * n + j];
    if (d < 0) sign = -sign;
    logdet += std::log(std::fabs(d));
    for (int64_t i = j + 1; i < n; ++i) {
      const double f = m[i * n + j] / d;
      for (int64_t c = j + 1; c < n; ++c) m[i * n + c] -= f * m[j * n + c];
    }
  }
  return logdet;
}

void run_w11(Ctx& ctx, Record& r) {
  const int64_t n = 512, ni = 6000;
  // det's input is scaled so that det is finite in float32 (the work does not depend on it).
  cf::Array a = cf::random::normal({n, n}, cf::f32, 111, 0.0, 0.0727);
  cf::Array big = cf::random::uniform({ni, ni}, cf::f32, 112);  // the notebook's rand(6000, 6000)
  cf::eval(a, big);
  std::vector<float> ha = to_host_f32(a);
  {  // qr: Q R = A
    auto [Q, R] = cf::linalg::qr(a);
    cf::eval(Q, R);
    std::vector<float> q = to_host_f32(Q), rr = to_host_f32(R);
    Check c = check_sample(ha, [&](size_t idx) {
      const size_t i = idx / size_t(n), j = idx % size_t(n);
      double s = 0;
      for (int64_t k = 0; k <= int64_t(j); ++k) s += double(q[i * n + k]) * double(rr[k * n + j]);
      return s;
    }, 0, 1e-4);
    add_check(r, c, "qr (A = Q R)");
  }
  {  // det against a float64 LU on the host
    double sign = 0;
    const double logdet = host_det_log(ha, n, sign);
    const float got = cf::linalg::det(a).item<float>();
    Check c;
    c.done = true;
    const double want = sign * std::exp(logdet);
    c.ok = std::fabs(got - want) <= 5e-2 * std::fabs(want);
    c.detail = strf("det %.6g vs %.6g", got, want);
    add_check(r, c, "det");
  }
  {  // inv: A X - I small (rand(6000, 6000) has condition ~1e4-1e5)
    cf::Array x = cf::linalg::inv(big);
    cf::Array eye = cf::equal(cf::arange(ni).reshape({ni, 1}), cf::arange(ni).reshape({1, ni})).astype(cf::f32);
    const float resid = cf::max(cf::abs(cf::matmul(big, x) - eye)).item<float>();
    Check c;
    c.done = true;
    c.ok = std::isfinite(resid) && resid <= 0.1f;
    c.detail = strf("max |A inv(A) - I| = %.3g", resid);
    add_check(r, c, "inv");
  }
  auto qr_call = [&] {
    auto [Q, R] = cf::linalg::qr(a);
    cf::eval(Q, R);
  };
  auto det_call = [&] { cf::linalg::det(a).eval(); };
  auto inv_call = [&] { cf::linalg::inv(big).eval(); };
  const Timing tq = time_batches(ctx, qr_call), td = time_batches(ctx, det_call), ti = time_batches(ctx, inv_call, 3);
  r.kernels_per_call = kernels_per_call(qr_call);
  r.parts = {Part{"qr", tq.median_ms, kNaN, tq.batch_ms, ""}, Part{"det", td.median_ms, kNaN, td.batch_ms, ""},
             Part{"inv", ti.median_ms, kNaN, ti.batch_ms, ""}};
  apply_timing(r, tq);
  r.notes = strf("qr f32[512,512] / det f32[512,512] / inv f32[6000,6000] (cuSOLVER); qr launches %g, det %g, inv %g",
                 r.kernels_per_call, kernels_per_call(det_call), kernels_per_call(inv_call));
}

}  // namespace

void add_library_workloads(Registry& r) {
  // W5 is einsum("ij,ij->i") (WORKLOADS.md): it takes the place of reduction_workloads.cpp's sum(a*b, 1) form.
  Workload w5{"W5", "einsum(\"ij,ij->i\", a, b), a,b f32[65536,1024]", FloorKind::Bandwidth, run_w5};
  auto it = std::find_if(r.begin(), r.end(), [](const Workload& w) { return w.id == "W5"; });
  if (it != r.end()) *it = w5;
  else r.push_back(w5);
  r.push_back({"W6", "sqrt(max(sum(q*q,1)[:,None] - 2*q@p.T + sum(p*p,1)[None,:], 0)), p,q f32[10000,784], fp32",
               FloorKind::Gemm, run_w6});
  r.push_back({"W8", "matmul f32[15000,15000] @ f32[15000,15000], fp32 and TF32", FloorKind::Gemm, run_w8});
  r.push_back({"W11", "linalg: qr f32[512,512], det f32[512,512], inv f32[6000,6000]", FloorKind::None, run_w11});
}

}  // namespace bench
