// examples/seed000_distances.cpp: seed 000 ("The cupy Package") in C++.
//   1. the first arrays: arange(4).reshape(2,2), zeros((3,3)) as float32, ones((3,3)) as float16;
//   2. the MNIST distance matrix between two 10000 x 784 sets,
//        sqrt(max(einsum('ij,ij->i',q,q)[:,None] - 2*q@p.T + einsum('ij,ij->i',p,p), 0)),
//      in float32 and float16, timed (profiler::benchmark: mean GPU time) against a plain host loop
//      over some rows, and checked against that loop;
//   3. the notebook's memory lessons: np.split as views, x@Q@x + c@x whole and in pieces with
//      `del`, and the distance matrix in row chunks (nearest neighbours) against the whole.
// The notebook's data/mnist*.npy files are not shipped: the example writes two float16 sets of
// uniform [0, 1) pixels (the same scale, so distances of the same size, ~11) as .npy files and
// loads them back with cf::load, as the notebook does. Its installation notes (conda) have
// nothing to port.
// Without a CUDA device it says so, runs the same program at 256 rows on the host reference
// backend (cufuse/backend.hpp), checks it the same way, prints the full-size plan, exits 0.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <cufuse/cufuse.hpp>
#include <string>
#include <vector>

namespace cf = cufuse;

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// An array under a label, as NumPy's repr prints it (cufuse/print.hpp).
static void print_array(const std::string& label, const cf::Array& a) {
  std::printf("%s\n%s\n", label.c_str(), cf::to_string(a).c_str());
}

// The notebook's expression. `2 * q` goes into the GEMM's alpha; the einsums are fused
// reductions (no GEMM); the clamp at 0 keeps rounding from giving sqrt of a tiny negative.
static cf::Array distances(const cf::Array& q, const cf::Array& p, bool clamp = true) {
  auto qq = cf::einsum("ij,ij->i", q, q)[{cf::_, cf::newaxis}];
  auto pp = cf::einsum("ij,ij->i", p, p);
  auto d2 = qq - cf::matmul(2 * q, p.T()) + pp;
  return cf::sqrt(clamp ? cf::maximum(d2, 0) : d2);
}

// The plain host loop: sqrt(sum((q_i - p_j)^2)) in double for the first `rows` rows of q.
static std::vector<double> host_distances(const std::vector<float>& q, const std::vector<float>& p, int64_t rows,
                                          int64_t n, int64_t d) {
  std::vector<double> out(static_cast<size_t>(rows * n));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < d; ++k) {
        const double t = double(q[i * d + k]) - double(p[j * d + k]);
        s += t * t;
      }
      out[i * n + j] = std::sqrt(s);
    }
  return out;
}

// max |gpu - host| over the first `rows` rows of an (n, n) result.
static double max_error(const cf::Array& result, const std::vector<double>& host, int64_t rows) {
  const auto r = result[{cf::slice(0, rows)}].astype(cf::f64).to_host<double>();
  double e = 0;
  for (size_t i = 0; i < r.size(); ++i) e = std::max(e, std::abs(r[i] - host[i]));
  return e;
}

static void first_arrays() {
  std::printf("---- first arrays\n");
  print_array("arange(4).reshape(2,2)", cf::arange(4).reshape({2, 2}));
  print_array("zeros((3,3)).astype(float32)", cf::zeros({3, 3}).astype(cf::f32));
  print_array("ones((3,3)).astype(float16)", cf::ones({3, 3}).astype(cf::f16));
}

