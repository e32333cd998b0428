// tests/gpu/test_library_gpu.cpp: the library nodes on the device against the float64 host
// references, on fresh random inputs: matmul over every dtype (TF32 off and on), layout
// (transposed, strided, batched, broadcast), the cuBLASLt epilogues, einsum and the other
// contractions, integer matmul; every cufuse::linalg function over float32/float64 and batch
// shapes (batched cuSOLVER/cuBLAS paths for small matrices, loops for larger ones), compared
// through invariants where factors are unique only up to signs; kernel counts.
#include <array>
#include <cmath>
#include <functional>

#include "gpu_compare.hpp"
#include "cufuse/random.hpp"

namespace {

using Vec = std::vector<double>;

// The reference's values (read first: evaluating on the device realizes the node) and the device's.
// x is evaluated as it is first (the root of its own plan, so a GEMM epilogue computes it
// where one can), then widened: widening it lazily would make the cast the root, and the
// planner would put the activation in the cast's kernel instead of the GEMM's epilogue.
Vec dev(const cf::Array& x) {
  cf::Array d = x;
  d.eval();
  return (d.dtype() == cf::f64 ? d : d.astype(cf::f64)).to_host<double>();
}
std::pair<Vec, Vec> ref_and_dev(const cf::Array& x) {
  Vec r = host_values(cf::detail::reference_evaluate(x.node()));
  return {r, dev(x)};
}
Vec ref_only(const cf::Array& x) { return host_values(cf::detail::reference_evaluate(x.node())); }

// |got - want| <= rel * mag + abs_tol element by element (mag: the magnitudes summed).
int64_t compare(const Vec& got, const Vec& want, const Vec& mag, double rel, double abs_tol, const std::string& what) {
  if (got.size() != want.size()) {
    MESSAGE(what << ": sizes " << got.size() << " vs " << want.size());
    return 1;
  }
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double m = mag.empty() ? std::fabs(want[i]) : mag[i];
    const bool ok = std::fabs(got[i] - want[i]) <= rel * m + abs_tol;
    if (!ok && bad++ < 5) MESSAGE(what << ": [" << i << "] device " << got[i] << " reference " << want[i]);
  }
  return bad;
}

double gemm_rel(cf::DType t, bool tf32) {
  switch (t) {
    case cf::DType::Float64: return 1e-13;
    case cf::DType::Float32: return tf32 ? 4e-3 : 2e-5;
    case cf::DType::Float16: return 2e-3;
    default: return 1.6e-2;  // bfloat16
  }
}

// Checks a contraction-like expression against the reference, with a bound relative to the
// same expression over |a| and |b| (evaluated on the reference only).
void check_gemm(const cf::Array& y, const cf::Array& mag_expr, double rel, const std::string& what) {
  Vec mag = ref_only(mag_expr.astype(cf::f64));
  auto [r, d] = ref_and_dev(y);
  CHECK_MESSAGE(compare(d, r, mag, rel, 1e-300, what) == 0, what);
}

// Host matrix helpers (row-major).
Vec mm(const Vec& a, const Vec& b, int64_t r, int64_t k, int64_t c, int64_t oa = 0, int64_t ob = 0) {
  Vec o(static_cast<size_t>(r * c), 0.0);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t l = 0; l < k; ++l)
      for (int64_t j = 0; j < c; ++j) o[i * c + j] += a[oa + i * k + l] * b[ob + l * c + j];
  return o;
}
Vec tr(const Vec& a, int64_t r, int64_t c, int64_t off = 0) {
  Vec o(static_cast<size_t>(r * c));
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) o[j * r + i] = a[off + i * c + j];
  return o;
}
double max_abs_diff(const Vec& a, const Vec& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return a.size() == b.size() ? m : INFINITY;
}
Vec eye(int64_t n) {
  Vec o(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) o[i * n + i] = 1;
  return o;
}

uint64_t launches(const std::function<void()>& f) {
  cf::synchronize();
  const uint64_t before = cf::stats().kernels_launched;
  f();
  cf::synchronize();
  return cf::stats().kernels_launched - before;
}

}  // namespace

