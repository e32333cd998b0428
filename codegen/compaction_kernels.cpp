// codegen/compaction_kernels.cpp: the CUDA sources of the selection-by-mask passes (count and
// compact, codegen/compaction_kernels.hpp says what each does) and their launch shape.
#include "codegen/compaction_kernels.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cufuse/error.hpp"

namespace cufuse::detail {

namespace {

static_assert(kCompactTile == 256 * 32, "a tile is a block of 256 threads x 32 flags (one bit word each)");

// What both passes share: the parameter structs and a thread's 32 consecutive flags as one
// bit word (bit j: mask[r0 + j] != 0), read as two 16-byte vectors where they are whole and
// aligned, else byte by byte (the tile at the end, or a mask at an odd offset).
std::string common() {
  return fmt::format(R"(
struct CompactCountParams {{ const unsigned char* mask; int* counts; long long n; }};
struct CompactParams {{
  const unsigned char* mask; const void* ends; const void* values; void* out; long long n, w;
  long long stride[{0}], shape[{0}];
}};
struct cf_v16 {{ unsigned long long a, b; }};
// 4 bools (bytes) -> 4 bits: a nonzero byte is 0x01, then one multiply gathers the low bits
__device__ __forceinline__ unsigned cf_nib(unsigned w) {{ return ((__vcmpne4(w, 0u) & 0x01010101u) * 0x01020408u) >> 24; }}
__device__ __forceinline__ unsigned cf_flags(const unsigned char* m, long long r0, long long n) {{
  unsigned bits = 0u;
  if (r0 + 32 <= n && (((unsigned long long)(m + r0)) & 15ull) == 0ull) {{
    const uint4 a = __ldg((const uint4*)(m + r0)), b = __ldg((const uint4*)(m + r0 + 16));
    bits = cf_nib(a.x) | cf_nib(a.y) << 4 | cf_nib(a.z) << 8 | cf_nib(a.w) << 12 |
           cf_nib(b.x) << 16 | cf_nib(b.y) << 20 | cf_nib(b.z) << 24 | cf_nib(b.w) << 28;
  }} else {{
    for (int j = 0; j < 32; ++j)
      if (r0 + j < n && m[r0 + j] != 0) bits |= 1u << j;
  }}
  return bits;
}}
// The block's exclusive count of flags before this thread's 32 (`bits`), and the tile's total:
// a warp scan of the popcounts, the warps' sums in shared memory (`ws`, 8 ints).
__device__ __forceinline__ int cf_block_rank(unsigned bits, int* ws, int& total) {{
  const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5), c = __popc(bits);
  int x = c;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {{
    const int y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }}
  if (lane == 31) ws[warp] = x;
  __syncthreads();
  int k = x - c;
  total = 0;
#pragma unroll
  for (int w = 0; w < 8; ++w) {{
    const int s = ws[w];
    if (w < warp) k += s;
    total += s;
  }}
  return k;
}}
)",
                     kCompactMaxCoordDims);
}

const char* value_type(int bytes) {
  switch (bytes) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    case 8: return "unsigned long long";
    case 16: return "cf_v16";
  }
  throw InternalError(fmt::format("compaction kernel: no value of {} bytes", bytes));
}

}  // namespace

CompactKernel compact_count_kernel() {
  CompactKernel k;
  k.name = "cf_compact_count";
  k.source = common() + R"(
extern "C" __global__ void __launch_bounds__(256) cf_compact_count(CompactCountParams p) {
  __shared__ int cf_ws[8];
  const long long t0 = (long long)blockIdx.x * 8192;
  int c = __popc(cf_flags(p.mask, t0 + (long long)threadIdx.x * 32, p.n));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(0xffffffffu, c, o);
  if ((threadIdx.x & 31) == 0) cf_ws[threadIdx.x >> 5] = c;
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
#pragma unroll
    for (int w = 0; w < 8; ++w) s += cf_ws[w];
    p.counts[blockIdx.x] = s;
  }
}
)";
  return k;
}

