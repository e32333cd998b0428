// codegen/reduction_emitter.cpp: RedEmitter's analysis of a reduction group (its nodes in
// row and output context, the collapsed kept and reduced dims, the kernel's shape: lanes
// per row, vector width, rows on chip, splits over blocks), the reduce ops' identities and
// combines, and the emission the reduction and scan kernels share: kernel parameters, row
// bases, loads issued ahead, and the values of row- and output-context nodes.
#include "codegen/reduction_emitter.hpp"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/preamble.hpp"
#include "codegen/user_kernel.hpp"
#include "core/reduce_attrs.hpp"
#include "core/walk.hpp"
#include "cufuse/error.hpp"
#include "cufuse/stream.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"

namespace cufuse::detail::red {

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
  if (const int64_t env = settings().split_blocks; env > 0) return env;  // CUFUSE_SPLIT_BLOCKS, 1..2^20
  if (Device::count() > 0) {
    const int sms = device_props(current_device()).sm_count;
    if (sms > 0) return int64_t(per_sm) * sms;
  }
  return 2048;
}

bool contains(const Axes& axes, int d) { return std::find(axes.begin(), axes.end(), d) != axes.end(); }

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
  if (T.rfind("cf_cplx", 0) == 0)  // a complex pair: each part shuffled
    return fmt::format("{}({}(0xffffffffu, ({}).re, {}), {}(0xffffffffu, ({}).im, {}))", T, fn, v, by, fn, v, by);
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

// Maps strides over a shape whose non-1 dims are the kept dims' non-1 dims onto kept dims.
Strides RedEmitter::map_to_kept(const Shape& xs, const Strides& xst) const {
  Strides out(sh.kept_dims.size(), 0);
  size_t k = 0;
  for (int d = 0; d < xs.ndim(); ++d) {
    if (xs[d] == 1) continue;
    while (k < sh.kept_dims.size() && sp.S[sh.kept_dims[k]] == 1) ++k;
    if (k >= sh.kept_dims.size() || sp.S[sh.kept_dims[k]] != xs[d])
      throw InternalError("reduction epilogue shape does not match the kept dims");
    out[k++] = xst[d];
  }
  return out;
}

void RedEmitter::split_strides(const Strides& st, Strides& ks, Strides& rs) const {
  for (int d : sh.kept_dims) ks.push_back(st[d]);
  for (int d : sh.red_dims) rs.push_back(st[d]);
}

// Row context: nodes over S evaluated at (row, r).
// (Walked with an explicit stack: core/walk.hpp.)
void RedEmitter::collect_row(const Node* root) {
  walk_post_order(
      root, [&](const Node* n) { return row_acc.count(n) || scalar_of.count(n); },
      [&](const Node* n) { return n->k() == NodeKind::Elementwise && !reads_memory(n, bind); },
      [&](const Node* n) { classify_row(n); });
}

void RedEmitter::classify_row(const Node* n) {
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
    row_acc[n] = -1;  // computed from its inputs (walked before it)
    return;
  }
  throw InternalError(fmt::format("reduction prologue met an unmaterialized {} node", kind_name(n->k())));
}

// Output context: nodes over a reduced shape evaluated at a row.
void RedEmitter::collect_out(const Node* root) {
  walk_post_order(
      root, [&](const Node* n) { return out_acc.count(n) || scalar_of.count(n); },
      [&](const Node* n) { return !red_of.count(n) && n->k() == NodeKind::Elementwise && !reads_memory(n, bind); },
      [&](const Node* n) { classify_out(n); });
}

void RedEmitter::classify_out(const Node* n) {
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
    out_acc[n] = -1;  // computed from its inputs (walked before it)
    return;
  }
  throw InternalError(fmt::format("reduction epilogue met an unmaterialized {} node", kind_name(n->k())));
}