TEST_CASE("matmul on cuBLASLt: every float dtype, shape and layout") {
  const cf::DType types[] = {cf::f64, cf::f32, cf::f16, cf::bf16};
  const std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1}, {7, 13, 5}, {64, 96, 32}, {130, 257, 65}, {1, 300, 40}};
  for (cf::DType t : types)
    for (const auto& [M, K, N] : shapes) {
      const std::string w = std::string(cf::name(t)) + " " + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N);
      auto a = random_normal(t, {M, K}), b = random_normal(t, {K, N});
      auto at = random_normal(t, {K, M}), bt = random_normal(t, {N, K});
      const double rel = gemm_rel(t, false);
      check_gemm(cf::matmul(a, b), cf::matmul(cf::abs(a).astype(cf::f64), cf::abs(b).astype(cf::f64)), rel, "nn " + w);
      check_gemm(cf::matmul(at.T(), b), cf::matmul(cf::abs(at.T()).astype(cf::f64), cf::abs(b).astype(cf::f64)), rel, "tn " + w);
      check_gemm(cf::matmul(a, bt.T()), cf::matmul(cf::abs(a).astype(cf::f64), cf::abs(bt.T()).astype(cf::f64)), rel, "nt " + w);
      check_gemm(cf::matmul(at.T(), bt.T()),
                 cf::matmul(cf::abs(at.T()).astype(cf::f64), cf::abs(bt.T()).astype(cf::f64)), rel, "tt " + w);
      // alpha folded from a scalar factor; a row-sliced operand (ld > cols); vectors
      check_gemm(cf::matmul(a * 0.5, b), cf::matmul(cf::abs(a).astype(cf::f64) * 0.5, cf::abs(b).astype(cf::f64)), rel,
                 "alpha " + w);
      auto tall = random_normal(t, {2 * M, K});
      auto rows = tall[{cf::slice(cf::none, cf::none, 2), cf::_}];
      check_gemm(cf::matmul(rows, b), cf::matmul(cf::abs(rows).astype(cf::f64), cf::abs(b).astype(cf::f64)), rel, "ld " + w);
      auto v = random_normal(t, {K});
      check_gemm(cf::matmul(a, v), cf::matmul(cf::abs(a).astype(cf::f64), cf::abs(v).astype(cf::f64)), rel, "mv " + w);
      check_gemm(cf::matmul(v, b), cf::matmul(cf::abs(v).astype(cf::f64), cf::abs(b).astype(cf::f64)), rel, "vm " + w);
    }
}

TEST_CASE("batched matmul: batch strides, broadcast batches, transposed batches") {
  for (cf::DType t : {cf::f32, cf::f64, cf::f16}) {
    const double rel = gemm_rel(t, false);
    const std::string w = cf::name(t).data();
    auto a = random_normal(t, {4, 33, 20}), b = random_normal(t, {20, 17}), c = random_normal(t, {4, 17, 20}), d = random_normal(t, {4, 20, 17});
    auto A = [](const cf::Array& x) { return cf::abs(x).astype(cf::f64); };
    check_gemm(cf::matmul(a, b), cf::matmul(A(a), A(b)), rel, "batch x matrix " + w);
    check_gemm(cf::matmul(a, d), cf::matmul(A(a), A(d)), rel, "bmm " + w);
    check_gemm(cf::matmul(a, c.transpose({0, 2, 1})), cf::matmul(A(a), A(c.transpose({0, 2, 1}))), rel, "bmm nt " + w);
    auto tb = random_normal(t, {33, 4, 20});  // batch stride 20, ld 80
    check_gemm(cf::matmul(tb.transpose({1, 0, 2}), b), cf::matmul(A(tb.transpose({1, 0, 2})), A(b)), rel, "strided batch " + w);
    auto x = random_normal(t, {3, 1, 9, 6}), y = random_normal(t, {4, 6, 5});
    check_gemm(cf::matmul(x, y), cf::matmul(A(x), A(y)), rel, "partial broadcast " + w);
    check_gemm(cf::matmul(cf::zeros({2, 3, 0}, t), cf::zeros({0, 4}, t)), cf::zeros({2, 3, 4}), rel, "k = 0 " + w);
  }
}

TEST_CASE("TF32: off by default (full float32 accuracy), on in a scope") {
  auto a = random_normal(cf::f32, {256, 512}), b = random_normal(cf::f32, {512, 128});
  auto mag = cf::matmul(cf::abs(a).astype(cf::f64), cf::abs(b).astype(cf::f64));
  check_gemm(cf::matmul(a, b), mag, 2e-5, "TF32 off");
  cf::Array on;
  {
    cf::TF32Scope s(true);
    on = cf::matmul(a, b);
  }
  check_gemm(on, mag, 4e-3, "TF32 on");
}

namespace {

// a @ wt.T followed by each epilogue: name, a maker of the expression, and its launches
// (cuBLASLt fuses a bias and a GELU; a ReLU is the GEMM and one kernel, gemm_call.hpp).
struct EpilogueCase {
  std::string name;
  std::function<cf::Array()> make;
  int launches;
};
std::vector<EpilogueCase> epilogue_cases(const cf::Array& a, const cf::Array& wt, const cf::Array& bias) {
  auto mm = [=] { return cf::matmul(a, wt.T()); };
  return {{"bias", [=] { return mm() + bias; }, 1},
          {"relu+bias", [=] { return cf::relu(mm() + bias); }, 2},
          {"gelu+bias", [=] { return cf::gelu(mm() + bias); }, 1},
          {"relu", [=] { return cf::relu(mm()); }, 2},
          {"gelu", [=] { return cf::gelu(mm()); }, 1}};
}

}  // namespace

