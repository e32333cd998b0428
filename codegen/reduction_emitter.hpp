// codegen/reduction_emitter.hpp: what the reduction and scan emitters share (internal to
// codegen/): a reduction group's accumulators (Red) and accessors (Acc), the combine and
// identity forms of each reduce op, and RedEmitter, which collects a group's nodes, collapses
// its kept and reduced dims, chooses the kernel's shape and emits the row-context values.
// Its kernels are emitted in reduction_kernel.cpp (reductions) and scan_kernel.cpp (scans,
// with scan_rows.cpp and scan_tiles.cpp); the shared analysis and value emission live in
// reduction_emitter.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/expr_emitter.hpp"
#include "codegen/kernel.hpp"
#include "codegen/reduction_kernel.hpp"
#include "core/reduce_attrs.hpp"

namespace cufuse::detail::red {

constexpr int kFinishBatch = 8;  // split reductions: partials each lane of the last block loads at once
constexpr int64_t kLaneThreads = int64_t(1) << 18;  // strided lanes: threads to aim for
constexpr int64_t kScanTileMin = 4096;  // contiguous rows scanned in tiles (scan_tiles.cpp) from this length
constexpr int64_t kScanLongRow = int64_t(1) << 18;  // from here 4-byte scans take tiles of twice the size
constexpr int64_t kMaxScanBlocks = int64_t(1) << 20;  // a scan kernel's grid at most (scan_spec)

// Blocks a split reduction aims for over all its rows (reduction_emitter.cpp says how many).
int64_t split_blocks(int per_sm);

bool contains(const Axes& axes, int d);

struct Red {
  const Node* node;
  ReduceOp op;
  DType in;        // input dtype (== accumulator dtype)
  std::string T;   // accumulator register type
  int phase;
};

// The accumulator's register type (reduction_emitter.cpp says why narrow integers widen).
std::string acc_type(ReduceOp op, DType in);
// Bytes of one accumulator in a workspace of partials: 8, or 16 for complex128 (a slot of 8
// bytes let a complex128 partial run over the next one, and over the index partials after it).
inline size_t acc_slot_bytes(DType in) { return std::max<size_t>(8, static_cast<size_t>(itemsize(in))); }
// A warp shuffle of a value of register type T (small types travel as int).
std::string shuffle(const char* fn, const std::string& v, const std::string& T, const std::string& by);
// The reduction's identity as a value of its accumulator type.
std::string identity(const Red& r);
// A value of the reduction's input type, as the accumulator's (a cast only where they differ).
std::string as_acc(const Red& r, const std::string& v);
// acc (and acc index `ai`) combined with value v (at index vi).
std::string combine(const Red& r, const std::string& acc, const std::string& ai, const std::string& v,
                    const std::string& vi);

// A scan's turns of V elements a lane (xs, each scanned in place) scanned across segments of
// LR lanes (lane lk): bu[u] is what turn u's elements of the lane add to `carry`, which then
// takes the turn's total (scan_rows.cpp).
std::string scan_turns(const Red& r, int U, int LR);

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

// A reduction (or scan) kernel's shape: the group's input shape collapsed into kept dims
// (rows) and reduced dims (each row's elements), and how threads and blocks cover them.
struct RedShape {
  std::vector<int> kept_dims, red_dims;  // of the input shape, before collapsing
  Shape kept_shape, red_shape;           // collapsed
  int64_t rows = 1;      // kept elements: rows reduced (M in the kernels)
  int64_t row_len = 1;   // elements a row (N in the kernels)
  int lanes = 1;         // threads a row (G)
  int block = 256;       // threads a block (B)
  int vec = 1;           // elements a load along the row (V): 16-byte vectors where they fit
  int cached = 0;        // vectors a thread keeps in registers across phases (K; 0: none)
  int splits = 1;        // blocks a row is split over (S); partials merged by the last block
  bool on_chip = false;     // rows kept on chip across phases (the K cached loads)
  bool row_kernel = false;  // phases or row-shaped results: one row kernel (rule rows)
  bool index64 = false;     // 64-bit indexing
  bool split = false;       // splits > 1
  bool strided_lanes = false;  // rows read across threads: lane = threadIdx.x / RB, row = threadIdx.x % RB
  int phases = 1;           // reductions that read earlier ones' results broadcast back
  bool scan = false;        // a scan's kernel (emit_scan)
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
  std::vector<Strides> out_ks, out_rs;  // per output: destination strides
  // The kernel's shape: written by analyse() and the choose_* functions (and by a scan's
  // emitters, which pick the vector width and block they load with before their loops are emitted);
  // every other emitter reads it through `sh`.
  RedShape shape_;
  const RedShape& sh = shape_;

