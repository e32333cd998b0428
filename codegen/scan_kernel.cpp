// codegen/scan_kernel.cpp: emits the kernel of a scan (cumsum, cumprod) over one axis, with
// its elementwise producers fused, and owns the choice of shape. Contiguous rows go to
// scan_rows.cpp (rows shorter than a tile: lanes a row) and scan_tiles.cpp (rows of a tile or
// more, 1-D arrays included: tiles over many blocks). Here: outer-axis rows, a thread each
// in order where they fill the GPU, else tiles over many blocks, taken by ticket, whose
// prefixes come from a deterministic decoupled look-back; and a block per row (tiles of 256
// elements and a carry) for any other layout. Analysis and value emission: RedEmitter.
#include "codegen/reduction_kernel.hpp"

#include <string>

#include <fmt/format.h>

#include "codegen/preamble.hpp"
#include "codegen/reduction_emitter.hpp"
#include "core/reduce_attrs.hpp"

namespace cufuse::detail {
namespace red {

// A scan: the shapes above, else one block per row, tiles of B elements, an inclusive block
// scan per tile plus the carry of the tiles before it.
KernelSpec RedEmitter::emit_scan() {
  shape_.scan = true;
  analyse();
  ExprEmitter e(bind, shape_.index64);
  size_t ws_bytes = 0, ws_zero = 0;
  std::vector<size_t> ws_part, ws_idx;
  build_params(e, ws_bytes, ws_zero, ws_part, ws_idx);
  const Red& r = reds[0];
  const std::string T = r.T;
  if (scan_across_threads()) return emit_scan_by_thread(e);
  if (scan_tiles()) return emit_scan_tiled(e);
  // (Rows of a tile or more of 16-byte values, complex128, take the block-per-row form below:
  // the tiled rows' status words hold a value of 8 bytes at most beside its flag.)
  if (scan_layout_inner() && (shape_.row_len < kScanTileMin || itemsize(r.in) <= 8))
    return shape_.row_len >= kScanTileMin ? emit_scan_tiled_rows(e) : emit_scan_by_lanes(e);
  std::string b;
  b += fmt::format("  using I = {};\n  constexpr int NW = {};\n", e.idx(), shape_.block / 32);
  b += "  const I M = p.M, N = p.N;\n";
  b += fmt::format("  __shared__ {} shw[NW];\n", T);
  b += "  const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);\n";
  b += "  for (I row = (I)blockIdx.x; row < M; row += (I)gridDim.x) {\n";
  b += row_bases("row", 1);
  b += fmt::format("    {} carry = {};\n", T, identity(r));
  b += fmt::format("    for (I t0 = 0; t0 < N; t0 += {}) {{\n      const I r = t0 + (I)threadIdx.x;\n", shape_.block);
  b += fmt::format("      {} red0 = {};\n      if (r < N) {{\n", T, identity(r));
  vals.clear();
  e.code.clear();
  std::string v = row_value(e, r.node->inputs[0].get());
  b += e.code + fmt::format("        red0 = {};\n      }}\n", v);
  e.code.clear();
  auto comb = [&](const std::string& acc, const std::string& x) {
    return combine(r, acc, "", x, "");
  };
  b += fmt::format("      for (int o = 1; o < 32; o <<= 1) {{ const {} y = {}; if (lane >= o) {{ {} t = y; {} red0 = t; }} }}\n",
                   T, shuffle("__shfl_up_sync", "red0", T, "o"), T, comb("t", "red0"));
  b += "      if (lane == 31) shw[warp] = red0;\n      __syncthreads();\n";
  b += fmt::format("      if (warp == 0) {{\n        {} w = lane < NW ? shw[lane] : {};\n", T, identity(r));
  b += fmt::format("        for (int o = 1; o < 32; o <<= 1) {{ const {} y = {}; if (lane >= o) {{ {} t = y; {} w = t; }} }}\n",
                   T, shuffle("__shfl_up_sync", "w", T, "o"), T, comb("t", "w"));
  b += "        if (lane < NW) shw[lane] = w;\n      }\n      __syncthreads();\n";
  b += fmt::format("      if (warp > 0) {{ {} t = shw[warp - 1]; {} red0 = t; }}\n", T, comb("t", "red0"));
  b += fmt::format("      {{ {} t = carry; {} if (r < N) p.o0[ob0 + {}] = {}; }}\n", T, comb("t", "red0"),
                   row_offset(out_rs[0], "o0r"), store_expr(r.node->dtype, "t"));
  b += fmt::format("      {{ {} t = carry; {} carry = t; }}\n", T, comb("t", "shw[NW - 1]"));
  b += "      __syncthreads();\n    }\n  }\n";
  return scan_spec(e, b, shape_.rows, fmt::format("a block per row, tiles of {}", shape_.block));
}

// A scan kernel of body `b` over `blocks` blocks of B threads (at most kMaxScanBlocks).
KernelSpec RedEmitter::scan_spec(ExprEmitter& e, const std::string& b, int64_t blocks, const std::string& mode) {
  const uint64_t h = std::hash<std::string>{}(e.pl.decl() + b);
  KernelSpec k;
  k.name = fmt::format("cf_scan_{}_{:016x}", info(reds[0].node->dtype).short_name, h);
  k.source = kernel_source(k.name, e.pl.decl(), sh.block, b);
  k.params = e.pl.bytes();
  k.patches = std::move(e.patches);
  k.numel = sh.rows;
  k.dims.grid[0] = static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), kMaxScanBlocks));
  k.dims.block[0] = static_cast<unsigned>(sh.block);
  k.summary = fmt::format("{} row(s) x {} element(s), {}, {}-bit index", sh.rows, sh.row_len, mode, sh.index64 ? 64 : 32);
  return k;
}

