// tests/fuzz_writes.hpp: in-place statements of the fuzz programs (fuzz_program.hpp):
// a op= e, a.assign(e), a[view] = e and a[view] op= e, between the program's instructions.
// The array written is an input, a view of one, or a lazy value (which a write makes memory,
// and whose lazy views see it); it is written through a view (reversed, strided, reversed and
// strided, shifted either way, trimmed, transposed, an int index) and through the program's
// handle or a second handle made when the value was built. The value written is a value of
// the program, a Python scalar, or the written array read again (aliasing): through another
// view (shifted, reversed, transposed) or reduced (max, min). Values built before a write that
// read the memory keep the old values; views of it, and handles on it, see the new ones.
//
// Everything written is exact (the value, and the array it goes into), so memory holds the
// same bits on the device as in the reference, and the bounds of what reads it stay those of
// the instructions. Writes are drawn from a random stream of their own: a program's
// instructions are those its seed makes without writes.
#pragma once
#include <array>

#include "graph/elementwise.hpp"  // can_cast_same_kind: NumPy's rule for op=
#include "runtime/storage.hpp"    // the model writes host memory

namespace fuzz {

// The views a write goes through, and the aliasing reads of the array written.
enum WView : int { Whole, Rev, Step2, Tail, Head, Trans, IntAt, RevStep, Mid, Max, Min };

// x through view `view` along `axis` (IntAt: at `index`; Max: over `axis`, keeping it or not;
// Min: over every axis). Throws cf::Error where there is no such view.
inline cf::Array wview(const cf::Array& x, int view, int axis, int64_t index, bool keepdims = false) {
  const int nd = x.ndim();
  auto along = [&](cf::Index at) {
    if (axis >= nd) throw cf::ValueError("fuzz: no such axis");
    return x.index(axis_index(nd, axis, at));
  };
  const auto none = std::nullopt;
  switch (view) {
    case Whole: return x;
    case Rev: return along(cf::slice(none, none, -1));
    case Step2: return along(cf::slice(1, none, 2));
    case Tail: return along(cf::slice(1, none));
    case Head: return along(cf::slice(none, -1));
    case Trans:
      if (nd < 2) throw cf::ValueError("fuzz: no transpose of fewer than 2 axes");
      return x.T();
    case IntAt: return along(cf::Index(index));
    case RevStep: return along(cf::slice(none, none, -2));
    case Mid: return along(cf::slice(1, -1));
    case Max:
      if (axis >= nd) throw cf::ValueError("fuzz: no such axis");
      return cf::max(x, cf::AxisArg{axis}, keepdims);
    case Min: return cf::min(x);
  }
  throw std::logic_error("fuzz: unknown write view");
}

inline std::string wview_text(int view, int axis, int64_t index, bool keepdims = false) {
  auto idx = [&](const std::string& at) {
    std::string s = "[";
    for (int d = 0; d < axis; ++d) s += ":, ";
    return s + at + "]";
  };
  switch (view) {
    case Whole: return "";
    case Rev: return idx("::-1");
    case Step2: return idx("1::2");
    case Tail: return idx("1:");
    case Head: return idx(":-1");
    case Trans: return ".T";
    case IntAt: return idx(std::to_string(index));
    case RevStep: return idx("::-2");
    case Mid: return idx("1:-1");
    case Max: return ".max(axis=" + std::to_string(axis) + (keepdims ? ", keepdims=True)" : ")");
    case Min: return ".min()";
  }
  return "?";
}

// The in-place ufuncs of cufuse's Array (its operators), with their Python spelling.
inline const std::vector<std::pair<std::string, std::string>>& inplace_ops() {
  static const std::vector<std::pair<std::string, std::string>> ops = {
      {"add", "+"},          {"subtract", "-"},     {"multiply", "*"},     {"true_divide", "/"},
      {"remainder", "%"},    {"bitwise_and", "&"},  {"bitwise_or", "|"},   {"bitwise_xor", "^"},
      {"left_shift", "<<"},  {"right_shift", ">>"}};
  return ops;
}
inline std::string op_symbol(const std::string& op) {
  for (const auto& [n, s] : inplace_ops())
    if (n == op) return s;
  return "?";
}

inline void inplace_op(cf::Array& t, const std::string& op, const cf::Operand& o) {
  if (op == "add") t += o;
  else if (op == "subtract") t -= o;
  else if (op == "multiply") t *= o;
  else if (op == "true_divide") t /= o;
  else if (op == "remainder") t %= o;
  else if (op == "bitwise_and") t &= o;
  else if (op == "bitwise_or") t |= o;
  else if (op == "bitwise_xor") t ^= o;
  else if (op == "left_shift") t <<= o;
  else if (op == "right_shift") t >>= o;
  else throw std::logic_error("fuzz: unknown in-place op " + op);
}

// What is written (an array, or the Python scalar).
inline cf::Operand write_source(const WriteStmt& w, const std::vector<cf::Array>& v, const cf::Array& h) {
  if (w.src == 1) return w.int_scalar ? cf::Operand(static_cast<int64_t>(w.s)) : cf::Operand(w.s);
  if (w.src == 2) return cf::Operand(wview(h, w.rview, w.raxis, 0, w.keepdims));
  return cf::Operand(v[static_cast<size_t>(w.value)]);
}

// Can value t be written: exact (so the memory stays bitwise the reference's), and an input,
// a lazy value, or a view of one but a read-only one (NumPy: broadcast_to, diagonal, and
// einsum's views)?
inline bool writable_target(const Program& p, int t) {
  if (!p.exact[static_cast<size_t>(t)]) return false;
  while (t >= p.n_inputs()) {
    const Instr& in = p.code[static_cast<size_t>(t - p.n_inputs())];
    if (in.kind == Kind::BroadcastTo || in.kind == Kind::Diagonal || (in.kind == Kind::Einsum && in.einsum_kind == 0))
      return false;
    const bool view = in.kind == Kind::Transpose || in.kind == Kind::Reverse || in.kind == Kind::Step ||
                      in.kind == Kind::IntIndex || in.kind == Kind::Expand || in.kind == Kind::Reshape ||
                      in.kind == Kind::Swap || in.kind == Kind::Squeeze;
    if (!view) return true;  // a lazy value: the write computes it into memory first
    t = in.a;
  }
  return true;
}

// Is the statement valid on the program's (unevaluated) handles: a writable target, an exact
// value, and NumPy's rules: op= gives the view's shape and casts to its dtype 'same_kind';
// an assignment broadcasts into the view. Builds lazily only: nothing is written.
inline int written_root(const Program& p, int t);
inline bool valid_write(const WriteStmt& w, const Program& p, const std::vector<cf::Array>& v) {
  if (w.target < 0 || w.target >= p.n_inputs() + w.at || !writable_target(p, w.target)) return false;
  if (w.src == 0 && (w.value < 0 || w.value >= p.n_inputs() + w.at || !p.exact[static_cast<size_t>(w.value)]))
    return false;
  // copysign reads its sign operand's NaN signs, which are not specified (x86 makes -NaN, the
  // GPU +NaN), so that operand is an input that holds no NaN (Generator::propose); a write
  // (x %= x) could put one there (seed 668613078532): no write into such an input.
  const int root = written_root(p, w.target);
  for (const Instr& in : p.code)
    if (in.kind == Kind::Binary && in.op == "copysign" && in.b == root) return false;
  try {
    const cf::Array& h = v[static_cast<size_t>(w.target)];
    const cf::Array t = wview(h, w.view, w.axis, w.index);
    const cf::Operand src = write_source(w, v, h);
    if (w.op.empty()) {
      if (src.is_array() && !(cf::broadcast_shapes(src.array().shape(), t.shape()) == t.shape())) return false;
      return true;
    }
    const cf::Array r = cf::apply(w.op, {cf::Operand(t), src});
    return r.shape() == t.shape() && cf::detail::can_cast_same_kind(r.dtype(), t.dtype());
  } catch (const cf::Error&) {
    return false;
  }
}

// Runs the statement through the program's handle on the target, or through the second
// handle made with it (`copies`; the program's own is then only read): a op= e and
// a.assign(e) on the handle itself, a[view] op= e and a[view] = e on a view made for the
// statement, as in NumPy. `eager`: evaluated at once.
inline void apply_write(const WriteStmt& w, std::vector<cf::Array>& v, std::vector<cf::Array>& copies, bool eager) {
  cf::Array& h = w.copy ? copies[static_cast<size_t>(w.target)] : v[static_cast<size_t>(w.target)];
  const cf::Operand src = write_source(w, v, h);
  cf::Array view;
  cf::Array& t = w.view == Whole ? h : (view = wview(h, w.view, w.axis, w.index));
  if (!w.op.empty()) inplace_op(t, w.op, src);
  else if (src.is_array()) t.assign(src.array());
  else t.assign(src.scalar());
  if (eager) h.eval();
}

// "v3[1:, ::-1] += v3[:-1, ::-1]", "h5[...] = 2.5    # h5.assign(2.5)".
inline std::string write_text(const WriteStmt& w) {
  const std::string h = (w.copy ? "h" : "v") + std::to_string(w.target);
  const std::string target = h + wview_text(w.view, w.axis, w.index);
  std::string src = w.src == 1   ? (w.int_scalar ? std::to_string(static_cast<int64_t>(w.s)) : num(w.s))
                    : w.src == 2 ? h + wview_text(w.rview, w.raxis, 0, w.keepdims)
                                 : "v" + std::to_string(w.value);
  if (!w.op.empty()) return target + " " + op_symbol(w.op) + "= " + src;
  if (w.view == Whole) return h + "[...] = " + src + "    # " + h + ".assign(" + src + ")";
  return target + " = " + src;
}

inline bool reads_value(const Program& p, int o, int r);

// How run_statements runs a program:
//   Lazy:  as a user would: nothing evaluated but the program's early evaluations (values()),
//          every write pending under what reads it;
//   Eager: each value evaluated as soon as it is built, each write at once;
//   Model: the reference: each value computed as it is built by the host reference evaluator
//          over the whole graph (no planning, no kernels), each write's value likewise, then
//          stored element by element into the memory of the view written, by this file:
//          NumPy's semantics spelled out, independent of how cufuse plans, orders or fuses
//          writes. Runs on the reference backend (host memory).
enum class Mode { Lazy, Eager, Model };

// The value whose memory a handle on value t writes into: the input it views, or the lazy
// value it is (a view of). And every such value the program's statements write.
inline int written_root(const Program& p, int t);
inline std::vector<int> written_roots(const Program& p);

// An array's value as new host memory (Model).
inline cf::Array host_array(const cf::detail::HostArray& h) { return cf::from_host(h.bytes.data(), h.dtype, h.shape); }

// Model: the statement's value, computed whole, stored into the memory the view sees.
inline void model_write(const WriteStmt& w, std::vector<cf::Array>& v, std::vector<cf::Array>& copies) {
  cf::Array& h = w.copy ? copies[static_cast<size_t>(w.target)] : v[static_cast<size_t>(w.target)];
  const cf::Array t = wview(h, w.view, w.axis, w.index);
  const cf::detail::NodePtr leaf = t.node();
  if (!leaf->is_materialized()) throw std::logic_error("fuzz: the model writes into memory only");
  const cf::Operand src = write_source(w, v, h);
  cf::Array val = !w.op.empty()       ? cf::apply(w.op, {cf::Operand(t), src})
                  : src.is_array()    ? src.array()
                                      : cf::full(t.shape(), src.scalar(), t.dtype());
  val = cf::astype(val.broadcast_to(t.shape()), t.dtype());  // (op=: same_kind, checked when drawn; =: unsafe)
  const cf::detail::HostArray hv = cf::detail::reference_evaluate(val.node());
  const cf::detail::Layout& l = leaf->layout;
  const size_t item = static_cast<size_t>(cf::itemsize(t.dtype()));
  auto* mem = static_cast<unsigned char*>(leaf->storage->ptr);
  std::vector<int64_t> idx(static_cast<size_t>(l.shape.ndim()), 0);
  for (int64_t k = 0; k < hv.size(); ++k) {
    int64_t at = l.offset;
    for (int d = 0; d < l.shape.ndim(); ++d) at += idx[static_cast<size_t>(d)] * l.strides[static_cast<size_t>(d)];
    std::memcpy(mem + static_cast<size_t>(at) * item, hv.bytes.data() + static_cast<size_t>(k) * item, item);
    for (int d = l.shape.ndim() - 1; d >= 0 && ++idx[static_cast<size_t>(d)] == l.shape[d]; --d) idx[static_cast<size_t>(d)] = 0;
  }
}

// Runs the program's statements in order on these inputs (which the writes change; `mode`
// above): each instruction builds its value (and a second handle on it, for the writes that
// go through one: other values have one handle, which a write may move), each write is done
// through the handles. `snap` (Model): each value as it was built. `opmax`: per
// instruction, the largest |element| of operands a and b and the smallest of b as the
// instruction reads them, where one is a view of an array written (else NaN: `snap` holds it).
struct Run {
  std::vector<cf::Array> v, copies;
};
inline Run run_statements(const Program& p, const std::vector<cf::Array>& inputs, Mode mode, bool twin,
                          std::vector<cf::detail::HostArray>* snap = nullptr,
                          std::vector<std::array<double, 3>>* opmax = nullptr) {
  Run r;
  r.v = inputs;
  auto copied = [&](int id) {
    return std::any_of(p.writes.begin(), p.writes.end(), [&](const WriteStmt& w) { return w.copy && w.target == id; });
  };
  for (int i = 0; i < p.n_inputs(); ++i) r.copies.push_back(copied(i) ? r.v[static_cast<size_t>(i)] : cf::Array());
  if (snap)
    for (const auto& x : inputs) snap->push_back(host_of(x));
  auto early = [&](int id) { return std::find(p.evals.begin(), p.evals.end(), id) != p.evals.end(); };
  const std::vector<int> roots = opmax ? written_roots(p) : std::vector<int>{};
  auto changes = [&](int id) {  // a view of an array some statement writes
    return std::find(roots.begin(), roots.end(), written_root(p, id)) != roots.end();
  };
  size_t w = 0;
  auto writes_at = [&](int at) {
    for (; w < p.writes.size() && p.writes[w].at == at; ++w) {
      if (mode == Mode::Model) model_write(p.writes[w], r.v, r.copies);
      else apply_write(p.writes[w], r.v, r.copies, mode == Mode::Eager);
    }
  };
  for (size_t k = 0; k < p.code.size(); ++k) {
    writes_at(static_cast<int>(k));
    const Instr& in = p.code[k];
    if (opmax) {
      std::array<double, 3> m{NAN, NAN, NAN};
      if (changes(in.a)) m[0] = max_abs(host_of(r.v[static_cast<size_t>(in.a)]));
      if (in.b >= 0 && changes(in.b)) {
        const cf::detail::HostArray hb = host_of(r.v[static_cast<size_t>(in.b)]);
        m[1] = max_abs(hb);
        m[2] = min_abs(hb);
      }
      opmax->push_back(m);
    }
    r.v.push_back(apply_instr(in, r.v, twin));
    if (mode == Mode::Model) {  // a view of memory stays one; anything else becomes memory of its own
      if (!r.v.back().node()->is_materialized()) {
        const cf::detail::HostArray h = cf::detail::reference_evaluate(r.v.back().node());
        r.v.back() = host_array(h);
        if (snap) snap->push_back(h);
      } else if (snap) {
        snap->push_back(host_of(r.v.back()));
      }
    }
    r.copies.push_back(copied(static_cast<int>(r.v.size()) - 1) ? r.v.back() : cf::Array());
    if (mode == Mode::Eager) r.v.back().eval();
    if (mode == Mode::Lazy && p.evals_at_once && early(static_cast<int>(r.v.size()) - 1)) r.v.back().eval();
  }
  writes_at(static_cast<int>(p.code.size()));
  if (mode == Mode::Lazy && !p.evals_at_once)
    for (int id : p.evals) r.v[static_cast<size_t>(id)].eval();
  return r;
}

// Draws the writes of program p (whose handles, unevaluated, are v) from the stream `g`:
// with chance cfg.p_writes, one to three statements between its instructions.
inline void draw_writes(Program& p, const std::vector<cf::Array>& v, const Config& cfg, std::mt19937_64& g) {
  auto coin = [&](double q) { return std::uniform_real_distribution<double>(0, 1)(g) < q; };
  auto irange = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g); };
  if (p.code.empty() || !coin(cfg.p_writes)) return;
  const int n_in = p.n_inputs();
  const int want = static_cast<int>(irange(1, 3));
  std::vector<WriteStmt> ws;
  for (int tries = 0; tries < want * 40 && static_cast<int>(ws.size()) < want; ++tries) {
    WriteStmt w;
    w.at = static_cast<int>(irange(0, static_cast<int64_t>(p.code.size())));
    w.target = static_cast<int>(coin(0.4) ? irange(0, n_in - 1) : irange(0, n_in + w.at - 1));
    // Often a hazard on purpose: after an output is built, into an array it read (the output
    // must keep the old values), or into the array an output views (it must see the write).
    const int o = p.outputs.empty() ? -1 : p.outputs[static_cast<size_t>(irange(0, static_cast<int64_t>(p.outputs.size()) - 1))];
    if (o >= n_in && coin(0.5)) {
      std::vector<int> read;
      for (int r = 0; r < o; ++r)
        if (reads_value(p, o, r)) read.push_back(r);
      const int root = written_root(p, o);
      if (root != o && coin(0.3)) read = {root};
      if (!read.empty()) {
        w.at = static_cast<int>(irange(o - n_in + 1, static_cast<int64_t>(p.code.size())));
        w.target = read[static_cast<size_t>(irange(0, static_cast<int64_t>(read.size()) - 1))];
      }
    }
    const int avail = n_in + w.at;  // values built before the statement
    w.copy = coin(0.3);
    const int nd = v[static_cast<size_t>(w.target)].ndim();
    w.view = coin(0.3) ? Whole : static_cast<int>(irange(Rev, Mid));
    w.axis = static_cast<int>(irange(0, std::max(0, nd - 1)));
    w.index = irange(-2, 2);
    if (coin(0.55)) w.op = inplace_ops()[static_cast<size_t>(irange(0, static_cast<int64_t>(inplace_ops().size()) - 1))].first;
    const int64_t s = irange(0, 9);
    if (s < 4) {  // a value of the program, recent ones more often
      w.src = 0;
      w.value = static_cast<int>(coin(0.5) ? irange(std::max(0, avail - 3), avail - 1) : irange(0, avail - 1));
    } else if (s < 6) {
      w.src = 1;
      w.int_scalar = coin(0.6);
      w.s = w.int_scalar ? static_cast<double>(irange(-3, 5)) : (coin(0.5) ? 0.5 : -2.25);
      // NumPy 2 raises OverflowError for a negative Python int stored into an unsigned array
      if (w.int_scalar && w.op.empty() && w.s < 0 && cf::is_unsigned_int(v[static_cast<size_t>(w.target)].dtype())) w.s = -w.s;
    } else {  // the array written, read again through another view, or reduced
      w.src = 2;
      w.rview = static_cast<int>(irange(Whole, Min));
      if (w.rview == IntAt) w.rview = Rev;
      w.raxis = static_cast<int>(irange(0, std::max(0, nd - 1)));
      w.keepdims = coin(0.5);
      if (w.rview == Whole && w.view == Whole) w.rview = Trans;
    }
    if (!valid_write(w, p, v)) continue;
    ws.push_back(w);
  }
  std::stable_sort(ws.begin(), ws.end(), [](const WriteStmt& a, const WriteStmt& b) { return a.at < b.at; });
  p.writes.insert(p.writes.begin(), ws.begin(), ws.end());  // (before the write after the outputs, if any)
}

