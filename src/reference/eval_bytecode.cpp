// src/reference/eval_bytecode.cpp: the interpreter's generated core compiled for the host (see
// eval_bytecode.hpp), with host definitions of what the device preamble gives kernels: the
// half storage types and their conversions (round to nearest even, as PTX's cvt.rn).
#include "reference/eval_bytecode.hpp"

#include <vector>

#include "codegen/host_helpers.hpp"
#include "reference/host_data.hpp"

namespace cufuse::detail::ref_kern {

using ref::bf16_to_float;
using ref::double_to_bf16;
using ref::double_to_f16;
using ref::f16_to_float;
using ref::float_to_bf16;
using ref::float_to_f16;

struct cf_f16 { unsigned short x; };
struct cf_bf16 { unsigned short x; };
inline float cf_ld(cf_f16 h) { return f16_to_float(h.x); }
inline float cf_ld(cf_bf16 h) { return bf16_to_float(h.x); }
template <class T> inline T cf_ld(T v) { return v; }
template <class S> inline S cf_st(float v);
template <> inline cf_f16 cf_st<cf_f16>(float v) { return cf_f16{float_to_f16(v)}; }
template <> inline cf_bf16 cf_st<cf_bf16>(float v) { return cf_bf16{float_to_bf16(v)}; }
inline float cf_round_f16(float v) { return f16_to_float(float_to_f16(v)); }
inline float cf_round_bf16(float v) { return bf16_to_float(float_to_bf16(v)); }
inline float cf_round_f16(double v) { return f16_to_float(double_to_f16(v)); }
inline float cf_round_bf16(double v) { return bf16_to_float(double_to_bf16(v)); }

#define CFI_FN inline
#define CFI_LOOP
#include "interp_core.inc"
#undef CFI_LOOP
#undef CFI_FN

}  // namespace cufuse::detail::ref_kern

namespace cufuse::detail {

void run_bytecode_on_host(const CfiProgram& p) {
  std::vector<unsigned long long> regs(static_cast<size_t>(p.n_regs > 0 ? p.n_regs : 1) * CFI_TILE);
  for (long long base = 0; base < p.numel; base += CFI_TILE) ref_kern::cfi_run(p, regs.data(), 1, 0, base);
}

}  // namespace cufuse::detail