// A thread per row, in order: outer-axis rows enough to fill the GPU (a warp reads and
// writes 32 adjacent rows at a time; a block per row read its 256-element tiles at the
// row's stride: cumsum over axis 0 of f32[64,64,64,256] 2.58 ms, torch 0.23). Short
// contiguous rows went a thread each too (f32[4M,16]: 0.81 ms, a copy 0.18); they now take
// lanes (scan_rows.cpp).
bool RedEmitter::scan_across_threads() const { return scan_layout_outer() && sh.rows >= kLaneThreads; }

// Rows whose elements are contiguous (or broadcast), read and written.
bool RedEmitter::scan_layout_inner() const {
  if (sh.red_shape.ndim() != 1 || out_rs[0][0] != 1) return false;
  for (const auto& a : accs)
    if (a.row_ctx && a.kind == Acc::Mem && a.rs[0] != 0 && a.rs[0] != 1) return false;
  return true;
}

// Rows whose elements are strided and whose consecutive rows are adjacent in memory.
bool RedEmitter::scan_layout_outer() const {
  const int rk = sh.kept_shape.ndim();
  if (rk < 1 || sh.red_shape.ndim() != 1) return false;
  for (const auto& a : accs)
    if (a.row_ctx && a.kind == Acc::Mem) {
      if (a.rs[0] == 1 || a.rs[0] == -1) return false;
      if (a.ks[rk - 1] != 0 && a.ks[rk - 1] != 1) return false;
    }
  return out_ks[0][rk - 1] == 1;
}

// Outer-axis scans cut into tiles spread over blocks: rows too few for a thread each. A
// thread per column left most of the GPU idle under 2^18 columns (cumsum(x, 0) of
// f32[16384,4096]: 3.1 ms, a copy 0.18).
bool RedEmitter::scan_tiles() const { return scan_layout_outer() && sh.rows >= 2; }

