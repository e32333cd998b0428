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
#include "codegen/reduction_kernel.hpp"

#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/preamble.hpp"
#include "codegen/user_kernel.hpp"
#include "cufuse/error.hpp"
#include "cufuse/stream.hpp"
#include "graph/reduce_attrs.hpp"
#include "runtime/device.hpp"

namespace cufuse::detail {

namespace {

constexpr int kFinishBatch = 8;  // split reductions: partials each lane of the last block loads at once
constexpr int64_t kLaneThreads = int64_t(1) << 18;  // strided lanes: threads to aim for

// Blocks a split reduction aims for over all its rows: CUFUSE_SPLIT_BLOCKS, else `per_sm` per
// SM of the current device (2048 with none). Rows in a block's lanes (G = 32 or 256): 24 per
// SM, a whole number of waves at 8, 6, 4, 3 or 2 resident 256-thread blocks per SM, whatever
// the kernel's registers allow; a part-filled last wave costs W2 6% on the H100 (whole waves
// 0.353-0.354 ms at 3168, 6336 and 9504 blocks; 0.361-0.375 ms at 2048, 2112, 2640, 3696 and
// 4224), and the H200 agrees. Strided lanes: 8 per SM, one wave; their last block combines
// partials from every block of its rows, and fewer, longer blocks pay less for that (H100,
// f32 sums over axis 0: [8192,8192] 0.0945 ms at 1024 blocks against 0.105 at 3072;
// [1M,16] 0.032 at 1024 against 0.045 at 3168).
int64_t split_blocks(int per_sm) {
  static const int64_t env = [] {
    const char* e = std::getenv("CUFUSE_SPLIT_BLOCKS");
    const long long x = e ? std::atoll(e) : 0;
    return static_cast<int64_t>(x < 1 ? 0 : (x > (1 << 20) ? (1 << 20) : x));
  }();
  if (env > 0) return env;
  if (Device::count() > 0) {
    const int sms = device_props(current_device()).sm_count;
    if (sms > 0) return int64_t(per_sm) * sms;
  }
  return 2048;
}

bool contains(const Axes& axes, int d) { return std::find(axes.begin(), axes.end(), d) != axes.end(); }

struct Red {
  const Node* node;
  ReduceOp op;
  DType in;        // input dtype (== accumulator dtype)
  std::string T;   // accumulator register type
  int phase;
};

// The accumulator's register type: the input's, except that 8- and 16-bit integers reduce in
// 32 bits. Max, min and their arg forms give the same values, and sums and products the same
// bits once truncated; the GPU has no narrower integer ALU, and ptxas miscompiled min.s16
// after a warp shuffle (sm_90: the min of -x over an int16 row came out wrong; found by
// tests/gpu/test_fuzz_gpu.cpp, seed 656456491429). User reductions keep the declared type.
std::string acc_type(ReduceOp op, DType in) {
  if (op != ReduceOp::User && is_integer(in) && itemsize(in) < 4) return is_unsigned_int(in) ? "unsigned int" : "int";
  return reg_type(in);
}

// A warp shuffle of a value of register type T (small types travel as int).
std::string shuffle(const char* fn, const std::string& v, const std::string& T, const std::string& by) {
  if (T == "bool") return fmt::format("({}(0xffffffffu, (int){}, {}) != 0)", fn, v, by);
  if (T == "signed char" || T == "unsigned char" || T == "short" || T == "unsigned short")
    return fmt::format("({})({}(0xffffffffu, (int){}, {}))", T, fn, v, by);
  return fmt::format("{}(0xffffffffu, {}, {})", fn, v, by);
}

std::string identity(const Red& r) {
  switch (r.op) {
    case ReduceOp::CumSum:
    case ReduceOp::Sum: return fmt::format("({})0", r.T);
    case ReduceOp::CumProd:
    case ReduceOp::Prod: return fmt::format("({})1", r.T);
    case ReduceOp::Max: case ReduceOp::ArgMax: return fmt::format("cf_lowest<{}>()", r.T);
    case ReduceOp::Min: case ReduceOp::ArgMin: return fmt::format("cf_highest<{}>()", r.T);
    case ReduceOp::NanMax: return fmt::format("cf_nan_or<{}>(cf_lowest<{}>())", r.T, r.T);
    case ReduceOp::NanMin: return fmt::format("cf_nan_or<{}>(cf_highest<{}>())", r.T, r.T);
    case ReduceOp::Any: return "false";
    case ReduceOp::All: return "true";
    case ReduceOp::User: return user_reduce_identity(r.node, r.T);  // ReductionKernel (user_kernel.hpp)
    default: throw InternalError("scan in a reduction kernel");
  }
}

// A value of the reduction's input type, as the accumulator's (a cast only where they differ).
std::string as_acc(const Red& r, const std::string& v) {
  return r.T == reg_type(r.in) ? v : fmt::format("({})({})", r.T, v);
}

// acc (and acc index `ai`) combined with value v (at index vi).
std::string combine(const Red& r, const std::string& acc, const std::string& ai, const std::string& v,
                    const std::string& vi) {
  switch (r.op) {
    case ReduceOp::CumSum:
    case ReduceOp::Sum: return fmt::format("{} = cf_add({}, {});", acc, acc, as_acc(r, v));
    case ReduceOp::CumProd:
    case ReduceOp::Prod: return fmt::format("{} = cf_mul({}, {});", acc, acc, as_acc(r, v));
    case ReduceOp::Max: return fmt::format("{} = cf_red_max({}, {});", acc, acc, as_acc(r, v));
    case ReduceOp::Min: return fmt::format("{} = cf_red_min({}, {});", acc, acc, as_acc(r, v));
    case ReduceOp::NanMax: return fmt::format("{} = cf_red_nanmax({}, {});", acc, acc, as_acc(r, v));
    case ReduceOp::NanMin: return fmt::format("{} = cf_red_nanmin({}, {});", acc, acc, as_acc(r, v));
    case ReduceOp::Any: return fmt::format("{} = {} || {};", acc, acc, v);
    case ReduceOp::All: return fmt::format("{} = {} && {};", acc, acc, v);
    case ReduceOp::User: return user_reduce_combine(r.node, r.T, acc, v);  // ReductionKernel (user_kernel.hpp)
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      return fmt::format("if (cf_arg_better({}, (long long)({}), {}, {}, {})) {{ {} = {}; {} = (long long)({}); }}",
                         as_acc(r, v), vi, acc, ai, r.op == ReduceOp::ArgMax ? "true" : "false", acc, v, ai, vi);
    default: throw InternalError("scan in a reduction kernel");
  }
}

struct Acc {
  enum Kind { Mem, Gen, View } kind;
  const Node* node;
  Strides ks;  // kept strides (over kept dims, then collapsed)
  Strides rs;  // reduced strides (row context only)
  int64_t off = 0;
  bool row_ctx = true;
  bool vec = false;     // read as V-wide vectors along the row
  bool cached = false;  // kept in registers across phases (row-varying data only)
};

struct RedEmitter {
  const ReductionSpec& sp;
  const LeafBinding& bind;
  std::vector<Red> reds;
  std::unordered_map<const Node*, int> red_of;
  // accessors: per context
  std::vector<Acc> accs;
  std::unordered_map<const Node*, int> row_acc, out_acc;
  std::vector<const Node*> scalars;
  std::unordered_map<const Node*, int> scalar_of;
  std::vector<int> kept_dims, red_dims;
  Shape kshape, rshape;                 // collapsed
  std::vector<Strides> out_ks, out_rs;  // per output: destination strides
  int64_t M = 1, N = 1;
  int G = 1, B = 256, V = 1, K = 0, S = 1;
  bool cache = false, rowmode = false, i64 = false, split = false;
  bool xl = false;  // strided lanes: lane = threadIdx.x / RB, row = threadIdx.x % RB
  int phases = 1;

