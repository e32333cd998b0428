// codegen/view_coords.hpp: when a kernel may hand a View chain its iteration coordinates
// instead of a position to unravel (graph/index_map.hpp's mapped views, a concatenation's
// parts, pad, tile, roll), and which iteration dims it must then keep apart.
//
// A kernel collapses the dims that every accessor reads contiguously, and an identity View
// over a mapped view gets its coordinates from the kernel's uncollapsed ones; a dim the map
// moves (clamp, wrap, reflect ...) must stay a dim of its own, or the chain has to divide the
// collapsed index to recover it (pad(x, 1, "reflect") was a contiguous kernel that divided
// every element's index by the row length). Dims the maps leave alone (identity) may stay
// merged: a merged group's coordinate goes on its last dim, 0 on the others, which is exact
// where the node the chain ends on (memory, a generator or a plain View) has strides that
// merge over the group too, as the iteration's do (stack([x, y]) iterates (2, n*n), and each
// part is read at (c0, c1) with no division).
#pragma once
#include <vector>

#include "codegen/expr_emitter.hpp"

namespace cufuse::detail {

// For an identity View over one or more mapped views (ExprEmitter::identity_view), the axes
// some map in its chain moves; empty for any other node.
std::vector<bool> mapped_axes(const Node* view);

// True when the chain under identity View `view` can take merged coordinates for `groups`
// (each a list of the non-unit dims one coordinate covers, in order): every map in the chain
// is the identity on a merged group's dims, and the node the chain ends on has strides that
// merge over each group (st[d] == st[d'] * shape[d'] for consecutive dims d < d').
bool merged_coords_ok(const Node* view, const std::vector<std::vector<int>>& groups, const LeafBinding& bind);

}  // namespace cufuse::detail
