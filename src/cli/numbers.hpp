// src/cli/numbers.hpp: arithmetic on Python numbers (bool, int, float) done on the host,
// as Python does it: `-1`, `2*3` in a shape, `1/3`, `7 // -2`, `2**10`. Results stay weak
// (Python scalars); a strong operand (float32(2)) makes a strong result of NumPy's dtype.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "cufuse/scalar.hpp"

namespace cufuse::cli {

// a OP b for OP in + - * / // % ** & | ^ << >> < <= > >= == != (not @). Throws
// cufuse::ValueError / OverflowError / TypeError with Python's message on a bad operation
// (division by zero, integer overflow, bitwise ops on floats).
Scalar number_binary(std::string_view op, const Scalar& a, const Scalar& b);
// OP a for OP in - + ~.
Scalar number_unary(std::string_view op, const Scalar& a);

}  // namespace cufuse::cli