TEST_CASE("epilogues: bias and GELU fused into the GEMM (one launch), ReLU one kernel after it") {
  for (cf::DType t : {cf::f32, cf::f16, cf::bf16}) {
    const double rel = gemm_rel(t, false) * 2;
    const std::string w = cf::name(t).data();
    auto a = random_normal(t, {96, 8}), wt = random_normal(t, {72, 8}), bias = random_normal(t, {72});
    auto mag = cf::matmul(cf::abs(a).astype(cf::f64), cf::abs(wt.T()).astype(cf::f64)) + cf::abs(bias).astype(cf::f64);
    const auto cases = epilogue_cases(a, wt, bias);
    for (const auto& [name, make, n] : cases) {
      check_gemm(make(), mag, rel, name + " " + w);
      CHECK_MESSAGE(launches([&] { make().eval(); }) == n, name << " " << w);
    }
    auto ab = random_normal(t, {3, 40, 8});
    check_gemm(cf::relu(cf::matmul(ab, wt.T()) + bias),
               cf::matmul(cf::abs(ab).astype(cf::f64), cf::abs(wt.T()).astype(cf::f64)) + cf::abs(bias).astype(cf::f64),
               rel, "batched relu+bias " + w);
  }
}

TEST_CASE("epilogues fused into the GEMM keep NumPy's NaN and infinity: maximum(nan, 0) is nan") {
  for (cf::DType t : {cf::f32, cf::f16, cf::bf16}) {
    const double rel = gemm_rel(t, false) * 2;
    const std::string w = cf::name(t).data();
    std::vector<double> av(static_cast<size_t>(16 * 8));
    std::mt19937 g(7);
    std::normal_distribution<double> nd;
    for (auto& x : av) x = nd(g);
    for (int k = 0; k < 8; ++k) av[static_cast<size_t>(k)] = std::nan("");  // row 0: NaN
    av[8] = INFINITY;                                                        // row 1: +inf in one column
    av[16 + 3] = -INFINITY;                                                  // row 2: -inf
    auto a = cf::from_host(av, cf::Shape{16, 8}).astype(t);
    auto wt = random_normal(t, {24, 8}), bias = random_normal(t, {24});
    a.eval();
    auto mag = cf::matmul(cf::abs(a).astype(cf::f64), cf::abs(wt.T()).astype(cf::f64)) + cf::abs(bias).astype(cf::f64);
    Vec m = ref_only(mag);
    const auto cases = epilogue_cases(a, wt, bias);
    for (const auto& [name, make, n] : cases) {
      auto [r, d] = ref_and_dev(make());
      int64_t bad = 0;
      for (size_t i = 0; i < r.size(); ++i) {
        bool ok;
        if (std::isnan(r[i])) ok = std::isnan(d[i]);
        else if (std::isinf(r[i])) ok = d[i] == r[i];
        else ok = std::isfinite(m[i]) ? std::fabs(d[i] - r[i]) <= rel * m[i] + 1e-30 : !std::isnan(d[i]);
        if (!ok && bad++ < 4) MESSAGE(name << " " << w << ": [" << i << "] device " << d[i] << " reference " << r[i]);
      }
      CHECK_MESSAGE(bad == 0, name << " " << w);
      CHECK_MESSAGE(std::isnan(r[0]), name << " " << w);  // NumPy's: NaN through every epilogue
    }
  }
}

