// codegen/scan_rows.cpp: scans along contiguous rows (scan_layout_inner) shorter than a tile:
// LR adjacent lanes a row, the row's 16-byte vectors (or elements) striped over them, so that
// a warp's loads and stores cover consecutive addresses; and what the tiled row scan
// (scan_tiles.cpp) shares with it: the vector width, and a lane's values read and scanned a
// turn at a time. Every sum is in a fixed order (a lane's elements in order, then the lanes
// of a turn by shuffles, then the turns), so the bits never depend on timing.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "codegen/reduction_emitter.hpp"

namespace cufuse::detail::red {

int RedEmitter::scan_row_vectors() {
  int maxsz = itemsize(sp.outputs[0].node->dtype);
  for (const auto& a : accs)
    if (a.row_ctx && a.kind == Acc::Mem) maxsz = std::max(maxsz, itemsize(a.node->dtype));
  const int v = 16 / maxsz;
  bool ok = v > 1 && sh.row_len % v == 0 && sp.outputs[0].aligned16;
  for (auto k : out_ks[0]) ok &= k % v == 0;
  for (const auto& a : accs)
    if (a.row_ctx && a.kind == Acc::Mem && a.rs[0] == 1) {
      ok &= a.node->k() != NodeKind::Buffer || bind.is_aligned16(a.node);
      for (auto k : a.ks) ok &= k % v == 0;
    }
  if (!ok) return 1;
  for (auto& a : accs) a.vec = a.row_ctx && a.kind == Acc::Mem && a.rs[0] == 1;
  return v;
}

std::string RedEmitter::scan_row_values(ExprEmitter& e, int U, const std::string& at_u, const std::string& active) {
  const Red& r = reds[0];
  const std::string T = r.T, id = identity(r);
  std::string b;
  vals.clear();
  e.code.clear();
  prefetch = true;
  const std::string v = row_value(e, r.node->inputs[0].get());
  prefetch = false;
  b += fmt::format("      {} xs[{}];\n", T, U * sh.vec);
  b += fmt::format("#pragma unroll\n      for (int u = 0; u < {}; ++u) {{\n        const I j = {};\n", U, at_u);
  b += "#pragma unroll\n        for (int t = 0; t < V; ++t) {\n          const I r = j * V + t;\n";
  b += fmt::format("          {} x = {};\n          if ({} && r < N) {{\n", T, id, active);
  b += e.code + fmt::format("            x = {};\n          }}\n          xs[u * V + t] = x;\n        }}\n", as_acc(r, v));
  e.code.clear();
  // each turn's V elements scanned in place, in order
  if (sh.vec > 1)
    b += "#pragma unroll\n        for (int t = 1; t < V; ++t) { " + T + " a = xs[u * V + t - 1]; " +
         combine(r, "a", "", "xs[u * V + t]", "") + " xs[u * V + t] = a; }\n";
  b += "      }\n";
  return b;
}

namespace {

// A shuffle among segments of `lanes` lanes (the whole warp at 32).
std::string seg_shuffle(const char* fn, const std::string& v, const std::string& T, const std::string& by, int lanes) {
  return shuffle(fn, v, T, lanes < 32 ? fmt::format("{}, {}", by, lanes) : by);
}

}  // namespace

// Each turn's scan across its LR lanes (lane `lk` of the row's segment): bu[u] is what the
// lane's elements of turn u add to `carry`'s running value, and `carry` takes the turn's total.
std::string scan_turns(const Red& r, int U, int LR) {
  const std::string T = r.T;
  auto comb = [&](const std::string& acc, const std::string& x) { return combine(r, acc, "", x, ""); };
  std::string b;
  b += fmt::format("      {} bu[{}];\n#pragma unroll\n      for (int u = 0; u < {}; ++u) {{\n", T, U, U);
  b += fmt::format("        {} s = xs[u * V + V - 1];\n", T);
  if (LR > 1) {
    b += fmt::format("#pragma unroll\n        for (int o = 1; o < {}; o <<= 1) {{ const {} y = {}; if (lk >= o) {{ {} a = y; {} s = a; }} }}\n",
                     LR, T, seg_shuffle("__shfl_up_sync", "s", T, "o", LR), T, comb("a", "s"));
    b += fmt::format("        const {} ex = {};\n        const {} tot = {};\n", T, seg_shuffle("__shfl_up_sync", "s", T, "1", LR), T,
                     seg_shuffle("__shfl_sync", "s", T, std::to_string(LR - 1), LR));
    b += fmt::format("        {} bb = carry;\n        if (lk > 0) {{ {} }}\n        bu[u] = bb;\n", T, comb("bb", "ex"));
  } else {
    b += fmt::format("        const {} tot = s;\n        bu[u] = carry;\n", T);
  }
  b += "        " + comb("carry", "tot") + "\n      }\n";
  return b;
}

// Rows shorter than a tile, many or few: LR lanes a row (the fewest that give a lane at most U
// vectors of the row, up to a warp), 32 / LR rows a warp, passes of LR * U vectors along the
// row with the running value carried from pass to pass. H100, cumsum along rows of 64 / 256
// / 1024 f32 (64M elements): a block a row (256 threads, 3/4 of them idle on rows of 64)
// 1.09 / 0.32 / 0.27 ms, lanes 0.18 each, a copy's time (torch 5.9 / 1.49 / 0.29).
KernelSpec RedEmitter::emit_scan_by_lanes(ExprEmitter& e) {
  const Red& r = reds[0];
  const std::string T = r.T, id = identity(r);
  shape_.vec = scan_row_vectors();
  const int U = unroll_turns() == 8 ? 8 : 4;
  const int64_t nv = (shape_.row_len + shape_.vec - 1) / shape_.vec;
  int LR = 1;
  while (LR < 32 && int64_t(LR) * U < nv) LR *= 2;
  shape_.block = 256;
  constexpr int NWB = 256 / 32;
  const int64_t rows_per_block = int64_t(NWB) * (32 / LR);
  std::string b;
  b += fmt::format("  using I = {};\n  constexpr int U = {}, V = {}, LR = {}, RW = 32 / LR, NWB = {};\n", e.idx(), U, shape_.vec, LR, NWB);
  b += "  const I M = p.M, N = p.N, NV = (N + (I)(V - 1)) / (I)V;\n";
  b += "  const int lk = (int)(threadIdx.x & (LR - 1));\n  (void)lk;\n";
  b += "  for (I rg = (I)blockIdx.x * NWB + (I)(threadIdx.x >> 5); rg * RW < M; rg += (I)gridDim.x * NWB) {\n";
  b += "    const I row = rg * RW + (I)((threadIdx.x & 31) / LR);\n    const bool active = row < M;\n";
  b += row_bases("active ? row : (I)0", 1);
  b += fmt::format("    {} carry = {};\n", T, id);
  b += "    for (I pv = 0; pv < NV; pv += (I)(LR * U)) {\n      const I vb = pv + (I)lk;\n";
  b += prefetch_turns(U, "vb + (I)(u * LR)", "", "active && j * V < N");
  b += scan_row_values(e, U, "vb + (I)(u * LR)", "active");
  b += scan_turns(r, U, LR);
  b += row_stores(U, "vb + (I)(u * LR)", "active", "bu[u]");
  b += "    }\n  }\n";
  return scan_spec(e, b, (shape_.rows + rows_per_block - 1) / rows_per_block,
                   fmt::format("{} lane(s) a row, {} vector(s) of {} a lane a pass", LR, U, shape_.vec));
}

// The stores of U turns: element t of turn u is base(u) combined with xs[u * V + t], a
// 16-byte vector a turn where V > 1.
std::string RedEmitter::row_stores(int U, const std::string& at_u, const std::string& active, const std::string& base) const {
  const Red& r = reds[0];
  const std::string T = r.T;
  const std::string st = storage_type(r.node->dtype);
  std::string b = fmt::format("#pragma unroll\n      for (int u = 0; u < {}; ++u) {{\n        const I j = {};\n", U, at_u);
  b += fmt::format("        const {} bb = {};\n", T, base);
  if (sh.vec > 1) {
    b += fmt::format("        if ({} && j * V < N) {{\n          cf_vec<{}, V> w;\n", active, st);
    b += "#pragma unroll\n          for (int t = 0; t < V; ++t) { " + T + " y = bb; " + combine(r, "y", "", "xs[u * V + t]", "") +
         fmt::format(" w.v[t] = {}; }}\n", store_expr(r.node->dtype, "y"));
    b += fmt::format("          *reinterpret_cast<cf_vec<{}, V>*>(p.o0 + ob0 + j * V) = w;\n        }}\n", st);
  } else {
    b += fmt::format("        const I r = j;\n        if ({} && r < N) {{ {} y = bb; {} p.o0[ob0 + {}] = {}; }}\n", active, T,
                     combine(r, "y", "", "xs[u]", ""), row_offset(out_rs[0], "o0r"), store_expr(r.node->dtype, "y"));
  }
  return b + "      }\n";
}

}  // namespace cufuse::detail::red
