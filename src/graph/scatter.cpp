// src/graph/scatter.cpp: writes through indices: put, add_at, maximum_at, minimum_at, and
// x[idx] = v / x[idx] op= v (graph/gather.hpp's scatter nodes), and x[mask] = v, x[mask] op= v
// (a fused where into x). A scatter is carried out when made, as one kernel over the updates
// with the values' producers fused into it: the pending writes of the thread and the pending
// readers of the written memory are carried out before, so its plan writes in place.
#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/ops.hpp"
#include "graph/realize.hpp"
#include "graph/elementwise.hpp"
#include "graph/gather.hpp"
#include "graph/indexing.hpp"
#include "core/registry.hpp"
#include "core/walk.hpp"
#include "runtime/storage.hpp"

namespace cufuse {

using detail::Node;
using detail::NodeKind;
using detail::NodePtr;

namespace detail {

namespace {

// Does anything under n read memory of `st`?
bool reads_storage(const NodePtr& n, const Storage* st) {
  bool found = false;
  std::unordered_set<const Node*> seen;
  walk_post_order(
      n.get(), [&](const Node* x) { return found || seen.count(x) != 0; }, [&](const Node* x) { return !x->is_leaf(); },
      [&](const Node* x) {
        seen.insert(x);
        if (x->k() == NodeKind::Buffer && x->storage.get() == st) found = true;
      });
  return found;
}

// n computed into new memory when it reads `st` (a scatter reads its inputs while it writes).
NodePtr apart_from(NodePtr n, const Storage* st) {
  if (!n || n->is_leaf() || !reads_storage(n, st)) {
    if (n && n->k() == NodeKind::Buffer && n->storage.get() == st) {
      InputVec ins;
      ins.push_back(n);
      n = make_elementwise(static_cast<uint16_t>(Op::Cast), n->dtype, n->shape(), std::move(ins));
    } else {
      return n;
    }
  }
  realize({n});
  return n;
}

NodePtr value_node(const Operand& v, DType t, const Shape& iter) {
  if (!v.is_array()) {
    Scalar s = v.scalar();
    if (s.weak() && (s.kind() == Scalar::Kind::Int || s.kind() == Scalar::Kind::UInt) && is_integer(t) && !s.fits(t))
      throw OverflowError(fmt::format("Python integer {} out of bounds for {}", s.str(), name(t)));
    return make_scalar(s, t, iter);
  }
  const Array& a = v.array();
  if (!a.defined()) throw ValueError("the value is an empty Array handle");
  NodePtr n = a.node();
  try {
    n = broadcast_node(n, iter);
  } catch (const ValueError&) {
    throw ValueError(fmt::format("shape mismatch: value array of shape {} could not be broadcast to indexing result "
                                 "of shape {}", to_string(a.shape()), to_string(iter)));
  }
  return cast_node(n, t);
}

}  // namespace

void scatter(Array& target, const std::vector<NodePtr>& E, const std::vector<int>& checked, const Shape& iter,
             const Operand& value, ScatterModeArg mode, const NodePtr& pred_in) {
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  if (target.node()->is_placeholder()) throw ValueError("cannot write into a placeholder array");
  target.eval();
  NodePtr leaf = target.node();
  if (leaf->read_only)
    throw ValueError(fmt::format("assignment destination is read-only: a broadcast view of shape {}",
                                 to_string(leaf->shape())));
  const Layout& l = leaf->layout;
  for (int i = 0; i < l.shape.ndim(); ++i)
    if (l.strides[i] == 0 && l.shape[i] > 1)
      throw ValueError(fmt::format("assignment destination is read-only: a broadcast view of shape {}", to_string(l.shape)));
  const int r = leaf->ndim();
  if (static_cast<int>(E.size()) != r) throw InternalError("scatter: one index node per target dim");
  NodePtr v = value_node(value, leaf->dtype, iter);
  if (numel(iter) == 0) return;
  // Carried out now, alone: the thread's pending writes and the readers of this memory first.
  settle_pending_writes();
  const Storage* st = leaf->storage.get();
  auto readers = pending_roots_reading(st);
  if (!readers.empty()) realize(readers);
  v = apart_from(v, st);
  std::vector<NodePtr> idx;
  for (const auto& e : E) idx.push_back(apart_from(e, st));
  NodePtr pred = apart_from(pred_in, st);

  // Run on its own (not realize(): that would also write out every lazy node an Array handle
  // names, the caller's temporaries included).
  write_into(leaf, make_scatter(leaf, idx, checked, iter, v, mode, pred));
}

NodePtr make_scatter(const NodePtr& leaf, const std::vector<NodePtr>& idx, const std::vector<int>& checked,
                     const Shape& iter, const NodePtr& v, ScatterModeArg mode, const NodePtr& pred) {
  const int r = leaf->ndim();
  auto at = std::make_shared<ScatterAttrs>();
  at->mode = static_cast<ScatterMode>(mode);
  if (is_complex(leaf->dtype) && at->mode != ScatterMode::Assign)  // the device's atomics take 8 bytes at most
    throw NotSupportedError(fmt::format("accumulating scatters (add.at, maximum.at ...) into {} are not supported",
                                        name(leaf->dtype)));
  at->iter = iter;
  bool any_checked = false;
  for (int d = 0; d < r; ++d) {
    at->size.push_back(checked[d] ? leaf->shape()[d] : -1);
    at->axis.push_back(d);
    any_checked |= checked[d] != 0;
  }
  auto s = new_elementwise(static_cast<uint16_t>(Op::Cast), leaf->dtype, leaf->shape());
  s->inputs.push_back(make_buffer(leaf->dtype, leaf->layout, leaf->storage));
  s->inputs.push_back(v);
  bool placeholder = v->reads_placeholder;
  for (auto& e : idx) {
    if (!(e->shape() == iter) || !is_integer(e->dtype)) throw InternalError("scatter: an index node is not over the updates");
    placeholder |= e->reads_placeholder;
    s->inputs.push_back(e);
  }
  if (pred) {
    s->inputs.push_back(pred);
    at->has_pred = true;
  }
  if (any_checked)
    if (NodePtr err = error_word_leaf(placeholder)) {
      s->inputs.push_back(err);
      at->has_err = true;
    }
  finish_node(*s);
  uint64_t h = hash_mix(s->hash, 0x5CA7 + static_cast<uint64_t>(at->mode));
  for (auto d : iter) h = hash_mix(h, static_cast<uint64_t>(d));
  for (auto d : at->size) h = hash_mix(h, static_cast<uint64_t>(d));
  s->hash = h;
  s->attrs = std::move(at);
  s->dest = std::make_shared<WriteDest>(WriteDest{leaf->storage, leaf->layout});
  return s;
}

bool write_through_subscript(Array& a, uint16_t op, const Operand& value) {
  const NodePtr n = a.node();
  if (!n || !is_gather(*n) || !gather_attrs(*n).origin) return false;
  refuse_scatter_in_trace(op == static_cast<uint16_t>(Op::Cast) ? "x[idx] = v" : "x[idx] op= v");
  auto o = gather_attrs(*n).origin;
  Array target(o->node, o->base);
  std::vector<int> checked(o->checked.begin(), o->checked.end());
  if (op == static_cast<uint16_t>(Op::Cast)) {
    a = Array();  // the gather's handle goes: a pending read of the memory written, not to be computed
    scatter(target, o->index, checked, n->shape(), value, ScatterModeArg::Assign);
    return true;
  }
  const Operand self(a);
  const Operand* args[2] = {&self, &value};
  Array v(elementwise_node(static_cast<Op>(op), args, 2));
  if (!can_cast_same_kind(v.dtype(), a.dtype()))
    throw TypeError(fmt::format("Cannot cast ufunc '{}' output from {} to {} with casting rule 'same_kind'",
                                op_row(op).name, name(v.dtype()), name(a.dtype())));
  if (!(v.shape() == a.shape()))
    throw ValueError(fmt::format("non-broadcastable output operand with shape {} doesn't match the broadcast shape {}",
                                 to_string(a.shape()), to_string(v.shape())));
  a = Array();
  scatter(target, o->index, checked, n->shape(), v, ScatterModeArg::Assign);
  return true;
}

namespace {

// A mask over x's leading dims, as a bool node broadcast to x's shape (NumPy's IndexError
// when its shape does not match).
Array mask_over(const Array& x, const Array& mask) {
  detail::require_mask_shape(x, mask);
  Shape s = mask.shape();
  while (s.ndim() < x.ndim()) s.push_back(1);
  return mask.reshape(s).broadcast_to(x.shape());
}

// Does v broadcast over the selected rows (a scalar, or a shape that broadcasts to
// (1,) + x.shape[k:])? Then x[mask] = v is a where.
bool broadcasts_over_rows(const Operand& v, const Array& x, int k) {
  if (!v.is_array()) return true;
  const Shape& vs = v.array().shape();
  const int tail = x.ndim() - k;
  if (vs.ndim() > tail + 1) return false;
  if (vs.ndim() == tail + 1 && vs[0] != 1) return false;
  for (int i = 0; i < std::min(vs.ndim(), tail); ++i) {
    const int64_t a = vs[vs.ndim() - 1 - i], b = x.shape(x.ndim() - 1 - i);
    if (a != b && a != 1) return false;
  }
  return true;
}

}  // namespace

}  // namespace detail

// ------------------------------------------------------------------ Subscript writes
Subscript& Subscript::update(uint16_t op, const Operand& v) {
  if (!x_.defined() || !index_.defined()) throw ValueError("x[idx]: an Array handle is empty");
  const bool assign = op == static_cast<uint16_t>(detail::Op::Cast);
  if (index_.dtype() == DType::Bool) detail::refuse_scatter_in_trace(assign ? "x[mask] = v" : "x[mask] op= v");
  else detail::refuse_scatter_in_trace(assign ? "x[idx] = v" : "x[idx] op= v");
  if (index_.dtype() == DType::Bool) {
    const int k = index_.ndim();
    Array m = detail::mask_over(x_, index_);
    if (!assign || detail::broadcasts_over_rows(v, x_, k)) {
      Array nv;
      if (assign) {
        nv = v.is_array() ? v.array() : full(Shape{}, v.scalar(), v.scalar().weak() ? std::optional<DType>(x_.dtype())
                                                                                     : std::optional<DType>());
        if (!v.is_array()) {  // NumPy 2: a Python int out of the array's range raises
          const Scalar& s = v.scalar();
          if (s.weak() && (s.kind() == Scalar::Kind::Int || s.kind() == Scalar::Kind::UInt) && is_integer(x_.dtype()) &&
              !s.fits(x_.dtype()))
            throw OverflowError(fmt::format("Python integer {} out of bounds for {}", s.str(), name(x_.dtype())));
        }
        if (v.is_array()) {  // shaped like the selection's rows: aligned to x's trailing dims
          Shape s = nv.shape();
          if (s.ndim() == x_.ndim() - k + 1) s.erase_at(0);
          nv = nv.reshape(s);
        }
      } else {
        const Operand self(x_);
        const Operand* args[2] = {&self, &v};
        nv = Array(detail::elementwise_node(static_cast<detail::Op>(op), args, 2));
        if (!detail::can_cast_same_kind(nv.dtype(), x_.dtype()))
          throw TypeError(fmt::format("Cannot cast ufunc '{}' output from {} to {} with casting rule 'same_kind'",
                                      detail::op_row(op).name, name(nv.dtype()), name(x_.dtype())));
      }
      Array x = x_;
      x.assign(where(m, nv, x_));
      return *this;
    }
    // Values one per selected element: scatter through the mask's nonzero indices.
    std::vector<Index> idx;
    for (auto& a : nonzero(index_)) idx.emplace_back(a);
    Array g = detail::advanced_index(x_, idx, true);
    detail::write_through_subscript(g, op, v);
    return *this;
  }
  Array g = detail::advanced_index(x_, {Index(index_)}, true);
  if (!detail::write_through_subscript(g, op, v)) throw InternalError("x[idx] = v: the gather lost its origin");
  return *this;
}

Subscript& Subscript::operator=(const Operand& v) { return update(static_cast<uint16_t>(detail::Op::Cast), v); }
Subscript& Subscript::operator=(const Subscript& v) { return *this = Operand(v.value()); }
Subscript& Subscript::operator+=(const Operand& v) { return update(static_cast<uint16_t>(detail::Op::Add), v); }
Subscript& Subscript::operator-=(const Operand& v) { return update(static_cast<uint16_t>(detail::Op::Subtract), v); }
Subscript& Subscript::operator*=(const Operand& v) { return update(static_cast<uint16_t>(detail::Op::Multiply), v); }
Subscript& Subscript::operator/=(const Operand& v) { return update(static_cast<uint16_t>(detail::Op::TrueDivide), v); }

// ------------------------------------------------------------------ put, ufunc.at
void put(Array& a, const Array& indices_in, const Operand& values, std::string_view mode) {
  if (!a.defined() || !indices_in.defined()) throw ValueError("put: an Array handle is empty");
  detail::refuse_scatter_in_trace("put");
  detail::require_index_dtype(indices_in, "put");
  const detail::ClipMode cm = detail::clip_mode(mode);
  const int64_t n = indices_in.size();
  Array vals = values.is_array() ? values.array().ravel() : full(Shape{1}, values.scalar(), a.dtype());
  if (n == 0 || vals.size() == 0) return;
  if (a.size() == 0)
    throw IndexError(cm == detail::ClipMode::Raise ? "put: cannot replace in an empty array"
                                                   : "cannot replace elements of an empty array");
  const Array indices = detail::clip_indices(indices_in, a.size(), cm);
  // values repeated to the indices' count (NumPy's put), a gather by i % len.
  Array v = vals.size() == n ? vals : take(vals, remainder(arange(Scalar(int64_t(0)), Scalar(n)), vals.size()));
  Array flat_idx = indices.reshape(Shape{n});
  if (!a.is_contiguous()) {  // into a contiguous copy, written back
    Array c = a.copy();
    put(c, indices, v);
    a.assign(c);
    a.eval();
    return;
  }
  Array flat = a.reshape(Shape{a.size()});
  detail::scatter(flat, {flat_idx.node()}, {1}, Shape{n}, v, detail::ScatterModeArg::Assign);
}

namespace {
void ufunc_at(Array& a, const Array& indices, const Operand& values, detail::ScatterModeArg mode, const char* what,
              detail::Op op) {
  if (!a.defined() || !indices.defined()) throw ValueError(fmt::format("{}: an Array handle is empty", what));
  detail::refuse_scatter_in_trace(what);
  detail::require_index_dtype(indices, what);
  if (a.ndim() == 0) throw TypeError(fmt::format("{}: the array must have at least one dimension", what));
  (void)op;  // NumPy's ufunc.at casts the values unsafely to a's dtype
  Shape iter = indices.shape();
  for (int d = 1; d < a.ndim(); ++d) iter.push_back(a.shape(d));
  Shape placed = indices.shape();
  while (placed.ndim() < iter.ndim()) placed.push_back(1);
  std::vector<NodePtr> E{indices.reshape(placed).broadcast_to(iter).node()};
  std::vector<int> checked{1};
  for (int d = 1; d < a.ndim(); ++d) {
    E.push_back(detail::iota_node(iter, indices.ndim() + d - 1));
    checked.push_back(0);
  }
  detail::scatter(a, E, checked, iter, values, mode);
}
}  // namespace

void add_at(Array& a, const Array& indices, const Operand& values) {
  ufunc_at(a, indices, values, detail::ScatterModeArg::Add, "add_at", detail::Op::Add);
}
void maximum_at(Array& a, const Array& indices, const Operand& values) {
  ufunc_at(a, indices, values, detail::ScatterModeArg::Max, "maximum_at", detail::Op::Maximum);
}
void minimum_at(Array& a, const Array& indices, const Operand& values) {
  ufunc_at(a, indices, values, detail::ScatterModeArg::Min, "minimum_at", detail::Op::Minimum);
}

}  // namespace cufuse