  RedEmitter(const ReductionSpec& s, const LeafBinding& b) : sp(s), bind(b) {}

  // Maps strides over a shape whose non-1 dims are the kept dims' non-1 dims onto kept dims.
  Strides map_to_kept(const Shape& xs, const Strides& xst) const {
    Strides out(kept_dims.size(), 0);
    size_t k = 0;
    for (int d = 0; d < xs.ndim(); ++d) {
      if (xs[d] == 1) continue;
      while (k < kept_dims.size() && sp.S[kept_dims[k]] == 1) ++k;
      if (k >= kept_dims.size() || sp.S[kept_dims[k]] != xs[d])
        throw InternalError("reduction epilogue shape does not match the kept dims");
      out[k++] = xst[d];
    }
    return out;
  }

  void split_strides(const Strides& st, Strides& ks, Strides& rs) const {
    for (int d : kept_dims) ks.push_back(st[d]);
    for (int d : red_dims) rs.push_back(st[d]);
  }

  // Row context: nodes over S evaluated at (row, r).
  void collect_row(const Node* n) {
    if (row_acc.count(n) || scalar_of.count(n)) return;
    if (n->k() == NodeKind::View && !n->inputs.empty() && red_of.count(n->inputs[0].get())) {
      row_acc[n] = -2;  // broadcast-back value of an in-group reduction
      return;
    }
    if (reads_memory(n, bind) || n->k() == NodeKind::Generator || n->k() == NodeKind::View) {
      Acc a{reads_memory(n, bind) ? Acc::Mem : (n->k() == NodeKind::Generator ? Acc::Gen : Acc::View), n, {}, {}, 0, true};
      const Layout l = reads_memory(n, bind) ? memory_layout(n, bind) : n->layout;
      split_strides(l.strides, a.ks, a.rs);
      a.off = a.kind == Acc::Mem ? 0 : l.offset;
      row_acc[n] = static_cast<int>(accs.size());
      accs.push_back(a);
      return;
    }
    if (n->k() == NodeKind::Scalar) {
      scalar_of[n] = static_cast<int>(scalars.size());
      scalars.push_back(n);
      return;
    }
    if (n->k() == NodeKind::Elementwise) {
      row_acc[n] = -1;
      for (const auto& in : n->inputs) collect_row(in.get());
      return;
    }
    throw InternalError(fmt::format("reduction prologue met an unmaterialized {} node", kind_name(n->k())));
  }

  // Output context: nodes over a reduced shape evaluated at a row.
  void collect_out(const Node* n) {
    if (out_acc.count(n) || scalar_of.count(n)) return;
    if (red_of.count(n)) {
      out_acc[n] = -2;
      return;
    }
    if (reads_memory(n, bind) || n->k() == NodeKind::Generator || n->k() == NodeKind::View) {
      Acc a{reads_memory(n, bind) ? Acc::Mem : (n->k() == NodeKind::Generator ? Acc::Gen : Acc::View), n, {}, {}, 0, false};
      const Layout l = reads_memory(n, bind) ? memory_layout(n, bind) : n->layout;
      a.ks = map_to_kept(n->shape(), l.strides);
      a.off = a.kind == Acc::Mem ? 0 : l.offset;
      out_acc[n] = static_cast<int>(accs.size());
      accs.push_back(a);
      return;
    }
    if (n->k() == NodeKind::Scalar) {
      scalar_of[n] = static_cast<int>(scalars.size());
      scalars.push_back(n);
      return;
    }
    if (n->k() == NodeKind::Elementwise) {
      out_acc[n] = -1;
      for (const auto& in : n->inputs) collect_out(in.get());
      return;
    }
    throw InternalError(fmt::format("reduction epilogue met an unmaterialized {} node", kind_name(n->k())));
  }

  void analyse() {
    for (int d = 0; d < sp.S.ndim(); ++d) (contains(sp.axes, d) ? red_dims : kept_dims).push_back(d);
    for (size_t i = 0; i < sp.reductions.size(); ++i) {
      const Node* r = sp.reductions[i];
      const DType in = r->inputs[0]->dtype;
      const ReduceOp op = reduce_attrs(*r).op;
      reds.push_back(Red{r, op, in, acc_type(op, in), sp.phase[i]});
      red_of[r] = static_cast<int>(i);
      phases = std::max(phases, sp.phase[i] + 1);
    }
    for (const auto& red : reds) collect_row(red.node->inputs[0].get());
    for (const auto& o : sp.outputs) {
      if (o.kind == OutKind::Row) {
        if (!red_of.count(o.node.get())) collect_row(o.node.get());
        rowmode = true;
      } else if (o.kind == OutKind::Epilogue) {
        collect_out(o.node.get());
      }
    }
    rowmode |= phases > 1;
    // destination strides
    for (const auto& o : sp.outputs) {
      Strides ks, rs;
      if (o.kind == OutKind::Row) split_strides(o.layout.strides, ks, rs);
      else ks = map_to_kept(o.node->shape(), o.layout.strides);
      out_ks.push_back(ks);
      out_rs.push_back(rs);
    }
    // collapse kept dims over every accessor and output
    auto collapse = [&](const std::vector<int>& dims, bool kept) {
      Shape cs;
      std::vector<Strides*> all;
      for (auto& a : accs)
        if (kept || a.row_ctx) all.push_back(kept ? &a.ks : &a.rs);
      for (size_t i = 0; i < sp.outputs.size(); ++i)
        if (kept || sp.outputs[i].kind == OutKind::Row) all.push_back(kept ? &out_ks[i] : &out_rs[i]);
      std::vector<Strides> cst(all.size());
      for (size_t k = 0; k < dims.size(); ++k) {
        const int64_t size = sp.S[dims[k]];
        if (size == 1) continue;
        bool merge = !cs.empty();
        for (size_t a = 0; merge && a < all.size(); ++a) merge = cst[a].back() == (*all[a])[k] * size;
        if (merge) {
          cs.back() *= size;
          for (size_t a = 0; a < all.size(); ++a) cst[a].back() = (*all[a])[k];
        } else {
          cs.push_back(size);
          for (size_t a = 0; a < all.size(); ++a) cst[a].push_back((*all[a])[k]);
        }
      }
      for (size_t a = 0; a < all.size(); ++a) *all[a] = cst[a];
      return cs;
    };
    kshape = collapse(kept_dims, true);
    rshape = collapse(red_dims, false);
    M = numel(kshape);
    N = numel(rshape);
    if (scan_mode) G = B = 256;
    else choose_shape();
    choose_index();
  }
  bool scan_mode = false;

