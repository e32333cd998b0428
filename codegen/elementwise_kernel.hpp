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
  int64_t shift = 0;  // a piece's (below): elements past the buffer's pointer where `layout` starts
};


KernelSpec emit_elementwise_kernel(const Shape& iter_shape, const std::vector<EwOutput>& outputs,
                                   const LeafBinding& bind);

// One iteration space's code as a piece of a block-partitioned kernel (codegen/elementwise_parts.hpp):
// the body of a device function taking its parameter struct as `p` (with `long long o<j>_sh`, each
// output's EwOutput::shift) and its block's coordinates cf_bx, cf_by in its own grid of cf_gx by
// cf_gy blocks, run by the kernel's 1-D blocks of kEwBlock threads.
struct EwPiece {
  bool ok = false;  // false: the form needs a kernel of its own (tiles, scatters)
  std::string decl, body, summary;  // the struct's fields; the statements; as KernelSpec::summary
  std::vector<unsigned char> params;
  std::vector<Patch> patches;       // offsets within the piece's struct
  int64_t grid_x = 1, grid_y = 1;
  int min_blocks = 0;               // as kernel_source's
};
constexpr int kEwBlock = 256;
EwPiece emit_elementwise_piece(const Shape& iter_shape, const std::vector<EwOutput>& outputs, const LeafBinding& bind);

// The unroll factor of contiguous kernels (vectors per thread), CUFUSE_EW_UNROLL (1..8).
int elementwise_unroll();

}  // namespace cufuse::detail
