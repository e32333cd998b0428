// tests/test_bytecode_rows.cpp: row programs of the bytecode interpreter on the host (issue
// 35): reduction groups as the planner makes them (codegen/bytecode_rows.cpp), run by the
// generated core compiled for the host (src/reference/eval_bytecode.cpp: the kernel
// cf_interp_rows's own sections and combine tree, with simulated threads), every plan's
// groups in order (elementwise ones on the elementwise interpreter), against the host
// reference evaluator: each reduce op on each dtype, mean/var, prologues and epilogues,
// softmax and layernorm (phases and row outputs), reductions over outer and several axes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include <cufuse/cufuse.hpp>

#include "codegen/bytecode.hpp"
#include "exec/binding.hpp"
#include "op_cases.hpp"
#include "plan/plan.hpp"
#include "plan/signature.hpp"
#include "reference/eval_bytecode.hpp"
#include "reference/evaluator.hpp"

namespace cf = cufuse;
using namespace cf::detail;

namespace {

std::mt19937_64& gen() {
  static std::mt19937_64 g(777);
  return g;
}

// Random values of dtype t (floats of mixed magnitudes and signs, a NaN where `nan`; integers
// over a small range, so that sums and products stay exact).
cf::Array random_array(cf::DType t, const cf::Shape& s, bool nan = false) {
  const int64_t n = cf::numel(s);
  std::vector<double> v(static_cast<size_t>(n));
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t i = 0; i < n; ++i) {
    double x = cf::is_float(t) ? u(gen()) * 4 : std::trunc(u(gen()) * (cf::is_unsigned_int(t) ? 9 : 5) + 4);
    if (t == cf::bool_) x = (gen()() % 3) == 0;
    if (nan && cf::is_float(t) && i % 211 == 17) x = NAN;
    v[static_cast<size_t>(i)] = x;
  }
  cf::Array a = cf::from_host(v.data(), cf::f64, s);
  if (t != cf::f64) a = a.astype(t);
  a.eval();
  return a;
}

struct Run {
  std::string refusal;   // of the first group the interpreter refused
  int row_groups = 0;    // reduction groups run as row programs
  int splits = 1;        // the most blocks a row program split its rows over (CfiProgram::splits)
  bool workspace_ok = true;  // each split program's workspace: the tickets zeroed, the partials after them
  std::vector<HostArray> out;
  std::string text;      // every program's disassembly
};

// Every group of the plan for `outs`, in order, on the host interpreter.
Run interpret(const std::vector<cf::Array>& outs) {
  std::vector<NodePtr> roots;
  for (const auto& a : outs) roots.push_back(a.node());
  GraphScan scan;
  scan_graph(roots, {}, scan);
  Plan plan = make_plan(roots, {});
  std::vector<std::vector<unsigned char>> mem(plan.buffers.size());
  std::vector<void*> ptrs(plan.buffers.size());
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    mem[b].assign(static_cast<size_t>(plan.buffers[b]->numel() * cf::itemsize(plan.buffers[b]->dtype)) + 8, 0xA5);
    ptrs[b] = mem[b].data();
  }
  std::vector<const Node*> written;
  LeafBinding bind{[&](const Node* n) { return scan.leaf_index(n); }, [](const Node*) { return true; },
                   [&](const Node* n) {
                     for (const Node* w : written)
                       if (w == n) return plan.buffer_of(n);
                     return -1;
                   }};
  Run r;
  ScanSource src(scan);
  for (const Group& g : plan.groups) {
    BytecodeProgram prog;
    if (g.kind == GroupKind::Elementwise) {
      std::vector<EwOutput> eo;
      for (size_t k = 0; k < g.outputs.size(); ++k)
        eo.push_back(EwOutput{g.outputs[k], contiguous_layout(g.outputs[k]->shape()), g.output_buffer[k], true});
      prog = compile_elementwise_bytecode(g.iter_shape, eo, bind);
    } else if (g.kind == GroupKind::Reduction) {
      ReductionSpec rs;
      rs.S = g.iter_shape;
      rs.axes = g.axes;
      for (const auto& x : g.reductions) rs.reductions.push_back(x.get());
      rs.phase = g.phase;
      rs.multipass = g.multipass;
      for (size_t k = 0; k < g.outputs.size(); ++k)
        rs.outputs.push_back(RedOutput{g.outputs[k], g.out_kinds[k], contiguous_layout(g.outputs[k]->shape()),
                                       g.output_buffer[k], true});
      prog = compile_reduction_bytecode(rs, bind);
    } else {
      prog.refusal = "not a reduction or elementwise group";
    }
    if (!prog.refusal.empty()) {
      r.refusal = prog.refusal;
      return r;
    }
    std::vector<unsigned char> bytes;
    apply_patches(bytes, prog.spec, src, ptrs, nullptr);
    const auto* p = reinterpret_cast<const CfiProgram*>(bytes.data());
    r.text += disassemble(*p);
    if (g.kind == GroupKind::Reduction) {
      REQUIRE(prog.spec.name == kInterpRowsKernelName);
      r.splits = std::max(r.splits, p->splits);
      CHECK(static_cast<int>(prog.spec.dims.grid[1]) == std::max(1, p->splits));
      if (p->splits > 1) {
        const size_t tickets = static_cast<size_t>(p->rows) * 4;
        r.workspace_ok = r.workspace_ok && prog.spec.workspace_zero_bytes == tickets &&
                         prog.spec.workspace_bytes == (tickets + 15) / 16 * 16 + static_cast<size_t>(p->n_reds) * p->rows * p->splits * 16 &&
                         std::any_of(prog.spec.patches.begin(), prog.spec.patches.end(), [](const Patch& pt) {
                           return pt.src == PatchSrc::Workspace && pt.offset == offsetof(CfiProgram, ws) && pt.index == 0;
                         });
      } else {
        r.workspace_ok = r.workspace_ok && prog.spec.workspace_bytes == 0;
      }
      run_row_bytecode_on_host(*p, 4);
      ++r.row_groups;
    } else {
      run_bytecode_on_host(*p);
    }
    for (const auto& o : g.outputs) written.push_back(o.get());
  }
  for (const auto& n : roots) {
    HostArray h;
    h.dtype = n->dtype;
    h.shape = n->shape();
    const int b = plan.buffer_of(n.get());
    REQUIRE(b >= 0);
    h.bytes.assign(mem[b].begin(), mem[b].begin() + static_cast<std::ptrdiff_t>(n->numel() * cf::itemsize(n->dtype)));
    r.out.push_back(std::move(h));
  }
  return r;
}

