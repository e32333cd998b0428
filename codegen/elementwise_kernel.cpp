// codegen/elementwise_kernel.cpp: emits one fused elementwise kernel.
//
// The kernel walks the iteration space of its outputs. Its direct accessors (memory it
// reads, generators, View nodes, outputs) each see it through strides; dimensions that are
// contiguous for every accessor are collapsed first. Then:
//   contiguous mode — rank <= 1 and every memory read and output at stride 1 (or a read
//                     at stride 0): each thread handles `unroll` vectors of `V` elements
//                     (16-byte loads and stores when all pointers are 16-byte aligned),
//                     loads first, then compute and store; a tail of < V elements after.
//                     Below kSmallPlain elements without vectors: straight-line code, no
//                     loops (the cheapest form for NVRTC to compile), one element per
//                     thread up to kOnePerThread, else two (predicated loads first).
//   rows mode       — rank >= 2 whose innermost dimension is at stride 1 for every memory
//                     read and output (or 0 for a read: a broadcast along the row), at least
//                     kMinRow long: a 2-D grid, x along the row, y over rows (unravelled once
//                     per row, not per element); 16-byte vectors when every row start is
//                     16-byte aligned and the row length a multiple of the vector width,
//                     else 8- or 4-byte ones where those fit; at least 8 elements a thread
//                     where the row allows (bytes in flight).
//                     Outer products and row/column broadcasts (W6's epilogue) run at the
//                     copy bandwidth this way.
//   tiled mode      — rank >= 2, outputs at stride 1 along the last dimension C and some
//                     memory read at stride 1 along another dimension R instead (a
//                     transpose: x.T + y, a permuted copy): 32 x 32 tiles of (R, C) per
//                     block, each such read loaded along R into shared memory and read back
//                     along C, so that loads and stores are both coalesced (3x the naive
//                     form's speed for an 8192^2 f32 transpose on the H100); the other
//                     dimensions are a batch walked by blockIdx.z.
//   strided mode    — a grid-stride loop over elements, unravelling each index.
// Index arithmetic is 32-bit when every offset fits, else 64-bit. Shapes, strides, scalar
// values and generator parameters are kernel parameters, so one kernel serves all sizes.
#include "codegen/elementwise_kernel.hpp"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/elementwise_parts.hpp"
#include "codegen/preamble.hpp"
#include "codegen/view_coords.hpp"
#include "core/op_table.hpp"
#include "core/walk.hpp"
#include "cufuse/error.hpp"
#include "graph/gather.hpp"
#include "runtime/context.hpp"

namespace cufuse::detail {

int elementwise_unroll() {
  // CUFUSE_EW_UNROLL, 1..8, default 2 (runtime/env.cpp). 2, not 4: on the H100 two 16-byte
  // vectors per thread per operand already keep enough loads in flight for copy speed (W1:
  // 99.4% at 2, 99.0% at 4, 97.5% at 1), while each extra copy of the body costs NVRTC time
  // (W7b's kernel: ~47 ms at 2, ~57 ms at 4 here).
  return settings().ew_unroll;
}

namespace {

constexpr int kBlock = kEwBlock;
constexpr int64_t kMinRow = 32;  // rows mode: shortest innermost extent (else most threads idle)
constexpr int64_t kSmallPlain = int64_t(1) << 22;  // contiguous mode: below this, plain loads (see analyse)
constexpr int64_t kOnePerThread = int64_t(1) << 19;  // plain form: up to this, one element per thread
constexpr int kTile = 32, kTileRows = kBlock / kTile;  // tiled mode: tile edge; rows of threads per block
constexpr int64_t kMinTiled = 16;                     // tiled mode: shortest R and C extents
constexpr size_t kTileSmem = 40 * 1024;               // tiled mode: shared memory for the tiles
// Privatized scatter-adds (histograms, bincount, add_at into a small array): each block adds
// into its own copy of the target in shared memory and merges it into global memory once.
constexpr int64_t kPrivSmem = 48 * 1024;        // largest target copied (bytes)
constexpr int64_t kPrivMinUpdates = 1 << 14;    // fewer updates: global atomics (no merge cost)
constexpr int64_t kPrivBlocks = 1024;           // the grid (each block merges the whole target)

struct Acc {
  enum Kind { Mem, Gen, View, Out } kind;
  const Node* node = nullptr;
  Strides st;          // over the iteration dims (uncollapsed, then collapsed)
  int64_t off = 0;     // Gen, View: layout offset
  int out = -1;        // Out: output index
  bool aligned = true; // Mem, Out
  const Node* mem = nullptr;  // Mem: the node whose memory is read, where not `node` (a strided View's input)
};

struct EwEmitter {
  const Shape& S;
  const std::vector<EwOutput>& outs;
  const LeafBinding& bind;

  std::vector<Acc> accs;
  std::unordered_map<const Node*, int> acc_of;
  std::vector<const Node*> scalars;
  std::unordered_map<const Node*, int> scalar_of;

  Shape cs;
  std::vector<int> dim_group;   // per dim of S: its collapsed dim (-1 for a size-1 dim)
  std::vector<int> group_dims;  // per collapsed dim: how many dims of S it holds
  bool contiguous = false, rows = false, vectorize = false, plain = false, i64 = false;
  bool tiled = false;
  bool flat = false;  // flat mode (see the file comment)
  int priv = -1;         // the privatized scatter-add output (see kPrivSmem), or -1
  int64_t priv_n = 0;    // its element count
  // An integer scatter-add of one value (a kernel parameter: bincount's and histogram's 1)
  // counts updates in 32-bit counters and merges count * value: exact modulo 2^bits.
  bool priv_count = false;
  int tR = -1;                     // tiled mode: the dimension some reads run along at stride 1
  std::vector<bool> through_tile;  // tiled mode: per accessor, read through shared memory
  int64_t nbatch = 1;              // tiled mode: elements of the dimensions other than R and C
  int V = 1, U = 1;
  bool defer_stores = false;  // vector modes: all of a thread's elements before its stores (vector_loops)
  int min_blocks = 0;         // __launch_bounds__'s blocks an SM (0: the compiler's choice)
  int row_vec_bytes = 16;  // rows mode: the widest vector every row start and length allow
  int BX = kBlock;  // rows mode: threads along a row (a power of two); kBlock / BX rows per block
  bool in_vector_body = false;
  // The names the body reads its block and thread coordinates by: CUDA's, or, in a piece of a
  // block-partitioned kernel (codegen/elementwise_parts.hpp), its function's arguments (a range
  // of the kernel's 1-D grid of 1-D blocks, unravelled to this piece's grid and blocks).
  struct Ids {
    std::string tx = "threadIdx.x", ty = "threadIdx.y", bx = "blockIdx.x", by = "blockIdx.y", gx = "gridDim.x",
                gy = "gridDim.y";
  } id;
  bool piece = false;  // emitted as such a piece: each output at p.o<j> + p.o<j>_sh
  std::string idx = "i";    // the element index in the element code (plain pairs: i0, i1)
  std::string guard;        // plain pairs: loads are `guard ? load : 0`
  std::unordered_map<const Node*, std::string> vals;

  EwEmitter(const Shape& s, const std::vector<EwOutput>& o, const LeafBinding& b) : S(s), outs(o), bind(b) {}

  // Gathers computed here (graph/gather.hpp), each with its parameter prefix.
  std::unordered_map<const Node*, int> gather_of;
  // Scatter outputs (graph/gather.hpp): the output index of each; the kernel then walks the
  // updates in strided mode and stores through their indices.
  std::vector<int> scatters;

