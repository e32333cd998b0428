// src/plan/scalar_forms.hpp: the value-dependent forms a kernel is specialized on.
//
// Scalars are kernel parameters, so one kernel serves every value. The exception is a value
// that allows a cheaper form with the same bits. Today there are two:
//   exact reciprocal — true division by a Scalar leaf whose value is a power of two is emitted
//   as multiplication by its reciprocal (a parameter the binder computes). Both round the same
//   exact quotient a * 2^-k once, so the bits are equal (NaN, infinities, signed zeros and
//   subnormal results included; kernels are compiled without flush-to-zero). It spares the
//   IEEE division sequence: ~15 ms of NVRTC time for W12's kernel on the H100 machine, and
//   about ten instructions per element.
//   unit numerator — true division of a Scalar leaf equal to 1 (1 / x) is emitted with a
//   literal 1, which NVVM makes rcp.rn: the correctly rounded reciprocal, the bits of the
//   correctly rounded division 1 / x (W15's cumulative normal distribution, twice a call).
//   part bound — `coordinate < s`, the coordinate generator of a join or pad (graph/manip_support.hpp:
//   is_join_coordinate; never a user's arange) compared with a Scalar leaf (a concatenation's
//   choice of part): rule block-partitioned-parts (codegen/elementwise_parts.hpp) splits the
//   kernel's blocks at s, so the key holds s and the generator's start and step.
// The graph key records the form (plan/signature.cpp), so a plan made for x / 2 is reused for
// x / 4 (with 0.25 bound) but never for x / 3. A Scalar leaf bound to a fuse() argument
// (Node::varies) takes no form: its value changes from call to call under one plan.
#pragma once
#include "core/node.hpp"

namespace cufuse::detail {

// True if elementwise node n is a true division by a Scalar leaf that takes the exact
// reciprocal form.
bool divides_by_exact_reciprocal(const Node* n);

// True if elementwise node n is a true division of a Scalar leaf equal to 1 (of the
// division's compute dtype) by anything: the unit-numerator form.
bool divides_one(const Node* n);

// The form of a true division node for the graph key: 0 none, 1 exact reciprocal, 2 unit
// numerator.
int division_form(const Node* n);

// For a part bound (above): true, with the bound and the generator's start and step in `v`.
bool part_bound(const Node* n, int64_t v[3]);

// The exact reciprocal 1 / v of a divisor of compute dtype `compute`, or NaN when v is not a
// power of two whose reciprocal is a normal number of that dtype's register type.
double exact_reciprocal(double v, DType compute);

}  // namespace cufuse::detail
