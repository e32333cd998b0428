// src/graph/activations.hpp: the constants of cufuse::gelu's tanh form (graph/activations.cpp
// builds the tree; the planner's GEMM-epilogue rule, plan/epilogue.cpp, matches exactly it).
#pragma once

namespace cufuse::detail {

inline constexpr double kGeluC = 0.7978845608028654;  // sqrt(2/pi)
inline constexpr double kGeluA = 0.044715;

}  // namespace cufuse::detail
