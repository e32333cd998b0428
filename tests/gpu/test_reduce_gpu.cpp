// tests/gpu/test_reduce_gpu.cpp: reductions on the device against the reference evaluator (the
// fused row patterns against its float64 truth):
// every reduction, dtype, axis set and keepdims; fused patterns; NaN and empty cases;
// determinism; the accuracy bound of a float32 sum of 2^27 normals. The kernel layouts one by
// one (strided and part-warp lanes, tiled scans): test_reduce_layouts_gpu.cpp.
#include <algorithm>
#include <cmath>

#include "gpu_compare.hpp"


TEST_CASE("every reduction, dtype, axis set and keepdims matches the reference") {
  const cf::DType types[] = {cf::bool_, cf::i8, cf::i32, cf::i64, cf::u8, cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};
  const std::vector<cf::AxisArg> axes = {cf::AxisArg(), cf::AxisArg(0), cf::AxisArg(1), cf::AxisArg(-1),
                                         cf::AxisArg({0, 2}), cf::AxisArg({1, 2})};
  // Floats run twice: with infinities and +-0 among the values (every reduction's handling of
  // them), and finite (a row of 130 would otherwise hold an inf about half the time).
  for (cf::DType t : types)
    for (int kind : {kGeneral, kFinite}) {
      if (kind == kFinite && !cf::is_float(t)) continue;
      auto a = random_array(t, {7, 33, 130}, kind);
      for (const auto& ax : axes)
        for (bool keep : {false, true}) {
          const std::string what =
              std::string(cf::name(t)) + (keep ? " keepdims" : "") + (kind == kFinite ? " finite" : "");
          const double tol = red_tol(cf::sum(a).dtype());
          // terms per result: sums in a different order differ by up to ~eps * terms * max|x|
          int64_t terms = 1;
          if (ax.all()) terms = a.size();
          else for (int d : ax.axes()) terms *= a.shape(d);
          const double atol = cf::is_float(t) ? sum_atol(a, terms) : 0;
          CHECK_MESSAGE(check_against_reference(cf::sum(a, ax, keep), tol, "sum " + what, atol) == 0, what);
          CHECK_MESSAGE(check_against_reference(cf::max(a, ax, keep), 0, "max " + what) == 0, what);
          CHECK_MESSAGE(check_against_reference(cf::min(a, ax, keep), 0, "min " + what) == 0, what);
          CHECK_MESSAGE(check_against_reference(cf::any(a, ax, keep), 0, "any " + what) == 0, what);
          CHECK_MESSAGE(check_against_reference(cf::all(a, ax, keep), 0, "all " + what) == 0, what);
          if (t != cf::bool_) {
            // Floats: the sum's order-dependent error, divided by the count. Integers: the
            // reference adds float64 conversions one at a time, each addition rounding at the
            // partial sum's magnitude (up to terms * max|x|): the sum is off by up to
            // eps * terms^2 * max|x|, the mean by eps * terms * max|x|, sum_atol's bound undivided.
            const double mean_atol = cf::is_float(t) ? atol / double(terms) : sum_atol(a.astype(cf::f64), terms);
            CHECK_MESSAGE(check_against_reference(cf::mean(a, ax, keep), 64, "mean " + what, mean_atol) == 0, what);
            // var sums `terms` non-negative squared deviations: the reference's sequential sum
            // is off by up to (terms - 1) * eps/2 * the sum, i.e. ~terms ulps of the variance
            // (measured with NumPy on 30030 such terms: up to ~2100 ulps between the two orders).
            const double var_ulps = std::max(1024.0, 2.0 * static_cast<double>(terms));
            CHECK_MESSAGE(check_against_reference(cf::var(a, ax, 1, keep), var_ulps, "var " + what) == 0, what);
            CHECK_MESSAGE(check_against_reference(cf::nanmax(a, ax, keep), 0, "nanmax " + what) == 0, what);
          }
        }
      for (int ax : {0, 1, 2}) {
        CHECK(check_against_reference(cf::argmax(a, ax), 0, "argmax") == 0);
        CHECK(check_against_reference(cf::argmin(a, ax, true), 0, "argmin") == 0);
        if (t != cf::bool_)
          CHECK(check_against_reference(cf::cumsum(a, ax), red_tol(cf::sum(a).dtype()), "cumsum",
                                        cf::is_float(t) ? sum_atol(a, a.shape(ax)) : 0) == 0);
      }
      CHECK(check_against_reference(cf::argmax(a), 0, "argmax all") == 0);
      auto small = random_array(t, {5, 9}, 2);
      if (t != cf::bool_) CHECK(check_against_reference(cf::prod(small, 1), red_tol(cf::prod(small).dtype()), "prod") == 0);
    }
}

