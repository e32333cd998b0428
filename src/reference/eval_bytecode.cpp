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

// The narrow core's register vectors (the kernel's are 16-byte shared-memory accesses).
inline void cfn_ld4(unsigned* d, const unsigned* s) {
  for (int k = 0; k < 4; ++k) d[k] = s[k];
}
inline void cfn_st4(unsigned* d, const unsigned* s) {
  for (int k = 0; k < 4; ++k) d[k] = s[k];
}

#define CFI_FN inline
#define CFI_COLD inline
#define CFI_HOT inline
#define CFI_LOOP
#define CFI_UNROLL
#include "interp_core.inc"
#undef CFI_LOOP
#undef CFI_UNROLL
#undef CFI_FN
#undef CFI_COLD
#undef CFI_HOT

}  // namespace cufuse::detail::ref_kern

namespace cufuse::detail {

void run_bytecode_on_host(const CfiProgram& p) {
  if (p.narrow) {  // three simulated threads of one block, one after the other (an element's
                    // loads and stores are its own thread's), over the kernel's register layout
    const int nthr = 3;
    std::vector<unsigned> regs(static_cast<size_t>(p.n_regs > 0 ? p.n_regs : 1) * CFN_TILE * nthr);
    for (int t = 0; t < nthr; ++t) ref_kern::cfn_run(p, regs.data(), nthr, t, 0, 1);
    return;
  }
  std::vector<unsigned long long> regs(static_cast<size_t>(p.n_regs > 0 ? p.n_regs : 1) * CFI_TILE);
  for (long long base = 0; base < p.numel; base += CFI_TILE) ref_kern::cfi_run(p, regs.data(), 1, 0, base);
}

void run_row_bytecode_on_host(const CfiProgram& p, int threads) {
  const int n = threads;
  const int parts = p.splits > 1 ? p.splits : 1;
  std::vector<unsigned long long> regs(static_cast<size_t>(p.n_regs > 0 ? p.n_regs : 1) * CFI_TILE * n);
  std::vector<unsigned long long> acc(static_cast<size_t>(CFI_MAX_REDS) * n), val(CFI_MAX_REDS), sv(n);
  std::vector<long long> acci(acc.size()), vali(CFI_MAX_REDS), si(n), kofs(CFI_MAX_OPERANDS);
  // A split row's partials (the kernel's workspace, CfiProgram::ws): [reduction][split].
  std::vector<unsigned long long> wv(static_cast<size_t>(CFI_MAX_REDS) * parts);
  std::vector<long long> wi(wv.size());
  std::vector<ref_kern::CfiRow> rows(n);
  for (int t = 0; t < n; ++t)
    rows[t] = ref_kern::CfiRow{kofs.data(), acc.data() + t * CFI_MAX_REDS, acci.data() + t * CFI_MAX_REDS, val.data(),
                               vali.data()};
  const auto tree = [&](int k) {  // the kernel's tree over the threads' (sv, si)
    for (int o = n / 2; o > 0; o >>= 1)
      for (int t = 0; t < o; ++t) ref_kern::cfi_red_combine(p.red_code[k], sv[t], si[t], sv[t + o], si[t + o]);
    val[k] = sv[0];
    vali[k] = si[0];
  };
  // Sections [s0, s1) of one block (split `part` of `parts`), each reduction combined after its section.
  const auto sections = [&](int s0, int s1, int part) {
    for (int s = s0; s < s1; ++s) {
      for (int t = 0; t < n; ++t)
        if (p.sec_kind[s] == 0 || t == 0) ref_kern::cfi_row_section(p, regs.data(), n, t, s, part, parts, &rows[t]);
      for (int k = 0; k < p.n_reds; ++k) {
        if (p.red_sec[k] != s) continue;
        for (int t = 0; t < n; ++t) {
          sv[t] = rows[t].acc[k];
          si[t] = rows[t].acci[k];
        }
        tree(k);
      }
    }
  };
  for (long long r = 0; r < p.rows; ++r) {
    ref_kern::cfi_row_offsets(p, r, kofs.data());
    if (parts == 1) {
      for (int t = 0; t < n; ++t) ref_kern::cfi_row_init(p, rows[t].acc, rows[t].acci);
      sections(0, p.n_sections, 0);
      continue;
    }
    // A split row: its blocks one after the other (phase 0 each, its partials kept), then the
    // last block's combine (thread t: partials t, t + n, ... in order, then the tree) and the
    // epilogue, as the kernel runs them whichever block comes last.
    for (int part = 0; part < parts; ++part) {
      for (int t = 0; t < n; ++t) ref_kern::cfi_row_init(p, rows[t].acc, rows[t].acci);
      sections(0, 1, part);
      for (int k = 0; k < p.n_reds; ++k) {
        wv[static_cast<size_t>(k) * parts + part] = val[k];
        wi[static_cast<size_t>(k) * parts + part] = vali[k];
      }
    }
    for (int k = 0; k < p.n_reds; ++k) {
      for (int t = 0; t < n; ++t) {
        ref_kern::cfi_red_init(p.red_code[k], sv[t], si[t]);
        for (int q = t; q < parts; q += n)
          ref_kern::cfi_red_combine(p.red_code[k], sv[t], si[t], wv[static_cast<size_t>(k) * parts + q],
                                    wi[static_cast<size_t>(k) * parts + q]);
      }
      tree(k);
    }
    sections(1, p.n_sections, 0);
  }
}

}  // namespace cufuse::detail
