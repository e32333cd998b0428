// tests/test_library_plans.cpp: library nodes in the plan, no GPU needed (placeholders):
// what cuBLAS reads in place (no library-input kernel), what becomes a fused reduction
// instead of a GEMM, epilogues fused into the GEMM, kernel counts of the patterns,
// scalar factors folded into alpha only where that keeps NumPy's values, and that every
// kernel around a library call compiles.
#include "test_core_helpers.hpp"

#include <cmath>

#include <fmt/format.h>

#include "library/gemm_call.hpp"

using cf::_;
using cf::newaxis;
using cf::none;
using cf::slice;
namespace cd = cf::detail;

namespace {

size_t library_groups(const std::shared_ptr<cd::Executable>& ex) {
  size_t n = 0;
  for (const auto& g : ex->plan.groups) n += g.kind == cd::GroupKind::Library;
  return n;
}
size_t kernel_groups(const std::shared_ptr<cd::Executable>& ex) { return ex->plan.groups.size() - library_groups(ex); }
bool has_rule(const std::shared_ptr<cd::Executable>& ex, cd::Rule r) {
  for (const auto& g : ex->plan.groups) {
    if (g.rule == r) return true;
    for (auto f : g.fused)
      if (f == r) return true;
  }
  return false;
}
std::string library_summary(const std::shared_ptr<cd::Executable>& ex) {
  std::string s;
  for (const auto& st : ex->steps)
    if (st.call) s += st.spec.summary + "\n";
  return s;
}
cf::Array w6(const cf::Array& q, const cf::Array& p, bool python_precedence) {
  auto qn = cf::sum(q * q, 1)[{_, newaxis}];
  auto pn = cf::sum(p * p, 1)[{newaxis, _}];
  auto g = python_precedence ? cf::matmul(2 * q, p.T()) : 2 * cf::matmul(q, p.T());
  return cf::sqrt(cf::maximum(qn - g + pn, 0));
}

}  // namespace

TEST_CASE("seed 000's distance matrix: one GEMM plus at most two kernels") {
  auto p = cf::placeholder(cf::f32, {10000, 784});
  auto q = cf::placeholder(cf::f32, {10000, 784});
  for (bool py : {false, true}) {
    auto ex = plan_of({w6(q, p, py)});
    CHECK(library_groups(ex) == 1);
    CHECK(kernel_groups(ex) <= 2);
    CHECK_FALSE(has_rule(ex, cd::Rule::LibraryInput));  // q and p.T are read in place
    if (py) CHECK(library_summary(ex).find("alpha 2") != std::string::npos);  // (2*q)@p.T: 2 goes to alpha
  }
  CHECK(plan_of({w6(q, p, true)}, true)->steps.size() == 3);  // every kernel compiles
}

TEST_CASE("a scalar factor of an operand becomes alpha only where the scaled product gives NumPy's values") {
  auto q = cf::placeholder(cf::f32, {64, 32});
  auto p = cf::placeholder(cf::f32, {48, 32});
  auto folded = [&](const cf::Array& r) {
    auto ex = plan_of({r});
    return kernel_groups(ex) == 0 && library_summary(ex).find("alpha") != std::string::npos;
  };
  CHECK(folded(cf::matmul(-2 * q, p.T())));
  CHECK(folded(cf::matmul(q / 3, p.T())));    // alpha 1/3: within float32's rounding of q / 3
  CHECK(folded(cf::matmul(q * 0.1, p.T())));  // 0.1 rounded to float32 as NumPy rounds it
  CHECK(library_summary(plan_of({cf::matmul(q * 0.1, p.T())})).find(fmt::format("alpha {}", double(0.1f))) !=
        std::string::npos);
  // 0, infinities and NaN make NaNs in the operand (0 * inf, 0 / 0) that a scaled product lacks
  for (double c : {0.0, -0.0, double(INFINITY), -double(INFINITY), double(NAN)}) {
    INFO(c);
    CHECK_FALSE(folded(cf::matmul(q * c, p.T())));
    CHECK_FALSE(folded(cf::matmul(q / c, p.T())));
  }
  CHECK_FALSE(folded(cf::matmul(q * 1e30, p.T())));  // x * 1e30 overflows where the product may not
  // float16 rounds q * c to 11 bits and overflows at 65504: powers of two of at most 1 only
  auto h = cf::placeholder(cf::f16, {64, 32}), hp = cf::placeholder(cf::f16, {48, 32});
  CHECK(folded(cf::matmul(h * 0.5, hp.T())));
  CHECK(folded(cf::matmul(-h, hp.T())));
  CHECK_FALSE(folded(cf::matmul(h * 2, hp.T())));
  CHECK_FALSE(folded(cf::matmul(h * 0.1, hp.T())));
  auto b = cf::placeholder(cf::bf16, {64, 32}), bp = cf::placeholder(cf::bf16, {48, 32});
  CHECK(folded(cf::matmul(b * 4, bp.T())));
  CHECK_FALSE(folded(cf::matmul(b * 3, bp.T())));
}