TEST_CASE("layouts: transposed and sliced inputs, all kernel shapes") {
  auto a = random_array(cf::f32, {300, 500}, kFinite);
  CHECK(check_against_reference(cf::sum(a.T(), 1), 64, "transposed", sum_atol(a, 300)) == 0);
  CHECK(check_against_reference(cf::max(a[{cf::slice(cf::none, cf::none, -3), cf::slice(1, 400)}], 0), 0, "sliced") == 0);
  auto big = random_array(cf::f32, {3, 2000000}, kFinite);
  CHECK(check_against_reference(cf::sum(big, 1), 256, "few long rows (split)", sum_atol(big, 2000000)) == 0);
  CHECK(check_against_reference(cf::argmax(big, 1), 0, "argmax split") == 0);
  CHECK(check_against_reference(cf::sum(big, 0), 0, "many short rows") == 0);
  auto tall = random_array(cf::f64, {100000, 3}, kFinite);
  CHECK(check_against_reference(cf::sum(tall, 0), 256, "column sums (split, thread per row)", sum_atol(tall, 100000)) == 0);
  auto w9 = random_array(cf::f64, {64, 32, 33}, 1);
  CHECK(check_against_reference(cf::prod(w9 * 0.5 + 0.75, 0), 64, "prod axis 0") == 0);
  auto scan = random_array(cf::f32, {3, 70000}, kFinite);
  CHECK(check_against_reference(cf::cumsum(scan, 1), 4096, "long scan", sum_atol(scan, 70000)) == 0);
}

namespace {

// Float64 truths of the row patterns, for check_against_truth (gpu_compare.hpp).
cf::Array softmax64(const cf::Array& a) {
  auto x = a.astype(cf::f64);
  auto e = cf::exp(x - cf::max(x, 1, true));
  return e / cf::sum(e, 1, true);
}
cf::Array layernorm64(const cf::Array& a, const cf::Array& w, const cf::Array& b, double eps) {
  auto x = a.astype(cf::f64);
  return (x - cf::mean(x, 1, true)) / cf::sqrt(cf::var(x, 1, 0, true) + eps) * w.astype(cf::f64) + b.astype(cf::f64);
}
// What a layer norm's error scales with: the mean's error (by |x| averaged over the row) and
// each term's own rounding, all divided by the deviation, times |w|; plus |b| and |y| (the truth).
cf::Array layernorm_scale64(const cf::Array& a, const cf::Array& w, const cf::Array& b, double eps, const cf::Array& y) {
  auto x = a.astype(cf::f64);
  auto mu = cf::mean(x, 1, true);
  return (cf::mean(cf::abs(x), 1, true) + cf::abs(x - mu)) / cf::sqrt(cf::var(x, 1, 0, true) + eps) *
             cf::abs(w.astype(cf::f64)) + cf::abs(b.astype(cf::f64)) + cf::abs(y);
}
// Row sums accumulate in float32 for float16 / float32 rows and in float64 for float64 rows;
// every elementwise op rounds to the array's dtype (NumPy's op-by-op rounding).
double acc_roundoff(cf::DType t) { return t == cf::f64 ? unit_roundoff(cf::f64) : unit_roundoff(cf::f32); }
// Softmax: exp(x - max) is off by ~|x - max| roundings of the subtraction (range: the largest
// |x - max|, at most max - min) plus exp's own; the row sum by sum_depth(n) accumulator
// roundings; the division and the final rounding by a few more. The float64 truth's own
// sequential sum adds up to n float64 roundings.
double softmax_rel(const cf::Array& a, int64_t n) {
  const double range = (cf::max(a.astype(cf::f64)) - cf::min(a.astype(cf::f64))).item<double>();
  return sum_depth(n) * acc_roundoff(a.dtype()) + (2 * range + 10) * unit_roundoff(a.dtype()) +
         static_cast<double>(n) * unit_roundoff(cf::f64);
}
double layernorm_rel(cf::DType t, int64_t n) {
  // ~6 op roundings along the way (difference, variance's rounding, + eps, sqrt, quotient,
  // product); float16 rows measured up to 10: 16 for margin
  return (sum_depth(n) + 8) * acc_roundoff(t) + 16 * unit_roundoff(t) + static_cast<double>(n) * unit_roundoff(cf::f64);
}

}  // namespace

