// codegen/sort_kernels.hpp: the order-preserving unsigned keys that cufuse sorts by, and the
// generated (NVRTC) kernels of the sort and search nodes that use them: the key-loading pass
// (each element's bits -> its key, the row's int32 or int64 iota and the segment offsets), the
// store pass (keys -> values), the widening of int32 indices to int64 and the binary search of
// searchsorted. The host functions below are
// the same mapping for the reference backend, so both backends order alike.
//
// The mapping (w = the dtype's width in bits, S = the sign bit):
//   bool, unsigned   key = bits
//   signed           key = bits ^ S
//   float            NaN (any sign, any payload) -> all ones: after +inf, so NaNs sort last as NumPy's;
//                    negative -> ~bits; positive -> bits | S; with `zeros_equal` -0.0 -> the key of +0.0
//                    (argsort, searchsorted: NumPy's comparisons see them equal, and a stable sort keeps
//                    their order), else -0.0 sorts just before +0.0 (sort keeps every value's bits).
// Back from a key: NaN keys give the dtype's default quiet NaN.
#pragma once
#include <cstdint>
#include <string>

#include "codegen/kernel.hpp"
#include "cufuse/dtype.hpp"

namespace cufuse::detail {

struct SortKeyType {
  int bytes = 4;      // key width: the dtype's (bool: 1)
  int kind = 0;       // 0 bool/unsigned, 1 signed, 2 float
  uint64_t sign = 0;  // the sign bit
  uint64_t inf = 0;   // float: the bits of +inf (a magnitude above is NaN)
  uint64_t qnan = 0;  // float: the default quiet NaN
  uint64_t ones() const { return bytes == 8 ? ~uint64_t(0) : (uint64_t(1) << (bytes * 8)) - 1; }
};
SortKeyType sort_key_type(DType t);

inline uint64_t sort_key(uint64_t bits, const SortKeyType& k, bool zeros_equal) {
  if (k.kind == 0) return bits;
  if (k.kind == 1) return bits ^ k.sign;
  const uint64_t m = bits & ~k.sign & k.ones();
  if (m > k.inf) return k.ones();
  if (zeros_equal && m == 0) return k.sign;
  return (bits & k.sign) ? (~bits & k.ones()) : (bits | k.sign);
}
inline uint64_t sort_key_bits(uint64_t key, const SortKeyType& k) {
  if (k.kind == 0) return key;
  if (k.kind == 1) return key ^ k.sign;
  if (key == k.ones()) return k.qnan;
  return (key & k.sign) ? (key & ~k.sign) : (~key & k.ones());
}

// Parameters of the generated kernels (the same layout on both sides: pointers and 64-bit ints).
struct SortLoadParams {
  const void* in;       // elements of the dtype (rows * n)
  void* keys;           // their keys, or null (the input is its own key)
  void* idx;            // each row's 0..n-1 (int32 or int64: the kernel's), or null
  long long* offsets;   // rows + 1 row starts, or null
  long long total, n, rows;
};
struct SortStoreParams {  // also the index widening's: int32 `keys` -> int64 `out`
  const void* keys;
  void* out;
  long long total;
};
struct SearchParams {
  const void* a;        // sorted elements (n)
  const void* v;        // elements to find (m)
  long long* out;       // insertion points (m)
  long long n, m;
  long long right;      // side="right"
};

// Kernel sources (one extern "C" kernel each, named in `name`) and launch shapes.
struct SortKernel {
  std::string name, source;
};
// `index_bytes`: the iota's width, 8 (int64) or 4 (int32: CUB then moves 4 bytes less per
// element and pass, and sort_widen_kernel writes the int64 indices).
SortKernel sort_load_kernel(DType t, bool zeros_equal, int index_bytes = 8);
SortKernel sort_store_kernel(DType t);
SortKernel sort_widen_kernel();
SortKernel search_kernel(DType t);
// A grid-stride launch over `total` threads.
LaunchDims sort_launch_dims(int64_t total);

}  // namespace cufuse::detail
