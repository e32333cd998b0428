// tests/test_bytecode.cpp: the bytecode interpreter on the host (issue 35). Fused groups go
// through codegen/bytecode.cpp's pass and run on the generated interpreter core compiled for
// the host (src/reference/eval_bytecode.cpp: the same text the interpreter kernel is built
// from), against the host reference evaluator on random inputs: every op row on every dtype,
// every cast, broadcasting and strides, several outputs, half rounding, and the refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include <cufuse/cufuse.hpp>

#include "codegen/bytecode.hpp"
#include "codegen/bytecode_ops.hpp"
#include "core/op_table.hpp"
#include "exec/binding.hpp"
#include "op_cases.hpp"
#include "test_core_helpers.hpp"
#include "plan/signature.hpp"
#include "reference/eval_bytecode.hpp"
#include "reference/evaluator.hpp"

namespace cf = cufuse;
using namespace cf::detail;

namespace {

using cufuse_test::kAllDTypes;

std::mt19937_64& gen() {
  static std::mt19937_64 g(12345);
  return g;
}

// n random values of dtype t: floats spread over magnitudes with +-0, inf and NaN among them;
// integers over their range; `small` keeps them in 0..5 (shift counts, exponents).
cf::Array random_array(cf::DType t, const cf::Shape& s, bool small = false) {
  const int64_t n = cf::numel(s);
  std::vector<double> v(static_cast<size_t>(n));
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> e(-6, 6), sm(0, 5);
  for (int64_t i = 0; i < n; ++i) {
    double x;
    if (small) x = sm(gen());
    else if (cf::is_float(t)) x = i % 97 == 5 ? INFINITY : i % 89 == 3 ? NAN : i % 83 == 1 ? -0.0 : u(gen()) * std::ldexp(1.0, e(gen()));
    else if (t == cf::bool_) x = gen()() & 1;
    else x = std::trunc(u(gen()) * (cf::is_unsigned_int(t) ? 250 : 120));
    v[static_cast<size_t>(i)] = x;
  }
  cf::Array a = cf::from_host(v.data(), cf::f64, s);
  if (t != cf::f64) a = a.astype(t);
  a.eval();
  return a;
}

struct Interpreted {
  std::string refusal;
  std::vector<HostArray> out;
  int regs = 0, instrs = 0, n_pre = 0;
  bool narrow = false;
  std::string text;
};

// The outputs (one iteration space) as one group: bytecode, patched as the executor patches
// a kernel's parameters, run on the host interpreter into new host buffers.
Interpreted interpret(const std::vector<cf::Array>& outs) {
  std::vector<NodePtr> roots;
  for (const auto& a : outs) roots.push_back(a.node());
  GraphScan scan;
  scan_graph(roots, {}, scan);
  LeafBinding bind{[&](const Node* n) { return scan.leaf_index(n); }, [](const Node*) { return true; },
                   [](const Node*) { return -1; }};
  std::vector<EwOutput> eo;
  for (size_t i = 0; i < roots.size(); ++i)
    eo.push_back(EwOutput{roots[i], contiguous_layout(roots[i]->shape()), static_cast<int>(i), true});
  BytecodeProgram prog = compile_elementwise_bytecode(roots[0]->shape(), eo, bind);
  Interpreted r;
  r.refusal = prog.refusal;
  if (!r.refusal.empty()) return r;
  std::vector<void*> ptrs;
  for (const auto& n : roots) {
    HostArray h;
    h.dtype = n->dtype;
    h.shape = n->shape();
    h.bytes.assign(static_cast<size_t>(n->numel() * cf::itemsize(n->dtype)), 0xA5);
    r.out.push_back(std::move(h));
  }
  for (auto& h : r.out) ptrs.push_back(h.bytes.data());
  ScanSource src(scan);
  std::vector<unsigned char> bytes;
  apply_patches(bytes, prog.spec, src, ptrs, nullptr);
  const auto* p = reinterpret_cast<const CfiProgram*>(bytes.data());
  r.regs = p->n_regs;
  r.instrs = p->n_instrs;
  r.narrow = p->narrow != 0;
  r.n_pre = p->n_pre;
  r.text = disassemble(*p);
  run_bytecode_on_host(*p);
  return r;
}

// Number of elements of `got` that differ from the reference (NaN equals NaN).
int64_t mismatches(const HostArray& got, const HostArray& want, std::string& first) {
  REQUIRE(got.dtype == want.dtype);
  REQUIRE(got.size() == want.size());
  int64_t bad = 0;
  const int sz = cf::itemsize(got.dtype);
  for (int64_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(got.bytes.data() + i * sz, want.bytes.data() + i * sz, static_cast<size_t>(sz)) == 0) continue;
    const double g = got.get_double(i), w = want.get_double(i);
    if (cf::is_float(got.dtype) && std::isnan(g) && std::isnan(w)) continue;
    if (bad++ == 0) first = fmt::format("element {}: interpreter {} reference {}", i, g, w);
  }
  return bad;
}