// Values against float64 truths: the reference evaluator's own float32 row sums add 8192 or
// 2^20 terms one after another, so they are the worse oracle there (see check_against_truth).
TEST_CASE("row patterns over transposed inputs: reductions by rows, the result by a tiled kernel") {
  // softmax(x.T): the rows are read across threads (a thread per row). Rows of 1024 or more:
  // max and sum run as kernels split over blocks and the result as a tiled elementwise
  // kernel (planner.cpp, rows_across_threads); shorter ones stay one row kernel.
  for (auto [r, c] : {std::pair<int64_t, int64_t>{300, 500}, {2048, 1500}}) {
    INFO(r << " x " << c);
    auto a = random_array(cf::f32, {c, r}, kFinite);
    auto t = a.T();
    const double rel = softmax_rel(t, c);  // evaluates on the device: before the count
    cf::reset_stats();
    // e lives only inside the expression: a handle kept on it would be written out too
    // (exec/executor.cpp: gather_roots), a kernel more where the rows run across threads.
    auto sm = [&] {
      auto e = cf::exp(t - cf::max(t, 1, true));
      return e / cf::sum(e, 1, true);
    }();
    const cf::Array truth = softmax64(t);
    CHECK(check_against_truth(sm, truth, truth, rel, "softmax of a transpose", 2) == 0);
    CHECK(cf::stats().kernels_launched == (c >= 1024 ? 3u : 1u));
    auto g = random_array(cf::f32, {c}, kFinite), b = random_array(cf::f32, {c}, kFinite);
    auto ln = (t - cf::mean(t, 1, true)) / cf::sqrt(cf::var(t, 1, 0, true) + 1e-5f) * g + b;
    const cf::Array ltruth = layernorm64(t, g, b, 1e-5f);
    CHECK(check_against_truth(ln, ltruth, layernorm_scale64(t, g, b, 1e-5f, ltruth), layernorm_rel(cf::f32, c),
                              "layernorm of a transpose") == 0);
  }
  // softmax and var over axis 0 of a plain array: one row kernel for rows of 700, three and
  // two kernels for rows of 1500
  for (int64_t n : {700, 1500}) {
    INFO("rows of " << n);
    auto a = random_array(cf::f32, {n, 300}, kFinite);
    // against the float64 truth: the reference's sequential float32 column sums are off by
    // as much as the device's (lanes and blocks: another order)
    const double rel = softmax_rel(a.T(), n);  // evaluates on the device: before the count
    cf::reset_stats();
    auto sm0 = [&] {  // e0 inside the expression only (see above)
      auto e0 = cf::exp(a - cf::max(a, 0, true));
      return e0 / cf::sum(e0, 0, true);
    }();
    auto v0 = cf::var(a, 0);
    auto refv = cf::detail::reference_evaluate(v0.node());
    sm0.eval();
    CHECK(cf::stats().kernels_launched == (n >= 1024 ? 3u : 1u));
    const cf::Array truth = softmax64(a.T()).T();
    CHECK(check_against_truth(sm0, truth, truth, rel, "softmax over axis 0", 2) == 0);
    CHECK(compare_with(v0, refv, 256, "var over axis 0", 1e-5) == 0);
  }
}

