// tests/test_library_values.cpp: matmul, the contractions and einsum through the reference
// backend (no GPU) against hand-computed and NumPy-computed values, their shapes, dtypes
// and NumPy's errors; the GEMM node's own host reference with an epilogue.
#include <cmath>

#include "test_core_helpers.hpp"

#include "library/gemm_call.hpp"
#include "reference/eval_nodes.hpp"

using cf::_;
using cf::none;
using cf::slice;

namespace {

cf::Array mat(const std::vector<double>& v, const cf::Shape& s) { return cf::from_host(v, s); }
void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])), "element " << i << ": " << got[i]
                                                                                             << " vs " << want[i]);
}
std::vector<double> hd(const cf::Array& a) { return host<double>(a.dtype() == cf::f64 ? a : a.astype(cf::f64)); }

const std::vector<double> kA = {1, 2, 3, 4, 5, 6};            // (2, 3)
const std::vector<double> kB = {7, 8, 9, 10, 11, 12};         // (3, 2)
const std::vector<double> kAB = {58, 64, 139, 154};           // A @ B
const std::vector<double> kM = {1, 2, 3, 4, 5, 6, 7, 8, 10};  // (3, 3)

// sum over l of a[..., l] * b[..., l, ...] by loops, for dot/tensordot checks
std::vector<double> dot_nd(const std::vector<double>& a, const cf::Shape& sa, const std::vector<double>& b,
                           const cf::Shape& sb) {
  // a (I, J, L), b (K, L, M) -> (I, J, K, M)
  const int64_t I = sa[0], J = sa[1], L = sa[2], K = sb[0], M = sb[2];
  std::vector<double> r(static_cast<size_t>(I * J * K * M), 0.0);
  for (int64_t i = 0; i < I; ++i)
    for (int64_t j = 0; j < J; ++j)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t m = 0; m < M; ++m)
          for (int64_t l = 0; l < L; ++l)
            r[((i * J + j) * K + k) * M + m] += a[(i * J + j) * L + l] * b[(k * L + l) * M + m];
  return r;
}

}  // namespace

