// tests/test_core_codegen.cpp: every generated kernel shape compiles with NVRTC for sm_90
// (no GPU needed): every op of the op table for every dtype it takes, every cast, the
// generators, index remaps, strided and 64-bit kernels; and the source forms some of them take.
#include <cmath>
#include <cstring>
#include <limits>

#include "codegen/host_helpers.hpp"
#include "core/op_table.hpp"
#include "test_core_helpers.hpp"

using namespace cf::detail;

static const cf::DType kAll[] = {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8,  cf::u16,
                                 cf::u32,   cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};

TEST_CASE("every op compiles for every dtype it accepts") {
  for (cf::DType t : kAll) {
    auto a = cf::placeholder(t, {64});
    auto b = cf::placeholder(t, {64});
    auto c = cf::placeholder(cf::bool_, {64});
    std::vector<cf::Array> outs;
    for (int op = 0; op < kNumOps; ++op) {
      const OpRow& row = op_row(static_cast<Op>(op));
      if (row.id == Op::Cast) continue;
      cf::DType in[3] = {t, t, t};
      if (row.rule == TypeRule::Where) in[0] = cf::bool_;
      try {
        type_op(row.id, in, row.arity);
      } catch (const cf::TypeError&) {
        continue;
      }
      if (row.arity == 1) outs.push_back(cf::apply(row.name, {a}));
      else if (row.arity == 2) outs.push_back(cf::apply(row.name, {a, b}));
      else outs.push_back(cf::apply(row.name, {c, a, b}));
    }
    INFO("dtype " << cf::name(t) << ", " << outs.size() << " ops");
    CHECK(outs.size() > 10);
    // outputs of different dtypes share the iteration space: one kernel writes them all
    auto ex = plan_of(outs, /*compile=*/true);
    CHECK(ex->steps.size() == 1);
    CHECK(ex->steps[0].kernel->cubin.size() > 0);
  }
}

TEST_CASE("every cast compiles, and casts round half types correctly in the source") {
  for (cf::DType from : kAll) {
    auto a = cf::placeholder(from, {33});
    std::vector<cf::Array> outs;
    for (cf::DType to : kAll) outs.push_back(a.astype(to));
    auto ex = plan_of(outs, true);
    CHECK(ex->steps.size() == 1);
    if (from == cf::f64) CHECK(ex->steps[0].spec.source.find("cf_round_f16(v") != std::string::npos);
  }
}

TEST_CASE("generators, index remaps, strided and 64-bit kernels compile") {
  std::vector<cf::Array> gens;
  for (cf::DType t : kAll) {
    gens.push_back(cf::arange(0, 100, 3, t)[{cf::slice(cf::none, cf::none, -1)}]);
    gens.push_back(cf::linspace(-1, 1, 34, true, t));
    if (cf::is_float(t)) {
      gens.push_back(cf::random::uniform({34}, t, 7));
      gens.push_back(cf::random::normal({34}, t, 7));
    }
  }
  auto ex = plan_of(gens, true);
  CHECK(ex->steps.size() == 1);
  auto m = cf::placeholder(cf::f16, {40, 50});
  auto remap = (m.T().reshape({-1}) * 2).reshape({50, 40}).T().reshape({-1});
  CHECK(plan_of({remap}, true)->steps.size() == 1);
  auto big = cf::placeholder(cf::f32, {(int64_t(1) << 31) + 1, 1});
  auto strided_big = cf::placeholder(cf::f64, {3, (int64_t(1) << 30)})[{cf::_, cf::slice(cf::none, cf::none, 2)}];
  CHECK(plan_of({cf::sin(big)}, true)->steps.size() == 1);
  CHECK(plan_of({strided_big * 2}, true)->steps[0].spec.summary.find("64-bit") != std::string::npos);
  auto zero_d = cf::placeholder(cf::f32, {});
  CHECK(plan_of({zero_d + 1}, true)->steps.size() == 1);
}

TEST_CASE("contiguous kernels: plain loads below 2^22 elements of 4- and 8-byte types, vectors above") {
  auto summary = [](const cf::Array& a) { return plan_of({a})->steps.at(0).spec.summary; };
  const int64_t lim = int64_t(1) << 22, one = int64_t(1) << 19;
  for (cf::DType t : {cf::f32, cf::i32, cf::f64}) {
    INFO(cf::name(t));
    auto small = cf::placeholder(t, {one}), mid = cf::placeholder(t, {one + 1}), big = cf::placeholder(t, {lim}),
         below = cf::placeholder(t, {lim - 1});
    CHECK(summary(small * small) == "contiguous, 1 element per thread, straight-line, 32-bit index");
    CHECK(summary(mid * mid) == "contiguous, 2 elements per thread, straight-line, 32-bit index");
    CHECK(summary(below * below) == "contiguous, 2 elements per thread, straight-line, 32-bit index");
    CHECK(summary(big * big).find("(16-byte vectors)") != std::string::npos);
  }
  // 1- and 2-byte types keep their vectors at every size; so does a kernel that reads one
  auto h = cf::placeholder(cf::f16, {1000});
  CHECK(summary(h * h).find("(16-byte vectors)") != std::string::npos);
  CHECK(summary(h.astype(cf::f32) * 2).find("(16-byte vectors)") != std::string::npos);
  // the plain forms are straight-line code: no loop, no vectors, no tail
  const std::string src = plan_of({cf::placeholder(cf::f32, {1001}) + 1}, true)->steps.at(0).spec.source;
  CHECK(count_of(src, "p.o1[") == 1);
  CHECK(count_of(src, "#pragma unroll") == 0);
  CHECK(count_of(src, "cf_vec<") == 0);
  // two per thread: each element's loads are predicated on its range check, and the stores
  // (one per element) come after both elements' arithmetic
  auto x = cf::placeholder(cf::f32, {one + 7}), y = cf::placeholder(cf::i64, {one + 7});
  const std::string two = plan_of({cf::sqrt(x) + y}, true)->steps.at(0).spec.source;
  CHECK(count_of(two, "#pragma unroll") == 0);
  CHECK(count_of(two, "k0 ? ") == 2);
  CHECK(count_of(two, "k1 ? ") == 2);
  CHECK(count_of(two, "static_cast<long long>(0)") == 2);
  CHECK(count_of(two, "if (k0) p.o2[i0]") == 1);
  CHECK(count_of(two, "if (k1) p.o2[i1]") == 1);
  CHECK(two.rfind("if (k0) p.o2[i0]") > two.rfind("sqrt("));
  // a 0-d result takes the one-element form
  CHECK(summary(cf::placeholder(cf::f64, {}) + 1) == "contiguous, 1 element per thread, straight-line, 32-bit index");
}

