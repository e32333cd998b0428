// tests/test_complex_linalg.cpp: complex64/complex128 contractions and linalg on the host
// reference backend (issue 33): matmul, einsum, dot, inner, tensordot and vdot against a
// complex host loop, NumPy's promotion of mixed real/complex operands; the plans (one cuBLAS
// complex GEMM and no kernel, conj of a transposed operand read as op C, vdot one reduction);
// every linalg function through its invariants (A inv(A) = I, L L^H = A, Q R = A with Q^H Q =
// I, U S Vh = A, A V = V diag(w), pinv's Moore-Penrose identity) and NumPy's result dtypes
// (real singular values and eigenvalues, slogdet's real logabsdet). NumPy's own values are
// tests/test_complex_linalg_oracle.cpp's.
#include <complex>
#include <random>

#include "complex_matrices.hpp"
#include "compile/compiler.hpp"
#include "library/blas_runtime.hpp"
#include "test_core_helpers.hpp"

namespace {

using namespace complex_matrices;
namespace cd = cf::detail;

CVec random_cvec(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d(0.0, 1.0);
  CVec v(n);
  for (auto& z : v) z = {d(g), d(g)};
  return v;
}
cf::Array carr(const CVec& v, const cf::Shape& s, cf::DType t = cf::c128) { return cf::from_host(v, s).astype(t); }
CVec hv(const cf::Array& a) { return a.astype(cf::c128).to_host<c128>(); }

// A well-conditioned complex matrix (n on the diagonal) and a Hermitian positive definite one.
CVec well(int64_t n, unsigned seed) {
  CVec a = random_cvec(static_cast<size_t>(n * n), seed);
  for (int64_t i = 0; i < n; ++i) a[i * n + i] += static_cast<double>(n);
  return a;
}
CVec hpd(int64_t n, unsigned seed) {
  CVec g = random_cvec(static_cast<size_t>(n * n), seed);
  CVec a = mm(g, ht(g, n, n), n, n, n);
  for (int64_t i = 0; i < n; ++i) a[i * n + i] += static_cast<double>(n);
  return a;
}

size_t library_groups(const std::shared_ptr<cd::Executable>& ex) {
  size_t n = 0;
  for (const auto& g : ex->plan.groups) n += g.kind == cd::GroupKind::Library;
  return n;
}
size_t kernel_groups(const std::shared_ptr<cd::Executable>& ex) { return ex->plan.groups.size() - library_groups(ex); }
std::string library_summary(const std::shared_ptr<cd::Executable>& ex) {
  std::string s;
  for (const auto& st : ex->steps)
    if (st.call) s += st.spec.summary + "\n";
  return s;
}

}  // namespace