// Found by the fuzzer (seed 647317100101, relu(v2 @ v6) with K = 1): cuBLASLt's RELU
// epilogue turned the NaN of 0 * inf into 0 in float32 at K = 1 and in float16 at every K
// (H100, CUDA 13.0). NaN made inside the GEMM (0 * inf, inf - inf) and NaN read from the
// inputs must come out of relu and gelu as NaN, at every K, in every float dtype.
TEST_CASE("relu and gelu after a GEMM keep the NaN the GEMM makes (0 * inf, inf - inf) at any K") {
  for (cf::DType t : {cf::f32, cf::f16, cf::bf16}) {
    for (int K : {1, 2, 8, 64}) {
      CAPTURE(cf::name(t));
      CAPTURE(K);
      std::vector<double> av(static_cast<size_t>(40 * K), 0.5), bv(static_cast<size_t>(K * 3), 1.0);
      av[0] = INFINITY;                       // row 0 x column 2 (b[0, 2] = 0): inf * 0
      av[static_cast<size_t>(K)] = NAN;       // row 1: a NaN input
      av[static_cast<size_t>(2 * K)] = -INFINITY;  // row 2: -inf, and with K > 1 ...
      if (K > 1) av[static_cast<size_t>(2 * K + 1)] = INFINITY;  // ... inf - inf
      bv[2] = 0;
      auto a = cf::from_host(av, cf::Shape{40, K}).astype(t).eval();
      auto b = cf::from_host(bv, cf::Shape{K, 3}).astype(t).eval();
      for (int act = 0; act < 4; ++act) {
        CAPTURE(act);
        cf::Array mm = cf::matmul(act < 2 ? a : -a, b);
        cf::Array y = act % 2 == 0 ? cf::relu(mm) : cf::gelu(mm);
        auto [r, d] = ref_and_dev(y);
        int64_t bad = 0;
        for (size_t i = 0; i < r.size(); ++i) {
          const bool ok = std::isnan(r[i]) ? std::isnan(d[i]) : std::isinf(r[i]) ? d[i] == r[i] : !std::isnan(d[i]);
          if (!ok && bad++ < 4) MESSAGE("[" << i << "] device " << d[i] << " reference " << r[i]);
        }
        CHECK(bad == 0);
        CHECK(std::isnan(r[2]));  // 0 * inf
        CHECK(std::isnan(r[3]));  // the NaN row
      }
    }
  }
}

TEST_CASE("einsum, dot, vdot, inner, outer, tensordot, trace, diagonal") {
  auto A = [](const cf::Array& x) { return cf::abs(x).astype(cf::f64); };
  for (cf::DType t : {cf::f32, cf::f64, cf::f16}) {
    const double rel = gemm_rel(t, false) * 2;
    const std::string w = cf::name(t).data();
    auto a = random_normal(t, {300, 130}), b = random_normal(t, {300, 130}), s = random_normal(t, {90, 90});
    check_gemm(cf::einsum("ij,ij->i", a, b), cf::einsum("ij,ij->i", A(a), A(b)), rel, "ij,ij->i " + w);
    CHECK(launches([&] { cf::einsum("ij,ij->i", a, b).eval(); }) == 1);
    check_gemm(cf::einsum("ij->j", a), cf::einsum("ij->j", A(a)), rel, "ij->j " + w);
    check_gemm(cf::einsum("ii->i", s), A(cf::einsum("ii->i", s)), 0, "ii->i " + w);
    check_gemm(cf::einsum("ii", s), cf::einsum("ii", A(s)), rel, "trace " + w);
    check_gemm(cf::einsum("ij,kj->ik", a, b), cf::einsum("ij,kj->ik", A(a), A(b)), rel, "ij,kj->ik " + w);
    auto x = random_normal(t, {5, 12, 7}), y = random_normal(t, {5, 7, 9}), z = random_normal(t, {9, 4});
    check_gemm(cf::einsum("bij,bjk->bik", x, y), cf::einsum("bij,bjk->bik", A(x), A(y)), rel, "bmm " + w);
    check_gemm(cf::einsum("bij,bjk,kl->bli", x, y, z), cf::einsum("bij,bjk,kl->bli", A(x), A(y), A(z)), rel * 4,
               "three operands " + w);
    check_gemm(cf::einsum("...ij,...jk", x, y), cf::einsum("...ij,...jk", A(x), A(y)), rel, "ellipsis " + w);
    check_gemm(cf::dot(x, y[0]), cf::dot(A(x), A(y[0])), rel, "dot N-D " + w);
    check_gemm(cf::tensordot(x, y, cf::Axes{0, 2}, cf::Axes{0, 1}), cf::tensordot(A(x), A(y), cf::Axes{0, 2}, cf::Axes{0, 1}),
               rel, "tensordot " + w);
    check_gemm(cf::inner(a, b), cf::inner(A(a), A(b)), rel, "inner " + w);
    check_gemm(cf::vdot(a, b), cf::vdot(A(a), A(b)), rel * 4, "vdot " + w);
    check_gemm(cf::outer(a[0], b[1]), cf::outer(A(a[0]), A(b[1])), rel, "outer " + w);
    check_gemm(cf::trace(s, 3), cf::trace(A(s), 3), rel, "trace offset " + w);
    check_gemm(cf::diagonal(cf::matmul(s, s), -2), cf::diagonal(cf::matmul(A(s), A(s)), -2), rel, "diag of GEMM " + w);
  }
}

