// src/core/node_attrs.hpp: the kind-specific attributes of a Node, typed. A Reduce node (or
// scan) holds ReduceAttrs, a Library node LibraryAttrs, a mapped View its IndexMap
// (graph/index_map.hpp), a gather View its GatherAttrs and a scatter its ScatterAttrs
// (graph/gather.hpp), every other node nothing (std::monostate). Read them with reduce_attrs(n) / library_attrs(n) (core/reduce_attrs.hpp,
// core/library_call.hpp), which check the alternative.
#pragma once
#include <cstdint>
#include <memory>
#include <variant>

#include "cufuse/enum_names.hpp"
#include "cufuse/shape.hpp"

namespace cufuse::detail {

// User: a ReductionKernel's reduction; the node's op is its id in codegen/user_kernel.hpp.
#define CUFUSE_REDUCE_OPS(X) \
  X(Sum, "sum")              \
  X(Prod, "prod")            \
  X(Max, "max")              \
  X(Min, "min")              \
  X(NanMax, "nanmax")        \
  X(NanMin, "nanmin")        \
  X(Any, "any")              \
  X(All, "all")              \
  X(ArgMax, "argmax")        \
  X(ArgMin, "argmin")        \
  X(CumSum, "cumsum")        \
  X(CumProd, "cumprod")      \
  X(User, "user")
enum class ReduceOp : uint8_t { CUFUSE_REDUCE_OPS(CUFUSE_ENUMERATOR) };

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

// A mapped View's per-axis coordinate maps (graph/index_map.hpp says what each does).
#define CUFUSE_AXIS_MAP_KINDS(X) \
  X(Identity, "identity")        \
  X(Clamp, "clamp")              \
  X(Wrap, "wrap")                \
  X(Div, "div")                  \
  X(Reflect, "reflect")          \
  X(Symmetric, "symmetric")      \
  X(Feistel, "feistel")
enum class AxisMapKind : uint8_t { CUFUSE_AXIS_MAP_KINDS(CUFUSE_ENUMERATOR) };
struct AxisMap {
  AxisMapKind kind = AxisMapKind::Identity;
  int64_t shift = 0;  // Clamp, Wrap, Reflect, Symmetric: subtracted first
  int64_t n = 1;      // the input's extent along the axis
  int64_t r = 1;      // Div: the repeat count
  uint64_t seed = 0;  // Feistel: the key
};
struct IndexMap {
  SmallVec<AxisMap, 8> axes;  // one per output axis (the input has the same rank)
  uint64_t hash() const;      // graph/index_map.cpp
  bool operator==(const IndexMap& o) const;
};

// A gather View's and a scatter Elementwise node's attributes (graph/gather.hpp says more).
struct SubscriptOrigin;  // graph/gather.hpp: where an x[idx] gather came from
struct GatherAttrs {
  SmallVec<int64_t, 8> size;  // per src dim: the length an index is wrapped/checked against, or -1 (never out of range)
  SmallVec<int64_t, 8> axis;  // per src dim: the axis an IndexError names
  bool has_err = false;       // the last input is the device error word
  std::shared_ptr<const SubscriptOrigin> origin;  // x[idx] results only
};
enum class ScatterMode : uint8_t { Assign, Add, Max, Min };
struct ScatterAttrs {
  ScatterMode mode = ScatterMode::Assign;
  Shape iter;                 // the update shape
  SmallVec<int64_t, 8> size;  // per target dim: length for wrapping/checking, or -1
  SmallVec<int64_t, 8> axis;  // per target dim: the axis an IndexError names
  bool has_pred = false;
  bool has_err = false;
};

// The maps, gathers and scatters are shared between the nodes that carry them (pushed down
// through elementwise work, copied by replay): held by shared_ptr, immutable.
using NodeAttrs = std::variant<std::monostate, ReduceAttrs, LibraryAttrs, std::shared_ptr<const IndexMap>,
                               std::shared_ptr<const GatherAttrs>, std::shared_ptr<const ScatterAttrs>>;

inline bool has_attrs(const NodeAttrs& a) { return !std::holds_alternative<std::monostate>(a); }

}  // namespace cufuse::detail
