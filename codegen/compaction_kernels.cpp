// codegen/compaction_kernels.cpp: the CUDA sources of the selection-by-mask kernels (one pass;
// two passes: count and compact; codegen/compaction_kernels.hpp says what each does), their
// parameters, workspace and launch shape.
#include "codegen/compaction_kernels.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "codegen/flat_values.hpp"
#include "codegen/preamble.hpp"
#include "cufuse/error.hpp"

namespace cufuse::detail {

namespace {

static_assert(kCompactTile == 256 * 32, "a tile is a block of 256 threads x 32 flags (one bit word each)");

constexpr const char* kParams = "cf_compact_params";

// What both passes share: a thread's 32 consecutive flags of a mask in memory as one bit word
// (bit j: mask[r0 + j] != 0), read as two 16-byte vectors where they are whole and aligned,
// else byte by byte (the tile at the end, or a mask at an odd offset); and the block's ranks.
const char* kCompactHelpers = R"(
// 4 bools (bytes) -> 4 bits: a nonzero byte is 0x01, then one multiply gathers the low bits
__device__ __forceinline__ unsigned cf_nib(unsigned w) { return ((__vcmpne4(w, 0u) & 0x01010101u) * 0x01020408u) >> 24; }
__device__ __forceinline__ unsigned cf_flags(const unsigned char* m, long long r0, long long n) {
  unsigned bits = 0u;
  if (r0 + 32 <= n && (((unsigned long long)(m + r0)) & 15ull) == 0ull) {
    const uint4 a = __ldg((const uint4*)(m + r0)), b = __ldg((const uint4*)(m + r0 + 16));
    bits = cf_nib(a.x) | cf_nib(a.y) << 4 | cf_nib(a.z) << 8 | cf_nib(a.w) << 12 |
           cf_nib(b.x) << 16 | cf_nib(b.y) << 20 | cf_nib(b.z) << 24 | cf_nib(b.w) << 28;
  } else {
    for (int j = 0; j < 32; ++j)
      if (r0 + j < n && m[r0 + j] != 0) bits |= 1u << j;
  }
  return bits;
}
// The block's exclusive count of flags before this thread's 32 (`bits`), and the tile's total:
// a warp scan of the popcounts, the warps' sums in shared memory (`ws`, 8 ints).
__device__ __forceinline__ int cf_block_rank(unsigned bits, int* ws, int& total) {
  const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5), c = __popc(bits);
  int x = c;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const int y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) ws[warp] = x;
  __syncthreads();
  int k = x - c;
  total = 0;
#pragma unroll
  for (int w = 0; w < 8; ++w) {
    const int s = ws[w];
    if (w < warp) k += s;
    total += s;
  }
  return k;
}
struct cf_v16 { unsigned long long a, b; };
)";

// One pass: a tile's status word (flag in bits 62-63: 1 its count, 2 its inclusive end; the
// number below), one 64-bit access each way, so a load sees flag and number together and needs
// no fence. cf_lookback (warp 0 of tile t > 0, whose count is `agg`) reads the words of the 32
// tiles before a window's end at once, waits until every word up to the nearest inclusive end
// is set, adds them, slides the window back while none is an end, then publishes t's own end.
// Integer sums: the result never depends on which words were found set. Tiles are taken by
// ticket in the order blocks start, so every tile waited on is running or done.
const char* kCompactLookback = R"(
__device__ __forceinline__ void cf_publish(unsigned long long* tw, long long t, unsigned long long flag, long long v) {
  ((volatile unsigned long long*)tw)[t] = (flag << 62) | (unsigned long long)v;
}
__device__ __forceinline__ long long cf_lookback(unsigned long long* tw, long long t, long long agg) {
  const int lane = (int)(threadIdx.x & 31);
  long long pre = 0, j = t - 1;
  for (;;) {
    const long long s = j - lane;
    const unsigned long long w = s >= 0 ? ((volatile unsigned long long*)tw)[s] : (2ull << 62);
    const unsigned f = (unsigned)(w >> 62);
    const unsigned zm = __ballot_sync(0xffffffffu, f == 0u), pm = __ballot_sync(0xffffffffu, f == 2u);
    const unsigned need = pm != 0u ? ((pm & (0u - pm)) << 1) - 1u : 0xffffffffu;  // lanes up to the nearest end
    if ((zm & need) != 0u) {
      __nanosleep(20);
      continue;
    }
    long long v = ((need >> lane) & 1u) != 0u ? (long long)(w & ((1ull << 62) - 1ull)) : 0ll;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    pre += v;
    if (pm != 0u) break;
    j -= 32;
  }
  if (lane == 0) cf_publish(tw, t, 2ull, pre + agg);
  return pre;
}
)";

