// cufuse/typed_rules.hpp: the typed layer's dtype rules at compile time (cufuse/typed.hpp).
//
// NumPy 2 promotion, weak C++ scalars and each elementwise op's type rule, as constexpr
// functions over DType, mirroring src/core/dtype.cpp (promote_types), src/core/op_table.cpp
// (type_op) and src/graph/elementwise.cpp (weak scalars). The per-op facts are a Boost.Hana
// map from an op's tag type to its row, generated from THE op table's rows
// (cufuse/op_rows.hpp), so a new row is typed here with no edit; tests/test_typed_rules.cpp
// checks every op on every dtype pair against the run-time rules.
#pragma once
#include <cstdint>

#include <boost/hana/at.hpp>
#include <boost/hana/at_key.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

#include "cufuse/dtype.hpp"
#include "cufuse/op_rows.hpp"

namespace cufuse::typed {

namespace hana = boost::hana;

// ---- dtype facts (constexpr twins of cufuse::kind / itemsize)
constexpr DKind kind_of(DType t) {
  switch (t) {
    case DType::Bool: return DKind::Bool;
    case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64: return DKind::Int;
    case DType::UInt8: case DType::UInt16: case DType::UInt32: case DType::UInt64: return DKind::UInt;
    case DType::Complex64: case DType::Complex128: return DKind::Complex;
    default: return DKind::Float;
  }
}
constexpr int size_of(DType t) {
  switch (t) {
    case DType::Bool: case DType::Int8: case DType::UInt8: return 1;
    case DType::Int16: case DType::UInt16: case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::UInt32: case DType::Float32: return 4;
    case DType::Complex128: return 16;
    default: return 8;
  }
}
constexpr bool is_float_dt(DType t) { return kind_of(t) == DKind::Float; }
constexpr bool is_complex_dt(DType t) { return kind_of(t) == DKind::Complex; }
constexpr DType real_dt(DType t) {
  return t == DType::Complex64 ? DType::Float32 : (t == DType::Complex128 ? DType::Float64 : t);
}

// NumPy 2's promote_types (with ml_dtypes' bfloat16), as src/core/dtype.cpp has it.
constexpr DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  const DKind ka = kind_of(a), kb = kind_of(b);
  const int sa = size_of(a), sb = size_of(b);
  if (ka == DKind::Complex || kb == DKind::Complex) {
    if (a == DType::Complex128 || b == DType::Complex128) return DType::Complex128;
    const DType o = ka == DKind::Complex ? b : a;  // the other one, beside complex64
    if (o == DType::Complex64) return o;
    return (kind_of(o) == DKind::Float ? o != DType::Float64 : size_of(o) <= 2) ? DType::Complex64 : DType::Complex128;
  }
  if (ka == DKind::Float && kb == DKind::Float) {
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return sa >= sb ? a : b;
  }
  if (ka == DKind::Float || kb == DKind::Float) {
    const DType f = ka == DKind::Float ? a : b;
    const int isz = ka == DKind::Float ? sb : sa;
    if (f == DType::Float64) return DType::Float64;
    if (f == DType::Float32) return isz <= 2 ? DType::Float32 : DType::Float64;
    return isz == 1 ? f : (isz == 2 ? DType::Float32 : DType::Float64);
  }
  if (ka == kb) return sa >= sb ? a : b;
  const DType s = ka == DKind::Int ? a : b, u = ka == DKind::Int ? b : a;
  if (size_of(s) > size_of(u)) return s;
  if (u == DType::UInt64) return DType::Float64;
  switch (size_of(u)) {
    case 1: return DType::Int16;
    case 2: return DType::Int32;
    default: return DType::Int64;
  }
}
constexpr bool can_cast_safe_c(DType from, DType to) { return promote(from, to) == to; }
// NumPy's 'same_kind' casting (in-place operators).
constexpr bool can_cast_same_kind_c(DType from, DType to) {
  if (can_cast_safe_c(from, to)) return true;
  auto rank = [](DType t) {
    switch (kind_of(t)) {
      case DKind::Bool: return 0;
      case DKind::UInt: return 1;
      case DKind::Int: return 2;
      case DKind::Float: return 3;
      default: return 4;
    }
  };
  return rank(from) <= rank(to);
}

