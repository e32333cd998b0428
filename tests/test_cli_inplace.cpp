// tests/test_cli_inplace.cpp: in-place writes in cufuse-dump-kernels' programs (src/cli/writes.cpp):
// x op= e, x[idx] = e, x[idx] op= e with NumPy's semantics, and the report of the evaluations
// cufuse runs for them. The tool plans on placeholders; here the evaluations it records are
// run on the reference backend with real memory behind each placeholder slot (`execute`),
// and what the program's results hold is compared with the same program written with
// cufuse's own (eager) writes in C++: handles and views see a write, values built before it
// keep the old values, reads of the memory written through other views go through a
// temporary, and casting and shape errors are NumPy's.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <string>
#include <unordered_map>

#include "cli/evaluator.hpp"
#include "cli/report.hpp"
#include "cli/syntax.hpp"
#include "core/node.hpp"
#include "cufuse/cufuse.hpp"
#include "graph/elementwise.hpp"
#include "runtime/storage.hpp"

namespace cf = cufuse;
namespace cli = cufuse::cli;
using cf::detail::NodePtr;

namespace {

// The arrays a program is given: --arg specs made from real arrays (their dtype and shape).
struct Inputs {
  std::vector<std::pair<std::string, cf::Array>> arrays;
};

cli::Evaluator parsed(const std::string& src, const Inputs& in) {
  cli::Evaluator ev;
  for (const auto& [name, a] : in.arrays) ev.declare(cli::ArgSpec{name, a.dtype(), a.shape()});
  ev.run(cli::parse_program(src));
  return ev;
}

// A copy of the graph under n with each placeholder leaf bound to the memory of its slot.
NodePtr bind_slots(const NodePtr& n, const std::function<NodePtr(const cf::detail::Node&)>& leaf,
             std::unordered_map<const cf::detail::Node*, NodePtr>& memo) {
  if (n->is_placeholder()) return leaf(*n);
  if (n->is_leaf()) return n;
  auto it = memo.find(n.get());
  if (it != memo.end()) return it->second;
  NodePtr c = cf::detail::new_node(n->k());
  c->dtype = n->dtype;
  c->op = n->op;
  c->layout = n->layout;
  c->scalar = n->scalar;
  c->gen = n->gen;
  c->attrs = n->attrs;
  for (const auto& in : n->inputs) c->inputs.push_back(bind_slots(in, leaf, memo));
  cf::detail::finish_node(*c);
  memo.emplace(n.get(), c);
  return c;
}

// Runs the evaluations the program recorded, in order, on real memory (one block per memory,
// shared by its versions), then its results: name -> values (as float64).
std::map<std::string, std::vector<double>> execute(const cli::Evaluator& ev, const Inputs& in,
                                                   const std::vector<std::string>& out = {}) {
  std::map<int, std::shared_ptr<cf::detail::Storage>> memory;  // by the memory's first slot
  const auto& slots = ev.slots();
  for (size_t i = 0; i < in.arrays.size(); ++i) {
    cf::Array copy = in.arrays[i].second.copy().eval();  // the program may write its inputs
    REQUIRE(copy.node()->layout.is_contiguous());
    memory[static_cast<int>(i)] = copy.node()->storage;
  }
  std::unordered_map<const cf::detail::Node*, NodePtr> memo;
  auto leaf = [&](const cf::detail::Node& p) {
    const auto& s = slots.at(static_cast<size_t>(p.placeholder_slot));
    return cf::detail::make_buffer(p.dtype, p.layout, memory.at(s.first_slot));
  };
  auto bound = [&](const cf::Array& a) {
    memo.clear();
    return cf::Array(bind_slots(a.node(), leaf, memo));
  };
  for (const auto& e : ev.evaluations()) {
    if (e.kind == cli::Evaluation::Kind::Write) {
      REQUIRE(e.roots.size() == 1);
      const auto& s = slots.at(static_cast<size_t>(e.target_slot));
      cf::detail::Layout l{e.shape, e.strides, e.offset};
      cf::Array target(cf::detail::make_buffer(e.roots[0].array.dtype(), l, memory.at(s.first_slot)));
      target.assign(bound(e.roots[0].array));
      target.eval();  // (a pending write, once cufuse's writes are lazy: done before what follows)
      continue;
    }
    for (size_t i = 0; i < e.roots.size(); ++i) {  // into new memory of its own
      cf::Array r = bound(e.roots[i].array);
      cf::Array fresh(cf::detail::cast_node(r.node(), r.dtype(), /*always=*/true));
      fresh.eval();
      REQUIRE(fresh.node()->layout.is_contiguous());
      memory[e.slots[i]] = fresh.node()->storage;
    }
  }
  std::map<std::string, std::vector<double>> values;
  for (const auto& r : ev.results(out)) values[r.name] = bound(r.array).astype(cf::f64).to_host<double>();
  return values;
}

std::vector<double> host(const cf::Array& a) { return a.astype(cf::f64).to_host<double>(); }

cf::Array iota(cf::DType t, const cf::Shape& s, double scale = 1, double shift = 0) {
  return (cf::arange(cf::numel(s)).astype(cf::f64) * scale + shift).astype(t).reshape(s).eval();
}

// The ProgramError a program raises, as text ("" if none).
std::string error_of(const std::string& src, const Inputs& in) {
  try {
    parsed(src, in);
  } catch (const cli::ProgramError& e) {
    return e.what();
  }
  return "";
}

cli::Report report_of(const std::string& src, const Inputs& in, const std::vector<std::string>& out = {}) {
  cli::Evaluator ev = parsed(src, in);
  cli::ReportOptions opt;
  opt.compile = false;
  opt.placeholder_names = ev.placeholder_names();
  opt.slots = ev.slots();
  return cli::build_report(ev.evaluations(), ev.results(out), opt);
}

}  // namespace

