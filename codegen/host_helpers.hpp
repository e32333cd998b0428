// codegen/host_helpers.hpp: codegen/device_helpers.inc compiled for the host: the op table's
// host references and the reference evaluator's casts, generators and reduction combines.
// The same text the kernels and src/reference/op_reference.cpp compile, in a namespace of its own
// with <cmath>'s overloads brought in, so sqrt(float) is the float function as in CUDA.
#pragma once
#include <cmath>

namespace cufuse::detail::ref_kern {
using std::acos; using std::acosh; using std::asin; using std::asinh; using std::atan;
using std::atan2; using std::atanh; using std::cbrt; using std::ceil; using std::copysign;
using std::cos; using std::cosh; using std::exp; using std::exp2; using std::expm1;
using std::fabs; using std::floor; using std::fmod; using std::hypot; using std::lgamma; using std::log;
using std::log10; using std::log1p; using std::log2; using std::pow; using std::rint;
using std::sin; using std::sinh; using std::sqrt; using std::tan; using std::tanh; using std::trunc;
// What kernels get as inline PTX (codegen/preamble.cpp).
inline long long cf_smax64(long long a, long long b) { return a > b ? a : b; }
inline long long cf_smin64(long long a, long long b) { return a < b ? a : b; }
inline unsigned long long cf_umax64(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline unsigned long long cf_umin64(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline long long cf_sel64(bool c, long long a, long long b) { return c ? a : b; }
inline short cf_s16_add(short a, short b) { return short(static_cast<unsigned>(a) + static_cast<unsigned>(b)); }
inline short cf_s16_sub(short a, short b) { return short(static_cast<unsigned>(a) - static_cast<unsigned>(b)); }
inline short cf_s16_mul(short a, short b) { return short(static_cast<unsigned>(a) * static_cast<unsigned>(b)); }
inline float cf_inf_f() { return HUGE_VALF; }
inline double cf_inf_d() { return HUGE_VAL; }
inline signed char cf_s8_ext(signed char v) { return v; }
inline unsigned char cf_u8_ext(unsigned char v) { return v; }
inline float cf_opq(float a) { return a; }
inline double cf_opq(double a) { return a; }
#define CF_FN inline
#define CF_FN_OUTLINE inline
#include "codegen/device_helpers.inc"
#undef CF_FN_OUTLINE
#undef CF_FN
}  // namespace cufuse::detail::ref_kern
