// codegen/compaction_kernels.hpp: the generated (NVRTC) kernels of a selection by mask (x[mask],
// nonzero, argwhere, flatnonzero, extract, compress; src/library/compaction_call.hpp), in two
// passes over tiles of kCompactTile mask elements ("rows": a row is W consecutive values):
//   count    one block a tile: the tile's count of True rows (int32), nothing else written;
//            the engine then scans these few counts (cumsum: each tile's end, and the total);
//   compact  one block a tile: the tile's flags again, their ranks by a block scan (each thread
//            32 consecutive flags as one bit word, warp shuffles, the warps' sums in shared
//            memory), the selected rows' tile positions staged in shared memory in order, then
//            the block copies the selected rows to out[(tile start + rank) * W + w], consecutive
//            threads writing consecutive elements.
// So the mask is read twice and the values once, the result written once, in order (NumPy's).
// Values are copied as raw bits of their width (any dtype), or are the rows' coordinates or
// numbers (int64: argwhere, flatnonzero).
#pragma once
#include <cstdint>
#include <string>

#include "codegen/kernel.hpp"

namespace cufuse::detail {

constexpr int64_t kCompactTile = 8192;    // mask elements a tile (a block of 256 x 32 flags)
constexpr int kCompactMaxCoordDims = 64;  // NumPy's limit on dimensions

// Parameters of the generated kernels (pointers and 64-bit integers: one layout on both sides).
struct CompactCountParams {
  const unsigned char* mask;  // n bools
  int* counts;                // a count per tile
  long long n;
};
struct CompactParams {
  const unsigned char* mask;  // n bools
  const void* ends;           // per tile: inclusive sum of the counts (int32 or int64)
  const void* values;         // n * w elements (raw bits), or null for coordinates
  void* out;
  long long n, w;
  // coordinates: value (row, d) = (row / stride[d]) % shape[d]
  long long stride[kCompactMaxCoordDims], shape[kCompactMaxCoordDims];
};

struct CompactKernel {
  std::string name, source;
};
// The count pass.
CompactKernel compact_count_kernel();
// What the compact pass copies: values from memory as raw bits; the rows' coordinates, int64
// (row / stride[d]) % shape[d] (argwhere); or the row number itself, int64 (flatnonzero).
enum class CompactValues : uint8_t { Bits, Coords, Index };
struct CompactForm {
  CompactValues values = CompactValues::Bits;
  int value_bytes = 4;  // Bits: a value's width (1, 2, 4, 8 or 16)
  bool ends64 = false;  // the tiles' ends are int64 (else int32)
  bool one = true;      // W == 1
  bool idx32 = true;    // n * W < 2^31: 32-bit index arithmetic (a 64-bit division per element
                        // made flatnonzero of 2^26 elements 0.30 ms)
};
CompactKernel compact_kernel(const CompactForm& f);
// A block a tile over n mask elements.
LaunchDims compact_launch_dims(int64_t n);

}  // namespace cufuse::detail
