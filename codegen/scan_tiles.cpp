// codegen/scan_tiles.cpp: scans along contiguous rows of a tile or more (a 1-D cumsum
// included), cut into tiles of B * U * V elements spread over many blocks. A warp reads its
// part of a tile as 16-byte vectors striped over its lanes, scans each turn across the warp
// by shuffles (scan_rows.cpp), and the block adds the warps' totals in order. A row of more
// than one tile takes its tiles by ticket, a block a tile, and finds each tile's prefix by a
// deterministic two-level decoupled look-back (scan_lookback_groups).
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "codegen/reduction_emitter.hpp"
#include "cufuse/error.hpp"

namespace cufuse::detail::red {

namespace {

// A status word: a tile's (or a group's) value and its flag in one access, so that one load
// gives both and needs no fence. Values of 4 bytes or fewer share a 64-bit word with the flag
// (flag in the high half); 8-byte values take a 16-byte word, stored and loaded as one vector.
struct StatusWords {
  std::string T;
  bool wide;
  std::string store(const std::string& arr, const std::string& slot, const std::string& flag, const std::string& v) const {
    if (!wide)
      return fmt::format("{{ union {{ {} v; unsigned u; }} cv; cv.u = 0u; cv.v = {}; ((volatile unsigned long long*){})[{}] = "
                         "((unsigned long long)({}) << 32) | cv.u; }}",
                         T, v, arr, slot, flag);
    return fmt::format("{{ union {{ {} v; unsigned long long u; }} cv; cv.v = {}; asm volatile(\"st.volatile.v2.u64 [%0], {{%1, %2}};\" "
                       ":: \"l\"({} + 2 * ({})), \"l\"(cv.u), \"l\"((unsigned long long)({})) : \"memory\"); }}",
                       T, v, arr, slot, flag);
  }
  std::string load(const std::string& arr, const std::string& slot, const std::string& f, const std::string& y) const {
    if (!wide)
      return fmt::format("const unsigned long long w = ((volatile unsigned long long*){})[{}]; {} = (unsigned)(w >> 32); "
                         "union {{ {} v; unsigned u; }} cv; cv.u = (unsigned)w; {} = cv.v;",
                         arr, slot, f, T, y);
    return fmt::format("unsigned long long w0, w1; asm volatile(\"ld.volatile.v2.u64 {{%0, %1}}, [%2];\" : \"=l\"(w0), \"=l\"(w1) "
                       ": \"l\"({} + 2 * ({})) : \"memory\"); {} = (unsigned)w1; union {{ {} v; unsigned long long u; }} cv; "
                       "cv.u = w0; {} = cv.v;",
                       arr, slot, f, T, y);
  }
};

}  // namespace

// The look-back of tile c of row `row` (warp 0; `ag` the tile's aggregate, `pre` its prefix).
// Tiles along a row form groups of 32. Each tile publishes its aggregate (flag 1 in tw); the
// last tile of group g publishes S[g], a fixed tree of the group's 32 aggregates (flag 1 in
// gw), then GI[g], the left fold of S[0..g] (flag 2). A tile of group g reads, in one round
// trip, the aggregates of the tiles before it in its group, the 32 of group g - 1 (it sums
// them itself, by the same tree, rather than wait for the last tile of g - 1 to publish
// S[g - 1]) and the words of the 32 groups before those. Its prefix is then the nearest GI
// folded forward through the S after it, then S[g - 1], then its group's aggregates before
// it. Every GI is the same left fold of the groups' sums whichever GI a tile found ready, and
// every S the same tree, so the bits never depend on timing; the folds are at most 31 + 1 +
// 31 combines. (H100, 1-D cumsum of f32[64M], a copy 0.18 ms: one level, a fold of every
// aggregate back to the nearest inclusive prefix, 0.48 ms, with hundreds of tiles in flight
// the folds long and the chain of prefixes slow; two levels that waited for the last tile of
// g - 1 to publish S[g - 1], with the values in registers, 0.295 ms; torch 0.26.)
std::string RedEmitter::scan_lookback_groups(int64_t C) const {
  const Red& r = reds[0];
  const std::string T = r.T, id = identity(r);
  const StatusWords sw{T, itemsize(r.in) == 8};
  auto comb = [&](const std::string& acc, const std::string& x) { return combine(r, acc, "", x, ""); };
  auto tree = [&](const std::string& v) {
    return fmt::format("#pragma unroll\n            for (int o = 16; o > 0; o >>= 1) {{ const {} y = {}; {} }}\n", T,
                       shuffle("__shfl_xor_sync", v, T, "o"), comb(v, "y"));
  };
  std::string b;
  b += fmt::format("      {{\n        const I CC = (I){};\n", C);
  b += "        const I gc = c >> 5;\n        const int rr = (int)(c & 31);\n";
  b += "        if (wl == 0 && c + 1 < CC) " + sw.store("p.tw", "c * M + row", "1u", "ag") + "\n";
  b += fmt::format("        {} ya = {}, yp = {}, yg = {}, sg = {};\n", T, id, id, id, id);
  b += "        bool own = rr == 0, prev = gc == 0, grp = gc < 2, sdone = rr != 31 || c + 1 >= CC;\n        int d = 0;\n";
  b += "        for (;;) {\n          unsigned fa = 1u, fp = 1u, fg = 3u;\n";
  b += "          if (!own && wl < rr) { const I s = (gc * 32 + (I)wl) * M + row; " + sw.load("p.tw", "s", "fa", "ya") + " }\n";
  b += "          if (!prev) { const I s = ((gc - 1) * 32 + (I)wl) * M + row; " + sw.load("p.tw", "s", "fp", "yp") + " }\n";
  b += "          if (!grp && gc - 2 - (I)wl >= 0) { const I s = (gc - 2 - (I)wl) * M + row; " + sw.load("p.gw", "s", "fg", "yg") +
       " }\n";
  b += "          own = own || __all_sync(0xffffffffu, fa != 0u);\n";
  b += "          prev = prev || __all_sync(0xffffffffu, fp != 0u);\n";
  b += "          if (!grp) {\n";
  b += "            const unsigned pm = __ballot_sync(0xffffffffu, fg == 2u), zm = __ballot_sync(0xffffffffu, fg == 0u);\n";
  b += "            if (pm != 0u) {\n              const int dd = __ffs(pm) - 1;\n";
  b += "              if ((zm & ((1u << dd) - 1u)) == 0u) { grp = true; d = dd; }\n            }\n          }\n";
  // the last tile of a group: the group's sum as soon as its aggregates are in
  b += "          if (own && !sdone) {\n";
  b += fmt::format("            {} s = wl < 31 ? ya : ag;\n", T) + tree("s");
  b += "            sg = s;\n            if (wl == 0) " + sw.store("p.gw", "gc * M + row", "1u", "s") + "\n";
  b += "            sdone = true;\n          }\n";
  b += "          if (own && prev && grp) break;\n          __nanosleep(32);\n        }\n";
  // the fold: the nearest GI, the groups' sums after it, S[g - 1], the group's aggregates
  b += "        if (gc > 1) {\n          pre = " + shuffle("__shfl_sync", "yg", T, "d") + ";\n";
  b += fmt::format("#pragma unroll\n          for (int i = 30; i >= 0; --i) {{ const {} y = {}; if (i < d) {{ {} }} }}\n        }}\n", T,
                   shuffle("__shfl_sync", "yg", T, "i"), comb("pre", "y"));
  b += "        if (gc > 0) {\n" + tree("yp") + "          " + comb("pre", "yp") + "\n        }\n";
  b += fmt::format("        const {} gp = pre;\n", T);
  b += fmt::format("#pragma unroll\n        for (int i = 0; i < 31; ++i) {{ const {} y = {}; if (i < rr) {{ {} }} }}\n", T,
                   shuffle("__shfl_sync", "ya", T, "i"), comb("pre", "y"));
  b += fmt::format("        if (wl == 0 && rr == 31 && c + 1 < CC) {{ {} a = gp; {} {} }}\n", T, comb("a", "sg"),
                   sw.store("p.gw", "gc * M + row", "2u", "a"));
  b += "      }\n";
  return b;
}

// Rows of a tile or more: tiles of B threads x U turns x V elements (4096 f32; 8192 where
// 4-byte rows run past 2^18 elements). A warp's lanes take consecutive 16-byte vectors, turn
// by turn (a thread's 4 consecutive vectors left each load and store half a sector). Rows of
// one tile go a block each, in order. Longer rows take their tiles by ticket, in the order
// blocks start, so that every tile a look-back waits on is running or done; there the tile's
// values wait in shared memory across the look-back, holding no registers while warp 0 waits.
//
// There a block takes one ticket, scans its tile and ends; blocks loop over tickets only
// where the tiles pass the grid's kMaxScanBlocks. The scan is latency-bound: a block loads,
// scans, waits at a barrier while warp 0 looks back (at least one L2 round trip), then
// stores, so what it moves is the resident blocks times their tile over that time. A block
// that loops keeps its addresses and ticket live across the loop and its barriers: 80
// registers a thread (f32, tiles of 8192), 3 blocks an SM; one tile a block takes 48, 5
// blocks an SM, and the tile's position is read again from cf_ticket after each barrier
// rather than kept. H200, cumsum of f32[2^26], a copy of its bytes 0.126 ms, torch (CUB)
// 0.211-0.215: a loop over tickets 0.210 ms, a tile a block 0.175-0.179 (ncu: DRAM at 63%
// of its peak; warps stalled mostly at the barrier behind warp 0's look-back, 18 of 36
// cycles an instruction, then on loads, 6). Tried and not kept: registers capped for 6
// blocks an SM (0.174 against 0.175); tiles by blockIdx.x instead of by ticket (0.185
// against 0.178 at 5 blocks an SM, and nothing would then promise that a tile's
// predecessors have started); the next tile's ticket taken and its loads issued
// while warp 0 looks back for this one (0.225 ms; 0.207 with registers capped for 4 blocks an
// SM: a tile then publishes its aggregate only after its block's previous tile is stored, and
// every tile after it waits on that); tiles of 4096 (0.204, 8 blocks an SM); st.global.cs
// stores (no change). H100 (2026-11-27; 0.221 ms here): the tile copied by cp.async into
// cf_xs, no registers for the loads (0.244; tiles of 16384 in 64 KiB of dynamic shared
// memory, 3 blocks an SM: 0.238); resident blocks streaming tiles through a ring of cp.async
// stages with a look-back warp beside eight scan warps (0.285-0.418; bench/README.md says why).
KernelSpec RedEmitter::emit_scan_tiled_rows(ExprEmitter& e) {
  const Red& r = reds[0];
  if (itemsize(r.in) > 8)  // a status word holds a value of 8 bytes at most (scan_kernel.cpp routes the rest)
    throw InternalError(fmt::format("tiled scan rows of {}: status words take 8-byte values at most", name(r.in)));
  const std::string T = r.T, id = identity(r);
  shape_.vec = scan_row_vectors();
  // 64 bytes of sums a thread (16 f32, 8 f64) in blocks of 256; 128 (32 f32, tiles of 8192)
  // where 4-byte rows run past 2^18 elements: there the look-back's latency, not the loads,
  // holds the scan back, and half as many tiles halve the look-backs. H200, cumsum of
  // f32[64M] (a copy 0.126 ms), a loop over tickets: tiles of 4096 0.240 ms, of 8192 0.210;
  // 2048: 0.324; blocks of 512 no better. Rows of 4096 lose with the larger tile (0.132 ->
  // 0.163 ms): one tile a row.
  const int tsz = itemsize(r.in) == 8 ? 8 : 4;
  const bool long4 = tsz == 4 && shape_.row_len >= kScanLongRow;
  const int U = std::max(1, 64 / tsz / shape_.vec) * (long4 ? 2 : 1);
  shape_.block = 256;
  const int NW = shape_.block / 32;
  const int64_t CH = int64_t(shape_.block) * U * shape_.vec;
  const int64_t C = (shape_.row_len + CH - 1) / CH;
  const int64_t tiles = shape_.rows * C;
  const bool lookback = C > 1;
  const bool one = lookback && tiles <= kMaxScanBlocks;  // a tile a block
  auto comb = [&](const std::string& acc, const std::string& x) { return combine(r, acc, "", x, ""); };
  size_t ws = 0;
  if (lookback) {
    // workspace: the ticket, then a status word per tile and per group of 32 tiles of a row
    const size_t word = itemsize(r.in) == 8 ? 16 : 8;
    const size_t tw = 16, gw = tw + (static_cast<size_t>(tiles) * word + 15) / 16 * 16;
    ws = gw + static_cast<size_t>(shape_.rows * ((C + 31) / 32)) * word;
    auto ws_ptr = [&](const std::string& name, DType dt, size_t off) {
      const size_t o = e.pl.add(dt == DType::UInt32 ? "unsigned int*" : "unsigned long long*", 8, name);
      e.add_patch(o, PatchSrc::Workspace, dt, static_cast<int>(off));
    };
    ws_ptr("ctr", DType::UInt32, 0);
    ws_ptr("tw", DType::UInt64, tw);
    ws_ptr("gw", DType::UInt64, gw);
  }
  const std::string at_u = "vb + (I)(u * 32)";
  // tiles go out chunk by chunk: a tile's predecessor along its row is M tiles before it
  auto tile_top = [&](const std::string& t) {
    return "    const I c = " + t + " / M, row = " + t + " - c * M;\n" + row_bases("row", 1) +
           "    const I vb = c * (I)(NW * 32 * U) + (I)(warp * 32 * U + wl);\n";
  };
  std::string b;
  b += fmt::format("  using I = {};\n  constexpr int U = {}, V = {}, NW = {};\n", e.idx(), U, shape_.vec, NW);
  b += fmt::format("  const I M = p.M, N = p.N, tiles = (I){};\n  (void)M;\n  (void)tiles;\n", tiles);
  b += fmt::format("  __shared__ {} cf_wx[NW], cf_pre;\n", T);
  if (lookback) b += fmt::format("  __shared__ {} cf_xs[NW * 32 * U * V];\n", T);
  b += "  const int wl = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5), lk = wl;\n";
  if (one) {
    // the grid is the tiles: every ticket below `tiles` is taken, by one block each
    b += "  __shared__ unsigned cf_ticket;\n  if (threadIdx.x == 0) cf_ticket = atomicAdd(p.ctr, 1u);\n  __syncthreads();\n";
    b += "  {\n    const I tile = (I)cf_ticket;\n";
  } else if (lookback) {
    b += "  __shared__ unsigned cf_ticket;\n  for (;;) {\n";
    b += "    if (threadIdx.x == 0) cf_ticket = atomicAdd(p.ctr, 1u);\n    __syncthreads();\n";
    b += "    const I tile = (I)cf_ticket;\n    __syncthreads();\n    if (tile >= tiles) break;\n";
  } else {
    b += "  for (I tile = (I)blockIdx.x; tile < tiles; tile += (I)gridDim.x) {\n";
  }
  b += tile_top("tile");
  b += prefetch_turns(U, at_u, "", "j * V < N");
  b += scan_row_values(e, U, at_u, "true");
  b += fmt::format("    {} carry = {};\n", T, id);
  b += scan_turns(r, U, 32);
  // staged: each element's prefix within its warp's part of the tile
  if (lookback)
    b += "#pragma unroll\n    for (int u = 0; u < U; ++u)\n#pragma unroll\n      for (int t = 0; t < V; ++t) { " + T + " a = bu[u]; " +
         comb("a", "xs[u * V + t]") + " cf_xs[((warp * U + u) * V + t) * 32 + wl] = a; }\n";
  // the warps' totals, scanned in order by warp 0: cf_wx[w] becomes warp w's prefix in the tile
  b += "    if (wl == 0) cf_wx[warp] = carry;\n";
  if (one) b += "  }\n";  // the tile's position is read again from cf_ticket below, not kept in registers
  b += "    __syncthreads();\n";
  b += "    if (warp == 0) {\n";
  if (one) b += "      const I tile = (I)cf_ticket, c = tile / M, row = tile - c * M;\n";
  b += fmt::format("      {} w = wl < NW ? cf_wx[wl] : {};\n", T, id);
  b += fmt::format("#pragma unroll\n      for (int o = 1; o < NW; o <<= 1) {{ const {} y = {}; if (wl >= o) {{ {} a = y; {} w = a; }} }}\n",
                   T, shuffle("__shfl_up_sync", "w", T, "o"), T, comb("a", "w"));
  b += fmt::format("      const {} wy = {}, ag = {};\n", T, shuffle("__shfl_up_sync", "w", T, "1"),
                   shuffle("__shfl_sync", "w", T, "NW - 1"));
  b += fmt::format("      (void)ag;\n      if (wl < NW) cf_wx[wl] = wl > 0 ? wy : {};\n      {} pre = {};\n", id, T, id);
  if (lookback) b += scan_lookback_groups(C);
  b += "      if (wl == 0) cf_pre = pre;\n    }\n    __syncthreads();\n";
  if (one) b += "  {\n    const I tile = (I)cf_ticket;\n" + tile_top("tile");
  b += fmt::format("    {} base = cf_pre;\n    {}\n", T, comb("base", "cf_wx[warp]"));
  if (lookback) {
    if (one) b += fmt::format("    {} xs[U * V];\n", T);
    b += "#pragma unroll\n    for (int i = 0; i < U * V; ++i) xs[i] = cf_xs[(warp * U * V + i) * 32 + wl];\n";
    b += row_stores(U, at_u, "true", "base");
  } else {
    b += fmt::format("#pragma unroll\n    for (int u = 0; u < U; ++u) {{ {} a = base; {} bu[u] = a; }}\n", T, comb("a", "bu[u]"));
    b += row_stores(U, at_u, "true", "bu[u]");
  }
  b += "  }\n";
  KernelSpec k = scan_spec(e, b, tiles,
                           fmt::format("tiles of {} elements, {} a thread, {}", CH, U * shape_.vec,
                                       !lookback ? "a tile a row" : one ? "a tile a block, look-back by groups of 32 tiles"
                                                                        : "look-back by groups of 32 tiles"));
  k.workspace_bytes = ws;
  k.workspace_zero_bytes = ws;
  return k;
}

}  // namespace cufuse::detail::red
