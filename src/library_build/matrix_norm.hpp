// src/library_build/matrix_norm.hpp: the matrix norms linalg::norm (linalg.cpp) routes to:
// over two axes, or a 2-D array with an ord and no axis.
#pragma once
#include <optional>

#include "cufuse/array.hpp"

namespace cufuse::detail {

// ord: none = Frobenius; 1, -1, 2, -2, inf, -inf (ValueError otherwise). x is floating.
Array matrix_norm_axes(const Array& x, std::optional<double> ord, int axis0, int axis1, bool keepdims);

}  // namespace cufuse::detail
