// src/core/op_table.hpp: the op table's types and look-ups. The rows themselves are in
// cufuse/op_rows.hpp (public, so that cufuse/ops.hpp declares every op from them).
//
// Each kernel row gives an op's NumPy name, its operator spelling in the tools, its
// signature, its type rule and the dtype kinds it takes, its precision class, and one C++
// expression over a, b, c. That same expression is compiled on the host (the reference
// evaluator's implementation, through src/reference/op_reference.cpp) and pasted into generated CUDA
// (codegen/elementwise_kernel.cpp), with the helpers of codegen/device_helpers.inc available
// to both. Composite and alias rows are listed here too (OpFunction), so that the CLI, the
// tests and apply() see every name the table gives the public API.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cufuse/enum_names.hpp"
#include "cufuse/dtype.hpp"
#include "cufuse/op_rows.hpp"

namespace cufuse::detail {

#define CUFUSE_TYPE_RULES(X)                                                                                    \
  X(Same, "same")               /* compute = result = promoted inputs */                                        \
  X(Float, "float")             /* compute = result = float_for(promoted): int8 -> float16, int32 -> float64 */ \
  X(TrueDivide, "true_divide")  /* bool/int -> float64, floats keep their dtype */                              \
  X(Compare, "compare")         /* compute = promoted, result = bool */                                         \
  X(Logical, "logical")         /* inputs taken as truth values, result = bool */                               \
  X(Predicate, "predicate")     /* compute = input dtype, result = bool (isnan) */                              \
  X(Where, "where")             /* (condition as bool, x, y promoted) -> promoted */                            \
  X(Real, "real")               /* compute = promoted, result = its real dtype (abs, real, imag of complex) */  \
  X(FloatReal, "float_real")    /* compute = Float's, result = its real dtype (angle; bool -> float64) */       \
  X(Cast, "cast")               /* astype: result = the target dtype the node carries */
enum class TypeRule : uint8_t { CUFUSE_TYPE_RULES(CUFUSE_ENUMERATOR) };
inline const char* rule_name(TypeRule r) { return CUFUSE_ENUM_NAME(CUFUSE_TYPE_RULES, r); }

// dtype kinds, as a mask
inline constexpr uint8_t kKB = 1, kKI = 2, kKU = 4, kKF = 8, kKC = 16;  // kKC: complex64/complex128
inline constexpr uint8_t kKAll = kKB | kKI | kKU | kKF, kKNum = kKI | kKU | kKF, kKInt = kKI | kKU;

// How an op is called (cufuse/op_rows.hpp lists the families).
enum class Sig : uint8_t { UNARY, BINARY, WHERE, CAST, ROUND, NAN_TO_NUM, ISCLOSE, TERNARY };
struct OpParamSpec {
  const char* name;
  const char* py_default;  // NumPy's default, as Python writes it ("1e-05", "None", "False")
};
struct Signature {
  int n_operands;
  const char* operands[3];  // NumPy's parameter names
  int n_params;
  OpParamSpec params[4];      // after the operands, each with a default
};
const Signature& signature(Sig s);
// "a, b, rtol=1e-05, atol=1e-08, equal_nan=False"
std::string python_params(Sig s);

// What tests may allow (cufuse/op_rows.hpp): Exact, Exact but either zero on a tie of
// zeros, or within `ulps` units in the last place of the exact value.
struct Precision {
  enum Kind : uint8_t { Exact, ExactPm0, Ulps } kind;
  uint8_t ulps;
};
// The largest distance, in units in the last place of `result`, that two results of this
// precision (ours and NumPy's, the device's and the host's) may lie apart: 0 for Exact, for
// integers and bool; 2 for float16/bfloat16 (each rounded once from float); else 2 * ulps.
int compare_ulps(Precision p, DType result);
std::string precision_name(Precision p);  // "exact", "exact (either zero)", "4 ulps"

enum class Op : uint16_t {
#define CUFUSE_X(id, ...) id,
  CUFUSE_ELEMENTWISE_OPS(CUFUSE_X)
#undef CUFUSE_X
  Count
};
inline constexpr int kNumOps = static_cast<int>(Op::Count);

// The number of array operands of a signature.
constexpr int sig_arity(Sig s) {
  switch (s) {
    case Sig::BINARY: case Sig::ISCLOSE: return 2;
    case Sig::WHERE: case Sig::TERNARY: return 3;
    default: return 1;
  }
}

struct OpRow {
  Op id;
  const char* name;
  const char* symbol;
  int arity;
  TypeRule rule;
  uint8_t accepts;
  bool bool_as_int8;
  const char* expr;  // its host reference: src/reference/op_reference.hpp
  Precision precision;
  Sig sig;
};

const OpRow& op_row(Op op);
// True where, for floating compute types (float16 and bfloat16 compute in float), the op is
// exactly its operator spelling over a and b: its row's helper (cf_add/cf_sub/cf_mul in
// device_helpers.inc) is that operator for float and double. Generated code then spells it
// `a <symbol> b`, because the template calls cost NVRTC time (~1.5 ms of front end and NVVM
// on W12's kernel).
bool float_is_operator(Op op);
inline const OpRow& op_row(uint16_t op) { return op_row(static_cast<Op>(op)); }
// The kernel row of that NumPy name (not aliases: find_function has those).
std::optional<Op> find_op(std::string_view numpy_name);

// Every name the table gives the public API: kernel rows (astype aside), composites, aliases.
struct OpFunction {
  enum Kind : uint8_t { Kernel, Composite, Alias } kind;
  const char* name;
  Sig sig;
  Precision precision;
  Op op;            // Kernel and Alias: the kernel row
  const char* doc;  // one line (nullptr for an alias: "alias of <its kernel row>")
};
std::span<const OpFunction> op_functions();
const OpFunction* find_function(std::string_view numpy_name);

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
