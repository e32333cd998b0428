// cufuse/op_rows.hpp: THE op table's rows, one per elementwise op, as X-macros. Everything
// else about an op is read from here: its public declaration (cufuse/ops.hpp), its typing,
// kernel expression and host reference (src/core/op_table.* and src/reference/op_reference.cpp), the reference evaluator, the
// CLI's function table (src/cli/functions.cpp), the NumPy oracle (tests/oracle/gen_cases.py
// parses this file) and the GPU test (tests/gpu/test_elementwise_gpu.cpp).
//
// Adding an op: one row below, its device helper (codegen/device_helpers.inc) where its
// expression needs one, and one test. A composite row instead names a builder in
// src/graph/composites.cpp that defines it from other ops, as NumPy's Python code does.
//
// Columns that more than one list shares:
//   signature  how the op is called (its family; src/core/op_table.cpp's kSignatures names the
//              operands and parameters, with NumPy's defaults):
//                UNARY        f(x)
//                BINARY       f(x1, x2)
//                WHERE        where(condition, x, y)
//                TERNARY      f(x, y, z)
//                CAST         astype(x, dtype): declared by hand (cufuse/ops.hpp)
//                ROUND        round(a, decimals=0)
//                NAN_TO_NUM   nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None)
//                ISCLOSE      isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)
//   precision  what tests may allow against NumPy and between device and host:
//                EXACT        bitwise NumPy's result (NaN payloads aside)
//                EXACT_PM0    the same, except that on a tie of zeros either sign may come
//                             back (NumPy's own loops disagree there: its float16 loops give
//                             the first operand, its SIMD float32/float64 loops the second)
//                ULPS(n)      a float32 result within n units in the last place of NumPy's
//                             float64 value of the same inputs rounded to float32, a float16
//                             or bfloat16 result (computed in float, rounded once) within one
//                             (tests/test_reference_oracle.cpp checks both against float64);
//                             a float64 result within n of NumPy's. Two such results (ours
//                             and NumPy's in one dtype, the device's and the host's) may differ
//                             by twice that: src/core/op_table.hpp's compare_ulps.
#pragma once

