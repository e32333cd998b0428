// src/core/node_attrs.hpp: the kind-specific attributes of a Node, typed. A Reduce node (or
// scan) holds ReduceAttrs, a Library node LibraryAttrs, a mapped View its IndexMap
// (graph/index_map.hpp), every other node nothing (std::monostate). Read them with reduce_attrs(n) / library_attrs(n) (core/reduce_attrs.hpp,
// core/library_call.hpp), which check the alternative.
#pragma once
#include <cstdint>
#include <memory>
#include <variant>

#include "cufuse/shape.hpp"

namespace cufuse::detail {

// User: a ReductionKernel's reduction; the node's op is its id in codegen/user_kernel.hpp.
enum class ReduceOp : uint8_t { Sum, Prod, Max, Min, NanMax, NanMin, Any, All, ArgMax, ArgMin, CumSum, CumProd, User };

// What a Reduce or Scan node computes (core/reduce_attrs.hpp says more).
struct ReduceAttrs {
  ReduceOp op;
  Axes axes;      // sorted, in the input's coordinates
  bool keepdims;
};

class LibraryCall;  // core/library_call.hpp
// Which output of which call a Library node is.
struct LibraryAttrs {
  std::shared_ptr<const LibraryCall> call;
  int output = 0;
};

struct IndexMap;  // graph/index_map.hpp: a mapped View's per-axis coordinate maps (shared, immutable)

using NodeAttrs = std::variant<std::monostate, ReduceAttrs, LibraryAttrs, std::shared_ptr<const IndexMap>>;

inline bool has_attrs(const NodeAttrs& a) { return !std::holds_alternative<std::monostate>(a); }

}  // namespace cufuse::detail
