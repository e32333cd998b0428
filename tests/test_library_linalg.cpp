// tests/test_library_linalg.cpp: cufuse::linalg through the reference backend (no GPU):
// values against NumPy (computed with numpy 2.4 when this file was written) and identities
// (Q R = A, U S Vh = A, A V = V diag(w)), shapes of every mode, batches, NumPy's errors.
#include <cmath>

#include "compile/compiler.hpp"
#include "library/blas_runtime.hpp"
#include "test_core_helpers.hpp"

namespace {

cf::Array mat(const std::vector<double>& v, const cf::Shape& s) { return cf::from_host(v, s); }
std::vector<double> hd(const cf::Array& a) { return host<double>(a.dtype() == cf::f64 ? a : a.astype(cf::f64)); }
void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-10) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])), "element " << i << ": " << got[i]
                                                                                             << " vs " << want[i]);
}
// Row-major (r x k) @ (k x c) on the host.
std::vector<double> mm(const std::vector<double>& a, const std::vector<double>& b, int64_t r, int64_t k, int64_t c) {
  std::vector<double> o(static_cast<size_t>(r * c), 0.0);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t l = 0; l < k; ++l) o[i * c + j] += a[i * k + l] * b[l * c + j];
  return o;
}
std::vector<double> tr(const std::vector<double>& a, int64_t r, int64_t c) {
  std::vector<double> o(a.size());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) o[j * r + i] = a[i * c + j];
  return o;
}
std::vector<double> eye(int64_t n) {
  std::vector<double> o(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) o[i * n + i] = 1;
  return o;
}

const std::vector<double> kM = {1, 2, 3, 4, 5, 6, 7, 8, 10};       // (3, 3), det -3
const std::vector<double> kS = {2, 1, 0, 1, 3, 1, 0, 1, 4};        // symmetric positive definite
const std::vector<double> kR = {3, 1, 1, 2, 0, 1, 2, -1};          // (4, 2)

}  // namespace

TEST_CASE("det, slogdet, inv, solve against NumPy") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto M = mat(kM, {3, 3});
  check_close(hd(cf::linalg::det(M)), {-2.9999999999999996});
  auto sl = cf::linalg::slogdet(M);
  check_close(hd(sl.sign), {-1});
  check_close(hd(sl.logabsdet), {1.0986122886681096});
  std::vector<double> stack = kM;
  stack.insert(stack.end(), kS.begin(), kS.end());
  for (int i = 0; i < 9; ++i) stack.push_back(i % 4 == 0 ? 2.0 : 0.0);
  auto batch = mat(stack, {3, 3, 3});
  check_close(hd(cf::linalg::det(batch)), {-3, 18, 8});
  CHECK(cf::linalg::det(batch).shape() == cf::Shape{3});
  check_close(hd(cf::linalg::det(M.astype(cf::f32))), {-3}, 1e-5);
  CHECK(cf::linalg::det(M.astype(cf::i32)).dtype() == cf::f64);
  auto sing = mat({1, 2, 2, 4}, {2, 2});
  CHECK(cf::linalg::det(sing).item<double>() == 0.0);
  auto ss = cf::linalg::slogdet(sing);
  CHECK(ss.sign.item<double>() == 0.0);
  CHECK(std::isinf(ss.logabsdet.item<double>()));
  check_close(hd(cf::linalg::inv(M)), {-0.6666666666666661, -1.333333333333333, 0.9999999999999997, -0.6666666666666676,
                                       3.6666666666666665, -1.9999999999999996, 1.0000000000000004, -2.0,
                                       0.9999999999999999});
  check_close(hd(cf::linalg::solve(M, mat({1, 2, 3}, {3}))), {-1.0 / 3, 2.0 / 3, 0});
  check_close(hd(cf::linalg::solve(M, mat({1, 0, 2, 1, 3, 5}, {3, 2}))),
              {-0.33333333333333315, 3.666666666666666, 0.6666666666666665, -6.333333333333332, 0, 2.999999999999999});
  auto xs = cf::linalg::solve(batch, mat({1, 2, 3}, {3}));  // b broadcast over the batch
  CHECK(xs.shape() == cf::Shape{3, 3});
  auto xb = hd(xs);
  for (int b = 0; b < 3; ++b) {
    std::vector<double> a(stack.begin() + b * 9, stack.begin() + (b + 1) * 9);
    check_close(mm(a, std::vector<double>(xb.begin() + b * 3, xb.begin() + b * 3 + 3), 3, 3, 1), {1, 2, 3});
  }
  CHECK(cf::linalg::solve(batch, mat({1, 0, 2, 1, 3, 5}, {1, 3, 2})).shape() == cf::Shape{3, 3, 2});
  CHECK_THROWS_WITH_AS(cf::linalg::inv(sing).eval(), "Singular matrix", cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::linalg::solve(sing, mat({1, 2}, {2})).eval(), "Singular matrix", cf::ValueError);
  {  // CuPy's default: no check (no wait for the stream), NaN for a singular matrix
    cf::linalg::ErrorScope ignore(cf::linalg::Errors::Ignore);
    CHECK(cf::linalg::errors() == cf::linalg::Errors::Ignore);
    auto x = hd(cf::linalg::inv(sing));
    CHECK(std::isnan(x[0]));
    CHECK(std::isnan(hd(cf::linalg::solve(sing, mat({1, 2}, {2})))[1]));
    CHECK(std::isnan(hd(cf::linalg::cholesky(mat({1, 2, 2, 1}, {2, 2})))[3]));
    CHECK(hd(cf::linalg::inv(mat({2, 0, 0, 4}, {2, 2})))[3] == 0.25);  // a regular matrix as before
  }
  CHECK(cf::linalg::errors() == cf::linalg::Errors::Raise);
  CHECK_THROWS_WITH_AS(cf::linalg::cholesky(mat({1, 2, 2, 1}, {2, 2})).eval(), "Matrix is not positive definite",
                       cf::ValueError);
  CHECK(cf::linalg::inv(mat({}, {0, 0})).shape() == cf::Shape{0, 0});
  CHECK(cf::linalg::det(mat({}, {0, 0})).item<double>() == 1.0);
}