  void choose_shape() {
    const int rr = rshape.ndim(), rk = kshape.ndim();
    bool inner = rr <= 1, kept_contig = rk >= 1;
    int maxsz = 1;
    for (const auto& a : accs) {
      if (!a.row_ctx || a.kind != Acc::Mem) continue;
      if (rr == 1 && a.rs[0] != 0 && a.rs[0] != 1) inner = false;
      if (rk >= 1 && a.ks[rk - 1] != 0 && a.ks[rk - 1] != 1) kept_contig = false;
      maxsz = std::max(maxsz, itemsize(a.node->dtype));
    }
    for (size_t i = 0; i < sp.outputs.size(); ++i)
      if (sp.outputs[i].kind == OutKind::Row) {
        if (rr == 1 && out_rs[i][0] != 1) inner = false;
        maxsz = std::max(maxsz, itemsize(sp.outputs[i].node->dtype));
      }
    if (inner && N > 1) {
      if (N >= 4096 || (rowmode && N > 1024)) {
        G = 256;
      } else {
        // Shorter rows: G adjacent lanes a row (2 to 32, a warp or part of one), each with up to
        // 4 of the row's 16-byte vectors or 5 elements, so that a warp reads and writes
        // consecutive addresses whatever the row's length. A thread per row wrote 32 rows at
        // once at the row's stride; a warp per short row left lanes idle. H100, f32 softmax over
        // 64M elements in rows of 8 / 17 / 31 / 64 / 100: 0.69 / 0.89 / 1.55 / 0.47 / 0.31 ms
        // before, 0.22 / 0.31 / 0.26 / 0.19 / 0.19 now (torch 0.20 / 0.38 / 0.23 / 0.18 / 0.18);
        // lanes of 2 or 8 vectors ran up to 25% slower.
        const int v = 16 / maxsz;
        const int64_t nv = N % v == 0 ? N / v : N;
        const int per_lane = N % v == 0 ? 4 : 5;
        G = 2;
        while (G < 32 && int64_t(G) * per_lane < nv) G *= 2;
        // Rows shorter than 16 (4 with row-shaped results) stay a thread's: its loads of 32
        // adjacent short rows share cache lines, and a lane per element adds more work than
        // it saves (sum / softmax over rows of 2: 0.15 / 0.28 ms against 0.24 / 0.45).
        if (N < (rowmode ? 4 : 16)) G = 1;
      }
    } else if (kept_contig) {
      G = 1;
      choose_strided_lanes();
    } else {
      G = N >= 32 ? 32 : 1;
    }
    if (!xl) B = 256;
    // vector width along the row
    V = 1;
    if (inner && rr == 1 && G > 1) {
      int v = 16 / maxsz;
      bool ok = N % v == 0;
      auto check = [&](const Strides& ks, const Node* n, bool is_out, bool aligned) {
        if (!aligned) ok = false;
        for (auto k : ks)
          if (k % v != 0) ok = false;
        (void)n;
        (void)is_out;
      };
      for (auto& a : accs)
        if (a.row_ctx && a.kind == Acc::Mem && a.rs[0] == 1)
          check(a.ks, a.node, false, a.node->k() == NodeKind::Buffer ? bind.is_aligned16(a.node) : true);
      for (size_t i = 0; i < sp.outputs.size(); ++i)
        if (sp.outputs[i].kind == OutKind::Row) check(out_ks[i], sp.outputs[i].node.get(), true, sp.outputs[i].aligned16);
      if (ok && v > 1) {
        V = v;
        for (auto& a : accs) a.vec = a.row_ctx && a.kind == Acc::Mem && a.rs[0] == 1;
      }
    }
    // keep rows on chip for phases / row outputs
    if (rowmode && !sp.multipass) {
      auto vectors_per_thread = [&](int64_t g) { return (N + g * V - 1) / (g * V); };
      int64_t k = vectors_per_thread(G);
      // Block width of a row kept on chip: a row that gives each of 512 threads 4 to 8 full
      // vectors runs on 512 threads, not 256 with 8 to 16 vectors each. On the H100, f32 rows
      // of 8192 / 16384: softmax 0.1820 / 0.1866 ms against 0.1831 / 0.1911, layernorm 0.1832 /
      // 0.1880 against 0.1864 / 0.1995 (64M elements each). Rows of 6144 (3 vectors at 512)
      // stay at 256: softmax 0.1828 there against 0.1898. Not for 8-byte types: ptxas gives a
      // 512-thread block 64 registers a thread, and an f64 softmax row of 8 vectors then spills.
      if (G == 256 && maxsz <= 4 && N >= int64_t(4) * 512 * V && vectors_per_thread(512) <= 8) {
        G = B = 512;
        k = vectors_per_thread(G);
      }
      // Past 16 vectors a thread (rounded up to K = 32 registers' worth: f32 rows of 20000
      // took 180 registers and one block an SM, 0.33 ms against torch's 0.25), 1024 threads.
      if (G == 256 && (k > 32 || (k > 16 && maxsz <= 4))) {
        G = B = 1024;
        k = vectors_per_thread(G);
      }
      if (k <= 32) {
        K = 1;
        while (K < k) K *= 2;
        cache = true;
      }
    }
    // split long rows over several blocks
    const int RB = B / G;
    const int64_t row_blocks = (M + RB - 1) / RB;
    // (No rows at all, a zero-size result, launches nothing: there is nothing to split.)
    // Strided lanes split shorter rows too: few rows of 2048 would otherwise run in a block or two.
    const int64_t split_from = xl ? int64_t(G) * 64 : 8192;
    if (!rowmode && row_blocks >= 1 && row_blocks < 1024 && N >= split_from) {
      // Strided lanes round down, to at most one wave: 1280 blocks of f32[8192,8192]'s column
      // sums on the H100 (1056 resident) took 0.106 ms, 1024 took 0.094 and 2048 0.096.
      int64_t want = xl ? split_blocks(8) / row_blocks : (split_blocks(24) + row_blocks - 1) / row_blocks;
      int64_t most = std::max<int64_t>(1, N / (int64_t(G) * V * 16));
      S = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(want, std::min<int64_t>(most, 65535))));
      split = S > 1;
    }
  }

  // Rows read across threads: RB rows a block (32, a warp's worth, or all of fewer rows)
  // and G = B / RB lanes a row, so that about kLaneThreads threads run; a lane gets at least
  // 16 elements. One lane a row (the plain thread-per-row kernel) from kLaneThreads rows.
  void choose_strided_lanes() {
    size_t shared = 0;
    for (const auto& r : reds) shared += 8 + (is_arg(r.op) ? 8 : 0);
    if (shared * 256 > 40 * 1024) return;  // the lanes' tree needs B values per reduction
    int64_t rows = 1;
    while (rows < M && rows < 32) rows *= 2;
    int L = static_cast<int>(256 / rows);
    while (L > 1 && M * L > kLaneThreads) L /= 2;
    while (L > 1 && N < int64_t(L) * 16) L /= 2;
    if (L <= 1) return;
    xl = true;
    G = L;
    int64_t rb = 1;
    while (rb < M && rb < 256 / L) rb *= 2;
    B = static_cast<int>(rb) * L;
  }

  void choose_index() {
    int64_t span = std::max(M, N) * 2;
    for (const auto& a : accs) {
      span = std::max(span, span_of(kshape, a.ks, a.off) + (a.row_ctx ? span_of(rshape, a.rs) : 0));
      if (a.kind == Acc::View) span = std::max(span, chain_span(a.node));
    }
    for (size_t i = 0; i < sp.outputs.size(); ++i)
      span = std::max(span, span_of(kshape, out_ks[i]) + (sp.outputs[i].kind == OutKind::Row ? span_of(rshape, out_rs[i]) : 0));
    i64 = span + int64_t(B) * 64 >= (int64_t(1) << 31);
  }

