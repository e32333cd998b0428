// tests/test_typed_rules.cpp: the typed layer's compile-time dtype rules (cufuse/typed_rules.hpp)
// checked against the run-time ones: every kernel row of the Hana table against the op
// table's row (name, arity) and its typing (type_op) on every dtype pair (triple for where),
// weak C++ scalars of each kind beside arrays of every dtype against the dynamic API's
// result dtype, promotion against promote_types, and the C++ type of each dtype.
#include <boost/hana/for_each.hpp>
#include <boost/hana/keys.hpp>

#include "core/op_table.hpp"
#include "graph/elementwise.hpp"
#include "cufuse/typed.hpp"
#include "test_core_helpers.hpp"

namespace ty = cf::typed;
using cf::detail::Op;

namespace {

constexpr cf::DType dt(int i) { return static_cast<cf::DType>(i); }

// The run-time typing, or ok = false where NumPy has no loop.
ty::Typing runtime_typing(Op op, const cf::DType* in, int n) {
  try {
    return {cf::detail::type_op(op, in, n).result, true};
  } catch (const cf::TypeError&) {
    return {};
  }
}

template <class Tag>
void check_row(Op id) {
  constexpr ty::OpRule r = ty::rule_of<Tag>;
  const auto& row = cf::detail::op_row(id);
  CHECK(std::string(r.name) == row.name);
  CHECK(r.arity == row.arity);
  if (row.rule == cf::detail::TypeRule::Cast) return;  // the target is the node's own
  int cases = 1;
  for (int k = 0; k < r.arity; ++k) cases *= cf::kNumDTypes;
  for (int c = 0; c < cases; ++c) {
    cf::DType in[3];
    for (int k = 0, v = c; k < r.arity; ++k, v /= cf::kNumDTypes) in[k] = dt(v % cf::kNumDTypes);
    const ty::Typing want = runtime_typing(id, in, r.arity);
    const ty::Typing got = ty::type_op_c(r, in, r.arity);
    CHECK_MESSAGE(got.ok == want.ok, row.name, " ", cf::name(in[0]), " ", cf::name(in[1]));
    if (got.ok && want.ok) CHECK_MESSAGE(got.result == want.result, row.name, " ", cf::name(in[0]), " ", cf::name(in[1]));
  }
}

// Evaluated at compile time: the table is usable in constant expressions.
static_assert(ty::rule_of<ty::op::add>.arity == 2);
static_assert(ty::type_op_c(ty::rule_of<ty::op::sqrt>, std::array{cf::DType::Int8}.data(), 1).result == cf::f16);
static_assert(ty::promote(cf::i8, cf::u8) == cf::i16 && ty::promote(cf::bf16, cf::f16) == cf::f32);
static_assert(std::is_same_v<ty::cpp_type<cf::DType::BFloat16>, cf::bfloat16_t>);

}  // namespace

TEST_CASE("typed rules: the Hana table's rows type every dtype as the op table does") {
#define CUFUSE_CHECK_ROW(id, fn, ...) check_row<ty::op::fn>(Op::id);
  CUFUSE_ELEMENTWISE_OPS(CUFUSE_CHECK_ROW)
#undef CUFUSE_CHECK_ROW
  int n = 0;
  boost::hana::for_each(boost::hana::keys(ty::op_rules), [&](auto) { ++n; });
  CHECK(n == cf::detail::kNumOps + 1);  // every row, and the table's end marker
}

TEST_CASE("typed rules: promotion and same_kind casting match the run time's") {
  for (int a = 0; a < cf::kNumDTypes; ++a)
    for (int b = 0; b < cf::kNumDTypes; ++b) {
      CHECK(ty::promote(dt(a), dt(b)) == cf::promote_types(dt(a), dt(b)));
      CHECK(ty::can_cast_same_kind_c(dt(a), dt(b)) == cf::detail::can_cast_same_kind(dt(a), dt(b)));
    }
}

TEST_CASE("typed rules: weak scalars beside arrays of every dtype give the dynamic API's dtype") {
  const cf::Scalar scalars[] = {cf::Scalar(true), cf::Scalar(2), cf::Scalar(uint64_t(3)), cf::Scalar(0.5),
                                cf::Scalar(std::complex<double>(0.5, 1))};
  for (int i = 0; i < cf::detail::kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    const auto& row = cf::detail::op_row(op);
    if (row.arity != 2) continue;
    ty::OpRule r{};
#define CUFUSE_ROW_OF(id, fn, ...) if (op == Op::id) r = ty::rule_of<ty::op::fn>;
    CUFUSE_ELEMENTWISE_OPS(CUFUSE_ROW_OF)
#undef CUFUSE_ROW_OF
    for (int d = 0; d < cf::kNumDTypes; ++d)
      for (const cf::Scalar& s : scalars)
        for (int side = 0; side < 2; ++side) {
          cf::Array a = cf::placeholder(dt(d), {4});
          ty::ArgType args[2] = {{dt(d), false}, {s.dtype(), true}};
          if (side) std::swap(args[0], args[1]);
          const ty::Typing got = ty::type_args(r, args, 2);
          ty::Typing want;
          try {
            cf::Array e = side ? cf::apply(row.name, {s, a}) : cf::apply(row.name, {a, s});
            want = {e.dtype(), true};
          } catch (const cf::TypeError&) {
          }
          CHECK_MESSAGE(got.ok == want.ok, row.name, " ", cf::name(dt(d)), " ", s.str(), " side ", side);
          if (got.ok && want.ok)
            CHECK_MESSAGE(got.result == want.result, row.name, " ", cf::name(dt(d)), " ", s.str(), " side ", side);
        }
  }
}
