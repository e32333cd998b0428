// codegen/reduction_kernel.hpp: one kernel for a reduction group: the reductions of one
// (input shape, axes) domain with their prologues, in phases (a later phase reads earlier
// results broadcast back over the row), the row-shaped results, the reduced values and
// their epilogues.
#pragma once
#include <vector>

#include "codegen/expr_emitter.hpp"
#include "codegen/kernel.hpp"
#include "core/node.hpp"
#include "plan/plan.hpp"

namespace cufuse::detail {

struct RedOutput {
  NodePtr node;
  OutKind kind;   // Value, Epilogue or Row
  Layout layout;  // destination layout over node's shape
  int buffer;
  bool aligned16;
};

struct ReductionSpec {
  Shape S;
  Axes axes;
  std::vector<const Node*> reductions;
  std::vector<int> phase;
  std::vector<RedOutput> outputs;
  bool multipass = false;  // do not keep rows on chip
};

KernelSpec emit_reduction_kernel(const ReductionSpec& spec, const LeafBinding& bind);

// A cumulative sum/product along one axis, prologue fused, written with `layout`.
KernelSpec emit_scan_kernel(const NodePtr& scan, const Layout& out_layout, int out_buffer, bool aligned16,
                            const LeafBinding& bind);

}  // namespace cufuse::detail
