// tests/op_cases.hpp: the (op row, dtype) cases tests run every kernel row of the op table on:
// each dtype a row takes, its three operands' dtypes (a where's condition bool) and its typing.
#pragma once
#include <cufuse/cufuse.hpp>

#include "core/op_table.hpp"

namespace cufuse_test {

inline constexpr cufuse::DType kAllDTypes[] = {
    cufuse::bool_, cufuse::i8,  cufuse::i16,  cufuse::i32, cufuse::i64, cufuse::u8, cufuse::u16,
    cufuse::u32,   cufuse::u64, cufuse::f16, cufuse::bf16, cufuse::f32, cufuse::f64};

// f(row, t, in, typing) for every kernel row but astype and every dtype t NumPy has its loop for.
template <class F>
void for_each_op_case(F&& f) {
  using namespace cufuse::detail;
  for (int op = 0; op < kNumOps; ++op) {
    const OpRow& row = op_row(static_cast<Op>(op));
    if (row.id == Op::Cast) continue;
    for (cufuse::DType t : kAllDTypes) {
      cufuse::DType in[3] = {t, t, t};
      if (row.rule == TypeRule::Where) in[0] = cufuse::bool_;
      OpTyping ty;
      try {
        ty = type_op(row.id, in, row.arity);
      } catch (const cufuse::TypeError&) {
        continue;
      }
      f(row, t, in, ty);
    }
  }
}

// Whether a row's second operand must stay small (exponents and shift counts of integers).
inline bool small_second_operand(const cufuse::detail::OpRow& row, cufuse::DType t) {
  using cufuse::detail::Op;
  return (row.id == Op::Power || row.id == Op::LeftShift || row.id == Op::RightShift) && !cufuse::is_float(t);
}

}  // namespace cufuse_test
