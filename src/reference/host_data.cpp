// src/reference/host_data.cpp: conversions between storage and compute types, half-type
// rounding, and strided gathers for the reference evaluator.
#include "reference/host_data.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "codegen/host_helpers.hpp"

namespace cufuse::detail::ref {

int compute_size(DType t) {
  return with_compute_type(t, [](auto tc) { return static_cast<int>(sizeof(typename decltype(tc)::type)); });
}

// ------------------------------------------------------------ half types
float f16_to_float(uint16_t bits) {
  // Every float16 value, decoded once by cufuse::half (the library's one decoder).
  static const std::unique_ptr<float[]> table = [] {
    auto t = std::make_unique<float[]>(65536);
    for (uint32_t b = 0; b < 65536; ++b) t[b] = static_cast<float>(half::from_bits(static_cast<uint16_t>(b)));
    return t;
  }();
  return table[bits];
}
uint16_t float_to_f16(float f) { return half(f).bits; }
uint16_t double_to_f16(double d) { return half(d).bits; }
uint16_t double_to_bf16(double d) { return bfloat16_t(d).bits; }
uint16_t float_to_bf16(float f) {
  // Nearest even on the top 16 bits of the float (bfloat16 is float's upper half); NaN
  // stays a quiet NaN of the same sign. Agrees with cufuse::bfloat16_t(float) on every
  // input (tests/test_reference_oracle.cpp checks all the ties and boundaries).
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7fc0u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// ------------------------------------------------------------ conversions
void to_compute(DType from, const void* src, DType to, void* dst, int64_t n) {
  if (is_half(to) && from != to) {
    // The value becomes a `to` first (as NumPy's cast into the loop's dtype does), then
    // its float. From float64 it is rounded once; from anything else through float.
    float* d = static_cast<float*>(dst);
    if (from == DType::Float64) {
      const double* s = static_cast<const double*>(src);
      for (int64_t i = 0; i < n; ++i)
        d[i] = half_bits_to_float(to, to == DType::Float16 ? double_to_f16(s[i]) : double_to_bf16(s[i]));
      return;
    }
    to_compute(from, src, DType::Float32, dst, n);
    for (int64_t i = 0; i < n; ++i)
      d[i] = half_bits_to_float(to, to == DType::Float16 ? float_to_f16(d[i]) : float_to_bf16(d[i]));
    return;
  }
  with_storage_type(from, [&](auto fs) {
    using S = typename decltype(fs)::type;
    with_compute_type(to, [&](auto tc) {
      using C = typename decltype(tc)::type;
      const S* s = static_cast<const S*>(src);
      C* d = static_cast<C*>(dst);
      if constexpr (std::is_same_v<S, uint16_t>) {
        if (is_half(from)) {
          for (int64_t i = 0; i < n; ++i) d[i] = ref_kern::cf_cast<C>(half_bits_to_float(from, s[i]));
          return;
        }
      }
      if (from == DType::Bool) {
        for (int64_t i = 0; i < n; ++i) d[i] = ref_kern::cf_cast<C>(s[i] != 0);
      } else {
        for (int64_t i = 0; i < n; ++i) d[i] = ref_kern::cf_cast<C>(s[i]);
      }
    });
  });
}

void compute_to_storage(DType t, const void* src, void* dst, int64_t n) {
  if (t == DType::Float16 || t == DType::BFloat16) {
    const float* s = static_cast<const float*>(src);
    uint16_t* d = static_cast<uint16_t*>(dst);
    if (t == DType::Float16)
      for (int64_t i = 0; i < n; ++i) d[i] = float_to_f16(s[i]);
    else
      for (int64_t i = 0; i < n; ++i) d[i] = float_to_bf16(s[i]);
    return;
  }
  if (t == DType::Bool) {  // bool's object representation is 0/1: a byte copy
    const bool* s = static_cast<const bool*>(src);
    uint8_t* d = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = s[i] ? 1 : 0;
    return;
  }
  if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * itemsize(t));
}

void f64_to_half_storage(DType t, const double* src, uint16_t* dst, int64_t n) {
  if (t == DType::Float16)
    for (int64_t i = 0; i < n; ++i) dst[i] = double_to_f16(src[i]);
  else
    for (int64_t i = 0; i < n; ++i) dst[i] = double_to_bf16(src[i]);
}

// ------------------------------------------------------------ strided walks
Walk make_walk(const Layout& l) {
  Walk w;
  w.offset = l.offset;
  w.count = numel(l.shape);
  if (w.count == 0) return w;
  // Keep dims of extent > 1, then merge a dim into the one inside it where the outer
  // stride is the inner one's stride times its extent.
  for (int d = 0; d < l.shape.ndim(); ++d) {
    if (l.shape[d] == 1) continue;
    w.shape.push_back(l.shape[d]);
    w.strides.push_back(l.strides[d]);
  }
  Shape s;
  Strides st;
  for (int d = w.shape.ndim() - 1; d >= 0; --d) {
    if (!s.empty() && w.strides[d] == st.back() * s.back()) {
      s.back() *= w.shape[d];
    } else {
      s.push_back(w.shape[d]);
      st.push_back(w.strides[d]);
    }
  }
  std::reverse(s.begin(), s.end());
  std::reverse(st.begin(), st.end());
  w.shape = std::move(s);
  w.strides = std::move(st);
  return w;
}

std::pair<int64_t, int64_t> layout_extent(const Layout& l) {
  int64_t lo = l.offset, hi = l.offset;
  for (int d = 0; d < l.shape.ndim(); ++d) {
    int64_t span = (l.shape[d] - 1) * l.strides[d];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}

namespace {
template <class T>
void gather_typed(const void* base, int64_t first, const Layout& l, void* out) {
  const T* b = static_cast<const T*>(base);
  T* o = static_cast<T*>(out);
  for_each_run(l, [&](int64_t i, int64_t pos, int64_t stride, int64_t len) {
    T* dst = o + i;
    const T* src = b + (pos - first);
    if (stride == 1) {
      std::memcpy(dst, src, static_cast<size_t>(len) * sizeof(T));
    } else {
      for (int64_t k = 0; k < len; ++k) dst[k] = src[k * stride];
    }
  });
}
}  // namespace

void gather(const void* base, int64_t base_first, int64_t base_count, int itemsize, const Layout& l,
            void* out, const char* what) {
  if (numel(l.shape) == 0) return;
  auto [lo, hi] = layout_extent(l);
  if (lo < base_first || hi >= base_first + base_count)
    throw InternalError(fmt::format(
        "reference: {} of shape {} (strides ({}), offset {}) reads elements {}..{}, outside the {} "
        "elements it may read", what, to_string(l.shape), fmt::join(l.strides.begin(), l.strides.end(), ", "),
        l.offset, lo, hi, base_count));
  // Element base_first sits at `base`.
  switch (itemsize) {
    case 1: return gather_typed<uint8_t>(base, base_first, l, out);
    case 2: return gather_typed<uint16_t>(base, base_first, l, out);
    case 4: return gather_typed<uint32_t>(base, base_first, l, out);
    case 8: return gather_typed<uint64_t>(base, base_first, l, out);
    default: break;
  }
  const unsigned char* b = static_cast<const unsigned char*>(base);
  unsigned char* o = static_cast<unsigned char*>(out);
  for_each_run(l, [&](int64_t i, int64_t pos, int64_t stride, int64_t len) {
    for (int64_t k = 0; k < len; ++k)
      std::memcpy(o + (i + k) * itemsize, b + (pos - base_first + k * stride) * itemsize,
                  static_cast<size_t>(itemsize));
  });
}

}  // namespace cufuse::detail::ref
