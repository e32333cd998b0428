// codegen/reduction_kernel.cpp: emits the kernel of a reduction group.
//
// The input shape S splits into kept dims (rows, M of them after collapsing) and reduced
// dims (N elements per row). A group of G threads reduces one row: G = the whole block
// (long contiguous rows), a warp (medium rows), or one thread (short rows, or rows whose
// elements are strided while consecutive rows are contiguous: then consecutive threads
// read consecutive addresses). Each thread accumulates its share in a fixed order, the
// group combines by a fixed shuffle/shared-memory tree, so results are the same bits on
// every run. Phases: a later reduction reads earlier ones' row values from registers; with
// the row on chip (K cached loads per thread) nothing is read twice from memory.
// Few long rows (a full reduction) split each row over gridDim.y blocks: each writes a
// partial, the last block to finish (an atomic ticket) combines them in order.
// Rows read across threads with too few rows to fill the GPU (sum(x, axis=0) of a tall
// x) give each row G lanes strided by the block's RB rows ("strided lanes"): a warp still
// reads consecutive rows, and the lanes combine through shared memory in a fixed tree.
// The group's analysis and row values: reduction_emitter.cpp; scans: scan_kernel.cpp.
#include "codegen/reduction_kernel.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "codegen/preamble.hpp"
#include "codegen/reduction_emitter.hpp"
#include "core/reduce_attrs.hpp"

