// src/reference/op_reference.hpp: the host reference of each op of the op table
// (src/core/op_table.hpp), instantiated from the very expression the CUDA code uses.
#pragma once
#include <cstdint>

#include "core/op_table.hpp"

namespace cufuse::detail {

// Host reference of one op over n elements: inputs already converted to their compute
// types (float for float16/bfloat16), output written in the result's compute type.
using RefFn = void (*)(DType compute, DType result, const void* const* in, void* out, int64_t n);

RefFn op_reference(Op op);

}  // namespace cufuse::detail