void check_group(const std::vector<cf::Array>& outs, const std::string& what) {
  Interpreted r = interpret(outs);
  REQUIRE_MESSAGE(r.refusal.empty(), what << ": " << r.refusal);
  std::vector<NodePtr> roots;
  for (const auto& a : outs) roots.push_back(a.node());
  std::vector<HostArray> want = reference_evaluate(roots);
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string first;
    CHECK_MESSAGE(mismatches(r.out[i], want[i], first) == 0, what << " output " << i << ": " << first << "\n" << r.text);
  }
}

}  // namespace

TEST_CASE("the interpreter's storage types are the kernels'") {
  for (cf::DType t : kAllDTypes) CHECK(std::string(bc::kStorageCType[static_cast<int>(t)]) == std::string(cf::info(t).cuda_type));
  CHECK(bc::kCodeCount < 65536);
}

TEST_CASE("every op row on every dtype it takes runs on the host interpreter as the reference computes it") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Shape shape{3, 343};  // 1029 elements: the last tile is partly past the end
  int checked = 0;
  cufuse_test::for_each_op_case([&](const OpRow& row, cf::DType t, const cf::DType* in, const OpTyping&) {
    cf::Array a = random_array(in[0], shape), b = random_array(in[1], shape, cufuse_test::small_second_operand(row, t)),
              c = random_array(in[2], shape);
    cf::Array r = row.arity == 1 ? cf::apply(row.name, {a}) : row.arity == 2 ? cf::apply(row.name, {a, b}) : cf::apply(row.name, {a, b, c});
    check_group({r}, fmt::format("{} {}", row.name, cf::name(t)));
    ++checked;
  });
  CHECK(checked > 500);
}

TEST_CASE("every cast between dtypes runs on the host interpreter as the reference computes it") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (cf::DType from : kAllDTypes) {
    cf::Array a = random_array(from, cf::Shape{517});
    for (cf::DType to : kAllDTypes) check_group({a.astype(to)}, fmt::format("astype {} -> {}", cf::name(from), cf::name(to)));
  }
}

TEST_CASE("mixed dtypes, weak scalars, half rounding between ops") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Shape s{1000};
  cf::Array h = random_array(cf::f16, s), b = random_array(cf::bf16, s), i8 = random_array(cf::i8, s),
            u8 = random_array(cf::u8, s), x = random_array(cf::f32, s), m = random_array(cf::bool_, s);
  check_group({(h * 3.0 + h) / 7.0}, "f16 chain");                       // rounded to f16 after each op
  check_group({cf::sqrt(cf::abs(b)) + b * 2}, "bf16 chain");
  check_group({i8 + h}, "i8 + f16");
  check_group({u8 * x - 1}, "u8 * f32 - weak int");
  check_group({cf::where(m, i8, u8)}, "where(bool, i8, u8) -> i16");
  check_group({cf::exp(i8), cf::sin(u8)}, "float ops of integers (f16, f16)");
  check_group({(i8 > u8) & m, cf::logical_xor(x, h)}, "compares and logicals");
  check_group({i8 / u8}, "true_divide of integers (f64)");
}

