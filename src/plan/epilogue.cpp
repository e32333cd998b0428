// src/plan/epilogue.cpp: the planner's rule that turns "GEMM then bias add / GELU" into one
// GEMM with a cuBLASLt epilogue (see epilogue.hpp). The GELU pattern matched is exactly the
// tree cufuse::gelu builds (graph/activations.cpp); the call with the epilogue comes from
// the GEMM call itself (LibraryCall::with_epilogue, src/library/gemm_call.cpp).
#include "plan/epilogue.hpp"

#include <cmath>
#include <unordered_set>

#include "core/op_table.hpp"
#include "graph/activations.hpp"

namespace cufuse::detail {

namespace {

bool is_op(const NodePtr& n, Op op) { return n && n->k() == NodeKind::Elementwise && static_cast<Op>(n->op) == op; }
bool is_scalar(const NodePtr& n, double v) {
  if (!n || n->k() != NodeKind::Scalar) return false;
  const double s = n->scalar.to_double();
  // The constant as the node holds it: rounded to its dtype (float16 keeps ~3 digits).
  const double want = Scalar::typed(Scalar(v), n->dtype).to_double();
  return s == want || std::fabs(s - v) <= 1e-6 * std::fabs(v) + 1e-12;
}

// gelu(x) as cufuse::gelu builds it: (x * 0.5) * (tanh((x + (x * x * x) * a) * c) + 1), its inner sum
// an Fma(x * x * x, a, x) where float a * b + c is contracted. Returns x.
NodePtr match_gelu(const NodePtr& g) {
  if (!is_op(g, Op::Multiply)) return nullptr;
  const NodePtr& h = g->inputs[0];
  const NodePtr& w = g->inputs[1];
  if (!is_op(h, Op::Multiply) || !is_scalar(h->inputs[1], 0.5)) return nullptr;
  const NodePtr& x = h->inputs[0];
  if (!is_op(w, Op::Add) || !is_scalar(w->inputs[1], 1.0)) return nullptr;
  const NodePtr& th = w->inputs[0];
  if (!is_op(th, Op::Tanh)) return nullptr;
  const NodePtr& sc = th->inputs[0];
  if (!is_op(sc, Op::Multiply) || !is_scalar(sc->inputs[1], kGeluC)) return nullptr;
  const NodePtr& in = sc->inputs[0];
  NodePtr x3;
  if (is_op(in, Op::Add) && in->inputs[0] == x) {  // x + (x * x * x) * a
    const NodePtr& cube = in->inputs[1];
    if (!is_op(cube, Op::Multiply) || !is_scalar(cube->inputs[1], kGeluA)) return nullptr;
    x3 = cube->inputs[0];
  } else if (is_op(in, Op::Fma) && in->inputs[2] == x && is_scalar(in->inputs[1], kGeluA)) {
    x3 = in->inputs[0];  // the same, contracted (graph/elementwise.cpp: contract-multiply-add)
  } else {
    return nullptr;
  }
  if (!is_op(x3, Op::Multiply) || x3->inputs[1] != x) return nullptr;
  const NodePtr& x2 = x3->inputs[0];
  if (!is_op(x2, Op::Multiply) || x2->inputs[0] != x || x2->inputs[1] != x) return nullptr;
  return x;
}

// The call of a Library node that can take an epilogue (a plain GEMM), or null.
const LibraryCall* plain_gemm(const NodePtr& n) {
  if (!n || n->k() != NodeKind::Library) return nullptr;
  const LibraryCall* c = library_attrs(*n).call.get();
  return c->takes_epilogue() ? c : nullptr;
}

}  // namespace

bool try_fuse_epilogue(const NodePtr& root, const std::vector<NodePtr>& topo, const std::vector<NodePtr>& roots,
                       EpilogueFusion& out) {
  if (!root || root->k() != NodeKind::Elementwise) return false;
  bool gelu = false;
  NodePtr e = root;
  if (NodePtr x = match_gelu(root)) {
    gelu = true;
    e = x;
  }
  NodePtr lib, bias;
  if (is_op(e, Op::Add)) {
    for (int i = 0; i < 2; ++i)
      if (plain_gemm(e->inputs[i]) && e->inputs[1 - i]->k() == NodeKind::Buffer) {
        lib = e->inputs[i];
        bias = e->inputs[1 - i];
        break;
      }
  } else if (gelu && plain_gemm(e)) {
    lib = e;
  }
  if (!lib) return false;
  const LibraryCall* g = plain_gemm(lib);
  if (root->dtype != lib->dtype || e->dtype != lib->dtype || root->shape() != lib->shape()) return false;
  auto call = g->with_epilogue(bias != nullptr, gelu);
  if (bias && (bias->dtype != lib->dtype || !call->accepts_layout(2, bias->layout, bias->dtype))) return false;

  // Nothing outside the pattern may read the GEMM result or the work between it and the root.
  std::unordered_set<const Node*> cone;
  std::vector<const Node*> stack{root.get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->is_leaf() || !cone.insert(n).second || n == lib.get()) continue;
    for (const auto& in : n->inputs) stack.push_back(in.get());
  }
  for (const auto& n : topo) {
    if (cone.count(n.get())) continue;
    for (const auto& in : n->inputs)
      if (cone.count(in.get())) return false;
  }
  for (const auto& r : roots)
    if (r != root && cone.count(r.get())) return false;

  out.call = std::move(call);
  out.inputs.clear();
  out.inputs.push_back(lib->inputs[0]);
  out.inputs.push_back(lib->inputs[1]);
  if (bias) out.inputs.push_back(bias);
  out.absorbed = lib;
  return true;
}

}  // namespace cufuse::detail
