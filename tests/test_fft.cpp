// tests/test_fft.cpp: cufuse::fft on the host reference backend (FFTW): each transform against
// a direct O(n^2) DFT of the same values (an independent check; NumPy's own values are
// tests/test_fft_oracle.cpp's), the round trips, n/s cropping and padding, axes, the three
// norms, dtypes (float32 stays single), fftfreq/rfftfreq/fftshift/ifftshift as lazy views and
// generators, the errors, and the kernel counts around the FFT node.
#include <cmath>
#include <complex>
#include <numbers>
#include <random>

#include "test_core_helpers.hpp"

namespace {

using c128 = std::complex<double>;
using c64 = std::complex<float>;

std::vector<c128> rand_c(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d;
  std::vector<c128> v(n);
  for (auto& z : v) z = {d(g), d(g)};
  return v;
}

// The DFT of x (sign -1 forward, +1 inverse), unscaled.
std::vector<c128> dft(const std::vector<c128>& x, int sign) {
  const size_t n = x.size();
  std::vector<c128> y(n);
  for (size_t k = 0; k < n; ++k) {
    c128 s = 0;
    for (size_t j = 0; j < n; ++j)
      s += x[j] * std::polar(1.0, sign * 2 * std::numbers::pi * double((j * k) % n) / double(n));
    y[k] = s;
  }
  return y;
}

void check_close(const std::vector<c128>& got, const std::vector<c128>& want, double tol) {
  REQUIRE(got.size() == want.size());
  double scale = 1e-300;
  for (auto z : want) scale = std::max(scale, std::abs(z));
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::abs(got[i] - want[i]) > tol * scale && bad++ < 3)
      CHECK_MESSAGE(false, "element " << i << ": " << got[i] << " vs " << want[i]);
  CHECK(bad == 0);
}

std::vector<c128> values(const cf::Array& a) { return a.astype(cf::c128).ravel().to_host<c128>(); }

}  // namespace

TEST_CASE("fft and ifft match the direct DFT, with every norm, in both precisions") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (size_t n : {1u, 2u, 5u, 16u, 30u, 97u}) {
    auto v = rand_c(n, unsigned(n));
    auto a = cf::from_host(v);
    auto f = cf::fft::fft(a);
    CHECK(f.dtype() == cf::c128);
    check_close(values(f), dft(v, -1), 1e-13);
    auto inv = dft(v, +1);
    for (auto& z : inv) z /= double(n);
    check_close(values(cf::fft::ifft(a)), inv, 1e-13);
    auto ortho = dft(v, -1);
    for (auto& z : ortho) z /= std::sqrt(double(n));
    check_close(values(cf::fft::fft(a, std::nullopt, -1, "ortho")), ortho, 1e-13);
    auto fwd = dft(v, -1);
    for (auto& z : fwd) z /= double(n);
    check_close(values(cf::fft::fft(a, std::nullopt, -1, "forward")), fwd, 1e-13);
    check_close(values(cf::fft::ifft(cf::fft::fft(a))), v, 1e-13);
    // single precision stays single
    auto f32 = cf::fft::fft(a.astype(cf::c64));
    CHECK(f32.dtype() == cf::c64);
    check_close(values(f32), dft(v, -1), 2e-6 * std::max(1.0, std::log2(double(n))));
  }
  CHECK(cf::fft::fft(cf::zeros({8}, cf::f32)).dtype() == cf::c64);
  CHECK(cf::fft::fft(cf::zeros({8}, cf::f16)).dtype() == cf::c64);
  CHECK(cf::fft::fft(cf::zeros({8}, cf::i32)).dtype() == cf::c128);
  CHECK(cf::fft::fft(cf::zeros({8}, cf::bool_)).dtype() == cf::c128);
}