// look-back, a warp for each of the tile's rows: publish the aggregate, then read the
// tiles before it 32 at a time, buffering their aggregates, back to the nearest one with
// an inclusive prefix, and fold forward from there. (A thread reading 8 at a time advanced
// the chain of inclusive prefixes 8 tiles a round trip: f32[64M] 4.1 ms.)
std::string RedEmitter::scan_lookback_warps() const {
  const Red& r = reds[0];
  const std::string T = r.T, id = identity(r), vT = "((volatile " + T + "*)";
  const bool pair = T.rfind("cf_cplx", 0) == 0;  // a complex pair: cf_vld / cf_vst (no volatile copy)
  auto vld = [&](const std::string& arr, const std::string& i) {
    return pair ? "cf_vld((volatile " + T + "*)" + arr + " + (" + i + "))" : vT + arr + ")[" + i + "]";
  };
  auto vst = [&](const std::string& arr, const std::string& i, const std::string& v) {
    return pair ? "cf_vst((volatile " + T + "*)" + arr + " + (" + i + "), " + v + ");" : vT + arr + ")[" + i + "] = " + v + ";";
  };
  auto comb = [&](const std::string& acc, const std::string& x) { return combine(r, acc, "", x, ""); };
  std::string b;
  constexpr int LB = 256;  // aggregates a warp buffers; past that it waits for a nearer prefix
  b += "    if (lane == 0 && active) cf_ag[col] = ag;\n    __syncthreads();\n";
  b += "    {\n      const int wl = (int)(threadIdx.x & 31), wp = (int)(threadIdx.x >> 5);\n";
  b += "      for (int q = wp; q < RB; q += NW) {\n        if (g * (I)RB + (I)q >= M) break;\n";
  b += "        const I slot = (c * groups + g) * (I)RB + (I)q, back = groups * (I)RB;\n";
  b += "        const " + T + " a = cf_ag[q];\n";
  b += fmt::format("        {} pre = {};\n", T, id);
  b += "        if (c > 0) {\n";
  b += "          if (wl == 0) { " + vst("p.agg", "slot", "a") + " __threadfence(); ((volatile unsigned*)p.flg)[slot] = 1u; }\n";
  b += fmt::format("          I k0 = 0;\n          int n = 0;\n          {} found = {};\n          for (;;) {{\n", T, id);
  b += "            const I kb = k0 + (I)wl + 1;\n            unsigned f = 3u;\n";
  b += "            if (c - kb >= 0) f = ((volatile unsigned*)p.flg)[slot - kb * back];\n            __threadfence();\n";
  b += fmt::format("            {} y = {};\n", T, id);
  b += "            if (f == 2u) y = " + vld("p.inc", "slot - kb * back") + ";\n";
  b += "            else if (f == 1u) y = " + vld("p.agg", "slot - kb * back") + ";\n";
  b += "            const unsigned pm = __ballot_sync(0xffffffffu, f == 2u), zm = __ballot_sync(0xffffffffu, f == 0u);\n";
  b += "            const int d = pm ? __ffs(pm) - 1 : 32;\n";
  b += "            const unsigned nearer = d == 32 ? 0xffffffffu : ((1u << d) - 1u);\n";
  b += fmt::format("            if ((zm & nearer) == 0u && n + d <= {}) {{\n", LB);
  b += "              if (wl < d) cf_lb[wp][n + wl] = y;\n";
  b += fmt::format("              if (d < 32) {{ found = {}; n += d; break; }}\n", shuffle("__shfl_sync", "y", T, "d"));
  b += "              n += 32;\n              k0 += 32;\n            } else {\n              __nanosleep(64);\n            }\n          }\n";
  b += "          __syncwarp();\n";
  b += "          if (wl == 0) {\n            pre = found;\n            for (int i = n - 1; i >= 0; --i) { " + T + " t = pre; " +
       comb("t", "cf_lb[wp][i]") + " pre = t; }\n          }\n        }\n";
  b += "        if (wl == 0) {\n          { " + T + " t = pre; " + comb("t", "a") + " " + vst("p.inc", "slot", "t") + " }\n";
  b += "          __threadfence();\n          ((volatile unsigned*)p.flg)[slot] = 2u;\n          cf_pre[q] = pre;\n        }\n";
  b += "        __syncwarp();\n      }\n    }\n";
  b += "    __syncthreads();\n";
  return b;
}