  // The inputs of n the element code computes n from (none where n is read or generated).
  InputRange inputs_of(const Node* n) const {
    if (reads_memory(n, bind)) return {};
    if (is_gather(*n)) return InputRange{1, 1 + static_cast<uint32_t>(gather_rank(*n))};
    if (n->k() == NodeKind::Elementwise) return InputRange{0, static_cast<uint32_t>(n->inputs.size())};
    return {};
  }
  // Sorts what the element code reads into accessors and scalars, in first-read order.
  void collect(const Node* root) {
    walk_post_order(
        root, [&](const Node* n) { return acc_of.count(n) || scalar_of.count(n); },
        [&](const Node* n) { return inputs_of(n); },
        [&](const Node* n) { classify(n); });
  }
  void classify(const Node* n) {
    if (reads_memory(n, bind)) {
      acc_of[n] = static_cast<int>(accs.size());
      accs.push_back(Acc{Acc::Mem, n, memory_layout(n, bind).strides, 0, -1,
                         n->k() == NodeKind::Buffer ? bind.is_aligned16(n) : true});
      return;
    }
    if (is_gather(*n)) {
      acc_of[n] = -1;  // computed from its index values (walked before it)
      gather_of.emplace(n, static_cast<int>(gather_of.size()));
      return;
    }
    if (Strides st; strided_memory_view(n, bind, st)) {
      const Node* x = n->inputs[0].get();
      acc_of[n] = static_cast<int>(accs.size());
      accs.push_back(Acc{Acc::Mem, n, st, 0, -1, x->k() == NodeKind::Buffer ? bind.is_aligned16(x) : true, x});
      return;
    }
    switch (n->k()) {
      case NodeKind::Generator:
      case NodeKind::View:
        acc_of[n] = static_cast<int>(accs.size());
        accs.push_back(Acc{n->k() == NodeKind::View ? Acc::View : Acc::Gen, n, n->layout.strides, n->layout.offset, -1, true});
        break;
      case NodeKind::Scalar:
        scalar_of[n] = static_cast<int>(scalars.size());
        scalars.push_back(n);
        break;
      case NodeKind::Elementwise:
        acc_of[n] = -1;  // computed from its inputs (walked before it)
        break;
      default:
        throw InternalError(fmt::format("elementwise codegen met an unmaterialized {} node", kind_name(n->k())));
    }
  }

  void analyse() {
    for (size_t i = 0; i < outs.size(); ++i) {
      const Node* o = outs[i].node.get();
      if (!is_scatter(*o)) {
        collect(o);
        continue;
      }
      scatters.push_back(static_cast<int>(i));  // its value, index and predicate nodes
      const int last = 2 + scatter_rank(*o) + (scatter_attrs(*o).has_pred ? 1 : 0);
      for (int k = 1; k < last; ++k) collect(o->inputs[k].get());
    }
    choose_privatized();
    for (size_t i = 0; i < outs.size(); ++i)
      if (!is_scatter(*outs[i].node))
        accs.push_back(Acc{Acc::Out, outs[i].node.get(), outs[i].layout.strides, 0, static_cast<int>(i), outs[i].aligned16});
    std::vector<int> dims;
    for (int d = 0; d < S.ndim(); ++d)
      if (S[d] != 1) dims.push_back(d);
    std::vector<Strides> cst(accs.size());
    dim_group.assign(static_cast<size_t>(S.ndim()), -1);
    // Dims a mapped view's map moves stay dims of their own (codegen/view_coords.hpp).
    std::vector<bool> apart(static_cast<size_t>(S.ndim()), false);
    for (const auto& a : accs)
      if (a.kind == Acc::View && a.node->shape() == S) {
        const std::vector<bool> moved = mapped_axes(a.node);
        for (size_t d = 0; d < moved.size(); ++d) apart[d] = apart[d] || moved[d];
      }
    int prev = -1;
    for (int d : dims) {
      bool merge = !cs.empty() && !apart[d] && !apart[prev];
      prev = d;
      for (size_t a = 0; merge && a < accs.size(); ++a) merge = cst[a].back() == accs[a].st[d] * S[d];
      if (merge) {
        group_dims.back()++;
        dim_group[d] = cs.ndim() - 1;
        cs.back() *= S[d];
        for (size_t a = 0; a < accs.size(); ++a) cst[a].back() = accs[a].st[d];
      } else {
        cs.push_back(S[d]);
        group_dims.push_back(1);
        dim_group[d] = cs.ndim() - 1;
        for (size_t a = 0; a < accs.size(); ++a) cst[a].push_back(accs[a].st[d]);
      }
    }
    for (size_t a = 0; a < accs.size(); ++a) accs[a].st = cst[a];
    contiguous = cs.ndim() <= 1;
    for (const auto& a : accs) {
      if (!contiguous) break;
      if (cs.ndim() == 1 && (a.kind == Acc::Mem || a.kind == Acc::Out))
        contiguous = a.st[0] == 1 || (a.st[0] == 0 && a.kind == Acc::Mem);
    }
    const int nd = cs.ndim();
    rows = !contiguous && nd >= 2 && cs[nd - 1] >= kMinRow;
    for (const auto& a : accs) {
      if (!rows) break;
      if (a.kind == Acc::Mem || a.kind == Acc::Out)
        rows = a.st[nd - 1] == 1 || (a.st[nd - 1] == 0 && a.kind == Acc::Mem);
    }
    vectorize = (contiguous && nd == 1) || rows;
    int maxsz = 1, minsz = 8;
    for (const auto& a : accs) {
      if (a.kind != Acc::Mem && a.kind != Acc::Out) continue;
      if (a.kind == Acc::Mem && a.st[nd - 1 < 0 ? 0 : nd - 1] == 0) continue;
      if (!a.aligned) vectorize = false;
      maxsz = std::max(maxsz, itemsize(a.node->dtype));
      minsz = std::min(minsz, itemsize(a.node->dtype));
    }
    // Small contiguous kernels of 4- and 8-byte elements run on plain loads with no tail: on
    // the H100 (standalone probe of W7b's kernel, f32) 2 plain elements per thread were as fast
    // as 2 x 4 vectors up to 2^22 elements (1M: 3.57 vs 3.43 us, 2M: 5.01 vs 5.35, 4M: 18.5 vs
    // 18.1) and NVRTC compiled them in 2/3 of the time (W12: ~30 vs ~41 ms there), as the
    // vector form unrolls the body 2 x 4 times plus a tail. Larger ones keep the vectors (W1).
    // Below that size a kernel without vectors (`plain`) is straight-line code with no loop:
    // NVVM's loop passes and the per-lane arrays of the unrolled form cost NVRTC ~3 ms for
    // W12's kernel (27.0 vs 23.8 ms here with one element per thread, 25-26 with two). One
    // element per thread is as fast up to 2^19 elements; above, the H200 ran it 30% slower
    // (1M: 4.45 vs 3.34 us, 2M: 7.04 vs 4.62) and two per thread, loads first, as fast as the
    // unrolled loop (3.34, 4.62).
    if (contiguous && nd == 1 && minsz >= 4 && numel(S) < kSmallPlain) vectorize = false;
    if (!scatters.empty()) {  // stores through indices: strided mode (a privatized one may stay contiguous)
      rows = false;
      if (priv < 0 || !contiguous || cs.ndim() != 1) contiguous = vectorize = false;
    }
    if (!contiguous && !rows && scatters.empty()) choose_tiles();
    plain = priv < 0 && contiguous && !vectorize && numel(S) < kSmallPlain;
    row_vec_bytes = 16;
    const bool all_aligned = vectorize;
    if (rows && vectorize) {  // every row start aligned too, and whole vectors per row
      auto fits = [&](int bytes) {
        if (bytes < maxsz || cs[nd - 1] % (bytes / maxsz) != 0) return false;
        for (const auto& a : accs) {
          if ((a.kind != Acc::Mem && a.kind != Acc::Out) || a.st[nd - 1] == 0) continue;
          for (int d = 0; d + 1 < nd; ++d)
            if ((a.st[d] * itemsize(a.node->dtype)) % bytes != 0) return false;
        }
        return true;
      };
      // 8-byte vectors where 16 do not fit (M3's pad of f32[8192, 8192]: rows of 8194 floats
      // start 8-byte aligned): half the store instructions of scalar ones.
      while (row_vec_bytes > maxsz && !fits(row_vec_bytes)) row_vec_bytes /= 2;
      if (row_vec_bytes == maxsz) vectorize = false;
    }
    if (rows && row_vec_bytes < 16 && all_aligned && maxsz <= 8 && flat_fits()) {
      flat = true;
      rows = false;
      vectorize = true;
    }
    if (rows) {
      // The row in vectors of V, U per thread: the largest U (<= 4) that leaves few idle threads.
      V = vectorize ? row_vec_bytes / maxsz : 1;
      const int64_t nvec = cs[nd - 1] / V;
      BX = 32;
      while (BX < kBlock && BX < nvec) BX *= 2;
      U = 1;
      for (int u : {4, 2}) {
        const int64_t per = int64_t(BX) * u;
        if ((nvec + per - 1) / per * per - nvec <= nvec / 16) {
          U = u;
          break;
        }
      }
      // Fewer than 8 elements a thread keep too few bytes in flight for the copy rate (M3, a
      // pad of f32[8192, 8192] at 2 scalar elements a thread: 17 blocks of 512 elements a row,
      // ~2 TB/s on the H200): then up to 8 elements a thread, accepting up to a quarter of the
      // last block's threads idle (they exit at once; the others' loads are what counts).
      if (V * U < 8)
        for (int u = 8 / V; u > U; u /= 2) {
          const int64_t per = int64_t(BX) * u;
          if ((nvec + per - 1) / per * per - nvec <= nvec / 4) {
            U = u;
            break;
          }
        }
    } else if (vectorize) {
      V = 16 / maxsz;
      U = std::max(1, std::min(elementwise_unroll(), 16 / V));
    } else if (plain) {
      V = 1;
      U = numel(S) <= kOnePerThread ? 1 : 2;
    } else {
      V = 1;
      U = contiguous ? elementwise_unroll() : 1;
    }
    // Deferred stores where the element code loads (a mapped view, a gather) and a thread has at
    // most 8 elements: H200, M3's pad (8 a thread) 0.222 -> 0.151 ms. With more, the values held
    // until the stores cost more than the loads gain (M1's concatenation, 16 a thread: 0.087 ->
    // 0.115 ms; 8 a thread: 0.092), so those keep a store per vector.
    bool view_loads = !gather_of.empty();
    for (const auto& a : accs) view_loads = view_loads || a.kind == Acc::View;
    if ((vectorize || rows) && U * V <= 8) defer_stores = view_loads;
    // More elements than that load through views a vector at a time, each vector's loads waited
    // for before its store: the bytes in flight are the threads' count, so such a kernel asks
    // for 6 blocks of 256 an SM (40 registers; CUFUSE_EW_VIEW_BLOCKS) where the compiler took 63
    // and 4 (M1's concatenation: its reads of both parts' addresses and exp's reduction; H200:
    // 0.087 -> 0.077 ms, M2's stack 0.070 -> 0.072).
    if ((vectorize || rows) && !defer_stores && view_loads) min_blocks = settings().ew_view_blocks;
    int64_t max_span = numel(S);
    for (const auto& a : accs) {
      max_span = std::max(max_span, span_of(cs, a.st, a.off));
      if (a.kind == Acc::View) max_span = std::max(max_span, chain_span(a.node));
    }
    for (const auto& [g, k] : gather_of) {  // a gather's source, read anywhere in its extent
      const Node* x = g->inputs[0].get();
      const Layout l = reads_memory(x, bind) ? memory_layout(x, bind) : x->layout;
      max_span = std::max({max_span, numel(x->shape()), span_of(l.shape, l.strides, l.offset)});
      if (x->k() == NodeKind::View) max_span = std::max(max_span, chain_span(x));
    }
    for (int k : scatters) max_span = std::max(max_span, span_of(outs[k].layout.shape, outs[k].layout.strides));
    i64 = max_span >= (int64_t(1) << 31) - int64_t(kBlock) * U * V * 2;  // (span_of saturates at INT64_MAX)
  }

