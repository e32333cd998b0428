// src/reference/eval_index_map.cpp: a mapped view (graph/index_map.hpp) on the host: each
// output element copies its input's element at the mapped coordinates, through the same
// cf_imap_* and cf_feistel formulas the kernels use (codegen/device_helpers.inc).
#include <cstring>

#include <fmt/format.h>

#include "codegen/host_helpers.hpp"
#include "graph/index_map.hpp"
#include "reference/eval_nodes.hpp"
#include "reference/host_data.hpp"

namespace cufuse::detail::ref {

namespace {
int64_t map_coordinate(const AxisMap& m, int64_t o) {
  switch (m.kind) {
    case AxisMapKind::Identity: return o;
    case AxisMapKind::Clamp: return ref_kern::cf_imap_clamp(o, m.shift, m.n);
    case AxisMapKind::Wrap: return ref_kern::cf_imap_wrap(o, m.shift, m.n);
    case AxisMapKind::Div: return o / m.r;
    case AxisMapKind::Reflect: return ref_kern::cf_imap_reflect(o, m.shift, m.n);
    case AxisMapKind::Symmetric: return ref_kern::cf_imap_symmetric(o, m.shift, m.n);
    case AxisMapKind::Feistel: return ref_kern::cf_feistel(o, m.n, m.seed);
  }
  return o;
}
}  // namespace

HostArray eval_mapped_view(const Node& n, const HostArray& in) {
  const IndexMap& map = *index_map_of(n);
  HostArray out = make_host_array(n.dtype, n.shape());
  const int64_t total = out.size();
  if (total == 0) return out;
  const int nd = n.ndim();
  const int isz = itemsize(n.dtype);
  const Shape& s = n.shape();
  std::vector<int64_t> o(static_cast<size_t>(nd), 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t pos = n.layout.offset;
    for (int d = 0; d < nd; ++d) {
      const int64_t c = map_coordinate(map.axes[d], o[d]);
      if (c < 0 || c >= in.shape[d])
        throw InternalError(fmt::format("reference evaluator: a {} map sent coordinate {} of axis {} to {} (extent {})",
                                        axis_map_name(map.axes[d].kind), o[d], d, c, in.shape[d]));
      pos += c * n.layout.strides[d];
    }
    std::memcpy(out.bytes.data() + i * isz, in.bytes.data() + pos * isz, static_cast<size_t>(isz));
    for (int d = nd - 1; d >= 0; --d) {  // the next output coordinates, row-major
      if (++o[d] < s[d]) break;
      o[d] = 0;
    }
  }
  return out;
}

}  // namespace cufuse::detail::ref