// Compares with the reference: exact for integers, bools and arg reductions; `rtol` for floats;
// `want_row_groups` (-1: any) reduction groups ran as row programs.
Run check(const std::vector<cf::Array>& outs, const std::string& what, double rtol = 0, int want_row_groups = 1) {
  Run r = interpret(outs);
  REQUIRE_MESSAGE(r.refusal.empty(), what << ": " << r.refusal);
  if (want_row_groups >= 0) CHECK_MESSAGE(r.row_groups == want_row_groups, what);
  std::vector<NodePtr> roots;
  for (const auto& a : outs) roots.push_back(a.node());
  std::vector<HostArray> want = reference_evaluate(roots);
  for (size_t i = 0; i < outs.size(); ++i) {
    const HostArray& got = r.out[i];
    REQUIRE(got.size() == want[i].size());
    int64_t bad = 0;
    std::string first;
    for (int64_t e = 0; e < got.size(); ++e) {
      const double g = got.get_double(e), w = want[i].get_double(e);
      const bool same = (std::isnan(g) && std::isnan(w)) || g == w ||
                        (cf::is_float(got.dtype) && std::fabs(g - w) <= rtol * std::max(1.0, std::fabs(w)));
      if (!same && bad++ == 0) first = fmt::format("element {}: interpreter {} reference {}", e, g, w);
    }
    CHECK_MESSAGE(bad == 0, what << " output " << i << ": " << bad << " wrong, " << first);
  }
  CHECK_MESSAGE(r.workspace_ok, what);
  return r;
}

// As check(), and the row program(s) split their rows over several blocks.
void check_split(const std::vector<cf::Array>& outs, const std::string& what, double rtol = 0, int want_row_groups = 1) {
  const Run r = check(outs, what, rtol, want_row_groups);
  CHECK_MESSAGE(r.splits > 1, what << ": not split");
}