  // Flat mode: rows whose dims stay apart only for mapped views' sake (every memory read and
  // output row-major over the whole iteration) but whose rows do not take 16-byte vectors (M3's
  // pad: rows of 8194 floats). The whole space then runs as one contiguous vector loop, each
  // vector's coordinates unravelled once from its flat index.
  bool flat_fits() const {
    const int nd = cs.ndim();
    for (const auto& a : accs) {
      if (a.kind != Acc::Mem && a.kind != Acc::Out) continue;
      int64_t want = 1;
      for (int d = nd - 1; d >= 0; --d) {
        if (a.st[d] != want) return false;
        want *= cs[d];
      }
    }
    return true;
  }

  // A lone scatter-add of 32/64-bit ints or floats into a dense target of at most kPrivSmem
  // bytes, with many more updates than target elements, counts per block in shared memory.
  void choose_privatized() {
    if (scatters.size() != 1 || outs.size() != 1) return;
    const EwOutput& o = outs[scatters[0]];
    const DType t = o.node->dtype;
    const int64_t nb = numel(o.layout.shape);
    const bool type_ok = t == DType::Int32 || t == DType::UInt32 || t == DType::Int64 || t == DType::UInt64 ||
                         t == DType::Float32 || t == DType::Float64;
    if (scatter_attrs(*o.node).mode != ScatterMode::Add || !type_ok || nb < 1) return;
    if (!(o.layout.strides == contiguous_strides(o.layout.shape))) return;
    const Node* v = o.node->inputs[1].get();
    const bool count = is_integer(t) && v->k() == NodeKind::Scalar && numel(S) < (int64_t(1) << 32);
    if (nb * (count ? 4 : itemsize(t)) > kPrivSmem || numel(S) < kPrivMinUpdates || numel(S) < 8 * nb) return;
    priv = scatters[0];
    priv_n = nb;
    priv_count = count;
  }
  // The privatized target: zeroed before the updates; merged (its nonzero elements added
  // atomically into global memory) after them.
  std::string priv_head() const {
    const std::string ST = priv_count ? "unsigned int" : storage_type(outs[priv].node->dtype);
    return fmt::format("  __shared__ {0} cf_priv[{1}];\n  for (int j = threadIdx.x; j < {1}; j += blockDim.x) cf_priv[j] = 0;\n"
                       "  __syncthreads();\n", ST, priv_n);
  }
  std::string priv_tail() const {
    const DType t = outs[priv].node->dtype;
    const std::string K = std::to_string(priv);
    std::string nz = "v_ != 0", add;
    if (priv_count) {  // count * value, in the target's width
      const std::string W = itemsize(t) == 4 ? "unsigned int" : "unsigned long long";
      const std::string val = "p.s" + std::to_string(scalar_of.at(outs[priv].node->inputs[1].get()));
      return fmt::format("  __syncthreads();\n  for (int j = threadIdx.x; j < {0}; j += blockDim.x) {{\n"
                         "    const unsigned int v_ = cf_priv[j];\n"
                         "    if (v_ != 0u) atomicAdd(({1}*)(p.t{2} + j), ({1})v_ * ({1})({3}));\n  }}\n",
                         priv_n, W, K, val);
    }
    if (t == DType::Float32) nz = "__float_as_uint(v_) != 0u";  // +0.0 untouched; -0.0 and NaN added
    if (t == DType::Float64) nz = "__double_as_longlong(v_) != 0ll";
    if (t == DType::Float32 || t == DType::Float64) add = fmt::format("atomicAdd(p.t{} + j, v_)", K);
    else if (itemsize(t) == 4) add = fmt::format("atomicAdd((unsigned int*)(p.t{} + j), (unsigned int)v_)", K);
    else add = fmt::format("atomicAdd((unsigned long long*)(p.t{} + j), (unsigned long long)v_)", K);
    return fmt::format("  __syncthreads();\n  for (int j = threadIdx.x; j < {}; j += blockDim.x) {{\n"
                       "    const {} v_ = cf_priv[j];\n    if ({}) {};\n  }}\n",
                       priv_n, storage_type(t), nz, add);
  }