TEST_CASE("complex matmul, einsum, dot, inner, tensordot and vdot against a complex host loop") {
  cf::BackendScope ref(cf::Backend::Reference);
  const CVec av = random_cvec(2 * 3 * 4, 1), bv = random_cvec(4 * 5, 2), cv = random_cvec(2 * 4 * 5, 3);
  for (cf::DType t : {cf::c64, cf::c128}) {
    INFO(cf::name(t));
    const double tol = t == cf::c64 ? 1e-5 : 1e-13;
    auto a = carr(av, {2, 3, 4}, t), b = carr(bv, {4, 5}, t), c = carr(cv, {2, 4, 5}, t);
    auto r = cf::matmul(a, b);
    CHECK(r.dtype() == t);
    CHECK(r.shape() == cf::Shape{2, 3, 5});
    CVec want;
    for (int64_t i = 0; i < 2; ++i) {
      CVec p = mm(av, bv, 3, 4, 5, i * 12, 0);
      want.insert(want.end(), p.begin(), p.end());
    }
    CHECK(max_diff(hv(r), want) <= tol * 10);
    CHECK(max_diff(hv(cf::einsum("bij,jk->bik", a, b)), want) <= tol * 10);
    CHECK(max_diff(hv(cf::tensordot(a, b, 1)), want) <= tol * 10);
    CHECK(max_diff(hv(cf::dot(a, b)), want) <= tol * 10);
    // batched against a batch of b's; transposed operands (a^T read through op T)
    CVec wb;
    for (int64_t i = 0; i < 2; ++i) {
      CVec p = mm(av, cv, 3, 4, 5, i * 12, i * 20);
      wb.insert(wb.end(), p.begin(), p.end());
    }
    CHECK(max_diff(hv(cf::matmul(a, c)), wb) <= tol * 10);
    auto at = carr(ht(part(av, 0, 12), 3, 4), {4, 3}, t);  // a[0]^H, so conj(at).T is a[0]
    CHECK(max_diff(hv(cf::matmul(cf::conj(at).T(), b)), part(want, 0, 15)) <= tol * 10);
    CHECK(max_diff(hv(cf::matmul(cf::conj(at.T()), b)), part(want, 0, 15)) <= tol * 10);
    // inner: sum over both last axes (no conjugation); vdot conjugates its first argument
    auto u = carr(part(av, 0, 4), {4}, t), v = carr(part(bv, 0, 4), {4}, t);
    c128 inner = 0, vdot = 0;
    for (int i = 0; i < 4; ++i) {
      inner += av[i] * bv[i];
      vdot += std::conj(av[i]) * bv[i];
    }
    CHECK(std::abs(hv(cf::inner(u, v))[0] - inner) <= tol * 10);
    CHECK(std::abs(hv(cf::matmul(u, v))[0] - inner) <= tol * 10);
    CHECK(std::abs(hv(cf::vdot(u, v))[0] - vdot) <= tol * 10);
    CHECK(std::abs(hv(cf::vdot(v, u))[0] - std::conj(vdot)) <= tol * 10);
    // launches: the GEMM alone (conj of a transposed operand is its op C); conj of a plain one
    // is a kernel first; vdot one reduction
    auto ct = carr(random_cvec(40, 5), {2, 5, 4}, t);
    ct.eval();
    cf::reset_stats();
    cf::matmul(a, cf::conj(ct).swapaxes(-1, -2)).eval();
    CHECK(cf::stats().kernels_launched == 1);
    cf::reset_stats();
    cf::matmul(a, cf::conj(b)).eval();
    CHECK(cf::stats().kernels_launched == 2);
    cf::reset_stats();
    cf::vdot(u, v).eval();
    CHECK(cf::stats().kernels_launched == 1);
  }
}

TEST_CASE("mixed real and complex operands promote by NumPy's table") {
  cf::BackendScope ref(cf::Backend::Reference);
  const CVec bv = random_cvec(12, 4);
  auto b64 = carr(bv, {3, 4}, cf::c64), b128 = carr(bv, {3, 4}, cf::c128);
  auto r = cf::arange(6).reshape({2, 3});
  CHECK(cf::matmul(r.astype(cf::f32), b64).dtype() == cf::c64);
  CHECK(cf::matmul(r.astype(cf::f64), b64).dtype() == cf::c128);
  CHECK(cf::matmul(r.astype(cf::i32), b64).dtype() == cf::c128);  // NumPy 2: int32 with complex64
  CHECK(cf::matmul(r.astype(cf::f32), b128).dtype() == cf::c128);
  CHECK(cf::vdot(b64, cf::arange(12).astype(cf::f64)).dtype() == cf::c128);
  CVec rv;
  for (int i = 0; i < 6; ++i) rv.push_back(static_cast<double>(i));
  CHECK(max_diff(hv(cf::matmul(r.astype(cf::f64), b128)), mm(rv, bv, 2, 3, 4)) <= 1e-13);
  CHECK(max_diff(hv(cf::matmul(r.astype(cf::f32), b64)), mm(rv, bv, 2, 3, 4)) <= 1e-5);
}