// The reduce nodes under `root`, inputs first (a later phase's reduction after the ones it reads).
void reduce_nodes(const Node* n, std::vector<const Node*>& out) {
  for (const auto& in : n->inputs) reduce_nodes(in.get(), out);
  if (n->k() == NodeKind::Reduce && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
}

// `root` (over the reductions under it, each reduction's phase its place in that order) as one
// reduction group over `axes` of `S`, written as `kind`, the way the planner makes one of rows
// it keeps on chip, whatever their length: the refusal of a split program's other forms.
BytecodeProgram phased_group(const cf::Array& root, const cf::Shape& S, const cf::Axes& axes, OutKind kind) {
  ReductionSpec rs;
  rs.S = S;
  rs.axes = axes;
  reduce_nodes(root.node().get(), rs.reductions);
  for (size_t k = 0; k < rs.reductions.size(); ++k) rs.phase.push_back(static_cast<int>(k));
  rs.outputs.push_back(RedOutput{root.node(), kind, contiguous_layout(root.node()->shape()), 0, true});
  GraphScan scan;
  scan_graph({root.node()}, {}, scan);
  LeafBinding bind{[&](const Node* n) { return scan.leaf_index(n); }, [](const Node*) { return true; },
                   [](const Node*) { return -1; }};
  return compile_reduction_bytecode(rs, bind);
}

double tol(cf::DType t) { return t == cf::f64 ? 1e-12 : t == cf::f32 ? 1e-5 : 1e-2; }

}  // namespace

TEST_CASE("row programs: each reduce op on each dtype, over the last axis, the first axis and all axes") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (cf::DType t : {cf::f64, cf::f32, cf::f16, cf::bf16, cf::i64, cf::i32, cf::i16, cf::i8, cf::u64, cf::u32, cf::u8}) {
    const std::string dt(cf::name(t));
    cf::Array x = random_array(t, cf::Shape{13, 301});
    for (int axis : {1, 0}) {
      const std::string ax = " axis " + std::to_string(axis) + " " + dt;
      check({cf::sum(x, axis)}, "sum" + ax, tol(t));
      check({cf::max(x, axis)}, "max" + ax);
      check({cf::min(x, axis)}, "min" + ax);
      check({cf::argmax(x, axis)}, "argmax" + ax);
      check({cf::argmin(x, axis)}, "argmin" + ax);
      if (cf::is_float(t)) {
        check({cf::prod(x * 0.25 + 1, axis)}, "prod" + ax, tol(t));
        check({cf::mean(x, axis)}, "mean" + ax, tol(t));
        check({cf::var(x, axis)}, "var" + ax, 4 * tol(t), -1);
      }
    }
    check({cf::sum(x)}, "sum of all " + dt, tol(t));
    check({cf::max(x)}, "max of all " + dt);
  }
}

TEST_CASE("row programs: NaN in max/min/argmax and the nan-forms; any/all; prologue, epilogue, several outputs") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = random_array(cf::f32, cf::Shape{29, 500}, true), y = random_array(cf::f32, cf::Shape{29, 500});
  check({cf::max(x, 1), cf::min(x, 1)}, "max/min with NaN (siblings)");
  check({cf::argmax(x, 1)}, "argmax with NaN");
  check({cf::nanmax(x, 1), cf::nanmin(x, 1)}, "nanmax/nanmin");
  check({cf::any(x > 3.5f, 1), cf::all(y < 3.9f, 1)}, "any/all");
  check({cf::sum(x * y - y, 1) * 0.5f + 1.0f}, "prologue and epilogue", 1e-5);
  check({cf::sqrt(cf::sum(y * y, 1, true)) / 3.0f}, "a norm, keepdims", 1e-5);
  cf::Array b = random_array(cf::f64, cf::Shape{29, 1});
  check({cf::sum(y * b, 1)}, "a broadcast column read in the prologue (f32 * f64)", 1e-12);
  cf::Array c = random_array(cf::i8, cf::Shape{29, 500});
  check({cf::sum(c, 1), cf::max(c, 1)}, "narrow integers accumulate in 32 bits");
}

TEST_CASE("row programs: the row normalizations (softmax, layernorm) in phases with row outputs") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (cf::DType t : {cf::f32, cf::f64, cf::f16}) {
    const std::string dt(cf::name(t));
    cf::Array a = random_array(t, cf::Shape{17, 333});
    cf::Array e = cf::exp(a - cf::max(a, 1, true));
    check({e / cf::sum(e, 1, true)}, "softmax " + dt, 4 * tol(t));
    cf::Array g = random_array(t, cf::Shape{333}), bias = random_array(t, cf::Shape{333});
    cf::Array mu = cf::mean(a, 1, true);
    check({(a - mu) / cf::sqrt(cf::var(a, 1, 0, true) + 1e-5) * g + bias}, "layernorm " + dt, 8 * tol(t));
  }
  // Over a transposed input (the rows strided), and over the middle axis of a 3-d array.
  cf::Array t = random_array(cf::f32, cf::Shape{300, 11}).T();
  cf::Array e = cf::exp(t - cf::max(t, 1, true));
  check({e / cf::sum(e, 1, true)}, "softmax of a transpose", 4e-5);
  cf::Array z = random_array(cf::f32, cf::Shape{5, 64, 7});
  check({cf::sum(z, 1)}, "sum over a middle axis", 1e-5);
  check({cf::sum(z, {0, 2})}, "sum over two axes", 1e-5);
}

