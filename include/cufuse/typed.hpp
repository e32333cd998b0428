// cufuse/typed.hpp: typed expression templates (issue 34). cufuse::Tensor<T, N> is an Array
// with a static dtype and rank; operators and NumPy-named functions on Tensors and C++
// scalars return expression objects whose type is the op tree (nothing allocated, no graph
// node). Their dtypes follow NumPy 2 with weak scalars, computed at compile time
// (typed_rules.hpp, a Boost.Hana table made from the op table's rows); a dtype or rank
// error is a static_assert naming the op and the dtypes. Evaluating one (assigning it to a
// Tensor, cufuse::eval, .item(), .to_host()) plans it once per expression type and then
// replays that plan as fuse() does (typed_eval.hpp); used as an Array it is a lazy node.
//
//   cf::Tensor<float, 1> x = cf::tensor_cast<float, 1>(a), y = ...;
//   cf::Tensor<float, 1> d = (x - y) * (x - y);        // one kernel; planned on the first call only
//   float s = cf::sum(d * 0.5f).item();                 // rank 0, float32
//   auto m = cf::max<1>(z, cf::keepdims);               // reductions over static or run-time axes
//   cf::Array lazy = cf::exp(z - m);                    // a lazy node of the dynamic graph
#pragma once
#include "cufuse/typed_eval.hpp"
#include "cufuse/typed_expr.hpp"
#include "cufuse/typed_ops.hpp"
#include "cufuse/typed_rules.hpp"
#include "cufuse/typed_tensor.hpp"

namespace cufuse {
using typed::Tensor;
using typed::tensor_cast;
}  // namespace cufuse
