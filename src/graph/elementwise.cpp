// src/graph/elementwise.cpp: elementwise nodes from operands, and the public op functions.
#include "graph/elementwise.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>

#include <fmt/format.h>

#include "core/node_device.hpp"
#include "core/registry.hpp"
#include "cufuse/ops.hpp"
#include "graph/realize.hpp"
#include "graph/size_check.hpp"
#include "graph/tracing.hpp"
#include "graph/views.hpp"
#include "runtime/context.hpp"

namespace cufuse {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const int nd = std::max(a.ndim(), b.ndim());
  Shape out(static_cast<size_t>(nd), 1);
  for (int i = 0; i < nd; ++i) {
    int64_t da = i < nd - a.ndim() ? 1 : a[i - (nd - a.ndim())];
    int64_t db = i < nd - b.ndim() ? 1 : b[i - (nd - b.ndim())];
    if (da != db && da != 1 && db != 1)
      throw ValueError(fmt::format("operands could not be broadcast together with shapes {} {}",
                                   to_string(a), to_string(b)));
    out[i] = da == 1 ? db : da;
  }
  detail::check_size(out, 1, "broadcast");
  return out;
}

namespace detail {

NodePtr broadcast_node(const NodePtr& n, const Shape& shape) {
  if (n->shape() == shape) return n;
  const Shape& s = n->shape();
  bool ok = s.ndim() <= shape.ndim();
  for (int i = 0; ok && i < s.ndim(); ++i) {
    int64_t t = shape[shape.ndim() - s.ndim() + i];
    ok = s[i] == t || s[i] == 1;
  }
  if (!ok)
    throw ValueError(fmt::format("operands could not be broadcast together with remapped shapes: "
                                 "{} and requested shape {}", to_string(s), to_string(shape)));
  check_size(shape, itemsize(n->dtype), "broadcast_to");
  Movement m{Movement::Broadcast, shape, {}, {}, {}, {}};
  return apply_movement(n, m);
}

bool can_cast_same_kind(DType from, DType to) {
  if (can_cast_safe(from, to)) return true;
  auto rank = [](DType t) {
    switch (kind(t)) {
      case DKind::Bool: return 0;
      case DKind::UInt: return 1;
      case DKind::Int: return 2;
      case DKind::Float: return 3;
      default: return 4;  // complex: x_f32 += z_c64 is refused, as NumPy refuses it
    }
  };
  return rank(from) <= rank(to);
}

static NodePtr finish(NodePtr n) {
  maybe_auto_eval(n);
  return n;
}

NodePtr cast_node(const NodePtr& n, DType t, bool always) {
  if (n->dtype == t && !always) return n;
  if (n->k() == NodeKind::Scalar) return make_scalar(n->scalar, t, n->shape());
  InputVec ins;
  ins.push_back(n);
  return finish(make_elementwise(static_cast<uint16_t>(Op::Cast), t, n->shape(), std::move(ins)));
}


// cmp(a, b) for a signed integer and a uint64 (either order), exactly: where the uint64 is
// past INT64_MAX the answer is known from the op alone; elsewhere both fit in int64.
static NodePtr exact_int_compare(Op op, const NodePtr& a, const NodePtr& b, const Shape& shape) {
  const bool u_left = is_unsigned_int(a->dtype);
  const NodePtr& u = u_left ? a : b;
  auto bin = [&](Op o, DType t, NodePtr x, NodePtr y) {
    InputVec ins;
    ins.push_back(std::move(x));
    ins.push_back(std::move(y));
    return finish(make_elementwise(static_cast<uint16_t>(o), t, shape, std::move(ins)));
  };
  NodePtr big = bin(Op::Greater, DType::Bool, cast_node(u, DType::UInt64),
                    make_scalar(Scalar::typed(Scalar(uint64_t(INT64_MAX)), DType::UInt64), DType::UInt64, shape));
  NodePtr cmp = bin(op, DType::Bool, cast_node(a, DType::Int64, false), cast_node(b, DType::Int64, false));
  // The uint64 side is larger than any int64.
  bool when_big = false;
  switch (op) {
    case Op::Less: case Op::LessEqual: when_big = !u_left; break;
    case Op::Greater: case Op::GreaterEqual: when_big = u_left; break;
    case Op::NotEqual: when_big = true; break;
    default: when_big = false; break;  // Equal
  }
  InputVec ins;
  ins.push_back(std::move(big));
  ins.push_back(make_scalar(Scalar::typed(Scalar(when_big), DType::Bool), DType::Bool, shape));
  ins.push_back(std::move(cmp));
  return finish(make_elementwise(static_cast<uint16_t>(Op::Where), DType::Bool, shape, std::move(ins)));
}

// A C++ scalar operand's leaf. Scalar leaves never change once made, so the last few are
// kept per thread and a repeated constant (`x * 3` in a loop) takes the same leaf instead of
// a new node each time. Not while a fuse() trace runs: the trace marks its scalar leaves
// (Node::varies) and must see one leaf per operand.
static NodePtr scalar_operand(const Scalar& value, DType t, const Shape& shape) {
  if (fuse_is_tracing()) return make_scalar(value, t, shape);
  struct Entry {
    Scalar value;
    NodePtr node;
  };
  constexpr int kWays = 8;
  struct Cache {
    Entry e[kWays];
    int next = 0;
    // Makes (and drops) a node first, so that the thread's node free list exists before this
    // cache and outlives it at thread exit, when the cached leaves go back to it.
    Cache() { (void)new_node(NodeKind::Scalar); }
  };
  thread_local Cache cache;
  for (auto& e : cache.e)
    if (e.node && e.node->dtype == t && same_scalar(e.value, value) && e.node->shape() == shape) return e.node;
  NodePtr leaf = make_scalar(value, t, shape);
  Entry& e = cache.e[cache.next];
  cache.next = (cache.next + 1) % kWays;
  e.value = value;
  e.node = leaf;
  return leaf;
}

// NumPy 2 picks a ufunc's loop as if a Python int had the array's integer dtype, then
// converts the int to the loop's dtype: an int that does not fit the array's dtype is an
// OverflowError only where that loop is an integer one. Ops whose loop for integers is a
// float one (true_divide: float64; arctan2, hypot, copysign: the float that holds the
// integer) take the int as that float. Returns the loop's dtype, or `strong` for an
// integer loop.
static DType float_loop_for_weak_int(Op op, DType strong, int n, DType cast_to) {
  const DType probe[3] = {strong, strong, strong};
  const OpTyping ty = type_op(op, probe, n, cast_to);
  return is_float(ty.compute[0]) ? ty.compute[0] : strong;
}

// Config::contract_fma (CUFUSE_FMA): the process's override of the setting, -1 for none.
struct FmaSwitch {
  static constexpr StateSlot kSlot = StateSlot::FmaSwitch;
  std::atomic<int> override_{-1};
};
// The NumpyRounding scopes alive on this thread (per thread: a builder's own statements).
static thread_local int numpy_rounding_depth = 0;
NumpyRounding::NumpyRounding() { ++numpy_rounding_depth; }
NumpyRounding::~NumpyRounding() { --numpy_rounding_depth; }

bool contract_fma_setting() {
  const int o = runtime().state<FmaSwitch>().override_.load(std::memory_order_relaxed);
  return o < 0 ? settings().fma : o != 0;
}
bool contract_fma_enabled() { return numpy_rounding_depth == 0 && contract_fma_setting(); }
void set_contract_fma(bool on) { runtime().state<FmaSwitch>().override_.store(on ? 1 : 0, std::memory_order_relaxed); }

// Rule `contract-multiply-add`: a float32 or float64 `a * b + c`, `c + a * b`, `a * b - c` or
// `c - a * b` whose product is a temporary of the expression (not a named array: contraction
// within one expression, as C++'s -ffp-contract=on) and a pending multiply of the result's dtype is built as one
// Fma(a, b, +-c) / Fma(-a, b, c), rounded once, as CuPy's NVRTC default, torch.compile's Triton
// and XLA contract it. The graph holds the Fma, so every backend (kernels, interpreter, host
// reference, CLI) rounds it alike. Where both operands are products the second is contracted
// (`m *= b1; m += k * g` and `b1 * m + k * g` give the same node). Not a product that is a
// pending write in place (its node is its array's new version) or has been evaluated.
// `mul_in`: the multiply's operands, read under graph_mutex() (realization drops them).
static int fma_candidate(Op op, const Operand* const* argp, const NodePtr* const* nodes, DType result,
                         NodePtr mul_in[2]) {
  if ((op != Op::Add && op != Op::Subtract) || (result != DType::Float32 && result != DType::Float64)) return -1;
  for (int i = 1; i >= 0; --i) {
    // An operator's temporary (`x * y` in `x * y + z`), never a named array: as C++'s
    // -ffp-contract=on, within an expression, not across statements.
    if (!argp[i]->is_array() || !argp[i]->temporary()) continue;
    const Node& m = **nodes[i];
    if (m.k() != NodeKind::Elementwise || m.op != static_cast<uint16_t>(Op::Multiply) || m.dtype != result) continue;
    std::lock_guard<std::recursive_mutex> lk(graph_mutex());
    if (m.k() != NodeKind::Elementwise || m.dest || m.inputs.size() != 2) continue;
    mul_in[0] = m.inputs[0];
    mul_in[1] = m.inputs[1];
    return i;
  }
  return -1;
}

NodePtr elementwise_node(Op op, const Operand* const* argp, int n, DType cast_to) {
  const OpRow& row = op_row(op);
  // The operands by reference: copying one that holds a temporary would count a reference.
  auto args = [argp](int i) -> const Operand& { return *argp[i]; };
  if (n != row.arity)
    throw ValueError(fmt::format("{} takes {} argument(s), got {}", row.name, row.arity, n));
  // Which arguments take part in dtype promotion (where's condition does not).
  auto promotes = [&](int i) { return !(row.rule == TypeRule::Where && i == 0) && row.rule != TypeRule::Logical; };

  const NodePtr* nodes[3] = {};  // the operands' nodes, not copied (the Arrays outlive the call)
  bool have_strong = false;
  DType strong = DType::Bool;
  // The result's shape: the first array's, until broadcasting makes a new one.
  const Shape* shp = nullptr;
  Shape broadcast;
  bool broadcasts = false;  // some array operand's shape is not the result's
  for (int i = 0; i < n; ++i) {
    if (args(i).is_array()) {
      const Array& a = args(i).array();
      if (!a.defined()) throw ValueError(fmt::format("{}: argument {} is an empty Array handle", row.name, i));
      nodes[i] = &a.node();
      const Node& node = **nodes[i];
      if (promotes(i)) {
        strong = have_strong ? promote_types(strong, node.dtype) : node.dtype;
        have_strong = true;
      }
      if (!shp) {
        shp = &node.shape();
      } else if (shp != &node.shape() && !(*shp == node.shape())) {
        broadcast = broadcast_shapes(*shp, node.shape());
        shp = &broadcast;
        broadcasts = true;
      }
    }
  }
  check_same_device(nodes, n, row.name);  // arrays of two devices: an error naming both
  // Weak scalars take the dtype NumPy 2 gives a Python scalar next to the strong operands.
  DType dts[3];
  for (int i = 0; i < n; ++i) {
    if (args(i).is_array()) {
      dts[i] = (*nodes[i])->dtype;
      continue;
    }
    const Scalar& s = args(i).scalar();
    DType t = s.dtype();  // a strong scalar's dtype, or the default for a weak one
    if (s.weak() && promotes(i) && have_strong) {
      switch (s.kind()) {
        case Scalar::Kind::Bool: t = strong; break;
        case Scalar::Kind::Int:
        case Scalar::Kind::UInt:
          if (is_bool(strong)) {
            t = s.dtype();
          } else if (is_float(strong)) {
            t = strong;
          } else if (s.fits(strong)) {
            t = strong;
          } else if (row.rule == TypeRule::Compare) {
            t = s.dtype();  // NumPy 2 compares out-of-range Python ints by value
          } else if (DType loop = float_loop_for_weak_int(op, strong, n, cast_to); loop != strong) {
            t = loop;  // a float loop (int8 / 300, arctan2(int8, 300)): NumPy converts the int to it
          } else {
            throw OverflowError(fmt::format("Python integer {} out of bounds for {} (in {})", s.str(),
                                            name(strong), row.name));
          }
          break;
        case Scalar::Kind::Float: t = is_float(strong) || is_complex(strong) ? strong : DType::Float64; break;
        case Scalar::Kind::Complex:  // NumPy 2: a Python complex takes a float array's precision
          t = is_complex(strong) ? strong
                                 : (is_float(strong) && strong != DType::Float64 ? DType::Complex64 : DType::Complex128);
          break;
      }
    }
    dts[i] = t;
  }
  OpTyping typing = type_op(op, dts, n, cast_to);
  static const Shape kScalarShape{};
  const Shape& shape = shp ? *shp : kScalarShape;
  Node* given_up[3];  // nodes taken from temporaries (register_replacing keeps those still held)
  int n_given_up = 0;
  auto operand = [&](int i) -> NodePtr {
    if (!args(i).is_array()) return scalar_operand(args(i).scalar(), dts[i], shape);
    if (broadcasts) return broadcast_node(*nodes[i], shape);
    // A transient operand gives its node up (it holds its own Array: no other operand is it).
    if (Array* t = args(i).temporary())
      if (NodePtr p = std::move(*t).take_node()) {
        given_up[n_given_up++] = p.get();
        return p;
      }
    return *nodes[i];
  };
  NodePtr mul_in[2];
  if (const int mi = n == 2 && cast_to == DType::Bool && contract_fma_enabled()
                         ? fma_candidate(op, argp, nodes, typing.result, mul_in)
                         : -1;
      mi >= 0) {
    const DType in3[3] = {mul_in[0]->dtype, mul_in[1]->dtype, dts[1 - mi]};
    const OpTyping ft = type_op(Op::Fma, in3, 3, cast_to);
    // The negated operand keeps its dtype: only one of the result's (an integer's negation
    // could overflow before its conversion).
    // Of a and b, a constant where there is one (its negation is a constant again).
    auto negatable = [&](int k) { return in3[k] == typing.result; };
    const bool b_first = mul_in[1]->k() == NodeKind::Scalar && mul_in[0]->k() != NodeKind::Scalar;
    const int neg = op == Op::Add ? -1
                    : mi == 0     ? 2
                    : b_first && negatable(1) ? 1
                    : negatable(0) ? 0
                    : negatable(1) ? 1
                                   : -2;
    if (ft.result == typing.result && neg != -2 && (neg < 0 || in3[neg] == typing.result)) {
      NodePtr c = operand(1 - mi);
      // Gives up a temporary product's node (registry); held until the Fma is made (`shape`
      // may be that node's own), then dropped.
      const NodePtr product = operand(mi);
      NodePtr f[3] = {broadcasts ? broadcast_node(mul_in[0], shape) : mul_in[0],
                      broadcasts ? broadcast_node(mul_in[1], shape) : mul_in[1], std::move(c)};
      if (neg >= 0 && f[neg]->k() == NodeKind::Scalar) {  // a constant: its negation, exact
        f[neg] = scalar_operand(Scalar::typed(Scalar(-f[neg]->scalar.to_double()), typing.result), typing.result,
                                f[neg]->shape());
      } else if (neg >= 0) {
        InputVec nin;
        nin.push_back(std::move(f[neg]));
        f[neg] = make_elementwise(static_cast<uint16_t>(Op::Negative), typing.result, shape, std::move(nin));
      }
      NodePtr out = new_elementwise(static_cast<uint16_t>(Op::Fma), typing.result, shape);
      for (auto& x : f) out->inputs.push_back(std::move(x));
      finish_node(*out);
      register_replacing(out.get(), given_up, n_given_up);
      return finish(std::move(out));
    }
  }
  // A signed integer against uint64 promotes to float64, where 2^53 + 1 == 2^53; NumPy 2
  // compares such pairs exactly, and so does this rewrite.
  if (row.rule == TypeRule::Compare && n == 2 && is_integer(dts[0]) && is_integer(dts[1]) &&
      typing.compute[0] == DType::Float64)
    return exact_int_compare(op, operand(0), operand(1), shape);
  NodePtr out = new_elementwise(static_cast<uint16_t>(op), typing.result, shape);
  for (int i = 0; i < n; ++i) out->inputs.push_back(operand(i));
  finish_node(*out);
  // Registered here, before an Array holds it, in the one registry lock that also lets the
  // temporaries' nodes go (core/registry.hpp).
  register_replacing(out.get(), given_up, n_given_up);
  return finish(std::move(out));
}

Array elementwise(Op op, std::initializer_list<const Operand*> args, DType cast_to) {
  return Array(elementwise_node(op, args.begin(), static_cast<int>(args.size()), cast_to));
}

}  // namespace detail

