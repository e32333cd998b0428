// tests/test_complex_linalg_oracle.cpp: issue 33's complex contractions and linalg against NumPy
// 2, from the cases tests/oracle/gen_complex_linalg.py writes (its docstring has the format):
// matmul, einsum, dot, vdot, inner, outer, tensordot over complex and mixed operands; det,
// slogdet, inv, solve, cholesky, eigvalsh, svdvals, pinv, lstsq, matrix_rank and the norms.
// Runs on the host reference backend.
//
// Result dtypes and shapes exactly; integer values bit for bit; float and complex values within
// a bound relative to the largest magnitude of the expected array (LAPACK's complex64 results
// carry float32 rounding scaled by the matrix's conditioning; the reference computes in
// complex double), NaN and infinities where NumPy has them.
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
  const char* d = std::getenv("CUFUSE_COMPLEX_LINALG_ORACLE_DIR");
  return std::string(d ? d : CUFUSE_TEST_BINARY_DIR "/oracle_complex_linalg") + "/complex_linalg.txt";
}

cf::Array run(const std::string& f, std::map<std::string, std::string>& p, const std::vector<cf::Array>& in) {
  namespace la = cf::linalg;
  if (f == "matmul") return cf::matmul(in[0], in[1]);
  if (f == "einsum") return cf::einsum(p["sub"], in);
  if (f == "dot") return cf::dot(in[0], in[1]);
  if (f == "vdot") return cf::vdot(in[0], in[1]);
  if (f == "inner") return cf::inner(in[0], in[1]);
  if (f == "outer") return cf::outer(in[0], in[1]);
  if (f == "tensordot") return cf::tensordot(in[0], in[1], std::stoi(p["axes"]));
  if (f == "det") return la::det(in[0]);
  if (f == "slogdet_sign") return la::slogdet(in[0]).sign;
  if (f == "slogdet_log") return la::slogdet(in[0]).logabsdet;
  if (f == "inv") return la::inv(in[0]);
  if (f == "solve") return la::solve(in[0], in[1]);
  if (f == "cholesky") return la::cholesky(in[0]);
  if (f == "eigvalsh") return la::eigvalsh(in[0], p["uplo"][0]);
  if (f == "svdvals") return la::svdvals(in[0]);
  if (f == "pinv") return la::pinv(in[0]);
  if (f == "lstsq") return la::lstsq(in[0], in[1]).x;
  if (f == "matrix_rank") return la::matrix_rank(in[0]);
  if (f == "norm") {
    const std::string& o = p["ord"];
    if (o == "vec") return la::norm(in[0]);
    if (o == "fro" || o == "nuc") return la::norm(in[0], o, cf::AxisArg({-2, -1}));
    const double ord = o == "inf" ? INFINITY : o == "-inf" ? -INFINITY : std::stod(o);
    return la::norm(in[0], ord, cf::AxisArg({-2, -1}));
  }
  throw std::runtime_error("unknown oracle function " + f);
}

bool single_precision(cf::DType t) { return t == cf::c64 || t == cf::f32; }

void check_values(const cf::Array& got, const OracleArray& want, const std::string& f) {
  if (!cf::is_float(want.dtype) && !cf::is_complex(want.dtype)) {
    CHECK(bytes_of(got) == want.bytes);
    return;
  }
  const auto g = got.astype(cf::c128).ravel().to_host<c128>();
  const auto w = to_array(want).astype(cf::c128).ravel().to_host<c128>();
  double mag = 0;
  for (const auto& z : w)
    if (std::isfinite(z.real()) && std::isfinite(z.imag())) mag = std::max(mag, std::abs(z));
  const bool solver = f != "matmul" && f != "einsum" && f != "dot" && f != "vdot" && f != "inner" && f != "outer" &&
                      f != "tensordot";
  const double rel = single_precision(want.dtype) ? (solver ? 2e-4 : 2e-6) : (solver ? 1e-11 : 1e-14);
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool wnan = std::isnan(w[i].real()) || std::isnan(w[i].imag());
    const bool gnan = std::isnan(g[i].real()) || std::isnan(g[i].imag());
    bool ok;
    if (wnan || gnan) ok = wnan == gnan;
    else if (std::isinf(w[i].real()) || std::isinf(w[i].imag())) ok = g[i] == w[i];
    else ok = std::abs(g[i] - w[i]) <= rel * mag + 1e-300;
    if (!ok && bad++ < 3) CHECK_MESSAGE(false, "element " << i << ": " << g[i] << " vs NumPy's " << w[i]);
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("complex contractions and linalg match NumPy") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int n = oracle_text::for_each_case(oracle_path(), "oracle_complex_linalg_cases", 4, [&](const std::vector<std::string>& f) {
    auto p = parse_params(f[1]);
    std::vector<cf::Array> ins;
    for (auto& t : split_fields(f[2], ' ')) ins.push_back(to_array(parse_array(t)));
    cf::Array got;
    std::string what;
    const std::string err = error_of([&] { got = run(f[0], p, ins); got.eval(); }, what);
    CAPTURE(what);
    const std::string& expected = f[3];
    if (expected.rfind("error", 0) == 0) {
      CHECK(err == expected);
      return;
    }
    REQUIRE(err.empty());
    OracleArray want = parse_array(expected);
    CHECK(cf::name(got.dtype()) == cf::name(want.dtype));
    CHECK(got.shape() == want.shape);
    if (got.shape() == want.shape && got.dtype() == want.dtype) check_values(got, want, f[0]);
  });
  CHECK(n >= 200);
}