  // ---------------------------------------------------------------- emission
  std::unordered_map<const Node*, std::string> vals;
  std::string cur_kk;  // cached mode: the cache slot index expression; "" when streaming
  bool prefetch = false;  // emitting element_loop's unrolled turns: row-varying loads were issued ahead

  // Read from memory along the row (not cached, not a broadcast): element_loop's unrolled
  // turns issue its loads ahead.
  bool is_prefetched(const Acc& a) const {
    if (a.kind != Acc::Mem || !a.row_ctx || a.cached || (V > 1 && !a.vec)) return false;
    bool varies = a.vec;
    for (auto r : a.rs) varies |= r != 0;
    return varies;
  }

  // Turns of a loop over a row unrolled with their loads ahead: 8 for accessors of 1 or 2
  // bytes, else 4; 1 (a plain loop) with nothing to prefetch.
  int unroll_turns() const {
    int sz = 0;
    for (const auto& a : accs)
      if (is_prefetched(a)) sz = std::max(sz, a.vec ? 16 : itemsize(a.node->dtype));
    return sz == 0 ? 1 : (sz <= 2 ? 8 : 4);
  }

  std::string vector_load(size_t j, const std::string& at) const {
    const std::string st = storage_type(accs[j].node->dtype);
    return fmt::format("*reinterpret_cast<const cf_vec<{}, V>*>(p.a{} + b{} + {} * V)", st, j, j, at);
  }

  // The prefetched accessors' U turns of loads, turn u at vector (or element) `at_u`, into
  // l<j>u[u]; row_value reads them there while `prefetch` is set.
  std::string prefetch_turns(int U, const std::string& at_u, const std::string& q_unravel) const {
    std::string s;
    for (size_t j = 0; j < accs.size(); ++j)
      if (is_prefetched(accs[j]))
        s += fmt::format("      {} l{}u[{}];\n", accs[j].vec ? fmt::format("cf_vec<{}, V>", storage_type(accs[j].node->dtype))
                                                           : storage_type(accs[j].node->dtype), j, U);
    s += fmt::format("#pragma unroll\n      for (int u = 0; u < {}; ++u) {{\n        const I j = {};\n", U, at_u);
    for (size_t j = 0; j < accs.size(); ++j) {
      if (!is_prefetched(accs[j])) continue;
      if (accs[j].vec) {
        s += fmt::format("        l{}u[u] = {};\n", j, vector_load(j, "j"));
      } else {
        s += "        {\n          const I r = j;\n" + q_unravel;
        s += fmt::format("          l{}u[u] = p.a{}[b{} + {}];\n        }}\n", j, j, j, row_offset(accs[j].rs, "a" + std::to_string(j) + "r"));
      }
    }
    return s + "      }\n";
  }

  std::string row_offset(const Strides& rs, const std::string& name) const {
    if (rshape.ndim() == 0) return "0";
    if (rshape.ndim() == 1) return rs[0] == 0 ? "0" : (rs[0] == 1 ? "r" : fmt::format("r * p.{}[0]", name));
    std::string s;
    for (int d = 0; d < rshape.ndim(); ++d) s += fmt::format("{}q{} * p.{}[{}]", d ? " + " : "", d, name, d);
    return s;
  }

  // Reduction k's result as a value of its dtype (a narrow integer's 32-bit accumulator is
  // truncated: acc_type), or its index for argmax/argmin.
  std::string red_ref(int k) const {
    const Red& r = reds[static_cast<size_t>(k)];
    if (is_arg(r.op)) return "red" + std::to_string(k) + "_i";
    const std::string R = reg_type(r.node->dtype);
    return R == r.T ? "red" + std::to_string(k) : fmt::format("(({})red{})", R, k);
  }

  std::string row_value(ExprEmitter& e, const Node* n) {
    auto it = vals.find(n);
    if (it != vals.end()) return it->second;
    std::string v;
    auto ai = row_acc.find(n);
    const int j = ai == row_acc.end() ? -1 : ai->second;
    if (j == -2) {
      v = red_ref(red_of.at(n->inputs[0].get()));
    } else if (j >= 0 && accs[j].kind == Acc::Mem) {
      const std::string J = std::to_string(j);
      v = e.fresh();
      std::string src;
      if (accs[j].cached) src = fmt::format("c{}[kk].v[t]", J);
      else if (prefetch && accs[j].vec) src = fmt::format("l{}u[u].v[t]", J);
      else if (accs[j].vec) src = fmt::format("l{}.v[t]", J);
      else if (prefetch && is_prefetched(accs[j])) src = fmt::format("l{}u[u]", J);
      else src = fmt::format("p.a{}[b{} + {}]", J, J, row_offset(accs[j].rs, "a" + J + "r"));
      e.line(fmt::format("const {} {} = {};", reg_type(n->dtype), v, load_expr(n->dtype, src)), 8);
    } else if (n->k() == NodeKind::Scalar) {
      v = "p.s" + std::to_string(scalar_of.at(n));
    } else if (j >= 0 && accs[j].kind == Acc::Gen) {
      const std::string J = std::to_string(j);
      v = e.gen_value(n, "g" + J, fmt::format("b{} + (long long)({})", J, row_offset(accs[j].rs, "a" + J + "r")));
    } else if (j >= 0 && accs[j].kind == Acc::View) {
      const std::string J = std::to_string(j);
      v = e.chain_value(n, "v" + J, fmt::format("b{} + (long long)({})", J, row_offset(accs[j].rs, "a" + J + "r")));
    } else {
      std::vector<std::string> in(n->inputs.size());  // user ops take any number of inputs
      for (size_t k = 0; k < n->inputs.size(); ++k) in[k] = row_value(e, n->inputs[k].get());
      v = e.op_value(n, in.data());
    }
    vals[n] = v;
    return v;
  }

  std::string out_value(ExprEmitter& e, const Node* n) {
    auto it = vals.find(n);
    if (it != vals.end()) return it->second;
    std::string v;
    auto ai = out_acc.find(n);
    const int j = ai == out_acc.end() ? -1 : ai->second;
    if (j == -2) {
      v = red_ref(red_of.at(n));
    } else if (j >= 0 && accs[j].kind == Acc::Mem) {
      v = e.fresh();
      e.line(fmt::format("const {} {} = {};", reg_type(n->dtype), v,
                         load_expr(n->dtype, fmt::format("p.a{}[b{}]", j, j))), 8);
    } else if (n->k() == NodeKind::Scalar) {
      v = "p.s" + std::to_string(scalar_of.at(n));
    } else if (j >= 0 && accs[j].kind == Acc::Gen) {
      v = e.gen_value(n, "g" + std::to_string(j), fmt::format("b{}", j));
    } else if (j >= 0 && accs[j].kind == Acc::View) {
      v = e.chain_value(n, "v" + std::to_string(j), fmt::format("b{}", j));
    } else {
      std::vector<std::string> in(n->inputs.size());  // user ops take any number of inputs
      for (size_t k = 0; k < n->inputs.size(); ++k) in[k] = out_value(e, n->inputs[k].get());
      v = e.op_value(n, in.data());
    }
    vals[n] = v;
    return v;
  }

