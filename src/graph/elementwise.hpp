// src/graph/elementwise.hpp: building elementwise nodes from operands: NumPy 2 promotion
// with weak C++ scalars, broadcasting, the op table's type rules, and the graph budget.
#pragma once
#include "core/node.hpp"
#include "core/op_table.hpp"
#include "cufuse/array.hpp"

namespace cufuse::detail {

// The node of op(args...). `cast_to` is the target dtype of Op::Cast.
NodePtr elementwise_node(Op op, const Operand* const* args, int n, DType cast_to = DType::Bool);
Array elementwise(Op op, std::initializer_list<const Operand*> args, DType cast_to = DType::Bool);

// Broadcasts a node to `shape` (ValueError naming both shapes when it cannot).
NodePtr broadcast_node(const NodePtr& n, const Shape& shape);
// A cast node (no node when the dtype already matches and `always` is false).
NodePtr cast_node(const NodePtr& n, DType t, bool always = false);
// NumPy's same_kind casting rule (in-place ops).
bool can_cast_same_kind(DType from, DType to);

}  // namespace cufuse::detail
