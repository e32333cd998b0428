// src/core/node_names.cpp: what computes a node, in words (node_names.hpp).
#include "core/node_names.hpp"

#include <fmt/format.h>

#include "core/library_call.hpp"
#include "core/op_table.hpp"
#include "core/reduce_attrs.hpp"

namespace cufuse::detail {

namespace {
std::string axes_text(const Axes& a) { return to_string(Shape(a.begin(), a.end())); }
}  // namespace

std::string call_name(const LibraryCall& c) {
  std::string d = c.describe();
  return d.substr(0, d.find(' '));
}

std::string node_op_name(const Node& n) {
  switch (n.k()) {
    case NodeKind::Elementwise: {
      if (is_user_op(n.op)) return "user op";
      const auto& row = op_row(static_cast<Op>(n.op));
      if (row.id == Op::Cast) return fmt::format("astype({})", name(n.dtype));
      return row.name;
    }
    case NodeKind::View: return "view";
    case NodeKind::Generator: return gen_name(static_cast<GenKind>(n.op));
    case NodeKind::Reduce: {
      if (!has_attrs(n.attrs)) return "reduce";
      const auto& a = reduce_attrs(n);
      if (is_scan(a.op)) return fmt::format("{} along axis {}", reduce_name(a.op), a.axes.empty() ? 0 : a.axes[0]);
      return fmt::format("{} over axes {}{}", reduce_name(a.op), axes_text(a.axes), a.keepdims ? " (keepdims)" : "");
    }
    case NodeKind::Library: {
      if (!has_attrs(n.attrs)) return "library";
      const auto& a = library_attrs(n);
      const std::string nm = call_name(*a.call);
      return a.call->num_outputs() > 1 ? fmt::format("{} output {}", nm, a.output) : nm;
    }
    default: return kind_name(n.k());
  }
}

std::string node_summary(const Node& n) {
  return fmt::format("{} {} {}", node_op_name(n), info(n.dtype).short_name, to_string(n.shape()));
}

}  // namespace cufuse::detail