// The mask's parameters (pointer `mask`, or its producer's, prefix m) and the statements that
// set `unsigned bits`, the thread's 32 flags from tile start t0. A computed mask: each warp
// takes 32 turns of 32 consecutive elements (coalesced), a ballot a turn, lane j keeping turn
// j's word, so a thread holds the same 32 consecutive flags as a read from memory gives it.
struct MaskCode {
  std::string fn, flags;
  bool memory = false;
};
MaskCode mask_code(ExprEmitter& e, const Node* mask) {
  MaskCode m;
  m.memory = mask->dtype == DType::Bool && flat_contiguous_memory(e, mask, "mask");
  if (m.memory) {
    m.flags = "  unsigned bits = cf_flags((const unsigned char*)p.mask, t0 + (long long)threadIdx.x * 32, p.n);\n";
    return m;
  }
  m.fn = flat_value_function(e, mask, "m", "cf_mask", kParams);
  m.flags = R"(  unsigned bits = 0u;
  {
    const int lane = (int)(threadIdx.x & 31);
    const long long wb = t0 + (long long)(threadIdx.x >> 5) * 1024 + lane;
#pragma unroll 8
    for (int j = 0; j < 32; ++j) {
      const long long q = wb + (long long)j * 32;
      const bool f = q < p.n && cf_mask(p, q) != 0;
      const unsigned b = __ballot_sync(0xffffffffu, f);
      if (lane == j) bits = b;
    }
  }
)";
  return m;
}

bool index64(const std::vector<const Node*>& nodes, const LeafBinding& bind) {
  int64_t span = 0;
  for (const Node* n : nodes)
    if (n) span = std::max(span, flat_span(n, bind));
  return span >= (int64_t(1) << 31) - 2 * kCompactTile;
}

// `min_blocks`: blocks an SM that __launch_bounds__ asks for (0: the compiler's choice).
KernelSpec finish(ExprEmitter& e, const std::string& kind, DType out, const std::string& fns, const std::string& body,
                  int64_t n, const std::string& summary, const char* helpers = "", int min_blocks = 0) {
  const std::string decl = e.pl.decl();
  const uint64_t h = std::hash<std::string>{}(decl + helpers + fns + body);
  KernelSpec k;
  k.name = kernel_name(kind, {out}, h);
  const std::string text = fmt::format("\nstruct {} {{\n{}}};\n{}{}{}\nextern \"C\" __global__ void __launch_bounds__(256{}) {}(const {} p) {{\n{}}}\n",
                                       kParams, decl, kCompactHelpers, helpers, fns,
                                       min_blocks > 0 ? fmt::format(", {}", min_blocks) : "", k.name, kParams, body);
  k.source = kernel_preamble(text) + text;
  k.params = e.pl.bytes();
  k.patches = std::move(e.patches);
  k.dims = compact_launch_dims(n);
  k.numel = n;
  k.summary = summary;
  return k;
}

void add_count(ExprEmitter& e, const std::string& name, int64_t v) {
  e.pl.set<long long>(e.pl.add("long long", 8, name), v);
}

void add_out(ExprEmitter& e, DType t, int buffer) {
  e.add_patch(e.pl.add("void*", 8, "out"), PatchSrc::BufferPtr, t, buffer);
}

}  // namespace