// Kernel rows: X(id, NumPy name, operator spelling, signature, type rule, dtype kinds taken,
// bool computes as int8, precision, expression...)
// The expression sees a, b, c of the compute type T and the result type R (src/core/op_table.hpp
// has the type rules and dtype kinds). kKC marks the rows that take complex64/complex128
// (their T is cf_cplx<float/double>, codegen/device_helpers.inc); every other row raises
// TypeError on a complex operand, as NumPy has no loop (floor, remainder, arctan2, cbrt...).
// Ordering comparisons and maximum/minimum/fmax/fmin on complex use NumPy's order (real part,
// then imaginary part; cf_cplx's operators).
#define CUFUSE_ELEMENTWISE_OPS(X)                                                                   \
  X(Add, add, "+", BINARY, Same, kKAll | kKC, false, EXACT, cf_add(a, b))                                 \
  X(Subtract, subtract, "-", BINARY, Same, kKNum | kKC, false, EXACT, cf_sub(a, b))                       \
  X(Multiply, multiply, "*", BINARY, Same, kKAll | kKC, false, EXACT, cf_mul(a, b))                       \
  X(TrueDivide, true_divide, "/", BINARY, TrueDivide, kKAll | kKC, false, EXACT, a / b)                   \
  X(FloorDivide, floor_divide, "//", BINARY, Same, kKAll, true, EXACT, cf_floor_divide(a, b))       \
  X(Remainder, remainder, "%", BINARY, Same, kKAll, true, EXACT, cf_remainder(a, b))                \
  X(Power, power, "**", BINARY, Same, kKAll | kKC, true, ULPS(4), cf_power(a, b))                         \
  X(Maximum, maximum, "", BINARY, Same, kKAll | kKC, false, EXACT_PM0, cf_maximum(a, b))                  \
  X(Minimum, minimum, "", BINARY, Same, kKAll | kKC, false, EXACT_PM0, cf_minimum(a, b))                  \
  X(Fmax, fmax, "", BINARY, Same, kKAll | kKC, false, EXACT_PM0, cf_fmax(a, b))                           \
  X(Fmin, fmin, "", BINARY, Same, kKAll | kKC, false, EXACT_PM0, cf_fmin(a, b))                           \
  X(Arctan2, arctan2, "", BINARY, Float, kKAll, false, ULPS(3), atan2(a, b))                        \
  X(Hypot, hypot, "", BINARY, Float, kKAll, false, ULPS(3), hypot(a, b))                            \
  X(Copysign, copysign, "", BINARY, Float, kKAll, false, EXACT, copysign(a, b))                     \
  X(Less, less, "<", BINARY, Compare, kKAll | kKC, false, EXACT, a < b)                                   \
  X(LessEqual, less_equal, "<=", BINARY, Compare, kKAll | kKC, false, EXACT, a <= b)                      \
  X(Greater, greater, ">", BINARY, Compare, kKAll | kKC, false, EXACT, a > b)                             \
  X(GreaterEqual, greater_equal, ">=", BINARY, Compare, kKAll | kKC, false, EXACT, a >= b)                \
  X(Equal, equal, "==", BINARY, Compare, kKAll | kKC, false, EXACT, a == b)                               \
  X(NotEqual, not_equal, "!=", BINARY, Compare, kKAll | kKC, false, EXACT, a != b)                        \
  X(LogicalAnd, logical_and, "", BINARY, Logical, kKAll | kKC, false, EXACT, a && b)                      \
  X(LogicalOr, logical_or, "", BINARY, Logical, kKAll | kKC, false, EXACT, a || b)                        \
  X(LogicalXor, logical_xor, "", BINARY, Logical, kKAll | kKC, false, EXACT, a != b)                      \
  X(BitwiseAnd, bitwise_and, "&", BINARY, Same, kKB | kKInt, false, EXACT, a & b)                   \
  X(BitwiseOr, bitwise_or, "|", BINARY, Same, kKB | kKInt, false, EXACT, a | b)                     \
  X(BitwiseXor, bitwise_xor, "^", BINARY, Same, kKB | kKInt, false, EXACT, a ^ b)                   \
  X(LeftShift, left_shift, "<<", BINARY, Same, kKB | kKInt, true, EXACT, cf_left_shift(a, b))       \
  X(RightShift, right_shift, ">>", BINARY, Same, kKB | kKInt, true, EXACT, cf_right_shift(a, b))    \
  X(Negative, negative, "", UNARY, Same, kKNum | kKC, false, EXACT, cf_neg(a))                            \
  X(Positive, positive, "", UNARY, Same, kKNum | kKC, false, EXACT, a)                                    \
  X(Absolute, absolute, "", UNARY, Real, kKAll | kKC, false, EXACT, cf_abs(a))                            \
  X(Sign, sign, "", UNARY, Same, kKNum | kKC, false, EXACT_PM0, cf_sign(a))                               \
  X(Square, square, "", UNARY, Same, kKAll | kKC, true, EXACT, cf_mul(a, a))                              \
  X(Reciprocal, reciprocal, "", UNARY, Same, kKAll | kKC, true, EXACT, cf_reciprocal(a))                  \
  X(Floor, floor, "", UNARY, Same, kKAll, false, EXACT, cf_floor(a))                                \
  X(Ceil, ceil, "", UNARY, Same, kKAll, false, EXACT, cf_ceil(a))                                   \
  X(Trunc, trunc, "", UNARY, Same, kKAll, false, EXACT, cf_trunc(a))                                \
  X(Rint, rint, "", UNARY, Float, kKAll | kKC, false, EXACT, rint(a))                                     \
  X(LogicalNot, logical_not, "", UNARY, Logical, kKAll | kKC, false, EXACT, !a)                           \
  X(Invert, invert, "~", UNARY, Same, kKB | kKInt, false, EXACT, cf_invert(a))                      \
  X(IsNan, isnan, "", UNARY, Predicate, kKAll | kKC, false, EXACT, cf_isnan(a))                           \
  X(IsInf, isinf, "", UNARY, Predicate, kKAll | kKC, false, EXACT, cf_isinf(a))                           \
  X(IsFinite, isfinite, "", UNARY, Predicate, kKAll | kKC, false, EXACT, cf_isfinite(a))                  \
  X(Sqrt, sqrt, "", UNARY, Float, kKAll | kKC, false, EXACT, sqrt(a))                                     \
  X(Cbrt, cbrt, "", UNARY, Float, kKAll, false, ULPS(2), cbrt(a))                                   \
  X(Exp, exp, "", UNARY, Float, kKAll | kKC, false, ULPS(2), exp(a))                                      \
  X(Exp2, exp2, "", UNARY, Float, kKAll | kKC, false, ULPS(2), exp2(a))                                   \
  X(Expm1, expm1, "", UNARY, Float, kKAll | kKC, false, ULPS(2), expm1(a))                                \
  X(Log, log, "", UNARY, Float, kKAll | kKC, false, ULPS(2), log(a))                                      \
  X(Log2, log2, "", UNARY, Float, kKAll | kKC, false, ULPS(2), log2(a))                                   \
  X(Log10, log10, "", UNARY, Float, kKAll | kKC, false, ULPS(2), log10(a))                                \
  X(Log1p, log1p, "", UNARY, Float, kKAll | kKC, false, ULPS(2), log1p(a))                                \
  X(Sin, sin, "", UNARY, Float, kKAll | kKC, false, ULPS(2), sin(a))                                      \
  X(Cos, cos, "", UNARY, Float, kKAll | kKC, false, ULPS(2), cos(a))                                      \
  X(Tan, tan, "", UNARY, Float, kKAll | kKC, false, ULPS(4), tan(a))                                      \
  X(Arcsin, arcsin, "", UNARY, Float, kKAll | kKC, false, ULPS(4), asin(a))                               \
  X(Arccos, arccos, "", UNARY, Float, kKAll | kKC, false, ULPS(4), acos(a))                               \
  X(Arctan, arctan, "", UNARY, Float, kKAll | kKC, false, ULPS(2), atan(a))                               \
  X(Sinh, sinh, "", UNARY, Float, kKAll | kKC, false, ULPS(3), sinh(a))                                   \
  X(Cosh, cosh, "", UNARY, Float, kKAll | kKC, false, ULPS(2), cosh(a))                                   \
  X(Tanh, tanh, "", UNARY, Float, kKAll | kKC, false, ULPS(2), tanh(a))                                   \
  X(Arcsinh, arcsinh, "", UNARY, Float, kKAll | kKC, false, ULPS(3), asinh(a))                            \
  X(Arccosh, arccosh, "", UNARY, Float, kKAll | kKC, false, ULPS(4), acosh(a))                            \
  X(Arctanh, arctanh, "", UNARY, Float, kKAll | kKC, false, ULPS(3), atanh(a))                            \
  X(Where, where, "", WHERE, Where, kKAll | kKC, false, EXACT, cf_where<T>(a, b, c))                      \
  X(Cast, astype, "", CAST, Cast, kKAll | kKC, false, EXACT, cf_cast<R>(a))                               \
  X(Logaddexp, logaddexp, "", BINARY, Float, kKAll, false, ULPS(2), cf_logaddexp(a, b))             \
  X(Logaddexp2, logaddexp2, "", BINARY, Float, kKAll, false, ULPS(2), cf_logaddexp2(a, b))          \
  X(Fmod, fmod, "", BINARY, Same, kKAll, true, EXACT, cf_fmod(a, b))                                \
  X(Heaviside, heaviside, "", BINARY, Float, kKAll, false, EXACT, cf_heaviside(a, b))               \
  X(Deg2rad, deg2rad, "", UNARY, Float, kKAll, false, EXACT, a * (T(3.14159265358979323846) / T(180))) \
  X(Rad2deg, rad2deg, "", UNARY, Float, kKAll, false, EXACT, a * (T(180) / T(3.14159265358979323846))) \
  X(Real, real, "", UNARY, Real, kKAll | kKC, false, EXACT, cf_real(a))                            \
  X(Imag, imag, "", UNARY, Real, kKAll | kKC, false, EXACT, cf_imag(a))                            \
  X(Conjugate, conjugate, "", UNARY, Same, kKAll | kKC, true, EXACT, cf_conj(a))                   \
  X(Angle, angle, "", UNARY, FloatReal, kKAll | kKC, false, ULPS(2), cf_angle(a))                 \
  X(Fma, fma, "", TERNARY, Same, kKF, false, EXACT, cf_fma(a, b, c))

