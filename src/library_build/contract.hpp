// src/library_build/contract.hpp: internal entry points shared by the contraction front ends
// (matmul.cpp, einsum.cpp, linalg.cpp, diagonal.cpp).
#pragma once
#include <optional>

#include "core/node.hpp"
#include "cufuse/array.hpp"

namespace cufuse::detail {

// matmul(a, b) whose result is seen as `out_shape` (same size: the contiguous result
// reshaped), so that a reshape after the GEMM costs no copy kernel (einsum, tensordot).
Array matmul_shaped(const Array& a, const Array& b, const std::optional<Shape>& out_shape);

// A view of the diagonal over axes a1 != a2 (normalized), offset as NumPy's diagonal; the
// diagonal becomes the last axis. Lazy inputs are remapped down to their leaves.
NodePtr diagonal_node(const NodePtr& n, int64_t offset, int a1, int a2);

// tril/triu of the last two axes (k = 0), as one fused where() over the input.
Array tril_last2(const Array& x);
Array triu_last2(const Array& x);

}  // namespace cufuse::detail
