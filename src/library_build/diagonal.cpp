// src/library_build/diagonal.cpp: diagonal views, trace, and the triangle masks of the solver
// results. A diagonal is a strided view (the two axes' strides summed, the start folded
// into the offset): on memory it is a strided Buffer leaf (no kernel), on a lazy array it
// is pushed down to the leaves like any movement op (src/graph/views.cpp), on a pending
// reduction or library result it is a View of that result.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "core/walk.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"
#include "graph/gather.hpp"
#include "graph/index_map.hpp"
#include "graph/lazy_base.hpp"
#include "graph/realize.hpp"
#include "library_build/contract.hpp"

namespace cufuse::detail {

namespace {

struct DiagSpec {
  int a1, a2;
  int64_t start1, start2, len;
};

// The diagonal of a strided layout (positions stay linear in the indices).
Layout diag_layout(const Layout& l, const DiagSpec& d) {
  Layout o;
  o.offset = l.offset;
  if (d.len > 0) o.offset += d.start1 * l.strides[d.a1] + d.start2 * l.strides[d.a2];
  for (int i = 0; i < l.shape.ndim(); ++i) {
    if (i == d.a1 || i == d.a2) continue;
    o.shape.push_back(l.shape[i]);
    o.strides.push_back(l.strides[i]);
  }
  o.shape.push_back(d.len);
  o.strides.push_back(l.strides[d.a1] + l.strides[d.a2]);
  return o;
}

Shape diag_shape(const Shape& s, const DiagSpec& d) {
  Shape o;
  for (int i = 0; i < s.ndim(); ++i)
    if (i != d.a1 && i != d.a2) o.push_back(s[i]);
  o.push_back(d.len);
  return o;
}

struct DiagPusher {
  const DiagSpec& d;
  std::unordered_map<const Node*, NodePtr> memo;

  // The diagonal of n, the elementwise work under it rebuilt over the inputs' diagonals
  // (walked with an explicit stack: core/walk.hpp).
  NodePtr rec(const NodePtr& root) {
    walk_post_order(
        root, [&](const NodePtr& n) { return memo.count(n.get()) != 0; },
        [&](const NodePtr& n) { return n->k() == NodeKind::Elementwise; },
        [&](const NodePtr& n) { memo.emplace(n.get(), diagonal_of(n)); });
    return memo.at(root.get());
  }
  // One node's diagonal, its inputs' in memo.
  NodePtr diagonal_of(const NodePtr& n) {
    NodePtr out;
    switch (n->k()) {
      case NodeKind::Buffer: {
        out = make_buffer(n->dtype, diag_layout(n->layout, d), n->storage);
        out->placeholder_slot = n->placeholder_slot;
        out->read_only = true;  // NumPy's diagonal is a read-only view
        break;
      }
      case NodeKind::Generator:
        out = make_generator(static_cast<GenKind>(n->op), n->dtype, diag_layout(n->layout, d), n->gen);
        break;
      case NodeKind::View:
        if (is_gather(*n)) {  // the diagonal of a gather gathers the diagonal of its indices
          const auto& at = gather_attrs(*n);
          std::vector<NodePtr> E;
          for (int k = 0; k < gather_rank(*n); ++k) {
            DiagPusher inner{d, {}};
            E.push_back(inner.rec(n->inputs[1 + k]));
          }
          out = make_gather(n->inputs[0], std::move(E), diag_shape(n->shape(), d), at.size, at.axis);
          break;
        }
        // a mapped view (graph/index_map.hpp) is seen through a plain one
        out = is_mapped_view(*n) ? make_view(n, diag_layout(contiguous_layout(n->shape()), d))
                                 : make_view(n->inputs[0], diag_layout(n->layout, d));
        break;
      case NodeKind::Scalar: out = make_scalar(n->scalar, n->dtype, diag_shape(n->shape(), d)); break;
      case NodeKind::Elementwise: {
        InputVec ins;
        for (const auto& in : n->inputs) ins.push_back(memo.at(in.get()));
        out = make_elementwise(n->op, n->dtype, diag_shape(n->shape(), d), std::move(ins));
        break;
      }
      default:  // Reduce, Library: a View of their (contiguous) result
        out = make_view(n, diag_layout(contiguous_layout(n->shape()), d));
        break;
    }
    return out;
  }
};

}  // namespace

// Which elements the diagonal at `offset` of axes a1, a2 of shape s takes.
static DiagSpec diag_spec(const Shape& s, int64_t offset, int a1, int a2) {
  DiagSpec d{a1, a2, 0, 0, 0};
  // Past either edge the diagonal is empty: clamp first, so -offset cannot overflow (INT64_MIN).
  offset = std::clamp<int64_t>(offset, -s[a1], s[a2]);
  if (offset >= 0) {
    d.start2 = offset;
    d.len = std::max<int64_t>(0, std::min<int64_t>(s[a1], s[a2] - offset));
  } else {
    d.start1 = -offset;
    d.len = std::max<int64_t>(0, std::min<int64_t>(s[a1] + offset, s[a2]));
  }
  return d;
}

NodePtr diagonal_node(const NodePtr& n, int64_t offset, int a1, int a2) {
  const DiagSpec d = diag_spec(n->shape(), offset, a1, a2);
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  DiagPusher p{d, {}};
  return p.rec(n);
}

static Array triangle(const Array& x, bool lower) {
  const int nd = x.ndim();
  const int64_t m = x.shape()[nd - 2], n = x.shape()[nd - 1];
  Array r = arange(m).reshape({m, 1});
  Array c = arange(n).reshape({1, n});
  Array keep = lower ? greater_equal(r, c) : less_equal(r, c);
  return where(keep, x, 0);
}
Array tril_last2(const Array& x) { return triangle(x, true); }
Array triu_last2(const Array& x) { return triangle(x, false); }

}  // namespace cufuse::detail

