// src/graph/index_map.hpp: per-axis index maps, the movement that strides cannot express
// (tile, repeat, roll, pad, a concatenation's parts, permutations of an axis).
//
// A map sends each coordinate o of an output axis to a coordinate of the input's axis:
//   Identity   o
//   Clamp      clamp(o - shift, 0, n - 1)         (pad "edge"; a concatenation's part)
//   Wrap       (o - shift) mod n                  (roll, tile, pad "wrap")
//   Div        o / r                              (repeat)
//   Reflect    o - shift reflected, edge once     (pad "reflect")
//   Symmetric  o - shift reflected, edge twice    (pad "symmetric")
//   Feistel    a keyed permutation of [0, n)      (permutation, shuffle)
// The formulas are codegen/device_helpers.inc's cf_imap_* and cf_feistel, shared by the
// kernels and the host reference.
//
// In the graph a map is a View node whose attrs is an IndexMap (a "mapped view"): its value
// at output coordinates o is its input's at coordinates f(o) (its strides are the input's
// row-major strides, so pos = sum f_d(o_d) * strides[d] is the input's row-major position, as
// for any View). Like the other movement ops a map is pushed down through elementwise nodes
// to the leaves (apply_index_map), so `tile(a * 2 + b)` is one kernel reading a and b at the
// mapped coordinates. A mapped view is never what a kernel accesses directly: it always sits
// under a plain contiguous View (the accessor, whose strides the kernel emitters collapse and
// split as for any View), and the emitters apply the map while walking the View chain
// (codegen/expr_emitter.cpp: chain_value).
#pragma once
#include <memory>

#include "core/node.hpp"

namespace cufuse::detail {

// AxisMapKind, AxisMap and IndexMap: core/node_attrs.hpp (a Node's attributes).
inline const char* axis_map_name(AxisMapKind k) { return CUFUSE_ENUM_NAME(CUFUSE_AXIS_MAP_KINDS, k); }

const IndexMap* index_map_of(const Node& n);  // the map of a mapped view, else null
inline bool is_mapped_view(const Node& n) {
  return n.k() == NodeKind::View && std::holds_alternative<std::shared_ptr<const IndexMap>>(n.attrs);
}

// The value of `n` (of the map's input shape) seen through `map` as an array of shape `out`:
// pushed down through elementwise nodes; each leaf (or node read from memory) x becomes
// View(contiguous out) over MappedView(x). Takes graph_mutex().
NodePtr apply_index_map(const NodePtr& n, const Shape& out, std::shared_ptr<const IndexMap> map);

}  // namespace cufuse::detail
