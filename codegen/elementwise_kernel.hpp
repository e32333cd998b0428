// codegen/elementwise_kernel.hpp: one fused elementwise kernel for one iteration space.
#pragma once
#include <functional>
#include <vector>

#include "codegen/expr_emitter.hpp"
#include "codegen/kernel.hpp"
#include "core/node.hpp"

namespace cufuse::detail {

struct EwOutput {
  NodePtr node;    // the value written
  Layout layout;   // where, in elements of the destination (contiguous for new memory)
  int buffer;      // the executable's buffer index (PatchSrc::BufferPtr)
  bool aligned16;  // destination pointer is 16-byte aligned
};


KernelSpec emit_elementwise_kernel(const Shape& iter_shape, const std::vector<EwOutput>& outputs,
                                   const LeafBinding& bind);

// The unroll factor of contiguous kernels (vectors per thread), CUFUSE_EW_UNROLL (1..8).
int elementwise_unroll();

}  // namespace cufuse::detail
