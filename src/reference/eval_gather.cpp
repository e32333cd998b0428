// src/reference/eval_gather.cpp: gather views and scatter nodes on the host (graph/gather.hpp).
// Indices are wrapped once when negative and checked directly: an index out of bounds throws
// NumPy's IndexError here, where the device records it for the next synchronization point.
// A scatter applies its updates in order, so of duplicate indices an assignment keeps the
// last value (NumPy's order) and add/max/min combine them all.
#include <fmt/format.h>

#include "codegen/host_helpers.hpp"
#include "graph/gather.hpp"
#include "reference/eval_nodes.hpp"
#include "reference/host_data.hpp"

namespace cufuse::detail::ref {

namespace {
// The row-major element number of index values E[.](i), wrapped and checked.
int64_t flat_index(const HostArray* const* E, int r, int64_t i, const Strides& st, const SmallVec<int64_t, 8>& size,
                   const SmallVec<int64_t, 8>& axis) {
  int64_t off = 0;
  for (int d = 0; d < r; ++d) {
    const int64_t raw = E[d]->get_int64(i);
    int64_t e = raw;
    if (size[d] >= 0) {
      if (e < 0) e += size[d];
      if (e < 0 || e >= size[d]) throw IndexError(index_error_message(raw, axis[d], size[d]));
    }
    off += e * st[d];
  }
  return off;
}
}  // namespace

HostArray eval_gather(const Node& n, const HostArray* const* inputs) {
  const GatherAttrs& at = gather_attrs(n);
  const HostArray& src = *inputs[0];
  const int r = gather_rank(n);
  HostArray out = make_host_array(n.dtype, n.shape());
  const int64_t isz = itemsize(n.dtype);
  const Strides st = contiguous_strides(src.shape);
  for (int64_t i = 0, m = out.size(); i < m; ++i) {
    const int64_t off = flat_index(inputs + 1, r, i, st, at.size, at.axis);
    std::memcpy(out.bytes.data() + i * isz, src.bytes.data() + off * isz, static_cast<size_t>(isz));
  }
  return out;
}

HostArray eval_scatter(const Node& n, const HostArray* const* inputs) {
  const ScatterAttrs& at = scatter_attrs(n);
  const int r = scatter_rank(n);
  HostArray out = *inputs[0];
  const HostArray& val = *inputs[1];
  const HostArray* pred = at.has_pred ? inputs[2 + r] : nullptr;
  const DType t = n.dtype;
  const int64_t isz = itemsize(t);
  const Strides st = contiguous_strides(n.shape());
  for (int64_t i = 0, m = numel(at.iter); i < m; ++i) {
    if (pred && pred->get_int64(i) == 0) continue;
    const int64_t off = flat_index(inputs + 2, r, i, st, at.size, at.axis);
    unsigned char* dst = out.bytes.data() + off * isz;
    const unsigned char* v = val.bytes.data() + i * isz;
    if (at.mode == ScatterMode::Assign) {
      std::memcpy(dst, v, static_cast<size_t>(isz));
      continue;
    }
    with_compute_type(t, [&](auto tg) {
      using C = typename decltype(tg)::type;
      C cur, add;
      to_compute(t, dst, t, &cur, 1);
      to_compute(t, v, t, &add, 1);
      C res;
      if constexpr (std::is_same_v<C, bool>) {
        res = at.mode == ScatterMode::Min ? (cur && add) : (cur || add);
      } else if constexpr (is_cplx_v<C>) {  // complex: adds only (graph/scatter.cpp refuses max/min)
        res = cur + add;
      } else if (at.mode == ScatterMode::Add) {
        res = static_cast<C>(cur + add);
      } else if (at.mode == ScatterMode::Max) {
        res = ref_kern::cf_maximum<C>(cur, add);
      } else {
        res = ref_kern::cf_minimum<C>(cur, add);
      }
      compute_to_storage(t, &res, dst, 1);
    });
  }
  return out;
}

}  // namespace cufuse::detail::ref
