// codegen/view_coords.cpp: coordinates handed to View chains (see view_coords.hpp).
#include "codegen/view_coords.hpp"

#include "graph/index_map.hpp"

namespace cufuse::detail {

std::vector<bool> mapped_axes(const Node* view) {
  if (!ExprEmitter::identity_view(view)) return {};
  const Node* x = view->inputs[0].get();
  if (!index_map_of(*x)) return {};
  std::vector<bool> moved(static_cast<size_t>(view->ndim()), false);
  for (; x->k() == NodeKind::View; x = x->inputs[0].get()) {  // a loop: chains can be long
    const IndexMap* map = index_map_of(*x);
    if (!map) break;
    for (size_t k = 0; k < map->axes.size() && k < moved.size(); ++k)
      if (map->axes[k].kind != AxisMapKind::Identity) moved[k] = true;
  }
  return moved;
}

bool merged_coords_ok(const Node* view, const std::vector<std::vector<int>>& groups, const LeafBinding& bind) {
  const Node* x = view->inputs[0].get();
  for (; x->k() == NodeKind::View; x = x->inputs[0].get()) {
    const IndexMap* map = index_map_of(*x);
    if (!map) break;
    if (x->shape() != view->shape()) return false;
    for (const auto& g : groups)
      if (g.size() > 1)
        for (int d : g)
          if (map->axes[static_cast<size_t>(d)].kind != AxisMapKind::Identity) return false;
  }
  // The chain ends on x, read at sum(m_d * st_d): memory, a generator or a plain View.
  Strides st;
  if (reads_memory(x, bind)) st = memory_layout(x, bind).strides;
  else if (x->k() == NodeKind::Generator || x->k() == NodeKind::View) st = x->layout.strides;
  else return false;
  if (x->ndim() != view->ndim()) return false;
  for (const auto& g : groups)
    for (int d : g)
      if (g.size() > 1 && x->shape()[d] != view->shape()[d]) return false;
  for (const auto& g : groups)
    for (size_t k = 0; k + 1 < g.size(); ++k)
      if (st[g[k]] != st[g[k + 1]] * x->shape()[g[k + 1]]) return false;
  return true;
}

}  // namespace cufuse::detail
