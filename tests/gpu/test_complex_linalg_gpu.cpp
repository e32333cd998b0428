// tests/gpu/test_complex_linalg_gpu.cpp: complex64 / complex128 contractions and linalg on the
// device (cuBLAS's complex GEMM, cuSOLVER's C/Z routines) against the host reference on fresh
// random inputs: matmul over shapes and layouts (transposed, conjugated through op C, batched,
// broadcast, vectors, mixed real operands), einsum/dot/inner/vdot/tensordot; det, slogdet,
// inv, solve, cholesky and eigvalsh (unique: compared with the reference), eigh, qr and svd
// through their invariants (factors are unique up to phases), pinv, lstsq, matrix_rank and the
// norms; the launch counts of a complex GEMM (one library call, no kernel) and of conj(x) that
// cuBLAS cannot read as op C (one kernel first). Tolerances as the real tests/gpu ones.
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <complex>
#include <functional>

#include "complex_matrices.hpp"
#include "gpu_compare.hpp"

namespace {

using namespace complex_matrices;

cf::Array random_complex(cf::DType t, const cf::Shape& s, double scale = 1.0) {
  std::normal_distribution<double> nd(0.0, scale);
  CVec v(static_cast<size_t>(cf::numel(s)));
  for (auto& z : v) z = {nd(rng()), nd(rng())};
  cf::Array a = cf::from_host(v, s).astype(t);
  a.eval();
  return a;
}
CVec cvals(const cf::Array& a) { return a.astype(cf::c128).ravel().to_host<c128>(); }

// f(inputs) on the device and on the reference backend (inputs copied there): both results.
std::pair<CVec, CVec> dev_and_ref(const std::vector<cf::Array>& ins,
                                  const std::function<cf::Array(const std::vector<cf::Array>&)>& f,
                                  cf::DType* dtype = nullptr) {
  cf::Array dev = f(ins);
  dev.eval();
  CVec d = cvals(dev);
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<cf::Array> host_ins;
  for (const auto& a : ins) {
    std::vector<unsigned char> b(static_cast<size_t>(a.nbytes()));
    a.copy_to_host(b.data(), b.size());
    host_ins.push_back(cf::from_host(b.data(), a.dtype(), a.shape()));
  }
  cf::Array want = f(host_ins);
  CHECK(want.dtype() == dev.dtype());
  CHECK(want.shape() == dev.shape());
  if (dtype) *dtype = dev.dtype();
  return {d, cvals(want)};
}

// |device - reference| <= rel * (mag[i] or max |reference|) + atol element by element.
int64_t compare(const CVec& got, const CVec& want, const std::vector<double>& mag, double rel, double atol,
                const std::string& what) {
  if (got.size() != want.size()) {
    MESSAGE(what << ": sizes " << got.size() << " vs " << want.size());
    return 1;
  }
  double top = 0;
  for (const auto& z : want) top = std::max(top, std::abs(z));
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double m = mag.empty() ? top : mag[i];
    if (!(std::abs(got[i] - want[i]) <= rel * m + atol) && bad++ < 5)
      MESSAGE(what << ": [" << i << "] device " << got[i] << " reference " << want[i]);
  }
  return bad;
}

// A contraction f(a, b) against the reference, bounded by f over |a| and |b| (float64, reference).
void check_contraction(const std::vector<cf::Array>& ins, const std::function<cf::Array(const std::vector<cf::Array>&)>& f,
                       double rel, const std::string& what) {
  std::vector<double> mag;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    std::vector<cf::Array> abs_ins;
    for (const auto& a : ins) {
      std::vector<unsigned char> b(static_cast<size_t>(a.nbytes()));
      a.copy_to_host(b.data(), b.size());
      abs_ins.push_back(cf::abs(cf::from_host(b.data(), a.dtype(), a.shape())).astype(cf::f64));
    }
    // |f(|a|, |b|)|: f may negate (alpha -1), and a bound is a magnitude
    mag = cf::abs(f(abs_ins).astype(cf::f64)).ravel().to_host<double>();
  }
  auto [d, r] = dev_and_ref(ins, f);
  CHECK_MESSAGE(compare(d, r, mag, rel, 1e-300, what) == 0, what);
}

double gemm_rel(cf::DType t) { return t == cf::c64 ? 4e-5 : 2e-13; }
double lin_tol(cf::DType t, int64_t n) {
  return (t == cf::c64 ? 4e-5 : 2e-12) * static_cast<double>(std::max<int64_t>(n, 4));
}