TEST_CASE("a@b.T copies nothing; layouts cuBLAS cannot read are laid out by one kernel") {
  auto a = cf::placeholder(cf::f32, {64, 32});
  auto b = cf::placeholder(cf::f32, {48, 32});
  auto ex = plan_of({cf::matmul(a, b.T())});
  REQUIRE(ex->plan.groups.size() == 1);
  CHECK(ex->plan.groups[0].kind == cd::GroupKind::Library);
  CHECK(ex->steps[0].spec.summary.find("matmul float32 (64, 32) @ (32, 48) -> (64, 48)") != std::string::npos);
  // a.T @ a.T-like transposes and row slices: op flags and leading dims
  CHECK(plan_of({cf::matmul(a.T(), a)})->plan.groups.size() == 1);
  auto big = cf::placeholder(cf::f32, {128, 32});
  CHECK(plan_of({cf::matmul(big[{slice(none, none, 2), _}], b.T())})->plan.groups.size() == 1);  // ld = 64
  CHECK(plan_of({cf::matmul(a[{slice(0, 16), _}], b.T())})->plan.groups.size() == 1);
  // a column stride of 2 is no matrix cuBLAS reads: one library-input kernel
  auto wide = cf::placeholder(cf::f32, {64, 64});
  auto ex2 = plan_of({cf::matmul(wide[{_, slice(none, none, 2)}], b.T())});
  CHECK(ex2->plan.groups.size() == 2);
  CHECK(has_rule(ex2, cd::Rule::LibraryInput));
  // an elementwise producer is laid out by one kernel; a cast too
  CHECK(plan_of({cf::matmul(cf::exp(a), b.T())})->plan.groups.size() == 2);
  CHECK(plan_of({cf::matmul(a.astype(cf::f16), b.T())})->plan.groups.size() == 2);  // f16 @ f32 -> f32
  // vectors with any stride
  auto v = cf::placeholder(cf::f32, {64});
  CHECK(plan_of({cf::matmul(v, a)})->plan.groups.size() == 1);
  CHECK(plan_of({cf::matmul(a.T(), v)})->plan.groups.size() == 1);
  auto vv = cf::placeholder(cf::f32, {96});
  CHECK(plan_of({cf::matmul(vv[{slice(none, none, 3)}], b.T())})->plan.groups.size() == 1);
}

TEST_CASE("batched GEMMs: batch strides, broadcast batches, transposed batches") {
  auto a = cf::placeholder(cf::f32, {8, 16, 32});
  auto b = cf::placeholder(cf::f32, {32, 24});
  auto c = cf::placeholder(cf::f32, {8, 24, 32});
  CHECK(plan_of({cf::matmul(a, b)})->plan.groups.size() == 1);                   // b broadcast: batch stride 0
  CHECK(plan_of({cf::matmul(a, c.transpose({0, 2, 1}))})->plan.groups.size() == 1);  // bmm with b^T per batch
  CHECK(plan_of({cf::matmul(a.transpose({0, 2, 1}).transpose({0, 2, 1}), b)})->plan.groups.size() == 1);
  CHECK(cf::matmul(a, b).shape() == cf::Shape{8, 16, 24});
  // a batch dim that is not outermost-contiguous: (16, 8, 32) seen as (8, 16, 32)
  auto t = cf::placeholder(cf::f32, {16, 8, 32});
  CHECK(plan_of({cf::matmul(t.transpose({1, 0, 2}), b)})->plan.groups.size() == 1);  // batch stride 32, ld 256
  // partial broadcasts (3,1) against (4,): written out in full first
  auto x = cf::placeholder(cf::f64, {3, 1, 5, 6});
  auto y = cf::placeholder(cf::f64, {4, 6, 2});
  auto ex = plan_of({cf::matmul(x, y)});
  CHECK(cf::matmul(x, y).shape() == cf::Shape{3, 4, 5, 2});
  CHECK(library_groups(ex) == 1);
  CHECK(has_rule(ex, cd::Rule::LibraryInput));
}