TEST_CASE("integer and bool matmul match the reference exactly") {
  for (cf::DType t : {cf::i32, cf::i64, cf::i8, cf::u8, cf::bool_}) {
    auto a = random_array(t, {3, 37, 29}, 2), b = random_array(t, {29, 41}, 2);
    CHECK(check_against_reference(cf::matmul(a, b), 0, std::string("int matmul ") + std::string(cf::name(t))) == 0);
    CHECK(check_against_reference(cf::matmul(a[0][0], b), 0, "int vm") == 0);
    CHECK(launches([&] { cf::matmul(a, b).eval(); }) == 1);
  }
}

TEST_CASE("seed 000's distance matrix: GEMM plus two kernels, matching the reference") {
  // p and q of one shape as in seed 000 (two row-sum reductions of one iteration space: one kernel)
  auto p = random_normal(cf::f32, {500, 784}), q = random_normal(cf::f32, {500, 784});
  auto dist = [&](const cf::Array& pp, const cf::Array& qq) {
    return cf::sqrt(cf::maximum(cf::sum(qq * qq, 1)[{cf::_, cf::newaxis}] - 2 * cf::matmul(qq, pp.T()) +
                                    cf::sum(pp * pp, 1)[{cf::newaxis, cf::_}], 0));
  };
  auto [r, d] = ref_and_dev(dist(p, q));
  // The squared distance (~1568) cancels down to the distance: bound it through the norms.
  CHECK(compare(d, r, {}, 1e-4, 2e-2, "distance") == 0);
  CHECK(launches([&] { dist(p, q).eval(); }) == 3);
}

// ------------------------------------------------------------------ linear algebra
namespace {

// A well-conditioned (n x n) batch: random + n on the diagonal.
cf::Array well_conditioned(cf::DType t, const cf::Shape& batch, int64_t n) {
  cf::Shape s = batch;
  s.push_back(n);
  s.push_back(n);
  cf::Array e = cf::equal(cf::arange(n).reshape({n, 1}), cf::arange(n).reshape({1, n})).astype(t);
  cf::Array a = random_normal(t, s) + e * static_cast<double>(n);
  a.eval();
  return a;
}
double lin_tol(cf::DType t, int64_t n) { return (t == cf::f32 ? 2e-5 : 1e-12) * static_cast<double>(std::max<int64_t>(n, 4)); }

const std::vector<cf::Shape> kBatches = {{}, {3}, {2, 2}};
const std::vector<int64_t> kSizes = {1, 5, 33, 100};

}  // namespace

TEST_CASE("det, slogdet, inv, solve: float32/float64, batched and looped paths") {
  for (cf::DType t : {cf::f32, cf::f64})
    for (const auto& batch : kBatches)
      for (int64_t n : kSizes) {
        const std::string w = std::string(cf::name(t)) + " batch " + cf::to_string(batch) + " n " + std::to_string(n);
        const double tol = lin_tol(t, n);
        auto a = well_conditioned(t, batch, n);
        // det = exp(logdet) grows fast: compare slogdet, and det relative to itself
        auto sl = cf::linalg::slogdet(a);
        auto [ls_r, ls_d] = ref_and_dev(sl.logabsdet);
        CHECK_MESSAGE(compare(ls_d, ls_r, {}, tol, tol, "logabsdet " + w) == 0, w);
        auto [sg_r, sg_d] = ref_and_dev(sl.sign);
        CHECK_MESSAGE(compare(sg_d, sg_r, {}, 0, 0, "sign " + w) == 0, w);
        if (t == cf::f64 || n <= 5) {  // n^n overflows float32 past that
          auto [dt_r, dt_d] = ref_and_dev(cf::linalg::det(a));
          CHECK_MESSAGE(compare(dt_d, dt_r, {}, tol * 10, 0, "det " + w) == 0, w);
        }
        const int64_t nb = cf::numel(batch);
        Vec av = dev(a);
        Vec x = dev(cf::linalg::inv(a));
        for (int64_t b = 0; b < nb; ++b)
          CHECK_MESSAGE(max_abs_diff(mm(av, x, n, n, n, b * n * n, b * n * n), eye(n)) <= tol * 10, "inv " << w);
        auto rhs = random_normal(t, {n, 3});
        Vec xs = dev(cf::linalg::solve(a, rhs)), bv = dev(rhs);
        for (int64_t b = 0; b < nb; ++b)
          CHECK_MESSAGE(max_abs_diff(mm(av, xs, n, n, 3, b * n * n, b * n * 3), bv) <= tol * 10 * n, "solve " << w);
        auto rv = random_normal(t, {n});
        Vec xv = dev(cf::linalg::solve(a, rv)), rvv = dev(rv);
        for (int64_t b = 0; b < nb; ++b)
          CHECK_MESSAGE(max_abs_diff(mm(av, xv, n, n, 1, b * n * n, b * n), rvv) <= tol * 10 * n, "solve vector " << w);
      }
  auto sing = cf::from_host(std::vector<double>{1, 0, 2, 3, 0, 4, 5, 0, 6}, cf::Shape{3, 3});  // column 1 is zero
  CHECK_THROWS_WITH_AS(cf::linalg::inv(sing).eval(), "Singular matrix", cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::linalg::solve(sing.astype(cf::f32), cf::ones({3}, cf::f32)).eval(), "Singular matrix",
                       cf::ValueError);
  CHECK(cf::linalg::det(sing).item<double>() == 0.0);
}

