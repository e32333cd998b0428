// codegen/compaction_kernels.hpp: the generated (NVRTC) kernels of a selection by mask (x[mask],
// nonzero, argwhere, flatnonzero, extract, compress; src/library/compaction_call.hpp), over
// tiles of kCompactTile mask elements ("rows": a row is W consecutive values), in one of two
// forms (src/library_build/compaction.cpp chooses):
//   one pass  one kernel: a block a tile, taken by ticket; the tile's flags, their ranks by a
//            block scan (each thread 32 consecutive flags as one bit word, warp shuffles, the
//            warps' sums in shared memory), the selected rows' tile positions staged in shared
//            memory in order; the tile's start by a decoupled look-back over the tiles before
//            it (each publishes its count, then its inclusive end: one 64-bit status word,
//            flag and count); then the block copies the selected rows to out[(start + rank) *
//            W + w], consecutive threads writing consecutive elements, into a buffer of n rows
//            (the upper bound), and the last tile writes the total (int64) to a count word;
//   two passes  count: one block a tile, the tile's count of True rows (int32), nothing else
//            written; the engine then scans these few counts (cumsum: each tile's end, and the
//            total); compact: as the one pass, the tile's start read from those ends, into a
//            result of exactly count rows.
// All are plan kernel steps (LibraryCall::emit_kernel), their parameters bound as any
// kernel's. The mask is read from memory (a contiguous bool array: two 16-byte vectors a
// thread) or computed from its fused producer (rule fused-input, codegen/flat_values.hpp: a
// warp computes 32 consecutive elements a turn, coalesced, and a ballot makes each lane's bit
// word); the values are copied as raw bits of their width from memory (any dtype), computed
// from their fused producer at each selected row, or are the rows' coordinates or numbers
// (int64: argwhere, flatnonzero). So in one pass the mask and the values are read (or
// computed) once; in two, a mask in memory is read twice, a lazy mask's producer computed in
// each pass.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/expr_emitter.hpp"
#include "codegen/kernel.hpp"

namespace cufuse::detail {

constexpr int64_t kCompactTile = 8192;    // mask elements a tile (a block of 256 x 32 flags)
constexpr int kCompactMaxCoordDims = 64;  // NumPy's limit on dimensions

// The count pass over `mask` (bool, shape (n,)), writing each tile's count (int32) to buffer `out`.
KernelSpec emit_compact_count(const Node* mask, int out_buffer, const LeafBinding& bind);

// The compact pass: the rows of `values` (n * w elements) where `mask` holds, or (values null)
// each selected row's coordinates (int64, w = strides.size()) (row / strides[d]) % shape[d],
// to buffer `out`. Two passes: `ends` the tiles' inclusive ends (int32 or int64). One pass
// (ends null): the tiles' starts by look-back, `out` holds n rows, and the count of selected
// rows goes to buffer `count_buffer` (int64, one element; -1: not written).
struct CompactPass {
  const Node* mask = nullptr;
  const Node* ends = nullptr;
  const Node* values = nullptr;
  int64_t w = 1;
  std::vector<int64_t> strides, shape;  // coordinates
  int out_buffer = -1;
  int count_buffer = -1;
};
KernelSpec emit_compact(const CompactPass& c, const LeafBinding& bind);

// A block a tile over n mask elements.
LaunchDims compact_launch_dims(int64_t n);

}  // namespace cufuse::detail