TEST_CASE("contractions with nothing to multiply as matrices are one fused reduction, no GEMM") {
  auto a = cf::placeholder(cf::f32, {65536, 1024});
  auto b = cf::placeholder(cf::f32, {65536, 1024});
  auto w5 = plan_of({cf::einsum("ij,ij->i", a, b)});
  CHECK(library_groups(w5) == 0);
  CHECK(w5->steps.size() == 1);
  auto cols = plan_of({cf::einsum("ij->j", a)});
  CHECK(library_groups(cols) == 0);
  CHECK(cols->steps.size() == 1);
  auto sq = cf::placeholder(cf::f32, {256, 256});
  auto d = cf::einsum("ii->i", sq);
  CHECK(d.shape() == cf::Shape{256});
  CHECK(library_groups(plan_of({d})) == 0);
  CHECK(library_groups(plan_of({cf::einsum("ii", sq)})) == 0);
  CHECK(library_groups(plan_of({cf::einsum("ij,j->i", sq, a[{0, slice(0, 256)}])})) == 0);
  CHECK(library_groups(plan_of({cf::vdot(a, b)})) == 0);
  CHECK(library_groups(plan_of({cf::outer(a[0], b[1])})) == 0);
  CHECK(library_groups(plan_of({cf::einsum("i,j->ij", a[0], b[1])})) == 0);
  CHECK(library_groups(plan_of({cf::matmul(a[0], b[1])})) == 0);  // vector . vector
  CHECK(library_groups(plan_of({cf::trace(sq)})) == 0);
  // contractions with free labels on both sides are GEMMs
  CHECK(library_groups(plan_of({cf::einsum("ij,jk->ik", sq, sq)})) == 1);
  auto bt = cf::placeholder(cf::f32, {8, 32, 16});
  auto ex = plan_of({cf::einsum("bij,bkj->bik", bt, bt)});
  CHECK(library_groups(ex) == 1);
  CHECK_FALSE(has_rule(ex, cd::Rule::LibraryInput));
  // A contracted label of length 1 in one operand (NumPy broadcasts it) is summed out of the
  // other first: no GEMM over a broadcast operand written out whole (2 x 20011 x 20011 here;
  // device fuzz seed 91232296 ran the host out of memory).
  auto wide = cf::placeholder(cf::i64, {2, 3, 20011});
  auto one = cf::placeholder(cf::f64, {2, 1, 20011});
  auto bc = plan_of({cf::einsum("bij,bjk->bik", wide, one)});
  CHECK(library_groups(bc) == 0);
  CHECK(bc->steps.size() == 1);
  CHECK(bc->buffers.size() == 1);  // the result only
}

TEST_CASE("integer and bool matmul: one generated reduction kernel") {
  auto a = cf::placeholder(cf::i32, {64, 48});
  auto b = cf::placeholder(cf::i32, {48, 32});
  auto ex = plan_of({cf::matmul(a, b)});
  CHECK(library_groups(ex) == 0);
  CHECK(ex->steps.size() == 1);
  CHECK(cf::matmul(a, b).dtype() == cf::i32);
  CHECK(cf::matmul(a.astype(cf::bool_), b.astype(cf::bool_)).dtype() == cf::bool_);
  CHECK(cf::matmul(a.astype(cf::u8), b.astype(cf::i8)).dtype() == cf::i16);
  CHECK(plan_of({cf::matmul(a, b)}, true)->steps.size() == 1);
}

