// tests/test_cli_complex.cpp: complex numbers and numpy.fft in the program language of
// cufuse-dump-kernels: imaginary literals (2j, 1.5e3J) and Python's complex arithmetic on
// constants, complex64/complex128 as dtypes, the complex functions by NumPy's names (inverse
// trigonometric ones and NumPy's order of complex values: sort, argmax, maximum, <), and
// np.fft's functions (src/cli/functions_fft.cpp) with NumPy's keywords.
#include <doctest/doctest.h>

#include <complex>
#include <string>

#include "cli/evaluator.hpp"
#include "cli/registry.hpp"
#include "cli/syntax.hpp"
#include "cufuse/cufuse.hpp"

namespace cli = cufuse::cli;
namespace cf = cufuse;

namespace {

using c128 = std::complex<double>;

cf::Array result(const std::string& src) {
  cli::Evaluator ev;
  ev.run(cli::parse_program(src));
  auto r = ev.results({});
  REQUIRE(r.size() == 1);
  return r[0].array;
}
std::vector<c128> c(const cf::Array& a) { return a.astype(cf::c128).ravel().to_host<c128>(); }

}  // namespace

TEST_CASE("cli: imaginary literals, complex constants and complex dtypes") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = result("x = arange(3) + 2j; x");
  CHECK(a.dtype() == cf::c128);
  CHECK(c(a)[1] == c128(1, 2));
  CHECK(c(result("zeros(2, dtype=complex64) + (1 + 2j) * 2"))[0] == c128(2, 4));
  CHECK(result("zeros(2, dtype=complex64) + (1 + 2j) * 2").dtype() == cf::c64);
  CHECK(c(result("full(2, -1.5e1J)"))[1] == c128(0, -15));
  CHECK(result("ones(3, dtype=float32) * 1j").dtype() == cf::c64);
  CHECK(result("ones(3, dtype='c128')").dtype() == cf::c128);
  auto f = result("z = arange(4) * (1 - 1j); real(z) + imag(z) * 10 + abs(conj(z)) * 0");
  CHECK(f.dtype() == cf::f64);
  CHECK(c(f)[2] == c128(2 - 20, 0));
  CHECK(result("angle(ones(2, dtype=complex64) * 1j)").dtype() == cf::f32);
  // NumPy orders complex arrays (real part, then imaginary part); Python's complex constants stay unordered
  CHECK(result("x = arange(3) + 2j; x < 1").to_host<bool>() == std::vector<bool>{true, false, false});
  CHECK_THROWS(result("x = 2j < 1; arange(2)"));
}

TEST_CASE("cli: np.fft's functions with NumPy's keywords") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = result("x = arange(8) * 1.0; np.fft.fft(x)");
  CHECK(f.dtype() == cf::c128);
  CHECK(c(f)[0] == c128(28, 0));
  CHECK(result("np.fft.rfft(arange(8, dtype=float32), n=6)").shape() == cf::Shape{4});
  CHECK(result("np.fft.rfft(arange(8, dtype=float32), n=6)").dtype() == cf::c64);
  CHECK(result("np.fft.irfft(np.fft.rfft(arange(8) * 1.0), norm='ortho')").shape() == cf::Shape{8});
  CHECK(result("np.fft.fft2(ones((4, 6)), s=(2, 3))").shape() == cf::Shape{2, 3});
  CHECK(result("np.fft.fftn(ones((2, 4, 6)), axes=(0, 2))").shape() == cf::Shape{2, 4, 6});
  CHECK(c(result("np.fft.fftshift(np.fft.fftfreq(4, d=0.5))"))[0] == c128(-1, 0));
  CHECK(result("np.fft.rfftfreq(9)").shape() == cf::Shape{5});
  CHECK(c(result("np.fft.ifftshift(arange(5))"))[0] == c128(2, 0));
  CHECK_THROWS(result("np.fft.fft(arange(4), norm='sideways')"));
  // half precision: complex32 as float16 pairs (cufuse's own names, under np.fft like the rest)
  auto h = result("np.fft.fft_half(ones((8, 2), dtype=float16))");
  CHECK(h.dtype() == cf::f16);
  CHECK(h.shape() == cf::Shape{8, 2});
  CHECK(result("np.fft.rfft_half(ones((4, 16), dtype=float16), rank=2)").shape() == cf::Shape{4, 9, 2});
  CHECK_THROWS(result("np.fft.fft_half(ones((6, 2), dtype=float16))"));
}

TEST_CASE("cli: the complex inverse functions, sign, and NumPy's complex order by name") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (const char* f : {"arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "log2", "log10", "log1p", "exp2",
                        "expm1", "sign", "rint"}) {
    CAPTURE(f);
    auto r = result(std::string("z = (arange(4) - 1.5) * (0.5 + 0.25j); ") + f + "(z)");
    CHECK(r.dtype() == cf::c128);
    const auto want = cf::apply(f, {cf::Operand((cf::arange(4) - 1.5) * cf::Scalar(c128(0.5, 0.25)))});
    CHECK(c(r) == c(want));
  }
  const std::string z = "z = 2 - arange(3) * (1 - 3j); ";  // 2, 1+3j, 6j
  CHECK(c(result(z + "sort(z)")) == std::vector<c128>{c128(0, 6), c128(1, 3), c128(2, 0)});
  CHECK(c(result(z + "argsort(z)")) == std::vector<c128>{c128(2, 0), c128(1, 0), c128(0, 0)});
  CHECK(c(result(z + "argmax(z)"))[0] == c128(0, 0));
  CHECK(c(result(z + "max(z)"))[0] == c128(2, 0));
  CHECK(c(result(z + "maximum(z, 1 + 4j)")) == std::vector<c128>{c128(2, 0), c128(1, 4), c128(1, 4)});
}