  RedEmitter(const ReductionSpec& s, const LeafBinding& b) : sp(s), bind(b) {}
  RedEmitter(const RedEmitter&) = delete;

  // Maps strides over a shape whose non-1 dims are the kept dims' non-1 dims onto kept dims.
  Strides map_to_kept(const Shape& xs, const Strides& xst) const;

  void split_strides(const Strides& st, Strides& ks, Strides& rs) const;

  // Row context: nodes over S evaluated at (row, r).
  void collect_row(const Node* n);
  void classify_row(const Node* n);  // one node of it

  // Output context: nodes over a reduced shape evaluated at a row.
  void collect_out(const Node* n);
  void classify_out(const Node* n);  // one node of it

  void analyse();

  void choose_shape();

  // Rows read across threads: RB rows a block (32, a warp's worth, or all of fewer rows)
  // and G = B / RB lanes a row, so that about kLaneThreads threads run; a lane gets at least
  // 16 elements. One lane a row (the plain thread-per-row kernel) from kLaneThreads rows.
  void choose_strided_lanes();

  void choose_index();

  // ---------------------------------------------------------------- emission
  std::unordered_map<const Node*, std::string> vals;
  bool prefetch = false;  // emitting element_loop's unrolled turns: row-varying loads were issued ahead

  // Read from memory along the row (not cached, not a broadcast): element_loop's unrolled
  // turns issue its loads ahead.
  bool is_prefetched(const Acc& a) const;

  // Turns of a loop over a row unrolled with their loads ahead: 8 for accessors of 1 or 2
  // bytes, else 4; 1 (a plain loop) with nothing to prefetch.
  int unroll_turns() const;

  std::string vector_load(size_t j, const std::string& at) const;

  // The prefetched accessors' U turns of loads, turn u at vector (or element) `at_u`, into
  // l<j>u[u], each turn only where `guard` holds (when one is given); row_value reads them
  // there while `prefetch` is set.
  std::string prefetch_turns(int U, const std::string& at_u, const std::string& q_unravel,
                             const std::string& guard = "") const;

  std::string row_offset(const Strides& rs, const std::string& name) const;

  // Reduction k's result as a value of its dtype (a narrow integer's 32-bit accumulator is
  // truncated: acc_type), or its index for argmax/argmin.
  std::string red_ref(int k) const;

  // A node's value, emitting what it needs first (walked with an explicit stack).
  std::string row_value(ExprEmitter& e, const Node* n);
  std::string row_value_of(ExprEmitter& e, const Node* n);  // its inputs' values known

  std::string out_value(ExprEmitter& e, const Node* n);
  std::string out_value_of(ExprEmitter& e, const Node* n);  // its inputs' values known

  void build_params(ExprEmitter& e, size_t& ws_bytes, size_t& ws_zero, std::vector<size_t>& ws_part,
                     std::vector<size_t>& ws_idx);

  std::string group_reduce(const Red& r, int k);

  // The loop over a row's elements running `body` (emitted by f) per element.
  std::string element_loop(ExprEmitter& e, const std::function<void()>& f, bool first_in_split,
                           const std::string& pre = "", const std::string& post = "");