TEST_CASE("cholesky, qr, svd, eigh: invariants and unique parts against the reference") {
  for (cf::DType t : {cf::f32, cf::f64})
    for (const auto& batch : kBatches)
      for (int64_t n : kSizes) {
        const std::string w = std::string(cf::name(t)) + " batch " + cf::to_string(batch) + " n " + std::to_string(n);
        const double tol = lin_tol(t, n);
        const int64_t nb = cf::numel(batch);
        auto g = well_conditioned(t, batch, n);
        auto spd = cf::matmul(g, g.swapaxes(-1, -2));
        spd.eval();
        auto [l_r, l_d] = ref_and_dev(cf::linalg::cholesky(spd));  // unique: positive diagonal
        CHECK_MESSAGE(compare(l_d, l_r, {}, tol * 10, tol * n, "cholesky " + w) == 0, w);
        auto [w_r, w_d] = ref_and_dev(cf::linalg::eigvalsh(spd));
        CHECK_MESSAGE(compare(w_d, w_r, {}, tol * 10, tol * n, "eigvalsh " + w) == 0, w);
        auto eg = cf::linalg::eigh(spd, 'U');
        Vec sv = dev(spd), ev = dev(eg.eigenvalues), V = dev(eg.eigenvectors);
        for (int64_t b = 0; b < nb; ++b) {
          Vec av = mm(sv, V, n, n, n, b * n * n, b * n * n);
          double err = 0, scale = 0;
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
              err = std::max(err, std::fabs(av[i * n + j] - V[b * n * n + i * n + j] * ev[b * n + j]));
              scale = std::max(scale, std::fabs(ev[b * n + j]));
            }
          CHECK_MESSAGE(err <= tol * 10 * scale, "eigh A V = V w " << w);
        }
        // tall and wide matrices for QR and SVD
        for (const auto& [m, k] : std::vector<std::pair<int64_t, int64_t>>{{n + 3, n}, {n, n + 3}}) {
          cf::Shape s = batch;
          s.push_back(m);
          s.push_back(k);
          auto a = random_normal(t, s);
          Vec av = dev(a);
          for (const char* mode : {"reduced", "complete"}) {
            auto [Q, R] = cf::linalg::qr(a, mode);
            const int64_t kq = Q.shape(-1);
            Vec q = dev(Q), r = dev(R);
            for (int64_t b = 0; b < nb; ++b) {
              CHECK_MESSAGE(max_abs_diff(mm(q, r, m, kq, k, b * m * kq, b * kq * k),
                                         Vec(av.begin() + b * m * k, av.begin() + (b + 1) * m * k)) <= tol * 10,
                            "Q R " << mode << " " << w);
              CHECK_MESSAGE(max_abs_diff(mm(tr(q, m, kq, b * m * kq), q, kq, m, kq, 0, b * m * kq), eye(kq)) <= tol * 10,
                            "Q^T Q " << mode << " " << w);
              for (int64_t i = 0; i < kq; ++i)
                for (int64_t j = 0; j < std::min(i, k); ++j) CHECK(r[b * kq * k + i * k + j] == 0.0);
            }
          }
          auto [s_r, s_d] = ref_and_dev(cf::linalg::svdvals(a));
          CHECK_MESSAGE(compare(s_d, s_r, {}, tol * 10, tol * 10, "svdvals " + w) == 0, w);
          for (bool full : {true, false}) {
            auto d = cf::linalg::svd(a, full);
            const int64_t kk = std::min(m, k), ku = d.U.shape(-1), kv = d.Vh.shape(-2);
            Vec u = dev(d.U), sg = dev(d.S), vh = dev(d.Vh);
            for (int64_t b = 0; b < nb; ++b) {
              Vec us(static_cast<size_t>(m * kk));
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < kk; ++j) us[i * kk + j] = u[b * m * ku + i * ku + j] * sg[b * kk + j];
              CHECK_MESSAGE(max_abs_diff(mm(us, vh, m, kk, k, 0, b * kv * k),
                                         Vec(av.begin() + b * m * k, av.begin() + (b + 1) * m * k)) <= tol * 10 * n,
                            "U S Vh " << full << " " << w);
              CHECK_MESSAGE(max_abs_diff(mm(tr(u, m, ku, b * m * ku), u, ku, m, ku, 0, b * m * ku), eye(ku)) <= tol * 10,
                            "U^T U " << full << " " << w);
              CHECK_MESSAGE(max_abs_diff(mm(vh, tr(vh, kv, k, b * kv * k), kv, k, kv, b * kv * k), eye(kv)) <= tol * 10,
                            "Vh Vh^T " << full << " " << w);
            }
          }
        }
      }
  auto not_pd = cf::from_host(std::vector<double>{1, 2, 2, 1}, cf::Shape{2, 2});
  CHECK_THROWS_WITH_AS(cf::linalg::cholesky(not_pd).eval(), "Matrix is not positive definite", cf::ValueError);
}