  // Tiled mode: outputs along C = the last dimension at stride 1, and memory reads at
  // stride 1 along one other dimension R (and not along C) to stage through shared memory.
  void choose_tiles() {
    const int nd = cs.ndim(), C = nd - 1;
    if (nd < 2 || cs[C] < kMinTiled) return;
    for (const auto& a : accs)
      if (a.kind == Acc::Out && a.st[C] != 1) return;
    auto transposed = [&](const Acc& a, int d) {
      return a.kind == Acc::Mem && a.st[d] == 1 && a.st[C] != 0 && a.st[C] != 1;
    };
    for (const auto& a : accs)
      for (int d = 0; d < C && tR < 0; ++d)
        if (transposed(a, d) && cs[d] >= kMinTiled && (cs[d] + kTile - 1) / kTile <= 65535) tR = d;
    if (tR < 0) return;
    through_tile.assign(accs.size(), false);
    size_t smem = 0;
    for (size_t j = 0; j < accs.size(); ++j) {
      const size_t bytes = size_t(kTile) * (kTile + 1) * compute_size(accs[j].node->dtype);
      if (transposed(accs[j], tR) && smem + bytes <= kTileSmem) {
        through_tile[j] = true;
        smem += bytes;
      }
    }
    tiled = true;
    nbatch = numel(cs) / (cs[tR] * cs[C]);
  }

  void build_params(ExprEmitter& e) {
    e.pl.add("long long", 8, "n");
    e.pl.set<long long>(0, numel(S));
    if (!contiguous) e.add_idx_array("shape", cs);
    if (rows) {
      const size_t off = e.pl.add("long long", 8, "nrows");
      e.pl.set<long long>(off, numel(S) / cs[cs.ndim() - 1]);
    }
    if (tiled) {
      const size_t off = e.pl.add("long long", 8, "nbatch");
      e.pl.set<long long>(off, nbatch);
    }
    for (size_t j = 0; j < accs.size(); ++j) {
      const Acc& a = accs[j];
      const std::string J = std::to_string(j);
      switch (a.kind) {
        case Acc::Mem:
          e.add_memory_ptr("a" + J, a.mem ? a.mem : a.node, true);
          if (!contiguous) e.add_idx_array("a" + J + "s", a.st);
          break;
        case Acc::Gen:
        case Acc::View: {
          const std::string pfx = (a.kind == Acc::Gen ? "g" : "v") + J;
          e.add_idx(pfx + "_off", a.off);
          e.add_idx_array(pfx + "_s", a.st);
          break;
        }
        case Acc::Out: {
          size_t off = e.pl.add(fmt::format("{}*", storage_type(a.node->dtype)), 8, "o" + J);
          e.add_patch(off, PatchSrc::BufferPtr, a.node->dtype, outs[a.out].buffer);
          if (piece) e.pl.set<long long>(e.pl.add("long long", 8, "o" + J + "_sh"), outs[a.out].shift);
          if (!contiguous) e.add_idx_array("o" + J + "s", a.st);
          break;
        }
      }
    }
    for (size_t k = 0; k < scalars.size(); ++k) e.add_scalar("s" + std::to_string(k), scalars[k]);
    for (int k : scatters) {
      const Node* o = outs[k].node.get();
      const std::string K = std::to_string(k);
      size_t off = e.pl.add(fmt::format("{}*", storage_type(o->dtype)), 8, "t" + K);
      e.add_patch(off, PatchSrc::BufferPtr, o->dtype, outs[k].buffer);
      e.add_idx_array("t" + K + "s", outs[k].layout.strides);
    }
  }

  // Rows mode: accessor j's offset at the start of the current row (declared per row).
  std::string row_base(int j) const { return "r" + std::to_string(j); }
  // Output accessor J's pointer (a piece's starts p.o<J>_sh elements past the buffer's).
  std::string out_ptr(const std::string& J) const { return piece ? fmt::format("(p.o{0} + p.o{0}_sh)", J) : "p.o" + J; }
  // Accessor j's (a memory read's or an output's) offset at element i of the iteration.
  std::string direct_offset(int j) const {
    const Acc& a = accs[j];
    const std::string sn = (a.kind == Acc::Out ? "o" : "a") + std::to_string(j) + "s";
    if (rows) return a.st[cs.ndim() - 1] == 0 ? row_base(j) : row_base(j) + " + i";  // inner stride 0 or 1
    if (flat) return idx;  // row-major over the whole iteration
    if (contiguous) {
      if (cs.ndim() == 0) return "0";
      return a.st[0] == 0 ? "0" : (a.st[0] == 1 ? idx : fmt::format("{} * p.{}[0]", idx, sn));
    }
    std::string s;
    for (int d = 0; d < cs.ndim(); ++d) s += fmt::format("{}c{} * p.{}[{}]", d ? " + " : "", d, sn, d);
    return s.empty() ? "0" : s;
  }
  std::string direct_pos(const std::string& pfx) const {
    std::string s = fmt::format("(long long)p.{}_off", pfx);
    if (contiguous) {
      if (cs.ndim() == 1) s += fmt::format(" + (long long){} * p.{}_s[0]", idx, pfx);
      return s;
    }
    for (int d = 0; d < cs.ndim(); ++d) s += fmt::format(" + (long long)c{} * p.{}_s[{}]", d, pfx, d);
    return s;
  }

  // An identity View's coordinates (those of its input: a mapped view's, graph/index_map.hpp)
  // straight from the iteration's, where no collapsed dim merged several of its dims: no
  // unravelling of a position the kernel has just made from them.
  // A collapsed dim that merged several dims gives its coordinate to the last of them and 0
  // to the others, where the chain allows it (codegen/view_coords.hpp).
  bool view_coords(const Node* n, std::vector<std::string>& co) const {
    if (!ExprEmitter::identity_view(n) || n->shape() != S || tiled) return false;
    if (contiguous && cs.ndim() > 1) return false;
    std::vector<std::vector<int>> members(static_cast<size_t>(cs.ndim()));
    for (int d = 0; d < S.ndim(); ++d)
      if (dim_group[d] >= 0) members[static_cast<size_t>(dim_group[d])].push_back(d);
    bool merged = false;
    for (const auto& g : members) merged = merged || g.size() > 1;
    if (merged && !merged_coords_ok(n, members, bind)) return false;
    for (int d = 0; d < S.ndim(); ++d) {
      const int g = dim_group[d];
      if (S[d] == 1 || g < 0) {
        co.push_back("0");
        continue;
      }
      if (members[static_cast<size_t>(g)].back() != d) co.push_back("0");
      else co.push_back(contiguous ? idx : "c" + std::to_string(g));
    }
    return true;
  }

