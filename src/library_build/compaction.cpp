// src/library_build/compaction.cpp: selections whose shape depends on the data: x[mask],
// nonzero, where(cond), argwhere, flatnonzero, extract, compress.
//
// As CuPy, the count is settled on the device and ONE integer is read back. Two forms
// (src/library/compaction_call.hpp, codegen/compaction_kernels.hpp):
// - one pass (where the result's upper bound, every row selected, is at most
//   CUFUSE_SELECT_ONE_PASS_BYTES, 1 GiB by default): one kernel over tiles of the flattened mask
//   ranks each tile's flags, finds the tile's start by a decoupled look-back, and copies the
//   selected rows (values or coordinates) into a buffer of n rows, the last tile writing the
//   count to a device word; that word is read back (pinned, one sync) and the result is a view
//   of the buffer's first count rows. The memory policy: where those rows are under a quarter of
//   the buffer and it wastes kShrinkWasteBytes or more, they are copied into memory of their own
//   at once (one more kernel, over the selected rows only) and the buffer is freed, so a result
//   keeps at most four times its own bytes, or 1 MiB more;
// - two passes (larger, or CUFUSE_SELECT_ONE_PASS_BYTES=0), as CUB's DeviceSelect: the mask
//   gives each tile's count (one kernel); the engine's cumsum of those few counts gives each
//   tile's end and the total (one small scan kernel, none for one tile; its last element read
//   back); then one kernel per tile ranks the flags again and copies the selected rows to tile
//   start + rank, in order, into memory of exactly the result's size.
// A lazy mask and lazy values are computed inside those kernels by their producers (the
// planner's fused-input rule): `(x*2)[sin(x) > 0.5]` reads x once (once in each pass: twice)
// and writes only the result (and the tiny counts). Each evaluation takes a private copy of the
// mask's (and the values') pending subgraph: it then computes nothing a user's handle names
// (which it would write out, codegen aside: executor.cpp's gather_roots).
#include <unordered_map>

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "core/walk.hpp"
#include "graph/indexing.hpp"
#include "library/compaction_call.hpp"
#include "runtime/context.hpp"