TEST_CASE("pinv, lstsq, matrix_rank, norms against the reference") {
  for (cf::DType t : {cf::f32, cf::f64}) {
    const std::string w = cf::name(t).data();
    const double tol = lin_tol(t, 40);
    auto a = random_normal(t, {2, 40, 25});
    auto [p_r, p_d] = ref_and_dev(cf::linalg::pinv(a));
    CHECK_MESSAGE(compare(p_d, p_r, {}, tol * 100, tol * 10, "pinv " + w) == 0, w);
    auto a2 = random_normal(t, {40, 25}), b2 = random_normal(t, {40, 3});
    auto ls = cf::linalg::lstsq(a2, b2);
    auto ref_ls_x = ref_only(cf::linalg::pinv(a2).astype(cf::f64));
    CHECK(ls.rank == 25);
    Vec xd = dev(ls.x), b2v = dev(b2);
    Vec want = mm(ref_ls_x, b2v, 25, 40, 3);
    CHECK_MESSAGE(compare(xd, want, {}, tol * 100, tol * 10, "lstsq " + w) == 0, w);
    CHECK(ls.residuals.shape() == cf::Shape{3});
    auto low = cf::matmul(random_normal(t, {30, 4}), random_normal(t, {4, 20}));  // rank 4
    CHECK(cf::linalg::matrix_rank(low).item<int64_t>() == 4);
    CHECK(cf::linalg::matrix_rank(a).to_host<int64_t>() == std::vector<int64_t>{25, 25});
    for (double ord : {1.0, -1.0, 2.0, -2.0, double(INFINITY), -double(INFINITY)}) {
      auto [n_r, n_d] = ref_and_dev(cf::linalg::norm(a, ord, {1, 2}));
      CHECK_MESSAGE(compare(n_d, n_r, {}, tol * 10, 0, "norm " + std::to_string(ord) + " " + w) == 0, w);
    }
    for (const char* ord : {"fro", "nuc"}) {
      auto [n_r, n_d] = ref_and_dev(cf::linalg::norm(a, ord, {-2, -1}));
      CHECK_MESSAGE(compare(n_d, n_r, {}, tol * 10, 0, std::string("norm ") + ord + " " + w) == 0, w);
    }
  }
}

TEST_CASE("W11 shapes: qr and det of 512x512, inv of 2000x2000 in float32") {
  auto a = random_normal(cf::f32, {512, 512}, 0.0727);
  auto [Q, R] = cf::linalg::qr(a);
  Vec q = dev(Q), r = dev(R), av = dev(a);
  CHECK(max_abs_diff(mm(q, r, 512, 512, 512), av) <= 1e-4);
  auto [d_r, d_d] = ref_and_dev(cf::linalg::slogdet(a).logabsdet);
  CHECK(std::fabs(d_d[0] - d_r[0]) <= 1e-2);
  auto big = well_conditioned(cf::f32, {}, 2000);
  auto inv = cf::linalg::inv(big);
  auto resid = cf::max(cf::abs(cf::matmul(big, inv) - cf::equal(cf::arange(2000).reshape({2000, 1}),
                                                                  cf::arange(2000).reshape({1, 2000})).astype(cf::f32)));
  CHECK(resid.item<float>() <= 1e-3f);
  // Past 6144 rows the pivots' shared memory needs more than the default 48 KiB per block.
  auto bigger = well_conditioned(cf::f32, {}, 6500);
  auto resid2 = cf::max(cf::abs(cf::matmul(bigger, cf::linalg::inv(bigger)) -
                                cf::equal(cf::arange(6500).reshape({6500, 1}), cf::arange(6500).reshape({1, 6500})).astype(cf::f32)));
  CHECK(resid2.item<float>() <= 1e-3f);
}