// ---- the op rows (the tokens of cufuse/op_rows.hpp, spelled here)
enum class Rule : uint8_t { Same, Float, TrueDivide, Compare, Logical, Predicate, Where, Cast, Real, FloatReal };
inline constexpr uint8_t kKB = 1, kKI = 2, kKU = 4, kKF = 8, kKC = 16;
inline constexpr uint8_t kKAll = kKB | kKI | kKU | kKF, kKNum = kKI | kKU | kKF, kKInt = kKI | kKU;
constexpr uint8_t kind_mask(DType t) {
  switch (kind_of(t)) {
    case DKind::Bool: return kKB;
    case DKind::Int: return kKI;
    case DKind::UInt: return kKU;
    case DKind::Complex: return kKC;
    default: return kKF;
  }
}
struct OpRule {
  Rule rule;
  uint8_t accepts;
  bool bool_as_int8;
  int arity;
  const char* name;
};
namespace sig_arity {
inline constexpr int UNARY = 1, BINARY = 2, WHERE = 3, CAST = 1, TERNARY = 3;
}

// One tag type per kernel row: cufuse::typed::op::add (static_assert messages name it).
namespace op {
#define CUFUSE_TYPED_TAG(id, fn, ...) struct fn;
CUFUSE_ELEMENTWISE_OPS(CUFUSE_TYPED_TAG)
#undef CUFUSE_TYPED_TAG
}  // namespace op

