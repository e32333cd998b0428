// codegen/flat_values.cpp: an elementwise subgraph's value at a flat position (see
// flat_values.hpp): memory at its stride, scalars, generators and view chains at their
// layout's position, ops from the op table, each node once.
#include "codegen/flat_values.hpp"

#include <unordered_map>

#include <fmt/format.h>

#include "core/walk.hpp"
#include "cufuse/error.hpp"
#include "graph/gather.hpp"

namespace cufuse::detail {

namespace {
// A leaf's (or a view's) single stride over its 1-D shape (0 for a 0-d one).
int64_t stride_1d(const Layout& l) {
  if (l.shape.ndim() > 1) throw InternalError(fmt::format("a flat read of a {}-d layout", l.shape.ndim()));
  return l.shape.ndim() == 1 ? l.strides[0] : 0;
}
}  // namespace

int64_t flat_span(const Node* root, const LeafBinding& bind) {
  int64_t m = root->numel();
  VisitedSet seen;
  walk_post_order(
      root, [&](const Node* n) { return seen.contains(n); },
      [&](const Node* n) { return !reads_memory(n, bind) && n->k() == NodeKind::Elementwise; },
      [&](const Node* n) {
        seen.insert(n);
        if (reads_memory(n, bind)) {
          const Layout l = memory_layout(n, bind);
          m = std::max(m, span_of(l.shape, l.strides, 0));
        } else if (n->k() == NodeKind::View) {
          m = std::max({m, span_of(n->shape(), n->layout.strides, n->layout.offset), chain_span(n)});
        } else if (n->k() == NodeKind::Generator) {
          m = std::max(m, span_of(n->shape(), n->layout.strides, n->layout.offset));
        }
      });
  return m;
}

bool flat_contiguous_memory(ExprEmitter& e, const Node* root, const std::string& name) {
  if (!reads_memory(root, e.bind) || root->ndim() != 1 || stride_1d(memory_layout(root, e.bind)) != 1) return false;
  e.add_memory_ptr(name, root, true);
  return true;
}

std::string flat_value_function(ExprEmitter& e, const Node* root, const std::string& pfx, const std::string& fn,
                                const std::string& params_type) {
  std::string saved;
  std::swap(saved, e.code);
  std::unordered_map<const Node*, std::string> vals;
  int acc = 0;
  const std::string& I = e.idx();
  // A leaf's, generator's or view's position at i: its offset plus i times its stride
  // (parameters <name>_off and <name>_s, where they are not 0 and 1).
  auto position = [&](const std::string& name, const Layout& l, bool with_offset) {
    const int64_t s = stride_1d(l);
    std::string pos = s == 0 ? std::string("0") : s == 1 ? std::string("(long long)i") : "(long long)i * p." + name + "_s";
    if (s != 0 && s != 1) e.add_idx(name + "_s", s);
    if (with_offset && l.offset != 0) {
      e.add_idx(name + "_off", l.offset);
      pos = fmt::format("(long long)p.{}_off + {}", name, pos);
    }
    return pos;
  };
  walk_post_order(
      root, [&](const Node* n) { return vals.count(n) != 0; },
      [&](const Node* n) { return !reads_memory(n, e.bind) && n->k() == NodeKind::Elementwise; },
      [&](const Node* n) {
        const std::string name = fmt::format("{}{}", pfx, acc);
        std::string v;
        if (reads_memory(n, e.bind)) {
          ++acc;
          e.add_memory_ptr(name, n, true);
          v = e.fresh();
          e.line(fmt::format("const {} {} = {};", reg_type(n->dtype), v,
                             load_expr(n->dtype, fmt::format("p.{}[{}]", name, position(name, memory_layout(n, e.bind), false)))),
                 2);
        } else if (n->k() == NodeKind::Scalar) {
          ++acc;
          e.add_scalar(name, n);
          v = "p." + name;
        } else if (n->k() == NodeKind::Generator) {
          ++acc;
          v = e.gen_value(n, name, position(name, n->layout, true));
        } else if (n->k() == NodeKind::View && !is_gather(*n)) {
          ++acc;
          v = e.chain_value(n, name, position(name, n->layout, true));
        } else if (n->k() == NodeKind::Elementwise) {
          std::vector<std::string> in(n->inputs.size());
          for (size_t k = 0; k < n->inputs.size(); ++k) in[k] = vals.at(n->inputs[k].get());
          v = e.op_value(n, in.data());
        } else {
          throw InternalError(fmt::format("a flat value met a {} node (the fused-input rule takes none)", kind_name(n->k())));
        }
        vals[n] = v;
      });
  std::swap(saved, e.code);
  return fmt::format("__device__ __forceinline__ {} {}(const {}& p, const {} i) {{\n  (void)i;\n{}  return {};\n}}\n",
                     reg_type(root->dtype), fn, params_type, I, saved, vals.at(root));
}

}  // namespace cufuse::detail