TEST_CASE("cholesky, qr, svd, eigh: values and identities") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto S = mat(kS, {3, 3});
  check_close(hd(cf::linalg::cholesky(S)), {1.4142135623730951, 0, 0, 0.7071067811865475, 1.5811388300841898, 0,
                                           0, 0.6324555320336759, 1.8973665961010275});
  auto U = hd(cf::linalg::cholesky(S, true));
  check_close(mm(tr(U, 3, 3), U, 3, 3, 3), kS);
  auto upper_garbage = mat({2, 99, 99, 1, 3, 99, 0, 1, 4}, {3, 3});  // only the lower triangle is read
  check_close(hd(cf::linalg::cholesky(upper_garbage)), hd(cf::linalg::cholesky(S)));
  CHECK_THROWS_WITH_AS(cf::linalg::cholesky(mat({1, 2, 2, 1}, {2, 2})).eval(), "Matrix is not positive definite",
                       cf::ValueError);
  // QR, every mode, tall and wide
  auto R4 = mat(kR, {4, 2});
  for (const char* mode : {"reduced", "complete"}) {
    for (bool wide : {false, true}) {
      auto A = wide ? R4.T() : R4;
      const int64_t m = wide ? 2 : 4, n = wide ? 4 : 2;
      auto [Q, R] = cf::linalg::qr(A, mode);
      const int64_t kq = std::string(mode) == "complete" ? m : std::min(m, n);
      CHECK(Q.shape() == cf::Shape{m, kq});
      CHECK(R.shape() == cf::Shape{kq, n});
      auto q = hd(Q), r = hd(R);
      check_close(mm(q, r, m, kq, n), hd(A));
      check_close(mm(tr(q, m, kq), q, kq, m, kq), eye(kq));
      for (int64_t i = 0; i < kq; ++i)
        for (int64_t j = 0; j < std::min(i, n); ++j) CHECK(r[i * n + j] == 0.0);
    }
  }
  auto Ronly = cf::linalg::qr(R4, "r");
  CHECK_FALSE(Ronly.Q.defined());
  auto rd = hd(Ronly.R);
  CHECK(std::fabs(rd[0]) == doctest::Approx(3.741657386773941));
  CHECK(std::fabs(rd[3]) == doctest::Approx(2.5213375135318272));
  CHECK_THROWS_AS(cf::linalg::qr(R4, "economic"), cf::ValueError);
  // SVD: values against NumPy, reconstruction, orthonormal factors, every shape
  check_close(hd(cf::linalg::svdvals(R4)), {3.8871290470791475, 2.4269791452242755});
  check_close(hd(cf::linalg::svdvals(mat(kM, {3, 3}))), {17.412505166808597, 0.8751613501104367, 0.19686652111743008});
  for (bool full : {true, false})
    for (bool wide : {false, true}) {
      auto A = wide ? R4.T() : R4;
      const int64_t m = wide ? 2 : 4, n = wide ? 4 : 2, k = 2;
      auto d = cf::linalg::svd(A, full);
      const int64_t ku = full ? m : k, kv = full ? n : k;
      CHECK(d.U.shape() == cf::Shape{m, ku});
      CHECK(d.S.shape() == cf::Shape{k});
      CHECK(d.Vh.shape() == cf::Shape{kv, n});
      auto u = hd(d.U), s = hd(d.S), vh = hd(d.Vh);
      std::vector<double> us(static_cast<size_t>(m * k));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) us[i * k + j] = u[i * ku + j] * s[j];
      check_close(mm(us, std::vector<double>(vh.begin(), vh.begin() + k * n), m, k, n), hd(A));
      check_close(mm(tr(u, m, ku), u, ku, m, ku), eye(ku));
      check_close(mm(vh, tr(vh, kv, n), kv, n, kv), eye(kv));
    }
  CHECK(cf::linalg::svd(mat(kM, {3, 3}), true, false).S.shape() == cf::Shape{3});
  // eigh: values against NumPy, A V = V diag(w), both triangles
  auto e = cf::linalg::eigh(S);
  check_close(hd(e.eigenvalues), {1.2679491924311228, 3.000000000000001, 4.732050807568877});
  auto w = hd(e.eigenvalues), v = hd(e.eigenvectors);
  auto av = mm(kS, v, 3, 3, 3);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) CHECK(av[i * 3 + j] == doctest::Approx(v[i * 3 + j] * w[j]).epsilon(1e-10));
  check_close(hd(cf::linalg::eigvalsh(upper_garbage.T(), 'U')), hd(e.eigenvalues));
  CHECK_THROWS_AS(cf::linalg::eigh(S, 'X'), cf::ValueError);
}