TEST_CASE("matmul follows NumPy: shapes, 1-D operands, batches, dtypes, alpha") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto A = mat(kA, {2, 3}), B = mat(kB, {3, 2});
  check_close(hd(cf::matmul(A, B)), kAB);
  check_close(hd(cf::matmul(B.T(), A.T())), {58, 139, 64, 154});
  for (cf::DType t : {cf::f32, cf::f16, cf::bf16}) {
    auto r = cf::matmul(A.astype(t), B.astype(t));
    CHECK(r.dtype() == t);
    check_close(hd(r), kAB);
  }
  CHECK(cf::matmul(A.astype(cf::f16), B).dtype() == cf::f64);
  CHECK(cf::matmul(A.astype(cf::f16), B.astype(cf::f32)).dtype() == cf::f32);
  auto v = mat({1, 2, 3}, {3});
  check_close(hd(cf::matmul(v, B)), {58, 64});
  check_close(hd(cf::matmul(A, v)), {14, 32});
  auto vv = cf::matmul(v, mat({4, 5, 6}, {3}));
  CHECK(vv.shape() == cf::Shape{});
  check_close(hd(vv), {32});
  // a batch against a broadcast matrix, a broadcast batch, a batch of vectors
  std::vector<double> x2 = kA;
  for (double e : kA) x2.push_back(2 * e);
  auto X = mat(x2, {2, 2, 3});
  check_close(hd(cf::matmul(X, B)), {58, 64, 139, 154, 116, 128, 278, 308});
  check_close(hd(cf::matmul(B.T(), X.transpose({0, 2, 1}))), {58, 139, 64, 154, 116, 278, 128, 308});
  auto Xb = mat(x2, {2, 1, 2, 3});
  auto Bb = cf::matmul(Xb, mat({7, 8, 9, 10, 11, 12, 1, 0, 0, 1, 0, 0}, {2, 3, 2}));
  CHECK(Bb.shape() == cf::Shape{2, 2, 2, 2});
  check_close(hd(Bb), {58, 64, 139, 154, 1, 2, 4, 5, 116, 128, 278, 308, 2, 4, 8, 10});
  check_close(hd(cf::matmul(X, v)), {14, 32, 28, 64});
  // strided operands: every other row, a transposed slice
  auto big = mat({1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0, 0}, {4, 3});
  check_close(hd(cf::matmul(big[{slice(none, none, 2), _}], B)), kAB);
  // scalar factors go to alpha: same values as NumPy's (2*A)@B and (-A)@(B/2)
  check_close(hd(cf::matmul(2 * A, B)), {116, 128, 278, 308});
  check_close(hd(cf::matmul(-A, B / 2)), {-29, -32, -69.5, -77});
  // ... but not a zero or infinite one: NumPy's (Z / -0) @ Z.T has NaNs where Z has zeros
  // (0 / 0; fuzz seed 39661707121), where alpha = -inf would give -inf
  auto Z = mat({2, 0, 1, 3}, {2, 2});
  const std::vector<double> nz = hd(cf::matmul(Z.T(), Z / -0.0));  // Z / -0 = [[-inf, nan], [-inf, -inf]]
  CHECK(nz[0] == -INFINITY);  // 2 * -inf + 1 * -inf
  CHECK(std::isnan(nz[1]));   // 2 * nan + 1 * -inf
  CHECK(std::isnan(nz[2]));   // 0 * -inf + 3 * -inf
  CHECK(std::isnan(nz[3]));   // 0 * nan + 3 * -inf
  const std::vector<double> z0 = hd(cf::matmul(Z * INFINITY, Z));  // 0 * inf in the operand: NaN
  CHECK(std::isnan(z0[0]));
  // an empty contraction
  check_close(hd(cf::matmul(cf::zeros({2, 0}), cf::zeros({0, 3}))), {0, 0, 0, 0, 0, 0});
  // integers wrap in their dtype like NumPy; bool is any(and)
  auto Ai = A.astype(cf::i32), Bi = B.astype(cf::i32);
  CHECK(cf::matmul(Ai, Bi).dtype() == cf::i32);
  CHECK(host<int32_t>(cf::matmul(Ai, Bi)) == std::vector<int32_t>{58, 64, 139, 154});
  CHECK(host<int32_t>(cf::matmul(Ai[0], Bi)) == std::vector<int32_t>{58, 64});
  CHECK(host<int32_t>(cf::matmul(Ai, Bi[{_, 0}])) == std::vector<int32_t>{58, 139});
  auto i8 = cf::from_host(std::vector<int8_t>{100, 100}, cf::Shape{1, 2});
  CHECK(host<int8_t>(cf::matmul(i8, cf::from_host(std::vector<int8_t>{1, 1}, cf::Shape{2, 1}))) ==
        std::vector<int8_t>{static_cast<int8_t>(200 - 256)});
  auto e = cf::from_host(std::vector<int32_t>{1, 0, 0, 1}, cf::Shape{2, 2}) != 0;
  auto f = cf::from_host(std::vector<int32_t>{0, 1, 0, 0}, cf::Shape{2, 2}) != 0;
  CHECK(host<bool>(cf::matmul(e, f)) == std::vector<bool>{false, true, false, false});
  // results of other library calls and reductions read through views
  check_close(hd(cf::matmul(cf::matmul(A, B).T(), cf::matmul(A, B))), {58 * 58. + 139 * 139., 58 * 64. + 139 * 154.,
                                                                       58 * 64. + 139 * 154., 64 * 64. + 154 * 154.});
}