TEST_CASE("complex contractions plan as cuBLAS complex GEMMs, conj of a transposed operand as op C") {
  auto a = cf::placeholder(cf::c64, {64, 32});
  auto b = cf::placeholder(cf::c64, {32, 48});
  auto bt = cf::placeholder(cf::c64, {48, 32});
  auto ex = plan_of({cf::matmul(a, b)});
  CHECK(library_groups(ex) == 1);
  CHECK(kernel_groups(ex) == 0);
  CHECK(library_summary(ex).find("cuBLAS complex GEMM") != std::string::npos);
  // conj(bt).T: bt read through op T, so its conjugate is op C; no kernel
  auto exc = plan_of({cf::matmul(a, cf::conj(bt).T())});
  CHECK(library_groups(exc) == 1);
  CHECK(kernel_groups(exc) == 0);
  CHECK(library_summary(exc).find("b conjugated (op C)") != std::string::npos);
  auto exa = plan_of({cf::matmul(cf::conj(b.T()), b)});  // conj(b^T): a (48 x 32) read by op T
  CHECK(kernel_groups(exa) == 0);
  CHECK(library_summary(exa).find("a conjugated (op C)") != std::string::npos);
  // conj(b) as it is stored (op N): no conjugate-without-transpose in cuBLAS, one kernel first
  auto exn = plan_of({cf::matmul(a, cf::conj(b))});
  CHECK(library_groups(exn) == 1);
  CHECK(kernel_groups(exn) == 1);
  CHECK(library_summary(exn).find("conjugated") == std::string::npos);
  // einsum's GEMM pairs and tensordot go to the same GEMM
  auto exe = plan_of({cf::einsum("ij,jk->ik", a, b)});
  CHECK(library_groups(exe) == 1);
  CHECK(kernel_groups(exe) == 0);
  CHECK(library_groups(plan_of({cf::tensordot(a, b, 1)})) == 1);
  // a real operand is promoted by one cast kernel first
  auto exr = plan_of({cf::matmul(cf::placeholder(cf::f32, {64, 32}), b)});
  CHECK(library_groups(exr) == 1);
  CHECK(kernel_groups(exr) == 1);
  // vdot is one reduction (the conjugate fused), as real vector products are
  auto u = cf::placeholder(cf::c128, {1000}), v = cf::placeholder(cf::c128, {1000});
  auto exv = plan_of({cf::vdot(u, v)});
  CHECK(library_groups(exv) == 0);
  CHECK(kernel_groups(exv) == 1);
  CHECK(plan_of({cf::matmul(a, cf::conj(bt).T()), cf::vdot(u, v)}, true)->steps.size() == 2);  // compiles
}

TEST_CASE("complex linalg on the reference: inv, solve, det, slogdet through their identities") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (cf::DType t : {cf::c64, cf::c128}) {
    INFO(cf::name(t));
    const cf::DType rt = cf::real_dtype(t);
    const double tol = t == cf::c64 ? 2e-5 : 1e-12;
    const int64_t n = 4;
    CVec av = well(n, 7), a2 = well(n, 8);
    CVec stack = av;
    stack.insert(stack.end(), a2.begin(), a2.end());
    auto a = carr(stack, {2, n, n}, t);
    auto x = cf::linalg::inv(a);
    CHECK(x.dtype() == t);
    CVec xv = hv(x), sv = hv(a);
    for (int64_t b = 0; b < 2; ++b) CHECK(max_diff(mm(sv, xv, n, n, n, b * n * n, b * n * n), eye(n)) <= tol * 10);
    CVec rhs = random_cvec(static_cast<size_t>(n * 3), 9);
    auto s = cf::linalg::solve(a, carr(rhs, {n, 3}, t));
    CHECK(s.shape() == cf::Shape{2, n, 3});
    CVec sol = hv(s);
    for (int64_t b = 0; b < 2; ++b) CHECK(max_diff(mm(sv, sol, n, n, 3, b * n * n, b * n * 3), rhs) <= tol * 10 * n);
    // det: the product of an upper triangle's diagonal, and invariant under adding row multiples
    CVec tri = random_cvec(static_cast<size_t>(n * n), 10);
    c128 dprod = 1;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < i; ++j) tri[i * n + j] = 0;
      dprod *= tri[i * n + i];
    }
    CVec mixed = tri;  // rows below get multiples of row 0: same determinant, pivoting needed
    for (int64_t i = 1; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) mixed[i * n + j] += c128(1.5, -0.5 * static_cast<double>(i)) * tri[j];
    auto d = cf::linalg::det(carr(mixed, {n, n}, t));
    CHECK(d.dtype() == t);
    CHECK(std::abs(hv(d)[0] - dprod) <= tol * 100 * std::abs(dprod));
    auto sl = cf::linalg::slogdet(carr(mixed, {n, n}, t));
    CHECK(sl.sign.dtype() == t);
    CHECK(sl.logabsdet.dtype() == rt);
    const c128 sg = hv(sl.sign)[0];
    CHECK(std::abs(std::abs(sg) - 1) <= tol * 10);
    CHECK(std::abs(sg * std::exp(sl.logabsdet.astype(cf::f64).item<double>()) - dprod) <= tol * 100 * std::abs(dprod));
    // a singular complex matrix: det 0, slogdet (0, -inf), inv raises
    CVec sing = tri;
    for (int64_t j = 0; j < n; ++j) sing[3 * n + j] = c128(0, 2) * sing[j];
    CHECK(std::abs(hv(cf::linalg::det(carr(sing, {n, n}, t)))[0]) <= tol);
    CHECK_THROWS_AS(cf::linalg::inv(carr(sing, {n, n}, t)).eval(), cf::ValueError);
    // mixed real/complex solve promotes
    CHECK(cf::linalg::solve(cf::eye(n, n, 0, cf::f64), carr(rhs, {n, 3}, t)).dtype() == cf::c128);
  }
}