TEST_CASE("pinv, lstsq, matrix_rank and matrix norms against NumPy") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto R4 = mat(kR, {4, 2});
  auto M = mat(kM, {3, 3});
  check_close(hd(cf::linalg::pinv(R4)), {0.20224719101123606, 0.01123595505617975, -0.03370786516853937,
                                         0.1910112359550563, 0.0561797752808989, 0.28089887640449457,
                                         0.15730337078651693, -0.2247191011235956});
  auto ls = cf::linalg::lstsq(R4, mat({1, 2, 3, 4}, {4}));
  check_close(hd(ls.x), {0.8876404494382029, 0.19101123595505637});
  check_close(hd(ls.residuals), {17.696629213483146});
  CHECK(ls.rank == 2);
  CHECK(ls.s.shape() == cf::Shape{2});
  auto ls2 = cf::linalg::lstsq(mat({1, 2, 2, 4}, {2, 2}), mat({1, 2}, {2}));
  CHECK(ls2.rank == 1);
  CHECK(ls2.residuals.shape() == cf::Shape{0});
  CHECK(cf::linalg::matrix_rank(mat({1, 2, 2, 4}, {2, 2})).item<int64_t>() == 1);
  CHECK(cf::linalg::matrix_rank(M).item<int64_t>() == 3);
  CHECK(cf::linalg::matrix_rank(mat({0, 0}, {2})).item<int64_t>() == 0);
  CHECK(cf::linalg::matrix_rank(mat({0, 1}, {2})).item<int64_t>() == 1);
  check_close(hd(cf::linalg::norm(M)), {17.435595774162696});
  check_close(hd(cf::linalg::norm(M, "fro")), {17.435595774162696});
  check_close(hd(cf::linalg::norm(M, "nuc")), {18.48453303803646});
  check_close(hd(cf::linalg::norm(M, 1.0)), {19});
  check_close(hd(cf::linalg::norm(M, -1.0)), {12});
  check_close(hd(cf::linalg::norm(M, 2.0)), {17.412505166808597});
  check_close(hd(cf::linalg::norm(M, -2.0)), {0.19686652111743008});
  check_close(hd(cf::linalg::norm(M, INFINITY)), {25});
  check_close(hd(cf::linalg::norm(M, -INFINITY)), {6});
  check_close(hd(cf::linalg::norm(M.T(), 1.0, {1, 0})), {19});  // axes swapped: the same matrix
  check_close(hd(cf::linalg::norm(M, cf::none, {0, 1})), {17.435595774162696});
  CHECK(cf::linalg::norm(M, 2.0, cf::none, true).shape() == cf::Shape{1, 1});
  CHECK(cf::linalg::norm(M, "nuc", {0, 1}, true).shape() == cf::Shape{1, 1});
  CHECK(cf::linalg::matrix_norm(mat(std::vector<double>(18, 1.0), {2, 3, 3})).shape() == cf::Shape{2});
  CHECK_THROWS_AS(cf::linalg::norm(M, 3.0), cf::ValueError);
  CHECK_THROWS_AS(cf::linalg::norm(M, "fro", 0), cf::ValueError);
}