// n rows of 784 pixels in each set; host_rows of them checked (and timed) by the host loop.
static void distance_matrix(int64_t n, int64_t host_rows, bool gpu) {
  const int64_t pixels = 784;
  std::printf("\n---- distance matrix, %lld x %lld from two (%lld, %lld) sets\n", (long long)n, (long long)n,
              (long long)n, (long long)pixels);
  // The notebook's data/mnist{1,2}_{size}.npy: written here as float16 MNIST-shaped sets
  // (pixels in [0, 1)), then loaded as the notebook loads them.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "cufuse-seed000-data";
  std::filesystem::create_directories(dir);
  const auto f1 = dir / ("mnist1_" + std::to_string(n) + ".npy"), f2 = dir / ("mnist2_" + std::to_string(n) + ".npy");
  cf::save(f1, cf::random::uniform({n, pixels}, cf::f32, 1).astype(cf::f16));
  cf::save(f2, cf::random::uniform({n, pixels}, cf::f32, 2).astype(cf::f16));
  // In [33]: load as float32 (the NumPy cells)
  cf::Array p = cf::load(f1).astype(cf::f32).eval();
  cf::Array q = cf::load(f2).astype(cf::f32).eval();
  if (p.shape()[0] != q.shape()[0] || p.shape()[1] != 784 || q.shape()[1] != 784) throw cf::ValueError("bad data set");
  // In [35]: load as float16 (the CuPy cells)
  cf::Array p16 = cf::load(f1).astype(cf::f16).eval();
  cf::Array q16 = cf::load(f2).astype(cf::f16).eval();
  std::printf("loaded %s and %s: %s %s each\n", f1.filename().c_str(), f2.filename().c_str(),
              cf::name(p16.dtype()).data(), cf::to_string(p16.shape()).c_str());

  cf::reset_stats();
  cf::Array d32 = distances(q, p).eval();
  const auto kernels = cf::stats().kernels_launched;
  cf::Array d16 = distances(q16, p16).eval();
  const int64_t nans = cf::count_nonzero(cf::isnan(distances(q16, p16, false))).item<int64_t>();
  print_array("float32 result[0,:5]", d32[{0, cf::slice(0, 5)}]);
  print_array("float16 result[0,:5]", d16[{0, cf::slice(0, 5)}]);
  std::printf("kernels per evaluation: %llu (see the plan below)\n", (unsigned long long)kernels);
  std::printf("without the clamp at 0, float16 gives %lld NaN(s)\n", (long long)nans);

  const auto hp = p.to_host<float>();
  const auto hq = q.to_host<float>();
  auto t0 = Clock::now();
  const auto host = host_distances(hq, hp, host_rows, n, pixels);
  const double host_ms = ms_since(t0);
  const double e32 = max_error(d32, host, host_rows);
  const double e16 = max_error(d16, host, host_rows);
  std::printf("check against the host loop (%lld rows): float32 max |error| %.2e %s, float16 %.2e %s\n",
              (long long)host_rows, e32, e32 < 1e-3 ? "(match)" : "(MISMATCH)", e16,
              e16 < 0.1 ? "(match to float16's ~3 digits)" : "(MISMATCH)");

  if (gpu) {
    const double t32 = cf::profiler::benchmark([&] { distances(q, p).eval(); }, 10, 2).gpu_mean() * 1e3;
    const double t16 = cf::profiler::benchmark([&] { distances(q16, p16).eval(); }, 10, 2).gpu_mean() * 1e3;
    std::printf("times: cufuse float32 %8.2f ms   cufuse float16 %8.2f ms   (mean of 10, profiler::benchmark)\n", t32, t16);
    std::printf("       host loop %lld rows %.0f ms, so ~%.1f s for all %lld rows (one core, double)\n",
                (long long)host_rows, host_ms, host_ms * 1e-3 * double(n) / double(host_rows), (long long)n);
  }
  std::printf("%s", cf::plan_dump({distances(q, p)}, false).c_str());
}