TEST_CASE("fft along an axis of a batch; n crops or zero-pads") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto v = rand_c(4 * 6 * 5, 7);
  auto a = cf::from_host(v, cf::Shape{4, 6, 5});
  auto f = cf::fft::fft(a, std::nullopt, 1);
  CHECK(f.shape() == cf::Shape{4, 6, 5});
  auto fh = values(f);
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 5; ++k) {
      std::vector<c128> col(6);
      for (int j = 0; j < 6; ++j) col[size_t(j)] = v[size_t((i * 6 + j) * 5 + k)];
      auto want = dft(col, -1);
      for (int j = 0; j < 6; ++j) CHECK(std::abs(fh[size_t((i * 6 + j) * 5 + k)] - want[size_t(j)]) < 1e-12);
    }
  // n = 3 keeps the first three; n = 9 pads with zeros
  auto x = cf::from_host(rand_c(6, 8));
  auto xv = values(x);
  check_close(values(cf::fft::fft(x, 3)), dft({xv[0], xv[1], xv[2]}, -1), 1e-13);
  std::vector<c128> padded(xv);
  padded.resize(9);
  check_close(values(cf::fft::fft(x, 9)), dft(padded, -1), 1e-13);
}

TEST_CASE("rfft, irfft, hfft and ihfft: half spectra, lengths and NumPy's dtypes") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (int64_t n : {1, 2, 7, 8, 33}) {
    std::vector<double> r(static_cast<size_t>(n));
    std::mt19937 g{static_cast<unsigned>(n)};
    std::normal_distribution<double> d;
    for (auto& x : r) x = d(g);
    auto a = cf::from_host(r);
    auto f = cf::fft::rfft(a);
    CHECK(f.shape() == cf::Shape{n / 2 + 1});
    auto full = dft(std::vector<c128>(r.begin(), r.end()), -1);
    full.resize(size_t(n / 2 + 1));
    check_close(values(f), full, 1e-13);
    auto back = cf::fft::irfft(f, n);
    CHECK(back.dtype() == cf::f64);
    check_close(values(back), std::vector<c128>(r.begin(), r.end()), 1e-13);
    // hfft(ihfft(x)) is x; ihfft is conj(rfft(x)) / n
    auto ih = cf::fft::ihfft(a);
    auto want = values(f);
    for (auto& z : want) z = std::conj(z) / double(n);
    check_close(values(ih), want, 1e-13);
    check_close(values(cf::fft::hfft(ih, n)), std::vector<c128>(r.begin(), r.end()), 1e-13);
  }
  auto x32 = cf::zeros({8}, cf::f32);
  CHECK(cf::fft::rfft(x32).dtype() == cf::c64);
  CHECK(cf::fft::irfft(cf::fft::rfft(x32)).dtype() == cf::f32);
  CHECK(cf::fft::irfft(cf::zeros({5}, cf::f16)).dtype() == cf::f16);
  CHECK(cf::fft::irfft(cf::zeros({5}, cf::c128)).shape() == cf::Shape{8});
  CHECK(cf::fft::hfft(cf::zeros({5}, cf::f32)).dtype() == cf::f32);
  CHECK_THROWS_AS(cf::fft::rfft(cf::zeros({4}, cf::c64)), cf::TypeError);
}

TEST_CASE("fft2, fftn, rfft2, irfftn over axes, with s") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto v = rand_c(3 * 4 * 6, 11);
  auto a = cf::from_host(v, cf::Shape{3, 4, 6});
  // fft2 over the last two axes = fft along each in turn
  auto two = cf::fft::fft2(a);
  auto seq = cf::fft::fft(cf::fft::fft(a, std::nullopt, 2), std::nullopt, 1);
  check_close(values(two), values(seq), 1e-13);
  auto all = cf::fft::fftn(a);
  auto seq3 = cf::fft::fft(seq, std::nullopt, 0);
  check_close(values(all), values(seq3), 1e-13);
  // axes in another order, and a repeated axis (transformed twice)
  check_close(values(cf::fft::fftn(a, std::nullopt, cf::fft::AxisList{0, 2})),
              values(cf::fft::fft(cf::fft::fft(a, std::nullopt, 2), std::nullopt, 0)), 1e-13);
  check_close(values(cf::fft::fftn(a, std::nullopt, cf::fft::AxisList{1, 1})),
              values(cf::fft::fft(cf::fft::fft(a, std::nullopt, 1), std::nullopt, 1)), 1e-13);
  check_close(values(cf::fft::ifftn(all)), v, 1e-13);
  // s crops/pads each axis
  auto cropped = cf::fft::fft2(a, cf::fft::Sizes{2, 8});
  CHECK(cropped.shape() == cf::Shape{3, 2, 8});
  // rfft2 / irfft2 round trip of a real array
  auto r = cf::real(a);
  auto rf = cf::fft::rfft2(r);
  CHECK(rf.shape() == cf::Shape{3, 4, 4});
  check_close(values(rf), values(cf::fft::fft(cf::fft::rfft(r), std::nullopt, 1)), 1e-13);
  // the last two axes are one multi-dimensional R2C call (no transposing copies around it)
  CHECK(cf::plan_dump({cf::fft::rfft2(r)}).find("r2c complex128 sizes (4, 6) x batch 3") != std::string::npos);
  cf::reset_stats();
  cf::fft::rfft2(r.copy()).eval();
  CHECK(cf::stats().kernels_launched == 2);  // the copy, the call
  check_close(values(cf::fft::irfft2(rf, cf::fft::Sizes{4, 6})), values(r), 1e-13);
  auto rn = cf::fft::rfftn(r);
  check_close(values(cf::fft::irfftn(rn, cf::fft::Sizes{3, 4, 6})), values(r), 1e-13);
  CHECK(cf::fft::irfftn(rn).shape() == cf::Shape{3, 4, 6});
}