using detail::Op;

// Every kernel row and alias, defined from its row (composites: graph/composites.cpp).
#define CUFUSE_DEFINE_UNARY(fn, id) \
  Array fn(const Operand& x) { return detail::elementwise(Op::id, {&x}); }
#define CUFUSE_DEFINE_BINARY(fn, id) \
  Array fn(const Operand& x1, const Operand& x2) { return detail::elementwise(Op::id, {&x1, &x2}); }
#define CUFUSE_DEFINE_WHERE(fn, id)                                         \
  Array fn(const Operand& condition, const Operand& x, const Operand& y) { \
    return detail::elementwise(Op::id, {&condition, &x, &y});              \
  }
#define CUFUSE_DEFINE_TERNARY(fn, id) \
  Array fn(const Operand& x, const Operand& y, const Operand& z) { return detail::elementwise(Op::id, {&x, &y, &z}); }
#define CUFUSE_DEFINE_CAST(fn, id)
#define CUFUSE_DEFINE_KERNEL(id, fn, sym, sig, ...) CUFUSE_DEFINE_##sig(fn, id)
#define CUFUSE_DEFINE_ALIAS(fn, id, sig) CUFUSE_DEFINE_##sig(fn, id)
CUFUSE_ELEMENTWISE_OPS(CUFUSE_DEFINE_KERNEL)
CUFUSE_OP_ALIASES(CUFUSE_DEFINE_ALIAS)
#undef CUFUSE_DEFINE_KERNEL
#undef CUFUSE_DEFINE_ALIAS
#undef CUFUSE_DEFINE_UNARY
#undef CUFUSE_DEFINE_BINARY
#undef CUFUSE_DEFINE_WHERE
#undef CUFUSE_DEFINE_TERNARY
#undef CUFUSE_DEFINE_CAST

Array clip(const Operand& x, const Operand& lo, const Operand& hi) {
  Array m = maximum(x, lo);
  return minimum(m, hi);
}

Array astype(const Array& a, DType t) {
  const Operand o(a);
  const Operand* p = &o;
  return Array(detail::elementwise_node(Op::Cast, &p, 1, t));
}

}  // namespace cufuse
