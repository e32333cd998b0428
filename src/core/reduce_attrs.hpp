// src/core/reduce_attrs.hpp: what a Reduce or Scan node computes.
//
// A Reduce node reduces its one input (dtype T) over `axes` (sorted, non-negative, in the
// input's coordinates) with `op`; its dtype is T too (bool for Any/All, int64 for
// ArgMax/ArgMin): accumulator conversions are elementwise Cast nodes around it, so the
// node itself is homogeneous. Its shape is the input's with the axes removed, or kept as
// 1 with keepdims. ArgMax/ArgMin give the row-major position within the reduced axes.
// A Scan node (NodeKind::Reduce with op CumSum/CumProd) keeps the input's shape and runs
// along its single axis.
#pragma once
#include <string>

#include "core/node.hpp"
#include "cufuse/reduce.hpp"

namespace cufuse::detail {

inline const char* reduce_name(ReduceOp op) { return CUFUSE_ENUM_NAME(CUFUSE_REDUCE_OPS, op); }
inline bool is_scan(ReduceOp op) { return op == ReduceOp::CumSum || op == ReduceOp::CumProd; }
inline bool is_arg(ReduceOp op) { return op == ReduceOp::ArgMax || op == ReduceOp::ArgMin; }

// ReduceOp and ReduceAttrs: core/node_attrs.hpp.
inline const ReduceAttrs& reduce_attrs(const Node& n) { return std::get<ReduceAttrs>(n.attrs); }

// NumPy's axis argument as sorted, non-negative axes of an ndim-array: IndexError for an
// axis out of range, ValueError for a repeated one (messages start with `what`).
Axes normalize_axes(const AxisArg& axis, int ndim, const std::string& what);

// Builds a Reduce (or scan) node; `out_dtype` is T, bool or int64 as above.
NodePtr make_reduce(ReduceOp op, NodePtr input, Axes axes, bool keepdims);

}  // namespace cufuse::detail