TEST_CASE("fused patterns match float64 truths and launch one kernel") {
  auto a = random_array(cf::f32, {512, 8192}, kFinite);
  auto g = random_array(cf::f32, {8192}, kFinite);
  auto b = random_array(cf::f32, {8192}, kFinite);
  {
    const double rel = softmax_rel(a, 8192);
    cf::reset_stats();
    auto e = cf::exp(a - cf::max(a, 1, true));
    auto sm = e / cf::sum(e, 1, true);
    const cf::Array truth = softmax64(a);
    CHECK(check_against_truth(sm, truth, truth, rel, "softmax", 2) == 0);
    CHECK(cf::stats().kernels_launched == 1);
  }
  {
    cf::reset_stats();
    auto ln = (a - cf::mean(a, 1, true)) / cf::sqrt(cf::var(a, 1, 0, true) + 1e-5f) * g + b;
    const cf::Array truth = layernorm64(a, g, b, 1e-5f);
    CHECK(check_against_truth(ln, truth, layernorm_scale64(a, g, b, 1e-5f, truth), layernorm_rel(cf::f32, 8192),
                              "layernorm") == 0);
    CHECK(cf::stats().kernels_launched == 1);
  }
  {
    cf::reset_stats();
    auto m = cf::mean(a, 0);
    auto v = cf::var(a, 0);
    cf::eval(m, v);
    CHECK(cf::stats().kernels_launched == 1);
  }
  auto x = random_array(cf::f32, {1 << 20}, kFinite);
  auto y = random_array(cf::f32, {1 << 20}, kFinite);
  {
    auto d64 = x.astype(cf::f64) - y.astype(cf::f64);
    auto truth = cf::sum(d64 * d64);
    truth.eval();  // before the count: d64, named, is written out with it
    auto ss = cf::sum((x - y) * (x - y));
    cf::reset_stats();
    ss.eval();
    CHECK(cf::stats().kernels_launched == 1);
    // each term: the difference and the square round once each (3 roundings of the term)
    const double rel = (sum_depth(1 << 20) + 3) * unit_roundoff(cf::f32) + (1 << 20) * unit_roundoff(cf::f64);
    CHECK(check_against_truth(ss, truth, truth, rel, "sum of squares") == 0);
  }
  // rows kept on chip by 512 threads: part-filled vectors (10000 f32) and f16 rows; f64 rows
  // past 4096 stay on 256 threads. One kernel each.
  for (auto [dt, n] : {std::pair{cf::f32, int64_t(10000)}, std::pair{cf::f64, int64_t(4100)}, std::pair{cf::f16, int64_t(16384)}}) {
    auto r = random_array(dt, {33, n}, kFinite);
    auto w = random_array(dt, {n}, kFinite);
    const std::string rows = std::string(cf::name(dt)) + " rows of " + std::to_string(n);
    const double rel = softmax_rel(r, n);
    auto zero = cf::zeros({n}, dt).eval();
    cf::reset_stats();
    auto er = cf::exp(r - cf::max(r, 1, true));
    auto sm = er / cf::sum(er, 1, true);
    const cf::Array truth = softmax64(r);
    CHECK(check_against_truth(sm, truth, truth, rel, "softmax, " + rows, 2) == 0);
    CHECK(cf::stats().kernels_launched == 1);
    cf::reset_stats();
    auto lr = (r - cf::mean(r, 1, true)) / cf::sqrt(cf::var(r, 1, 0, true) + 1e-5) * w;
    const cf::Array ln_truth = layernorm64(r, w, zero, 1e-5);
    CHECK(check_against_truth(lr, ln_truth, layernorm_scale64(r, w, zero, 1e-5, ln_truth), layernorm_rel(dt, n),
                              "layernorm, " + rows) == 0);
    CHECK(cf::stats().kernels_launched == 1);
  }
  auto long_rows = random_array(cf::f32, {2, 1 << 20}, kFinite);
  const double rel = softmax_rel(long_rows, 1 << 20);
  auto e2 = cf::exp(long_rows - cf::max(long_rows, 1, true));
  const cf::Array truth = softmax64(long_rows);
  CHECK(check_against_truth(e2 / cf::sum(e2, 1, true), truth, truth, rel, "multi-pass softmax", 2) == 0);
}

TEST_CASE("NaN and empty reductions") {
  auto f = cf::from_host(std::vector<float>{1, NAN, 3, -2, NAN, 7});
  CHECK(std::isnan(cf::max(f).item<float>()));
  CHECK(cf::nanmax(f).item<float>() == 7.0f);
  CHECK(cf::argmax(f).item<int64_t>() == 1);
  CHECK(cf::nansum(f).item<float>() == 9.0f);
  auto allnan = cf::full({4}, NAN, cf::f32);
  CHECK(std::isnan(cf::nanmax(allnan).item<float>()));
  auto e = cf::zeros({0, 3}, cf::f32);
  CHECK(cf::sum(e, 0).to_host<float>() == std::vector<float>{0, 0, 0});
  CHECK(cf::prod(e).item<float>() == 1.0f);
  CHECK(std::isnan(cf::mean(e).item<float>()));
  CHECK_THROWS_AS(cf::max(e), cf::ValueError);
}

