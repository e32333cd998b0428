// tests/gpu/test_fft_half_gpu.cpp: cuFFT's half-precision transforms (cufuse/fft.hpp:
// fft_half & co, CUDA_C_16F / CUDA_R_16F plans) against the host reference (float32 FFTW on
// the same float16 values, rounded once). cuFFT keeps float16 between its stages, so the
// bound is relative to the spectrum's largest magnitude and grows with log2(n).
#include "gpu_compare.hpp"

namespace {

// Device f(x) against the reference's, within rel * max|want|.
template <class F>
void half_matches_reference(const cf::Array& x, F f, double rel, const std::string& what) {
  cf::Array dev = f(x);
  dev.eval();
  std::vector<unsigned char> b(static_cast<size_t>(x.nbytes()));
  x.copy_to_host(b.data(), b.size());
  std::vector<double> w;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    cf::Array want = f(cf::from_host(b.data(), x.dtype(), x.shape()));
    REQUIRE_MESSAGE(want.shape() == dev.shape(), what);
    REQUIRE_MESSAGE(want.dtype() == dev.dtype(), what);
    w = want.astype(cf::f64).ravel().to_host<double>();
  }
  const auto g = dev.astype(cf::f64).ravel().to_host<double>();
  double big = 0;
  for (double v : w) big = std::max(big, std::abs(v));
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (!(std::abs(g[i] - w[i]) <= rel * big) && bad++ < 3)
      CHECK_MESSAGE(false, what << " element " << i << ": device " << g[i] << ", reference " << w[i]);
  CHECK_MESSAGE(bad == 0, what);
}

}  // namespace

TEST_CASE("half-precision FFTs on the device match the reference") {
  const cf::Array p = random_normal(cf::f16, {16, 1024, 2});
  half_matches_reference(p, [](const cf::Array& x) { return cf::fft::fft_half(x); }, 1e-2, "fft_half");
  half_matches_reference(p, [](const cf::Array& x) { return cf::fft::ifft_half(x); }, 1e-2, "ifft_half");
  half_matches_reference(p, [](const cf::Array& x) { return cf::fft::fft_half(x, 1, "ortho"); }, 1e-2, "ortho");
  const cf::Array q = random_normal(cf::f16, {4, 64, 32, 2});
  half_matches_reference(q, [](const cf::Array& x) { return cf::fft::fft_half(x, 2); }, 1e-2, "fft_half rank 2");
  const cf::Array r = random_normal(cf::f16, {8, 2048});
  half_matches_reference(r, [](const cf::Array& x) { return cf::fft::rfft_half(x); }, 1e-2, "rfft_half");
  half_matches_reference(r, [](const cf::Array& x) { return cf::fft::irfft_half(cf::fft::rfft_half(x)); }, 1e-2,
                         "irfft_half(rfft_half)");
  // fused around the transform: the input's producer and the norm's factor
  half_matches_reference(p, [](const cf::Array& x) { return cf::fft::fft_half(x * 0.5, 1, "forward") + 1; }, 1e-2,
                         "fused");
}
