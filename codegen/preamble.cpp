// codegen/preamble.cpp: the preamble of every generated kernel (see preamble.hpp).
#include "codegen/preamble.hpp"

namespace cufuse::detail {

static const char* kHelpers =
#include "device_helpers_str.inc"
    ;

static const char* kTypes = R"CF(
struct cf_f16 { unsigned short x; };
struct cf_bf16 { unsigned short x; };
__device__ __forceinline__ float cf_ld(cf_f16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.x)); return f; }
__device__ __forceinline__ float cf_ld(cf_bf16 h) { return __uint_as_float(((unsigned int)h.x) << 16); }
template <class T> __device__ __forceinline__ T cf_ld(T v) { return v; }
template <class S> __device__ __forceinline__ S cf_st(float v);
template <> __device__ __forceinline__ cf_f16 cf_st<cf_f16>(float v) { cf_f16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.x) : "f"(v)); return h; }
template <> __device__ __forceinline__ cf_bf16 cf_st<cf_bf16>(float v) { cf_bf16 h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.x) : "f"(v)); return h; }
__device__ __forceinline__ float cf_round_f16(float v) { return cf_ld(cf_st<cf_f16>(v)); }
__device__ __forceinline__ float cf_round_bf16(float v) { return cf_ld(cf_st<cf_bf16>(v)); }
__device__ __forceinline__ float cf_round_f16(double v) { cf_f16 h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h.x) : "d"(v)); return cf_ld(h); }
__device__ __forceinline__ float cf_round_bf16(double v) { cf_bf16 h; asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(h.x) : "d"(v)); return cf_ld(h); }
template <class T, int N> struct __align__(sizeof(T) * N) cf_vec { T v[N]; };
)CF";

const std::string& kernel_preamble() {
  static const std::string text = std::string("#define CF_FN __device__ __forceinline__\n") + kHelpers + kTypes;
  return text;
}

}  // namespace cufuse::detail