TEST_CASE("complex cholesky, qr, svd, eigh: invariants and NumPy's dtypes") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (cf::DType t : {cf::c64, cf::c128}) {
    INFO(cf::name(t));
    const cf::DType rt = cf::real_dtype(t);
    const double tol = t == cf::c64 ? 2e-5 : 1e-12;
    const int64_t n = 5;
    CVec hv5 = hpd(n, 11);
    auto h = carr(hv5, {n, n}, t);
    auto L = cf::linalg::cholesky(h);
    CHECK(L.dtype() == t);
    CVec l = hv(L);
    CHECK(max_diff(mm(l, ht(l, n, n), n, n, n), hv(h)) <= tol * 10 * n);
    for (int64_t i = 0; i < n; ++i) {
      CHECK(l[i * n + i].real() > 0);
      CHECK(l[i * n + i].imag() == 0);
      for (int64_t j = i + 1; j < n; ++j) CHECK(l[i * n + j] == c128(0));
    }
    CVec u = hv(cf::linalg::cholesky(h, true));
    CHECK(max_diff(u, ht(l, n, n)) <= tol);
    // eigh: real ascending eigenvalues, A V = V diag(w), V unitary; eigvalsh the same values
    auto eg = cf::linalg::eigh(h);
    CHECK(eg.eigenvalues.dtype() == rt);
    CHECK(eg.eigenvectors.dtype() == t);
    const auto w = eg.eigenvalues.astype(cf::f64).to_host<double>();
    CVec V = hv(eg.eigenvectors), hs = hv(h);
    CVec av = mm(hs, V, n, n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) CHECK(std::abs(av[i * n + j] - V[i * n + j] * w[j]) <= tol * 10 * w.back());
    for (int64_t j = 1; j < n; ++j) CHECK(w[j - 1] <= w[j]);
    CHECK(max_diff(mm(ht(V, n, n), V, n, n, n), eye(n)) <= tol * 10);
    const auto wv = cf::linalg::eigvalsh(h, 'U').astype(cf::f64).to_host<double>();
    for (int64_t j = 0; j < n; ++j) CHECK(std::fabs(wv[j] - w[j]) <= tol * 10 * w.back());
    // eigh reads one triangle: garbage in the other changes nothing
    CVec lower_only = hs;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) lower_only[i * n + j] = c128(99, -7);
    const auto wl = cf::linalg::eigvalsh(carr(lower_only, {n, n}, t)).astype(cf::f64).to_host<double>();
    for (int64_t j = 0; j < n; ++j) CHECK(std::fabs(wl[j] - w[j]) <= tol * 10 * w.back());
    // qr and svd of tall and wide matrices
    for (const auto& [m, k] : std::vector<std::pair<int64_t, int64_t>>{{6, 4}, {3, 5}}) {
      CAPTURE(m);
      CVec a = random_cvec(static_cast<size_t>(m * k), 12 + static_cast<unsigned>(m));
      auto A = carr(a, {m, k}, t);
      CVec as = hv(A);
      for (const char* mode : {"reduced", "complete"}) {
        auto [Q, R] = cf::linalg::qr(A, mode);
        CHECK(Q.dtype() == t);
        const int64_t kq = Q.shape(-1);
        CVec q = hv(Q), r = hv(R);
        CHECK(max_diff(mm(q, r, m, kq, k), as) <= tol * 10);
        CHECK(max_diff(mm(ht(q, m, kq), q, kq, m, kq), eye(kq)) <= tol * 10);
        for (int64_t i = 0; i < kq; ++i)
          for (int64_t j = 0; j < std::min(i, k); ++j) CHECK(r[i * k + j] == c128(0));
      }
      for (bool full : {true, false}) {
        auto d = cf::linalg::svd(A, full);
        CHECK(d.S.dtype() == rt);
        CHECK(d.U.dtype() == t);
        const int64_t kk = std::min(m, k), ku = d.U.shape(-1), kv = d.Vh.shape(-2);
        CVec uu = hv(d.U), vh = hv(d.Vh);
        const auto sg = d.S.astype(cf::f64).to_host<double>();
        CVec us(static_cast<size_t>(m * kk));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < kk; ++j) us[i * kk + j] = uu[i * ku + j] * sg[j];
        CHECK(max_diff(mm(us, vh, m, kk, k), as) <= tol * 10 * n);
        CHECK(max_diff(mm(ht(uu, m, ku), uu, ku, m, ku), eye(ku)) <= tol * 10);
        CHECK(max_diff(mm(vh, ht(vh, kv, k), kv, k, kv), eye(kv)) <= tol * 10);
        for (int64_t j = 1; j < kk; ++j) CHECK(sg[j - 1] >= sg[j]);
      }
      CHECK(cf::linalg::svdvals(A).dtype() == rt);
      // pinv: A pinv(A) A = A; lstsq's x = pinv(A) b
      auto P = cf::linalg::pinv(A);
      CHECK(P.dtype() == t);
      CHECK(P.shape() == cf::Shape{k, m});
      CVec p = hv(P);
      CHECK(max_diff(mm(mm(as, p, m, k, m), as, m, m, k), as) <= tol * 100);
      CVec bb = random_cvec(static_cast<size_t>(m * 2), 30);
      auto ls = cf::linalg::lstsq(A, carr(bb, {m, 2}, t));
      CHECK(ls.x.dtype() == t);
      CHECK(ls.s.dtype() == rt);
      CHECK(ls.rank == std::min(m, k));
      CHECK(max_diff(hv(ls.x), mm(p, hv(carr(bb, {m, 2}, t)), k, m, 2)) <= tol * 100);
      if (m > k) {
        CHECK(ls.residuals.dtype() == rt);
        CHECK(ls.residuals.shape() == cf::Shape{2});
      }
    }
  }
  auto not_pd = carr(CVec{1, c128(0, 2), c128(0, -2), 1}, {2, 2});
  CHECK_THROWS_WITH_AS(cf::linalg::cholesky(not_pd).eval(), "Matrix is not positive definite", cf::ValueError);
}

