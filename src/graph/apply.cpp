// src/graph/apply.cpp: apply(), any op of the op table by NumPy name with its parameters by
// name. One adapter per signature family unpacks the operands and parameters and calls the
// public function the row declares (cufuse/ops.hpp), so kernel rows, composites and
// aliases are all reached the same way: by the CLI, the NumPy oracle and the GPU tests.
#include <fmt/format.h>

#include "core/op_table.hpp"
#include "cufuse/error.hpp"
#include "cufuse/ops.hpp"

namespace cufuse {

namespace {

using detail::Sig;

// The parameters given, checked against the row's signature.
class Params {
 public:
  Params(const char* op, Sig sig, const std::vector<OpParam>& given) : op_(op), given_(given) {
    const detail::Signature& s = detail::signature(sig);
    for (const OpParam& p : given) {
      bool known = false;
      for (int i = 0; i < s.n_params; ++i) known = known || p.name == s.params[i].name;
      if (!known) throw TypeError(fmt::format("{}() got an unexpected keyword argument '{}'", op, p.name));
    }
  }
  const Scalar* find(std::string_view name) const {
    for (const OpParam& p : given_)
      if (p.name == name) return &p.value;
    return nullptr;
  }
  double real(std::string_view name, double dflt) const {
    const Scalar* s = find(name);
    return s ? s->to_double() : dflt;
  }
  std::optional<double> optional_real(std::string_view name) const {
    const Scalar* s = find(name);
    return s ? std::optional<double>(s->to_double()) : std::nullopt;
  }
  bool boolean(std::string_view name, bool dflt) const {
    const Scalar* s = find(name);
    return s ? s->to_bool() : dflt;
  }
  int integer(std::string_view name, int dflt) const {
    const Scalar* s = find(name);
    if (!s) return dflt;
    if (s->kind() == Scalar::Kind::Float)
      throw TypeError(fmt::format("{}(): '{}' must be an integer, not a float", op_, name));
    return static_cast<int>(s->to_int64());
  }

 private:
  const char* op_;
  const std::vector<OpParam>& given_;
};

using Call = Array (*)(const Operand* o, const Params& p);

// One adapter per signature family: operands and parameters to the public function.
#define CUFUSE_CALL_UNARY(fn) [](const Operand* o, const Params&) { return fn(o[0]); }
#define CUFUSE_CALL_BINARY(fn) [](const Operand* o, const Params&) { return fn(o[0], o[1]); }
#define CUFUSE_CALL_WHERE(fn) [](const Operand* o, const Params&) { return fn(o[0], o[1], o[2]); }
#define CUFUSE_CALL_TERNARY(fn) CUFUSE_CALL_WHERE(fn)
#define CUFUSE_CALL_CAST(fn) nullptr
#define CUFUSE_CALL_ROUND(fn) [](const Operand* o, const Params& p) { return fn(o[0], p.integer("decimals", 0)); }
#define CUFUSE_CALL_NAN_TO_NUM(fn)                                                          \
  [](const Operand* o, const Params& p) {                                                   \
    return fn(o[0], p.real("nan", 0.0), p.optional_real("posinf"), p.optional_real("neginf")); \
  }
#define CUFUSE_CALL_ISCLOSE(fn)                                                                          \
  [](const Operand* o, const Params& p) {                                                                \
    return fn(o[0], o[1], p.real("rtol", 1e-05), p.real("atol", 1e-08), p.boolean("equal_nan", false)); \
  }

struct Entry {
  const char* name;
  Call call;
};
#define CUFUSE_ENTRY_KERNEL(id, fn, sym, sig, ...) Entry{#fn, CUFUSE_CALL_##sig(fn)},
#define CUFUSE_ENTRY_COMPOSITE(fn, sig, ...) Entry{#fn, CUFUSE_CALL_##sig(fn)},
#define CUFUSE_ENTRY_ALIAS(fn, id, sig) Entry{#fn, CUFUSE_CALL_##sig(fn)},
// In op_functions() order (src/core/op_table.cpp lists the three kinds in this order too).
const Entry kEntries[] = {CUFUSE_ELEMENTWISE_OPS(CUFUSE_ENTRY_KERNEL) CUFUSE_COMPOSITE_OPS(CUFUSE_ENTRY_COMPOSITE)
                              CUFUSE_OP_ALIASES(CUFUSE_ENTRY_ALIAS)};

}  // namespace

Array apply(std::string_view numpy_name, const std::vector<Operand>& args, const std::vector<OpParam>& params) {
  const detail::OpFunction* f = detail::find_function(numpy_name);
  if (!f) throw ValueError(fmt::format("no elementwise op named '{}'", numpy_name));
  const Entry& e = kEntries[f - detail::op_functions().data()];
  if (std::string_view(e.name) != f->name)
    throw InternalError(fmt::format("apply: entry {} is not row {}", e.name, f->name));
  const detail::Signature& s = detail::signature(f->sig);
  if (static_cast<int>(args.size()) != s.n_operands)
    throw ValueError(fmt::format("{} takes {} argument(s), got {}", f->name, s.n_operands, args.size()));
  return e.call(args.data(), Params(f->name, f->sig, params));
}

}  // namespace cufuse