namespace cufuse::detail {
namespace red {

std::string RedEmitter::group_reduce(const Red& r, int k) {
  const std::string a = "red" + std::to_string(k), ai = a + "_i";
  const bool arg = is_arg(r.op);
  std::string s;
  auto shfl = [&](const std::string& dst, const std::string& src, const std::string& T) {
    return fmt::format("const {} {} = {};", T, dst, shuffle("__shfl_xor_sync", src, T, "o"));
  };
  auto warp = [&](int lanes) {
    std::string w = fmt::format("    for (int o = {}; o > 0; o >>= 1) {{ ", lanes / 2);
    w += shfl("ov", a, r.T) + " ";
    if (arg) w += "const long long oi = __shfl_xor_sync(0xffffffffu, " + ai + ", o); ";
    w += combine(r, a, ai, "ov", "oi") + " }\n";
    return w;
  };
  if (sh.lanes == 1) return "";
  if (sh.strided_lanes) {
    // strided lanes: lane l adds lane l + o's value, o = G/2 .. 1, through shared memory;
    // every lane then takes lane 0's result
    s += fmt::format("    shx{}[threadIdx.x] = {};{}\n    __syncthreads();\n", k, a,
                     arg ? fmt::format(" shxi{}[threadIdx.x] = {};", k, ai) : "");
    s += fmt::format("    for (int o = G / 2; o > 0; o >>= 1) {{\n      if (lane < o) {{\n"
                     "        const {} ov = shx{}[threadIdx.x + o * RB];\n", r.T, k);
    s += arg ? fmt::format("        const long long oi = shxi{}[threadIdx.x + o * RB];\n", k) : "";
    s += "        " + combine(r, a, ai, "ov", "oi") + "\n";
    s += fmt::format("        shx{}[threadIdx.x] = {};{}\n      }}\n      __syncthreads();\n    }}\n", k, a,
                     arg ? fmt::format(" shxi{}[threadIdx.x] = {};", k, ai) : "");
    s += fmt::format("    {} = shx{}[threadIdx.x % RB];{}\n    __syncthreads();\n", a, k,
                     arg ? fmt::format(" {} = shxi{}[threadIdx.x % RB];", ai, k) : "");
    return s;
  }
  s += warp(std::min(sh.lanes, 32));
  if (sh.lanes <= 32) return s;
  const int nw = sh.block / 32;
  s += fmt::format("    if ((threadIdx.x & 31) == 0) {{ sh{}[threadIdx.x >> 5] = {};{} }}\n", k, a,
                   arg ? fmt::format(" shi{}[threadIdx.x >> 5] = {};", k, ai) : "");
  s += "    __syncthreads();\n";
  s += fmt::format("    if (threadIdx.x < 32) {{\n      {} = threadIdx.x < {} ? sh{}[threadIdx.x] : {};\n", a, nw, k, identity(r));
  if (arg) s += fmt::format("      {} = threadIdx.x < {} ? shi{}[threadIdx.x] : 0x7fffffffffffffffLL;\n", ai, nw, k);
  s += "  " + warp(32);
  s += fmt::format("      if (threadIdx.x == 0) {{ sh{}[0] = {};{} }}\n    }}\n", k, a,
                   arg ? fmt::format(" shi{}[0] = {};", k, ai) : "");
  s += "    __syncthreads();\n";
  s += fmt::format("    {} = sh{}[0];{}\n    __syncthreads();\n", a, k, arg ? fmt::format(" {} = shi{}[0];", ai, k) : "");
  return s;
}

// The loop over a row's elements running `body` (emitted by f) per element.
std::string RedEmitter::element_loop(ExprEmitter& e, const std::function<void()>& f, bool first_in_split,
                         const std::string& pre, const std::string& post) {
  std::string s;
  vals.clear();
  e.code.clear();
  const std::string q_unravel = [&] {
    if (sh.red_shape.ndim() <= 1) return std::string();
    std::string u = "        I rq = r;\n";
    for (int d = sh.red_shape.ndim() - 1; d >= 0; --d) {
      if (d == 0) u += "        const I q0 = rq;\n";
      else u += fmt::format("        const I q{} = rq % p.rshape[{}]; rq /= p.rshape[{}];\n", d, d, d);
    }
    return u;
  }();
  if (sh.on_chip) {
    f();
    std::string vl;  // data the same for every row (a broadcast vector): read, not cached
    for (size_t j = 0; j < accs.size(); ++j)
      if (accs[j].vec && !accs[j].cached)
        vl += fmt::format("      const cf_vec<{}, V> l{} = {};\n", storage_type(accs[j].node->dtype), j, vector_load(j, "j"));
    s += "#pragma unroll\n    for (int kk = 0; kk < K; ++kk) {\n      const I j = lane + (I)kk * G;\n"
         "      if (j * V < N) {\n" + vl + pre + "#pragma unroll\n      for (int t = 0; t < V; ++t) {\n        const I r = j * V + t;\n";
    s += q_unravel + e.code + "      }\n" + post + "      }\n    }\n";
  } else {
    // A split row is dealt out to its blocks in turns of G vectors, not in one chunk each:
    // the blocks resident at a time then read one window of memory (W2 on the H100: 0.350
    // ms against 0.353-0.355 with a chunk per block). The order is still fixed.
    const bool split_loop = sh.split && first_in_split;
    const std::string range = split_loop ? "(I)blockIdx.y * G" : "(I)0";
    const std::string step = split_loop ? "(I)gridDim.y * G" : "(I)G";
    // U turns at a time, their loads issued before any is used (prefetched accessors read
    // l<j>u[u]), then the rest one turn at a time. NVVM unrolls a loop of unknown trip count
    // only when its body has no inline asm (asm is convergent): f16 loads, integer max/min
    // and fmax/fmin are asm, and a f16 column sum kept one load in flight a thread (H100,
    // sum(h, 0) of f16[8192,8192]: 0.161 ms, bf16 0.065, torch 0.059). A max's NaN branches
    // kept ptxas from hoisting the loads of an unrolled loop (f32: 0.184 ms, torch 0.100).
    const int U = unroll_turns();
    auto body = [&](bool prefetched) {
      vals.clear();
      e.code.clear();
      prefetch = prefetched;
      f();
      prefetch = false;
      std::string vloads;
      for (size_t j = 0; j < accs.size(); ++j)
        if (accs[j].vec && !prefetched)
          vloads += fmt::format("      const cf_vec<{}, V> l{} = {};\n", storage_type(accs[j].node->dtype), j, vector_load(j, "j"));
      std::string t = vloads + pre + "#pragma unroll\n      for (int t = 0; t < V; ++t) {\n        const I r = j * V + t;\n";
      t += q_unravel + e.code + "      }\n" + post;
      return t;
    };
    s += fmt::format("    I j0 = {} + lane;\n", range);
    if (U > 1) {
      s += fmt::format("    for (; j0 + {} * ({} - 1) < (N / V); j0 += {} * {}) {{\n", step, U, step, U);
      s += prefetch_turns(U, fmt::format("j0 + {} * u", step), q_unravel);
      s += fmt::format("#pragma unroll\n      for (int u = 0; u < {}; ++u) {{\n        const I j = j0 + {} * u;\n", U, step);
      s += body(true) + "      }\n    }\n";
    }
    s += fmt::format("    for (; j0 < (N / V); j0 += {}) {{\n      const I j = j0;\n", step);
    s += body(false) + "    }\n";
  }
  e.code.clear();
  return s;
}

KernelSpec RedEmitter::emit() {
  analyse();
  ExprEmitter e(bind, sh.index64);
  size_t ws_bytes = 0, ws_zero = 0;
  std::vector<size_t> ws_part, ws_idx;
  build_params(e, ws_bytes, ws_zero, ws_part, ws_idx);
  const int RB = sh.block / sh.lanes;
  std::string b;
  b += fmt::format("  using I = {};\n  constexpr int G = {}, RB = {}, V = {}, K = {};\n", e.idx(), sh.lanes, RB, sh.vec, sh.cached > 0 ? sh.cached : 1);
  b += "  const I M = p.M, N = p.N;\n  (void)N;\n";
  b += sh.strided_lanes ? "  const int lane = (int)(threadIdx.x / RB);\n" : "  const int lane = (int)(threadIdx.x % G);\n";
  if (sh.strided_lanes)
    for (size_t k = 0; k < reds.size(); ++k) {
      b += fmt::format("  __shared__ {} shx{}[{}];\n", reds[k].T, k, sh.block);
      if (is_arg(reds[k].op)) b += fmt::format("  __shared__ long long shxi{}[{}];\n", k, sh.block);
    }
  if (sh.lanes > 32 && !sh.strided_lanes)
    for (size_t k = 0; k < reds.size(); ++k) {
      b += fmt::format("  __shared__ {} sh{}[{}];\n", reds[k].T == "bool" ? "bool" : reds[k].T, k, sh.block / 32);
      if (is_arg(reds[k].op)) b += fmt::format("  __shared__ long long shi{}[{}];\n", k, sh.block / 32);
    }
  if (sh.split) b += "  __shared__ bool cf_last;\n";
  // Strided lanes meet at barriers, and a part-warp group shuffles with the whole warp:
  // there every thread of a block runs the same row iterations.
  const std::string rib = sh.strided_lanes ? "(I)(threadIdx.x % RB)" : "(I)(threadIdx.x / G)";
  const std::string row_loop =
      sh.split ? fmt::format("  {{\n    const I row = (I)blockIdx.x * RB + {};\n    const bool active = row < M;\n", rib)
      : sh.strided_lanes || (sh.lanes > 1 && sh.lanes < 32)
          ? fmt::format("  for (I row0 = (I)blockIdx.x * RB; row0 < M; row0 += (I)gridDim.x * RB) {{\n"
                        "    const I row = row0 + {};\n    const bool active = row < M;\n", rib)
          : "  for (I row = (I)blockIdx.x * RB + (I)(threadIdx.x / G); row < M; row += (I)gridDim.x * RB) {\n    const bool active = true;\n";
  b += row_loop;
  // kept coordinates and per-accessor bases
  b += row_bases("active ? row : (I)0", sp.outputs.size());
  if (sh.on_chip) {
    for (auto& a : accs) {
      bool varies = false;
      for (auto k : a.ks) varies |= k != 0;
      a.cached = a.row_ctx && a.kind == Acc::Mem && varies;
    }
    for (size_t j = 0; j < accs.size(); ++j) {
      if (!accs[j].cached) continue;
      const std::string st = storage_type(accs[j].node->dtype);
      b += fmt::format("    cf_vec<{}, V> c{}[K];\n", st, j);
      b += "#pragma unroll\n    for (int kk = 0; kk < K; ++kk) {\n      const I j = lane + (I)kk * G;\n";
      if (accs[j].vec) {
        b += fmt::format("      if (j * V < N) c{}[kk] = {};\n", j, vector_load(j, "j"));
      } else {
        b += "      if (j * V < N) {\n#pragma unroll\n        for (int t = 0; t < V; ++t) {\n          const I r = j * V + t;\n";
        if (sh.red_shape.ndim() > 1) {
          b += "          I rq = r;\n";
          for (int d = sh.red_shape.ndim() - 1; d >= 0; --d) {
            if (d == 0) b += "          const I q0 = rq;\n";
            else b += fmt::format("          const I q{} = rq % p.rshape[{}]; rq /= p.rshape[{}];\n", d, d, d);
          }
        }
        b += fmt::format("          c{}[kk].v[t] = p.a{}[b{} + {}];\n        }}\n      }}\n", j, j, j,
                         row_offset(accs[j].rs, "a" + std::to_string(j) + "r"));
      }
      b += "    }\n";
    }
  }
  // phases
  for (int ph = 0; ph < sh.phases; ++ph) {
    for (size_t k = 0; k < reds.size(); ++k) {
      if (reds[k].phase != ph) continue;
      b += fmt::format("    {} red{} = {};\n", reds[k].T, k, identity(reds[k]));
      if (is_arg(reds[k].op)) b += fmt::format("    long long red{}_i = 0x7fffffffffffffffLL;\n", k);
    }
    b += "    if (active) {\n";
    b += element_loop(e, [&] {
      for (size_t k = 0; k < reds.size(); ++k) {
        if (reds[k].phase != ph) continue;
        std::string v = row_value(e, reds[k].node->inputs[0].get());
        e.line(combine(reds[k], "red" + std::to_string(k), "red" + std::to_string(k) + "_i", v, "r"), 8);
      }
    }, true);
    b += "    }\n";
    for (size_t k = 0; k < reds.size(); ++k)
      if (reds[k].phase == ph) b += group_reduce(reds[k], static_cast<int>(k));
  }
  if (sh.split) {
    b += "    if (lane == 0 && active) {\n";
    for (size_t k = 0; k < reds.size(); ++k) {
      b += fmt::format("      p.w{}[(size_t)blockIdx.y * M + row] = red{};\n", k, k);
      if (is_arg(reds[k].op)) b += fmt::format("      p.wi{}[(size_t)blockIdx.y * M + row] = red{}_i;\n", k, k);
    }
    // Each writer fences its own partial (not all B threads: a fence is slow), then the
    // block counts itself in once.
    b += "      __threadfence();\n    }\n    __syncthreads();\n";
    b += "    if (threadIdx.x == 0) cf_last = atomicAdd(p.ctr + blockIdx.x, 1u) == gridDim.y - 1;\n";
    b += "    __syncthreads();\n    if (!cf_last) return;\n    __threadfence();\n";
    // The row's lanes combine the partials (lane, lane + G, ... in order), then the
    // fixed group tree: the same order every run.
    b += "    if (active) {\n";
    for (size_t k = 0; k < reds.size(); ++k) {
      const std::string a = "red" + std::to_string(k);
      b += fmt::format("      {} = {};\n", a, identity(reds[k]));
      if (is_arg(reds[k].op)) b += fmt::format("      {}_i = 0x7fffffffffffffffLL;\n", a);
      // Eight partials per lane are loaded before any is combined, not one L2 round trip
      // after another (W2's finish: 2048 partials, 8 a lane). Same order, same bits; W2, W5
      // and W9 ran 0.2-0.3% faster in an A/B on the H100 (3 runs each).
      const bool arg = is_arg(reds[k].op);
      b += fmt::format("      for (unsigned s0 = (unsigned)lane; s0 < gridDim.y; s0 += {} * G) {{\n"
                       "        {} pvs[{}];\n", kFinishBatch, reds[k].T, kFinishBatch);
      if (arg) b += fmt::format("        long long pis[{}];\n", kFinishBatch);
      const bool pair = reds[k].T.rfind("cf_cplx", 0) == 0;  // a complex pair: cf_vld (no volatile copy)
      b += fmt::format("#pragma unroll\n        for (int q = 0; q < {}; ++q) {{\n"
                       "          const unsigned s = s0 + q * G;\n          if (s < gridDim.y) {{\n"
                       "            pvs[q] = {}((volatile {}*)p.w{}){};\n",
                       kFinishBatch, pair ? "cf_vld(" : "", reds[k].T, k,
                       pair ? " + (size_t)s * M + row)" : "[(size_t)s * M + row]");
      if (arg) b += fmt::format("            pis[q] = ((volatile long long*)p.wi{})[(size_t)s * M + row];\n", k);
      b += "          }\n        }\n";
      b += fmt::format("#pragma unroll\n        for (int q = 0; q < {}; ++q) {{\n"
                       "          if (s0 + q * G < gridDim.y) {{\n            const {} pv = pvs[q];\n",
                       kFinishBatch, reds[k].T);
      b += arg ? "            const long long pi = pis[q];\n" : "            const long long pi = 0; (void)pi;\n";
      b += "            " + combine(reds[k], a, a + "_i", "pv", "pi") + "\n          }\n        }\n      }\n";
    }
    b += "    }\n";
    for (size_t k = 0; k < reds.size(); ++k) b += group_reduce(reds[k], static_cast<int>(k));
  }
  // row outputs
  bool any_row = false;
  for (const auto& o : sp.outputs) any_row |= o.kind == OutKind::Row;
  if (any_row) {
    // with vector loads, each thread's V consecutive results go out as one vector store
    std::string pre, post;
    if (sh.vec > 1)
      for (size_t i = 0; i < sp.outputs.size(); ++i) {
        if (sp.outputs[i].kind != OutKind::Row) continue;
        const std::string st = storage_type(sp.outputs[i].node->dtype);
        pre += fmt::format("      cf_vec<{}, V> w{};\n", st, i);
        post += fmt::format("      *reinterpret_cast<cf_vec<{}, V>*>(p.o{} + ob{} + j * V) = w{};\n", st, i, i, i);
      }
    b += "    if (active) {\n";
    b += element_loop(e, [&] {
      for (size_t i = 0; i < sp.outputs.size(); ++i) {
        const auto& o = sp.outputs[i];
        if (o.kind != OutKind::Row) continue;
        std::string v = row_value(e, o.node.get());
        if (sh.vec > 1) e.line(fmt::format("w{}.v[t] = {};", i, store_expr(o.node->dtype, v)), 8);
        else e.line(fmt::format("p.o{}[ob{} + {}] = {};", i, i, row_offset(out_rs[i], "o" + std::to_string(i) + "r"),
                                store_expr(o.node->dtype, v)), 8);
      }
    }, false, pre, post);
    b += "    }\n";
  }
  // values and epilogues, by the row's first lane
  vals.clear();
  e.code.clear();
  for (size_t i = 0; i < sp.outputs.size(); ++i) {
    const auto& o = sp.outputs[i];
    if (o.kind == OutKind::Row) continue;
    std::string v = o.kind == OutKind::Value ? red_ref(red_of.at(o.node.get())) : out_value(e, o.node.get());
    e.line(fmt::format("p.o{}[ob{}] = {};", i, i, store_expr(o.node->dtype, v)), 8);
  }
  if (!e.code.empty()) b += "    if (lane == 0 && active) {\n" + e.code + "    }\n";
  e.code.clear();
  b += "  }\n";

  std::vector<DType> types;
  for (const auto& o : sp.outputs) types.push_back(o.node->dtype);
  const uint64_t h = std::hash<std::string>{}(e.pl.decl() + b);
  KernelSpec k;
  k.name = kernel_name("red", types, h);
  k.source = kernel_source(k.name, e.pl.decl(), sh.block, b);
  k.params = e.pl.bytes();
  k.patches = std::move(e.patches);
  k.numel = sh.rows;
  const int64_t row_blocks = (sh.rows + RB - 1) / RB;
  k.dims.grid[0] = static_cast<unsigned>(sh.split ? row_blocks : std::min<int64_t>(std::max<int64_t>(row_blocks, 1), 1 << 20));
  k.dims.grid[1] = static_cast<unsigned>(sh.splits);
  k.dims.block[0] = static_cast<unsigned>(sh.block);
  k.workspace_bytes = ws_bytes;
  k.workspace_zero_bytes = ws_zero;
  const std::string mode = sh.strided_lanes ? fmt::format("{} strided lanes", sh.lanes)
                           : sh.lanes == 1 ? "a thread" : sh.lanes < 32 ? fmt::format("{} lanes", sh.lanes) : (sh.lanes == 32 ? "a warp" : "a block");
  k.summary = fmt::format("{} row(s) x {} element(s), {} per row{}{}{}, {} phase(s), {}-bit index", sh.rows, sh.row_len, mode,
                          sh.vec > 1 ? fmt::format(", {}-wide loads", sh.vec) : "", sh.on_chip ? fmt::format(", row on chip ({} x {} per thread)", sh.cached, sh.vec) : "",
                          sh.split ? fmt::format(", split over {} blocks per row", sh.splits) : "", sh.phases, sh.index64 ? 64 : 32);
  return k;
}

}  // namespace red

KernelSpec emit_reduction_kernel(const ReductionSpec& spec, const LeafBinding& bind) {
  red::RedEmitter e(spec, bind);
  return e.emit();
}

}  // namespace cufuse::detail