TEST_CASE("cli in place: the parser takes names and subscripts with '=' and every augmented operator") {
  auto p = cli::parse_program("x += 1; x[1:, ::-1] //= y\nx.T[0] = 2; a = b; x <<= 1");
  REQUIRE(p.statements.size() == 5);
  CHECK(p.statements[0].target == "x");
  CHECK(p.statements[0].op == "+=");
  CHECK(p.statements[0].writes());
  REQUIRE(p.statements[1].subscript);
  CHECK(cli::unparse(*p.statements[1].subscript) == "x[1:, ::-1]");
  CHECK(p.statements[1].op == "//=");
  CHECK(p.statements[1].op_loc.column == 21);
  CHECK(cli::unparse(*p.statements[2].subscript) == "x.T[0]");
  CHECK(p.statements[2].op == "=");
  CHECK(p.statements[3].target == "a");
  CHECK(!p.statements[3].writes());
  CHECK(p.statements[4].op == "<<=");
}

TEST_CASE("cli in place: handles and views see a write; values built before it keep the old ones") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (cf::DType t : {cf::f32, cf::i32}) {
    CAPTURE(cf::name(t));
    const cf::Array x0 = iota(t, {4, 5}), z0 = iota(t, {5}, 2, -3);
    Inputs in{{{"x", x0}, {"z", z0}}};
    const std::string src =
        "y = x\n"
        "v = x[1:, ::-1]\n"
        "w = x * 2\n"
        "s = x.sum(0)\n"
        "x += z\n"
        "x[::2, 1::2] *= 3\n"
        "v[0] -= 1\n"
        "x[-1] = z[::-1]\n"
        "r = v + w[1:]\n";
    auto got = execute(parsed(src, in), in, {"x", "y", "v", "w", "s", "r"});
    // The same with cufuse's own writes.
    cf::Array x = x0.copy().eval(), z = z0;
    cf::Array y = x;
    cf::Array v = x[{cf::slice(1, std::nullopt), cf::slice(std::nullopt, std::nullopt, -1)}];
    cf::Array w = x * 2;
    cf::Array s = cf::sum(x, 0);
    x += z;
    x[{cf::slice(std::nullopt, std::nullopt, 2), cf::slice(1, std::nullopt, 2)}] *= 3;
    v[0] -= 1;
    x[-1].assign(z[{cf::slice(std::nullopt, std::nullopt, -1)}]);
    cf::Array r = v + w[{cf::slice(1, std::nullopt)}];
    CHECK(got["x"] == host(x));
    CHECK(got["y"] == host(x));
    CHECK(got["v"] == host(v));
    CHECK(got["w"] == host(w));
    CHECK(got["s"] == host(s));
    CHECK(got["r"] == host(r));
    CHECK(host(w) == host(x0 * 2));  // (w kept the old values)
  }
}

