// src/graph/views.cpp: movement ops on layouts and nodes (see views.hpp).
#include "graph/views.hpp"

#include <unordered_map>

#include "core/walk.hpp"
#include "cufuse/error.hpp"
#include "graph/gather.hpp"
#include "graph/index_map.hpp"

namespace cufuse::detail {

Shape movement_shape(const Shape& in, const Movement& m) {
  switch (m.kind) {
    case Movement::Reshape:
    case Movement::Broadcast: return m.shape;
    case Movement::Permute: {
      Shape s(in.size());
      for (size_t i = 0; i < in.size(); ++i) s[i] = in[m.perm[i]];
      return s;
    }
    case Movement::Slice: return Shape(m.len.begin(), m.len.end());
  }
  return in;
}

// NumPy's _attempt_nocopy_reshape: new strides for a reshape that keeps the elements where
// they are, if there are any.
static bool reshape_layout(Layout& l, const Shape& newshape) {
  const int64_t n = numel(l.shape);
  if (n == 0 || n == 1) {
    l.strides = contiguous_layout(newshape).strides;  // (no overflow for an empty (2^32, 2^32, 0))
    l.shape = newshape;
    return true;
  }
  Shape od;
  Strides os;
  for (int i = 0; i < l.shape.ndim(); ++i)
    if (l.shape[i] != 1) {
      od.push_back(l.shape[i]);
      os.push_back(l.strides[i]);
    }
  const int oldnd = od.ndim(), newnd = newshape.ndim();
  Strides ns(newshape.size(), 0);
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < newnd && oi < oldnd) {
    int64_t np = newshape[ni], op = od[oi];
    while (np != op) {
      if (np < op) np *= newshape[nj++];
      else op *= od[oj++];
    }
    for (int ok = oi; ok < oj - 1; ++ok)
      if (os[ok] != od[ok + 1] * os[ok + 1]) return false;
    ns[nj - 1] = os[oj - 1];
    for (int nk = nj - 1; nk > ni; --nk) ns[nk - 1] = ns[nk] * newshape[nk];
    ni = nj++;
    oi = oj++;
  }
  int64_t last = ni >= 1 ? ns[ni - 1] : 1;
  for (int nk = ni; nk < newnd; ++nk) ns[nk] = last;
  l.shape = newshape;
  l.strides = ns;
  return true;
}

bool apply_to_layout(Layout& l, const Movement& m) {
  switch (m.kind) {
    case Movement::Reshape: return reshape_layout(l, m.shape);
    case Movement::Permute: {
      Shape s(l.shape.size());
      Strides st(l.shape.size());
      for (size_t i = 0; i < s.size(); ++i) {
        s[i] = l.shape[m.perm[i]];
        st[i] = l.strides[m.perm[i]];
      }
      l.shape = s;
      l.strides = st;
      return true;
    }
    case Movement::Broadcast: {
      const int nd = m.shape.ndim(), od = l.shape.ndim();
      Strides st(m.shape.size(), 0);
      for (int i = 0; i < od; ++i) {
        int j = nd - od + i;
        st[j] = (l.shape[i] == m.shape[j]) ? l.strides[i] : 0;
      }
      l.shape = m.shape;
      l.strides = st;
      return true;
    }
    case Movement::Slice: {
      for (int d = 0; d < l.shape.ndim(); ++d) {
        if (m.len[d] > 0) l.offset += m.start[d] * l.strides[d];
        // One element or none: its stride is never used, and step may be as large as INT64_MIN
        // (x[::-2**63]), whose product with a stride would overflow.
        if (m.len[d] > 1) l.strides[d] *= m.step[d];
        l.shape[d] = m.len[d];
      }
      return true;
    }
  }
  return false;
}

namespace {
struct Pusher {
  const Movement& m;
  std::unordered_map<const Node*, NodePtr> memo;

  NodePtr layout_node(const NodePtr& n) {
    Layout l = n->layout;
    if (!apply_to_layout(l, m)) return make_view(n, contiguous_layout(m.shape));
    switch (n->k()) {
      case NodeKind::Buffer: {
        auto b = make_buffer(n->dtype, std::move(l), n->storage);
        b->placeholder_slot = n->placeholder_slot;
        b->read_only = n->read_only || m.kind == Movement::Broadcast;
        return b;
      }
      case NodeKind::Generator: return make_generator(static_cast<GenKind>(n->op), n->dtype, std::move(l), n->gen);
      default: return make_view(n->inputs[0], std::move(l));  // View
    }
  }

  // n with the movement applied, the elementwise work under it rebuilt over moved inputs
  // (walked with an explicit stack: core/walk.hpp).
  NodePtr rec(const NodePtr& root) {
    walk_post_order(
        root, [&](const NodePtr& n) { return memo.count(n.get()) != 0; },
        [&](const NodePtr& n) { return n->k() == NodeKind::Elementwise; },
        [&](const NodePtr& n) { memo.emplace(n.get(), moved(n)); });
    return memo.at(root.get());
  }
  // One node moved, its inputs' moved nodes in memo.
  NodePtr moved(const NodePtr& n) {
    NodePtr out;
    switch (n->k()) {
      case NodeKind::Buffer:
      case NodeKind::Generator: out = layout_node(n); break;
      case NodeKind::View:
        if (is_gather(*n)) {  // a gather is never a View's input: its index nodes move instead
          const auto& at = gather_attrs(*n);
          std::vector<NodePtr> E;
          for (int d = 0; d < gather_rank(*n); ++d) E.push_back(apply_movement(n->inputs[1 + d], m));
          out = make_gather(n->inputs[0], std::move(E), movement_shape(n->shape(), m), at.size, at.axis);
          break;
        }
        // a mapped view (graph/index_map.hpp) is seen through a plain one
        out = is_mapped_view(*n) ? layout_node(make_view(n, contiguous_layout(n->shape()))) : layout_node(n);
        break;
      case NodeKind::Scalar: out = make_scalar(n->scalar, n->dtype, movement_shape(n->shape(), m)); break;
      case NodeKind::Elementwise: {
        InputVec ins;
        for (const auto& in : n->inputs) ins.push_back(memo.at(in.get()));
        out = make_elementwise(n->op, n->dtype, movement_shape(n->shape(), m), std::move(ins));
        break;
      }
      default: {  // Reduce, Library: their result is memory of their own, seen through a View
        auto v = make_view(n, contiguous_layout(n->shape()));
        out = layout_node(v);
        break;
      }
    }
    return out;
  }
};
}  // namespace

NodePtr apply_movement(const NodePtr& n, const Movement& m) {
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  Pusher p{m, {}};
  return p.rec(n);
}

}  // namespace cufuse::detail