TEST_CASE("floating add, subtract and multiply are spelled as C++ operators; other types keep the helpers") {
  auto src = [](const cf::Array& a) {  // the kernel, without the preamble's helper definitions
    const std::string s = plan_of({a})->steps.at(0).spec.source;
    return s.substr(s.find("end of the cufuse preamble"));
  };
  for (cf::DType t : {cf::f32, cf::f64, cf::f16, cf::bf16}) {
    INFO(cf::name(t));
    auto x = cf::placeholder(t, {100}), y = cf::placeholder(t, {100});
    const std::string s = src((x + y) * (x - y));
    CHECK(count_of(s, "cf_add(") + count_of(s, "cf_sub(") + count_of(s, "cf_mul(") == 0);
    CHECK(count_of(s, "a + b") >= 1);  // (2-byte types: a vector body and a tail)
    CHECK(count_of(s, "a - b") >= 1);
    CHECK(count_of(s, "a * b") >= 1);
  }
  for (cf::DType t : {cf::i32, cf::u8, cf::bool_}) {
    INFO(cf::name(t));
    auto x = cf::placeholder(t, {100}), y = cf::placeholder(t, {100});
    const std::string s = src(x * y + x);
    CHECK(count_of(s, "cf_mul(a, b)") >= 1);  // (1-byte types: a vector body and a tail)
    CHECK(count_of(s, "cf_add(a, b)") >= 1);
    CHECK(count_of(s, "a * b") + count_of(s, "a + b") == 0);
  }
  // mixed int and float inputs compute in float: the operator form
  CHECK(count_of(src(cf::placeholder(cf::i32, {100}) * cf::placeholder(cf::f32, {100})), "a * b") == 1);
  // the spelling must mean what the helper means: bit for bit on the host, edge values included
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float vals[] = {0.f, -0.f, 1.f, -2.5f, 1e-40f, -3e38f, 3e38f, inf, -inf, nan};
  for (float a : vals)
    for (float b : vals) {
      auto same = [](float u, float v) { return std::memcmp(&u, &v, sizeof u) == 0 || (u != u && v != v); };
      CHECK(same(ref_kern::cf_add(a, b), a + b));
      CHECK(same(ref_kern::cf_sub(a, b), a - b));
      CHECK(same(ref_kern::cf_mul(a, b), a * b));
      const double da = a, db = b, sum = ref_kern::cf_add(da, db);
      CHECK((sum == da + db || (std::isnan(sum) && std::isnan(da + db))));
    }
  for (int op = 0; op < kNumOps; ++op)
    if (float_is_operator(static_cast<Op>(op))) {  // spelled `a <symbol> b`: a binary operator
      const OpRow& row = op_row(static_cast<Op>(op));
      INFO(row.name);
      CHECK(row.arity == 2);
      CHECK(std::string(row.symbol).size() == 1);
    }
}

TEST_CASE("a View of an earlier kernel's result is read as strided memory, not remapped") {
  // seed 000's distance matrix: the norms' [:, None] and [None, :] views of the first kernel's
  // results are a per-row scalar and a row of vectors in the epilogue
  auto q = cf::placeholder(cf::f32, {100, 64}), p = cf::placeholder(cf::f32, {120, 64});
  auto d2 = cf::sum(q * q, 1).expand_dims(1) - 2 * cf::matmul(q, p.T()) + cf::sum(p * p, 1).expand_dims(0);
  auto ex = plan_of({cf::sqrt(cf::maximum(d2, 0))}, true);
  const std::string epi = ex->steps.back().spec.source;
  CHECK(count_of(epi, "_sh[") == 0);  // no per-element unravel of a remapped position
  CHECK(count_of(epi, "_off") == 0);
  CHECK(count_of(epi, "*reinterpret_cast<const cf_vec<float, V>*>") == 2);  // the GEMM result and p's norms
  CHECK(ex->steps.back().spec.summary.find("rows rank 2") != std::string::npos);
  // a View with an offset (a slice of a row sum) keeps the remap
  auto r = cf::sum(cf::placeholder(cf::f32, {130, 8}), 1);
  auto y = r[{cf::slice(1, cf::none)}].expand_dims(0) + cf::placeholder(cf::f32, {3, 129});
  const std::string remap = plan_of({y}, true)->steps.back().spec.source;
  CHECK(count_of(remap, "_off") >= 1);
  CHECK(count_of(remap, "_sh[") >= 1);
}