  void build_params(ExprEmitter& e, size_t& ws_bytes, size_t& ws_zero, std::vector<size_t>& ws_part,
                     std::vector<size_t>& ws_idx) {
    e.add_idx("M", M);
    e.add_idx("N", N);
    e.add_idx_array("kshape", kshape);
    e.add_idx_array("rshape", rshape);
    for (size_t j = 0; j < accs.size(); ++j) {
      const Acc& a = accs[j];
      const std::string J = std::to_string(j);
      if (a.kind == Acc::Mem) e.add_memory_ptr("a" + J, a.node, true);
      else e.add_idx("a" + J + "off", a.off);
      e.add_idx_array("a" + J + "k", a.ks);
      if (a.row_ctx) e.add_idx_array("a" + J + "r", a.rs);
    }
    for (size_t i = 0; i < sp.outputs.size(); ++i) {
      const auto& o = sp.outputs[i];
      const std::string J = std::to_string(i);
      size_t off = e.pl.add(fmt::format("{}*", storage_type(o.node->dtype)), 8, "o" + J);
      e.add_patch(off, PatchSrc::BufferPtr, o.node->dtype, o.buffer);
      e.add_idx_array("o" + J + "k", out_ks[i]);
      if (o.kind == OutKind::Row) e.add_idx_array("o" + J + "r", out_rs[i]);
    }
    for (size_t k = 0; k < scalars.size(); ++k) e.add_scalar("s" + std::to_string(k), scalars[k]);
    if (split) {
      const int RB = B / G;
      const int64_t gx = (M + RB - 1) / RB;
      ws_zero = static_cast<size_t>(gx) * 4;
      ws_bytes = (ws_zero + 15) / 16 * 16;
      size_t off = e.pl.add("unsigned int*", 8, "ctr");
      e.add_patch(off, PatchSrc::Workspace, DType::UInt32, 0);
      for (size_t k = 0; k < reds.size(); ++k) {
        ws_part.push_back(ws_bytes);
        size_t o2 = e.pl.add(reds[k].T + "*", 8, "w" + std::to_string(k));
        e.add_patch(o2, PatchSrc::Workspace, reds[k].in, static_cast<int>(ws_bytes));
        ws_bytes += (static_cast<size_t>(S) * M * 8 + 15) / 16 * 16;
        if (is_arg(reds[k].op)) {
          ws_idx.push_back(ws_bytes);
          size_t o3 = e.pl.add("long long*", 8, "wi" + std::to_string(k));
          e.add_patch(o3, PatchSrc::Workspace, DType::Int64, static_cast<int>(ws_bytes));
          ws_bytes += (static_cast<size_t>(S) * M * 8 + 15) / 16 * 16;
        } else {
          ws_idx.push_back(0);
        }
      }
    }
  }

