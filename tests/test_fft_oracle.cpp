// tests/test_fft_oracle.cpp: cufuse::fft against numpy.fft, from the cases
// tests/oracle/gen_fft.py writes (its docstring has the format): the 1-D and N-D transforms
// over dtypes, shapes, n/s, axes and norms, the frequency and shift helpers, and NumPy's
// errors. Runs on the host reference backend (FFTW).
//
// Dtypes and shapes exactly; values within a bound relative to the largest magnitude of the
// expected array (an FFT's rounding error grows with that, not with each element): 1e-5 in
// single precision, 1e-12 in double, 4e-3 for a float16 result; fftfreq and the shifts exactly.
#include <cmath>
#include <complex>
#include <cstdlib>
#include <fstream>
#include <map>

#include "oracle_text.hpp"
#include "test_core_helpers.hpp"

namespace {

using namespace oracle_text;
using c128 = std::complex<double>;

std::string oracle_path() {
  const char* d = std::getenv("CUFUSE_FFT_ORACLE_DIR");
  return std::string(d ? d : CUFUSE_TEST_BINARY_DIR "/oracle_fft") + "/fft.txt";
}

template <class T>
std::optional<std::vector<T>> list_of(const std::string& s) {
  if (s == "None") return std::nullopt;
  std::vector<T> v;
  for (auto& t : split_fields(s, ',')) v.push_back(static_cast<T>(std::stoll(t)));
  return v;
}

cf::Array run(const std::string& f, std::map<std::string, std::string>& p, const cf::Array& a) {
  namespace F = cf::fft;
  if (f == "fftfreq") return F::fftfreq(std::stoll(p["n"]), std::stod(p["d"]));
  if (f == "rfftfreq") return F::rfftfreq(std::stoll(p["n"]), std::stod(p["d"]));
  if (f == "fftshift") return F::fftshift(a, list_of<int>(p["axes"]));
  if (f == "ifftshift") return F::ifftshift(a, list_of<int>(p["axes"]));
  const std::string norm = p["norm"];
  if (p.count("axis")) {
    std::optional<int64_t> n;
    if (p["n"] != "None") n = std::stoll(p["n"]);
    const int axis = std::stoi(p["axis"]);
    if (f == "fft") return F::fft(a, n, axis, norm);
    if (f == "ifft") return F::ifft(a, n, axis, norm);
    if (f == "rfft") return F::rfft(a, n, axis, norm);
    if (f == "irfft") return F::irfft(a, n, axis, norm);
    if (f == "hfft") return F::hfft(a, n, axis, norm);
    if (f == "ihfft") return F::ihfft(a, n, axis, norm);
  }
  const auto s = list_of<int64_t>(p["s"]);
  const auto axes = list_of<int>(p["axes"]);
  if (f == "fftn") return F::fftn(a, s, axes, norm);
  if (f == "ifftn") return F::ifftn(a, s, axes, norm);
  if (f == "rfftn") return F::rfftn(a, s, axes, norm);
  if (f == "irfftn") return F::irfftn(a, s, axes, norm);
  const F::AxisList ax2 = axes ? *axes : F::AxisList{-2, -1};
  if (f == "fft2") return F::fft2(a, s, ax2, norm);
  if (f == "ifft2") return F::ifft2(a, s, ax2, norm);
  if (f == "rfft2") return F::rfft2(a, s, ax2, norm);
  if (f == "irfft2") return F::irfft2(a, s, ax2, norm);
  FAIL("unknown oracle function " << f);
  return {};
}

void check_values(const cf::Array& got, const OracleArray& want, bool exact) {
  if (!cf::is_float(want.dtype) && !cf::is_complex(want.dtype)) {
    CHECK(bytes_of(got) == want.bytes);
    return;
  }
  const auto g = got.astype(cf::c128).ravel().to_host<c128>();
  const auto w = to_array(want).astype(cf::c128).ravel().to_host<c128>();
  double scale = 0;
  for (auto z : w) scale = std::max(scale, std::abs(z));
  const bool single = want.dtype == cf::c64 || want.dtype == cf::f32;
  const double tol = exact ? 0 : (cf::is_half(want.dtype) ? 4e-3 : (single ? 1e-5 : 1e-12)) * std::max(scale, 1e-300);
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (!(std::abs(g[i] - w[i]) <= tol) && bad++ < 3)
      CHECK_MESSAGE(false, "element " << i << ": " << g[i] << " vs NumPy's " << w[i]);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("cufuse::fft matches numpy.fft: transforms, sizes, axes, norms, helpers and errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int n = oracle_text::for_each_case(
      oracle_path(), "oracle_fft_cases", 4, [&](const std::vector<std::string>& f) {
    auto p = parse_params(f[1]);
    cf::Array a = f[2] == "-" ? cf::Array() : to_array(parse_array(f[2]));
    cf::Array got;
    std::string what;
    const std::string err = error_of([&] { got = run(f[0], p, a); got.eval(); }, what);
    CAPTURE(what);
    if (f[3].rfind("error", 0) == 0) {
      CHECK(err == f[3]);
      return;
    }
    REQUIRE(err.empty());
    OracleArray want = parse_array(f[3]);
    CHECK(cf::name(got.dtype()) == cf::name(want.dtype));
    CHECK(got.shape() == want.shape);
    const bool exact = f[0] == "fftshift" || f[0] == "ifftshift" || f[0] == "fftfreq" || f[0] == "rfftfreq";
    if (got.shape() == want.shape && got.dtype() == want.dtype) check_values(got, want, exact);
  }, 160);
  CHECK(n > 2000);
}
