// tests/gpu/test_complex_gpu.cpp: complex64 / complex128 on the device against the host
// reference backend, on fresh random inputs: every op row that takes complex (elementwise,
// with real and complex scalars), casts both ways, the real-valued functions (abs, angle,
// real, imag), special values (zeros of both signs, infinities, NaN parts), reductions (sum,
// prod, mean over every axis; scans; max/min/argmax/argmin in NumPy's order), sort, argsort,
// searchsorted, unique and isin over values with ties and NaNs, and the kernel counts of a
// fused spectrum. The device runs the same helper text (codegen/device_helpers.inc) as the
// host, so results agree to a few ulps of each part (libm's last bits and the summation
// order of reductions aside).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <complex>

#include "core/op_table.hpp"
#include "gpu_compare.hpp"

namespace {

using c128 = std::complex<double>;

// Random complex values: parts normal * scale.
cf::Array random_complex(cf::DType t, const cf::Shape& s, double scale = 2.0) {
  std::normal_distribution<double> nd(0.0, scale);
  std::vector<c128> v(static_cast<size_t>(cf::numel(s)));
  for (auto& z : v) z = {nd(rng()), nd(rng())};
  return cf::from_host(v, s).astype(t);
}

std::vector<c128> complex_values(const cf::Array& a) { return a.astype(cf::c128).ravel().to_host<c128>(); }

// The device's f(inputs) against the reference's, part by part within rel * |want| + atol.
// With `conditioned`, each element may also differ by as much as the reference's own f moves
// when its float inputs move by 32 units in the last place. Near a pole of tan (|tan z| of 48)
// the formula's denominator cos 2x + cosh 2y cancels, so the device's sin, cos and cosh, a few
// ulps from the host's, moved a complex64 result by 1.4e-4 relative (a device run), as far as
// 30 ulps of its input would: past any fixed tolerance that still tests the well-conditioned
// elements, where 32 ulps of input move the result by about 2e-6.
template <class F>
void device_matches_reference(const std::vector<cf::Array>& ins, F f, double rel, double atol, const std::string& what,
                              bool conditioned = false) {
  cf::Array dev = f(ins);
  dev.eval();
  std::vector<cf::Array> host_ins, moved_ins;
  cf::Array want, moved;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    for (const auto& a : ins) {
      std::vector<unsigned char> b(static_cast<size_t>(a.nbytes()));
      a.copy_to_host(b.data(), b.size());
      host_ins.push_back(cf::from_host(b.data(), a.dtype(), a.shape()));
      const bool fl = cf::is_float(a.dtype()) || cf::is_complex(a.dtype());
      const double u = a.dtype() == cf::c64 || a.dtype() == cf::f32 ? 0x1p-24 : 0x1p-53;
      moved_ins.push_back(fl ? (host_ins.back() * (1 + 32 * u)).astype(a.dtype()) : host_ins.back());
    }
    want = f(host_ins);
    want.eval();
    if (conditioned) {
      moved = f(moved_ins);
      moved.eval();
    }
  }
  REQUIRE_MESSAGE(dev.dtype() == want.dtype(), what);
  REQUIRE_MESSAGE(dev.shape() == want.shape(), what);
  std::vector<c128> g = complex_values(dev), w, m;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    w = complex_values(want);
    if (conditioned) m = complex_values(moved);
  }
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool nan_both = (std::isnan(g[i].real()) || std::isnan(g[i].imag())) ==
                          (std::isnan(w[i].real()) || std::isnan(w[i].imag()));
    double cond = conditioned ? std::abs(m[i] - w[i]) : 0;
    if (!std::isfinite(cond)) cond = 0;
    const bool ok = (std::isnan(w[i].real()) || std::isnan(w[i].imag())) ? nan_both
                    : g[i] == w[i] ? true  // infinities equal (their difference is NaN)
                                   : std::abs(g[i] - w[i]) <= rel * std::abs(w[i]) + atol + cond;
    if (!ok && bad++ < 3) CHECK_MESSAGE(false, what << " element " << i << ": device " << g[i] << ", reference " << w[i]);
  }
  CHECK_MESSAGE(bad == 0, what);
}