TEST_CASE("cli in place: reads of the memory written through other views go through a temporary") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array x0 = iota(cf::f64, {5, 5}, 0.5, -3);
  Inputs in{{{"x", x0}}};
  struct Case {
    const char* src;
    std::function<void(cf::Array&)> eager;
  };
  const Case cases[] = {
      {"x += x.T", [](cf::Array& x) { x += x.T(); }},
      {"x[1:] = x[:-1]", [](cf::Array& x) { x[{cf::slice(1, std::nullopt)}].assign(x[{cf::slice(std::nullopt, -1)}]); }},
      {"x[::-1] += x", [](cf::Array& x) { x[{cf::slice(std::nullopt, std::nullopt, -1)}] += x; }},
      {"x[:, 0] -= x.sum(1)", [](cf::Array& x) { x[{cf::_, cf::Index(0)}] -= cf::sum(x, 1); }},
      {"x[1:4, 1:4] = x[:3, 2:] @ x[2:, :3]",
       [](cf::Array& x) {
         x[{cf::slice(1, 4), cf::slice(1, 4)}].assign(
             cf::matmul(x[{cf::slice(std::nullopt, 3), cf::slice(2, std::nullopt)}],
                        x[{cf::slice(2, std::nullopt), cf::slice(std::nullopt, 3)}]));
       }},
      {"x[0] = x[0] * 2", [](cf::Array& x) { x[0].assign(x[0] * 2); }},  // element for element: no temporary
  };
  for (const auto& c : cases) {
    CAPTURE(c.src);
    cli::Evaluator ev = parsed(std::string(c.src) + "\nx", in);
    auto got = execute(ev, in);
    cf::Array x = x0.copy().eval();
    c.eager(x);
    CHECK(got["x"] == host(x));
    const bool temporary = std::string(c.src) != "x[0] = x[0] * 2";
    CHECK((ev.evaluations().front().kind == cli::Evaluation::Kind::Temporary) == temporary);
    CHECK(ev.evaluations().back().kind == cli::Evaluation::Kind::Write);
  }
}

TEST_CASE("cli in place: a lazy array written is computed into memory first; its handles and views see the write") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array x0 = iota(cf::i64, {3, 4});
  Inputs in{{{"x", x0}}};
  const std::string src =
      "a = x * 2\n"
      "b = a\n"
      "va = a[:, 1:]\n"
      "c = a + 1\n"
      "a[0] = -1\n"
      "va += 10\n"
      "t = (a[1:], x)\n"
      "x[2] = 7\n";
  cli::Evaluator ev = parsed(src, in);
  auto got = execute(ev, in, {"a", "b", "va", "c", "x"});
  cf::Array x = x0.copy().eval();
  cf::Array a = x * 2;
  cf::Array b = a;
  cf::Array va = a[{cf::_, cf::slice(1, std::nullopt)}];
  cf::Array c = a + 1;
  a[0].assign(cf::Scalar(-1));
  va += 10;
  x[2].assign(cf::Scalar(7));
  CHECK(got["a"] == host(a));
  CHECK(got["b"] == host(a));
  CHECK(got["va"] == host(va));
  CHECK(got["c"] == host(c));
  CHECK(got["x"] == host(x));
  // a computed into memory, a[0] written, va (a view of that memory) written; then x[2] = 7
  // computes c first (it reads x; t holds views of memory, which need nothing).
  std::vector<cli::Evaluation::Kind> kinds;
  for (const auto& e : ev.evaluations()) kinds.push_back(e.kind);
  using K = cli::Evaluation::Kind;
  CHECK(kinds == std::vector<K>{K::Materialize, K::Write, K::Write, K::Settle, K::Write});
  REQUIRE(ev.evaluations()[3].roots.size() == 1);
  CHECK(ev.evaluations()[3].roots[0].name == "c");
}

