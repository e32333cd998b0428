// src/plan/scalar_forms.cpp: the value-dependent kernel forms (see scalar_forms.hpp).
#include "plan/scalar_forms.hpp"

#include <cmath>
#include <limits>

#include "core/op_table.hpp"
#include "graph/manip_support.hpp"

namespace cufuse::detail {

double exact_reciprocal(double v, DType compute) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!is_float(compute) || !std::isfinite(v) || v == 0) return nan;
  int e = 0;
  const double m = std::frexp(v, &e);  // v = m * 2^e, |m| in [0.5, 1)
  if (std::fabs(m) != 0.5) return nan;
  const int k = e - 1;                 // v = +-2^k
  // Register type: double for float64, float for the others (halves compute in float). v and
  // 1/v both normal there, so the conversions of v on its way into the kernel are exact too.
  const int lim = compute == DType::Float64 ? 1022 : 126;
  if (k < -lim || k > lim) return nan;
  return 1.0 / v;
}

bool divides_by_exact_reciprocal(const Node* n) {
  if (n->k() != NodeKind::Elementwise || n->op != static_cast<uint16_t>(Op::TrueDivide) || n->inputs.size() != 2)
    return false;
  const Node* d = n->inputs[1].get();
  if (d->k() != NodeKind::Scalar || d->varies || is_complex(n->dtype)) return false;  // complex: a / b as written
  // A true division computes in its result dtype (op_table's TrueDivide rule), so n->dtype is
  // the divisor's compute dtype, without type_op on this path (every graph key asks). The
  // Scalar keeps its value in its own dtype (make_scalar): the value is what the kernel sees.
  return !std::isnan(exact_reciprocal(d->scalar.to_double(), n->dtype));
}

bool divides_one(const Node* n) {
  if (n->k() != NodeKind::Elementwise || n->op != static_cast<uint16_t>(Op::TrueDivide) || n->inputs.size() != 2)
    return false;
  const Node* a = n->inputs[0].get();
  if (a->k() != NodeKind::Scalar || a->varies || !is_float(n->dtype)) return false;
  return a->scalar.to_double() == 1.0;  // 1 is exact in every float dtype
}

int division_form(const Node* n) {
  if (divides_by_exact_reciprocal(n)) return 1;
  return divides_one(n) ? 2 : 0;
}

bool part_bound(const Node* n, int64_t v[3]) {
  if (n->k() != NodeKind::Elementwise || n->op != static_cast<uint16_t>(Op::Less) || n->inputs.size() != 2) return false;
  const Node* g = n->inputs[0].get();
  const Node* s = n->inputs[1].get();
  if (!is_join_coordinate(*g)) return false;  // a user's arange: the bound stays a parameter
  if (s->k() != NodeKind::Scalar || s->varies) return false;
  v[0] = s->scalar.to_int64();
  v[1] = g->gen.istart;
  v[2] = g->gen.istep_second;
  return true;
}

}  // namespace cufuse::detail