double rel_of(cf::DType t) { return t == cf::c64 ? 1e-5 : 1e-13; }

// Every op row that takes complex (but `skip`'s), on the device against the reference: unary
// rows on a, binary on (a, b), where on (c, a, b).
void rows_match_reference(cf::DType t, const cf::Array& a, const cf::Array& b, const cf::Array& c,
                          std::initializer_list<cf::detail::Op> skip, const std::string& prefix) {
  using namespace cf::detail;
  for (int op = 0; op < kNumOps; ++op) {
    const OpRow& row = op_row(static_cast<Op>(op));
    if (row.id == Op::Cast || !(row.accepts & kKC) || std::find(skip.begin(), skip.end(), row.id) != skip.end())
      continue;
    std::vector<cf::Array> ins = row.arity == 1 ? std::vector<cf::Array>{a}
                                 : row.arity == 2 ? std::vector<cf::Array>{a, b}
                                                  : std::vector<cf::Array>{c, a, b};
    std::string name = row.name;
    device_matches_reference(
        ins,
        [&](const std::vector<cf::Array>& x) {
          const std::vector<cf::Operand> args(x.begin(), x.end());
          return cf::apply(name, args).astype(cf::c128);
        },
        rel_of(t) * 8, 1e-30, prefix + name + " " + std::string(cf::name(t)), /*conditioned=*/true);
  }
}

// Values with many ties (small integer parts, -0.0 beside 0.0) and NaN in either part: what
// NumPy's complex order has to settle.
cf::Array tied_complex(cf::DType t, const cf::Shape& s) {
  std::uniform_int_distribution<int> part(-3, 3), pick(0, 19);
  std::vector<c128> v(static_cast<size_t>(cf::numel(s)));
  for (auto& z : v) {
    double re = part(rng()), im = part(rng());
    const int k = pick(rng());
    if (k == 0) re = NAN;
    if (k == 1) im = NAN;
    if (k == 2) re = im = NAN;
    if (k == 3) re = -0.0;
    z = {re, im};
  }
  return cf::from_host(v, s).astype(t);
}

// A grid of special values: every pair of parts from zeros of both signs, +-1, 0.5, infinities, NaN.
cf::Array special_complex(cf::DType t) {
  const double parts[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e30, INFINITY, -INFINITY, NAN};
  std::vector<c128> v;
  for (double r : parts)
    for (double i : parts) v.push_back({r, i});
  return cf::from_host(v).astype(t);
}

}  // namespace

TEST_CASE("complex elementwise ops on the device match the reference") {
  using namespace cf::detail;
  for (cf::DType t : {cf::c64, cf::c128}) {
    auto a = random_complex(t, {1000});
    auto b = random_complex(t, {1000});
    auto c = random_array(cf::bool_, {1000});
    rows_match_reference(t, a, b, c, {}, "");
    device_matches_reference({a}, [](const std::vector<cf::Array>& x) { return x[0] * cf::Scalar(c128(0.5, -2)) + 3; }, rel_of(t), 0,
                             "scalars");
    device_matches_reference({a}, [](const std::vector<cf::Array>& x) { return cf::power(x[0], 3); }, rel_of(t) * 4, 0,
                             "power 3");
  }
}