namespace cufuse {

Array diagonal(const Array& a, int64_t offset, int axis1, int axis2) {
  if (!a.defined()) throw ValueError("diagonal: the Array handle is empty");
  const int nd = a.ndim();
  if (nd < 2) throw ValueError(fmt::format("diag requires an array of at least two dimensions (shape {})",
                                           to_string(a.shape())));
  auto norm = [&](int ax) {
    if (ax < -nd || ax >= nd)
      throw IndexError(fmt::format("diagonal: axis {} is out of bounds for array of dimension {}", ax, nd));
    return ax < 0 ? ax + nd : ax;
  };
  const int a1 = norm(axis1), a2 = norm(axis2);
  if (a1 == a2) throw ValueError("axis1 and axis2 cannot be the same");
  detail::NodePtr node = a.node();  // a view of a lazy array whose base is in memory: rebound
  // A lazy view's positions are those of a dense base: a pending write into a strided view is
  // carried out first (as Array's own views do: CUFUSE_VIEW_PRELUDE).
  if (node->dest && !node->dest->layout.is_contiguous()) {
    detail::realize({node});
    node = a.node();
  }
  detail::NodePtr out = detail::diagonal_node(node, offset, a1, a2);
  // The diagonal of a lazy array is a view of it as in NumPy: a later write into that array
  // (which makes it memory) is seen through the diagonal (graph/lazy_base.hpp). So is the
  // diagonal of a view of a lazy array that was evaluated alone, into memory of its own that
  // it drops for its base's (graph/array.cpp: apply_view).
  std::shared_ptr<detail::LazyBase> base;
  const auto& ab = a.lazy_base();
  if (ab || (!node->is_materialized() && !node->is_placeholder())) {
    const detail::Layout l = ab ? ab->view : detail::contiguous_layout(node->shape());
    base = std::make_shared<detail::LazyBase>(ab ? ab->node : node,
                                              detail::diag_layout(l, detail::diag_spec(node->shape(), offset, a1, a2)),
                                              /*read_only=*/true);
  }
  return Array(std::move(out), std::move(base));
}

Array trace(const Array& a, int64_t offset, int axis1, int axis2, std::optional<DType> dtype) {
  return sum(diagonal(a, offset, axis1, axis2), -1, false, dtype);
}

}  // namespace cufuse