TEST_CASE("matmul and friends raise NumPy's errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto A = mat(kA, {2, 3});
  CHECK_THROWS_WITH_AS(cf::matmul(A, A), doctest::Contains("mismatch in its core dimension 0"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::matmul(A, A), doctest::Contains("(size 2 is different from 3)"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::matmul(cf::ones({}), A), doctest::Contains("does not have enough dimensions"),
                       cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::dot(A, A), doctest::Contains("shapes (2, 3) and (2, 3) not aligned"), cf::ValueError);
  CHECK_THROWS_AS(cf::inner(A, A.T()), cf::ValueError);
  CHECK_THROWS_AS(cf::vdot(A, mat({1, 2}, {2})), cf::ValueError);
  CHECK_THROWS_AS(cf::tensordot(A, A, cf::Axes{1}, cf::Axes{0}), cf::ValueError);
  CHECK_THROWS_AS(cf::matmul(cf::ones({2, 2, 3}), cf::ones({3, 3, 2})), cf::ValueError);  // batches 2 vs 3
}

TEST_CASE("dot, vdot, inner, outer, tensordot") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto A = mat(kA, {2, 3}), B = mat(kB, {3, 2});
  check_close(hd(cf::dot(A, B)), kAB);
  check_close(hd(cf::dot(A, cf::full({}, 2.0))), {2, 4, 6, 8, 10, 12});
  check_close(hd(cf::dot(mat({1, 2, 3}, {3}), mat({4, 5, 6}, {3}))), {32});
  std::vector<double> a3(12), b3(12);
  for (int i = 0; i < 12; ++i) {
    a3[i] = i + 1;
    b3[i] = (i * 7) % 5 - 2;
  }
  auto T1 = mat(a3, {2, 2, 3}), T2 = mat(b3, {2, 3, 2});
  auto d = cf::dot(T1, T2);
  CHECK(d.shape() == cf::Shape{2, 2, 2, 2});
  check_close(hd(d), dot_nd(a3, {2, 2, 3}, b3, {2, 3, 2}));
  check_close(hd(cf::tensordot(T1, T2, cf::Axes{2}, cf::Axes{1})), dot_nd(a3, {2, 2, 3}, b3, {2, 3, 2}));
  check_close(hd(cf::inner(A, A)), {14, 32, 32, 77});
  check_close(hd(cf::outer(mat({1, 2}, {2}), mat({3, 4, 5}, {3}))), {3, 4, 5, 6, 8, 10});
  check_close(hd(cf::vdot(A, A)), {91});
  check_close(hd(cf::tensordot(A, A, 2)), {91});
  auto t0 = cf::tensordot(mat({1, 2}, {2}), mat({3, 4}, {2}), 0);
  CHECK(t0.shape() == cf::Shape{2, 2});
  check_close(hd(t0), {3, 4, 6, 8});
  check_close(hd(cf::tensordot(A, B, 1)), kAB);
}

TEST_CASE("diagonal views and trace") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto M = mat(kM, {3, 3});
  check_close(hd(cf::diagonal(M)), {1, 5, 10});
  check_close(hd(cf::diagonal(M, 1)), {2, 6});
  check_close(hd(cf::diagonal(M, -1)), {4, 8});
  CHECK(cf::diagonal(M, 5).shape() == cf::Shape{0});
  check_close(hd(cf::diagonal(M * 2)), {2, 10, 20});                 // lazy: pushed to the leaves
  check_close(hd(cf::diagonal(cf::matmul(M, M))), {30, 81, 169});  // a library result's diagonal
  check_close(hd(cf::diagonal(cf::sum(mat(std::vector<double>(18, 1.0), {2, 3, 3}), 0))), {2, 2, 2});
  auto T = mat({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {2, 2, 3});
  auto d = cf::diagonal(T, 0, 0, 2);  // (2, 3)[i, k, i] -> (2, 2): [k][i]
  CHECK(d.shape() == cf::Shape{2, 2});
  check_close(hd(d), {0, 7, 3, 10});
  CHECK(cf::trace(M).item<double>() == 16);
  CHECK(cf::trace(M, 1).item<double>() == 8);
  CHECK(cf::trace(M.astype(cf::i32)).dtype() == cf::i64);
  CHECK(cf::diagonal(M).is_lazy() == false);  // a view of memory: no kernel
  CHECK_THROWS_AS(cf::diagonal(M)[{0}] = 5.0, cf::ValueError);  // read-only like NumPy's
  CHECK_THROWS_AS(cf::diagonal(M, 0, 1, 1), cf::ValueError);
  CHECK_THROWS_AS(cf::diagonal(mat({1, 2}, {2})), cf::ValueError);
}

TEST_CASE("einsum: explicit and implicit output, ellipsis, repeated labels, several operands") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto A = mat(kA, {2, 3}), B = mat(kB, {3, 2}), M = mat(kM, {3, 3});
  check_close(hd(cf::einsum("ij,jk->ik", A, B)), kAB);
  check_close(hd(cf::einsum("ij,jk", A, B)), kAB);
  check_close(hd(cf::einsum("ji", A)), {1, 4, 2, 5, 3, 6});
  check_close(hd(cf::einsum("ij", A)), kA);
  check_close(hd(cf::einsum("ii", M)), {16});
  check_close(hd(cf::einsum("ii->i", M)), {1, 5, 10});
  check_close(hd(cf::einsum("ij->j", A)), {5, 7, 9});
  check_close(hd(cf::einsum("ij->", A)), {21});
  check_close(hd(cf::einsum("ij,ij->i", A, A)), {14, 77});
  check_close(hd(cf::einsum("ij,ij->ij", A, A)), {1, 4, 9, 16, 25, 36});
  check_close(hd(cf::einsum("i,j->ij", mat({1, 2}, {2}), mat({3, 4, 5}, {3}))), {3, 4, 5, 6, 8, 10});
  check_close(hd(cf::einsum("ij,jk,kl->il", A, B, mat({1, 0, 1, 1}, {2, 2}))), {122, 64, 293, 154});
  check_close(hd(cf::einsum("ij,ji->", A, B)), {58 + 154.});
  check_close(hd(cf::einsum(" i j , j k -> i k ", A, B)), kAB);
  std::vector<double> x2 = kA;
  for (double e : kA) x2.push_back(2 * e);
  auto X = mat(x2, {2, 2, 3});
  check_close(hd(cf::einsum("bij,jk->bik", X, B)), {58, 64, 139, 154, 116, 128, 278, 308});
  check_close(hd(cf::einsum("...ij,jk->...ik", X, B)), {58, 64, 139, 154, 116, 128, 278, 308});
  check_close(hd(cf::einsum("bij,bkj->bik", X, X)), {14, 32, 32, 77, 56, 128, 128, 308});
  auto ell = cf::einsum("...j,j", X, mat({1, 1, 1}, {3}));
  CHECK(ell.shape() == cf::Shape{2, 2});
  check_close(hd(ell), {6, 15, 12, 30});
  // a label of size 1 broadcasts (NumPy allows it)
  check_close(hd(cf::einsum("ij,jk->ik", mat({1, 2}, {2, 1}), B)), {27, 30, 54, 60});
  // repeated labels inside a product and a trace of a batch
  std::vector<double> mm = kM;
  for (double e : kM) mm.push_back(-e);
  check_close(hd(cf::einsum("bii->b", mat(mm, {2, 3, 3}))), {16, -16});
  check_close(hd(cf::einsum("iij->j", mat(std::vector<double>(12, 1.0), {2, 2, 3}))), {2, 2, 2});
  // integer and mixed dtypes
  CHECK(cf::einsum("ij,jk", A.astype(cf::i32), B.astype(cf::i32)).dtype() == cf::i32);
  CHECK(host<int32_t>(cf::einsum("ij,jk", A.astype(cf::i32), B.astype(cf::i32))) ==
        std::vector<int32_t>{58, 64, 139, 154});
  CHECK(cf::einsum("ij,jk", A.astype(cf::f32), B.astype(cf::f16)).dtype() == cf::f32);
}

