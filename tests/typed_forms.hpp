// tests/typed_forms.hpp: the expressions the typed tests (tests/test_typed.cpp,
// tests/gpu/test_typed_gpu.cpp) write once for Tensors and Arrays: W7a and W7b
// (bench/overhead.cpp), softmax and layernorm over rows, in the typed and dynamic spellings.
#pragma once
#include <cufuse/cufuse.hpp>

namespace typed_forms {

namespace cf = cufuse;

inline auto w7a = [](const auto& x, const auto& y) { return (x - y) * (x - y); };
inline auto w7b = [](const auto& x, const auto& y) {
  return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1);
};
inline auto softmax = [](const auto& x) {
  auto e = cf::exp(x - cf::max<1>(x, cf::keepdims));
  return e / cf::sum<1>(e, cf::keepdims);
};
inline auto softmax_dyn = [](const cf::Array& x) {
  auto e = cf::exp(x - cf::max(x, 1, true));
  return e / cf::sum(e, 1, true);
};
inline auto layernorm = [](const auto& x) {
  auto c = x - cf::mean<1>(x, cf::keepdims);
  return c / cf::sqrt(cf::var<1>(x, cf::keepdims) + 1e-5f);
};
inline auto layernorm_dyn = [](const cf::Array& x) {
  auto c = x - cf::mean(x, 1, true);
  return c / cf::sqrt(cf::var(x, 1, 0, true) + 1e-5f);
};

}  // namespace typed_forms