TEST_CASE("complex casts on the device match the reference") {
  for (cf::DType z : {cf::c64, cf::c128}) {
    auto a = random_complex(z, {513}, 100.0);
    for (cf::DType to : {cf::bool_, cf::i8, cf::i32, cf::i64, cf::u16, cf::f16, cf::bf16, cf::f32, cf::f64, cf::c64, cf::c128})
      device_matches_reference({a}, [&](const std::vector<cf::Array>& x) { return x[0].astype(to).astype(cf::c128); }, 0, 0,
                               "astype " + std::string(cf::name(to)));
    for (cf::DType from : {cf::bool_, cf::i16, cf::u64, cf::f16, cf::f32, cf::f64})
      device_matches_reference({random_array(from, {257})}, [&](const std::vector<cf::Array>& x) { return x[0].astype(z); },
                               0, 0, "from " + std::string(cf::name(from)));
  }
}

TEST_CASE("complex reductions and scans on the device match the reference") {
  for (cf::DType t : {cf::c64, cf::c128}) {
    auto m = random_complex(t, {129, 1000}, 1.0);
    const double rel = t == cf::c64 ? 1e-4 : 1e-11;
    device_matches_reference({m}, [](const std::vector<cf::Array>& x) { return cf::sum(x[0]); }, rel, rel, "sum");
    device_matches_reference({m}, [](const std::vector<cf::Array>& x) { return cf::sum(x[0], 0); }, rel, rel, "sum 0");
    device_matches_reference({m}, [](const std::vector<cf::Array>& x) { return cf::mean(x[0], 1); }, rel, rel, "mean 1");
    device_matches_reference({m}, [](const std::vector<cf::Array>& x) { return cf::prod(x[0] * 0.1 + 1, 1); }, rel, rel,
                             "prod 1");
    device_matches_reference({m}, [](const std::vector<cf::Array>& x) { return cf::cumsum(x[0], 1); }, rel, rel, "cumsum");
    device_matches_reference({m}, [](const std::vector<cf::Array>& x) { return cf::var(x[0], 1).astype(cf::c128); }, rel,
                             rel, "var");
  }
}

TEST_CASE("a fused complex spectrum is one kernel on the device") {
  auto x = random_complex(cf::c64, {1 << 16});
  auto w = random_array(cf::f32, {1 << 16}, kFinite);
  x.eval();
  w.eval();
  cf::synchronize();
  cf::reset_stats();
  auto s = cf::power(cf::abs(x * w), 2);
  s.eval();
  CHECK(cf::stats().kernels_launched == 1);
  device_matches_reference({x, w}, [](const std::vector<cf::Array>& v) { return cf::power(cf::abs(v[0] * v[1]), 2).astype(cf::c128); },
                           1e-5, 0, "spectrum");
}

TEST_CASE("complex elementwise ops over special values on the device match the reference") {
  using namespace cf::detail;
  for (cf::DType t : {cf::c64, cf::c128}) {
    auto a = special_complex(t);
    auto b = cf::flip(a, 0);
    rows_match_reference(t, a, b, cf::Array(), {Op::Where, Op::Power}, "special ");
  }
}

TEST_CASE("complex max/min/argmax/argmin in NumPy's order on the device match the reference") {
  for (cf::DType t : {cf::c64, cf::c128}) {
    auto m = tied_complex(t, {67, 300});
    auto finite = cf::where(cf::isnan(m), cf::Scalar(c128(1, 1)), m);
    for (const cf::Array& x : {m, finite}) {
      for (int axis : {0, 1}) {
        const std::string ax = " axis " + std::to_string(axis) + " " + std::string(cf::name(t));
        device_matches_reference({x}, [&](const std::vector<cf::Array>& v) { return cf::max(v[0], axis); }, 0, 0, "max" + ax);
        device_matches_reference({x}, [&](const std::vector<cf::Array>& v) { return cf::min(v[0], axis); }, 0, 0, "min" + ax);
        device_matches_reference({x}, [&](const std::vector<cf::Array>& v) { return cf::nanmax(v[0], axis); }, 0, 0,
                                 "nanmax" + ax);
        device_matches_reference({x}, [&](const std::vector<cf::Array>& v) { return cf::argmax(v[0], axis).astype(cf::c128); },
                                 0, 0, "argmax" + ax);
        device_matches_reference({x}, [&](const std::vector<cf::Array>& v) { return cf::argmin(v[0], axis).astype(cf::c128); },
                                 0, 0, "argmin" + ax);
      }
      device_matches_reference({x}, [](const std::vector<cf::Array>& v) { return cf::max(v[0]); }, 0, 0, "max all");
      device_matches_reference({x}, [](const std::vector<cf::Array>& v) { return cf::argmin(v[0]).astype(cf::c128); }, 0, 0,
                               "argmin all");
    }
  }
}

