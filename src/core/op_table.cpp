// src/core/op_table.cpp: the rows of the op table and the type rules. The host reference of
// each op, instantiated from the same expression, is src/reference/op_reference.cpp.
#include "core/op_table.hpp"

#include <fmt/format.h>

#include "cufuse/error.hpp"

namespace cufuse::detail {

namespace {

#define CUFUSE_PREC_EXACT (Precision{Precision::Exact, 0})
#define CUFUSE_PREC_EXACT_PM0 (Precision{Precision::ExactPm0, 0})
#define CUFUSE_PREC_ULPS(n) (Precision{Precision::Ulps, n})


#define CUFUSE_ROW(id, nm, sym, sig, rule, acc, b8, prec, ...)                                  \
  OpRow{Op::id, #nm, sym, sig_arity(Sig::sig), TypeRule::rule, acc, b8, #__VA_ARGS__, CUFUSE_PREC_##prec, Sig::sig},

const OpRow kRows[] = {CUFUSE_ELEMENTWISE_OPS(CUFUSE_ROW)};
#undef CUFUSE_ROW

#define CUFUSE_KERNEL_FN(id, nm, sym, sig, rule, acc, b8, prec, ...) \
  OpFunction{OpFunction::Kernel, #nm, Sig::sig, CUFUSE_PREC_##prec, Op::id, "elementwise (op table)"},
#define CUFUSE_COMPOSITE_FN(nm, sig, prec, doc) \
  OpFunction{OpFunction::Composite, #nm, Sig::sig, CUFUSE_PREC_##prec, Op::Count, doc},
#define CUFUSE_ALIAS_FN(nm, id, sig) \
  OpFunction{OpFunction::Alias, #nm, Sig::sig, kRows[static_cast<int>(Op::id)].precision, Op::id, nullptr},
const OpFunction kFunctions[] = {CUFUSE_ELEMENTWISE_OPS(CUFUSE_KERNEL_FN) CUFUSE_COMPOSITE_OPS(CUFUSE_COMPOSITE_FN)
                                     CUFUSE_OP_ALIASES(CUFUSE_ALIAS_FN)};
#undef CUFUSE_KERNEL_FN
#undef CUFUSE_COMPOSITE_FN
#undef CUFUSE_ALIAS_FN

// An alias row names a kernel row of its own signature.
#define CUFUSE_ALIAS_CHECK(nm, id, sig) \
  static_assert(Sig::sig == CUFUSE_ROW_SIG(id), "alias " #nm ": its signature is not its kernel row's");
#define CUFUSE_SIG_OF(id, nm, sym, sig, ...) id_sig == Op::id ? Sig::sig :
constexpr Sig row_sig(Op id_sig) { return CUFUSE_ELEMENTWISE_OPS(CUFUSE_SIG_OF) Sig::UNARY; }
#define CUFUSE_ROW_SIG(id) row_sig(Op::id)
CUFUSE_OP_ALIASES(CUFUSE_ALIAS_CHECK)
#undef CUFUSE_ALIAS_CHECK
#undef CUFUSE_SIG_OF

const Signature kSignatures[] = {
    /* UNARY */ {1, {"x"}, 0, {}},
    /* BINARY */ {2, {"x1", "x2"}, 0, {}},
    /* WHERE */ {3, {"condition", "x", "y"}, 0, {}},
    /* CAST */ {1, {"x"}, 1, {{"dtype", "None"}}},
    /* ROUND */ {1, {"a"}, 1, {{"decimals", "0"}}},
    /* NAN_TO_NUM */ {1, {"x"}, 4, {{"copy", "True"}, {"nan", "0.0"}, {"posinf", "None"}, {"neginf", "None"}}},
    /* ISCLOSE */ {2, {"a", "b"}, 3, {{"rtol", "1e-05"}, {"atol", "1e-08"}, {"equal_nan", "False"}}},
    /* TERNARY */ {3, {"x", "y", "z"}, 0, {}},
};

}  // namespace

const OpRow& op_row(Op op) { return kRows[static_cast<int>(op)]; }

bool float_is_operator(Op op) { return op == Op::Add || op == Op::Subtract || op == Op::Multiply; }

std::optional<Op> find_op(std::string_view numpy_name) {
  for (const auto& r : kRows)
    if (numpy_name == r.name) return r.id;
  return std::nullopt;
}

std::span<const OpFunction> op_functions() { return kFunctions; }

const OpFunction* find_function(std::string_view numpy_name) {
  for (const auto& f : kFunctions)
    if (numpy_name == f.name && f.sig != Sig::CAST) return &f;
  return nullptr;
}

const Signature& signature(Sig s) { return kSignatures[static_cast<int>(s)]; }

std::string python_params(Sig s) {
  const Signature& g = signature(s);
  std::string out;
  for (int i = 0; i < g.n_operands; ++i) out += (i ? ", " : "") + std::string(g.operands[i]);
  for (int i = 0; i < g.n_params; ++i) out += fmt::format(", {}={}", g.params[i].name, g.params[i].py_default);
  return out;
}

int compare_ulps(Precision p, DType result) {
  if (is_complex(result)) return p.kind == Precision::Ulps ? 2 * p.ulps : 4;  // complex math rounds per part
  if (p.kind != Precision::Ulps || !is_float(result)) return 0;
  return is_half(result) ? 2 : 2 * p.ulps;
}

std::string precision_name(Precision p) {
  switch (p.kind) {
    case Precision::Exact: return "exact";
    case Precision::ExactPm0: return "exact (either zero on a tie of zeros)";
    case Precision::Ulps: return fmt::format("{} ulps", p.ulps);
  }
  return "?";
}

const char* compute_ctype(DType t) {
  switch (t) {
    case DType::Float16: case DType::BFloat16: return "float";
    default: return info(t).cuda_type.data();
  }
}

static uint8_t kind_mask(DType t) {
  switch (kind(t)) {
    case DKind::Bool: return kKB;
    case DKind::Int: return kKI;
    case DKind::UInt: return kKU;
    case DKind::Complex: return kKC;
    default: return kKF;
  }
}

OpTyping type_op(Op op, const DType* in, int n, DType cast_to) {
  const OpRow& row = op_row(op);
  if (n != row.arity)
    throw ValueError(fmt::format("{} takes {} argument(s), got {}", row.name, row.arity, n));
  auto fail = [&]() -> OpTyping {
    std::string ts;
    for (int i = 0; i < n; ++i) ts += (i ? ", " : "") + std::string(name(in[i]));
    throw TypeError(fmt::format("ufunc '{}' does not support input dtype(s) ({})", row.name, ts));
  };
  OpTyping t{};
  // Two operands of one floating dtype (most of what numeric code writes): the general rules
  // below give that dtype, or bool for a comparison; answered without them.
  if (n == 2 && in[0] == in[1] && kind(in[0]) == DKind::Float && (kind_mask(in[0]) & row.accepts) &&
      (row.rule == TypeRule::Same || row.rule == TypeRule::TrueDivide || row.rule == TypeRule::Compare)) {
    t.compute[0] = t.compute[1] = in[0];
    t.result = row.rule == TypeRule::Compare ? DType::Bool : in[0];
    return t;
  }
  switch (row.rule) {
    case TypeRule::Cast:
      t.compute[0] = in[0];
      t.result = cast_to;
      return t;
    case TypeRule::Where: {
      DType p = promote_types(in[1], in[2]);
      t.compute[0] = DType::Bool;
      t.compute[1] = t.compute[2] = p;
      t.result = p;
      return t;
    }
    case TypeRule::Logical:
      for (int i = 0; i < n; ++i) t.compute[i] = DType::Bool;
      t.result = DType::Bool;
      return t;
    case TypeRule::Predicate:
      t.compute[0] = in[0];
      t.result = DType::Bool;
      return t;
    default: break;
  }
  DType p = in[0];
  for (int i = 1; i < n; ++i) p = promote_types(p, in[i]);
  if (p == DType::Bool && row.bool_as_int8) p = DType::Int8;
  if (!(kind_mask(p) & row.accepts)) return fail();
  if (row.rule == TypeRule::FloatReal && p == DType::Bool) p = DType::Float64;  // np.angle(bool): float64
  switch (row.rule) {
    case TypeRule::Float:
    case TypeRule::FloatReal: {
      if (is_complex(p) || p == DType::Float64) break;
      // NumPy's loop: the first float type every input casts to safely. Not float_for of
      // the promoted type: arctan2(int8, uint8) runs in float16 though int16 is their
      // promotion (whose float would be float32).
      for (DType f : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
        bool all = true;
        for (int i = 0; i < n; ++i) all = all && can_cast_safe(in[i], f);
        if (all) {
          p = f;
          break;
        }
      }
      break;
    }
    case TypeRule::TrueDivide: p = is_float(p) || is_complex(p) ? p : DType::Float64; break;
    default: break;
  }
  for (int i = 0; i < n; ++i) t.compute[i] = p;
  t.result = row.rule == TypeRule::Compare ? DType::Bool : p;
  if (row.rule == TypeRule::Real || row.rule == TypeRule::FloatReal) t.result = real_dtype(p);
  return t;
}

}  // namespace cufuse::detail