TEST_CASE("cli in place: casting and shapes follow NumPy") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array i0 = iota(cf::i32, {2, 3}, 3, -4), f0 = iota(cf::f32, {2, 3}, 0.75, -2);
  const cf::Array u0 = iota(cf::DType::UInt8, {4}, 60);
  Inputs in{{{"i", i0}, {"f", f0}, {"u", u0}}};
  auto err = [&](const std::string& src) { return error_of(src, in); };
  CHECK(err("i += 1.5").find("TypeError: Cannot cast ufunc 'add' output from float64 to int32 with casting rule "
                             "'same_kind'") != std::string::npos);
  CHECK(err("i /= 2").find("Cannot cast ufunc 'divide' output from float64 to int32") != std::string::npos);
  CHECK(err("i[0] += f[0]").find("Cannot cast ufunc 'add' output from float64 to int32") != std::string::npos);
  CHECK(err("i[0, 1] += f[0, 0]").empty());  // one element: NumPy's scalar get, add, set (unsafe)
  CHECK(err("i[:, 1] += f[0, :2]").find("Cannot cast ufunc 'add' output from float64 to int32") != std::string::npos);
  CHECK(err("f[0] += i").find("ValueError: non-broadcastable output operand with shape (3,) doesn't match the "
                              "broadcast shape (2, 3)") != std::string::npos);
  CHECK(err("f[1:] = f[0, :2]").find("ValueError: could not broadcast input array from shape (2,) into shape (1, 3)") !=
        std::string::npos);
  CHECK(err("u[0] = 300").find("OverflowError: Python integer 300 out of bounds for uint8") != std::string::npos);
  CHECK(err("u[:] = -1").find("OverflowError: Python integer -1 out of bounds for uint8") != std::string::npos);
  CHECK(err("i[0] = nan").find("ValueError: cannot convert float NaN to integer") != std::string::npos);
  CHECK(err("u += 300").find("OverflowError") != std::string::npos);
  CHECK(err("b = broadcast_to(f[0], (4, 3))\nb[1] = 0").find("ValueError: assignment destination is read-only") !=
        std::string::npos);
  CHECK(err("b = broadcast_to(f[0], (4, 3))\nb += 1").find("read-only") != std::string::npos);
  CHECK(err("s = f.shape\ns[0] = 1").find("TypeError: 'tuple' object does not support item assignment") !=
        std::string::npos);
  CHECK(err("q += 1").find("name 'q' is not defined") != std::string::npos);
  CHECK(err("f += 'a'").find("TypeError") != std::string::npos);
  CHECK(err("i[0, 0, 0] = 1").find("IndexError") != std::string::npos);
  // Where the error points: the statement.
  try {
    parsed("a = 1\ni += 1.5", in);
    FAIL("no error");
  } catch (const cli::ProgramError& e) {
    CHECK(e.loc().line == 2);
    CHECK(e.loc().column == 1);
  }

  // What is allowed: unsafe casts in assignment and in NumPy's element get-op-set, //= and **=.
  const std::string src =
      "i[0, 0] += f[0, 1]\n"  // int32 + float32 -> float64, set back unsafely
      "i[1, :] = f[1] * 3\n"
      "i[1, 2] = 2.75\n"
      "f //= 0.5\n"
      "f[0] **= 2\n"
      "u <<= 1\n"
      "u[1:] >>= u[:3] & 3\n"
      "i %= 4\n"
      "i ^= 5\n";
  auto got = execute(parsed(src, in), in, {"i", "f", "u"});
  cf::Array i = i0.copy().eval(), f = f0.copy().eval(), u = u0.copy().eval();
  i[0][0].assign(i[0][0] + f[0][1]);
  i[1].assign(f[1] * 3);
  i[1][2].assign(cf::Scalar(2.75));
  f.assign(cf::floor_divide(f, 0.5));
  f[0].assign(cf::power(f[0], 2));
  u <<= 1;
  u[{cf::slice(1, std::nullopt)}] >>= u[{cf::slice(std::nullopt, 3)}] & 3;
  i %= 4;
  i ^= 5;
  CHECK(got["i"] == host(i));
  CHECK(got["f"] == host(f));
  CHECK(got["u"] == host(u));
}

TEST_CASE("cli in place: Python numbers and tuples are rebound, not written") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array x0 = iota(cf::f32, {2, 3});
  Inputs in{{{"x", x0}}};
  auto got = execute(parsed("n = 2\nm = n\nn += 3\nsh = x.shape\nsh += (1,)\nr = x.reshape(sh) * n + m", in), in, {"r"});
  CHECK(got["r"] == host(x0.reshape({2, 3, 1}) * 5 + 2));
  // an array operand makes the name an array, as n = n + x does
  got = execute(parsed("n = 2\nn *= x\nn", in), in);
  CHECK(got.begin()->second == host(x0 * 2));
}