namespace cufuse {

using detail::NodePtr;

namespace {

// Nodes of a private copy past which a pending subgraph is shared as it is (so written out where
// a handle names it): the planner's fused-input rule takes no more either.
constexpr size_t kMaxPrivateNodes = 64;

// A copy of the pending elementwise and view nodes under `n` (leaves, reductions and calls
// shared): the same values, named by no Array handle and read by no pending root.
NodePtr private_copy(const NodePtr& n) {
  std::unordered_map<const detail::Node*, NodePtr> copy;
  auto copied = [](const detail::Node* x) {
    const detail::NodeKind k = x->k();
    return (k == detail::NodeKind::Elementwise || k == detail::NodeKind::View) && !x->dest;
  };
  size_t nodes = 0;
  bool fits = true;
  detail::walk_post_order(
      n, [&](const NodePtr& x) { return !fits || copy.count(x.get()) != 0 || !copied(x.get()); },
      [&](const NodePtr& x) { return true; },
      [&](const NodePtr& x) {
        if (++nodes > kMaxPrivateNodes) {
          fits = false;
          return;
        }
        NodePtr c = detail::new_node(x->k());
        c->dtype = x->dtype;
        c->op = x->op;
        c->layout = x->layout;
        c->attrs = x->attrs;
        for (const auto& in : x->inputs) {
          auto it = copy.find(in.get());
          c->inputs.push_back(it == copy.end() ? in : it->second);
        }
        detail::finish_node(*c);
        copy.emplace(x.get(), std::move(c));
      });
  if (!fits) return n;
  auto it = copy.find(n.get());
  return it == copy.end() ? n : it->second;
}

// A mask flattened to (n,) (pending or in memory: both passes compute or read it), each tile's
// end (the inclusive cumsum of the tiles' counts) and the count of its True elements, read back.
struct CountedMask {
  NodePtr mask;
  Array ends;
  int64_t count = 0;
  DType ends_t = DType::Int32;
  int64_t n() const { return mask->numel(); }
};

// A selection's shape is its count: a mask with no values (a placeholder) cannot give one.
void require_data(const Array& mask) {
  const NodePtr& mn = mask.node();
  if (mn->reads_placeholder || mn->is_placeholder())
    throw ValueError("the shape of a selection by mask (x[mask], nonzero, argwhere, flatnonzero, extract, compress) "
                     "depends on the mask's values, and a placeholder has none: it needs an array with data");
}

CountedMask count_mask(const Array& mask) {
  require_data(mask);
  CountedMask c;
  c.mask = private_copy(mask.ravel().node());
  const int64_t n = c.n();
  if (n == 0) return c;
  auto call = std::make_shared<detail::MaskCountCall>(n);
  const int64_t tiles = call->tiles();
  Array counts(detail::make_library_nodes(std::move(call), detail::InputVec{c.mask}).at(0));
  // One tile (n <= 8192) is its own end: no scan kernel.
  c.ends_t = n < (int64_t(1) << 31) ? DType::Int32 : DType::Int64;
  c.ends = tiles == 1 ? counts : cumsum(counts, std::nullopt, c.ends_t);
  c.ends.eval();  // in memory first: the item below is then a copy, not a kernel
  c.count = c.ends[tiles - 1].item<int64_t>();
  return c;
}

// The one-pass form's memory policy (the file's top comment): a view of fewer than a quarter
// of the buffer's rows wasting this many bytes or more is copied into memory of its own.
constexpr int64_t kShrinkWasteBytes = int64_t(1) << 20;

// Does a selection of n rows of w elements of t take one pass (CUFUSE_SELECT_ONE_PASS_BYTES)?
bool one_pass(int64_t n, int64_t w, DType t) {
  const int64_t limit = detail::settings().select_one_pass_bytes;
  return n > 0 && w > 0 && n <= limit / itemsize(t) / w;
}

// One pass: the SelectCall over the mask (flattened, pending or in memory) and the values, its
// buffer (shaped `buffer`: n rows) and count evaluated at once, the count read back; the result
// the buffer's first count rows, or an empty array.
Array select_one_pass(const Array& mask, detail::SelectedRows rows, const Array* values, const Shape& buffer) {
  require_data(mask);
  const NodePtr m = private_copy(mask.ravel().node());
  const int64_t n = m->numel();
  detail::InputVec in{m};
  if (values) in.push_back(private_copy(values->node()));
  const int64_t w = rows.w;
  const DType t = rows.t;
  auto nodes = detail::make_library_nodes(std::make_shared<detail::SelectCall>(std::move(rows), buffer), std::move(in));
  const Array all(nodes.at(0)), counted(nodes.at(1));
  eval(all, counted);
  const int64_t count = counted.item<int64_t>();
  Shape out = buffer;
  out[0] = count;
  if (count == 0) return empty(out, t);
  Array r = all.index({slice(0, count)});
  if (count < n / 4 && (n - count) * w * itemsize(t) >= kShrinkWasteBytes) {
    r = r.copy();
    r.eval();
  }
  return r;
}

// The selected rows: the compact node over the counted mask.
Array compact(const CountedMask& c, std::shared_ptr<const detail::LibraryCall> call, const Array* values) {
  detail::InputVec in{c.mask, c.ends.node()};
  if (values) in.push_back(private_copy(values->node()));
  return Array(detail::make_library_nodes(std::move(call), std::move(in)).at(0));
}

// The rows of `values` (shape M + tail) where the bool `mask` (shape M) holds, in row-major
// order: shape (count,) + tail.
Array select_rows(const Array& values, const Array& mask) {
  const Shape& S = values.shape();
  const int k = mask.ndim();
  Shape tail;
  for (int d = k; d < S.ndim(); ++d) tail.push_back(S[d]);
  const int64_t n = mask.size(), w = numel(tail);
  if (one_pass(n, w, values.dtype())) {
    Shape buf{n};
    for (auto t : tail) buf.push_back(t);
    const Array flat = values.reshape(Shape{numel(S)});
    return select_one_pass(mask, detail::SelectedRows::values(n, w, values.dtype()), &flat, buf);
  }
  const CountedMask c = count_mask(mask);
  Shape out_shape{c.count};
  for (auto t : tail) out_shape.push_back(t);
  if (c.count == 0 || numel(S) == 0) return empty(out_shape, values.dtype());
  const Array flat = values.reshape(Shape{numel(S)});
  return compact(c, std::make_shared<detail::CompactCall>(detail::SelectedRows::values(c.n(), w, values.dtype()), c.count,
                                                           c.ends_t, out_shape),
                 &flat);
}

// The coordinates (int64) of the True elements of `mask`, of an array of shape `shape`:
// (count, shape.ndim()), or (count,) for `flat` (a 1-D shape: the positions themselves).
Array select_coordinates(const Array& mask, const Shape& shape, bool flat = false) {
  const int r = shape.ndim();
  std::vector<int64_t> st(static_cast<size_t>(r)), sh(static_cast<size_t>(r));
  int64_t s = 1;
  for (int d = r - 1; d >= 0; --d) {
    st[d] = s;
    sh[d] = shape[d];
    s *= std::max<int64_t>(shape[d], 1);
  }
  const int64_t n = mask.size(), w = flat ? 1 : r;
  if (one_pass(n, w, DType::Int64)) {
    const Shape buf = flat ? Shape{n} : Shape{n, r};
    return select_one_pass(mask, detail::SelectedRows::coordinates(n, st, sh), nullptr, buf);
  }
  const CountedMask c = count_mask(mask);
  const Shape out = flat ? Shape{c.count} : Shape{c.count, r};
  if (c.count == 0) return empty(flat ? Shape{0} : Shape{0, r}, DType::Int64);
  return compact(c, std::make_shared<detail::CompactCall>(detail::SelectedRows::coordinates(c.n(), st, sh), c.count, c.ends_t, out),
                 nullptr);
}

Array nonzero_mask(const Array& a) { return a.dtype() == DType::Bool ? a : not_equal(a, 0); }

void compaction_require(const Array& a, const char* what) {
  if (!a.defined()) throw ValueError(fmt::format("{}: the Array handle is empty", what));
}

}  // namespace

Array masked_select(const Array& x, const Array& mask) {
  compaction_require(x, "x[mask]");
  compaction_require(mask, "x[mask]");
  detail::refuse_selection_in_trace(mask, "x[mask]");
  if (mask.dtype() != DType::Bool) throw IndexError("x[mask]: the mask must be a bool array");
  detail::require_mask_shape(x, mask);
  const int k = mask.ndim();
  if (k == 0) {  // x[True] is x[None]; x[False] an empty (0,) + x.shape
    Shape s{1};
    for (auto d : x.shape()) s.push_back(d);
    return select_rows(x.reshape(s), mask.reshape(Shape{1}));
  }
  return select_rows(x, mask);
}

Array flatnonzero(const Array& a) {
  compaction_require(a, "flatnonzero");
  detail::refuse_selection_in_trace(a, "flatnonzero");
  return select_coordinates(nonzero_mask(a).ravel(), Shape{a.size()}, /*flat=*/true);
}

Array argwhere(const Array& a) {
  compaction_require(a, "argwhere");
  detail::refuse_selection_in_trace(a, "argwhere");
  if (a.ndim() == 0)  // NumPy: shape (1, 0) or (0, 0)
    return empty(Shape{count_mask(nonzero_mask(a).reshape(Shape{1})).count, 0}, DType::Int64);
  return select_coordinates(nonzero_mask(a).ravel(), a.shape());
}

std::vector<Array> nonzero(const Array& a) {
  compaction_require(a, "nonzero");
  detail::refuse_selection_in_trace(a, "nonzero");
  if (a.ndim() == 0)
    throw ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead. If "
                     "the context of this error is of the form `arr[nonzero(cond)]`, just use `arr[cond]`.");
  if (a.ndim() == 1) return {flatnonzero(a)};
  Array w = argwhere(a);
  std::vector<Array> out;
  for (int d = 0; d < a.ndim(); ++d) out.push_back(w.index({_, d}));
  return out;
}

std::vector<Array> where(const Array& condition) { return nonzero(condition); }

Array extract(const Array& condition, const Array& a) {
  compaction_require(condition, "extract");
  compaction_require(a, "extract");
  detail::refuse_selection_in_trace(condition, "extract");
  const int64_t n = condition.size();
  if (n <= a.size()) return select_rows(a.ravel().index({slice(0, n)}), nonzero_mask(condition).ravel());
  return take(a.ravel(), flatnonzero(condition));  // a True past a's end: NumPy's IndexError
}

Array compress(const Array& condition, const Array& a, std::optional<int> axis) {
  compaction_require(condition, "compress");
  compaction_require(a, "compress");
  detail::refuse_selection_in_trace(condition, "compress");
  if (condition.ndim() != 1) throw ValueError("compress: condition must be a 1-d array");
  return take(a, flatnonzero(condition), axis);
}

}  // namespace cufuse
