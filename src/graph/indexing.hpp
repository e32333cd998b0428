// src/graph/indexing.hpp: the shared steps of advanced indexing (src/graph/indexing.cpp),
// selections by mask (library_build/compaction.cpp) and scatters (scatter.cpp).
#pragma once
#include <string_view>
#include <vector>

#include "cufuse/array.hpp"

namespace cufuse::detail {

// One indexed dim: `dim` of the array gathered from, the axis an IndexError names, the
// integer index array.
struct AdvIndex {
  int dim;
  int axis;
  Array index;
};

int normalize_index_axis(int axis, int ndim, const char* what);
// IndexError unless idx has an integer dtype (not bool).
void require_index_dtype(const Array& idx, const char* what);
// NumPy's IndexError unless a mask's shape is x's leading dims (x[mask], its writes).
void require_mask_shape(const Array& x, const Array& mask);

// take's and put's mode (NumPy's clipmode): a ValueError for any other spelling.
enum class ClipMode { Raise, Clip, Wrap };
ClipMode clip_mode(std::string_view mode);
// The indices brought into [0, n) by clip or wrap (as int64, lazily); raise: unchanged.
Array clip_indices(const Array& indices, int64_t n, ClipMode mode);
// V gathered at the index arrays (broadcast together; placed as NumPy places them); with
// `origin`, the result remembers V and the indices so that a write can scatter through them.
Array gather_dims(const Array& V, const std::vector<AdvIndex>& adv, bool origin);
// x[idx] for an index list holding arrays (NumPy's advanced indexing).
Array advanced_index(const Array& x, const std::vector<Index>& idx, bool origin);

// Operations cufuse::fuse cannot trace (src/graph/trace_refusals.cpp): NotSupportedError
// naming `what` while this thread traces; a selection only when its mask reads an argument.
void refuse_scatter_in_trace(const char* what);
void refuse_selection_in_trace(const Array& mask, const char* what);

// Scatters (src/graph/scatter.cpp): writes `value` (broadcast to the update shape `iter`,
// cast to target's dtype) into the memory of `target` at the index nodes E (one per target
// dim, each an integer node of shape iter; checked[d]: wrapped and bounds-checked), where
// `pred` (a bool node of shape iter, or null) holds. Carried out now, as one kernel.
enum class ScatterModeArg : uint8_t { Assign, Add, Max, Min };
void scatter(Array& target, const std::vector<NodePtr>& E, const std::vector<int>& checked, const Shape& iter,
             const Operand& value, ScatterModeArg mode, const NodePtr& pred = nullptr);

// The scatter node itself (graph/gather.hpp), not carried out: `leaf` is the Buffer leaf of
// the memory written, `v` the value node over iter (of leaf's dtype).
NodePtr make_scatter(const NodePtr& leaf, const std::vector<NodePtr>& E, const std::vector<int>& checked,
                     const Shape& iter, const NodePtr& v, ScatterModeArg mode, const NodePtr& pred = nullptr);

// The write of a temporary x[{...idx...}] (a gather remembering where it came from): true if
// `a` is one, after scattering `value` (combined with `op` unless it is Op::Cast's id); `a`'s
// handle is emptied (the gather is not computed).
bool write_through_subscript(Array& a, uint16_t op, const Operand& value);

}  // namespace cufuse::detail
