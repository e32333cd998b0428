// src/core/node_names.hpp: what computes a node, in a word or three ("add",
// "astype(float16)", "sum over axes (1,)", "matmul"), for plan dumps, cut reasons and the
// CLI's report. One place, so the dump and the tool name a node alike.
#pragma once
#include <string>

#include "core/node.hpp"

namespace cufuse::detail {

class LibraryCall;

// The first word of a library call's description: "matmul".
std::string call_name(const LibraryCall& c);
// What computes n: its op, view, generator, reduction (with its axes) or call.
std::string node_op_name(const Node& n);
// node_op_name with the node's dtype and shape: "sum over axes (1,) f32 (8192,)".
std::string node_summary(const Node& n);

}  // namespace cufuse::detail
