// src/graph/views.hpp: movement ops (reshape, permute, broadcast, slice) on nodes.
//
// A movement op on a leaf or View node changes its strided layout (a reshape that strides
// cannot express becomes a View node: a general index remap). On an elementwise node it is
// pushed down to the inputs, so every elementwise node reads inputs of its own shape and
// every strided access in a kernel is a leaf's. On a Reduce or Library node (materialized
// by its own kernel) it wraps the node in a View.
#pragma once
#include "core/node.hpp"

namespace cufuse::detail {

struct Movement {
  enum Kind : uint8_t { Reshape, Permute, Broadcast, Slice } kind;
  Shape shape;                    // Reshape, Broadcast: the new shape
  Axes perm;                      // Permute
  SmallVec<int64_t, 8> start, step, len;  // Slice: per input dim (len = result size)
};

// Result shape of m applied to a node of shape `in`.
Shape movement_shape(const Shape& in, const Movement& m);
// Applies m to a strided layout; false when a reshape cannot be expressed with strides.
bool apply_to_layout(Layout& l, const Movement& m);
// Applies m to a node (see the file comment). Takes graph_mutex().
NodePtr apply_movement(const NodePtr& n, const Movement& m);

// Why a write into `n` (a Buffer leaf) is refused, for "assignment destination is
// read-only: ...": a broadcast view, read-only foreign memory, or NumPy's read-only views
// (diagonal, broadcast_to) indexed past their broadcast axes; "" when it is writable.
std::string read_only_what(const Node& n);

}  // namespace cufuse::detail