  // Node n's value in the element code: the lines computing it (and what it reads that has
  // no value yet) are emitted first, inputs before their users.
  std::string value(ExprEmitter& e, const Node* n) {
    walk_post_order(
        n, [&](const Node* x) { return vals.count(x) != 0; },
        [&](const Node* x) { return computed(x) ? (branch_select(x) ? InputRange{0, 1} : inputs_of(x)) : InputRange{}; },
        [&](const Node* x) { vals[x] = branch_select(x) ? branch_value(e, x) : value_of(e, x); });
    return vals.at(n);
  }
  // `where(coordinate < end, a, b)`, a concatenation's choice of part (graph/manipulation.cpp):
  // an if/else that computes only the chosen side, instead of a select after both. The
  // condition is a comparison of a coordinate iota with a kernel parameter, so it changes
  // only at a part's boundary (for a join along a row axis, once per row; along the row, in
  // one warp per boundary): the branch costs no divergence, and each element reads and
  // computes its own part only (M1/M2 computed and read every part at every element).
  static bool branch_select(const Node* n) { return is_part_select(n); }
  // Values computed inside a branch are scoped to it: forgotten after, computed again if
  // something outside needs them.
  std::string branch_value(ExprEmitter& e, const Node* n) {
    const std::string v = e.fresh(), R = reg_type(n->dtype);
    e.line(fmt::format("{} {};", R, v));
    for (int side : {1, 2}) {
      e.line(side == 1 ? fmt::format("if ({}) {{", vals.at(n->inputs[0].get())) : std::string("} else {"));
      const auto known = vals;
      e.line(fmt::format("{} = {};", v, value(e, n->inputs[side].get())));
      for (auto it = vals.begin(); it != vals.end();) it = known.count(it->first) ? std::next(it) : vals.erase(it);
    }
    e.line("}");
    return v;
  }
  // An op node whose value comes from its inputs' values (value_of's last case).
  bool computed(const Node* n) const {
    auto ai = acc_of.find(n);
    const int j = ai == acc_of.end() ? -1 : ai->second;
    if (j >= 0 && accs[j].kind == Acc::Mem) return false;
    if (is_gather(*n)) return true;
    const NodeKind k = n->k();
    return k != NodeKind::Scalar && k != NodeKind::Generator && k != NodeKind::View;
  }
  // One node's value, its inputs' values known.
  std::string value_of(ExprEmitter& e, const Node* n) {
    std::string v;
    auto ai = acc_of.find(n);
    const int j = ai == acc_of.end() ? -1 : ai->second;
    if (j >= 0 && accs[j].kind == Acc::Mem) {
      const std::string J = std::to_string(j);
      v = e.fresh();
      std::string src;
      if (in_vector_body && (rows || flat || cs.ndim() == 1) && accs[j].st[cs.ndim() - 1] != 0) src = fmt::format("l{}[u].v[k]", J);
      else src = fmt::format("p.a{}[{}]", J, direct_offset(j));
      const std::string R = reg_type(n->dtype);
      if (tiled && through_tile[j])  // staged, already in the register type
        e.line(fmt::format("const {} {} = t{}[threadIdx.x][threadIdx.y + k];", R, v, J));
      else if (tiled)  // loaded before the barrier
        e.line(fmt::format("const {} {} = d{}[k / {}];", R, v, J, kTileRows));
      else if (guard.empty()) e.line(fmt::format("const {} {} = {};", R, v, load_expr(n->dtype, src)));
      else e.line(fmt::format("const {} {} = {} ? {} : static_cast<{}>(0);", R, v, guard, load_expr(n->dtype, src), R));
    } else if (n->k() == NodeKind::Scalar) {
      v = "p.s" + std::to_string(scalar_of.at(n));
    } else if (n->k() == NodeKind::Generator) {
      const std::string pfx = "g" + std::to_string(j);
      v = e.gen_value(n, pfx, direct_pos(pfx));
    } else if (is_gather(*n)) {
      std::vector<std::string> ev;
      for (int d = 0; d < gather_rank(*n); ++d) ev.push_back(vals.at(n->inputs[1 + d].get()));
      e.index_guard = guard;
      v = e.gather_value(n, "x" + std::to_string(gather_of.at(n)), ev);
      e.index_guard.clear();
    } else if (n->k() == NodeKind::View) {
      const std::string pfx = "v" + std::to_string(j);
      std::vector<std::string> co;
      v = view_coords(n, co) ? e.chain_value(n, pfx, "", 0, &co) : e.chain_value(n, pfx, direct_pos(pfx));
    } else {
      std::vector<std::string> in(n->inputs.size());  // user ops take any number of inputs
      for (size_t k = 0; k < n->inputs.size(); ++k) in[k] = vals.at(n->inputs[k].get());
      v = e.op_value(n, in.data());
    }
    return v;
  }

  // The element code of every output. Stores go to the lanes of the output vectors, or to
  // memory; with `deferred`, they are appended there instead (plain pairs store last).
  // Every output's value is computed before the first store to memory: an output may be
  // written into an array that another output of the same kernel reads at the same element
  // (lazy in-place writes: `m *= b1; w -= lr * m` is one kernel writing m and w in place).
  void emit_element(ExprEmitter& e, bool vector_body, std::string* deferred = nullptr) {
    in_vector_body = vector_body;
    vals.clear();
    std::vector<std::string> stores;
    for (size_t j = 0; j < accs.size(); ++j) {
      const Acc& a = accs[j];
      if (a.kind != Acc::Out) continue;
      const std::string J = std::to_string(j);
      std::string v = value(e, a.node);
      const std::string store = fmt::format("{}[{}] = {};", out_ptr(J), direct_offset(static_cast<int>(j)), store_expr(a.node->dtype, v));
      if (vector_body) e.line(fmt::format("o{}{}.v[k] = {};", J, defer_stores ? "[u]" : "", store_expr(a.node->dtype, v)));
      else if (deferred) *deferred += fmt::format("  if ({}) {}\n", guard, store);
      else stores.push_back(store);
    }
    for (int k : scatters) scatter_store(e, k);
    for (const auto& s : stores) e.line(s);
  }

  // A scatter output's store (graph/gather.hpp): where the predicate holds and every index is
  // in range, the value goes to (or is combined atomically into) the indexed element.
  void scatter_store(ExprEmitter& e, int k) {
    const Node* o = outs[k].node.get();
    const ScatterAttrs& at = scatter_attrs(*o);
    const int r = scatter_rank(*o);
    const std::string K = std::to_string(k), v = value(e, o->inputs[1].get());
    std::vector<std::string> ev;
    for (int d = 0; d < r; ++d) ev.push_back(value(e, o->inputs[2 + d].get()));
    std::string pred = at.has_pred ? value(e, scatter_pred(*o)) : std::string();
    if (!pred.empty()) e.line(fmt::format("if ({}) {{", pred));
    const std::string ok = e.checked_indices("t" + K, ev, at.size, at.axis, scatter_err(*o));
    std::string off;
    for (int d = 0; d < r; ++d) off += fmt::format("{}{}_i{} * (long long)p.t{}s[{}]", d ? " + " : "", ok, d, K, d);
    if (off.empty()) off = "0";
    const DType t = o->dtype;
    const std::string ST = storage_type(t), R = reg_type(t);
    e.line(fmt::format("if ({}) {{", ok));
    if (k == priv && priv_count) {
      e.line(fmt::format("  atomicAdd(cf_priv + ({}), 1u);", off));
      e.line("}");
      if (!pred.empty()) e.line("}");
      return;
    }
    if (k == priv) e.line(fmt::format("  {}* const a_ = cf_priv + ({});", ST, off));
    else e.line(fmt::format("  {}* const a_ = p.t{} + ({});", ST, K, off));
    if (at.mode == ScatterMode::Assign) {
      e.line(fmt::format("  *a_ = {};", store_expr(t, v)));
    } else if (at.mode == ScatterMode::Add && (t == DType::Float32 || t == DType::Float64)) {
      e.line(fmt::format("  atomicAdd(a_, {});", v));
    } else if (at.mode == ScatterMode::Add && (t == DType::Int32 || t == DType::UInt32)) {
      e.line(fmt::format("  atomicAdd((unsigned int*)a_, (unsigned int)({}));", v));
    } else if (at.mode == ScatterMode::Add && (t == DType::Int64 || t == DType::UInt64)) {
      e.line(fmt::format("  atomicAdd((unsigned long long*)a_, (unsigned long long)({}));", v));
    } else {  // a compare-and-swap loop on the aligned word holding the element
      std::string combine;
      if (t == DType::Bool) combine = at.mode == ScatterMode::Min ? "(c_ && {v})" : "(c_ || {v})";
      else if (at.mode == ScatterMode::Add) combine = "static_cast<{R}>(c_ + {v})";
      else if (at.mode == ScatterMode::Max) combine = "cf_maximum<{R}>(c_, {v})";
      else combine = "cf_minimum<{R}>(c_, {v})";
      combine = fmt::format(fmt::runtime(combine), fmt::arg("R", R), fmt::arg("v", v));
      const int sz = itemsize(t);
      const std::string W = sz == 8 ? "unsigned long long" : "unsigned int";
      e.line(fmt::format("  {0}* const w_ = ({0}*)((unsigned long long)a_ & ~{1}ull);", W, sz == 8 ? 7 : 3));
      e.line(fmt::format("  const int sh_ = {};", sz >= 4 ? "0" : "(int)(((unsigned long long)a_ & 3ull) * 8)"));
      e.line(fmt::format("  const {} m_ = {};", W, sz >= 4 ? fmt::format("~({})0", W) : fmt::format("{}u", (1u << (8 * sz)) - 1)));
      e.line(fmt::format("  {} old_ = *w_, as_;", W));
      e.line("  do {");
      e.line("    as_ = old_;");
      e.line(fmt::format("    {0} cb_; {1} b_ = (as_ >> sh_) & m_; memcpy(&cb_, &b_, {2});", ST, W, sz));
      e.line(fmt::format("    const {} c_ = {};", R, load_expr(t, "cb_")));
      e.line(fmt::format("    const {} n_ = {};", R, combine));
      e.line(fmt::format("    const {0} nb_ = {1}; {2} nw_ = 0; memcpy(&nw_, &nb_, {3});", ST, store_expr(t, "n_"), W, sz));
      e.line("    old_ = atomicCAS(w_, as_, (as_ & ~(m_ << sh_)) | (nw_ << sh_));");
      e.line("  } while (as_ != old_);");
    }
    e.line("}");
    if (!pred.empty()) e.line("}");
  }