// look-back by one thread of each row: publish the aggregate, then fold the prefix from
// the nearest predecessor with an inclusive prefix among the W before it
std::string RedEmitter::scan_lookback_thread() const {
  const Red& r = reds[0];
  const std::string T = r.T, id = identity(r), vT = "((volatile " + T + "*)";
  const bool pair = T.rfind("cf_cplx", 0) == 0;  // a complex pair: cf_vld / cf_vst (no volatile copy)
  auto vld = [&](const std::string& arr, const std::string& i) {
    return pair ? "cf_vld((volatile " + T + "*)" + arr + " + (" + i + "))" : vT + arr + ")[" + i + "]";
  };
  auto vst = [&](const std::string& arr, const std::string& i, const std::string& v) {
    return pair ? "cf_vst((volatile " + T + "*)" + arr + " + (" + i + "), " + v + ");" : vT + arr + ")[" + i + "] = " + v + ";";
  };
  auto comb = [&](const std::string& acc, const std::string& x) { return combine(r, acc, "", x, ""); };
  std::string b;
  constexpr int W = 8;
  b += "    if (lane == 0 && active) {\n";
  b += "      const I slot = (c * groups + g) * (I)RB + (I)col, back = groups * (I)RB;\n";
  b += fmt::format("      {} pre = {};\n", T, id);
  b += "      if (c > 0) {\n";
  b += "        " + vst("p.agg", "slot", "ag") + "\n        __threadfence();\n        ((volatile unsigned*)p.flg)[slot] = 1u;\n";
  b += fmt::format("        for (;;) {{\n          unsigned f[{}];\n          {} y[{}];\n", W, T, W);
  b += fmt::format("#pragma unroll\n          for (int i = 0; i < {}; ++i)\n", W);
  b += "            f[i] = c - 1 - i >= 0 ? ((volatile unsigned*)p.flg)[slot - (I)(i + 1) * back] : 3u;\n";
  b += "          __threadfence();\n";
  b += fmt::format("#pragma unroll\n          for (int i = 0; i < {}; ++i) {{\n", W);
  b += "            const I s2 = slot - (I)(i + 1) * back;\n";
  b += "            y[i] = f[i] == 2u ? " + vld("p.inc", "s2") + " : f[i] == 1u ? " + vld("p.agg", "s2") + " : " + id + ";\n          }\n";
  b += fmt::format("          int d = {};\n          bool ok = true;\n#pragma unroll\n          for (int i = 0; i < {}; ++i) {{\n", W, W);
  b += fmt::format("            if (d == {} && f[i] == 0u) ok = false;\n            if (d == {} && f[i] == 2u) d = i;\n          }}\n", W, W);
  b += fmt::format("          if (ok && d < {}) {{\n", W);
  b += fmt::format("#pragma unroll\n            for (int i = {}; i >= 0; --i) {{\n", W - 1);
  b += "              if (i == d) pre = y[i];\n              if (i < d) { " + T + " t = pre; " + comb("t", "y[i]") + " pre = t; }\n            }\n";
  b += "            break;\n          }\n          __nanosleep(32);\n        }\n      }\n";
  b += "      { " + T + " t = pre; " + comb("t", "ag") + " " + vst("p.inc", "slot", "t") + " }\n";
  b += "      __threadfence();\n      ((volatile unsigned*)p.flg)[slot] = 2u;\n      cf_pre[col] = pre;\n    }\n";
  b += "    __syncthreads();\n";
  return b;
}

