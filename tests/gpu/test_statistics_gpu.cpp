// tests/gpu/test_statistics_gpu.cpp: issue 33's statistics (cufuse/statistics.hpp) on the
// device against the host reference backend, on fresh random inputs: bincount and histogram
// counts bit for bit (integer counts are exact whatever order the atomics land in, through the
// shared-memory privatized scatter-add and through global atomics), equal bins with and
// without a range, explicit edges, histogram2d, float weights and densities within rounding
// (their sums' order differs), the kernel counts of a fused histogram, and the composites
// (diff, gradient, trapezoid, nanvar, average, cov, corrcoef, cumulative_sum).
#include "gpu_compare.hpp"

namespace {

// The same data on the reference backend (a host copy of the device array's bytes).
cf::Array on_host(const cf::Array& dev) {
  std::vector<unsigned char> b(static_cast<size_t>(dev.nbytes()));
  dev.copy_to_host(b.data(), b.size());
  cf::BackendScope ref(cf::Backend::Reference);
  return cf::from_host(b.data(), dev.dtype(), dev.shape());
}

std::vector<unsigned char> bytes(const cf::Array& a) {
  std::vector<unsigned char> b(static_cast<size_t>(a.nbytes()));
  a.copy_to_host(b.data(), b.size());
  return b;
}

void check_bits(const cf::Array& dev, const cf::Array& host, const std::string& what) {
  REQUIRE_MESSAGE(cf::to_string(dev.shape()) == cf::to_string(host.shape()), what);
  REQUIRE_MESSAGE(dev.dtype() == host.dtype(), what);
  CHECK_MESSAGE(bytes(dev) == bytes(host), what);
}

void check_close(const cf::Array& dev, const cf::Array& host, double rtol, const std::string& what) {
  REQUIRE_MESSAGE(cf::to_string(dev.shape()) == cf::to_string(host.shape()), what);
  REQUIRE_MESSAGE(dev.dtype() == host.dtype(), what);
  const auto a = dev.astype(cf::f64).to_host<double>();
  std::vector<double> b;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    b = host.astype(cf::f64).to_host<double>();
  }
  double scale = 0;
  for (double v : b)
    if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
  int64_t bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool ok = std::isnan(b[i]) ? std::isnan(a[i]) : std::fabs(a[i] - b[i]) <= rtol * std::max(scale, 1e-300);
    if (!ok && bad++ < 5) MESSAGE(what << ": element " << i << " device " << a[i] << " reference " << b[i]);
  }
  CHECK_MESSAGE(bad == 0, what);
}

cf::Array random_ints(int64_t n, int64_t hi, cf::DType t) {
  std::uniform_int_distribution<int64_t> d(0, hi - 1);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng());
  return cf::from_host(v).astype(t);
}

}  // namespace

TEST_CASE("bincount on the device equals the reference, privatized and not") {
  for (cf::DType t : {cf::i32, cf::i64, cf::u8, cf::u16}) {
    for (int64_t bins : {7, 1000, 20000}) {  // 20000 int64 counters: past 48 KB, global atomics
      const int64_t hi = t == cf::u8 ? std::min<int64_t>(bins, 256) : bins;
      const cf::Array x = random_ints(1 << 20, hi, t);
      const cf::Array hx = on_host(x);
      cf::Array h;
      {
        cf::BackendScope ref(cf::Backend::Reference);
        h = cf::bincount(hx, std::nullopt, 5);
      }
      check_bits(cf::bincount(x, std::nullopt, 5), h, "bincount " + std::string(cf::name(t)) + " " + std::to_string(bins));
    }
  }
  const cf::Array x = random_ints(1 << 20, 300, cf::i64), w = random_normal(cf::f32, {1 << 20});
  const cf::Array hx = on_host(x), hw = on_host(w);
  cf::Array h;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    h = cf::bincount(hx, hw);
  }
  check_close(cf::bincount(x, w), h, 1e-12, "bincount weighted (float64 sums)");
}

