// codegen/sort_kernels.cpp: the CUDA sources of the sort node's key-loading and store passes and
// of searchsorted's binary search (codegen/sort_kernels.hpp has the key mapping they share with
// the host reference).
#include "codegen/sort_kernels.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cufuse/error.hpp"

namespace cufuse::detail {

SortKeyType sort_key_type(DType t) {
  SortKeyType k;
  k.bytes = itemsize(t);
  k.sign = uint64_t(1) << (k.bytes * 8 - 1);
  if (t == DType::Bool || is_unsigned_int(t)) k.kind = 0;
  else if (is_signed_int(t)) k.kind = 1;
  else k.kind = 2;
  switch (t) {
    case DType::Float16: k.inf = 0x7c00, k.qnan = 0x7e00; break;
    case DType::BFloat16: k.inf = 0x7f80, k.qnan = 0x7fc0; break;
    case DType::Float32: k.inf = 0x7f800000u, k.qnan = 0x7fc00000u; break;
    case DType::Float64: k.inf = 0x7ff0000000000000ull, k.qnan = 0x7ff8000000000000ull; break;
    default: break;
  }
  return k;
}

namespace {

const char* unsigned_type(int bytes) {
  switch (bytes) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    default: return "unsigned long long";
  }
}

// The grid-stride loop of the passes (a thread has one element or a few): not unrolled, since
// NVVM otherwise divides (64 bits) for the trip count in every thread before the loop; that and
// the iota's 64-bit modulo were most of the instructions of these memory-bound kernels (under
// ncu on the H200, the int32 iota alone wrote 256 MiB in 328 us, slower than the widening's
// 768 MiB in 312 us). Not measured since.
constexpr const char* kLoop =
    "#define CF_LOOP(i, first, end) _Pragma(\"unroll 1\") for (long long i = (first); i < (end); i += stride)\n";

// typedef U, and cf_key(U) for dtype t; cf_bits(U key) back; the loop macro.
std::string key_functions(DType t, bool zeros_equal) {
  const SortKeyType k = sort_key_type(t);
  std::string s = std::string(kLoop) + fmt::format(
      "typedef {} U;\n"
      "#define CF_SIGN ((U)0x{:x}ull)\n#define CF_INF ((U)0x{:x}ull)\n#define CF_QNAN ((U)0x{:x}ull)\n"
      "#define CF_ONES ((U)~(U)0)\n",
      unsigned_type(k.bytes), k.sign, k.inf, k.qnan);
  switch (k.kind) {
    case 0:
      s += "__device__ __forceinline__ U cf_key(U b) { return b; }\n"
           "__device__ __forceinline__ U cf_bits(U k) { return k; }\n";
      break;
    case 1:
      s += "__device__ __forceinline__ U cf_key(U b) { return (U)(b ^ CF_SIGN); }\n"
           "__device__ __forceinline__ U cf_bits(U k) { return (U)(k ^ CF_SIGN); }\n";
      break;
    default:
      s += fmt::format(
          "__device__ __forceinline__ U cf_key(U b) {{\n"
          "  const U m = (U)(b & (U)~CF_SIGN);\n"
          "  if (m > CF_INF) return CF_ONES;\n"
          "  {}"
          "  return (b & CF_SIGN) ? (U)~b : (U)(b | CF_SIGN);\n}}\n"
          "__device__ __forceinline__ U cf_bits(U k) {{\n"
          "  if (k == CF_ONES) return CF_QNAN;\n"
          "  return (k & CF_SIGN) ? (U)(k & (U)~CF_SIGN) : (U)~k;\n}}\n",
          zeros_equal ? "if (m == 0) return CF_SIGN;\n" : "");
  }
  return s;
}

std::string suffix(DType t) { return std::string(info(t).short_name); }

}  // namespace

SortKernel sort_load_kernel(DType t, bool zeros_equal, int index_bytes) {
  if (index_bytes != 4 && index_bytes != 8) throw InternalError("sort_load_kernel: index_bytes is 4 or 8");
  SortKernel k;
  k.name = fmt::format("cf_sort_load_{}{}{}", suffix(t), zeros_equal ? "_z" : "", index_bytes == 4 ? "_i4" : "");
  k.source = key_functions(t, zeros_equal) + fmt::format(R"(
typedef {} I;
struct Params {{ const U* in; U* keys; I* idx; long long* offsets; long long total, n, rows; }};
extern "C" __global__ void {}(Params p) {{
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (p.keys)
    CF_LOOP(i, first, p.total) p.keys[i] = cf_key(p.in[i]);
  if (p.idx) {{
    if (p.rows == 1) {{
      CF_LOOP(i, first, p.total) p.idx[i] = (I)i;
    }} else if (p.total <= 0xffffffffll) {{
      const unsigned n = (unsigned)p.n;
      CF_LOOP(i, first, p.total) p.idx[i] = (I)((unsigned)i % n);
    }} else {{
      CF_LOOP(i, first, p.total) p.idx[i] = (I)(i % p.n);
    }}
  }}
  if (p.offsets)
    CF_LOOP(r, first, p.rows + 1) p.offsets[r] = r * p.n;
}}
)",
                                                                         index_bytes == 4 ? "int" : "long long", k.name);
  return k;
}

SortKernel sort_widen_kernel() {
  SortKernel k;
  k.name = "cf_sort_widen_i4";
  k.source = std::string(kLoop) + fmt::format(R"(
struct Params {{ const int* in; long long* out; long long total; }};
extern "C" __global__ void {}(Params p) {{
  const long long stride = (long long)gridDim.x * blockDim.x;
  CF_LOOP(i, (long long)blockIdx.x * blockDim.x + threadIdx.x, p.total) p.out[i] = p.in[i];
}}
)",
                                             k.name);
  return k;
}

SortKernel sort_store_kernel(DType t) {
  SortKernel k;
  k.name = fmt::format("cf_sort_store_{}", suffix(t));
  k.source = key_functions(t, false) + fmt::format(R"(
struct Params {{ const U* keys; U* out; long long total; }};
extern "C" __global__ void {}(Params p) {{
  const long long stride = (long long)gridDim.x * blockDim.x;
  CF_LOOP(i, (long long)blockIdx.x * blockDim.x + threadIdx.x, p.total) p.out[i] = cf_bits(p.keys[i]);
}}
)",
                                                   k.name);
  return k;
}

SortKernel search_kernel(DType t) {
  SortKernel k;
  k.name = fmt::format("cf_searchsorted_{}", suffix(t));
  k.source = key_functions(t, true) + fmt::format(R"(
struct Params {{ const U* a; const U* v; long long* out; long long n, m, right; }};
extern "C" __global__ void {}(Params p) {{
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.m; i += stride) {{
    const U x = cf_key(p.v[i]);
    long long lo = 0, hi = p.n;
    while (lo < hi) {{
      const long long mid = lo + ((hi - lo) >> 1);
      const U y = cf_key(p.a[mid]);
      if (p.right ? (y <= x) : (y < x)) lo = mid + 1; else hi = mid;
    }}
    p.out[i] = lo;
  }}
}}
)",
                                                  k.name);
  return k;
}

LaunchDims sort_launch_dims(int64_t total) {
  LaunchDims d;
  d.block[0] = 256;
  d.grid[0] = static_cast<unsigned>(std::clamp<int64_t>((total + 255) / 256, 1, int64_t(1) << 20));
  return d;
}

}  // namespace cufuse::detail