TEST_CASE("fftfreq, rfftfreq, fftshift and ifftshift") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = cf::fft::fftfreq(8, 0.5).to_host<double>();
  const double w[] = {0, 0.25, 0.5, 0.75, -1, -0.75, -0.5, -0.25};
  for (int i = 0; i < 8; ++i) CHECK(f[size_t(i)] == w[i]);
  auto odd = cf::fft::fftfreq(5).to_host<double>();
  CHECK(odd[2] == 2 * (1.0 / 5));
  CHECK(odd[3] == -2 * (1.0 / 5));
  auto rf = cf::fft::rfftfreq(9).to_host<double>();
  CHECK(rf.size() == 5);
  CHECK(rf[4] == 4 * (1.0 / 9));
  CHECK(cf::fft::fftfreq(4, 1.0, cf::f32).dtype() == cf::f32);
  auto s = cf::fft::fftshift(cf::arange(7)).to_host<int64_t>();
  CHECK(s == std::vector<int64_t>{4, 5, 6, 0, 1, 2, 3});
  CHECK(cf::fft::ifftshift(cf::fft::fftshift(cf::arange(7))).to_host<int64_t>() ==
        std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6});
  auto m = cf::arange(12).reshape({3, 4});
  CHECK(cf::fft::fftshift(m, cf::fft::AxisList{1}).to_host<int64_t>()[0] == 2);
  CHECK(cf::fft::fftshift(m).to_host<int64_t>()[0] == 10);  // old [2][2]: rolled by (1, 2)
  // generators and rolls fuse: one kernel for the shifted, scaled frequencies
  cf::reset_stats();
  auto g = cf::fft::fftshift(cf::fft::fftfreq(1000)) * 2;  // a generator seen through a roll
  g.eval();
  CHECK(cf::stats().kernels_launched == 1);
}

TEST_CASE("fft errors are NumPy's") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::zeros({8}, cf::c64);
  CHECK_THROWS_AS(cf::fft::fft(a, 0), cf::ValueError);
  CHECK_THROWS_AS(cf::fft::fft(a, std::nullopt, -1, "x"), cf::ValueError);
  CHECK_THROWS_AS(cf::fft::fft(a, std::nullopt, 1), cf::IndexError);
  CHECK_THROWS_AS(cf::fft::irfft(cf::zeros({1}, cf::c64)), cf::ValueError);
  CHECK_THROWS_AS(cf::fft::fft(cf::zeros({0}, cf::c64)), cf::ValueError);
  CHECK_THROWS_AS(cf::fft::fftn(cf::zeros({4, 4}, cf::c64), cf::fft::Sizes{4}, cf::fft::AxisList{0, 1}), cf::ValueError);
  CHECK_THROWS_AS(cf::fft::fftfreq(0), cf::ValueError);
  // an empty batch is an empty result
  CHECK(cf::fft::fft(cf::zeros({0, 4}, cf::c64)).shape() == cf::Shape{0, 4});
}