KernelSpec emit_compact_count(const Node* mask, int out_buffer, const LeafBinding& bind) {
  const int64_t n = mask->numel();
  ExprEmitter e(bind, index64({mask}, bind));
  add_count(e, "n", n);
  add_out(e, DType::Int32, out_buffer);
  const MaskCode m = mask_code(e, mask);
  const std::string body = "  __shared__ int cf_ws[8];\n  const long long t0 = (long long)blockIdx.x * 8192;\n" + m.flags + R"(
  int c = __popc(bits);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(0xffffffffu, c, o);
  if ((threadIdx.x & 31) == 0) cf_ws[threadIdx.x >> 5] = c;
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
#pragma unroll
    for (int w = 0; w < 8; ++w) s += cf_ws[w];
    ((int*)p.out)[blockIdx.x] = s;
  }
)";
  return finish(e, "compact_count", DType::Int32, m.fn, body, n,
                fmt::format("a block a tile of {} mask elements, 32 flags a thread as one bit word, mask {}", kCompactTile,
                            m.memory ? "read from memory (16-byte vectors)" : "computed by its fused producer"));
}

// One pass (H100, 2026-11-27, one call each, `--quick`; two passes 0.201 ms for I1, 0.396 for
// I1-lazy): the look-back first with no other change, I1 0.207-0.211 ms, I1-lazy 0.303-0.307
// (38 registers, 6 blocks an SM); the first turn's values loaded before the look-back, I1 0.201,
// I1-lazy 0.297; the same capped at 32 registers for 8 blocks an SM (__launch_bounds__(256, 8),
// a 4-byte spill in some lazy kernels), I1 0.200-0.201, I1-lazy 0.262-0.264: kept. I1 gains
// nothing over two passes: 8,192 tiles pass the look-back at about 32 tiles (one window) an L2
// round trip, ~45 tiles a us, which a mask in memory outruns; bench/README.md says more.
// Loading each thread's 32 values with its flags (CUB's way: 16-byte vectors issued before the
// block scan, the selected values staged in shared memory) was slower than staging the selected
// positions and gathering the values after: I1 (x[mask] of f32[2^26], H200) 0.172 ms against
// 0.153 (56 registers a thread, 4 blocks an SM, against 34 and 7).
KernelSpec emit_compact(const CompactPass& c, const LeafBinding& bind) {
  const int64_t n = c.mask->numel(), w = c.w;
  const bool coords = c.values == nullptr;
  if (coords && (w < 1 || w > kCompactMaxCoordDims || c.shape.size() != c.strides.size() ||
                 static_cast<int64_t>(c.strides.size()) != w))
    throw InternalError(fmt::format("compaction: {} coordinates a row (1 to {})", w, kCompactMaxCoordDims));
  const DType t = coords ? DType::Int64 : c.values->dtype;
  ExprEmitter e(bind, index64({c.mask, c.values}, bind));
  add_count(e, "n", n);
  add_count(e, "w", w);
  const bool one_pass = c.ends == nullptr;
  const int64_t tiles = (n + kCompactTile - 1) / kCompactTile;
  const bool lookback = one_pass && tiles > 1;
  if (tiles >= (int64_t(1) << 32)) throw InternalError(fmt::format("compaction: {} tiles pass a 32-bit ticket", tiles));
  if (!one_pass) e.add_memory_ptr("ends", c.ends, true);
  const bool ends64 = !one_pass && c.ends->dtype == DType::Int64;
  if (lookback) {  // workspace: the ticket, then a status word a tile
    e.add_patch(e.pl.add("unsigned int*", 8, "ctr"), PatchSrc::Workspace, DType::UInt32, 0);
    e.add_patch(e.pl.add("unsigned long long*", 8, "tw"), PatchSrc::Workspace, DType::UInt64, 16);
  }
  if (one_pass && c.count_buffer >= 0) {
    e.add_patch(e.pl.add("long long*", 8, "cnt"), PatchSrc::BufferPtr, DType::Int64, c.count_buffer);
    add_count(e, "last", tiles - 1);  // the tile that writes the count (a parameter: one source for every n)
  }
  const MaskCode m = mask_code(e, c.mask);
  std::string fns = m.fn, S, what, values_ptr;
  std::function<std::string(const char*)> value;  // the value of the selected row's element d
  if (coords) {
    const bool index = w == 1 && c.strides[0] == 1 && c.shape[0] >= n;  // (row / 1) % shape: row
    S = "long long";
    what = index ? "row numbers" : "coordinates";
    const size_t st = e.pl.add("long long", 8, "cst", static_cast<int>(w)), sh = e.pl.add("long long", 8, "csh", static_cast<int>(w));
    for (int64_t d = 0; d < w; ++d) {
      e.pl.set<long long>(st + static_cast<size_t>(d) * 8, c.strides[static_cast<size_t>(d)]);
      e.pl.set<long long>(sh + static_cast<size_t>(d) * 8, c.shape[static_cast<size_t>(d)]);
    }
    value = [index](const char* d) {
      return index ? std::string("(long long)row") : fmt::format("(long long)((row / (I)p.cst[{0}]) % (I)p.csh[{0}])", d);
    };
  } else if (flat_contiguous_memory(e, c.values, "values")) {
    const int vb = itemsize(t);
    if (vb != 1 && vb != 2 && vb != 4 && vb != 8 && vb != 16)
      throw InternalError(fmt::format("compaction kernel: no value of {} bytes", vb));
    S = vb == 1 ? "unsigned char" : vb == 2 ? "unsigned short" : vb == 4 ? "unsigned int" : vb == 8 ? "unsigned long long" : "cf_v16";
    what = fmt::format("values read from memory ({} bytes, raw bits)", vb);
    value = [](const char* d) { return fmt::format("v[row * W + {}]", d); };
    values_ptr = "  const S* __restrict__ v = (const S*)p.values;\n";
  } else {
    S = storage_type(t);
    fns += flat_value_function(e, c.values, "x", "cf_value", kParams);
    what = "values computed by their fused producer";
    value = [t](const char* d) { return store_expr(t, fmt::format("cf_value(p, (long long)(row * W + {}))", d)); };
  }
  add_out(e, t, c.out_buffer);
  const bool one = w == 1, idx32 = n * w < (int64_t(1) << 31);
  auto at = [&](const char* d) { return value(d); };
  std::string copy, prefetch;
  // One pass, rows of one element: the first turn's U values a thread are loaded before the
  // look-back (their places in the tile are known; only the tile's start waits on it), so that
  // the look-back's wait overlaps them in flight, and stored after.
  const bool early = lookback && one;
  if (one) {
    // W == 1: U loads in flight a thread before their stores (32 bytes of values)
    const int U = 32 / std::max(coords ? 8 : itemsize(t), 4);
    // a turn's loads: arr[u] = the value of selected row first + u * 256 of the tile
    auto loads = [&](const char* arr, const char* first) {
      return fmt::format(R"(  S {0}[{1}];
#pragma unroll
  for (int u = 0; u < {1}; ++u) {{
    const int q = {2} + u * 256;
    if (q < total) {{
      const I row = (I)t0 + cf_sel[q];
      {0}[u] = {3};
    }}
  }}
)",
                         arr, U, first, at("0"));
    };
    if (early) prefetch = "  __syncthreads();\n  const I W = 1;\n  (void)W;\n" + loads("a0", "tid");
    copy = fmt::format(R"(
{2}  for (int q0 = tid + {3}; q0 < total; q0 += {0} * 256) {{
{1}#pragma unroll
    for (int u = 0; u < {0}; ++u)
      if (q0 + u * 256 < total) o[q0 + u * 256] = a[u];
  }}
)",
                       U, loads("a", "q0"),
                       early ? fmt::format("#pragma unroll\n  for (int u = 0; u < {}; ++u)\n    if (tid + u * 256 < total) "
                                           "o[tid + u * 256] = a0[u];\n",
                                           U)
                             : "  const I W = 1;\n  (void)W;\n",
                       early ? U * 256 : 0);
  } else {
    copy = fmt::format(R"(
  const I W = (I)p.w, tot = (I)total * W;
  for (I q = tid; q < tot; q += 256) {{
    const I r = q / W, d = q - r * W, row = (I)t0 + cf_sel[r];
    o[q] = {};
  }}
)",
                       at("d"));
  }
  // the tile (by ticket where tiles look back), its start, and (one pass) the count word
  std::string tile_code, publish, start, base, count;
  if (lookback) {
    tile_code = "  __shared__ unsigned cf_ticket;\n  __shared__ long long cf_base;\n"
                "  if (tid == 0) cf_ticket = atomicAdd(p.ctr, 1u);\n  __syncthreads();\n"
                "  const long long tile = (long long)cf_ticket, t0 = tile * 8192;\n";
    publish = "  if (tid == 0) cf_publish(p.tw, tile, tile == 0 ? 2ull : 1ull, (long long)total);\n";
    start = "  if (tid < 32) {\n    const long long pre = tile == 0 ? 0ll : cf_lookback(p.tw, tile, (long long)total);\n"
            "    if (tid == 0) cf_base = pre;\n  }\n";
    base = "cf_base";
  } else if (one_pass) {
    tile_code = "  const long long tile = 0, t0 = 0;\n";
    base = "0ll";
  } else {
    tile_code = "  const long long tile = blockIdx.x, t0 = tile * 8192;\n";
    base = "tile == 0 ? 0ll : (long long)((const E*)p.ends)[tile - 1]";
  }
  if (one_pass && c.count_buffer >= 0)
    count = "  if (tid == 0 && tile == p.last) *p.cnt = base + (long long)total;\n";
  const std::string body = fmt::format(R"(  typedef {S} S;
  typedef {E} E;
  typedef {I} I;
  __shared__ unsigned short cf_sel[8192];
  __shared__ int cf_ws[8];
  const int tid = (int)threadIdx.x;
{values}{tile}{flags}  int total;
  int k = cf_block_rank(bits, cf_ws, total);
{publish}  while (bits != 0u) {{
    const int j = __ffs(bits) - 1;
    bits &= bits - 1u;
    cf_sel[k++] = (unsigned short)(tid * 32 + j);
  }}
{prefetch}{start}  __syncthreads();
  const long long base = {base};
{count}  S* __restrict__ o = (S*)p.out + base * {w};
{copy})",
                                       fmt::arg("S", S), fmt::arg("E", ends64 ? "long long" : "int"),
                                       fmt::arg("I", idx32 ? "unsigned" : "long long"), fmt::arg("tile", tile_code),
                                       fmt::arg("flags", m.flags), fmt::arg("publish", publish), fmt::arg("start", start),
                                       fmt::arg("base", base), fmt::arg("count", count), fmt::arg("prefetch", prefetch),
                                       fmt::arg("w", one ? "1" : "p.w"), fmt::arg("values", values_ptr),
                                       fmt::arg("copy", copy));
  KernelSpec k = finish(
      e, one_pass ? "compact1" : "compact", t, fns, body, n,
      fmt::format("{}a block a tile of {} mask elements (mask {}): ranks by a block scan of bit words, the "
                  "selected rows staged in shared memory, {}then their {} copied in order, {} a row",
                  one_pass ? "one pass, " : "", kCompactTile, m.memory ? "read from memory" : "computed by its fused producer",
                  !lookback ? ""
                  : early   ? "the tile's start by decoupled look-back (tiles by ticket) while the first values load, "
                            : "the tile's start by decoupled look-back (tiles by ticket), ",
                  what, w),
      lookback ? kCompactLookback : "", lookback ? 8 : 0);
  if (lookback) k.workspace_bytes = k.workspace_zero_bytes = 16 + static_cast<size_t>(tiles) * 8;
  return k;
}

LaunchDims compact_launch_dims(int64_t n) {
  LaunchDims d;
  d.block[0] = 256;
  d.grid[0] = static_cast<unsigned>((n + kCompactTile - 1) / kCompactTile);
  return d;
}

}  // namespace cufuse::detail