void RedEmitter::analyse() {
  for (int d = 0; d < sp.S.ndim(); ++d) (contains(sp.axes, d) ? shape_.red_dims : shape_.kept_dims).push_back(d);
  for (size_t i = 0; i < sp.reductions.size(); ++i) {
    const Node* r = sp.reductions[i];
    const DType in = r->inputs[0]->dtype;
    const ReduceOp op = reduce_attrs(*r).op;
    reds.push_back(Red{r, op, in, acc_type(op, in), sp.phase[i]});
    red_of[r] = static_cast<int>(i);
    shape_.phases = std::max(shape_.phases, sp.phase[i] + 1);
  }
  for (const auto& red : reds) collect_row(red.node->inputs[0].get());
  for (const auto& o : sp.outputs) {
    if (o.kind == OutKind::Row) {
      if (!red_of.count(o.node.get())) collect_row(o.node.get());
      shape_.row_kernel = true;
    } else if (o.kind == OutKind::Epilogue) {
      collect_out(o.node.get());
    }
  }
  shape_.row_kernel |= shape_.phases > 1;
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
  shape_.kept_shape = collapse(shape_.kept_dims, true);
  shape_.red_shape = collapse(shape_.red_dims, false);
  shape_.rows = numel(shape_.kept_shape);
  shape_.row_len = numel(shape_.red_shape);
  if (shape_.scan) shape_.lanes = shape_.block = 256;
  else choose_shape();
  choose_index();
}

void RedEmitter::choose_shape() {
  const int rr = shape_.red_shape.ndim(), rk = shape_.kept_shape.ndim();
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
  if (inner && shape_.row_len > 1) {
    if (shape_.row_len >= 4096 || (shape_.row_kernel && shape_.row_len > 1024)) {
      shape_.lanes = 256;
    } else {
      // Shorter rows: G adjacent lanes a row (2 to 32, a warp or part of one), each with up to
      // 4 of the row's 16-byte vectors or 5 elements, so that a warp reads and writes
      // consecutive addresses whatever the row's length. A thread per row wrote 32 rows at
      // once at the row's stride; a warp per short row left lanes idle. H100, f32 softmax over
      // 64M elements in rows of 8 / 17 / 31 / 64 / 100: 0.69 / 0.89 / 1.55 / 0.47 / 0.31 ms
      // before, 0.22 / 0.31 / 0.26 / 0.19 / 0.19 now (torch 0.20 / 0.38 / 0.23 / 0.18 / 0.18);
      // lanes of 2 or 8 vectors ran up to 25% slower.
      const int v = 16 / maxsz;
      const int64_t nv = shape_.row_len % v == 0 ? shape_.row_len / v : shape_.row_len;
      const int per_lane = shape_.row_len % v == 0 ? 4 : 5;
      shape_.lanes = 2;
      while (shape_.lanes < 32 && int64_t(shape_.lanes) * per_lane < nv) shape_.lanes *= 2;
      // Rows shorter than 16 (4 with row-shaped results) stay a thread's: its loads of 32
      // adjacent short rows share cache lines, and a lane per element adds more work than
      // it saves (sum / softmax over rows of 2: 0.15 / 0.28 ms against 0.24 / 0.45).
      if (shape_.row_len < (shape_.row_kernel ? 4 : 16)) shape_.lanes = 1;
    }
  } else if (kept_contig) {
    shape_.lanes = 1;
    choose_strided_lanes();
  } else {
    shape_.lanes = shape_.row_len >= 32 ? 32 : 1;
  }
  if (!shape_.strided_lanes) shape_.block = 256;
  // vector width along the row
  shape_.vec = 1;
  if (inner && rr == 1 && shape_.lanes > 1) {
    int v = 16 / maxsz;
    bool ok = shape_.row_len % v == 0;
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
      shape_.vec = v;
      for (auto& a : accs) a.vec = a.row_ctx && a.kind == Acc::Mem && a.rs[0] == 1;
    }
  }
  // keep rows on chip for phases / row outputs
  if (shape_.row_kernel && !sp.multipass) {
    auto vectors_per_thread = [&](int64_t g) { return (shape_.row_len + g * shape_.vec - 1) / (g * shape_.vec); };
    int64_t k = vectors_per_thread(shape_.lanes);
    // Block width of a row kept on chip: a row that gives each of 512 threads 4 to 8 full
    // vectors runs on 512 threads, not 256 with 8 to 16 vectors each. On the H100, f32 rows
    // of 8192 / 16384: softmax 0.1820 / 0.1866 ms against 0.1831 / 0.1911, layernorm 0.1832 /
    // 0.1880 against 0.1864 / 0.1995 (64M elements each). Rows of 6144 (3 vectors at 512)
    // stay at 256: softmax 0.1828 there against 0.1898. Not for 8-byte types: ptxas gives a
    // 512-thread block 64 registers a thread, and an f64 softmax row of 8 vectors then spills.
    if (shape_.lanes == 256 && maxsz <= 4 && shape_.row_len >= int64_t(4) * 512 * shape_.vec && vectors_per_thread(512) <= 8) {
      shape_.lanes = shape_.block = 512;
      k = vectors_per_thread(shape_.lanes);
    }
    // Past 16 vectors a thread (rounded up to K = 32 registers' worth: f32 rows of 20000
    // took 180 registers and one block an SM, 0.33 ms against torch's 0.25), 1024 threads.
    if (shape_.lanes == 256 && (k > 32 || (k > 16 && maxsz <= 4))) {
      shape_.lanes = shape_.block = 1024;
      k = vectors_per_thread(shape_.lanes);
    }
    if (k <= 32) {
      shape_.cached = 1;
      while (shape_.cached < k) shape_.cached *= 2;
      shape_.on_chip = true;
    }
  }
  // split long rows over several blocks
  const int RB = shape_.block / shape_.lanes;
  const int64_t row_blocks = (shape_.rows + RB - 1) / RB;
  // (No rows at all, a zero-size result, launches nothing: there is nothing to split.)
  // Strided lanes split shorter rows too: few rows of 2048 would otherwise run in a block or two.
  const int64_t split_from = shape_.strided_lanes ? int64_t(shape_.lanes) * 64 : 8192;
  if (!shape_.row_kernel && row_blocks >= 1 && row_blocks < 1024 && shape_.row_len >= split_from) {
    // Strided lanes round down, to at most one wave: 1280 blocks of f32[8192,8192]'s column
    // sums on the H100 (1056 resident) took 0.106 ms, 1024 took 0.094 and 2048 0.096.
    int64_t want = shape_.strided_lanes ? split_blocks(8) / row_blocks : (split_blocks(24) + row_blocks - 1) / row_blocks;
    int64_t most = std::max<int64_t>(1, shape_.row_len / (int64_t(shape_.lanes) * shape_.vec * 16));
    shape_.splits = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(want, std::min<int64_t>(most, 65535))));
    shape_.split = shape_.splits > 1;
  }
}

