// src/graph/size_check.hpp: the one check of a new shape's size. Every place that makes a
// shape from numbers a user gave (creation, arange/linspace, broadcasting, reshape) asks it,
// so that a shape whose element count or byte count is past what int64 or any allocation
// can hold is a ValueError naming the shape, never a wrapped product (issue 38).
#pragma once
#include <cstdint>
#include <string_view>

#include "cufuse/shape.hpp"

namespace cufuse::detail {

// Throws ValueError when a dimension of `shape` is negative, or when its element count
// times `itemsize` is past PTRDIFF_MAX ("array is too big"). `what` names the caller.
void check_size(const Shape& shape, int64_t itemsize, std::string_view what);

// The same for a 1-D count (arange, linspace): `count` elements of `itemsize` bytes.
void check_count(int64_t count, int64_t itemsize, std::string_view what);

}  // namespace cufuse::detail