uint64_t launches(const std::function<void()>& f) {
  cf::synchronize();
  const uint64_t before = cf::stats().kernels_launched;
  f();
  cf::synchronize();
  return cf::stats().kernels_launched - before;
}


cf::Array well_conditioned(cf::DType t, const cf::Shape& batch, int64_t n) {
  cf::Shape s = batch;
  s.push_back(n);
  s.push_back(n);
  cf::Array e = cf::eye(n, n, 0, t);
  cf::Array a = random_complex(t, s) + e * static_cast<double>(n);
  a.eval();
  return a;
}
cf::Array hermitian_pd(cf::DType t, const cf::Shape& batch, int64_t n) {
  cf::Array g = well_conditioned(t, batch, n);
  cf::Array h = cf::matmul(g, cf::conj(g).swapaxes(-1, -2));
  h.eval();
  return h;
}

const std::vector<cf::Shape> kBatches = {{}, {3}, {2, 2}};
const std::vector<int64_t> kSizes = {1, 5, 33, 100};

// f(dtype, batch, n, what, tol) over both complex dtypes, the batch shapes (the batched cuBLAS /
// cuSOLVER paths for small matrices, loops otherwise) and the matrix sizes.
void for_each_case(const std::function<void(cf::DType, const cf::Shape&, int64_t, const std::string&, double)>& f) {
  for (cf::DType t : {cf::c64, cf::c128})
    for (const auto& batch : kBatches)
      for (int64_t n : kSizes)
        f(t, batch, n, std::string(cf::name(t)) + " batch " + cf::to_string(batch) + " n " + std::to_string(n),
          lin_tol(t, n));
}

}  // namespace

TEST_CASE("complex matmul on cuBLAS: shapes, layouts, op C, batches, vectors, mixed operands") {
  using Ins = std::vector<cf::Array>;
  for (cf::DType t : {cf::c64, cf::c128})
    for (const auto& [M, K, N] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {7, 13, 5}, {64, 96, 32}, {130, 257, 65}}) {
      const std::string w = std::string(cf::name(t)) + " " + std::to_string(M) + "x" + std::to_string(K) + "x" +
                            std::to_string(N);
      const double rel = gemm_rel(t);
      auto a = random_complex(t, {M, K}), b = random_complex(t, {K, N});
      auto at = random_complex(t, {K, M}), bt = random_complex(t, {N, K});
      check_contraction({a, b}, [](const Ins& x) { return cf::matmul(x[0], x[1]); }, rel, "nn " + w);
      check_contraction({at, b}, [](const Ins& x) { return cf::matmul(x[0].T(), x[1]); }, rel, "tn " + w);
      check_contraction({a, bt}, [](const Ins& x) { return cf::matmul(x[0], x[1].T()); }, rel, "nt " + w);
      // conjugated transposes: op C on either side; conj of a plain operand: a kernel first
      check_contraction({a, bt}, [](const Ins& x) { return cf::matmul(x[0], cf::conj(x[1]).T()); }, rel, "nc " + w);
      check_contraction({at, b}, [](const Ins& x) { return cf::matmul(cf::conj(x[0].T()), x[1]); }, rel, "cn " + w);
      check_contraction({at, bt}, [](const Ins& x) { return cf::matmul(cf::conj(x[0]).T(), cf::conj(x[1]).T()); }, rel,
                        "cc " + w);
      check_contraction({a, b}, [](const Ins& x) { return cf::matmul(x[0], cf::conj(x[1])); }, rel, "conj plain " + w);
      check_contraction({a, b}, [](const Ins& x) { return cf::matmul(-x[0], x[1]); }, rel, "alpha -1 " + w);
      auto v = random_complex(t, {K});
      check_contraction({a, v}, [](const Ins& x) { return cf::matmul(x[0], x[1]); }, rel, "mv " + w);
      check_contraction({v, b}, [](const Ins& x) { return cf::matmul(x[0], x[1]); }, rel, "vm " + w);
      auto r = random_normal(t == cf::c64 ? cf::f32 : cf::f64, {M, K});
      check_contraction({r, b}, [](const Ins& x) { return cf::matmul(x[0], x[1]); }, rel, "real @ complex " + w);
      CHECK(launches([&] { cf::matmul(a, cf::conj(bt).T()).eval(); }) == 1);  // the GEMM, no kernel
      // conj(b) as stored: written by a kernel first, unless b is a row or a column (then its
      // memory is also b read through op T, which op C conjugates)
      CHECK(launches([&] { cf::matmul(a, cf::conj(b)).eval(); }) == (K == 1 || N == 1 ? 1u : 2u));
    }
  for (cf::DType t : {cf::c64, cf::c128}) {
    const double rel = gemm_rel(t);
    const std::string w = cf::name(t).data();
    auto a = random_complex(t, {4, 33, 20}), b = random_complex(t, {20, 17}), c = random_complex(t, {4, 17, 20});
    auto d = random_complex(t, {2, 1, 33, 20}), e = random_complex(t, {3, 20, 17});
    check_contraction({a, b}, [](const Ins& x) { return cf::matmul(x[0], x[1]); }, rel, "batched a " + w);
    check_contraction({a, c}, [](const Ins& x) { return cf::matmul(x[0], cf::conj(x[1]).swapaxes(-1, -2)); }, rel,
                      "batched op C " + w);
    check_contraction({d, e}, [](const Ins& x) { return cf::matmul(x[0], x[1]); }, rel, "broadcast batch " + w);
    check_contraction({a, b}, [](const Ins& x) { return cf::einsum("bij,jk->bik", x); }, rel, "einsum " + w);
    check_contraction({a, c}, [](const Ins& x) { return cf::einsum("bij,bkj->bik", x); }, rel, "einsum bt " + w);
    check_contraction({a, b}, [](const Ins& x) { return cf::tensordot(x[0], x[1], 1); }, rel, "tensordot " + w);
    check_contraction({a, b}, [](const Ins& x) { return cf::dot(x[0], x[1]); }, rel, "dot " + w);
    check_contraction({a, c}, [](const Ins& x) { return cf::inner(x[0], x[1]); }, rel, "inner " + w);
    auto u = random_complex(t, {5000}), v = random_complex(t, {5000});
    check_contraction({u, v}, [](const Ins& x) { return cf::vdot(x[0], x[1]); }, rel * 10, "vdot " + w);
    CHECK(launches([&] { cf::vdot(u, v).eval(); }) == 1);  // one reduction, the conjugate fused
  }
}