// Rows read across threads: RB rows a block (32, a warp's worth, or all of fewer rows)
// and G = B / RB lanes a row, so that about kLaneThreads threads run; a lane gets at least
// 16 elements. One lane a row (the plain thread-per-row kernel) from kLaneThreads rows.
void RedEmitter::choose_strided_lanes() {
  size_t shared = 0;
  for (const auto& r : reds) shared += 8 + (is_arg(r.op) ? 8 : 0);
  if (shared * 256 > 40 * 1024) return;  // the lanes' tree needs B values per reduction
  int64_t rows = 1;
  while (rows < shape_.rows && rows < 32) rows *= 2;
  int L = static_cast<int>(256 / rows);
  while (L > 1 && shape_.rows * L > kLaneThreads) L /= 2;
  while (L > 1 && shape_.row_len < int64_t(L) * 16) L /= 2;
  if (L <= 1) return;
  shape_.strided_lanes = true;
  shape_.lanes = L;
  int64_t rb = 1;
  while (rb < shape_.rows && rb < 256 / L) rb *= 2;
  shape_.block = static_cast<int>(rb) * L;
}

void RedEmitter::choose_index() {
  // Spans add up saturated (span_of saturates at INT64_MAX): only "needs 64 bits" matters.
  auto add = [](int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; };
  int64_t span = add(std::max(shape_.rows, shape_.row_len), std::max(shape_.rows, shape_.row_len));
  for (const auto& a : accs) {
    span = std::max(span, add(span_of(shape_.kept_shape, a.ks, a.off), a.row_ctx ? span_of(shape_.red_shape, a.rs) : 0));
    if (a.kind == Acc::View) span = std::max(span, chain_span(a.node));
  }
  for (size_t i = 0; i < sp.outputs.size(); ++i)
    span = std::max(span, add(span_of(shape_.kept_shape, out_ks[i]),
                              sp.outputs[i].kind == OutKind::Row ? span_of(shape_.red_shape, out_rs[i]) : 0));
  shape_.index64 = span >= (int64_t(1) << 31) - int64_t(shape_.block) * 64;
}

