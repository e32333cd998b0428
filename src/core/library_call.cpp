// src/core/library_call.cpp: building the nodes of a library call.
#include "core/library_call.hpp"

namespace cufuse::detail {

std::vector<NodePtr> make_library_nodes(std::shared_ptr<const LibraryCall> call, InputVec inputs) {
  std::vector<NodePtr> out;
  for (int i = 0; i < call->num_outputs(); ++i) {
    auto n = new_node(NodeKind::Library);
    n->dtype = call->output_dtype(i);
    n->layout.shape = call->output_shape(i);
    n->op = static_cast<uint16_t>(i);
    n->inputs = inputs;
    n->attrs = LibraryAttrs{call, i};
    finish_node(*n);
    n->hash = hash_mix(n->hash, call->attributes_hash());
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace cufuse::detail