  // The plain form: straight-line code for element i (U == 1), or for i0 and i1 = i0 + kBlock
  // (U == 2): both elements' loads (predicated on being in range), then their arithmetic, then
  // their stores.
  std::string plain_body(ExprEmitter& e) {
    e.code.clear();
    if (U == 1) {
      emit_element(e, false);
      return fmt::format("  const I i = (I){} * {} + (I){};\n  if (i < n) {{\n{}  }}\n", id.bx, kBlock, id.tx, e.code);
    }
    std::string stores;
    for (int u = 0; u < 2; ++u) {
      idx = fmt::format("i{}", u);
      guard = fmt::format("k{}", u);
      emit_element(e, false, &stores);
    }
    idx = "i";
    guard.clear();
    return fmt::format("  const I i0 = (I){} * {} + (I){}, i1 = i0 + {};\n"
                       "  const bool k0 = i0 < n, k1 = i1 < n;\n{}{}", id.bx, 2 * kBlock, id.tx, kBlock, e.code, stores);
  }

  // The vector loops of the contiguous and rows bodies: each thread's U vectors (`step`
  // elements apart) are loaded into l<j>[u], then each of the V lanes runs the element code
  // (after `lane`, a line per element) and the outputs' vectors are stored. `ind` indents.
  // With `defer_stores`, every vector's elements first and all the stores after: loads in the
  // element code (a mapped view's, a gather's) then go out before the first store, which they
  // could not pass (the compiler cannot tell the output from the array read), so a thread
  // keeps U x V loads in flight instead of V (M3's pad).
  std::string vector_loops(const std::string& ind, const std::string& step, const std::string& loads,
                           const std::string& stores_decl, const std::string& body, const std::string& stores,
                           const std::string& lane) const {
    const std::string head = fmt::format(
        "#pragma unroll\n{0}for (int u = 0; u < U; ++u) {{\n{0}  const I iv = t0 + u * {1};\n{0}  if (iv < nvec) {{\n",
        ind, step);
    const std::string tail = fmt::format("{0}  }}\n{0}}}\n", ind);
    const std::string elements =
        fmt::format("#pragma unroll\n{0}    for (int k = 0; k < V; ++k) {{\n{0}    const I i = iv * V + k;\n", ind) + lane +
        body + fmt::format("{}    }}\n", ind);
    std::string b;
    if (!loads.empty()) b += head + loads + tail;
    if (defer_stores) return b + stores_decl + head + elements + tail + head + stores + tail;
    return b + head + stores_decl + elements + stores + tail;
  }

  std::string kernel_body(ExprEmitter& e) {
    std::string b = fmt::format("  using I = {};\n  const I n = (I)p.n;\n", e.idx());
    if (plain) {
      b += plain_body(e);
    } else if (contiguous) {
      b += fmt::format("  constexpr int V = {}, U = {};\n  const I nvec = n / V;\n", V, U);
      if (priv >= 0) b += priv_head();
      if (priv < 0) b += fmt::format("  const I t0 = (I){} * ({} * U) + (I){};\n", id.bx, kBlock, id.tx);
      std::string loads, stores_decl, stores;
      b += flat_vectors(loads, stores_decl, stores);
      e.code.clear();
      emit_element(e, true);
      if (priv >= 0)  // a grid-stride loop: the grid is capped (each block merges its counters)
        b += fmt::format("  for (I t0 = (I)blockIdx.x * ({0} * U) + (I)threadIdx.x; t0 < nvec; t0 += (I)gridDim.x * ({0} * U)) {{\n"
                         "{1}  }}\n", kBlock, vector_loops("    ", std::to_string(kBlock), loads, stores_decl, e.code, stores, ""));
      else b += vector_loops("  ", std::to_string(kBlock), loads, stores_decl, e.code, stores, "");
      if (V > 1) b += vector_tail(e, "");
      if (priv >= 0) b += priv_tail();
    } else if (flat) {
      b += flat_body(e);
    } else if (rows) {
      b += rows_body(e);
    } else if (tiled) {
      b += tiled_body(e);
    } else {
      e.code.clear();
      emit_element(e, false);
      std::string unravel = "      I r = i;\n";
      for (int d = cs.ndim() - 1; d >= 0; --d) {
        if (d == 0) unravel += "      const I c0 = r;\n";
        else unravel += fmt::format("      const I c{} = r % p.shape[{}]; r /= p.shape[{}];\n", d, d, d);
      }
      if (priv >= 0) b += priv_head();
      b += fmt::format("  for (I i = (I){} * {} + (I){}; i < n; i += (I){} * {}) {{\n{}{}  }}\n",
                       id.bx, kBlock, id.tx, id.gx, kBlock, unravel, e.code);
      if (priv >= 0) b += priv_tail();
    }
    return b;
  }