TEST_CASE("complex det, slogdet, inv, solve on cuSOLVER: batched and looped paths") {
  using Ins = std::vector<cf::Array>;
  for_each_case([&](cf::DType t, const cf::Shape& batch, int64_t n, const std::string& w, double tol) {
    auto a = well_conditioned(t, batch, n);
    auto [ld, lr] = dev_and_ref({a}, [](const Ins& x) { return cf::linalg::slogdet(x[0]).logabsdet; });
    CHECK_MESSAGE(compare(ld, lr, {}, tol, tol, "logabsdet " + w) == 0, w);
    auto [sd, sr] = dev_and_ref({a}, [](const Ins& x) { return cf::linalg::slogdet(x[0]).sign; });
    CHECK_MESSAGE(compare(sd, sr, std::vector<double>(sr.size(), 1.0), tol * 10, 0, "sign " + w) == 0, w);
    if (t == cf::c128 || n <= 5) {
      auto [dd, dr] = dev_and_ref({a}, [](const Ins& x) { return cf::linalg::det(x[0]); });
      std::vector<double> mag;
      for (const auto& z : dr) mag.push_back(std::abs(z));
      CHECK_MESSAGE(compare(dd, dr, mag, tol * 10, 0, "det " + w) == 0, w);
    }
    auto [id, ir] = dev_and_ref({a}, [](const Ins& x) { return cf::linalg::inv(x[0]); });
    CHECK_MESSAGE(compare(id, ir, {}, tol * 10, 0, "inv " + w) == 0, w);
    auto rhs = random_complex(t, {n, 3});
    auto [xd, xr] = dev_and_ref({a, rhs}, [](const Ins& x) { return cf::linalg::solve(x[0], x[1]); });
    CHECK_MESSAGE(compare(xd, xr, {}, tol * 10, 0, "solve " + w) == 0, w);
    auto rv = random_complex(t, {n});
    auto [vd, vr] = dev_and_ref({a, rv}, [](const Ins& x) { return cf::linalg::solve(x[0], x[1]); });
    CHECK_MESSAGE(compare(vd, vr, {}, tol * 10, 0, "solve vector " + w) == 0, w);
  });
  // A zero column: singular in any rounding (a row twice another was not on cuSOLVER, whose
  // complex pivot reciprocals left 6.7e-16 where LAPACK's division leaves 0)
  auto sing = cf::from_host(CVec{1, 0, 3, c128(0, 2), 0, 6, 1, 0, c128(1, 1)}, cf::Shape{3, 3});
  CHECK_THROWS_WITH_AS(cf::linalg::inv(sing).eval(), "Singular matrix", cf::ValueError);
  CHECK(std::abs(cvals(cf::linalg::det(sing))[0]) == 0.0);
}

