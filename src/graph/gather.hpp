// src/graph/gather.hpp: gathers and scatters by index as graph nodes.
//
// A gather is a View node with GatherAttrs (a "gather view"): inputs = [src, E_0 .. E_{r-1}]
// (+ the device error word, see below), where src is a node of shape A (rank r) that can be
// read at any position (a Buffer leaf, a Generator, a plain View, or a Reduce/Library result
// read from memory) and each E_d is an integer node of the gather's own shape O giving, per
// output element, the index along src's dim d. Its value at an output element is
// src[E_0, .., E_{r-1}] (each E_d wrapped once when negative and checked against A[d] where
// `size[d] >= 0`). The E_d are ordinary nodes over O: a kernel computes them at the element
// it computes the gather at, so index producers and value consumers fuse. A gather is never
// the input of another View: movements (views.cpp) and further gathers (apply_gather) are
// applied to its E_d instead, and elementwise work over a gather's source is pushed below it
// (apply_gather rebuilds the elementwise nodes over gathered leaves).
//
// A scatter is an Elementwise node with ScatterAttrs, the new version of an array written
// through indices: inputs = [old (a Buffer leaf on the written memory, its layout), value,
// E_0 .. E_{r-1}, (pred), (err)], shape and dtype the array's; value, E_d and pred are nodes
// over the update shape `iter` (the kernel's iteration space). Its value is the old array
// with, for each update element where pred holds, element (E_0, .., E_{r-1}) set to
// (Assign), or combined with (Add, Max, Min), the value there. The planner gives it a kernel
// of its own over `iter`, writing in place; the value producers fuse into it.
//
// The device error word: on the device, an index out of bounds cannot throw; the kernel
// records the first one (flag, index, axis, size) in a per-device int64[4] block (an input
// Buffer leaf of the node) and reads nothing there; check_index_errors() reads it back at the
// next synchronization point (to_host, item) and throws the IndexError NumPy would have.
#pragma once
#include <memory>

#include "core/node.hpp"

namespace cufuse::detail {

struct LazyBase;

// Where an x[idx] gather came from: the array (as its node and lazy base) and, over that
// array's dims, the index nodes (shape = the gather's shape), so that `x[idx] = v` can scatter.
struct SubscriptOrigin {
  NodePtr node;
  std::shared_ptr<LazyBase> base;
  std::vector<NodePtr> index;  // per dim of node's shape: the E_d nodes
  SmallVec<int64_t, 8> checked;  // per dim: 1 where the index came from the user (bounds-checked)
};

// GatherAttrs, ScatterMode and ScatterAttrs: core/node_attrs.hpp (a Node's attributes).

bool is_gather(const Node& n);
bool is_scatter(const Node& n);
const GatherAttrs& gather_attrs(const Node& n);
const ScatterAttrs& scatter_attrs(const Node& n);
// The E_d inputs of a gather (inputs 1..r) and of a scatter (inputs 2..r+1), and the rest.
inline int gather_rank(const Node& g) { return static_cast<int>(gather_attrs(g).size.size()); }
inline int scatter_rank(const Node& s) { return static_cast<int>(scatter_attrs(s).size.size()); }
const Node* scatter_pred(const Node& s);  // null when none
const Node* gather_err(const Node& g);    // null when none
const Node* scatter_err(const Node& s);

// A gather view of src (shape A) with index nodes E (each of shape `out`, integer).
NodePtr make_gather(NodePtr src, std::vector<NodePtr> E, const Shape& out, SmallVec<int64_t, 8> size,
                    SmallVec<int64_t, 8> axis, std::shared_ptr<const SubscriptOrigin> origin = nullptr);

// The generalized gather movement: a node of shape A read at, per dim d of A, either the
// output axis `iota_axis[d]` (>= 0) or the index node `index[d]` (of shape `out`).
struct GatherMove {
  Shape in, out;
  std::vector<int> iota_axis;          // per dim of `in`: the output axis it follows, or -1
  std::vector<NodePtr> index;          // per dim of `in`: the index node (shape out), where iota_axis < 0
  SmallVec<int64_t, 8> size, axis;     // per dim of `in`: for index dims, check size and axis to name
};
// n (shape move.in) gathered: elementwise work pushed below, a gather view over each leaf.
NodePtr apply_gather(const NodePtr& n, const GatherMove& move);

// The index along `axis` of each element of `shape` (int64 arange, stride 1 on that axis).
NodePtr iota_node(const Shape& shape, int axis);
// If n is such an iota over its shape, its axis; else -1.
int iota_axis_of(const Node& n);

// The per-device error word's leaf (int64[4]) for the current backend and device, or null
// (the reference backend checks directly; a placeholder graph has none to run).
NodePtr error_word_leaf(bool placeholder);
// Reads back and clears the error words of the devices a checked kernel ran on since the
// last call; throws the IndexError of the first out-of-bounds index recorded.
void check_index_errors();
// The IndexError message NumPy gives.
std::string index_error_message(int64_t index, int64_t axis, int64_t size);

}  // namespace cufuse::detail
