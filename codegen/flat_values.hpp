// codegen/flat_values.hpp: an elementwise subgraph's value at one flat position of its 1-D
// shape, as a __device__ function over a generated kernel's parameter struct. A library call's
// own kernel (a selection by mask's passes) computes an input so where the planner fused the
// input's producer into it (rule fused-input), instead of reading it from memory; an input in
// memory is read the same way (one load at its stride).
#pragma once
#include <string>

#include "codegen/expr_emitter.hpp"

namespace cufuse::detail {

// Adds to e's parameters what `root` reads (names prefixed `pfx`) and returns the text of
//   __device__ __forceinline__ R fn(const P& p, const I i)
// returning root's value (its register type R) at flat position i (I: e's index type, P the
// struct `params_type`). Every node of the subgraph has at most one dimension (the planner's
// fused-input rule makes sure of it).
std::string flat_value_function(ExprEmitter& e, const Node* root, const std::string& pfx, const std::string& fn,
                                const std::string& params_type);
// The largest element offset a flat read of root reaches (for 32- or 64-bit indexing).
int64_t flat_span(const Node* root, const LeafBinding& bind);
// Is root read from memory at stride 1 (a leaf or an earlier result), so that a kernel may
// load it as vectors through the pointer parameter `name`? Then adds that parameter.
bool flat_contiguous_memory(ExprEmitter& e, const Node* root, const std::string& name);

}  // namespace cufuse::detail
