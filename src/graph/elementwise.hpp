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
// Config::contract_fma: whether float `a * b + c` is built as one Fma (rule
// `contract-multiply-add`, elementwise.cpp); CUFUSE_FMA until set_contract_fma overrides it.
bool contract_fma_setting();
bool contract_fma_enabled();  // the setting, and no NumpyRounding scope on this thread
void set_contract_fma(bool on);
// While one lives on this thread, nothing is contracted: for the library's own builders that
// compute a NumPy function step by step as NumPy's Python code does (composites, isclose,
// polyval, ...), whose results are NumPy's bit for bit, not the user's expressions.
struct NumpyRounding {
  NumpyRounding();
  ~NumpyRounding();
  NumpyRounding(const NumpyRounding&) = delete;
  NumpyRounding& operator=(const NumpyRounding&) = delete;
};

// Broadcasts a node to `shape` (ValueError naming both shapes when it cannot).
NodePtr broadcast_node(const NodePtr& n, const Shape& shape);
// A cast node (no node when the dtype already matches and `always` is false).
NodePtr cast_node(const NodePtr& n, DType t, bool always = false);
// NumPy's same_kind casting rule (in-place ops).
bool can_cast_same_kind(DType from, DType to);

}  // namespace cufuse::detail