TEST_CASE("the same input gives the same bits on every run") {
  auto x = random_array(cf::f32, {1 << 24}, kFinite);
  auto a = random_array(cf::f32, {1000, 3000}, kFinite);
  float s0 = cf::sum(x).item<float>();
  auto r0 = cf::sum(a, 1).to_host<float>();
  for (int i = 0; i < 5; ++i) {
    CHECK(cf::sum(x).item<float>() == s0);
    CHECK(cf::sum(a, 1).to_host<float>() == r0);
  }
}

TEST_CASE("float32 sum of 2^27 normals within 1e-5 of float64") {
  for (double mean : {0.0, 1.0}) {
    auto x = cf::random::normal({1 << 27}, cf::f32, 2026, mean).eval();
    const double s32 = cf::sum(x).item<float>();
    const double s64 = cf::sum(x.astype(cf::f64)).item<double>();
    const double sabs = cf::sum(cf::abs(x.astype(cf::f64))).item<double>();
    MESSAGE("mean " << mean << ": f32 sum " << s32 << " f64 sum " << s64 << " relative "
                    << std::fabs(s32 - s64) / std::fabs(s64) << ", relative to sum|x| " << std::fabs(s32 - s64) / sabs);
    // standard normals sum to ~sqrt(n): bound the error by the data's magnitude as well
    CHECK(std::fabs(s32 - s64) <= 1e-5 * std::max(std::fabs(s64), 1e-3 * sabs));
  }
}

TEST_CASE("narrow integer reductions: 32-bit accumulators give the dtype's values, also inside a kernel") {
  // Found by tests/gpu/test_fuzz_gpu.cpp: min(-x) of an int16 row came out wrong while the
  // accumulator was a short (seed 656456491429), and once accumulators were 32-bit, a uint8
  // dot product used by later elementwise work in the same kernel was not truncated to uint8
  // (seed 236411961280).
  auto x16 = random_array(cf::DType::Int16, {130});
  auto m = cf::min(-x16);
  CHECK(check_against_reference(m, 0, "min(-x) int16") == 0);
  auto x8 = random_array(cf::DType::UInt8, {66});
  auto d = cf::matmul(x8, x8);                    // uint8, wraps
  auto y = x8.astype(cf::f64) + d;                // reads the reduction inside its kernel
  auto s = cf::sum(x8, 0, false, cf::DType::UInt8) * x8;  // uint8 sum (wraps), then a row epilogue
  CHECK(check_against_reference(y, 0, "x + x @ x (uint8)") == 0);
  CHECK(check_against_reference(s, 0, "sum(x, dtype=uint8) * x") == 0);
  auto a = cf::argmax(-x16);
  CHECK(check_against_reference(a, 0, "argmax(-x) int16") == 0);
}

TEST_CASE("integer max and min of negated values (ptxas drops a negation fused into VIMNMX3)") {
  // Found by tests/gpu/test_fuzz_gpu.cpp (seed 7771339): ptxas for sm_90 fused two 32-bit
  // max into one VIMNMX3 and lost the negation of one operand, so max(-x) over an int32 array
  // of ones came out 1 and max(-x - 1) 2 (pytorch/pytorch#190973). Integer max/min of 32 bits
  // or fewer now go through 64 bits, which ptxas does not fuse.
  for (cf::DType t : {cf::DType::Int32, cf::DType::Int16, cf::DType::Int8, cf::DType::UInt32, cf::DType::UInt8}) {
    const std::string n(cf::name(t));
    auto ones = cf::ones({16, 130}, t);
    if (cf::is_signed_int(t)) {  // exact values, not only agreement with the reference
      std::vector<int64_t> got(1);
      cf::max(-ones).astype(cf::i64).copy_to_host(got.data(), 8);
      CHECK_MESSAGE(got[0] == -1, n);
      cf::max(-ones - 1).astype(cf::i64).copy_to_host(got.data(), 8);
      CHECK_MESSAGE(got[0] == -2, n);
    }
    auto x = random_array(t, {16, 130});
    auto y = random_array(t, {16, 130});
    CHECK(check_against_reference(cf::max(-x), 0, "max(-x) " + n) == 0);
    CHECK(check_against_reference(cf::min(-x), 0, "min(-x) " + n) == 0);
    CHECK(check_against_reference(cf::max(-x, {1, 0}), 0, "max(-x, axis=(1, 0)) " + n) == 0);
    CHECK(check_against_reference(cf::max(-x, 1), 0, "max(-x, axis=1) " + n) == 0);
    CHECK(check_against_reference(cf::min(-x, 0), 0, "min(-x, axis=0) " + n) == 0);
    CHECK(check_against_reference(cf::nanmax(-x), 0, "nanmax(-x) " + n) == 0);
    CHECK(check_against_reference(cf::ptp(-x, {1, 0}), 0, "ptp(-x) " + n) == 0);
    CHECK(check_against_reference(cf::maximum(cf::maximum(x, -y), -x), 0, "maximum(maximum(x, -y), -x) " + n) == 0);
    CHECK(check_against_reference(cf::minimum(cf::minimum(-x, y), -y), 0, "minimum(minimum(-x, y), -y) " + n) == 0);
    const int lo = cf::is_signed_int(t) ? -3 : 1;  // NumPy: -3 does not fit an unsigned dtype
    CHECK(check_against_reference(cf::clip(-x, lo, 4), 0, "clip(-x, lo, 4) " + n) == 0);
  }
}