TEST_CASE("histogram on the device equals the reference bit for bit") {
  for (cf::DType t : {cf::f32, cf::f64, cf::f16, cf::i32}) {
    const cf::Array a = (random_normal(cf::f32, {(1 << 22) + 3}) * 2.0f).astype(t);
    const cf::Array ha = on_host(a);
    for (int64_t bins : {10, 1024, 5000}) {
      const std::string what = "histogram " + std::string(cf::name(t)) + " " + std::to_string(bins);
      auto d1 = cf::histogram(a, bins, cf::Range{-3.0, 3.5});
      auto d2 = cf::histogram(a, bins);
      cf::Histogram h1, h2;
      {
        cf::BackendScope ref(cf::Backend::Reference);
        h1 = cf::histogram(ha, bins, cf::Range{-3.0, 3.5});
        h2 = cf::histogram(ha, bins);
      }
      check_bits(d1.hist, h1.hist, what + " range");
      check_bits(d1.bin_edges, h1.bin_edges, what + " range edges");
      check_bits(d2.hist, h2.hist, what + " autodetected");
      check_bits(d2.bin_edges, h2.bin_edges, what + " autodetected edges");
    }
  }
  const cf::Array a = random_normal(cf::f32, {1 << 20});
  const cf::Array edges = cf::from_host(std::vector<double>{-4, -1, -0.5, 0, 0, 0.25, 2, 9});
  const cf::Array w = random_normal(cf::f32, {1 << 20});
  const cf::Array ha = on_host(a), he = on_host(edges), hw = on_host(w);
  cf::Histogram h, hwt, hd;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    h = cf::histogram(ha, cf::Bins(he));
    hwt = cf::histogram(ha, 64, cf::Range{-2, 2}, hw);
    hd = cf::histogram(ha, 64, std::nullopt, std::nullopt, true);
  }
  check_bits(cf::histogram(a, cf::Bins(edges)).hist, h.hist, "histogram explicit edges");
  check_close(cf::histogram(a, 64, cf::Range{-2, 2}, w).hist, hwt.hist, 1e-5, "histogram float32 weights");
  check_close(cf::histogram(a, 64, std::nullopt, std::nullopt, true).hist, hd.hist, 1e-12, "histogram density");
}

TEST_CASE("a histogram of an expression is its edges, the counters' fill and one fused scatter kernel") {
  const cf::Array x = random_normal(cf::f32, {1 << 22});
  x.eval();
  cf::synchronize();
  cf::reset_stats();
  auto h = cf::histogram(cf::exp(x * 0.5f), 1024, cf::Range{0.0, 4.0});
  h.hist.eval();
  CHECK(cf::stats().kernels_launched == 3);  // the uniform edges into memory, the fill, the scatter
  // The reference bins the device's own exp values: exp is within its precision class on the
  // device, not bit-equal to the host's, and a value an ulp from an edge changes its bin.
  const cf::Array he = on_host(cf::exp(x * 0.5f).eval());
  cf::Array want;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    want = cf::histogram(he, 1024, cf::Range{0.0, 4.0}).hist;
  }
  check_bits(h.hist, want, "histogram(exp(x * 0.5))");
}

TEST_CASE("histogram2d on the device equals the reference") {
  const cf::Array x = random_normal(cf::f64, {1 << 18}), y = random_normal(cf::f64, {1 << 18});
  const cf::Array hx = on_host(x), hy = on_host(y);
  cf::Histogram2d h;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    h = cf::histogram2d(hx, hy, 40, cf::Bins(17));
  }
  auto d = cf::histogram2d(x, y, 40, cf::Bins(17));
  check_bits(d.hist, h.hist, "histogram2d");
  check_bits(d.xedges, h.xedges, "histogram2d xedges");
}

TEST_CASE("statistics composites on the device equal the reference") {
  const cf::Array m = random_normal(cf::f32, {64, 300});
  const cf::Array v = random_normal(cf::f64, {1000});
  const cf::Array w = cf::abs(m.index({cf::_, 0})) + 0.1f;
  const cf::Array hm = on_host(m), hv = on_host(v), hw = on_host(w);
  cf::Array r[9];
  {
    cf::BackendScope ref(cf::Backend::Reference);
    r[0] = cf::diff(hm * 2, 2);
    r[1] = cf::gradient(hm, {0.5}, 1, 2)[0];
    r[2] = cf::trapezoid(hm, std::nullopt, 0.1);
    r[3] = cf::nanvar(cf::where(hm > 1.5f, NAN, hm), 1);
    r[4] = cf::average(hm, 0, hw);
    r[5] = cf::cov(hm);
    r[6] = cf::corrcoef(hm);
    r[7] = cf::cumulative_sum(hv, 0, std::nullopt, true);
    r[8] = cf::ediff1d(hv, cf::Operand(1.0));
  }
  check_bits(cf::diff(m * 2, 2), r[0], "diff");
  check_bits(cf::gradient(m, {0.5}, 1, 2)[0], r[1], "gradient");
  check_close(cf::trapezoid(m, std::nullopt, 0.1), r[2], 1e-5, "trapezoid");
  check_close(cf::nanvar(cf::where(m > 1.5f, NAN, m), 1), r[3], 1e-5, "nanvar");
  check_close(cf::average(m, 0, w), r[4], 1e-5, "average");
  check_close(cf::cov(m), r[5], 1e-12, "cov");
  check_close(cf::corrcoef(m), r[6], 1e-12, "corrcoef");
  check_close(cf::cumulative_sum(v, 0, std::nullopt, true), r[7], 1e-12, "cumulative_sum");
  check_bits(cf::ediff1d(v, cf::Operand(1.0)), r[8], "ediff1d");
}