TEST_CASE("broadcasting, strides, reversed and transposed reads, several outputs") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array a = random_array(cf::f32, cf::Shape{37, 41}), col = random_array(cf::f64, cf::Shape{37, 1}),
            row = random_array(cf::i32, cf::Shape{41}), big = random_array(cf::f32, cf::Shape{41, 37});
  cf::Array t = big.T();                                      // a transposed read
  cf::Array rev = a[{cf::slice(cf::none, cf::none, -1), cf::slice(cf::none, cf::none, 2)}];  // (37, 21), negative strides
  check_group({a * col + row}, "broadcast column and row");
  check_group({a + t, cf::maximum(a, t) * 2.0f}, "two outputs over a transposed input");
  check_group({rev - 1.5f}, "reversed and strided");
  cf::Array x = random_array(cf::f32, cf::Shape{2, 3, 4, 5}), y = random_array(cf::f32, cf::Shape{5});
  check_group({x.transpose({3, 1, 0, 2}) * 1.0f + random_array(cf::f32, cf::Shape{1})}, "4-d permuted");
  check_group({x + y, x * y, x - y}, "three outputs");
  cf::Array s = random_array(cf::f64, cf::Shape{});
  check_group({s * 2.0 + 1.0}, "0-d");
}

TEST_CASE("registers are reused along a long chain") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array a = random_array(cf::f32, cf::Shape{257});
  cf::Array y = a;
  for (int i = 0; i < 150; ++i) y = i % 3 == 0 ? y * 1.001f : i % 3 == 1 ? y + a : cf::tanh(y);
  Interpreted r = interpret({y});
  REQUIRE(r.refusal.empty());
  CHECK(r.regs <= 3);
  CHECK(r.instrs >= 150);
  check_group({y}, "chain of 150 ops");
}