  // The top of a row loop: row `kr`'s kept coordinates k0.., each accessor's base b<j> and
  // the first `outputs` outputs' bases ob<i>.
  std::string row_bases(const std::string& kr, size_t outputs) const;

  // A scan, in the shape scan_kernel.cpp chooses (else one block per row, tiles of B
  // elements, an inclusive block scan per tile plus the carry of the tiles before it).
  KernelSpec emit_scan();

  // A scan kernel of body `b` over `blocks` blocks of B threads (at most kMaxScanBlocks).
  KernelSpec scan_spec(ExprEmitter& e, const std::string& b, int64_t blocks, const std::string& mode);

  // A thread per row, in order: outer-axis rows enough to fill the GPU (a warp reads and
  // writes 32 adjacent rows at a time; a block per row read its 256-element tiles at the
  // row's stride: cumsum over axis 0 of f32[64,64,64,256] 2.58 ms, torch 0.23).
  bool scan_across_threads() const;

  // Rows whose elements are contiguous (or broadcast), read and written.
  bool scan_layout_inner() const;

  // Rows whose elements are strided and whose consecutive rows are adjacent in memory.
  bool scan_layout_outer() const;

  // Outer-axis scans cut into tiles spread over blocks: rows too few for a thread each (a
  // thread per column left most of the GPU idle under 2^18 columns: cumsum(x, 0) of
  // f32[16384,4096] 3.1 ms, a copy 0.18).
  bool scan_tiles() const;

  // An outer-axis scan in tiles (scan_tiles). Each block takes tiles by ticket, in order: a
  // tile is RB rows by CH elements of each, a thread E consecutive elements of one row (L =
  // B / RB threads a row). A thread scans its elements in registers; the block scans
  // the threads' totals in a fixed order; each row's tile then publishes its aggregate and
  // finds its prefix by looking back over the tiles before it (decoupled look-back). The look-
  // back folds from the nearest predecessor's inclusive prefix forward through the aggregates
  // after it; every inclusive prefix is the same left fold of aggregates, so the bits do not
  // depend on which predecessor was ready: the same results every run.
  KernelSpec emit_scan_tiled(ExprEmitter& e);

  // The tiled scan's look-back for each row of the tile (cf_pre[row] = its prefix): a warp a
  // row, 32 tiles a read, back to the nearest inclusive prefix; or a thread a row, among the
  // 8 tiles before it.
  std::string scan_lookback_warps() const;
  std::string scan_lookback_thread() const;

  KernelSpec emit_scan_by_thread(ExprEmitter& e);

  // Contiguous rows (scan_layout_inner), in scan_rows.cpp. The vector width along the row
  // where every row access and the output allow 16-byte vectors (else 1); it sets each
  // accessor's `vec`.
  int scan_row_vectors();
  // The values of U turns of V elements, turn u at vector (or element) `at_u` (its loads
  // issued by prefetch_turns), where `active` holds, into xs[u * V + t], each turn then
  // scanned in place (scan_rows.cpp).
  std::string scan_row_values(ExprEmitter& e, int U, const std::string& at_u, const std::string& active);
  // The stores of those U turns: element t of turn u is `base` (of u) combined with xs[u * V + t].
  std::string row_stores(int U, const std::string& at_u, const std::string& active, const std::string& base) const;
  // Rows of fewer than 4096 elements: LR adjacent lanes a row (1 to 32), U turns of V
  // elements a lane per pass, striped so that a warp's loads and stores are contiguous.
  KernelSpec emit_scan_by_lanes(ExprEmitter& e);
  // Rows of 4096 or more (a 1-D scan included): tiles of B * U * V elements over many blocks,
  // taken by ticket; each tile's prefix from a two-level deterministic look-back
  // (scan_lookback_groups), in scan_tiles.cpp.
  KernelSpec emit_scan_tiled_rows(ExprEmitter& e);
  std::string scan_lookback_groups(int64_t C) const;

  KernelSpec emit();
};

}  // namespace cufuse::detail::red