// Past 2^31 elements every index is 64-bit: reductions over all of them and along either
// axis of a [2^23 + 64, 256] array (row and column kernels, a transposed read), an index
// past 2^31 out of argmax, a running sum whose positions pass 2^31, a reversed read and a
// broadcast. The expected values are closed forms (the host evaluator would take minutes).
TEST_CASE("more than 2^31 elements: reductions, argmax, cumsum, transposed, reversed and broadcast reads") {
  const int64_t R = (int64_t(1) << 23) + 64, C = 256, n = R * C;  // 2^31 + 16384
  auto x = cf::arange(0, n, 1, cf::i64).astype(cf::u8).reshape({R, C}).eval();  // x[r, c] = c
  const cf::Array flat = x.reshape({n});
  // all of it: R rows of 0 + 1 + ... + 255
  CHECK(cf::sum(flat, {}, false, cf::i64).item<int64_t>() == R * (C * (C - 1) / 2));
  // along rows (each 32640) and down columns (c * R), through the array and its transpose
  auto rows = cf::sum(x, 1, false, cf::i64);
  CHECK(rows[{R - 1}].item<int64_t>() == C * (C - 1) / 2);
  CHECK(cf::max(rows).item<int64_t>() == C * (C - 1) / 2);
  CHECK(cf::min(rows).item<int64_t>() == C * (C - 1) / 2);
  auto cols = cf::sum(x, 0, false, cf::i64).to_host<int64_t>();
  auto cols_t = cf::sum(x.T(), 1, false, cf::i64).to_host<int64_t>();
  int bad = 0;
  for (int64_t c = 0; c < C; ++c) bad += (cols[c] != c * R) + (cols_t[c] != c * R);
  CHECK(bad == 0);
  // an argmax past 2^31, from a generator fused into the reduction and from memory
  const int64_t k = (int64_t(1) << 31) + 12345;
  CHECK(cf::argmax(cf::arange(0, n, 1, cf::i64) == k).item<int64_t>() == k);
  auto marked = (flat == 255) & (cf::arange(0, n, 1, cf::i64) > k);
  CHECK(cf::argmax(marked.eval()).item<int64_t>() == (k | 255));  // the next 255 after k
  CHECK(cf::argmin(flat[{cf::slice(k, cf::none)}]).item<int64_t>() == (C - k % C) % C);
  // a running sum: position p holds p + 1
  auto run = cf::cumsum(cf::ones({n}, cf::u8), std::nullopt, cf::i64);
  CHECK(run[{n - 1}].item<int64_t>() == n);
  CHECK(run[{k}].item<int64_t>() == k + 1);
  // a reversed read and a broadcast: element p of flat[::-1] is (n - 1 - p) % 256
  auto rev = (flat[{cf::slice(cf::none, cf::none, -1)}] + 1).astype(cf::i32);
  CHECK(rev[{k}].item<int32_t>() == static_cast<int32_t>((n - 1 - k) % C) + 1);
  CHECK(rev[{n - 1}].item<int32_t>() == 1);
  auto bc = x.astype(cf::i32) - cf::arange(0, C, 1, cf::i32);  // zero everywhere
  CHECK(cf::count_nonzero(bc).item<int64_t>() == 0);
  CHECK(cf::any(bc[{cf::slice(R - 3, cf::none)}]).item<bool>() == false);
}
