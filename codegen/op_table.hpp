// codegen/op_table.hpp: the one table of elementwise ops.
//
// Each row gives an op's NumPy name, its operator spelling in the tools, its arity, its
// type rule and the dtype kinds it takes, and one C++ expression over a, b, c. That same
// expression is compiled on the host (the reference evaluator's implementation, through
// codegen/op_table.cpp) and pasted into generated CUDA (codegen/elementwise_kernel.cpp),
// with the helpers of codegen/device_helpers.inc available to both.
// Adding an elementwise op is one row here, one public function, and one test.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "cufuse/dtype.hpp"

namespace cufuse::detail {

enum class TypeRule : uint8_t {
  Same,        // compute = result = promoted inputs
  Float,       // compute = result = float_for(promoted): int8 -> float16, int32 -> float64
  TrueDivide,  // bool/int -> float64, floats keep their dtype
  Compare,     // compute = promoted, result = bool
  Logical,     // inputs taken as truth values, result = bool
  Predicate,   // compute = input dtype, result = bool (isnan)
  Where,       // (condition as bool, x, y promoted) -> promoted
  Cast,        // astype: result = the target dtype the node carries
};
const char* rule_name(TypeRule r);

// dtype kinds, as a mask
inline constexpr uint8_t kKB = 1, kKI = 2, kKU = 4, kKF = 8;
inline constexpr uint8_t kKAll = kKB | kKI | kKU | kKF, kKNum = kKI | kKU | kKF, kKInt = kKI | kKU;

// X(id, numpy name, operator spelling, arity, rule, kinds taken, bool computes as int8, expression...)
// The expression sees a, b, c of the compute type T and the result type R.
#define CUFUSE_ELEMENTWISE_OPS(X)                                                        \
  X(Add, "add", "+", 2, Same, kKAll, false, cf_add(a, b))                                \
  X(Subtract, "subtract", "-", 2, Same, kKNum, false, cf_sub(a, b))                      \
  X(Multiply, "multiply", "*", 2, Same, kKAll, false, cf_mul(a, b))                      \
  X(TrueDivide, "true_divide", "/", 2, TrueDivide, kKAll, false, a / b)                  \
  X(FloorDivide, "floor_divide", "//", 2, Same, kKAll, true, cf_floor_divide(a, b))      \
  X(Remainder, "remainder", "%", 2, Same, kKAll, true, cf_remainder(a, b))               \
  X(Power, "power", "**", 2, Same, kKAll, true, cf_power(a, b))                          \
  X(Maximum, "maximum", "", 2, Same, kKAll, false, cf_maximum(a, b))                     \
  X(Minimum, "minimum", "", 2, Same, kKAll, false, cf_minimum(a, b))                     \
  X(Fmax, "fmax", "", 2, Same, kKAll, false, cf_fmax(a, b))                              \
  X(Fmin, "fmin", "", 2, Same, kKAll, false, cf_fmin(a, b))                              \
  X(Arctan2, "arctan2", "", 2, Float, kKAll, false, atan2(a, b))                         \
  X(Hypot, "hypot", "", 2, Float, kKAll, false, hypot(a, b))                             \
  X(Copysign, "copysign", "", 2, Float, kKAll, false, copysign(a, b))                    \
  X(Less, "less", "<", 2, Compare, kKAll, false, a < b)                                  \
  X(LessEqual, "less_equal", "<=", 2, Compare, kKAll, false, a <= b)                     \
  X(Greater, "greater", ">", 2, Compare, kKAll, false, a > b)                            \
  X(GreaterEqual, "greater_equal", ">=", 2, Compare, kKAll, false, a >= b)               \
  X(Equal, "equal", "==", 2, Compare, kKAll, false, a == b)                              \
  X(NotEqual, "not_equal", "!=", 2, Compare, kKAll, false, a != b)                       \
  X(LogicalAnd, "logical_and", "", 2, Logical, kKAll, false, a && b)                     \
  X(LogicalOr, "logical_or", "", 2, Logical, kKAll, false, a || b)                       \
  X(LogicalXor, "logical_xor", "", 2, Logical, kKAll, false, a != b)                     \
  X(BitwiseAnd, "bitwise_and", "&", 2, Same, kKB | kKInt, false, a & b)                  \
  X(BitwiseOr, "bitwise_or", "|", 2, Same, kKB | kKInt, false, a | b)                    \
  X(BitwiseXor, "bitwise_xor", "^", 2, Same, kKB | kKInt, false, a ^ b)                  \
  X(LeftShift, "left_shift", "<<", 2, Same, kKB | kKInt, true, cf_left_shift(a, b))      \
  X(RightShift, "right_shift", ">>", 2, Same, kKB | kKInt, true, cf_right_shift(a, b))   \
  X(Negative, "negative", "", 1, Same, kKNum, false, cf_neg(a))                          \
  X(Positive, "positive", "", 1, Same, kKNum, false, a)                                  \
  X(Absolute, "absolute", "", 1, Same, kKAll, false, cf_abs(a))                          \
  X(Sign, "sign", "", 1, Same, kKNum, false, cf_sign(a))                                 \
  X(Square, "square", "", 1, Same, kKAll, true, cf_mul(a, a))                            \
  X(Reciprocal, "reciprocal", "", 1, Same, kKAll, true, cf_reciprocal(a))                \
  X(Floor, "floor", "", 1, Same, kKAll, false, cf_floor(a))                              \
  X(Ceil, "ceil", "", 1, Same, kKAll, false, cf_ceil(a))                                 \
  X(Trunc, "trunc", "", 1, Same, kKAll, false, cf_trunc(a))                              \
  X(Rint, "rint", "", 1, Float, kKAll, false, rint(a))                                   \
  X(LogicalNot, "logical_not", "", 1, Logical, kKAll, false, !a)                         \
  X(Invert, "invert", "~", 1, Same, kKB | kKInt, false, cf_invert(a))                    \
  X(IsNan, "isnan", "", 1, Predicate, kKAll, false, cf_isnan(a))                         \
  X(IsInf, "isinf", "", 1, Predicate, kKAll, false, cf_isinf(a))                         \
  X(IsFinite, "isfinite", "", 1, Predicate, kKAll, false, cf_isfinite(a))                \
  X(Sqrt, "sqrt", "", 1, Float, kKAll, false, sqrt(a))                                   \
  X(Cbrt, "cbrt", "", 1, Float, kKAll, false, cbrt(a))                                   \
  X(Exp, "exp", "", 1, Float, kKAll, false, exp(a))                                      \
  X(Exp2, "exp2", "", 1, Float, kKAll, false, exp2(a))                                   \
  X(Expm1, "expm1", "", 1, Float, kKAll, false, expm1(a))                                \
  X(Log, "log", "", 1, Float, kKAll, false, log(a))                                      \
  X(Log2, "log2", "", 1, Float, kKAll, false, log2(a))                                   \
  X(Log10, "log10", "", 1, Float, kKAll, false, log10(a))                                \
  X(Log1p, "log1p", "", 1, Float, kKAll, false, log1p(a))                                \
  X(Sin, "sin", "", 1, Float, kKAll, false, sin(a))                                      \
  X(Cos, "cos", "", 1, Float, kKAll, false, cos(a))                                      \
  X(Tan, "tan", "", 1, Float, kKAll, false, tan(a))                                      \
  X(Arcsin, "arcsin", "", 1, Float, kKAll, false, asin(a))                               \
  X(Arccos, "arccos", "", 1, Float, kKAll, false, acos(a))                               \
  X(Arctan, "arctan", "", 1, Float, kKAll, false, atan(a))                               \
  X(Sinh, "sinh", "", 1, Float, kKAll, false, sinh(a))                                   \
  X(Cosh, "cosh", "", 1, Float, kKAll, false, cosh(a))                                   \
  X(Tanh, "tanh", "", 1, Float, kKAll, false, tanh(a))                                   \
  X(Arcsinh, "arcsinh", "", 1, Float, kKAll, false, asinh(a))                            \
  X(Arccosh, "arccosh", "", 1, Float, kKAll, false, acosh(a))                            \
  X(Arctanh, "arctanh", "", 1, Float, kKAll, false, atanh(a))                            \
  X(Where, "where", "", 3, Where, kKAll, false, cf_where<T>(a, b, c))                    \
  X(Cast, "astype", "", 1, Cast, kKAll, false, cf_cast<R>(a))

enum class Op : uint16_t {
#define CUFUSE_X(id, ...) id,
  CUFUSE_ELEMENTWISE_OPS(CUFUSE_X)
#undef CUFUSE_X
  Count
};
inline constexpr int kNumOps = static_cast<int>(Op::Count);

// Host reference of one op over n elements: inputs already converted to their compute
// types (float for float16/bfloat16), output written in the result's compute type.
using RefFn = void (*)(DType compute, DType result, const void* const* in, void* out, int64_t n);

struct OpRow {
  Op id;
  const char* name;
  const char* symbol;
  int arity;
  TypeRule rule;
  uint8_t accepts;
  bool bool_as_int8;
  const char* expr;
  RefFn ref;
};

const OpRow& op_row(Op op);
// True where, for floating compute types (float16 and bfloat16 compute in float), the op is
// exactly its operator spelling over a and b: its row's helper (cf_add/cf_sub/cf_mul in
// device_helpers.inc) is that operator for float and double. Generated code then spells it
// `a <symbol> b`, because the template calls cost NVRTC time (~1.5 ms of front end and NVVM
// on W12's kernel).
bool float_is_operator(Op op);
inline const OpRow& op_row(uint16_t op) { return op_row(static_cast<Op>(op)); }
std::optional<Op> find_op(std::string_view numpy_name);

struct OpTyping {
  DType compute[3];
  DType result;
};
// The compute dtype of each input and the result dtype of `op` applied to inputs of
// dtypes in[0..n) (NumPy's loop selection). `cast_to` is the target of Cast.
// Throws TypeError naming the op and the dtypes when NumPy has no loop for them.
OpTyping type_op(Op op, const DType* in, int n, DType cast_to = DType::Bool);

// The C type a value of dtype t has inside a kernel or the reference (float for half types).
const char* compute_ctype(DType t);

}  // namespace cufuse::detail