TEST_CASE("complex cholesky, eigh, qr, svd on cuSOLVER: unique parts against the reference, invariants") {
  using Ins = std::vector<cf::Array>;
  for_each_case([&](cf::DType t, const cf::Shape& batch, int64_t n, const std::string& w, double tol) {
    const int64_t nb = cf::numel(batch);
    auto h = hermitian_pd(t, batch, n);
    auto [cd, cr] = dev_and_ref({h}, [](const Ins& x) { return cf::linalg::cholesky(x[0]); });
    CHECK_MESSAGE(compare(cd, cr, {}, tol * 10, 0, "cholesky " + w) == 0, w);
    cf::DType wt;
    auto [ed, er] = dev_and_ref({h}, [](const Ins& x) { return cf::linalg::eigvalsh(x[0]); }, &wt);
    CHECK(wt == cf::real_dtype(t));
    CHECK_MESSAGE(compare(ed, er, {}, tol * 10, 0, "eigvalsh " + w) == 0, w);
    for (char uplo : {'L', 'U'}) {
      auto eg = cf::linalg::eigh(h, uplo);
      CVec hv = cvals(h), V = cvals(eg.eigenvectors);
      const auto ev = eg.eigenvalues.astype(cf::f64).ravel().to_host<double>();
      for (int64_t b = 0; b < nb; ++b) {
        CVec av = mm(hv, V, n, n, n, b * n * n, b * n * n);
        double err = 0, scale = 0;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            err = std::max(err, std::abs(av[i * n + j] - V[b * n * n + i * n + j] * ev[b * n + j]));
            scale = std::max(scale, std::fabs(ev[b * n + j]));
          }
        CHECK_MESSAGE(err <= tol * 10 * scale, "eigh A V = V w " << uplo << " " << w);
        CHECK_MESSAGE(max_diff(mm(ht(V, n, n, b * n * n), V, n, n, n, 0, b * n * n), eye(n)) <= tol * 10,
                      "eigh V^H V " << w);
      }
    }
    for (const auto& [m, k] : std::vector<std::pair<int64_t, int64_t>>{{n + 3, n}, {n, n + 3}}) {
      cf::Shape s = batch;
      s.push_back(m);
      s.push_back(k);
      auto a = random_complex(t, s);
      CVec av = cvals(a);
      for (const char* mode : {"reduced", "complete"}) {
        auto [Q, R] = cf::linalg::qr(a, mode);
        const int64_t kq = Q.shape(-1);
        CVec q = cvals(Q), r = cvals(R);
        for (int64_t b = 0; b < nb; ++b) {
          CHECK_MESSAGE(max_diff(mm(q, r, m, kq, k, b * m * kq, b * kq * k), part(av, b * m * k, m * k)) <= tol * 10,
                        "Q R " << mode << " " << w);
          CHECK_MESSAGE(max_diff(mm(ht(q, m, kq, b * m * kq), q, kq, m, kq, 0, b * m * kq), eye(kq)) <= tol * 10,
                        "Q^H Q " << mode << " " << w);
          for (int64_t i = 0; i < kq; ++i)
            for (int64_t j = 0; j < std::min(i, k); ++j) CHECK(r[b * kq * k + i * k + j] == c128(0));
        }
      }
      auto [sd, sr] = dev_and_ref({a}, [](const Ins& x) { return cf::linalg::svdvals(x[0]); }, &wt);
      CHECK(wt == cf::real_dtype(t));
      CHECK_MESSAGE(compare(sd, sr, {}, tol * 10, tol * 10, "svdvals " + w) == 0, w);
      for (bool full : {true, false}) {
        auto d = cf::linalg::svd(a, full);
        const int64_t kk = std::min(m, k), ku = d.U.shape(-1), kv = d.Vh.shape(-2);
        CVec u = cvals(d.U), vh = cvals(d.Vh);
        const auto sg = d.S.astype(cf::f64).ravel().to_host<double>();
        for (int64_t b = 0; b < nb; ++b) {
          CVec us(static_cast<size_t>(m * kk));
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < kk; ++j) us[i * kk + j] = u[b * m * ku + i * ku + j] * sg[b * kk + j];
          CHECK_MESSAGE(max_diff(mm(us, vh, m, kk, k, 0, b * kv * k), part(av, b * m * k, m * k)) <= tol * 10 * n,
                        "U S Vh " << full << " " << w);
          CHECK_MESSAGE(max_diff(mm(ht(u, m, ku, b * m * ku), u, ku, m, ku, 0, b * m * ku), eye(ku)) <= tol * 10,
                        "U^H U " << full << " " << w);
          CHECK_MESSAGE(max_diff(mm(vh, ht(vh, kv, k, b * kv * k), kv, k, kv, b * kv * k), eye(kv)) <= tol * 10,
                        "Vh Vh^H " << full << " " << w);
        }
      }
    }
  });
  auto not_pd = cf::from_host(CVec{1, c128(0, 2), c128(0, -2), 1}, cf::Shape{2, 2});
  CHECK_THROWS_WITH_AS(cf::linalg::cholesky(not_pd).eval(), "Matrix is not positive definite", cf::ValueError);
}

