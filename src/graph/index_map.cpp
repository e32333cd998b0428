// src/graph/index_map.cpp: index maps and their push-down to the leaves (see index_map.hpp).
#include "graph/index_map.hpp"

#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "core/walk.hpp"
#include "graph/gather.hpp"

namespace cufuse::detail {

uint64_t IndexMap::hash() const {
  uint64_t h = 0x51ED270B27B3A5C1ull;
  for (const auto& a : axes) {
    h = hash_mix(h, static_cast<uint64_t>(a.kind) + 1);
    h = hash_mix(h, static_cast<uint64_t>(a.shift));
    h = hash_mix(h, static_cast<uint64_t>(a.n));
    h = hash_mix(h, static_cast<uint64_t>(a.r));
    h = hash_mix(h, a.seed);
  }
  return h;
}

bool IndexMap::operator==(const IndexMap& o) const {
  if (axes.size() != o.axes.size()) return false;
  for (size_t i = 0; i < axes.size(); ++i) {
    const AxisMap &a = axes[i], &b = o.axes[i];
    if (a.kind != b.kind || a.shift != b.shift || a.n != b.n || a.r != b.r || a.seed != b.seed) return false;
  }
  return true;
}

const IndexMap* index_map_of(const Node& n) {
  if (n.k() != NodeKind::View) return nullptr;
  const auto* m = std::get_if<std::shared_ptr<const IndexMap>>(&n.attrs);
  return m ? m->get() : nullptr;
}

namespace {

// MappedView(x): x at f(o), then the plain contiguous View a kernel accesses.
NodePtr mapped_leaf(const NodePtr& x, const Shape& out, const std::shared_ptr<const IndexMap>& map) {
  auto m = new_node(NodeKind::View);
  m->dtype = x->dtype;
  m->layout.shape = out;
  m->layout.strides = contiguous_strides(x->shape());
  m->layout.offset = 0;
  m->attrs = map;
  m->inputs.push_back(x);
  finish_node(*m);
  m->hash = hash_mix(m->hash, map->hash());
  return make_view(std::move(m), contiguous_layout(out));
}

}  // namespace

NodePtr apply_index_map(const NodePtr& root, const Shape& out, std::shared_ptr<const IndexMap> map) {
  if (static_cast<int>(map->axes.size()) != out.ndim() || root->ndim() != out.ndim())
    throw InternalError(fmt::format("index map of rank {} applied to a rank-{} node for shape {}", map->axes.size(),
                                    root->ndim(), to_string(out)));
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  std::unordered_map<const Node*, NodePtr> memo;
  walk_post_order(
      root, [&](const NodePtr& n) { return memo.count(n.get()) != 0; },
      [&](const NodePtr& n) { return n->k() == NodeKind::Elementwise; },
      [&](const NodePtr& n) {
        NodePtr r;
        switch (n->k()) {
          case NodeKind::Scalar: r = make_scalar(n->scalar, n->dtype, out); break;
          case NodeKind::Elementwise: {
            InputVec ins;
            for (const auto& in : n->inputs) ins.push_back(memo.at(in.get()));
            auto e = new_elementwise(n->op, n->dtype, out);
            e->inputs = std::move(ins);
            e->attrs = n->attrs;
            finish_node(*e);
            r = std::move(e);
            break;
          }
          case NodeKind::View:
            if (is_gather(*n)) {  // a gather is never a mapped view's input: its index nodes are mapped
              const auto& at = gather_attrs(*n);
              std::vector<NodePtr> E;
              for (int d = 0; d < gather_rank(*n); ++d) E.push_back(apply_index_map(n->inputs[1 + d], out, map));
              r = make_gather(n->inputs[0], std::move(E), out, at.size, at.axis);
              break;
            }
            r = mapped_leaf(n, out, map);
            break;
          default: r = mapped_leaf(n, out, map); break;  // Buffer, Generator, Reduce, Library
        }
        memo.emplace(n.get(), std::move(r));
      });
  return memo.at(root.get());
}

}  // namespace cufuse::detail