TEST_CASE("complex norms and matrix_rank") {
  cf::BackendScope ref(cf::Backend::Reference);
  CVec v = random_cvec(12, 40);
  auto a = carr(v, {3, 4}, cf::c128);
  double fro = 0, l1 = 0;
  for (const auto& z : v) {
    fro += std::norm(z);
    l1 += std::abs(z);
  }
  fro = std::sqrt(fro);
  auto nf = cf::linalg::norm(a, "fro");
  CHECK(nf.dtype() == cf::f64);
  CHECK(std::fabs(nf.item<double>() - fro) <= 1e-12 * fro);
  CHECK(std::fabs(cf::linalg::norm(a.ravel()).item<double>() - fro) <= 1e-12 * fro);
  CHECK(std::fabs(cf::linalg::norm(a.ravel(), 1.0).item<double>() - l1) <= 1e-12 * l1);
  CHECK(cf::linalg::norm(a.astype(cf::c64), "fro").dtype() == cf::f32);
  // the 2-norm is the largest singular value; nuc their sum
  const auto s = cf::linalg::svdvals(a).to_host<double>();
  CHECK(std::fabs(cf::linalg::norm(a, 2.0, {0, 1}).item<double>() - s[0]) <= 1e-12 * s[0]);
  CHECK(std::fabs(cf::linalg::norm(a, "nuc").item<double>() - (s[0] + s[1] + s[2])) <= 1e-12 * s[0]);
  // rank of a complex product of rank 2
  auto low = cf::matmul(carr(random_cvec(10, 41), {5, 2}), carr(random_cvec(8, 42), {2, 4}));
  CHECK(cf::linalg::matrix_rank(low).item<int64_t>() == 2);
}

TEST_CASE("inv's permuted-identity kernel compiles with NVRTC for complex64 and complex128") {
  for (cf::DType t : {cf::c64, cf::c128}) {
    std::string name;
    const std::string src = cf::detail::permuted_identity_source(t, name);
    auto k = cf::detail::compile_kernel(src, name, 90);
    CHECK(k->cubin.size() > 0);
    CHECK(name.find(t == cf::c64 ? "c64" : "c128") != std::string::npos);
    CHECK(src.find("out[2 * (r + ") != std::string::npos);  // the ones go to the real parts
  }
}