TEST_CASE("fft kernel counts: elementwise work before and after fuses into one kernel each") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(rand_c(256, 3)).astype(cf::c64);
  auto w = cf::fft::fftfreq(256).astype(cf::f32);
  x.eval();
  cf::reset_stats();
  // x * w: one kernel; the FFT (a library launch, counted as one); abs ** 2: one kernel
  auto spec = cf::power(cf::abs(cf::fft::fft(x * w)), 2);
  spec.eval();
  CHECK(cf::stats().kernels_launched == 3);
  CHECK(spec.dtype() == cf::f32);
  cf::reset_stats();
  // FFT (x is read in place), * 2 (one kernel writing the next input), inverse FFT, its 1/n
  // and real (one kernel)
  auto inv = cf::real(cf::fft::ifft(cf::fft::fft(x) * 2));
  inv.eval();
  CHECK(cf::stats().kernels_launched == 4);
  check_close(values(inv), values(cf::real(x) * 2), 1e-5);
}

TEST_CASE("rfft2 of large matrices: R2C over the rows, the columns written transform axis last, viewed back") {
  cf::BackendScope ref(cf::Backend::Reference);
  // 2 x 512 x 1024 real: 512 * 513 >= 2^18 result elements a matrix, so the columns form
  // (src/library_build/fft.cpp) with its per-matrix loop
  std::mt19937 g(5);
  std::normal_distribution<double> d;
  std::vector<double> hv(2 * 512 * 1024);
  for (auto& x : hv) x = d(g);
  auto r = cf::from_host(hv, cf::Shape{2, 512, 1024});
  auto rf = cf::fft::rfft2(r);
  CHECK(rf.shape() == cf::Shape{2, 512, 513});
  const std::string dump = cf::plan_dump({rf});
  CHECK(dump.find("r2c complex128 sizes (1024) x batch 1024") != std::string::npos);
  CHECK(dump.find("c2c forward complex128 along columns: size 512 x 513 columns x 2 matrices") != std::string::npos);
  cf::reset_stats();
  rf.eval();
  CHECK(cf::stats().kernels_launched == 2);  // the two calls: the result is the second's memory, seen transposed
  CHECK(rf.strides() == cf::Strides{512 * 513, 1, 512});
  // against rfft over the rows, then fft down the columns through the transposing path
  auto want = cf::fft::fft(cf::fft::rfft(r), std::nullopt, 1);
  check_close(values(rf), values(want), 1e-12);
  // its readers take the strided view (a kernel), and the round trip comes back
  check_close(values(cf::fft::irfft2(rf, cf::fft::Sizes{512, 1024})), std::vector<c128>(hv.begin(), hv.end()), 1e-12);
  // float32 stays single precision, norm scales lazily after the view
  auto r32 = r.astype(cf::f32);
  auto o = cf::fft::rfft2(r32, std::nullopt, cf::fft::AxisList{-2, -1}, "ortho");
  CHECK(o.dtype() == cf::c64);
  auto o_want = cf::fft::fft(cf::fft::rfft(r), std::nullopt, 1) * (1.0 / std::sqrt(512.0 * 1024.0));
  check_close(values(o), values(o_want), 2e-5);
  // a small matrix keeps cuFFT's one 2-D call
  auto small = cf::from_host(std::vector<double>(hv.begin(), hv.begin() + 64 * 64), cf::Shape{64, 64});
  CHECK(cf::plan_dump({cf::fft::rfft2(small)}).find("r2c complex128 sizes (64, 64) x batch 1") != std::string::npos);
}

TEST_CASE("a root that views all of a library call's result is a leaf on its memory, not a copy") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<double> av(12), bv(8);
  for (size_t i = 0; i < av.size(); ++i) av[i] = double(i);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = double(i);
  auto a = cf::from_host(av, cf::Shape{3, 4});  // in memory: the GEMM reads them as they are
  auto b = cf::from_host(bv, cf::Shape{4, 2});
  auto t = cf::matmul(a, b).T();
  cf::reset_stats();
  t.eval();
  CHECK(cf::stats().kernels_launched == 1);  // the GEMM only
  CHECK(t.shape() == cf::Shape{2, 3});
  const auto h = t.to_host<double>();
  const std::vector<double> want{28, 76, 124, 34, 98, 162};
  CHECK(h == want);
  // a view of part of the result is copied (it must not keep the whole result alive)
  auto part = cf::matmul(a, b)[int64_t{0}];
  cf::reset_stats();
  part.eval();
  CHECK(cf::stats().kernels_launched == 2);
}
