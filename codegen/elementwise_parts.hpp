// codegen/elementwise_parts.hpp: rule block-partitioned-parts, a join's parts each given a range
// of one kernel's blocks.
//
// A concatenation (or stack) is `where(coordinate < end of part 0, part 0, where(...))` over
// its parts, each part's leaves seen through a Clamp map shifted by the part's offset along
// the axis (graph/manipulation.cpp); the general elementwise kernel selects the part per
// element and reads through the maps. Where the value written is such a chain (under elementwise
// ops whose other operands are scalars: `concatenate(...) * 3`), each part is instead its own
// iteration space, the part's shape, its expression rebuilt over the maps' inputs (no map, no
// per-element choice), writing the output's region of that part (the output's strides, its
// pointer moved by the part's offset): a piece (codegen/elementwise_kernel.hpp) in whatever mode
// the elementwise emitter chooses for it, usually contiguous with 16-byte loads and stores. The
// kernel gives piece k blocks [B_k, B_k+1) of its 1-D grid, so the branch is uniform per block,
// and it stays one kernel. Any axis (a part is then rows of the output's rows), up to the
// join's 16 fused parts, every dtype, broadcast parts. Anything else (several outputs, a part
// that is not a map of the join, a mode that needs a kernel of its own) is emitted as before.
// CUFUSE_EW_PARTS=0 turns the rule off.
#pragma once
#include <optional>
#include <vector>

#include "codegen/elementwise_kernel.hpp"

namespace cufuse::detail {

// `where(coordinate < s, a, b)`: a Where of the output's dtype on both sides whose condition
// compares a join's coordinate generator (graph/manip_support.hpp: is_join_coordinate, never a
// user's arange) with a Scalar leaf (a concatenation's choice of part).
bool is_part_select(const Node* n);

// The kernel by rule block-partitioned-parts, or nullopt where the rule does not apply.
std::optional<KernelSpec> emit_partitioned_kernel(const Shape& iter_shape, const std::vector<EwOutput>& outputs,
                                                  const LeafBinding& bind);

}  // namespace cufuse::detail
