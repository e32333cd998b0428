// cufuse/scalar.hpp: a host scalar with NumPy 2's notion of weak (Python-like) scalars.
// C++ literals and variables are weak: x_f16 * 2.5 stays float16, x_u8 + 1 stays uint8.
// A Scalar made with an explicit dtype is strong and promotes like a 0-d array.
#pragma once
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cufuse/dtype.hpp"

namespace cufuse {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, UInt, Float, Complex };

  Scalar() : kind_(Kind::Int), weak_(true), dtype_(DType::Int64) { v_.i = 0; }
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  Scalar(T v) {  // NOLINT: implicit on purpose, C++ scalars convert like Python scalars
    weak_ = true;
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::Bool; v_.b = v; dtype_ = DType::Bool;
    } else if constexpr (std::is_floating_point_v<T>) {
      kind_ = Kind::Float; v_.f = static_cast<double>(v); dtype_ = DType::Float64;
    } else if constexpr (std::is_signed_v<T>) {
      kind_ = Kind::Int; v_.i = static_cast<int64_t>(v); dtype_ = DType::Int64;
    } else {
      kind_ = Kind::UInt; v_.u = static_cast<uint64_t>(v); dtype_ = DType::UInt64;
    }
  }
  // A C++ complex is weak like Python's complex (x_f32 * 1i stays complex64).
  template <class T>
  Scalar(std::complex<T> z) {  // NOLINT: implicit on purpose
    weak_ = true;
    kind_ = Kind::Complex;
    v_.c.re = static_cast<double>(z.real());
    v_.c.im = static_cast<double>(z.imag());
    dtype_ = DType::Complex128;
  }
  Scalar(half h) : Scalar(static_cast<float>(h)) {}
  Scalar(bfloat16_t h) : Scalar(static_cast<float>(h)) {}

  // A strong scalar of dtype t holding v converted as NumPy would (np.float32(v)).
  static Scalar typed(const Scalar& v, DType t);
  // A strong scalar of dtype t from one element's bytes in memory (itemsize(t) bytes at p).
  static Scalar from_bytes(const void* p, DType t);

  Kind kind() const { return kind_; }
  bool weak() const { return weak_; }
  // For a strong scalar, its dtype; for a weak one, NumPy's default for its kind
  // (bool, int64 (uint64 past int64's range), float64).
  DType dtype() const { return dtype_; }

  double to_double() const;  // a complex value's real part
  std::complex<double> to_complex() const;
  int64_t to_int64() const;   // C-style conversion (floats truncate)
  uint64_t to_uint64() const;
  bool to_bool() const;
  // Does this value fit dtype t exactly (NumPy 2 raises OverflowError otherwise for weak ints)?
  bool fits(DType t) const;
  std::string str() const;

  // Raw payload (the union is read by kind()); a complex value's real part sits where f does.
  struct Pair { double re, im; };
  union Payload { bool b; int64_t i; uint64_t u; double f; Pair c; };
  const Payload& payload() const { return v_; }

 private:
  Kind kind_;
  bool weak_;
  DType dtype_;
  Payload v_;
};

}  // namespace cufuse