static void memory_lessons(int64_t n, bool gpu) {
  std::printf("\n---- breaking work into pieces\n");
  // In [37]-[38]: np.split(x, 3): three views, no copies
  cf::Array x = cf::arange(36).reshape({9, 4});
  print_array("x", x);
  const std::vector<cf::Array> parts = cf::split(x, 3);
  for (size_t i = 0; i < parts.size(); ++i) print_array("split(x, 3)[" + std::to_string(i) + "]", parts[i]);

  // x@Q@x + c@x at once, then in pieces, dropping each operand once it is used. Arrays are
  // lazy, so a dropped handle frees nothing while pending work still reads it: evaluate the
  // partial result first (that is what makes `del` free memory here).
  cf::Array xv = cf::random::uniform({20}, cf::f64, 3).eval();
  cf::Array Q = cf::random::uniform({20, 20}, cf::f64, 4).eval();
  cf::Array c = cf::arange(20);
  const auto hx = xv.to_host<double>(), hQ = Q.to_host<double>();
  double host = 0;
  for (int i = 0; i < 20; ++i) {
    for (int j = 0; j < 20; ++j) host += hx[i] * hQ[i * 20 + j] * hx[j];
    host += i * hx[i];
  }
  const double whole = (cf::matmul(cf::matmul(xv, Q), xv) + cf::matmul(c, xv)).item<double>();
  cf::Array result = cf::matmul(xv, Q).eval();
  Q = cf::Array();  // del Q
  result = cf::matmul(result, xv).eval();
  result += cf::matmul(c, xv);
  c = cf::Array();  // del c, x
  xv = cf::Array();
  const double pieces = result.item<double>();
  std::printf("x@Q@x + c@x: at once %.14g, in pieces %.14g, host loop %.14g  %s\n", whole, pieces, host,
              std::abs(whole - host) < 1e-9 && std::abs(pieces - host) < 1e-9 ? "(match)" : "(MISMATCH)");

  // The same idea on the distance matrix: each chunk of query rows gives its nearest
  // neighbours, and only one chunk's distances are alive at a time.
  const int64_t pixels = 784, chunks = 4, rows = n / chunks;
  cf::Array p = cf::random::uniform({n, pixels}, cf::f32, 1).eval();
  cf::Array q = cf::random::uniform({n, pixels}, cf::f32, 2).eval();
  cf::Array nn_full, d_full;
  std::vector<cf::Array> nn(chunks), dmin(chunks);
  auto nearest = [&](const cf::Array& rows_of_q, cf::Array& index, cf::Array& dist) {
    cf::Array d = distances(rows_of_q, p);
    index = cf::argmin(d, 1);
    dist = cf::min(d, 1);
    cf::eval(index, dist);
  };
  auto all_rows = [&] { nearest(q, nn_full, d_full); };
  auto in_chunks = [&] {
    for (int64_t k = 0; k < chunks; ++k) nearest(q[{cf::slice(k * rows, (k + 1) * rows)}], nn[k], dmin[k]);
  };
  double full_ms = 0, chunk_ms = 0;
  if (gpu) {
    full_ms = cf::profiler::benchmark(all_rows, 5, 2).gpu_mean() * 1e3;
    chunk_ms = cf::profiler::benchmark(in_chunks, 5, 2).gpu_mean() * 1e3;
  } else {
    all_rows();
    in_chunks();
  }
  const size_t full_bytes = static_cast<size_t>(n * n * 4);
  int64_t same = 0;
  double derr = 0;
  for (int64_t k = 0; k < chunks; ++k) {
    const auto part = cf::slice(k * rows, (k + 1) * rows);
    same += cf::count_nonzero(nn[k] == nn_full[{part}]).item<int64_t>();
    derr = std::max(derr, cf::max(cf::abs(dmin[k] - d_full[{part}])).item<double>());
  }
  std::printf(
      "nearest neighbours of %lld rows in %lld chunks of %lld: %lld/%lld the same as from the whole matrix, "
      "max |d| difference %.1e  %s\n",
      (long long)n, (long long)chunks, (long long)rows, (long long)same, (long long)n, derr,
      same == n && derr < 1e-4 ? "(match)" : "(MISMATCH)");
  if (gpu)
    std::printf("  whole: %.2f ms, %.0f MB of distances at once; chunks: %.2f ms, %.0f MB at a time (mean of 5)\n",
                full_ms, full_bytes / 1e6, chunk_ms, full_bytes / 1e6 / chunks);
}

int main() {
  const bool gpu = cf::Device::available();
  try {
    if (gpu) {
      const auto dev = cf::Device::current();
      std::printf("seed 000 on %s (sm_%d)\n\n", dev.name().c_str(), dev.compute_capability());
      first_arrays();
      distance_matrix(10000, 100, true);
      memory_lessons(10000, true);
      return 0;
    }
    std::printf("No CUDA device here (%s).\n", cf::Device::unavailable_reason().c_str());
    std::printf("Running a 256-row version on the host reference backend instead (no timings).\n\n");
    {
      cf::BackendScope host(cf::Backend::Reference);
      first_arrays();
      distance_matrix(256, 256, false);
      memory_lessons(256, false);
    }
    std::printf("\nOn a GPU the 10000-row float16 distance matrix would run as:\n%s",
                cf::plan_dump(
                    {distances(cf::placeholder(cf::f16, {10000, 784}), cf::placeholder(cf::f16, {10000, 784}))}, false)
                    .c_str());
  } catch (const cf::Error& e) {
    std::printf("cufuse error: %s\n", e.what());
    return 1;
  }
  return 0;
}
