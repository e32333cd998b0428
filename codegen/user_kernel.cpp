// codegen/user_kernel.cpp: the user-op registry and the CUDA of user ops (see user_kernel.hpp).
//
// A user Elementwise node becomes one block of the kernel body:
//   float v7; { const float _cf_i0 = v3; const float _cf_i1 = p.s0;      <- inputs, by value
//     float _cf_r; { typedef float T; const T x = _cf_i0; const T y = _cf_i1; T z = T();
//       { z = (x - y) * (x - y); }  _cf_r = static_cast<float>(z); }    <- the user's code
//     v7 = _cf_r; }
// The inputs are copied to _cf_ names before any user name is declared, so a parameter
// named like a kernel variable (k, u, p, i...) cannot capture the value it is initialized from.
//
// User code on integers (bool included) is isolated in a __noinline__ function instead,
// called with the input values:
//   int v5; { /* ElementwiseKernel 'pick' */ struct _cf_uv5 { static __device__ __noinline__
//     int f(const int _cf_i0, const int _cf_i1) { int _cf_r; { ... } return _cf_r; } };
//     v5 = _cf_uv5::f(v1, v4); }
// ptxas (sm_90, CUDA 12.8 to 13.x) fuses two 32-bit integer max/min into one VIMNMX3 and can
// drop a negation folded into it (pytorch/pytorch#190973): the user's `z = x > y ? x : y` on
// a fused `negative(x)` and again on its result gave max(x, x) where CuPy, which reads the
// negation from memory, gives |x| (tests/gpu/test_fuzz_gpu, seed 41573830922). Our own
// max/min avoid it (64-bit, codegen/device_helpers.inc), but user code is the user's; a call
// boundary keeps ptxas from fusing across it, so fusion never creates the pattern.
// 64-bit integers too: user code is plain C++, where a signed overflow is undefined, and
// inlined into a fused kernel NVVM folds it into what reads it as if it could not happen:
// sign(-x) became -sign(x), wrong for INT64_MIN (fuzz seed 668319586329), and x*x + x > x
// became x*x > 0 (seed 672694075134). CuPy stores the user's result first, which wraps; a
// call boundary gives the same bits (NVVM does not see the negation through it). Float code
// stays inline (FMNMX has no such fusion), as does a user reduce_expr: its inputs come from
// the (isolated) map_expr.
#include "codegen/user_kernel.hpp"

#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/expr_emitter.hpp"
#include "core/reduce_attrs.hpp"
#include "cufuse/error.hpp"
#include "runtime/context.hpp"

namespace cufuse::detail {

namespace {

constexpr int kMaxUserOps = 0x10000 - kUserOpBase;

// The user-op registry: process state (runtime/context.hpp), never destroyed (kernels may be
// emitted during static teardown).
struct UserOpRegistry {
  static constexpr StateSlot kSlot = StateSlot::UserOps;
  std::mutex mu;
  std::unordered_multimap<size_t, uint16_t> by_hash;
  std::array<std::atomic<const UserOp*>, kMaxUserOps> ops{};  // never freed: ids live for the process
  int next = 0;
};
UserOpRegistry& user_op_registry() { return runtime().state<UserOpRegistry>(); }

size_t hash_of(const UserOp& op) {
  std::hash<std::string> hs;
  size_t h = hs(op.name) ^ (hs(op.code) * 31) ^ (hs(op.typedefs) * 131) ^ (hs(op.identity) * 1031);
  h = h * 1000003 + static_cast<size_t>(op.kind) * 7 + static_cast<size_t>(op.result) * 13 +
      static_cast<size_t>(op.reduce_type);
  for (const auto& v : op.vars) h = h * 31 + hs(v.name) + static_cast<size_t>(v.dtype);
  for (const auto& v : op.outs) h = h * 37 + hs(v.name) + static_cast<size_t>(v.dtype) + static_cast<size_t>(v.init + 1);
  return h;
}

const char* kind_word(UserOp::Kind k) {
  switch (k) {
    case UserOp::Kind::Elementwise: return "ElementwiseKernel";
    case UserOp::Kind::Map: return "ReductionKernel (map_expr)";
    case UserOp::Kind::PostMap: return "ReductionKernel (post_map_expr)";
    case UserOp::Kind::Reduce: return "ReductionKernel (reduce_expr)";
  }
  return "user kernel";
}

// "a + b" -> a comment that cannot end early.
std::string comment_safe(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size() && o.size() < 80; ++i) {
    char c = s[i];
    if (c == '\n' || c == '\r') c = ' ';
    if (c == '*' && i + 1 < s.size() && s[i + 1] == '/') c = '_';
    o += c;
  }
  return o;
}

}  // namespace

bool UserOp::operator==(const UserOp& o) const {
  return kind == o.kind && name == o.name && typedefs == o.typedefs && vars == o.vars && outs == o.outs &&
         result == o.result && code == o.code && identity == o.identity && reduce_type == o.reduce_type;
}

