// src/graph/activations.cpp: relu and gelu (include/cufuse/linalg.hpp) as graph expressions.
// gelu's tree is the one the GEMM-epilogue rule (src/plan/epilogue.cpp) turns into a cuBLASLt
// epilogue after a GEMM.
#include "graph/activations.hpp"

#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"

namespace cufuse {

Array relu(const Array& x) { return maximum(x, 0); }

Array gelu(const Array& x) {
  using detail::kGeluA;
  using detail::kGeluC;
  Array x3 = multiply(multiply(x, x), x);
  Array inner = add(x, multiply(x3, kGeluA));
  Array t = tanh(multiply(inner, kGeluC));
  return multiply(multiply(x, 0.5), add(t, 1.0));
}

}  // namespace cufuse
