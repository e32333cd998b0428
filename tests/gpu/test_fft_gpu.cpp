// tests/gpu/test_fft_gpu.cpp: cufuse::fft on the device (cuFFT) against the host reference
// backend (FFTW), on fresh random inputs: every transform kind in both precisions, batched and
// along inner axes, odd and power-of-two sizes, n/s padding, the norms; the plan cache reused
// across calls and streams; and the kernel counts around the FFT node (the spectrum
// abs(fft(x * w)) ** 2 is one kernel, the FFT and one kernel; rfft2 of a large matrix two calls).
#include <complex>

#include "gpu_compare.hpp"

namespace {

using c128 = std::complex<double>;

cf::Array random_c(cf::DType t, const cf::Shape& s) {
  std::normal_distribution<double> nd;
  std::vector<c128> v(static_cast<size_t>(cf::numel(s)));
  for (auto& z : v) z = {nd(rng()), nd(rng())};
  return cf::from_host(v, s).astype(t);
}

std::vector<c128> host_c(const cf::Array& a) { return a.astype(cf::c128).ravel().to_host<c128>(); }

// f on the device and on the reference, from the same input bytes: within tol * max |want|.
template <class F>
void fft_matches(const cf::Array& in, F f, const std::string& what) {
  cf::Array dev = f(in);
  dev.eval();
  std::vector<unsigned char> b(static_cast<size_t>(in.nbytes()));
  in.copy_to_host(b.data(), b.size());
  std::vector<c128> want;
  cf::DType want_t;
  cf::Shape want_s;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    cf::Array w = f(cf::from_host(b.data(), in.dtype(), in.shape()));
    want = host_c(w);
    want_t = w.dtype();
    want_s = w.shape();
  }
  REQUIRE_MESSAGE(dev.dtype() == want_t, what);
  REQUIRE_MESSAGE(dev.shape() == want_s, what);
  const auto got = host_c(dev);
  double scale = 1e-300;
  for (auto z : want) scale = std::max(scale, std::abs(z));
  const bool single = want_t == cf::c64 || want_t == cf::f32;
  const double tol = (single ? 2e-5 : 1e-12) * scale;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol) && bad++ < 3)
      CHECK_MESSAGE(false, what << " element " << i << ": device " << got[i] << ", FFTW " << want[i]);
  CHECK_MESSAGE(bad == 0, what);
}

}  // namespace

TEST_CASE("fft, ifft, rfft, irfft, hfft, ihfft on the device match FFTW") {
  namespace F = cf::fft;
  for (cf::DType t : {cf::c64, cf::c128}) {
    const cf::DType r = cf::real_dtype(t);
    for (int64_t n : {1, 7, 64, 1000, 4096}) {
      auto x = random_c(t, {3, n});
      fft_matches(x, [](const cf::Array& a) { return F::fft(a); }, "fft " + std::to_string(n));
      fft_matches(x, [](const cf::Array& a) { return F::ifft(a, std::nullopt, -1, "ortho"); }, "ifft ortho");
      fft_matches(x, [](const cf::Array& a) { return F::fft(a, std::nullopt, 0); }, "fft axis 0");
      fft_matches(x.astype(r), [](const cf::Array& a) { return F::rfft(a); }, "rfft");
      fft_matches(x, [n](const cf::Array& a) { return F::irfft(a, n); }, "irfft");
      fft_matches(x, [n](const cf::Array& a) { return F::hfft(a, n + 1); }, "hfft");
      fft_matches(x.astype(r), [](const cf::Array& a) { return F::ihfft(a, std::nullopt, -1, "forward"); }, "ihfft");
      fft_matches(x, [n](const cf::Array& a) { return F::fft(a, 2 * n + 1); }, "fft padded");
    }
  }
}

TEST_CASE("fft2, rfft2, irfft2, fftn on the device match FFTW") {
  namespace F = cf::fft;
  for (cf::DType t : {cf::c64, cf::c128}) {
    auto x = random_c(t, {4, 48, 30});
    const cf::DType r = cf::real_dtype(t);
    fft_matches(x, [](const cf::Array& a) { return F::fft2(a); }, "fft2");
    fft_matches(x, [](const cf::Array& a) { return F::ifftn(a); }, "ifftn 3-D");
    fft_matches(x, [](const cf::Array& a) { return F::fftn(a, std::nullopt, F::AxisList{0, 2}); }, "fftn axes 0, 2");
    fft_matches(x.astype(r), [](const cf::Array& a) { return F::rfft2(a); }, "rfft2");
    fft_matches(x.astype(r), [](const cf::Array& a) { return F::rfftn(a, F::Sizes{5, 50, 32}); }, "rfftn s");
    fft_matches(x, [](const cf::Array& a) { return F::irfft2(a, F::Sizes{48, 58}); }, "irfft2");
    fft_matches(random_c(t, {2, 3, 4, 5}), [](const cf::Array& a) { return F::fftn(a); }, "fftn 4-D (two calls)");
    // rfft2 of a matrix: one 2-D R2C plan of cuFFT
    fft_matches(random_c(t, {64, 128}).astype(r), [](const cf::Array& a) { return F::rfft2(a); }, "rfft2 matrix");
    // large matrices: an R2C over the rows, then the columns written transform axis last
    // (FftCall::columns), viewed back; one matrix, a batch of two (the per-matrix loop), odd
    // sizes, and what reads the transposed result: the round trip and a fused reader
    auto big = random_c(t, {1024, 1024}).astype(r);
    fft_matches(big, [](const cf::Array& a) { return F::rfft2(a); }, "rfft2 1024 x 1024 (columns)");
    cf::reset_stats();
    F::rfft2(big).eval();
    CHECK(cf::stats().kernels_launched == 2);  // the two cuFFT calls; no copy of the result
    auto batch = random_c(t, {2, 600, 1000}).astype(r);
    fft_matches(batch, [](const cf::Array& a) { return F::rfft2(a); }, "rfft2 2 x 600 x 1000 (columns)");
    fft_matches(batch, [](const cf::Array& a) { return F::irfft2(F::rfft2(a), F::Sizes{600, 1000}); },
                "irfft2(rfft2) 2 x 600 x 1000");
    fft_matches(big, [](const cf::Array& a) { return cf::abs(F::rfft2(a, std::nullopt, F::AxisList{-2, -1}, "ortho")); },
                "abs(rfft2 ortho)");
  }
}

TEST_CASE("the fused spectrum is one kernel, the FFT and one kernel; plans are reused") {
  namespace F = cf::fft;
  auto x = random_c(cf::c64, {1 << 16});
  auto w = random_array(cf::f32, {1 << 16}, kFinite);
  x.eval();
  w.eval();
  cf::synchronize();
  cf::reset_stats();
  auto s = cf::power(cf::abs(F::fft(x * w)), 2);
  s.eval();
  CHECK(cf::stats().kernels_launched == 3);  // the FFT counts as one launch
  // the window travels with the input (one (2, n) complex array: row 0 x, row 1 w), so the
  // reference run reads host memory only
  fft_matches(cf::stack({x, w.astype(cf::c64)}), [](const cf::Array& a) {
    return cf::power(cf::abs(F::fft(a.index({0}) * cf::real(a.index({1})))), 2);
  }, "spectrum");
  // the same transform on another stream reuses the plan and gives the same values
  cf::Stream st;
  std::vector<c128> again;
  {
    cf::StreamScope scope(st);
    again = host_c(F::fft(x));
  }
  CHECK(again == host_c(F::fft(x)));
}