// Superinstructions (codegen/bytecode_ops.hpp: kHotOps): softmax's float32 row program runs
// x - max with x loaded and max a row value in one instruction, and the division by the sum
// with its store in another, the max's accumulate with its load in a third (and the same in
// float64): seven dispatches a tile where there were thirteen; the results are checked above.
TEST_CASE("row programs: softmax's loads, row values and store fuse into its float ops") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (cf::DType t : {cf::f32, cf::f64}) {
    const std::string T = t == cf::f32 ? "float" : "double";
    cf::Array a = random_array(t, cf::Shape{9, 100});
    cf::Array e = cf::exp(a - cf::max(a, 1, true));
    const Run r = interpret({e / cf::sum(e, 1, true)});
    REQUIRE(r.refusal.empty());
    CAPTURE(r.text);
    CHECK(r.text.find("= subtract." + T + ".fused load #0, red #0") != std::string::npos);
    CHECK(r.text.find(".fused") != r.text.rfind(".fused"));  // more than one
    CHECK(r.text.find("= true_divide." + T + ".fused r") != std::string::npos);
    CHECK(r.text.find("store") == std::string::npos);  // the row output's store went into the division
    CHECK(r.text.find("acc.max." + T + " #0 <- load #0") != std::string::npos);  // the max's phase: one dispatch
    CHECK(r.text.find(" = load") == std::string::npos);  // every load went into an op or an accumulate
  }
}

TEST_CASE("row programs: what the interpreter refuses, with the reason") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = random_array(cf::f32, cf::Shape{8, 64});
  CHECK(interpret({cf::sum(x + cf::arange(64.0f), 1)}).refusal.find("generator") != std::string::npos);
  cf::Array c = random_array(cf::f32, cf::Shape{8, 64}).astype(cf::c64);
  CHECK(!interpret({cf::sum(c, 1)}).refusal.empty());
}

// A complex operand read by a row program's prologue (abs(z) summed: the matrix norms 1 and
// inf) is refused, as in the elementwise programs: the rows interpreter loaded it as a real
// value and norm(z, 1) came out as zeros in the first, interpreted run on the H200.
TEST_CASE("row programs: a complex operand under a real reduction is refused, not loaded as real") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array re = random_array(cf::f64, {2, 40, 25}), im = random_array(cf::f64, {2, 40, 25});
  for (cf::DType t : {cf::c64, cf::c128}) {
    CAPTURE(cf::name(t));
    cf::Array z = (re + im * cf::Scalar(std::complex<double>(0, 1))).astype(t);
    z.eval();
    for (const cf::Array& r : {cf::sum(cf::abs(z), 1), cf::max(cf::real(z), 2), cf::linalg::norm(z, 1.0, {1, 2})}) {
      Run run = interpret({r});
      CHECK(run.refusal.find("(the interpreter's registers are real)") != std::string::npos);
    }
  }
}