TEST_CASE("einsum: a contracted label of length 1 in one operand broadcasts (NumPy's values)") {
  // Expected values from NumPy 2.4: np.einsum('bij,bjk->bik', a, b), np.einsum('ij,jk->ik', ...).
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<double> a(30), b(10);
  for (size_t i = 0; i < a.size(); ++i) a[i] = double(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = double(i % 4) + 1;
  auto A = cf::from_host(a, cf::Shape{2, 3, 5}), B = cf::from_host(b, cf::Shape{2, 1, 5});
  CHECK(hd(cf::einsum("bij,bjk->bik", A, B)) ==
        std::vector<double>{-5, -10, -15, -20, -5, -1, -2, -3, -4, -1, 3, 6, 9, 12, 3,
                            0, 0, 0, 0, 0, -6, -9, -12, -3, -6, 2, 3, 4, 1, 2});
  auto C = cf::from_host(std::vector<double>{1, 2, 3, 4}, cf::Shape{2, 2});
  auto D = cf::from_host(std::vector<double>{5, 6, 7}, cf::Shape{1, 3});
  CHECK(hd(cf::einsum("ij,jk->ik", C, D)) == std::vector<double>{15, 18, 21, 35, 42, 49});
  CHECK(hd(cf::einsum("jk,ij->ik", D, C)) == std::vector<double>{15, 18, 21, 35, 42, 49});
  auto E = cf::from_host(std::vector<int32_t>{1, 2, 3}, cf::Shape{3, 1});
  auto F = cf::from_host(std::vector<int32_t>{4, 5, 6}, cf::Shape{3, 1});
  CHECK(host<int32_t>(cf::einsum("ij,jk->ik", E, F)) == std::vector<int32_t>{15, 30, 45});  // j: 1 against 3
}

TEST_CASE("einsum raises NumPy's errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto A = mat(kA, {2, 3});
  CHECK_THROWS_WITH_AS(cf::einsum("ij,jk", A), doctest::Contains("fewer operands"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::einsum("ij", A, A), doctest::Contains("more operands"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::einsum("i->ii", A[0]), doctest::Contains("multiple times"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::einsum("ij->k", A), doctest::Contains("never appeared"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::einsum("i", A), doctest::Contains("no '...' ellipsis"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::einsum("ijk", A), doctest::Contains("too many subscripts"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::einsum("ii", A), doctest::Contains("don't match (2 != 3)"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::einsum("i1", A), doctest::Contains("invalid subscript '1'"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::einsum("i...,i...->i", A, A), doctest::Contains("output has more dimensions"),
                       cf::ValueError);
  CHECK_THROWS_AS(cf::einsum("ij,jk", A, A), cf::ValueError);  // j: 3 vs 2
}

TEST_CASE("the GEMM's host reference: alpha, bias and GELU epilogues") {
  namespace cd = cf::detail;
  cd::GemmSpec s;
  s.dtype = cf::f64;
  s.a.shape = {2, 3};
  s.b.shape = {3, 2};
  cd::gemm_shapes(s);
  s.alpha = 0.5;
  s.bias = true;
  auto ha = cd::ref::make_host_array(cf::f64, {2, 3});
  auto hb = cd::ref::make_host_array(cf::f64, {3, 2});
  auto hbias = cd::ref::make_host_array(cf::f64, {2, 2});  // the bias as the output-shaped broadcast input
  for (int i = 0; i < 6; ++i) {
    ha.data<double>()[i] = kA[i];
    hb.data<double>()[i] = kB[i];
  }
  const double bias[2] = {-40, -60};
  for (int i = 0; i < 4; ++i) hbias.data<double>()[i] = bias[i % 2];
  for (cd::GemmAct act : {cd::GemmAct::None, cd::GemmAct::Gelu}) {
    s.act = act;
    cd::GemmCall call(s);
    std::vector<cd::HostArray> out{cd::ref::make_host_array(cf::f64, {2, 2})};
    call.run_reference({&ha, &hb, &hbias}, out);
    for (int i = 0; i < 4; ++i) {
      double x = 0.5 * kAB[i] + bias[i % 2];
      if (act == cd::GemmAct::Gelu) x = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
      CHECK(out[0].data<double>()[i] == doctest::Approx(x).epsilon(1e-14));
    }
  }
  // the fused expression evaluates to the unfused one (reference backend)
  cf::BackendScope ref(cf::Backend::Reference);
  auto A = mat(kA, {2, 3}), B = mat(kB, {3, 2});
  auto y = cf::gelu(cf::matmul(A, B) * 0.01 + mat({-0.5, 0.25}, {2}));
  std::vector<double> want;
  for (int i = 0; i < 4; ++i) {
    const double x = kAB[i] * 0.01 + (i % 2 ? 0.25 : -0.5);
    want.push_back(0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))));
  }
  check_close(hd(y), want, 1e-14);
  check_close(hd(cf::relu(cf::matmul(A, B) + mat({-100, -60}, {2}))), {0, 4, 39, 94});
}