// Read from memory along the row (not cached, not a broadcast): element_loop's unrolled
// turns issue its loads ahead.
bool RedEmitter::is_prefetched(const Acc& a) const {
  if (a.kind != Acc::Mem || !a.row_ctx || a.cached || (sh.vec > 1 && !a.vec)) return false;
  bool varies = a.vec;
  for (auto r : a.rs) varies |= r != 0;
  return varies;
}

// Turns of a loop over a row unrolled with their loads ahead: 8 for accessors of 1 or 2
// bytes, else 4; 1 (a plain loop) with nothing to prefetch.
int RedEmitter::unroll_turns() const {
  int sz = 0;
  for (const auto& a : accs)
    if (is_prefetched(a)) sz = std::max(sz, a.vec ? 16 : itemsize(a.node->dtype));
  return sz == 0 ? 1 : (sz <= 2 ? 8 : 4);
}

std::string RedEmitter::vector_load(size_t j, const std::string& at) const {
  const std::string st = storage_type(accs[j].node->dtype);
  return fmt::format("*reinterpret_cast<const cf_vec<{}, V>*>(p.a{} + b{} + {} * V)", st, j, j, at);
}

// The prefetched accessors' U turns of loads, turn u at vector (or element) `at_u`, into
// l<j>u[u]; row_value reads them there while `prefetch` is set.
std::string RedEmitter::prefetch_turns(int U, const std::string& at_u, const std::string& q_unravel,
                                       const std::string& guard) const {
  std::string s;
  for (size_t j = 0; j < accs.size(); ++j)
    if (is_prefetched(accs[j]))
      s += fmt::format("      {} l{}u[{}];\n", accs[j].vec ? fmt::format("cf_vec<{}, V>", storage_type(accs[j].node->dtype))
                                                         : storage_type(accs[j].node->dtype), j, U);
  s += fmt::format("#pragma unroll\n      for (int u = 0; u < {}; ++u) {{\n        const I j = {};\n", U, at_u);
  if (!guard.empty()) s += "        if (" + guard + ") {\n";
  for (size_t j = 0; j < accs.size(); ++j) {
    if (!is_prefetched(accs[j])) continue;
    if (accs[j].vec) {
      s += fmt::format("        l{}u[u] = {};\n", j, vector_load(j, "j"));
    } else {
      s += "        {\n          const I r = j;\n" + q_unravel;
      s += fmt::format("          l{}u[u] = p.a{}[b{} + {}];\n        }}\n", j, j, j, row_offset(accs[j].rs, "a" + std::to_string(j) + "r"));
    }
  }
  if (!guard.empty()) s += "        }\n";
  return s + "      }\n";
}

std::string RedEmitter::row_offset(const Strides& rs, const std::string& name) const {
  if (sh.red_shape.ndim() == 0) return "0";
  if (sh.red_shape.ndim() == 1) return rs[0] == 0 ? "0" : (rs[0] == 1 ? "r" : fmt::format("r * p.{}[0]", name));
  std::string s;
  for (int d = 0; d < sh.red_shape.ndim(); ++d) s += fmt::format("{}q{} * p.{}[{}]", d ? " + " : "", d, name, d);
  return s;
}

// Reduction k's result as a value of its dtype (a narrow integer's 32-bit accumulator is
// truncated: acc_type), or its index for argmax/argmin.
std::string RedEmitter::red_ref(int k) const {
  const Red& r = reds[static_cast<size_t>(k)];
  if (is_arg(r.op)) return "red" + std::to_string(k) + "_i";
  const std::string R = reg_type(r.node->dtype);
  return R == r.T ? "red" + std::to_string(k) : fmt::format("(({})red{})", R, k);
}