TEST_CASE("bias add, ReLU and GELU after a GEMM become a cuBLASLt epilogue") {
  auto a = cf::placeholder(cf::f32, {128, 64});
  auto w = cf::placeholder(cf::f32, {96, 64});
  auto bias = cf::placeholder(cf::f32, {96});
  auto check_fused = [&](const cf::Array& y, const char* what) {
    auto ex = plan_of({y});
    CHECK_MESSAGE(ex->plan.groups.size() == 1, what);
    CHECK_MESSAGE(library_groups(ex) == 1, what);
    CHECK_MESSAGE(library_summary(ex).find(std::string("epilogue ") + what) != std::string::npos, what);
    CHECK(has_rule(ex, cd::Rule::Epilogue));
  };
  auto mm = cf::matmul(a, w.T());
  check_fused(mm + bias, "bias");
  check_fused(bias + mm, "bias");
  check_fused(cf::gelu(mm + bias), "gelu+bias");
  check_fused(cf::gelu(mm), "gelu");
  auto h = cf::placeholder(cf::f16, {128, 64});
  check_fused(cf::gelu(cf::matmul(h, h.T()) + cf::placeholder(cf::f16, {128})), "gelu+bias");
  // ReLU is not a cuBLASLt epilogue (its RELU turns NaN into 0 in some kernels): the GEMM,
  // then one kernel for the ReLU and the bias add under it
  for (const cf::Array& r : {cf::relu(mm), cf::relu(mm + bias), cf::relu(cf::matmul(h, h.T()) + cf::placeholder(cf::f16, {128}))}) {
    auto ex = plan_of({r});
    CHECK(ex->plan.groups.size() == 2);
    CHECK(library_groups(ex) == 1);
    CHECK(library_summary(ex).find("epilogue") == std::string::npos);
  }
  // not fused: float64, the GEMM also a result, a bias that is not a vector, other work
  auto d = cf::placeholder(cf::f64, {32, 32});
  CHECK(plan_of({cf::gelu(cf::matmul(d, d))})->plan.groups.size() == 2);
  auto both = plan_of({mm, cf::gelu(mm + bias)});
  CHECK(both->plan.groups.size() == 2);
  CHECK(library_summary(both).find("epilogue") == std::string::npos);
  CHECK(plan_of({mm + cf::placeholder(cf::f32, {128, 96})})->plan.groups.size() == 2);
  CHECK(plan_of({mm + cf::placeholder(cf::f32, {128, 1})})->plan.groups.size() == 2);
  CHECK(plan_of({cf::exp(mm + bias)})->plan.groups.size() == 2);
  CHECK(plan_of({cf::gelu(mm + bias) * 2})->plan.groups.size() == 2);
  // batched, with the bias broadcast over the batch
  auto ab = cf::placeholder(cf::f32, {4, 128, 64});
  check_fused(cf::gelu(cf::matmul(ab, w.T()) + bias), "gelu+bias");
}

TEST_CASE("the GEMM's operand analysis") {
  using cd::colmajor_of;
  auto cm = colmajor_of(64, 32, 32, 1);  // row-major: column-major transpose, ld 32
  CHECK(cm.ok);
  CHECK_FALSE(cm.is_self);
  CHECK(cm.ld == 32);
  cm = colmajor_of(64, 32, 1, 64);  // a transposed view: the matrix itself, op T
  CHECK(cm.ok);
  CHECK(cm.is_self);
  CHECK(cm.ld == 64);
  CHECK_FALSE(colmajor_of(64, 32, 64, 2).ok);    // strided both ways
  CHECK_FALSE(colmajor_of(64, 32, 16, 1).ok);    // rows overlap: ld < cols
  CHECK_FALSE(colmajor_of(64, 32, 0, 1).ok);     // broadcast rows
  CHECK(colmajor_of(1, 32, 0, 1).ok);            // one row: its stride does not matter
  CHECK(colmajor_of(64, 1, 7, 0).ok);            // one column
  CHECK(cd::collapse_batch({8}, {8}, {512}).value() == 512);
  CHECK(cd::collapse_batch({8, 4}, {4}, {100}) == std::nullopt);
  CHECK(cd::collapse_batch({8, 4}, {8, 1}, {7, 0}) == std::nullopt);
  CHECK(cd::collapse_batch({8, 4}, {8, 4}, {400, 100}).value() == 100);
  CHECK(cd::collapse_batch({8, 4}, {}, {}).value() == 0);
  CHECK(cd::collapse_batch({1, 4}, {4}, {9}).value() == 9);
}