inline int written_root(const Program& p, int t) {
  while (t >= p.n_inputs()) {
    const Instr& in = p.code[static_cast<size_t>(t - p.n_inputs())];
    const bool view = in.kind == Kind::Transpose || in.kind == Kind::Reverse || in.kind == Kind::Step ||
                      in.kind == Kind::IntIndex || in.kind == Kind::Expand || in.kind == Kind::Reshape ||
                      in.kind == Kind::Swap || in.kind == Kind::Squeeze;
    if (!view) return t;
    t = in.a;
  }
  return t;
}

inline std::vector<int> written_roots(const Program& p) {
  std::vector<int> roots;
  for (const auto& w : p.writes) {
    const int r = written_root(p, w.target);
    if (std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
  }
  return roots;
}

// Does value `o` read value `r` (through its instructions' operands)?
inline bool reads_value(const Program& p, int o, int r) {
  std::vector<char> seen(static_cast<size_t>(p.n_values()), 0);
  std::vector<int> stack{o};
  while (!stack.empty()) {
    const int x = stack.back();
    stack.pop_back();
    if (x == r) return true;
    if (x < p.n_inputs() || seen[static_cast<size_t>(x)]) continue;
    seen[static_cast<size_t>(x)] = 1;
    const Instr& in = p.code[static_cast<size_t>(x - p.n_inputs())];
    for (int y : {in.a, in.b, in.c})
      if (y >= 0) stack.push_back(y);
  }
  return false;
}

}  // namespace fuzz