TEST_CASE("complex pinv, lstsq, matrix_rank and norms against the reference") {
  using Ins = std::vector<cf::Array>;
  for (cf::DType t : {cf::c64, cf::c128}) {
    const std::string w = cf::name(t).data();
    const double tol = lin_tol(t, 40);
    auto a = random_complex(t, {2, 40, 25});
    auto [pd, pr] = dev_and_ref({a}, [](const Ins& x) { return cf::linalg::pinv(x[0]); });
    CHECK_MESSAGE(compare(pd, pr, {}, tol * 100, 0, "pinv " + w) == 0, w);
    auto a2 = random_complex(t, {40, 25}), b2 = random_complex(t, {40, 3});
    auto [xd, xr] = dev_and_ref({a2, b2}, [](const Ins& x) { return cf::linalg::lstsq(x[0], x[1]).x; });
    CHECK_MESSAGE(compare(xd, xr, {}, tol * 100, 0, "lstsq " + w) == 0, w);
    auto ls = cf::linalg::lstsq(a2, b2);
    CHECK(ls.rank == 25);
    CHECK(ls.residuals.dtype() == cf::real_dtype(t));
    auto low = cf::matmul(random_complex(t, {30, 4}), random_complex(t, {4, 20}));  // rank 4
    CHECK(cf::linalg::matrix_rank(low).item<int64_t>() == 4);
    for (double ord : {1.0, -1.0, 2.0, -2.0, double(INFINITY), -double(INFINITY)}) {
      auto [nd, nr] = dev_and_ref({a}, [ord](const Ins& x) { return cf::linalg::norm(x[0], ord, {1, 2}); });
      CHECK_MESSAGE(compare(nd, nr, {}, tol * 10, 0, "norm " + std::to_string(ord) + " " + w) == 0, w);
    }
    for (const char* ord : {"fro", "nuc"}) {
      auto [nd, nr] = dev_and_ref({a}, [ord](const Ins& x) { return cf::linalg::norm(x[0], ord, {-2, -1}); });
      CHECK_MESSAGE(compare(nd, nr, {}, tol * 10, 0, std::string("norm ") + ord + " " + w) == 0, w);
    }
  }
}

// Diagnosis (CUFUSE_DIAG_TIERED, CUFUSE_TIERED at its default): the complex norms ord 1 and
// inf came out wrong in a tiered run of the test above on the H200, and right under
// CUFUSE_TIERED=interpret and 0. Run after run, each plan's tiers and the values beside the
// reference's.
TEST_CASE("diagnose: complex norms 1 and inf run after run under tiering (CUFUSE_DIAG_TIERED)") {
  if (!std::getenv("CUFUSE_DIAG_TIERED")) return;
  using Ins = std::vector<cf::Array>;
  for (cf::DType t : {cf::c64, cf::c128}) {
    auto a = random_complex(t, {2, 40, 25});
    for (double ord : {1.0, double(INFINITY), -1.0}) {
      for (int run = 0; run < 4; ++run) {
        const cf::Stats s0 = cf::stats();
        auto [nd, nr] = dev_and_ref({a}, [ord](const Ins& x) { return cf::linalg::norm(x[0], ord, {1, 2}); });
        const cf::Stats s1 = cf::stats();
        const cf::Array n = cf::linalg::norm(a, ord, {1, 2});
        std::printf("%s ord %g run %d: dev (%.9g, %.9g) ref (%.9g, %.9g); interpreted launches %llu, swaps %llu\n%s",
                    cf::name(t).data(), ord, run, nd[0].real(), nd[1].real(), nr[0].real(), nr[1].real(),
                    (unsigned long long)(s1.interpreted_launches - s0.interpreted_launches),
                    (unsigned long long)(s1.tier_swaps - s0.tier_swaps), cf::plan_dump(std::vector<cf::Array>{n}, false).c_str());
        if (run == 1) std::this_thread::sleep_for(std::chrono::seconds(3));  // the background compiles land
      }
    }
  }
}