TEST_CASE("cli in place: the report plans each evaluation in order, the write into the memory's view") {
  const cf::Array x0 = cf::placeholder(cf::f32, {4, 5});
  Inputs in{{{"x", x0}}};
  using K = cli::Evaluation::Kind;

  // One write: one kernel into x; x is then in memory, written by it.
  cli::Report r = report_of("x += 1", in);
  REQUIRE(r.evaluations.size() == 2);
  CHECK(r.evaluations[0].kind == "write");
  CHECK(r.evaluations[1].kind == "results");
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].evaluation == 0);
  REQUIRE(r.kernels[0].outputs.size() == 1);
  CHECK(r.kernels[0].outputs[0].in_place);
  CHECK(r.kernels[0].outputs[0].memory == "x");
  CHECK(r.kernels[0].outputs[0].results == std::vector<std::string>{"x += 1"});
  REQUIRE(r.results.size() == 1);
  CHECK(r.results[0].name == "x");
  CHECK(r.results[0].in_memory);
  CHECK(r.results[0].written_by == 0);
  CHECK(r.results[0].kernel == 0);

  // A value that reads x is computed before the write; the result reads both from memory.
  r = report_of("y = x * 2\nx[1:, ::-1] += 1\nx + y", in);
  REQUIRE(r.evaluations.size() == 3);
  CHECK(r.evaluations[0].kind == "settle");
  CHECK(r.evaluations[1].kind == "write");
  CHECK(r.evaluations[1].line == 2);
  REQUIRE(r.kernels.size() == 3);
  for (int k = 0; k < 3; ++k) CHECK(r.kernels[static_cast<size_t>(k)].evaluation == k);
  CHECK(r.kernels[0].outputs[0].results == std::vector<std::string>{"y"});
  const auto& w = r.kernels[1].outputs[0];
  CHECK(w.in_place);
  CHECK(w.shape == cf::Shape{3, 5});
  CHECK(w.strides == cf::Strides{5, -1});
  CHECK(w.offset == 9);
  CHECK(r.kernels[1].group < r.kernels[2].group);
  std::vector<std::string> reads;
  for (const auto& l : r.kernels[2].inputs) reads.push_back(l.label);
  CHECK(reads == std::vector<std::string>{"x (after the write at 2:1)", "y (computed before the write at 2:1)"});
  const std::string text = cli::render_text(r, cli::SourceMode::None);
  CHECK(text.find("in 3 evaluations") != std::string::npos);
  CHECK(text.find("== evaluation 1 (write), at 2:1") != std::string::npos);
  CHECK(text.find("[in place into x, strides (5, -1), offset 9]") != std::string::npos);
  const std::string json = cli::render_json(r, false);
  CHECK(json.find("\"evaluations\": [") != std::string::npos);
  CHECK(json.find("\"in_place\": {\"memory\": \"x\", \"strides\": [5, -1], \"offset\": 9}") != std::string::npos);
  CHECK(json.find("\"evaluation\": 2") != std::string::npos);
  CHECK(cli::render_dot(r).find("evaluation 1 (write): kernel 1") != std::string::npos);

  // A shifted read of the memory written: through a temporary (two kernels), then x in memory.
  r = report_of("x[1:] = x[:-1]", in);
  REQUIRE(r.evaluations.size() == 3);
  CHECK(r.evaluations[0].kind == "temporary");
  CHECK(r.kernels.size() == 2);
  CHECK(r.results[0].written_by == 1);

  // Several writes to several arrays, each its own evaluation today (eager writes).
  cli::Evaluator ev = parsed("x += 1\nx[0] = 2\nx[:, 1] *= x[:, 2]", in);
  std::vector<K> kinds;
  for (const auto& e : ev.evaluations()) kinds.push_back(e.kind);
  CHECK(kinds == std::vector<K>{K::Write, K::Write, K::Temporary, K::Write});
  // (an input never written is still copied to its result, as before)
  r = report_of("x", in);
  CHECK(r.evaluations.empty());
  CHECK(r.kernels.size() == 1);
}
