// tests/test_cli_complex_linalg.cpp: complex contractions and linalg in the program language of
// cufuse-dump-kernels: result dtypes and shapes on complex placeholders (lstsq's lazy form over
// the SVD included: its solution complex, residuals and singular values real), and values on
// the reference backend.
#include <complex>

#include "test_cli_helpers.hpp"

namespace cli = cufuse::cli;
namespace cf = cufuse;

namespace {

cli::Evaluator run_with(const std::string& src, const std::vector<std::string>& args) {
  cli::Evaluator ev;
  for (const auto& a : args) ev.declare(cli::parse_arg_spec(a));
  ev.run(cli::parse_program(src));
  return ev;
}

}  // namespace

TEST_CASE("cli: complex matmul and linalg dtypes on placeholders") {
  const std::vector<std::string> args = {"r=complex64[6,4]", "v=complex64[6]", "f=float64[4,3]", "h=complex128[5,5]"};
  auto one = [&](const std::string& src) {
    auto res = run_with(src, args).results({});
    REQUIRE(res.size() == 1);
    return res[0].array;
  };
  CHECK(one("r @ f").dtype() == cf::c128);
  CHECK(one("matmul(r, r.T)").dtype() == cf::c64);
  CHECK(one("linalg.svdvals(r)").dtype() == cf::f32);
  CHECK(one("linalg.eigvalsh(h)").dtype() == cf::f64);
  CHECK(one("linalg.det(h)").dtype() == cf::c128);
  CHECK(one("linalg.pinv(r)").shape() == cf::Shape{4, 6});
  auto ls = run_with("linalg.lstsq(r, v)", args).results({});
  REQUIRE(ls.size() == 4);
  CHECK(ls[0].array.dtype() == cf::c64);
  CHECK(ls[0].array.shape() == cf::Shape{4});
  CHECK(ls[1].array.dtype() == cf::f32);
  CHECK(ls[1].array.shape() == cf::Shape{1});
  CHECK(ls[3].array.dtype() == cf::f32);
}

TEST_CASE("cli: complex linalg values on the reference backend") {
  cf::BackendScope ref(cf::Backend::Reference);
  using c128 = std::complex<double>;
  // (1 + 1j) * I has determinant (1 + 1j)^2 = 2j, singular values sqrt(2)
  auto d = cli_test::result("linalg.det(eye(2) * (1 + 1j))");
  CHECK(d.dtype() == cf::c128);
  const c128 dv = d.astype(cf::c128).to_host<c128>()[0];
  CHECK(std::abs(dv - c128(0, 2)) < 1e-12);
  auto s = cli_test::result("linalg.svdvals(eye(2) * (1 + 1j))").to_host<double>();
  CHECK(std::abs(s[0] - std::sqrt(2.0)) < 1e-12);
  // vdot conjugates its first argument: vdot(1j, 1j) = 1
  auto v = cli_test::result("vdot(ones(3) * 1j, ones(3) * 1j)");
  CHECK(std::abs(v.astype(cf::c128).to_host<c128>()[0] - c128(3, 0)) < 1e-12);
}