  // The contiguous and flat bodies' vectors at p.a<j> / p.o<j> + iv * V: the memory reads
  // whose flat index is the element's (declared, returned) and the outputs.
  std::string flat_vectors(std::string& loads, std::string& stores_decl, std::string& stores) const {
    std::string decls;
    for (size_t j = 0; j < accs.size(); ++j) {
      const Acc& a = accs[j];
      const std::string J = std::to_string(j), st = storage_type(a.node->dtype);
      if (a.kind == Acc::Mem && (flat || (cs.ndim() == 1 && a.st[0] == 1))) {
        decls += fmt::format("  cf_vec<{}, V> l{}[U];\n", st, J);
        loads += fmt::format("      l{}[u] = *reinterpret_cast<const cf_vec<{}, V>*>(p.a{} + iv * V);\n", J, st, J);
      }
      if (a.kind == Acc::Out) {
        stores_decl += fmt::format("      cf_vec<{}, V> o{}{};\n", st, J, defer_stores ? "[U]" : "");
        stores += fmt::format("      *reinterpret_cast<cf_vec<{}, V>*>({} + iv * V) = o{}{};\n", st, out_ptr(J), J,
                              defer_stores ? "[u]" : "");
      }
    }
    return decls;
  }
  // Their tail of < V elements, element by element in block 0 (`coords`: the lines giving the
  // element code its coordinates from i).
  std::string vector_tail(ExprEmitter& e, const std::string& coords) {
    e.code.clear();
    emit_element(e, false);
    return fmt::format("  if ({} == 0) {{\n    const I i = nvec * V + (I){};\n    if (i < n) {{\n{}{}    }}\n  }}\n", id.bx, id.tx,
                       coords, e.code);
  }

  // Flat mode: the contiguous loop over the flattened iteration; each vector's first element's
  // coordinates unravelled from its flat index (the lanes' copies of that division are one after
  // unrolling), each lane's from them by a carry.
  std::string flat_body(ExprEmitter& e) {
    const int nd = cs.ndim(), last = nd - 1;
    std::string b = fmt::format("  constexpr int V = {}, U = {};\n  const I nvec = n / V;\n", V, U);
    b += fmt::format("  const I t0 = (I){} * ({} * U) + (I){};\n", id.bx, kBlock, id.tx);
    std::string loads, stores_decl, stores;
    b += flat_vectors(loads, stores_decl, stores);
    auto unravel = [&](const std::string& from, const std::string& pfx, const std::string& ind) {
      std::string u = fmt::format("{}I q_ = {};\n", ind, from);
      for (int d = last; d > 0; --d)
        u += fmt::format("{0}const I {1}{2} = q_ % (I)p.shape[{2}]; q_ /= (I)p.shape[{2}];\n", ind, pfx, d);
      return u + fmt::format("{}const I {}0 = q_;\n", ind, pfx);
    };
    std::string lane = unravel("iv * V", "b", "        ");
    lane += fmt::format("        I c{0} = b{0} + k;\n", last);
    for (int d = last - 1; d >= 0; --d) lane += fmt::format("        I c{0} = b{0};\n", d);
    std::string carry;
    for (int d = 0; d < last; ++d)  // innermost first; V <= kMinRow, so one carry at most
      carry = fmt::format("if (c{0} >= (I)p.shape[{0}]) {{ c{0} -= (I)p.shape[{0}]; ++c{1};{2} }}", d + 1, d,
                          carry.empty() ? "" : " " + carry);
    lane += "        " + carry + "\n";
    e.code.clear();
    emit_element(e, true);
    b += vector_loops("  ", std::to_string(kBlock), loads, stores_decl, e.code, stores, lane);
    return b + vector_tail(e, unravel("i", "c", "      "));
  }

  // Rows mode: blockIdx.y walks the rows (unravelled over the outer dims once per row),
  // blockIdx.x and the thread walk the row in U vectors of V elements.
  std::string rows_body(ExprEmitter& e) {
    const int nd = cs.ndim(), last = nd - 1;
    std::string b = fmt::format("  constexpr int V = {}, U = {}, BX = {}, BY = {};\n  const I nvec = (I)p.shape[{}] / V;\n", V,
                                U, BX, kBlock / BX, last);
    b += fmt::format("  const I t0 = (I){} * (BX * U) + (I){};\n", id.bx, id.tx);
    b += fmt::format("  for (I row = (I){} * BY + (I){}; row < (I)p.nrows; row += (I){} * BY) {{\n    I q = row;\n", id.by,
                     id.ty, id.gy);
    for (int d = last - 1; d >= 0; --d) {
      if (d == 0) b += "    const I c0 = q;\n";
      else b += fmt::format("    const I c{} = q % p.shape[{}]; q /= p.shape[{}];\n", d, d, d);
    }
    std::string loads, stores_decl, stores;
    for (size_t j = 0; j < accs.size(); ++j) {
      const Acc& a = accs[j];
      const std::string J = std::to_string(j);
      if (a.kind != Acc::Mem && a.kind != Acc::Out) continue;
      const std::string sn = (a.kind == Acc::Mem ? "a" : "o") + J + "s";
      std::string base;
      for (int d = 0; d < last; ++d) base += fmt::format("{}c{} * p.{}[{}]", d ? " + " : "", d, sn, d);
      b += fmt::format("    const I {} = {};\n", row_base(static_cast<int>(j)), base);
      const std::string st = storage_type(a.node->dtype);
      if (a.kind == Acc::Mem && a.st[last] == 1) {
        b += fmt::format("    cf_vec<{}, V> l{}[U];\n", st, J);
        loads += fmt::format("        l{}[u] = *reinterpret_cast<const cf_vec<{}, V>*>(p.a{} + r{} + iv * V);\n", J, st, J, J);
      }
      if (a.kind == Acc::Out) {
        stores_decl += fmt::format("        cf_vec<{}, V> o{}{};\n", st, J, defer_stores ? "[U]" : "");
        stores += fmt::format("        *reinterpret_cast<cf_vec<{}, V>*>({} + r{} + iv * V) = o{}{};\n", st, out_ptr(J), J, J,
                              defer_stores ? "[u]" : "");
      }
    }
    e.code.clear();
    emit_element(e, true);
    b += vector_loops("    ", "BX", loads, stores_decl, e.code, stores, fmt::format("        const I c{} = i;\n", last));
    b += "  }\n";  // the row loop
    return b;
  }

  // Tiled mode: per (R, C) tile, the staged reads are loaded with threadIdx.x along R into
  // t<j>[c][r] (a row of 33: no bank conflicts either way), then each element (r, c) is
  // computed with threadIdx.x along C; blockIdx.z walks the other dimensions.
  std::string tiled_body(ExprEmitter& e) {
    const int nd = cs.ndim(), C = nd - 1;
    std::string b;
    for (size_t j = 0; j < accs.size(); ++j)
      if (through_tile[j])
        b += fmt::format("  __shared__ {} t{}[{}][{}];\n", reg_type(accs[j].node->dtype), j, kTile, kTile + 1);
    b += fmt::format("  const I nR = (I)p.shape[{}], nC = (I)p.shape[{}];\n", tR, C);
    b += fmt::format("  const I tr = (I)blockIdx.y * {0}, tc = (I)blockIdx.x * {0};\n", kTile);
    b += "  for (I bz = (I)blockIdx.z; bz < (I)p.nbatch; bz += (I)gridDim.z) {\n    I q = bz;\n";
    std::vector<int> batch;
    for (int d = 0; d < nd; ++d)
      if (d != tR && d != C) batch.push_back(d);
    for (size_t k = batch.size(); k-- > 0;) {
      const int d = batch[k];
      if (k == 0) b += fmt::format("    const I c{} = q;\n", d);
      else b += fmt::format("    const I c{0} = q % p.shape[{0}]; q /= p.shape[{0}];\n", d);
    }
    if (batch.empty()) b += "    (void)q;\n";
    // Before the barrier: the staged reads into the tiles, and the other memory reads of
    // this thread's elements into registers (their latency then overlaps the tiles').
    std::string loads, direct;
    for (size_t j = 0; j < accs.size(); ++j) {
      if (accs[j].kind != Acc::Mem) continue;
      const std::string J = std::to_string(j);
      const DType t = accs[j].node->dtype;
      if (!through_tile[j]) {
        b += fmt::format("    {} d{}[{}];\n", reg_type(t), J, kTile / kTileRows);
        std::string off = fmt::format("er * p.a{0}s[{1}] + ec * p.a{0}s[{2}]", J, tR, C);
        for (int d : batch) off += fmt::format(" + c{} * p.a{}s[{}]", d, J, d);
        direct += fmt::format("      d{}[k / {}] = in ? {} : static_cast<{}>(0);\n", J, kTileRows,
                              load_expr(t, fmt::format("p.a{}[{}]", J, off)), reg_type(t));
        continue;
      }
      std::string off = fmt::format("lr * p.a{0}s[{1}] + lc * p.a{0}s[{2}]", J, tR, C);
      for (int d : batch) off += fmt::format(" + c{} * p.a{}s[{}]", d, J, d);
      loads += fmt::format("        t{}[threadIdx.y + k][threadIdx.x] = {};\n", J, load_expr(t, fmt::format("p.a{}[{}]", J, off)));
    }
    if (!direct.empty())
      direct = "      const I er = tr + (I)threadIdx.y + k, ec = tc + (I)threadIdx.x;\n"
               "      const bool in = er < nR && ec < nC;\n" + direct;
    b += fmt::format("#pragma unroll\n    for (int k = 0; k < {0}; k += {1}) {{\n"
                     "      const I lr = tr + (I)threadIdx.x, lc = tc + (I)threadIdx.y + k;\n"
                     "      if (lr < nR && lc < nC) {{\n{2}      }}\n{3}    }}\n    __syncthreads();\n",
                     kTile, kTileRows, loads, direct);
    e.code.clear();
    emit_element(e, false);
    b += fmt::format("#pragma unroll\n    for (int k = 0; k < {0}; k += {1}) {{\n"
                     "      const I c{2} = tr + (I)threadIdx.y + k, c{3} = tc + (I)threadIdx.x;\n"
                     "      if (c{2} < nR && c{3} < nC) {{\n{4}      }}\n    }}\n    __syncthreads();\n  }}\n",
                     kTile, kTileRows, tR, C, e.code);
    return b;
  }

