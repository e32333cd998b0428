// src/reference/eval_nodes.hpp: the reference evaluation of one node of each kind, given
// its inputs' results (src/reference/evaluator.cpp walks the DAG and calls these).
#pragma once
#include "reference/evaluator.hpp"

namespace cufuse::detail::ref {

// A row-major array of `shape` and dtype t, its bytes allocated (not zeroed).
HostArray make_host_array(DType t, const Shape& shape);

HostArray eval_buffer(const Node& n);      // reference/eval_leaves.cpp
HostArray eval_scalar(const Node& n);      // reference/eval_leaves.cpp
HostArray eval_generator(const Node& n);   // reference/eval_generators.cpp
HostArray eval_elementwise(const Node& n, const HostArray* const* inputs);  // reference/eval_elementwise.cpp
HostArray eval_view(const Node& n, const HostArray& input);                 // reference/eval_elementwise.cpp
HostArray eval_mapped_view(const Node& n, const HostArray& input);          // reference/eval_index_map.cpp
HostArray eval_reduce(const Node& n, const HostArray& input);               // reference/eval_reduce.cpp
HostArray eval_library(const Node& n, const HostArray* const* inputs);      // reference/eval_library.cpp
HostArray eval_gather(const Node& n, const HostArray* const* inputs);       // reference/eval_gather.cpp
HostArray eval_scatter(const Node& n, const HostArray* const* inputs);      // reference/eval_gather.cpp

}  // namespace cufuse::detail::ref