TEST_CASE("complex sort, argsort, searchsorted and unique on the device match the reference") {
  for (cf::DType t : {cf::c64, cf::c128}) {
    const std::string tn = " " + std::string(cf::name(t));
    for (const cf::Shape& s : {cf::Shape{5000}, cf::Shape{300, 129}}) {
      auto x = tied_complex(t, s);
      // argsort is stable: the indices agree exactly, ties and NaNs included
      device_matches_reference({x}, [](const std::vector<cf::Array>& v) { return cf::argsort(v[0]).astype(cf::c128); }, 0,
                               0, "argsort" + tn);
      device_matches_reference({x}, [](const std::vector<cf::Array>& v) { return cf::sort(v[0]); }, 0, 0, "sort" + tn);
      device_matches_reference({x}, [](const std::vector<cf::Array>& v) { return cf::sort(v[0], 0); }, 0, 0, "sort 0" + tn);
    }
    auto a = tied_complex(t, {2000}), v = tied_complex(t, {40, 7});
    for (const char* side : {"left", "right"})
      device_matches_reference(
          {a, v},
          [&](const std::vector<cf::Array>& in) { return cf::searchsorted(cf::sort(in[0]), in[1], side).astype(cf::c128); }, 0,
          0, std::string("searchsorted ") + side + tn);
    device_matches_reference({a}, [](const std::vector<cf::Array>& in) { return cf::unique(in[0]).values; }, 0, 0,
                             "unique" + tn);
    device_matches_reference(
        {a}, [](const std::vector<cf::Array>& in) { return cf::unique(in[0], true, true, true).inverse.astype(cf::c128); }, 0,
        0, "unique inverse" + tn);
    device_matches_reference(
        {a, v}, [](const std::vector<cf::Array>& in) { return cf::isin(in[0], in[1]).astype(cf::c128); }, 0, 0, "isin" + tn);
  }
}

// A diagnosis, off unless CUFUSE_DIAG_COMPLEX is set: complex max over rows, columns and all
// of a small known matrix (one NaN row), printed beside the host's answer.
TEST_CASE("diagnose: complex max by rows, columns and all (CUFUSE_DIAG_COMPLEX)") {
  if (!std::getenv("CUFUSE_DIAG_COMPLEX")) return;
  std::vector<c128> h(4 * 64);
  for (size_t i = 0; i < h.size(); ++i) h[i] = c128(double(i % 7) - 3.0, double(i % 5) - 2.0);
  h[70] = c128(std::nan(""), 0.0);
  for (cf::DType t : {cf::c64, cf::c128}) {
    cf::Array x = cf::from_host(h.data(), cf::c128, {4, 64}).astype(t);
    for (int axis : {1, 0, -1}) {
      cf::Array d = axis < 0 ? cf::max(x) : cf::max(x, axis);
      cf::Array n = axis < 0 ? cf::argmax(x) : cf::argmax(x, axis);
      const auto g = complex_values(d.astype(cf::c128));
      const auto gi = n.astype(cf::i64).to_host<int64_t>();
      std::string line = std::string(cf::name(t)) + " axis " + std::to_string(axis) + ":";
      for (size_t i = 0; i < g.size() && i < 6; ++i)
        line += " (" + std::to_string(g[i].real()) + "," + std::to_string(g[i].imag()) + ")@" + std::to_string(gi[i]);
      std::printf("%s\n", line.c_str());
    }
  }
}