// A row- or output-context node's value: the lines computing it (and what it reads that has
// no value yet) first, inputs before their users. `acc` maps a node to its accessor (>= 0),
// an in-group reduction's value (-2) or an op computed from its inputs (-1).
template <class ValueOf>
static std::string walk_values(std::unordered_map<const Node*, std::string>& vals,
                               const std::unordered_map<const Node*, int>& acc, const std::vector<Acc>& accs,
                               const Node* root, ValueOf&& value_of) {
  auto computed = [&](const Node* n) {
    auto ai = acc.find(n);
    const int j = ai == acc.end() ? -1 : ai->second;
    if (j == -2 || n->k() == NodeKind::Scalar) return false;
    return !(j >= 0 && (accs[j].kind == Acc::Mem || accs[j].kind == Acc::Gen || accs[j].kind == Acc::View));
  };
  walk_post_order(
      root, [&](const Node* n) { return vals.count(n) != 0; }, computed,
      [&](const Node* n) { vals[n] = value_of(n); });
  return vals.at(root);
}

std::string RedEmitter::row_value(ExprEmitter& e, const Node* root) {
  return walk_values(vals, row_acc, accs, root, [&](const Node* n) { return row_value_of(e, n); });
}

std::string RedEmitter::row_value_of(ExprEmitter& e, const Node* n) {
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
    for (size_t k = 0; k < n->inputs.size(); ++k) in[k] = vals.at(n->inputs[k].get());
    v = e.op_value(n, in.data());
  }
  return v;
}

std::string RedEmitter::out_value(ExprEmitter& e, const Node* root) {
  return walk_values(vals, out_acc, accs, root, [&](const Node* n) { return out_value_of(e, n); });
}

std::string RedEmitter::out_value_of(ExprEmitter& e, const Node* n) {
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
    for (size_t k = 0; k < n->inputs.size(); ++k) in[k] = vals.at(n->inputs[k].get());
    v = e.op_value(n, in.data());
  }
  return v;
}

void RedEmitter::build_params(ExprEmitter& e, size_t& ws_bytes, size_t& ws_zero, std::vector<size_t>& ws_part,
                   std::vector<size_t>& ws_idx) {
  e.add_idx("M", sh.rows);
  e.add_idx("N", sh.row_len);
  e.add_idx_array("kshape", sh.kept_shape);
  e.add_idx_array("rshape", sh.red_shape);
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
  if (sh.split) {
    const int RB = sh.block / sh.lanes;
    const int64_t gx = (sh.rows + RB - 1) / RB;
    ws_zero = static_cast<size_t>(gx) * 4;
    ws_bytes = (ws_zero + 15) / 16 * 16;
    size_t off = e.pl.add("unsigned int*", 8, "ctr");
    e.add_patch(off, PatchSrc::Workspace, DType::UInt32, 0);
    for (size_t k = 0; k < reds.size(); ++k) {
      ws_part.push_back(ws_bytes);
      size_t o2 = e.pl.add(reds[k].T + "*", 8, "w" + std::to_string(k));
      e.add_patch(o2, PatchSrc::Workspace, reds[k].in, static_cast<int>(ws_bytes));
      ws_bytes += (static_cast<size_t>(sh.splits) * sh.rows * acc_slot_bytes(reds[k].in) + 15) / 16 * 16;
      if (is_arg(reds[k].op)) {
        ws_idx.push_back(ws_bytes);
        size_t o3 = e.pl.add("long long*", 8, "wi" + std::to_string(k));
        e.add_patch(o3, PatchSrc::Workspace, DType::Int64, static_cast<int>(ws_bytes));
        ws_bytes += (static_cast<size_t>(sh.splits) * sh.rows * 8 + 15) / 16 * 16;
      } else {
        ws_idx.push_back(0);
      }
    }
  }
}

// The top of a row loop: row `kr`'s kept coordinates k0.., each accessor's base b<j> and
// the first `outputs` outputs' bases ob<i>.
std::string RedEmitter::row_bases(const std::string& kr, size_t outputs) const {
  std::string b = "    I kr = " + kr + ";\n";
  for (int d = sh.kept_shape.ndim() - 1; d >= 0; --d) {
    if (d == 0) b += "    const I k0 = kr;\n";
    else b += fmt::format("    const I k{} = kr % p.kshape[{}]; kr /= p.kshape[{}];\n", d, d, d);
  }
  auto kdot = [&](const std::string& name, const Strides& ks) {
    std::string s;
    for (int d = 0; d < sh.kept_shape.ndim(); ++d)
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

}  // namespace cufuse::detail::red