TEST_CASE("TF32 is off by default, on in a TF32Scope, and part of the node") {
  auto a = cf::placeholder(cf::f32, {64, 64});
  auto off = cf::matmul(a, a);
  cf::Array on;
  {
    cf::TF32Scope s(true);
    CHECK(cf::tf32_enabled());
    on = cf::matmul(a, a);
    cf::TF32Scope nested(false);
    CHECK_FALSE(cf::tf32_enabled());
  }
  CHECK_FALSE(cf::tf32_enabled());
  CHECK(off.node()->hash != on.node()->hash);
  CHECK(library_summary(plan_of({on})).find("TF32 on") != std::string::npos);
  CHECK(library_summary(plan_of({off})).find("TF32 off") != std::string::npos);
}

TEST_CASE("linear algebra plans: the solver call and the graph work after it") {
  auto m = cf::placeholder(cf::f32, {512, 512});
  auto det = plan_of({cf::linalg::det(m)}, true);
  CHECK(library_groups(det) == 1);
  CHECK(kernel_groups(det) == 1);  // diagonal product and pivot parity: one reduction kernel
  auto [Q, R] = cf::linalg::qr(m);
  auto qr = plan_of({Q, R}, true);
  CHECK(library_groups(qr) == 1);
  CHECK(kernel_groups(qr) == 1);  // R's triangle mask
  CHECK(library_groups(plan_of({cf::linalg::inv(m)})) == 1);
  CHECK(plan_of({cf::linalg::inv(m)})->plan.groups.size() == 1);
  auto pinv = plan_of({cf::linalg::pinv(m)}, true);
  CHECK(library_groups(pinv) == 2);  // SVD, GEMM
  CHECK(library_summary(pinv).find("a read through a view") != std::string::npos);  // Vh^T in place
  auto slog = cf::linalg::slogdet(m);
  CHECK(kernel_groups(plan_of({slog.sign, slog.logabsdet}, true)) == 1);
  CHECK(plan_of({cf::linalg::norm(m, 2.0, {0, 1})}, true)->plan.groups.size() == 2);
}

TEST_CASE("a library input and a same-shaped result computed from the call's output are separate kernels") {
  auto a = cf::placeholder(cf::f32, {64, 64});
  auto ex = plan_of({cf::exp(cf::matmul(cf::exp(a), a))}, true);  // prep exp(a), GEMM, exp(result)
  CHECK(ex->plan.groups.size() == 3);
  CHECK(ex->plan.groups[1].kind == cd::GroupKind::Library);
  CHECK(plan_of({cf::linalg::cholesky(cf::exp(a))})->plan.groups.size() == 3);
  auto [Q, R] = cf::linalg::qr(a.T(), "complete");
  CHECK(plan_of({Q, R})->plan.groups.size() == 3);
}

TEST_CASE("a GEMM whose result is reshaped (einsum, tensordot) writes it in that shape: no copy kernel") {
  auto x = cf::placeholder(cf::f32, {4, 8, 16}), y = cf::placeholder(cf::f32, {16, 5}), z = cf::placeholder(cf::f32, {5, 7});
  auto ex = plan_of({cf::einsum("bij,jk,kl->bil", x, y, z)});
  CHECK(library_groups(ex) == 2);
  CHECK(kernel_groups(ex) == 0);
  auto t = plan_of({cf::tensordot(x, y, 1)});
  CHECK(t->plan.groups.size() == 1);
  CHECK(cf::tensordot(x, y, 1).shape() == cf::Shape{4, 8, 5});
}

TEST_CASE("GELU and bias epilogues are planned into the GEMM for float32, float16 and bfloat16; ReLU is not") {
  for (cf::DType t : {cf::f32, cf::f16, cf::bf16}) {
    INFO(cf::name(t));
    auto a = cf::placeholder(t, {96, 8}), w = cf::placeholder(t, {72, 8}), b = cf::placeholder(t, {72});
    CHECK(plan_of({cf::gelu(cf::matmul(a, w.T()))})->steps.size() == 1);
    CHECK(plan_of({cf::gelu(cf::matmul(a, w.T()) + b)})->steps.size() == 1);
    CHECK(plan_of({cf::matmul(a, w.T()) + b})->steps.size() == 1);
    CHECK(plan_of({cf::relu(cf::matmul(a, w.T()) + b)})->steps.size() == 2);
  }
}
