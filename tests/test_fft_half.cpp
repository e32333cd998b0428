// tests/test_fft_half.cpp: the half-precision FFTs (cufuse/fft.hpp: fft_half, ifft_half,
// rfft_half, irfft_half) on the host reference backend: complex32 as float16 pairs in and out,
// each checked against the complex64 transform of the same (exactly widened) values rounded
// to float16 once, which is what the reference promises; the norms; power-of-two sizes only
// and the other errors (NumPy has no such functions: the messages are cufuse's).
#include <cmath>
#include <random>

#include "test_core_helpers.hpp"

namespace {

// float16 pairs (..., 2) from random normal parts.
cf::Array random_pairs(const cf::Shape& values, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d;
  cf::Shape s = values;
  s.push_back(2);
  std::vector<float> v(static_cast<size_t>(cf::numel(s)));
  for (auto& x : v) x = d(g);
  return cf::from_host(v, s).astype(cf::f16);
}
// complex64 from float16 pairs (exact), and float16 pairs from complex values (rounded once).
cf::Array to_c64(const cf::Array& p) {
  const int last = p.ndim() - 1;
  cf::Shape v = p.shape();
  v.pop_back();
  const cf::Array re = cf::take(p, cf::array({int64_t(0)}), last).reshape(v);
  const cf::Array im = cf::take(p, cf::array({int64_t(1)}), last).reshape(v);
  return re.astype(cf::c64) + im.astype(cf::c64) * cf::Scalar(std::complex<double>(0, 1));
}
cf::Array to_pairs(const cf::Array& z) { return cf::stack({cf::real(z), cf::imag(z)}, -1).astype(cf::f16); }

// got (float16) within `ulps` float16 units (2^-10 relative) of want, or `atol`.
void check_half(const cf::Array& got, const cf::Array& want, double ulps, double atol = 0) {
  REQUIRE(got.dtype() == cf::f16);
  REQUIRE(got.shape() == want.shape());
  const auto g = got.astype(cf::f64).ravel().to_host<double>(), w = want.astype(cf::f64).ravel().to_host<double>();
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (!(std::abs(g[i] - w[i]) <= ulps * std::ldexp(std::abs(w[i]), -10) + atol) && bad++ < 3)
      CHECK_MESSAGE(false, "element " << i << ": " << g[i] << " vs " << w[i]);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("fft_half / ifft_half: complex32 pairs, the complex64 transform rounded once") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (int rank : {1, 2}) {
    CAPTURE(rank);
    const cf::Shape values = rank == 1 ? cf::Shape{3, 64} : cf::Shape{2, 16, 8};
    const cf::Array p = random_pairs(values, 7 + rank);
    const cf::Array z = to_c64(p);
    const std::vector<int> axes = rank == 1 ? std::vector<int>{-1} : std::vector<int>{-2, -1};
    const cf::Array f = cf::fft::fft_half(p, rank);
    CHECK(f.shape() == p.shape());
    check_half(f, to_pairs(cf::fft::fftn(z, std::nullopt, axes)), 1);
    // inverse: backward scales by float16(1/n) after the rounding
    const double n = static_cast<double>(cf::numel(values) / values[0]);
    const cf::Array b = cf::fft::ifft_half(p, rank);
    check_half(b, to_pairs(cf::fft::ifftn(z, std::nullopt, axes, "forward")).astype(cf::f32) * (1.0 / n), 2, 1e-7);
    const cf::Array o = cf::fft::fft_half(p, rank, "ortho");
    check_half(o, to_pairs(cf::fft::fftn(z, std::nullopt, axes)).astype(cf::f32) * (1.0 / std::sqrt(n)), 2, 1e-7);
  }
}

TEST_CASE("rfft_half / irfft_half: real float16 in, n/2 + 1 pairs out, and back") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array x = random_pairs({4, 32}, 3).reshape({4, 64}).astype(cf::f16);
  const cf::Array r = cf::fft::rfft_half(x);
  CHECK(r.shape() == cf::Shape{4, 33, 2});
  check_half(r, to_pairs(cf::fft::rfft(x.astype(cf::f32))), 1);
  const cf::Array back = cf::fft::irfft_half(r, 1, "forward");  // unscaled
  CHECK(back.shape() == cf::Shape{4, 64});
  check_half(back, cf::fft::irfft(to_c64(r), std::nullopt, -1, "forward").astype(cf::f16), 1);
  const cf::Array r2 = cf::fft::rfft_half(x, 2);
  CHECK(r2.shape() == cf::Shape{4, 33, 2});
  check_half(r2, to_pairs(cf::fft::rfft2(x.astype(cf::f32))), 1);
}

TEST_CASE("half-precision FFT errors: power-of-two sizes, float16 pairs, rank 1 to 3, norm") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK_THROWS_AS(cf::fft::fft_half(cf::zeros({6, 2}, cf::f16)), cf::ValueError);        // 6 points
  CHECK_THROWS_AS(cf::fft::fft_half(cf::zeros({8, 2}, cf::f32)), cf::TypeError);         // not float16
  CHECK_THROWS_AS(cf::fft::fft_half(cf::zeros({8, 3}, cf::f16)), cf::ValueError);        // no pair axis
  CHECK_THROWS_AS(cf::fft::fft_half(cf::zeros({8, 2}, cf::f16), 4), cf::ValueError);     // rank
  CHECK_THROWS_AS(cf::fft::fft_half(cf::zeros({8, 2}, cf::f16), 2), cf::ValueError);     // too few axes
  CHECK_THROWS_AS(cf::fft::rfft_half(cf::zeros({12}, cf::f16)), cf::ValueError);
  CHECK_THROWS_AS(cf::fft::irfft_half(cf::zeros({4, 2}, cf::f16)), cf::ValueError);      // n = 6
  CHECK_THROWS_AS(cf::fft::fft_half(cf::zeros({8, 2}, cf::f16), 1, "sideways"), cf::ValueError);
  CHECK(cf::fft::fft_half(cf::zeros({0, 8, 2}, cf::f16)).shape() == cf::Shape{0, 8, 2});
}
