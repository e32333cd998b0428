// src/library/cub_sort.hpp: the CUB glue of the sort node (src/library/sort_call.cpp), the one
// piece of device code cufuse compiles with nvcc (src/library/cub_sort.cu): stable ascending
// radix sorts of unsigned keys (1, 2, 4 or 8 bytes) with optional int64 values, one row or
// `rows` rows of `n` keys each. Every other kernel of a sort is generated and compiled by NVRTC.
#pragma once
#include <cstddef>
#include <cstdint>

namespace cufuse::detail {

struct CubSortArgs {
  int key_bytes = 4;                 // 1, 2, 4 or 8: uint8/16/32/64 keys
  const void* keys_in = nullptr;
  void* keys_out = nullptr;
  const int64_t* vals_in = nullptr;  // null: keys only
  int64_t* vals_out = nullptr;
  int64_t rows = 1, n = 0;           // rows * n keys, row-major
  const int64_t* offsets = nullptr;  // rows + 1 row starts (r * n); read where the rows are sorted as segments
  void* stream = nullptr;            // cudaStream_t
};

// How the rows are sorted: one device-wide radix sort (one row), one per row (a few long rows),
// or one segmented sort of all rows (many rows, which need `offsets`).
enum class CubSortPath { Single, PerRow, Segmented };
CubSortPath cub_sort_path(int64_t rows, int64_t n);

// The temporary storage bytes cub_sort needs for these arguments (no device work).
// Returns a cudaError_t (0: success).
int cub_sort_temp_bytes(const CubSortArgs& a, size_t& bytes);
// Sorts on a.stream with `temp` of `bytes` (from cub_sort_temp_bytes). Returns a cudaError_t.
int cub_sort(const CubSortArgs& a, void* temp, size_t bytes);

}  // namespace cufuse::detail