  std::string group_reduce(const Red& r, int k) {
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
    if (G == 1) return "";
    if (xl) {
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
    s += warp(std::min(G, 32));
    if (G <= 32) return s;
    const int nw = B / 32;
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
  std::string element_loop(ExprEmitter& e, const std::function<void()>& f, bool first_in_split,
                           const std::string& pre = "", const std::string& post = "") {
    std::string s;
    vals.clear();
    e.code.clear();
    const std::string q_unravel = [&] {
      if (rshape.ndim() <= 1) return std::string();
      std::string u = "        I rq = r;\n";
      for (int d = rshape.ndim() - 1; d >= 0; --d) {
        if (d == 0) u += "        const I q0 = rq;\n";
        else u += fmt::format("        const I q{} = rq % p.rshape[{}]; rq /= p.rshape[{}];\n", d, d, d);
      }
      return u;
    }();
    if (cache) {
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
      const bool split_loop = split && first_in_split;
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

  // The top of a row loop: row `kr`'s kept coordinates k0.., each accessor's base b<j> and
  // the first `outputs` outputs' bases ob<i>.
  std::string row_bases(const std::string& kr, size_t outputs) const {
    std::string b = "    I kr = " + kr + ";\n";
    for (int d = kshape.ndim() - 1; d >= 0; --d) {
      if (d == 0) b += "    const I k0 = kr;\n";
      else b += fmt::format("    const I k{} = kr % p.kshape[{}]; kr /= p.kshape[{}];\n", d, d, d);
    }
    auto kdot = [&](const std::string& name, const Strides& ks) {
      std::string s;
      for (int d = 0; d < kshape.ndim(); ++d)
        if (ks[d] != 0) s += fmt::format(" + k{} * p.{}[{}]", d, name, d);
      return s;
    };
    for (size_t j = 0; j < accs.size(); ++j) {
      const Acc& a = accs[j];
      if (a.kind == Acc::Mem) b += fmt::format("    const I b{} = (I)0{};\n", j, kdot("a" + std::to_string(j) + "k", a.ks));
      else b += fmt::format("    const long long b{} = (long long)p.a{}off{};\n", j, j, kdot("a" + std::to_string(j) + "k", a.ks));
    }
    for (size_t i = 0; i < outputs; ++i)
      b += fmt::format("    const I ob{} = (I)0{};\n", i, kdot("o" + std::to_string(i) + "k", out_ks[i]));
    return b;
  }

  // A scan: one block per row, tiles of B elements, an inclusive block scan per tile plus
  // the carry of the tiles before it.
  KernelSpec emit_scan() {
    scan_mode = true;
    analyse();
    ExprEmitter e(bind, i64);
    size_t ws_bytes = 0, ws_zero = 0;
    std::vector<size_t> ws_part, ws_idx;
    build_params(e, ws_bytes, ws_zero, ws_part, ws_idx);
    const Red& r = reds[0];
    const std::string T = r.T;
    if (scan_across_threads()) return emit_scan_by_thread(e);
    if (const int tiled = scan_tiles(); tiled != 0) return emit_scan_tiled(e, tiled == 2);
    std::string b;
    b += fmt::format("  using I = {};\n  constexpr int NW = {};\n", e.idx(), B / 32);
    b += "  const I M = p.M, N = p.N;\n";
    b += fmt::format("  __shared__ {} shw[NW];\n", T);
    b += "  const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);\n";
    b += "  for (I row = (I)blockIdx.x; row < M; row += (I)gridDim.x) {\n";
    b += row_bases("row", 1);
    b += fmt::format("    {} carry = {};\n", T, identity(r));
    b += fmt::format("    for (I t0 = 0; t0 < N; t0 += {}) {{\n      const I r = t0 + (I)threadIdx.x;\n", B);
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
    return scan_spec(e, b, M, fmt::format("a block per row, tiles of {}", B));
  }

  // A scan kernel of body `b` over `blocks` blocks of B threads (at most 2^20).
  KernelSpec scan_spec(ExprEmitter& e, const std::string& b, int64_t blocks, const std::string& mode) {
    const uint64_t h = std::hash<std::string>{}(e.pl.decl() + b);
    KernelSpec k;
    k.name = fmt::format("cf_scan_{}_{:016x}", info(reds[0].node->dtype).short_name, h);
    k.source = kernel_source(k.name, e.pl.decl(), B, b);
    k.params = e.pl.bytes();
    k.patches = std::move(e.patches);
    k.numel = M;
    k.dims.grid[0] = static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), 1 << 20));
    k.dims.block[0] = static_cast<unsigned>(B);
    k.summary = fmt::format("{} row(s) x {} element(s), {}, {}-bit index", M, N, mode, i64 ? 64 : 32);
    return k;
  }

  // A thread per row, in order: outer-axis rows enough to fill the GPU (a warp reads and
  // writes 32 adjacent rows at a time; a block per row read its 256-element tiles at the
  // row's stride: cumsum over axis 0 of f32[64,64,64,256] 2.58 ms, torch 0.23), or many
  // short contiguous rows (a block of 256 threads scanned each row of 16: f32[1M,16] 1.06 ms,
  // a thread 0.22; rows of 64 ran faster by a block, 0.28 ms against 0.52).
  bool scan_across_threads() const {
    if (scan_layout_outer()) return M >= kLaneThreads;
    return scan_layout_inner() && N <= 32 && M >= 2048;
  }

  // Rows whose elements are contiguous (or broadcast), read and written.
  bool scan_layout_inner() const {
    if (rshape.ndim() != 1 || out_rs[0][0] != 1) return false;
    for (const auto& a : accs)
      if (a.row_ctx && a.kind == Acc::Mem && a.rs[0] != 0 && a.rs[0] != 1) return false;
    return true;
  }

  // Rows whose elements are strided and whose consecutive rows are adjacent in memory.
  bool scan_layout_outer() const {
    const int rk = kshape.ndim();
    if (rk < 1 || rshape.ndim() != 1) return false;
    for (const auto& a : accs)
      if (a.row_ctx && a.kind == Acc::Mem) {
        if (a.rs[0] == 1 || a.rs[0] == -1) return false;
        if (a.ks[rk - 1] != 0 && a.ks[rk - 1] != 1) return false;
      }
    return out_ks[0][rk - 1] == 1;
  }

  // Scans cut into tiles spread over blocks: 1 along contiguous rows of 4096 elements or more,
  // 2 across outer-axis rows too few for a thread each; 0 for the one-block-per-row scan.
  // A block per row ran one block for a 1-D cumsum (H100, f32[64M]: 172 ms, torch 0.27), and
  // a thread per column left most of the GPU idle under 2^18 columns (cumsum(x, 0) of
  // f32[16384,4096]: 3.1 ms, a copy 0.18).
  int scan_tiles() const {
    if (scan_layout_outer()) return M >= 2 ? 2 : 0;
    return scan_layout_inner() && N >= 4096 ? 1 : 0;
  }

  // A tiled scan (scan_tiles). Each block takes tiles by ticket, in order: a tile is RB rows
  // (1 when `outer` is false) by CH elements of each, a thread E consecutive elements of one
  // row (L = B / RB threads a row). A thread scans its elements in registers; the block scans
  // the threads' totals in a fixed order; each row's tile then publishes its aggregate and
  // finds its prefix by looking back over the tiles before it (decoupled look-back). The look-
  // back folds from the nearest predecessor's inclusive prefix forward through the aggregates
  // after it; every inclusive prefix is the same left fold of aggregates, so the bits do not
  // depend on which predecessor was ready: the same results every run.
  KernelSpec emit_scan_tiled(ExprEmitter& e, bool outer) {
    const Red& r = reds[0];
    const std::string T = r.T;
    const std::string id = identity(r);
    int RB = 1, Vw = 1, U = 1;
    int maxsz = itemsize(sp.outputs[0].node->dtype);
    for (const auto& a : accs)
      if (a.row_ctx && a.kind == Acc::Mem) maxsz = std::max(maxsz, itemsize(a.node->dtype));
    if (outer) {
      while (RB < M && RB < 32) RB *= 2;
      U = maxsz >= 8 ? 8 : 16;
    } else {
      // 16-byte vectors along the row where every row access and the output allow them
      const int v = 16 / maxsz;
      bool ok = v > 1 && N % v == 0 && sp.outputs[0].aligned16;
      for (auto k : out_ks[0]) ok &= k % v == 0;
      for (const auto& a : accs)
        if (a.row_ctx && a.kind == Acc::Mem && a.rs[0] == 1) {
          ok &= a.node->k() != NodeKind::Buffer || bind.is_aligned16(a.node);
          for (auto k : a.ks) ok &= k % v == 0;
        }
      if (ok) {
        Vw = v;
        for (auto& a : accs) a.vec = a.row_ctx && a.kind == Acc::Mem && a.rs[0] == 1;
      }
      U = Vw > 1 ? 4 : 16;
    }
    V = Vw;
    const int L = B / RB, E = U * V;
    const int64_t CH = int64_t(L) * E;    // a tile's elements of each row
    const int64_t C = (N + CH - 1) / CH;  // tiles along a row
    const int64_t groups = (M + RB - 1) / RB;
    const int64_t tiles = groups * C;
    // workspace: the ticket, each (tile, row)'s flag (1: aggregate, 2: inclusive prefix), then
    // the aggregates and the inclusive prefixes
    const size_t slots = static_cast<size_t>(tiles) * RB;
    const size_t flags_end = 16 + (slots * 4 + 15) / 16 * 16;
    const size_t vals_bytes = (slots * 8 + 15) / 16 * 16;
    auto ws_ptr = [&](const std::string& type, const std::string& name, DType dt, size_t off) {
      const size_t o = e.pl.add(type + "*", 8, name);
      e.add_patch(o, PatchSrc::Workspace, dt, static_cast<int>(off));
    };
    ws_ptr("unsigned int", "ctr", DType::UInt32, 0);
    ws_ptr("unsigned int", "flg", DType::UInt32, 16);
    ws_ptr(T, "agg", r.in, flags_end);
    ws_ptr(T, "inc", r.in, flags_end + vals_bytes);
    auto comb = [&](const std::string& acc, const std::string& x) { return combine(r, acc, "", x, ""); };
    const std::string vT = "((volatile " + T + "*)";
    // Outer-axis tiles of 4 or more row groups look back by a thread per row, W tiles at a
    // time: a tile's predecessor took its ticket `groups` tickets earlier and is mostly done
    // (f32[65536,256]: 0.17 ms against 0.25 by warps). One long chain (a 1-D scan, or fewer
    // groups) needs the warps' deeper look-back (f32[1M,16] over axis 0: 0.22 ms against 1.04).
    const bool warp_lookback = !outer || groups < 4;

    std::string b;
    b += fmt::format("  using I = {};\n  constexpr int RB = {}, L = {}, U = {}, V = {}, E = U * V, NW = {};\n", e.idx(), RB, L, U,
                     V, B / 32);
    b += "  const I M = p.M, N = p.N;\n  (void)M;\n";
    b += fmt::format("  const I groups = (I){}, tiles = groups * ((N + (I)(L * E) - 1) / (I)(L * E));\n", groups);
    b += fmt::format("  __shared__ unsigned cf_ticket;\n  __shared__ {} cf_pre[RB], cf_ag[RB], cf_lb[NW][256];\n", T);
    b += outer ? fmt::format("  __shared__ {} sht[{}];\n", T, B) : fmt::format("  __shared__ {} shw[NW];\n", T);
    b += outer ? "  const int lane = (int)(threadIdx.x / RB), col = (int)(threadIdx.x % RB);\n"
               : "  const int lane = (int)threadIdx.x, col = 0;\n";
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
    for (size_t j = 0; j < accs.size(); ++j)
      if (is_prefetched(accs[j]))
        b += fmt::format("    {} l{}u[U];\n", accs[j].vec ? fmt::format("cf_vec<{}, V>", storage_type(accs[j].node->dtype))
                                                      : storage_type(accs[j].node->dtype), j);
    b += "#pragma unroll\n    for (int u = 0; u < U; ++u) {\n      const I j = e0 / V + u;\n      if (" + guard + ") {\n";
    for (size_t j = 0; j < accs.size(); ++j) {
      if (!is_prefetched(accs[j])) continue;
      if (accs[j].vec) b += fmt::format("        l{}u[u] = {};\n", j, vector_load(j, "j"));
      else b += fmt::format("        {{ const I r = j; l{}u[u] = p.a{}[b{} + {}]; }}\n", j, j, j, row_offset(accs[j].rs, "a" + std::to_string(j) + "r"));
    }
    b += "      }\n    }\n";
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
    if (outer) {
      b += "    sht[threadIdx.x] = xs[E - 1];\n    __syncthreads();\n";
      b += fmt::format("    {} ex = {}, ag = {};\n", T, id, id);
      b += "    for (int l = 0; l < L; ++l) {\n      const " + T + " y = sht[l * RB + col];\n      if (l < lane) { " +
           comb("ex", "y") + " }\n      " + comb("ag", "y") + "\n    }\n";
    } else {
      b += "    const int wl = lane & 31, warp = lane >> 5;\n";
      b += fmt::format("    {} in = xs[E - 1];\n", T);
      b += fmt::format("    for (int o = 1; o < 32; o <<= 1) {{ const {} y = {}; if (wl >= o) {{ {} t = y; {} in = t; }} }}\n", T,
                       shuffle("__shfl_up_sync", "in", T, "o"), T, comb("t", "in"));
      b += "    if (wl == 31) shw[warp] = in;\n    __syncthreads();\n";
      b += fmt::format("    if (warp == 0) {{\n      {} w = wl < NW ? shw[wl] : {};\n", T, id);
      b += fmt::format("      for (int o = 1; o < 32; o <<= 1) {{ const {} y = {}; if (wl >= o) {{ {} t = y; {} w = t; }} }}\n", T,
                       shuffle("__shfl_up_sync", "w", T, "o"), T, comb("t", "w"));
      b += "      if (wl < NW) shw[wl] = w;\n    }\n    __syncthreads();\n";
      b += fmt::format("    const {} up = {};\n    {} ex = {};\n", T, shuffle("__shfl_up_sync", "in", T, "1"), T, id);
      b += "    if (warp > 0) ex = shw[warp - 1];\n";
      b += "    if (wl > 0) { " + T + " t = ex; " + comb("t", "up") + " ex = t; }\n";
      b += fmt::format("    const {} ag = shw[NW - 1];\n", T);
    }
    if (warp_lookback) {
    // look-back, a warp for each of the tile's rows: publish the aggregate, then read the
    // tiles before it 32 at a time, buffering their aggregates, back to the nearest one with
    // an inclusive prefix, and fold forward from there. (A thread reading 8 at a time advanced
    // the chain of inclusive prefixes 8 tiles a round trip: f32[64M] 4.1 ms.)
    constexpr int LB = 256;  // aggregates a warp buffers; past that it waits for a nearer prefix
    b += "    if (lane == 0 && active) cf_ag[col] = ag;\n    __syncthreads();\n";
    b += "    {\n      const int wl = (int)(threadIdx.x & 31), wp = (int)(threadIdx.x >> 5);\n";
    b += "      for (int q = wp; q < RB; q += NW) {\n        if (g * (I)RB + (I)q >= M) break;\n";
    b += "        const I slot = (c * groups + g) * (I)RB + (I)q, back = groups * (I)RB;\n";
    b += "        const " + T + " a = cf_ag[q];\n";
    b += fmt::format("        {} pre = {};\n", T, id);
    b += "        if (c > 0) {\n";
    b += "          if (wl == 0) { " + vT + "p.agg)[slot] = a; __threadfence(); ((volatile unsigned*)p.flg)[slot] = 1u; }\n";
    b += fmt::format("          I k0 = 0;\n          int n = 0;\n          {} found = {};\n          for (;;) {{\n", T, id);
    b += "            const I kb = k0 + (I)wl + 1;\n            unsigned f = 3u;\n";
    b += "            if (c - kb >= 0) f = ((volatile unsigned*)p.flg)[slot - kb * back];\n            __threadfence();\n";
    b += fmt::format("            {} y = {};\n", T, id);
    b += "            if (f == 2u) y = " + vT + "p.inc)[slot - kb * back];\n";
    b += "            else if (f == 1u) y = " + vT + "p.agg)[slot - kb * back];\n";
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
    b += "        if (wl == 0) {\n          { " + T + " t = pre; " + comb("t", "a") + " " + vT + "p.inc)[slot] = t; }\n";
    b += "          __threadfence();\n          ((volatile unsigned*)p.flg)[slot] = 2u;\n          cf_pre[q] = pre;\n        }\n";
    b += "        __syncwarp();\n      }\n    }\n";
    b += "    __syncthreads();\n";
    } else {
    // look-back by one thread of each row: publish the aggregate, then fold the prefix from
    // the nearest predecessor with an inclusive prefix among the W before it
    constexpr int W = 8;
    b += "    if (lane == 0 && active) {\n";
    b += "      const I slot = (c * groups + g) * (I)RB + (I)col, back = groups * (I)RB;\n";
    b += fmt::format("      {} pre = {};\n", T, id);
    b += "      if (c > 0) {\n";
    b += "        " + vT + "p.agg)[slot] = ag;\n        __threadfence();\n        ((volatile unsigned*)p.flg)[slot] = 1u;\n";
    b += fmt::format("        for (;;) {{\n          unsigned f[{}];\n          {} y[{}];\n", W, T, W);
    b += fmt::format("#pragma unroll\n          for (int i = 0; i < {}; ++i)\n", W);
    b += "            f[i] = c - 1 - i >= 0 ? ((volatile unsigned*)p.flg)[slot - (I)(i + 1) * back] : 3u;\n";
    b += "          __threadfence();\n";
    b += fmt::format("#pragma unroll\n          for (int i = 0; i < {}; ++i) {{\n", W);
    b += "            const I s2 = slot - (I)(i + 1) * back;\n";
    b += "            y[i] = f[i] == 2u ? " + vT + "p.inc)[s2] : f[i] == 1u ? " + vT + "p.agg)[s2] : " + id + ";\n          }\n";
    b += fmt::format("          int d = {};\n          bool ok = true;\n#pragma unroll\n          for (int i = 0; i < {}; ++i) {{\n", W, W);
    b += fmt::format("            if (d == {} && f[i] == 0u) ok = false;\n            if (d == {} && f[i] == 2u) d = i;\n          }}\n", W, W);
    b += fmt::format("          if (ok && d < {}) {{\n", W);
    b += fmt::format("#pragma unroll\n            for (int i = {}; i >= 0; --i) {{\n", W - 1);
    b += "              if (i == d) pre = y[i];\n              if (i < d) { " + T + " t = pre; " + comb("t", "y[i]") + " pre = t; }\n            }\n";
    b += "            break;\n          }\n          __nanosleep(32);\n        }\n      }\n";
    b += "      { " + T + " t = pre; " + comb("t", "ag") + " " + vT + "p.inc)[slot] = t; }\n";
    b += "      __threadfence();\n      ((volatile unsigned*)p.flg)[slot] = 2u;\n      cf_pre[col] = pre;\n    }\n";
    b += "    __syncthreads();\n";
    }
    // the elements: the tile's prefix, then the thread's, then its own running value
    b += "    " + T + " base = cf_pre[col];\n    { " + T + " t = base; " + comb("t", "ex") + " base = t; }\n";
    const bool vst = !outer && V > 1;
    b += "#pragma unroll\n    for (int u = 0; u < U; ++u) {\n      const I j = e0 / V + u;\n";
    b += "      if (" + guard + ") {\n";
    if (vst) b += fmt::format("        cf_vec<{}, V> w;\n", storage_type(r.node->dtype));
    b += "#pragma unroll\n        for (int t = 0; t < V; ++t) {\n          const I r = j * V + t;\n";
    b += "          " + T + " y = base; { " + T + " t2 = y; " + comb("t2", "xs[u * V + t]") + " y = t2; }\n";
    if (vst)
      b += fmt::format("          w.v[t] = {};\n        }}\n        *reinterpret_cast<cf_vec<{}, V>*>(p.o0 + ob0 + j * V) = w;\n",
                       store_expr(r.node->dtype, "y"), storage_type(r.node->dtype));
    else
      b += fmt::format("          if (r < N) p.o0[ob0 + {}] = {};\n        }}\n", row_offset(out_rs[0], "o0r"), store_expr(r.node->dtype, "y"));
    b += "      }\n    }\n";
    b += "    __syncthreads();\n  }\n";
    KernelSpec k = scan_spec(e, b, tiles, outer ? fmt::format("tiles of {} rows x {} elements, {} a thread, look-back", RB, CH, E)
                                                 : fmt::format("tiles of {} elements, {} a thread, look-back", CH, E));
    k.workspace_bytes = flags_end + 2 * vals_bytes;
    k.workspace_zero_bytes = flags_end;
    return k;
  }

  KernelSpec emit_scan_by_thread(ExprEmitter& e) {
    const Red& r = reds[0];
    const std::string T = r.T;
    std::string b;
    b += fmt::format("  using I = {};\n  const I M = p.M, N = p.N;\n", e.idx());
    b += fmt::format("  for (I row = (I)blockIdx.x * {} + (I)threadIdx.x; row < M; row += (I)gridDim.x * {}) {{\n", B, B);
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
    return scan_spec(e, b, (M + B - 1) / B, "a thread per row in order");
  }

  KernelSpec emit() {
    analyse();
    ExprEmitter e(bind, i64);
    size_t ws_bytes = 0, ws_zero = 0;
    std::vector<size_t> ws_part, ws_idx;
    build_params(e, ws_bytes, ws_zero, ws_part, ws_idx);
    const int RB = B / G;
    std::string b;
    b += fmt::format("  using I = {};\n  constexpr int G = {}, RB = {}, V = {}, K = {};\n", e.idx(), G, RB, V, K > 0 ? K : 1);
    b += "  const I M = p.M, N = p.N;\n  (void)N;\n";
    b += xl ? "  const int lane = (int)(threadIdx.x / RB);\n" : "  const int lane = (int)(threadIdx.x % G);\n";
    if (xl)
      for (size_t k = 0; k < reds.size(); ++k) {
        b += fmt::format("  __shared__ {} shx{}[{}];\n", reds[k].T, k, B);
        if (is_arg(reds[k].op)) b += fmt::format("  __shared__ long long shxi{}[{}];\n", k, B);
      }
    if (G > 32 && !xl)
      for (size_t k = 0; k < reds.size(); ++k) {
        b += fmt::format("  __shared__ {} sh{}[{}];\n", reds[k].T == "bool" ? "bool" : reds[k].T, k, B / 32);
        if (is_arg(reds[k].op)) b += fmt::format("  __shared__ long long shi{}[{}];\n", k, B / 32);
      }
    if (split) b += "  __shared__ bool cf_last;\n";
    // Strided lanes meet at barriers, and a part-warp group shuffles with the whole warp:
    // there every thread of a block runs the same row iterations.
    const std::string rib = xl ? "(I)(threadIdx.x % RB)" : "(I)(threadIdx.x / G)";
    const std::string row_loop =
        split ? fmt::format("  {{\n    const I row = (I)blockIdx.x * RB + {};\n    const bool active = row < M;\n", rib)
        : xl || (G > 1 && G < 32)
            ? fmt::format("  for (I row0 = (I)blockIdx.x * RB; row0 < M; row0 += (I)gridDim.x * RB) {{\n"
                          "    const I row = row0 + {};\n    const bool active = row < M;\n", rib)
            : "  for (I row = (I)blockIdx.x * RB + (I)(threadIdx.x / G); row < M; row += (I)gridDim.x * RB) {\n    const bool active = true;\n";
    b += row_loop;
    // kept coordinates and per-accessor bases
    b += row_bases("active ? row : (I)0", sp.outputs.size());
    if (cache) {
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
          if (rshape.ndim() > 1) {
            b += "          I rq = r;\n";
            for (int d = rshape.ndim() - 1; d >= 0; --d) {
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
    for (int ph = 0; ph < phases; ++ph) {
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
    if (split) {
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
        b += fmt::format("#pragma unroll\n        for (int q = 0; q < {}; ++q) {{\n"
                         "          const unsigned s = s0 + q * G;\n          if (s < gridDim.y) {{\n"
                         "            pvs[q] = ((volatile {}*)p.w{})[(size_t)s * M + row];\n",
                         kFinishBatch, reds[k].T, k);
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
      if (V > 1)
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
          if (V > 1) e.line(fmt::format("w{}.v[t] = {};", i, store_expr(o.node->dtype, v)), 8);
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
    k.source = kernel_source(k.name, e.pl.decl(), B, b);
    k.params = e.pl.bytes();
    k.patches = std::move(e.patches);
    k.numel = M;
    const int64_t row_blocks = (M + RB - 1) / RB;
    k.dims.grid[0] = static_cast<unsigned>(split ? row_blocks : std::min<int64_t>(std::max<int64_t>(row_blocks, 1), 1 << 20));
    k.dims.grid[1] = static_cast<unsigned>(S);
    k.dims.block[0] = static_cast<unsigned>(B);
    k.workspace_bytes = ws_bytes;
    k.workspace_zero_bytes = ws_zero;
    const std::string mode = xl ? fmt::format("{} strided lanes", G)
                             : G == 1 ? "a thread" : G < 32 ? fmt::format("{} lanes", G) : (G == 32 ? "a warp" : "a block");
    k.summary = fmt::format("{} row(s) x {} element(s), {} per row{}{}{}, {} phase(s), {}-bit index", M, N, mode,
                            V > 1 ? fmt::format(", {}-wide loads", V) : "", cache ? fmt::format(", row on chip ({} x {} per thread)", K, V) : "",
                            split ? fmt::format(", split over {} blocks per row", S) : "", phases, i64 ? 64 : 32);
    return k;
  }
};

}  // namespace

KernelSpec emit_reduction_kernel(const ReductionSpec& spec, const LeafBinding& bind) {
  RedEmitter e(spec, bind);
  return e.emit();
}

KernelSpec emit_scan_kernel(const NodePtr& scan, const Layout& out_layout, int out_buffer, bool aligned16,
                            const LeafBinding& bind) {
  ReductionSpec spec;
  spec.S = scan->inputs[0]->shape();
  spec.axes = reduce_attrs(*scan).axes;
  spec.reductions = {scan.get()};
  spec.phase = {0};
  // the scan's result has the row shape: an output of kind Row
  spec.outputs.push_back(RedOutput{scan, OutKind::Row, out_layout, out_buffer, aligned16});
  RedEmitter e(spec, bind);
  return e.emit_scan();
}

}  // namespace cufuse::detail