TEST_CASE("programs whose registers are all 4 bytes or less run on the narrow core") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Shape s{16 * 3 * 5 + 7};  // the last tile partly past the end, for some of the 3 threads
  cf::Array x = random_array(cf::f32, s), i = random_array(cf::i32, s), h = random_array(cf::f16, s),
            m = random_array(cf::bool_, s), d = random_array(cf::f64, s);
  // W1: its two scalars read by the multiply and the add themselves (no CONST, no register).
  // Without contraction (CUFUSE_FMA=0): W1's multiply and add read their scalars themselves.
  Interpreted r;
  {
    FmaScope no_fma(false);
    cf::Array w1 = (x * 2.5f + 1) * cf::sin(x) - cf::exp(-x * x) + cf::sqrt(cf::abs(x));
    r = interpret({w1});
    REQUIRE(r.refusal.empty());
    CHECK(r.narrow);
    CHECK(r.n_pre == 0);
    CHECK(r.text.find("const") == std::string::npos);
    // x loaded into the accumulator and read from there.
    CHECK(r.text.find("acc = multiply.float acc, #0") != std::string::npos);
    check_group({w1}, "W1 without fma (narrow)");
  }
  // Contracted (the default): x * 2.5 + 1 and x * x negated into fma, still narrow. A result
  // the next accumulator case reads stays in the accumulator, no register (3 of them: x's, the
  // first fma's and the sine's), the store takes the last sum from there.
  cf::Array w1 = (x * 2.5f + 1) * cf::sin(x) - cf::exp(-x * x) + cf::sqrt(cf::abs(x));
  r = interpret({w1});
  REQUIRE(r.refusal.empty());
  CHECK(r.narrow);
  CHECK(r.n_pre == 0);
  CHECK(r.text.find("fma.float acc, #0, #1") != std::string::npos);
  CHECK(r.text.find("acc = exp.float acc") != std::string::npos);
  CHECK(r.text.find("<- acc") != std::string::npos);
  CHECK(r.regs <= 3);
  check_group({w1}, "W1 (narrow, fma)");
  // The accumulator read twice by one instruction; a three-source case (where) reading it and a
  // constant; a result kept in registers across a rolled case (sin), which leaves the accumulator.
  cf::Array e = cf::exp(x);
  r = interpret({e * e});
  CHECK(r.text.find("multiply.float acc, acc") != std::string::npos);
  check_group({e * e}, "the accumulator as both operands (narrow)");
  check_group({cf::where(x > 0.25f, 2.0f, cf::abs(x) - 1.0f), cf::sin(x * 3.0f) + x},
              "a three-source case from the accumulator and a constant, a rolled case between (narrow)");
  check_group({1.0f - x, 2.0f / x, cf::maximum(x, 0.25f), 0.5f < x, x >= -0.5f}, "a scalar as either operand (narrow)");
  // A scalar a rolled case reads (arctan2 is no accumulator case): set once a thread (code[0,
  // n_pre)), its register kept; where reads its scalar from the constants.
  r = interpret({cf::arctan2(x, 0.5f) * x, cf::where(m, x, 2.0f) * x});
  CHECK(r.narrow);
  CHECK(r.n_pre == 1);
  CHECK(r.text.find("const") < r.text.find("load"));
  check_group({cf::arctan2(x, 0.5f) * x, cf::where(m, x, 2.0f) * x}, "a pinned scalar (narrow)");
  check_group({cf::where(m, x, h) + i}, "where over f32 and f16, an int32 (narrow)");
  CHECK(interpret({cf::where(m, x, h) + i}).narrow == false);  // int32 + float32 computes in float64
  CHECK(interpret({cf::where(m, x, h)}).narrow);
  check_group({(i * 3 + 1) % 7, i > 2, x.astype(cf::i16)}, "int32 arithmetic, a compare, a cast (narrow)");
  CHECK(interpret({(i * 3 + 1) % 7, i > 2, x.astype(cf::i16)}).narrow);
  // float64 values, and an iteration space of two dims with a broadcast row, run as before.
  CHECK_FALSE(interpret({d * 2.0}).narrow);
  cf::Array a = random_array(cf::f32, cf::Shape{37, 41}), row = random_array(cf::f32, cf::Shape{41}),
            big = random_array(cf::f32, cf::Shape{41, 37});
  CHECK(interpret({a * row - 1.5f}).narrow);
  check_group({a * row - 1.5f, big.T() + 1.0f}, "two dims, a broadcast row, a transposed read (narrow)");
  // More than 8 scalars: none pinned, their registers reused.
  cf::Array y = x;
  for (int k = 0; k < 12; ++k) y = cf::power(y, 1.0f + 0.01f * k) + cf::cos(x);
  r = interpret({y});
  CHECK(r.narrow);
  CHECK(r.n_pre == 0);
  check_group({y}, "twelve scalars (narrow, none pinned)");
  // A register file of 32 threads past CFI_SMEM_BYTES in 4 * CFN_TILE-byte registers: the general
  // core. v0 + (v1 + (... + v25)) computes every v_k before its first add: 26 values live.
  std::vector<cf::Array> v;
  for (int k = 0; k < 26; ++k) v.push_back(cf::sin(x * (1.0f + k)));
  cf::Array deep = v[25];
  for (int k = 24; k >= 0; --k) deep = v[static_cast<size_t>(k)] + deep;
  r = interpret({deep});
  REQUIRE(r.refusal.empty());
  CHECK(r.regs * CFN_TILE * 4 * 32 > CFI_SMEM_BYTES);
  CHECK_FALSE(r.narrow);
  check_group({deep}, "26 values live together (general)");
}

TEST_CASE("groups the interpreter cannot run are refused with a reason") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array a = random_array(cf::f32, cf::Shape{64});
  CHECK(interpret({a + cf::arange(64.0f)}).refusal.find("generator") != std::string::npos);
  cf::Array idx = cf::from_host(std::vector<int64_t>{3, 1, 2}.data(), cf::i64, cf::Shape{3});
  CHECK(interpret({cf::take(a * 2, idx)}).refusal.find("gather") != std::string::npos);
  cf::Array y = a;
  for (int i = 0; i < 500; ++i) y = y + a;
  const std::string why = interpret({y}).refusal;
  CHECK(why.find("program limits") != std::string::npos);
  CHECK(why.find("instructions") != std::string::npos);
  std::vector<cf::Array> many;
  cf::Array sum = a;
  for (int i = 0; i < 30; ++i) sum = sum + random_array(cf::f32, cf::Shape{64});
  CHECK(interpret({sum}).refusal.find("arrays read or written") != std::string::npos);
}