// An outer-axis scan in tiles (scan_tiles). Each block takes tiles by ticket, in order: a
// tile is RB rows by CH elements of each, a thread E consecutive elements of one row (L =
// B / RB threads a row). A thread scans its elements in registers; the block scans
// the threads' totals in a fixed order; each row's tile then publishes its aggregate and
// finds its prefix by looking back over the tiles before it (decoupled look-back). The look-
// back folds from the nearest predecessor's inclusive prefix forward through the aggregates
// after it; every inclusive prefix is the same left fold of aggregates, so the bits do not
// depend on which predecessor was ready: the same results every run.
KernelSpec RedEmitter::emit_scan_tiled(ExprEmitter& e) {
  const Red& r = reds[0];
  const std::string T = r.T;
  const std::string id = identity(r);
  int RB = 1;
  int maxsz = itemsize(sp.outputs[0].node->dtype);
  for (const auto& a : accs)
    if (a.row_ctx && a.kind == Acc::Mem) maxsz = std::max(maxsz, itemsize(a.node->dtype));
  while (RB < shape_.rows && RB < 32) RB *= 2;
  const int U = maxsz >= 8 ? 8 : 16;
  shape_.vec = 1;
  const int L = shape_.block / RB, E = U * shape_.vec;
  const int64_t CH = int64_t(L) * E;    // a tile's elements of each row
  const int64_t C = (shape_.row_len + CH - 1) / CH;  // tiles along a row
  const int64_t groups = (shape_.rows + RB - 1) / RB;
  const int64_t tiles = groups * C;
  // workspace: the ticket, each (tile, row)'s flag (1: aggregate, 2: inclusive prefix), then
  // the aggregates and the inclusive prefixes
  const size_t slots = static_cast<size_t>(tiles) * RB;
  const size_t flags_end = 16 + (slots * 4 + 15) / 16 * 16;
  const size_t vals_bytes = (slots * acc_slot_bytes(r.in) + 15) / 16 * 16;
  auto ws_ptr = [&](const std::string& type, const std::string& name, DType dt, size_t off) {
    const size_t o = e.pl.add(type + "*", 8, name);
    e.add_patch(o, PatchSrc::Workspace, dt, static_cast<int>(off));
  };
  ws_ptr("unsigned int", "ctr", DType::UInt32, 0);
  ws_ptr("unsigned int", "flg", DType::UInt32, 16);
  ws_ptr(T, "agg", r.in, flags_end);
  ws_ptr(T, "inc", r.in, flags_end + vals_bytes);
  auto comb = [&](const std::string& acc, const std::string& x) { return combine(r, acc, "", x, ""); };
  // Outer-axis tiles of 4 or more row groups look back by a thread per row, W tiles at a
  // time: a tile's predecessor took its ticket `groups` tickets earlier and is mostly done
  // (f32[65536,256]: 0.17 ms against 0.25 by warps). One long chain (a 1-D scan, or fewer
  // groups) needs the warps' deeper look-back (f32[1M,16] over axis 0: 0.22 ms against 1.04).
  const bool warp_lookback = groups < 4;

  std::string b;
  b += fmt::format("  using I = {};\n  constexpr int RB = {}, L = {}, U = {}, V = {}, E = U * V, NW = {};\n", e.idx(), RB, L, U,
                   shape_.vec, shape_.block / 32);
  b += "  const I M = p.M, N = p.N;\n  (void)M;\n";
  b += fmt::format("  const I groups = (I){}, tiles = groups * ((N + (I)(L * E) - 1) / (I)(L * E));\n", groups);
  b += fmt::format("  __shared__ unsigned cf_ticket;\n  __shared__ {} cf_pre[RB], cf_ag[RB], cf_lb[NW][256];\n", T);
  b += fmt::format("  __shared__ {} sht[{}];\n", T, shape_.block);
  b += "  const int lane = (int)(threadIdx.x / RB), col = (int)(threadIdx.x % RB);\n";
  b += "  for (;;) {\n";
  b += "    if (threadIdx.x == 0) cf_ticket = atomicAdd(p.ctr, 1u);\n    __syncthreads();\n";
  b += "    const I tile = (I)cf_ticket;\n    __syncthreads();\n    if (tile >= tiles) break;\n";
  // tiles go out chunk by chunk: a tile's predecessor along its rows took its ticket
  // `groups` tickets before it
  b += "    const I c = tile / groups, g = tile % groups;\n";
  b += "    const I row = g * (I)RB + (I)col;\n    const bool active = row < M;\n";
  b += row_bases("active ? row : (I)0", 1);
  b += "    const I e0 = c * (I)(L * E) + (I)lane * E;\n";
  b += fmt::format("    {} xs[E];\n", T);
  // loads, U turns of V elements (a vector each where V > 1), guarded, all issued first
  const std::string guard = "active && j * V < N";
  b += prefetch_turns(U, "e0 / V + u", "", guard);
  // the thread's values, scanned in order
  vals.clear();
  e.code.clear();
  prefetch = true;
  const std::string v = row_value(e, r.node->inputs[0].get());
  prefetch = false;
  b += "#pragma unroll\n    for (int u = 0; u < U; ++u) {\n      const I j = e0 / V + u;\n#pragma unroll\n"
       "      for (int t = 0; t < V; ++t) {\n        const I r = j * V + t;\n";
  b += fmt::format("        {} x = {};\n        if (active && r < N) {{\n", T, id);
  b += e.code + fmt::format("          x = {};\n        }}\n        xs[u * V + t] = x;\n      }}\n    }}\n", as_acc(r, v));
  e.code.clear();
  b += "#pragma unroll\n    for (int i = 1; i < E; ++i) { " + T + " t = xs[i - 1]; " + comb("t", "xs[i]") + " xs[i] = t; }\n";
  // the block: each thread's exclusive prefix in the tile (ex) and its row's aggregate (ag)
  b += "    sht[threadIdx.x] = xs[E - 1];\n    __syncthreads();\n";
  b += fmt::format("    {} ex = {}, ag = {};\n", T, id, id);
  b += "    for (int l = 0; l < L; ++l) {\n      const " + T + " y = sht[l * RB + col];\n      if (l < lane) { " +
       comb("ex", "y") + " }\n      " + comb("ag", "y") + "\n    }\n";
  b += warp_lookback ? scan_lookback_warps() : scan_lookback_thread();
  // the elements: the tile's prefix, then the thread's, then its own running value
  b += "    " + T + " base = cf_pre[col];\n    { " + T + " t = base; " + comb("t", "ex") + " base = t; }\n";
  b += "#pragma unroll\n    for (int u = 0; u < U; ++u) {\n      const I j = e0 / V + u;\n";
  b += "      if (" + guard + ") {\n";
  b += "#pragma unroll\n        for (int t = 0; t < V; ++t) {\n          const I r = j * V + t;\n";
  b += "          " + T + " y = base; { " + T + " t2 = y; " + comb("t2", "xs[u * V + t]") + " y = t2; }\n";
  b += fmt::format("          if (r < N) p.o0[ob0 + {}] = {};\n        }}\n", row_offset(out_rs[0], "o0r"), store_expr(r.node->dtype, "y"));
  b += "      }\n    }\n";
  b += "    __syncthreads();\n  }\n";
  KernelSpec k = scan_spec(e, b, tiles, fmt::format("tiles of {} rows x {} elements, {} a thread, look-back", RB, CH, E));
  k.workspace_bytes = flags_end + 2 * vals_bytes;
  k.workspace_zero_bytes = flags_end;
  return k;
}