TEST_CASE("linalg: shapes, dtypes and NumPy's errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = mat(std::vector<double>(24, 1.0), {2, 3, 4});
  CHECK_THROWS_WITH_AS(cf::linalg::inv(x), doctest::Contains("Last 2 dimensions of the array must be square"),
                       cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::linalg::det(x), doctest::Contains("(2, 3, 4)"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::linalg::inv(mat({1, 2}, {2})),
                       doctest::Contains("1-dimensional array given. Array must be at least two-dimensional"),
                       cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::linalg::inv(cf::ones({2, 2}, cf::f16)), "array type float16 is unsupported in linalg",
                       cf::TypeError);
  CHECK_THROWS_AS(cf::linalg::svd(cf::ones({2, 2}, cf::bf16)), cf::TypeError);
  CHECK_THROWS_AS(cf::linalg::solve(cf::ones({3, 3}), cf::ones({4})), cf::ValueError);
  CHECK_THROWS_AS(cf::linalg::lstsq(cf::ones({3, 2}), cf::ones({4})), cf::ValueError);
  CHECK(cf::linalg::inv(cf::ones({5, 4, 4}, cf::f32)).shape() == cf::Shape{5, 4, 4});
  CHECK(cf::linalg::inv(cf::ones({5, 4, 4}, cf::f32)).dtype() == cf::f32);
  CHECK(cf::linalg::det(cf::ones({5, 4, 4}, cf::i64)).dtype() == cf::f64);
  auto q = cf::linalg::qr(cf::ones({2, 6, 4}), "complete");
  CHECK(q.Q.shape() == cf::Shape{2, 6, 6});
  CHECK(q.R.shape() == cf::Shape{2, 6, 4});
  auto d = cf::linalg::svd(cf::ones({3, 2, 5}), false);
  CHECK(d.U.shape() == cf::Shape{3, 2, 2});
  CHECK(d.Vh.shape() == cf::Shape{3, 2, 5});
  CHECK(cf::linalg::eigh(cf::ones({4, 3, 3})).eigenvectors.shape() == cf::Shape{4, 3, 3});
  CHECK(cf::linalg::pinv(cf::ones({3, 2, 5})).shape() == cf::Shape{3, 5, 2});
  CHECK(cf::linalg::svd(cf::zeros({0, 3})).Vh.shape() == cf::Shape{3, 3});
  check_close(hd(cf::linalg::svd(cf::zeros({0, 3})).Vh), eye(3));
  // batched values: the solver's loop over the batch
  std::vector<double> two = kS;
  for (double e : kS) two.push_back(2 * e);
  auto w = hd(cf::linalg::eigvalsh(mat(two, {2, 3, 3})));
  check_close(w, {1.2679491924311228, 3, 4.732050807568877, 2 * 1.2679491924311228, 6, 2 * 4.732050807568877});
  auto c = hd(cf::linalg::cholesky(mat(two, {2, 3, 3})));
  CHECK(c[9] == doctest::Approx(std::sqrt(2.0) * 1.4142135623730951));
}

TEST_CASE("inv's permuted-identity kernel compiles with NVRTC for float32 and float64") {
  for (cf::DType t : {cf::f32, cf::f64}) {
    std::string name;
    const std::string src = cf::detail::permuted_identity_source(t, name);
    auto k = cf::detail::compile_kernel(src, name, 90);
    CHECK(k->cubin.size() > 0);
    CHECK(name.find(t == cf::f32 ? "f32" : "f64") != std::string::npos);
  }
}