TEST_CASE("one evaluation holding a reduction, a GEMM and a solver call") {
  auto a = well_conditioned(cf::f32, {}, 96);
  auto r = cf::sum(a, 0), g = cf::matmul(a, a.T()), i = cf::linalg::inv(a);
  CHECK_NOTHROW(cf::eval(r, g, i));
  CHECK(max_abs_diff(dev(i), dev(cf::linalg::inv(a * 1.0f))) <= 1e-6);
  CHECK(max_abs_diff(dev(g), dev(cf::matmul(a * 1.0f, a.T()))) <= 1e-4);
}

TEST_CASE("inv with real pivoting (uniform entries, as seed 004's rand) against the float64 reference") {
  // A well-conditioned test matrix barely pivots; uniform [0, 1) entries swap almost every row,
  // which is what the permuted identity inv builds from getrf's pivots must get right.
  for (int64_t n : {7, 64, 300}) {
    for (const cf::Shape& batch : {cf::Shape{}, cf::Shape{2}}) {
      cf::Shape s = batch;
      s.push_back(n);
      s.push_back(n);
      cf::Array a = cf::random::uniform(s, cf::f64, 400 + n);
      a.eval();
      auto [r, d] = ref_and_dev(cf::linalg::inv(a));
      double mx = 0;
      for (double v : r) mx = std::max(mx, std::fabs(v));
      const std::string w = "inv uniform n " + std::to_string(n) + " batch " + cf::to_string(batch);
      CHECK_MESSAGE(compare(d, r, {}, 1e-7, 1e-9 * mx, w) == 0, w);
    }
  }
}

TEST_CASE("a library result written into a view lands where the view says, and nowhere else") {
  // Device fuzz seed 912959838175: `v1[::-1] = einsum('ij,jk->ik', v2, v0.T)` had the GEMM
  // write densely from the view's first element, i.e. past the end of v1's memory.
  auto a = random_normal(cf::f32, {33, 20}), b = random_normal(cf::f32, {20, 33});
  auto i16 = random_array(cf::i16, {33, 20}, kSmallInts);
  auto m = (random_normal(cf::f64, {12, 12}) + cf::from_host(eye(12), cf::Shape{12, 12}) * 12).eval();
  auto s = random_normal(cf::f32, {50}), k = random_normal(cf::f32, {5});
  struct Case {
    const char* what;
    std::function<cf::Array()> make;
  };
  const std::vector<Case> cases = {
      {"matmul", [&] { return cf::matmul(a, b); }},
      {"einsum of a transposed int16", [&] { return cf::einsum("ij,jk->ik", b.T().astype(cf::f64), i16.T()); }},
      {"inv", [&] { return cf::linalg::inv(m); }},
      {"convolve", [&] { return cf::convolve(s, k, "full"); }},
  };
  for (const Case& c : cases) {
    const cf::Array value = c.make().eval();  // the same call's values, in their own memory
    const cf::Shape vs = value.shape();
    const int64_t r = vs[0], w = vs.ndim() == 2 ? vs[1] : 1;
    // Each destination: a base array of sentinels, and the view of it that is written.
    struct Dest {
      const char* what;
      cf::Shape base;
      std::function<cf::Array(const cf::Array&)> view;
    };
    const cf::Shape wide = vs.ndim() == 2 ? cf::Shape{r + 7, w + 5} : cf::Shape{r + 7};
    const cf::Shape tall = vs.ndim() == 2 ? cf::Shape{2 * r + 3, w} : cf::Shape{2 * r + 3};
    std::vector<Dest> dests = {
        {"reversed rows", wide,
         [&](const cf::Array& x) {
           return vs.ndim() == 2 ? x[{cf::slice(r + 2, 2, -1), cf::slice(1, 1 + w)}] : x[{cf::slice(r + 2, 2, -1)}];
         }},
        {"every other row", tall, [&](const cf::Array& x) { return x[{cf::slice(1, 1 + 2 * r, 2)}]; }},
        {"rows at an offset", wide,
         [&](const cf::Array& x) {
           return vs.ndim() == 2 ? x[{cf::slice(3, 3 + r), cf::slice(0, w)}] : x[{cf::slice(3, 3 + r)}];
         }},
    };
    if (vs.ndim() == 2) dests.push_back({"a transposed array", cf::Shape{w, r}, [](const cf::Array& x) { return x.T(); }});
    for (const Dest& d : dests) {
      auto got = cf::full(d.base, 7.0, value.dtype()).eval(), want = cf::full(d.base, 7.0, value.dtype()).eval();
      d.view(got) = c.make();  // the call writes (through a temporary where the view is not dense)
      d.view(want) = value;    // an elementwise copy of the same values
      CHECK_MESSAGE(dev(got) == dev(want), c.what << " into " << d.what);
    }
  }
}