KernelSpec RedEmitter::emit_scan_by_thread(ExprEmitter& e) {
  const Red& r = reds[0];
  const std::string T = r.T;
  std::string b;
  b += fmt::format("  using I = {};\n  const I M = p.M, N = p.N;\n", e.idx());
  b += fmt::format("  for (I row = (I)blockIdx.x * {} + (I)threadIdx.x; row < M; row += (I)gridDim.x * {}) {{\n", sh.block, sh.block);
  b += row_bases("row", 1);
  b += fmt::format("    {} carry = {};\n", T, identity(r));
  // U elements at a time, their loads issued first (element_loop says why), then the rest.
  auto step = [&](bool prefetched) {
    vals.clear();
    e.code.clear();
    prefetch = prefetched;
    std::string v = row_value(e, r.node->inputs[0].get());
    prefetch = false;
    std::string t = e.code;
    e.code.clear();
    t += fmt::format("      {{ const {} red0 = {}; {} }}\n", T, as_acc(r, v), combine(r, "carry", "", "red0", ""));
    return t + fmt::format("      p.o0[ob0 + {}] = {};\n", row_offset(out_rs[0], "o0r"), store_expr(r.node->dtype, "carry"));
  };
  const int U = unroll_turns();
  b += "    I r0 = 0;\n";
  if (U > 1) {
    b += fmt::format("    for (; r0 + {} < N; r0 += {}) {{\n", U - 1, U);
    b += prefetch_turns(U, "r0 + (I)u", "");
    b += fmt::format("#pragma unroll\n      for (int u = 0; u < {}; ++u) {{\n        const I r = r0 + (I)u;\n", U);
    b += step(true) + "      }\n    }\n";
  }
  b += "    for (; r0 < N; ++r0) {\n      const I r = r0;\n" + step(false) + "    }\n  }\n";
  return scan_spec(e, b, (sh.rows + sh.block - 1) / sh.block, "a thread per row in order");
}

}  // namespace red

KernelSpec emit_scan_kernel(const NodePtr& scan, const Layout& out_layout, int out_buffer, bool aligned16,
                            const LeafBinding& bind) {
  ReductionSpec spec;
  spec.S = scan->inputs[0]->shape();
  spec.axes = reduce_attrs(*scan).axes;
  spec.reductions = {scan.get()};
  spec.phase = {0};
  // the scan's result has the row shape: an output of kind Row
  spec.outputs.push_back(RedOutput{scan, OutKind::Row, out_layout, out_buffer, aligned16});
  red::RedEmitter e(spec, bind);
  return e.emit_scan();
}

}  // namespace cufuse::detail
