// src/reference/eval_library.cpp: the reference of a Library node: the call's own host
// reference (src/library), run on the inputs' host values; the node takes its output.
#include "core/library_call.hpp"
#include "reference/eval_nodes.hpp"

namespace cufuse::detail::ref {

HostArray eval_library(const Node& n, const HostArray* const* inputs) {
  const auto& at = library_attrs(n);
  std::vector<const HostArray*> ins(inputs, inputs + n.inputs.size());
  std::vector<HostArray> outs;
  for (int k = 0; k < at.call->num_outputs(); ++k) outs.push_back(make_host_array(at.call->output_dtype(k), at.call->output_shape(k)));
  at.call->run_reference(ins, outs);
  return std::move(outs[static_cast<size_t>(at.output)]);
}

}  // namespace cufuse::detail::ref