// Few long rows (W2's full reduction: one row of 2^27) split over several blocks, as the
// reduction kernel splits them (codegen/bytecode_rows.cpp: interp_row_dims): each block runs
// the phase over its tiles of the row and writes its partials, the last block combines them in
// a fixed order and runs the epilogue (src/reference/eval_bytecode.cpp runs the blocks in turn).
TEST_CASE("row programs: few long rows split over blocks, their partials combined, then the epilogue") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = (int64_t(1) << 17) + 3;
  cf::Array x = random_array(cf::f32, cf::Shape{n}, true), y = random_array(cf::f32, cf::Shape{n});
  check_split({cf::sum((x - y) * (x - y))}, "W2's form: sum((x-y)*(x-y)) with NaN", 1e-4);
  check_split({cf::sum((y - x * 0.5f) * (y + 1.0f))}, "a full sum", 1e-4);
  check_split({cf::sqrt(cf::sum(y * y)) / 3.0f + 1.0f}, "an epilogue computing from the reduced value", 1e-4);
  check_split({cf::max(y), cf::min(y), cf::argmax(y), cf::argmin(y)}, "max, min, argmax, argmin (siblings)");
  check_split({cf::max(x), cf::argmax(x), cf::nanmax(x), cf::nanargmin(x)}, "NaN: max, argmax, nanmax, nanargmin", 0, -1);
  check_split({cf::mean(y)}, "mean", 1e-5);
  check_split({cf::any(y > 3.999f), cf::all(y > -3.999f)}, "any/all");
  // Several rows, each long: over the last axis and over the first (the rows strided).
  cf::Array z = random_array(cf::f32, cf::Shape{5, 50000});
  check_split({cf::sum(z, 1), cf::max(z, 1), cf::argmin(z, 1)}, "5 rows of 50000: sum, max, argmin", 1e-4);
  check_split({cf::mean(z * z, 1) * 2.0f - 1.0f}, "5 rows: a mean with an epilogue", 1e-4);
  const cf::Array mz = cf::mean(z, 1);
  check_split({cf::mean(z * z, 1) - mz * mz}, "5 rows: a variance from two sibling means (one phase), its epilogue", 1e-4);
  cf::Array zt = random_array(cf::f32, cf::Shape{50000, 3});
  check_split({cf::sum(zt, 0), cf::argmax(zt, 0)}, "3 strided rows of 50000 (axis 0)", 1e-4);
  // Other dtypes: integers exact (argmax over many ties: the smallest index wins across blocks),
  // f64, f16 (accumulated in float32), i8 (in 32 bits).
  cf::Array i = random_array(cf::i32, cf::Shape{3, 40000});
  check_split({cf::sum(i, 1), cf::argmax(i, 1), cf::argmin(i, 1)}, "i32 rows: sum, argmax, argmin with ties");
  check_split({cf::sum(random_array(cf::f64, cf::Shape{n}))}, "f64 full sum", 1e-12);
  check_split({cf::sum(random_array(cf::f16, cf::Shape{2, 40000}), 1)}, "f16 rows", 1e-2);
  check_split({cf::sum(random_array(cf::i8, cf::Shape{n})), cf::max(random_array(cf::u8, cf::Shape{n}))}, "i8 sum, u8 max", 0, -1);
  // Past 2^20 elements (refused before: one block a row).
  check_split({cf::sum(random_array(cf::f32, cf::Shape{(int64_t(1) << 20) + 1}))}, "one row of 2^20 + 1", 1e-4);
  // Rows the planner does not keep on chip (past 32768) make multi-pass groups, one phase each;
  // the later one reads the earlier result through a broadcast view, which row programs refuse
  // (not the split: that refusal names the view).
  cf::Array a = random_array(cf::f32, cf::Shape{40000});
  const cf::Array dev = a - cf::mean(a);
  CHECK(interpret({cf::sum(dev * dev)}).refusal == "an index-remapping view");
  // Short rows are not split.
  const Run short_rows = check({cf::sum(random_array(cf::f32, cf::Shape{8, 5000}), 1)}, "8 rows of 5000", 1e-5);
  CHECK(short_rows.splits == 1);
  CHECK(interpret({cf::sum(random_array(cf::f32, cf::Shape{2048, 40000}), 1)}).splits == 1);  // rows enough
}

// A later phase (softmax's sum reads its max) and row outputs cannot run split in one launch:
// a row too long for one block with them is refused. The planner makes no such group (past
// 32768 elements it runs each reduction as its own group), so the groups are made here.
TEST_CASE("row programs: phases or row outputs over few very long rows are refused, with the reason") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (const int64_t len : {int64_t(64), (int64_t(1) << 20) + 1}) {
    CAPTURE(len);
    cf::Array a = random_array(cf::f32, cf::Shape{2, len});
    cf::Array e = cf::exp(a - cf::max(a, 1, true));
    const BytecodeProgram soft = phased_group(e / cf::sum(e, 1, true), a.shape(), cf::Axes{1}, OutKind::Row);
    const BytecodeProgram two = phased_group(cf::sum(e, 1), a.shape(), cf::Axes{1}, OutKind::Value);
    const BytecodeProgram rows = phased_group(a / cf::max(a, 1, true), a.shape(), cf::Axes{1}, OutKind::Row);
    if (len == 64) {
      CHECK(soft.refusal.empty());
      CHECK(two.refusal.empty());
      CHECK(rows.refusal.empty());
    } else {
      CHECK(soft.refusal.find("2 row(s) of 1048577 elements with 2 phases: the interpreter gives such a row one block") == 0);
      CHECK(two.refusal.find("with 2 phases") != std::string::npos);
      CHECK(rows.refusal.find("with row outputs") != std::string::npos);
    }
  }
}