  // The launch shape (grid and block) of the mode analyse() chose.
  LaunchDims dims() const {
    LaunchDims d;
    const int64_t n = numel(S);
    int64_t blocks;
    if (contiguous || flat) {
      int64_t nvec = n / V;
      blocks = std::max<int64_t>(1, (nvec + int64_t(kBlock) * U - 1) / (int64_t(kBlock) * U));
    } else if (rows) {
      const int64_t nvec = cs[cs.ndim() - 1] / V, nrows = n / cs[cs.ndim() - 1], by = kBlock / BX;
      blocks = (nvec + int64_t(BX) * U - 1) / (int64_t(BX) * U);
      d.grid[1] = static_cast<unsigned>(std::min<int64_t>((nrows + by - 1) / by, 65535));
    } else if (tiled) {
      blocks = (cs[cs.ndim() - 1] + kTile - 1) / kTile;
      d.grid[1] = static_cast<unsigned>((cs[tR] + kTile - 1) / kTile);
      d.grid[2] = static_cast<unsigned>(std::min<int64_t>(nbatch, 65535));
    } else {
      blocks = std::min<int64_t>(std::max<int64_t>(1, (n + kBlock - 1) / kBlock), int64_t(1) << 20);
    }
    if (priv >= 0) blocks = std::min(blocks, kPrivBlocks);
    if (blocks > 0x7fffffffLL)
      throw NotSupportedError(fmt::format("elementwise kernel over {} elements needs too many blocks", n));
    d.grid[0] = static_cast<unsigned>(blocks);
    d.block[0] = rows ? BX : tiled ? kTile : kBlock;
    d.block[1] = rows ? kBlock / BX : tiled ? kTileRows : 1;
    return d;
  }

  std::string summary() const {
    std::string s;
    if (plain)
      s = fmt::format("contiguous, {} per thread, straight-line, {}-bit index", U == 1 ? "1 element" : "2 elements",
                      i64 ? 64 : 32);
    else if (contiguous)
      s = fmt::format("contiguous, {} x {} elements per thread{}, {}-bit index", U, V, vectorize ? " (16-byte vectors)" : "",
                      i64 ? 64 : 32);
    else if (flat)
      s = fmt::format("flat rank {}: {} x {} elements per thread (16-byte vectors), coordinates unravelled per vector, "
                      "{}-bit index", cs.ndim(), U, V, i64 ? 64 : 32);
    else if (rows)
      s = fmt::format("rows rank {}: {} thread(s) along a row, {} row(s) per block, {} x {} elements per thread{}, "
                      "{}-bit index", cs.ndim(), BX, kBlock / BX, U, V,
                      vectorize ? fmt::format(" ({}-byte vectors)", row_vec_bytes) : std::string(), i64 ? 64 : 32);
    else if (tiled)
      s = fmt::format("tiled rank {}: {}x{} tiles of dims {} and {}, {} read(s) through shared memory, {}-bit index",
                      cs.ndim(), kTile, kTile, tR, cs.ndim() - 1, std::count(through_tile.begin(), through_tile.end(), true),
                      i64 ? 64 : 32);
    else
      s = fmt::format("strided rank {}, {}-bit index", cs.ndim(), i64 ? 64 : 32);
    if (priv >= 0)
      s += fmt::format(", scatter-add privatized: {} {} counters per block in shared memory, merged at the end", priv_n,
                       priv_count ? "uint32 (count x value)" : name(outs[priv].node->dtype));
    return s;
  }

  // The code of the mode analyse() chooses; as a piece of a block-partitioned kernel, none
  // (ok false) where that mode needs a kernel of its own: tiles (2-D blocks, barriers) and
  // scatters (a privatized one's barriers, its grid-stride loop).
  EwPiece code(bool as_piece) {
    analyse();
    EwPiece pc;
    if (as_piece) {
      if (tiled || priv >= 0 || !scatters.empty()) return pc;
      piece = true;
      id = Ids{"threadIdx.x", "0", "cf_bx", "cf_by", "cf_gx", "cf_gy"};
      if (rows) {  // the piece's blocks of BX x (kBlock / BX) threads, from the kernel's 1-D ones
        id.tx = fmt::format("(threadIdx.x % {})", BX);
        id.ty = fmt::format("(threadIdx.x / {})", BX);
      }
    }
    ExprEmitter e(bind, i64);
    build_params(e);
    pc.body = kernel_body(e);
    pc.decl = e.pl.decl();
    pc.params = e.pl.bytes();
    pc.patches = std::move(e.patches);
    const LaunchDims d = dims();
    pc.grid_x = d.grid[0];
    pc.grid_y = d.grid[1];
    pc.min_blocks = min_blocks;
    pc.summary = summary();
    pc.ok = true;
    return pc;
  }

  KernelSpec emit() {
    EwPiece pc = code(false);
    std::vector<DType> types;
    for (const auto& o : outs) types.push_back(o.node->dtype);
    const uint64_t h = std::hash<std::string>{}(pc.decl + pc.body + std::to_string(min_blocks));
    KernelSpec k;
    k.name = kernel_name("ew", types, h);
    k.source = kernel_source(k.name, pc.decl, kBlock, pc.body, min_blocks);
    k.params = std::move(pc.params);
    k.patches = std::move(pc.patches);
    k.numel = numel(S);
    k.dims = dims();
    k.summary = std::move(pc.summary);
    return k;
  }
};

}  // namespace

KernelSpec emit_elementwise_kernel(const Shape& iter_shape, const std::vector<EwOutput>& outputs,
                                   const LeafBinding& bind) {
  if (auto k = emit_partitioned_kernel(iter_shape, outputs, bind)) return std::move(*k);
  EwEmitter e(iter_shape, outputs, bind);
  return e.emit();
}

EwPiece emit_elementwise_piece(const Shape& iter_shape, const std::vector<EwOutput>& outputs, const LeafBinding& bind) {
  EwEmitter e(iter_shape, outputs, bind);
  return e.code(true);
}

}  // namespace cufuse::detail
