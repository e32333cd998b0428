// src/library/cub_sort.hpp: the CUB glue of the sort node (src/library/sort_call.cpp), the one
// piece of device code cufuse compiles with nvcc (src/library/cub_sort.cu): stable ascending
// radix sorts of keys of 1, 2, 4 or 8 bytes with optional int32 or int64 values (indices), one
// row or `rows` rows of `n` keys each. Every other kernel of a sort is generated and compiled by NVRTC.
//
// Where one radix sort or one per row sorts rows of fewer than 2^31 keys (cub_sort_maps_keys),
// CUB reads the elements themselves: it maps their bits to order-preserving keys as it loads
// them in each pass and back as it stores them (its "twiddling", here with the mapping of
// codegen/sort_kernels.hpp: NaNs after +inf as one NaN written back as the default quiet NaN,
// -0.0 before 0.0 or, for argsort, equal to it), so a sort of values needs no kernel before or
// after CUB and writes straight into the result. Elsewhere (segmented sorts, longer rows) the
// caller gives unsigned keys (CubKeyKind::Bits) from its generated key kernel.
#pragma once
#include <cstddef>
#include <cstdint>

namespace cufuse::detail {

// How CUB reads a key's bits: as unsigned (bool, unsigned dtypes, or keys made by the caller's
// key kernel), as two's complement, or as an IEEE float of the key's width (2 bytes: float16,
// or bfloat16 with `bfloat`). A float sort of keys alone keeps -0.0 before 0.0 (a sort of
// values); a float sort with values (argsort) keys -0.0 as 0.0, so a stable sort keeps their
// order, and writes the keys back with -0.0 as 0.0 (the other combinations are not built).
enum class CubKeyKind { Bits, Signed, Float };

struct CubSortArgs {
  int key_bytes = 4;                 // 1, 2, 4 or 8
  CubKeyKind kind = CubKeyKind::Bits;
  bool bfloat = false;               // kind Float of 2 bytes: bfloat16, not float16
  const void* keys_in = nullptr;
  void* keys_out = nullptr;
  const void* vals_in = nullptr;     // null: keys only; else indices of cub_sort_index_bytes
  void* vals_out = nullptr;
  int64_t rows = 1, n = 0;           // rows * n keys, row-major
  const int64_t* offsets = nullptr;  // rows + 1 row starts (r * n); read where the rows are sorted as segments
  void* stream = nullptr;            // cudaStream_t
};

// How the rows are sorted: one device-wide radix sort (one row), one per row (a few long rows),
// or one segmented sort of all rows (many rows, which need `offsets`).
enum class CubSortPath { Single, PerRow, Segmented };
CubSortPath cub_sort_path(int64_t rows, int64_t n);
// Whether CUB maps the keys itself here (kinds Signed and Float): one radix sort or one per
// row, rows of fewer than 2^31 keys (32-bit offsets). Otherwise kind Bits.
bool cub_sort_maps_keys(int64_t rows, int64_t n);
// The width of the values (argsort's indices within a row) sorted with keys: 4 (int32) for
// rows of fewer than 2^31 keys, so each pass moves 4 bytes less per element, else 8 (int64:
// one radix sort or one per row only; a segmented sort of such rows is not built).
int cub_sort_index_bytes(int64_t n);

// The temporary storage bytes cub_sort needs for these arguments (no device work).
// Returns a cudaError_t (0: success).
int cub_sort_temp_bytes(const CubSortArgs& a, size_t& bytes);
// Sorts on a.stream with `temp` of `bytes` (from cub_sort_temp_bytes). Returns a cudaError_t.
int cub_sort(const CubSortArgs& a, void* temp, size_t bytes);

// CUB's mapping for these arguments on the host, the very functions its kernels call: an
// element's bits -> the unsigned key it is ordered by, and a key -> the bits written back (for
// the tests against codegen/sort_kernels.hpp's sort_key and sort_key_bits).
uint64_t cub_key_in(const CubSortArgs& a, uint64_t bits);
uint64_t cub_key_out(const CubSortArgs& a, uint64_t key);

}  // namespace cufuse::detail