// Loading each thread's 32 values with its flags (CUB's way: 16-byte vectors issued before the
// block scan, the selected values staged in shared memory) was slower than staging the selected
// positions and gathering the values after: I1 (x[mask] of f32[2^26], H200) 0.172 ms against
// 0.153 (56 registers a thread, 4 blocks an SM, against 34 and 7).
CompactKernel compact_kernel(const CompactForm& f) {
  const bool bits = f.values == CompactValues::Bits;
  if (bits && f.value_bytes != 1 && f.value_bytes != 2 && f.value_bytes != 4 && f.value_bytes != 8 &&
      f.value_bytes != 16)
    throw InternalError(fmt::format("compaction kernel: no value of {} bytes", f.value_bytes));
  CompactKernel k;
  k.name = fmt::format("cf_compact_{}_{}_{}_{}",
                       bits ? fmt::format("b{}", f.value_bytes)
                            : std::string(f.values == CompactValues::Coords ? "coords" : "index"),
                       f.ends64 ? "e64" : "e32", f.one ? "one" : "rows", f.idx32 ? "i32" : "i64");
  // The value at element d of tile row `row` (global), in the index type I.
  auto value = [&](const char* d) {
    switch (f.values) {
      case CompactValues::Bits: return fmt::format("v[row * W + {}]", d);
      case CompactValues::Coords: return fmt::format("(long long)((row / (I)p.stride[{0}]) % (I)p.shape[{0}])", d);
      case CompactValues::Index: return std::string("(long long)row");
    }
    return std::string();
  };
  std::string copy;
  if (f.one) {
    // W == 1: U loads in flight a thread before their stores (32 bytes of values)
    const int U = 32 / std::max(bits ? f.value_bytes : 8, 4);
    copy = fmt::format(R"(
  const I W = 1;
  (void)W;
  for (int q0 = tid; q0 < total; q0 += {0} * 256) {{
    S a[{0}];
#pragma unroll
    for (int u = 0; u < {0}; ++u) {{
      const int q = q0 + u * 256;
      if (q < total) {{
        const I row = (I)t0 + cf_sel[q];
        a[u] = {1};
      }}
    }}
#pragma unroll
    for (int u = 0; u < {0}; ++u)
      if (q0 + u * 256 < total) o[q0 + u * 256] = a[u];
  }}
)",
                       U, value("0"));
  } else {
    copy = fmt::format(R"(
  const I W = (I)p.w, tot = (I)total * W;
  for (I q = tid; q < tot; q += 256) {{
    const I r = q / W, d = q - r * W, row = (I)t0 + cf_sel[r];
    o[q] = {};
  }}
)",
                       value("d"));
  }
  k.source = common() + fmt::format(R"(
typedef {S} S;
typedef {E} E;
typedef {I} I;
extern "C" __global__ void __launch_bounds__(256) {name}(CompactParams p) {{
  __shared__ unsigned short cf_sel[8192];
  __shared__ int cf_ws[8];
  const int tid = (int)threadIdx.x;
  const long long tile = blockIdx.x, t0 = tile * 8192;
  unsigned bits = cf_flags(p.mask, t0 + (long long)tid * 32, p.n);
  int total;
  int k = cf_block_rank(bits, cf_ws, total);
  while (bits != 0u) {{
    const int j = __ffs(bits) - 1;
    bits &= bits - 1u;
    cf_sel[k++] = (unsigned short)(tid * 32 + j);
  }}
  __syncthreads();
  const long long base = tile == 0 ? 0ll : (long long)((const E*)p.ends)[tile - 1];
  const S* __restrict__ v = (const S*)p.values;
  (void)v;
  S* __restrict__ o = (S*)p.out + base * {w};
{copy}}}
)",
                                    fmt::arg("S", bits ? value_type(f.value_bytes) : "long long"),
                                    fmt::arg("E", f.ends64 ? "long long" : "int"),
                                    fmt::arg("I", f.idx32 ? "unsigned" : "long long"), fmt::arg("name", k.name),
                                    fmt::arg("w", f.one ? "1" : "p.w"), fmt::arg("copy", copy));
  return k;
}

LaunchDims compact_launch_dims(int64_t n) {
  LaunchDims d;
  d.block[0] = 256;
  d.grid[0] = static_cast<unsigned>((n + kCompactTile - 1) / kCompactTile);
  return d;
}

}  // namespace cufuse::detail