// Composite rows: C(NumPy name, signature, precision, one line of doc). Each is defined from
// other ops in src/graph/composites.cpp, step by step as NumPy's own Python code computes it,
// so its dtypes, roundings and special values are NumPy's.
#define CUFUSE_COMPOSITE_OPS(C)                                                                     \
  C(sinc, UNARY, ULPS(4), "sin(pi x) / (pi x), 1 at 0 (NumPy's formula: pi x, zero replaced by eps)") \
  C(round, ROUND, EXACT, "round half to even to `decimals` places (integers unchanged for decimals >= 0)") \
  C(nan_to_num, NAN_TO_NUM, EXACT, "NaN -> nan, +inf -> posinf (default: the dtype's max), -inf -> neginf (lowest)") \
  C(isclose, ISCLOSE, EXACT, "|a - b| <= atol + rtol |b| (b taken as float), or a == b; NaN == NaN with equal_nan")

// Alias rows: A(NumPy name, kernel row id, signature): another NumPy name of a kernel row.
#define CUFUSE_OP_ALIASES(A)                                                                        \
  A(abs, Absolute, UNARY)                                                                           \
  A(conj, Conjugate, UNARY)                                                                         \
  A(divide, TrueDivide, BINARY)                                                                     \
  A(mod, Remainder, BINARY)                                                                         \
  A(bitwise_not, Invert, UNARY)                                                                     \
  A(pow, Power, BINARY)                                                                             \
  A(asin, Arcsin, UNARY)                                                                            \
  A(acos, Arccos, UNARY)                                                                            \
  A(atan, Arctan, UNARY)                                                                            \
  A(asinh, Arcsinh, UNARY)                                                                          \
  A(acosh, Arccosh, UNARY)                                                                          \
  A(atanh, Arctanh, UNARY)                                                                          \
  A(atan2, Arctan2, BINARY)                                                                         \
  A(bitwise_invert, Invert, UNARY)                                                                  \
  A(bitwise_left_shift, LeftShift, BINARY)                                                          \
  A(bitwise_right_shift, RightShift, BINARY)