// The table: tag type -> row, generated from the rows.
#define CUFUSE_TYPED_ROW(id, fn, sym, sig, rule, acc, b8, ...) \
  hana::make_pair(hana::type_c<op::fn>, OpRule{Rule::rule, static_cast<uint8_t>(acc), b8, sig_arity::sig, #fn}),
inline constexpr auto op_rules =
    hana::make_map(CUFUSE_ELEMENTWISE_OPS(CUFUSE_TYPED_ROW) hana::make_pair(hana::type_c<void>, OpRule{}));
#undef CUFUSE_TYPED_ROW

template <class Op>
inline constexpr OpRule rule_of = op_rules[hana::type_c<Op>];

// ---- dtypes as tag types (for messages) and C++ types
namespace dt {
#define CUFUSE_TYPED_DT(tag, D) \
  struct tag {                  \
    static constexpr DType value = DType::D; \
  };
CUFUSE_TYPED_DT(bool_, Bool) CUFUSE_TYPED_DT(int8, Int8) CUFUSE_TYPED_DT(int16, Int16) CUFUSE_TYPED_DT(int32, Int32)
CUFUSE_TYPED_DT(int64, Int64) CUFUSE_TYPED_DT(uint8, UInt8) CUFUSE_TYPED_DT(uint16, UInt16)
CUFUSE_TYPED_DT(uint32, UInt32) CUFUSE_TYPED_DT(uint64, UInt64) CUFUSE_TYPED_DT(float16, Float16)
CUFUSE_TYPED_DT(bfloat16, BFloat16) CUFUSE_TYPED_DT(float32, Float32) CUFUSE_TYPED_DT(float64, Float64)
CUFUSE_TYPED_DT(complex64, Complex64) CUFUSE_TYPED_DT(complex128, Complex128)
#undef CUFUSE_TYPED_DT
}  // namespace dt
inline constexpr auto dtype_tags = hana::tuple_t<dt::bool_, dt::int8, dt::int16, dt::int32, dt::int64, dt::uint8,
                                                 dt::uint16, dt::uint32, dt::uint64, dt::float16, dt::bfloat16,
                                                 dt::float32, dt::float64, dt::complex64, dt::complex128>;
inline constexpr auto cpp_types = hana::tuple_t<bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                                                uint64_t, half, bfloat16_t, float, double, std::complex<float>,
                                                std::complex<double>>;
template <DType D>
using dtype_tag = typename decltype(+hana::at_c<static_cast<int>(D)>(dtype_tags))::type;
template <class Tag>
constexpr DType dtype_of_tag() { return Tag::value; }
template <DType D>
using cpp_type = typename decltype(+hana::at_c<static_cast<int>(D)>(cpp_types))::type;

// ---- an operand as typing sees it: an array's dtype, or a weak C++ scalar's kind
struct ArgType {
  DType dtype;     // an array's dtype; a weak scalar's NumPy default (bool, int64, uint64, float64)
  bool weak;
};

// What an op gives: ok = NumPy has a loop for these dtypes.
struct Typing {
  DType result = DType::Bool;
  bool ok = false;
};

// type_op of src/core/op_table.cpp over the operand dtypes `in` (result only).
constexpr Typing type_op_c(const OpRule& row, const DType* in, int n) {
  Typing t;
  t.ok = true;
  switch (row.rule) {
    case Rule::Cast: t.result = in[0]; return t;  // the target is the node's own (CastTo)
    case Rule::Where: t.result = promote(in[1], in[2]); return t;
    case Rule::Logical: case Rule::Predicate: t.result = DType::Bool; return t;
    default: break;
  }
  DType p = in[0];
  for (int i = 1; i < n; ++i) p = promote(p, in[i]);
  if (p == DType::Bool && row.bool_as_int8) p = DType::Int8;
  if (!(kind_mask(p) & row.accepts)) return Typing{};
  if (row.rule == Rule::FloatReal && p == DType::Bool) {
    p = DType::Float64;  // np.angle(bool): arctan2 of a weak 0 and bool, in float64
  } else if ((row.rule == Rule::Float || row.rule == Rule::FloatReal) && !is_complex_dt(p)) {
    const DType fl[4] = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
    for (DType f : fl) {
      bool all = true;
      for (int i = 0; i < n; ++i) all = all && can_cast_safe_c(in[i], f);
      if (all) {
        p = f;
        break;
      }
    }
  } else if (row.rule == Rule::TrueDivide) {
    p = is_float_dt(p) || is_complex_dt(p) ? p : DType::Float64;
  }
  t.result = row.rule == Rule::Compare ? DType::Bool : p;
  if (row.rule == Rule::Real || row.rule == Rule::FloatReal) t.result = real_dt(p);
  return t;
}

// The result of an op over arrays and weak scalars (src/graph/elementwise.cpp): a weak
// scalar takes the strong operands' dtype where NumPy 2 gives it (an int beside ints or
// floats, a float beside floats, a bool beside anything), else its default. Values that do
// not fit (int8 + 300) are the run time's OverflowError; they never change the result dtype.
constexpr Typing type_args(const OpRule& row, const ArgType* a, int n) {
  auto promotes = [&](int i) { return !(row.rule == Rule::Where && i == 0) && row.rule != Rule::Logical; };
  bool have_strong = false;
  DType strong = DType::Bool;
  for (int i = 0; i < n; ++i)
    if (!a[i].weak && promotes(i)) {
      strong = have_strong ? promote(strong, a[i].dtype) : a[i].dtype;
      have_strong = true;
    }
  DType dts[3] = {};
  for (int i = 0; i < n; ++i) {
    DType t = a[i].dtype;
    if (a[i].weak && promotes(i) && have_strong) {
      switch (kind_of(t)) {
        case DKind::Bool: t = strong; break;
        case DKind::Int: case DKind::UInt:
          if (kind_of(strong) != DKind::Bool) t = strong;
          break;
        case DKind::Float: t = is_float_dt(strong) || is_complex_dt(strong) ? strong : DType::Float64; break;
        case DKind::Complex:
          t = is_complex_dt(strong) ? strong
                                    : (is_float_dt(strong) && strong != DType::Float64 ? DType::Complex64 : DType::Complex128);
          break;
      }
    }
    dts[i] = t;
  }
  return type_op_c(row, dts, n);
}

// ---- reductions' dtypes (src/graph/reduce.cpp)
enum class RedKind : uint8_t { Sum, Prod, Max, Min, Mean, Var, Std, Any, All };
constexpr DType reduce_result(RedKind r, DType t) {
  switch (r) {
    case RedKind::Sum: case RedKind::Prod:
      return kind_of(t) == DKind::Float || kind_of(t) == DKind::Complex
                 ? t
                 : (kind_of(t) == DKind::UInt ? DType::UInt64 : DType::Int64);
    case RedKind::Mean: return is_float_dt(t) || is_complex_dt(t) ? t : DType::Float64;
    case RedKind::Var: case RedKind::Std: return is_float_dt(t) ? t : (is_complex_dt(t) ? real_dt(t) : DType::Float64);
    case RedKind::Any: case RedKind::All: return DType::Bool;
    default: return t;
  }
}

}  // namespace cufuse::typed