uint16_t intern_user_op(const UserOp& op) {
  UserOpRegistry& r = user_op_registry();
  const size_t h = hash_of(op);
  std::lock_guard<std::mutex> lk(r.mu);
  auto range = r.by_hash.equal_range(h);
  for (auto it = range.first; it != range.second; ++it)
    if (*r.ops[it->second - kUserOpBase].load(std::memory_order_relaxed) == op) return it->second;
  if (r.next >= kMaxUserOps)
    throw NotSupportedError(fmt::format("too many distinct user kernel definitions (more than {}) in one process "
                                        "(registering '{}')", kMaxUserOps, op.name));
  const auto id = static_cast<uint16_t>(kUserOpBase + r.next);
  r.ops[r.next++].store(new UserOp(op), std::memory_order_release);
  r.by_hash.emplace(h, id);
  return id;
}

const UserOp& user_op(uint16_t id) {
  const UserOp* p = is_user_op(id) ? user_op_registry().ops[id - kUserOpBase].load(std::memory_order_acquire) : nullptr;
  if (!p) throw InternalError(fmt::format("op id {} is not a registered user op", id));
  return *p;
}

bool is_user_node(const Node& n) {
  const NodeKind k = n.k();
  return (k == NodeKind::Elementwise || k == NodeKind::Reduce) && is_user_op(n.op);
}

void throw_user_node_on_host(const Node& n) {
  const UserOp& op = user_op(n.op);
  throw NotSupportedError(fmt::format(
      "the host reference cannot run user kernel '{}' ({}: its code is CUDA, `{}`); run it on a device, and "
      "compare it there with the equivalent cufuse expression", op.name, kind_word(op.kind), comment_safe(op.code)));
}

namespace {

bool integer_or_bool(DType t) { return t == DType::Bool || is_integer(t); }

// True when the user code handles an integer or a bool: it is called, not inlined.
bool isolated(const UserOp& op, const Node* n) {
  if (integer_or_bool(n->dtype)) return true;
  for (const auto& in : n->inputs)
    if (integer_or_bool(in->dtype)) return true;
  for (const auto& v : op.vars)
    if (integer_or_bool(v.dtype)) return true;
  for (const auto& o : op.outs)
    if (integer_or_bool(o.dtype)) return true;
  return false;
}

}  // namespace

std::string user_op_value(ExprEmitter& e, const Node* n, const std::string* in) {
  const UserOp& op = user_op(n->op);
  const std::string R = reg_type(n->dtype);
  const std::string v = e.fresh();
  const bool call = isolated(op, n);
  std::string s = fmt::format("{} {}; {{ /* {} '{}' */ ", R, v, kind_word(op.kind), comment_safe(op.name));
  if (call) {
    s += fmt::format("struct _cf_u{} {{ static __device__ __noinline__ {} f(", v, R);
    for (size_t k = 0; k < n->inputs.size(); ++k)
      s += fmt::format("{}const {} _cf_i{}", k ? ", " : "", reg_type(n->inputs[k]->dtype), k);
    s += ") { ";
  } else {
    for (size_t k = 0; k < n->inputs.size(); ++k)
      s += fmt::format("const {} _cf_i{} = {}; ", reg_type(n->inputs[k]->dtype), k, in[k]);
  }
  s += fmt::format("{} _cf_r; {{ {}", R, op.typedefs);
  for (size_t k = 0; k < op.vars.size() && k < n->inputs.size(); ++k)
    s += fmt::format("const {} {} = _cf_i{}; ", reg_type(op.vars[k].dtype), op.vars[k].name, k);
  for (const auto& o : op.outs) {
    const std::string T = reg_type(o.dtype);
    s += o.init >= 0 ? fmt::format("{} {} = _cf_i{}; ", T, o.name, o.init) : fmt::format("{} {}{{}}; ", T, o.name);
  }
  switch (op.kind) {
    case UserOp::Kind::Map: s += fmt::format("_cf_r = static_cast<{}>(({})); ", R, op.code); break;
    case UserOp::Kind::Elementwise:
    case UserOp::Kind::PostMap:
      s += fmt::format("{{ {}; }} _cf_r = static_cast<{}>({}); ", op.code, R, op.outs.at(static_cast<size_t>(op.result)).name);
      break;
    case UserOp::Kind::Reduce: throw InternalError("a user reduction reached elementwise code generation");
  }
  if (call) {
    s += fmt::format("}} return _cf_r; }} }}; {} = _cf_u{}::f(", v, v);
    for (size_t k = 0; k < n->inputs.size(); ++k) s += fmt::format("{}{}", k ? ", " : "", in[k]);
    s += "); }";
  } else {
    s += fmt::format("}} {} = _cf_r; }}", v);
  }
  e.line(s);
  if (is_half(n->dtype)) e.line(fmt::format("{} = {};", v, round_half(n->dtype, v)));
  return v;
}

std::string user_reduce_identity(const Node* red, const std::string& T) {
  const UserOp& op = user_op(red->op);
  if (op.typedefs.empty()) return fmt::format("static_cast<{}>(({}))", T, op.identity);
  return fmt::format("([]() {{ {}return static_cast<{}>(({})); }}())", op.typedefs, T, op.identity);
}

std::string user_reduce_combine(const Node* red, const std::string& T, const std::string& acc, const std::string& v) {
  const UserOp& op = user_op(red->op);
  // a and b by value first (acc may be read by the expression), then the assignment.
  return fmt::format("{{ {}const {} a = {}; const {} b = {}; {} = static_cast<{}>(({})); }}", op.typedefs, T, acc, T, v,
                     acc, T, op.code);
}

}  // namespace cufuse::detail
