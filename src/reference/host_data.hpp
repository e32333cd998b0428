// src/reference/host_data.hpp: the reference evaluator's element plumbing: the storage and
// compute C types of each dtype, conversions between them (NumPy's casts, half types
// rounded to nearest even), and strided walks over a Layout (gather, generator positions).
#pragma once
#include <cstdint>
#include <cstring>
#include <utility>

#include "codegen/host_helpers.hpp"
#include "core/node.hpp"
#include "cufuse/dtype.hpp"
#include "cufuse/error.hpp"

namespace cufuse::detail::ref {

template <class T> struct tag { using type = T; };
// complex64 / complex128 on the host: the helpers' pair (codegen/device_helpers.inc), stored
// and computed alike (the layout of std::complex<float/double>).
using c64_t = ref_kern::cf_cplx<float>;
using c128_t = ref_kern::cf_cplx<double>;
template <class T> inline constexpr bool is_cplx_v = ref_kern::cf_is_cplx<T>::value;
// The real type of a compute type (float for c64_t), T itself otherwise.
template <class T> struct real_of { using type = T; };
template <class F> struct real_of<ref_kern::cf_cplx<F>> { using type = F; };
template <class T> using real_of_t = typename real_of<T>::type;

// f(tag<S>) with S the type an element of dtype t is stored as (uint16_t: the bits of a
// float16/bfloat16; bool is read as uint8_t so that a stray byte value is not UB).
template <class F>
decltype(auto) with_storage_type(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(tag<uint8_t>{});
    case DType::Int8: return f(tag<int8_t>{});
    case DType::Int16: return f(tag<int16_t>{});
    case DType::Int32: return f(tag<int32_t>{});
    case DType::Int64: return f(tag<long long>{});
    case DType::UInt8: return f(tag<uint8_t>{});
    case DType::UInt16: return f(tag<uint16_t>{});
    case DType::UInt32: return f(tag<uint32_t>{});
    case DType::UInt64: return f(tag<unsigned long long>{});
    case DType::Float16: case DType::BFloat16: return f(tag<uint16_t>{});
    case DType::Float32: return f(tag<float>{});
    case DType::Float64: return f(tag<double>{});
    case DType::Complex64: return f(tag<c64_t>{});
    case DType::Complex128: return f(tag<c128_t>{});
  }
  throw InternalError("reference: bad dtype");
}

// f(tag<C>) with C the type an op computes on for dtype t (what src/reference/op_reference.cpp's
// ref functions use too): float for float16/bfloat16, long long for int64.
template <class F>
decltype(auto) with_compute_type(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(tag<bool>{});
    case DType::Int8: return f(tag<int8_t>{});
    case DType::Int16: return f(tag<int16_t>{});
    case DType::Int32: return f(tag<int32_t>{});
    case DType::Int64: return f(tag<long long>{});
    case DType::UInt8: return f(tag<uint8_t>{});
    case DType::UInt16: return f(tag<uint16_t>{});
    case DType::UInt32: return f(tag<uint32_t>{});
    case DType::UInt64: return f(tag<unsigned long long>{});
    case DType::Float16: case DType::BFloat16: case DType::Float32: return f(tag<float>{});
    case DType::Float64: return f(tag<double>{});
    case DType::Complex64: return f(tag<c64_t>{});
    case DType::Complex128: return f(tag<c128_t>{});
  }
  throw InternalError("reference: bad dtype");
}

// Bytes of one compute value of dtype t.
int compute_size(DType t);
// True when the compute representation of t is its storage (not bool, not a half type).
inline bool compute_is_storage(DType t) { return t != DType::Bool && !is_half(t); }

// ------------------------------------------------------------ half types
// Bits -> float (exact); float/double -> bits rounded to nearest even, directly (no double
// rounding from double). The rounding is cufuse::half / cufuse::bfloat16_t's.
float f16_to_float(uint16_t bits);
inline float bf16_to_float(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t float_to_f16(float f);
uint16_t float_to_bf16(float f);
uint16_t double_to_f16(double d);
uint16_t double_to_bf16(double d);
inline float half_bits_to_float(DType t, uint16_t b) {
  return t == DType::Float16 ? f16_to_float(b) : bf16_to_float(b);
}

// ------------------------------------------------------------ conversions
// n elements stored as dtype `from` -> compute values of dtype `to`, converted as astype
// does (codegen's cf_cast: C's rules, float -> integer saturating, NaN -> 0); a half `to`
// gets the value rounded to that half type (from float64: directly).
void to_compute(DType from, const void* src, DType to, void* dst, int64_t n);
// n compute values of dtype t -> t's storage (half types rounded to nearest even).
void compute_to_storage(DType t, const void* src, void* dst, int64_t n);
// n float64 values -> float16/bfloat16 storage, rounded once from double.
void f64_to_half_storage(DType t, const double* src, uint16_t* dst, int64_t n);

// ------------------------------------------------------------ strided walks
// A layout reduced to the fewest dims walking the same positions in the same order
// (size-1 dims dropped, mergeable neighbours merged). Empty shape: one element.
struct Walk {
  Shape shape;
  Strides strides;
  int64_t offset = 0, count = 1;
};
Walk make_walk(const Layout& l);

// Calls run(i, pos, stride, len) for consecutive runs of the layout's elements in row-major
// order: elements i..i+len-1 sit at positions pos, pos+stride, ...
template <class Run>
void for_each_run(const Layout& l, Run&& run) {
  Walk w = make_walk(l);
  if (w.count == 0) return;
  const int nd = w.shape.ndim();
  const int64_t* shp = w.shape.data();
  const int64_t* str = w.strides.data();
  if (nd == 0) {
    run(int64_t(0), w.offset, int64_t(0), int64_t(1));
    return;
  }
  const int64_t inner = shp[nd - 1], istride = str[nd - 1];
  SmallVec<int64_t, 8> idx(static_cast<size_t>(nd), 0);
  int64_t pos = w.offset;
  for (int64_t i = 0; i < w.count; i += inner) {
    run(i, pos, istride, inner);
    for (int d = nd - 2; d >= 0; --d) {  // odometer over the outer dims
      pos += str[d];
      if (++idx[d] < shp[d]) break;
      pos -= str[d] * shp[d];
      idx[d] = 0;
    }
  }
}

// The lowest and highest position the layout touches (numel > 0).
std::pair<int64_t, int64_t> layout_extent(const Layout& l);

// out[i] = base[pos(i) - base_first] for every element of the layout, elements of
// `itemsize` bytes; positions outside [base_first, base_first + base_count) throw
// InternalError naming `what`.
void gather(const void* base, int64_t base_first, int64_t base_count, int itemsize, const Layout& l,
            void* out, const char* what);

}  // namespace cufuse::detail::ref
