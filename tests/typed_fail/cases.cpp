// tests/typed_fail/cases.cpp: typed expressions that must not compile, one per -DCASE=N
// (tests/typed_compile_fail.cmake compiles each and checks the static_assert's message and
// the op and dtypes it names). CASE=0 is the same code written right: it must compile.
#include "cufuse/typed.hpp"

namespace cf = cufuse;

void cases(cf::Tensor<float, 1> x, cf::Tensor<float, 2> m, cf::Tensor<int32_t, 1> i, cf::Tensor<bool, 1> b) {
#if CASE == 0
  cf::Tensor<float, 1> ok = cf::astype<float>((x - i) * 2.0f);  // float32 - int32 is float64: cast back
  (void)ok;
#elif CASE == 1  // a bitwise op on floats
  auto e = x & x;
#elif CASE == 2  // a bitwise op on a float and a weak int
  auto e = cf::left_shift(x, 2);
#elif CASE == 3  // subtracting bools
  auto e = b - b;
#elif CASE == 4  // storing float32 into a float64 Tensor
  cf::Tensor<double, 1> d = x * 2;
#elif CASE == 5  // storing a rank-2 expression into a rank-1 Tensor
  cf::Tensor<float, 1> d = x * m;
#elif CASE == 6  // a reduction axis past the rank
  auto s = cf::sum<2>(m);
#elif CASE == 7  // a reduction naming one axis twice
  auto s = cf::sum<0, -2>(m);
#elif CASE == 8  // int32 += float32 (the result, float64, is not same_kind castable to int32)
  i += x;
#elif CASE == 9  // an in-place op whose value has more axes than the target
  x += m;
#elif CASE == 10  // more indices than axes
  auto v = x(1, 2);
#elif CASE == 11  // a Tensor of a C++ type with no dtype
  cf::Tensor<char*, 1> t;
#elif CASE == 12  // invert of a float expression
  auto e = ~(x * 2);
#endif
}
