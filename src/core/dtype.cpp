// src/core/dtype.cpp: dtype facts, NumPy 2 promotion, host half conversions, Scalar.
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/node.hpp"
#include "cufuse/dtype.hpp"
#include "cufuse/error.hpp"
#include "cufuse/scalar.hpp"
#include "cufuse/shape.hpp"

namespace cufuse {

namespace {
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"bool", "b1", "bool", 1, DKind::Bool},
    {"int8", "i8", "signed char", 1, DKind::Int},
    {"int16", "i16", "short", 2, DKind::Int},
    {"int32", "i32", "int", 4, DKind::Int},
    {"int64", "i64", "long long", 8, DKind::Int},
    {"uint8", "u8", "unsigned char", 1, DKind::UInt},
    {"uint16", "u16", "unsigned short", 2, DKind::UInt},
    {"uint32", "u32", "unsigned int", 4, DKind::UInt},
    {"uint64", "u64", "unsigned long long", 8, DKind::UInt},
    {"float16", "f16", "cf_f16", 2, DKind::Float},
    {"bfloat16", "bf16", "cf_bf16", 2, DKind::Float},
    {"float32", "f32", "float", 4, DKind::Float},
    {"float64", "f64", "double", 8, DKind::Float},
    {"complex64", "c64", "cf_cplx<float>", 8, DKind::Complex},  // codegen/device_helpers.inc's pair
    {"complex128", "c128", "cf_cplx<double>", 16, DKind::Complex},
};

DType signed_of_size(int bytes) {
  switch (bytes) {
    case 1: return DType::Int8;
    case 2: return DType::Int16;
    case 4: return DType::Int32;
    default: return DType::Int64;
  }
}
}  // namespace

const DTypeInfo& info(DType t) {
  const unsigned i = static_cast<unsigned>(t);
  if (i >= unsigned(kNumDTypes)) [[unlikely]]  // a DType made by a cast from a bad integer
    throw TypeError(fmt::format("invalid dtype value {} (a DType holds one of {} dtypes, 0..{})", i, kNumDTypes,
                                kNumDTypes - 1));
  return kInfo[i];
}

DType parse_dtype(std::string_view s) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kInfo[i].name == s || kInfo[i].short_name == s) return static_cast<DType>(i);
  if (s == "bool_" || s == "b" || s == "?") return DType::Bool;
  if (s == "half") return DType::Float16;
  if (s == "float" || s == "double") return DType::Float64;  // NumPy: np.dtype('float') is float64
  if (s == "int" || s == "long") return DType::Int64;
  if (s == "complex" || s == "cdouble") return DType::Complex128;  // NumPy: np.dtype('complex') is complex128
  if (s == "csingle") return DType::Complex64;
  throw TypeError(fmt::format("unknown dtype '{}' (expected one of bool, int8..int64, uint8..uint64, "
                              "float16, bfloat16, float32, float64, complex64, complex128 or f32-style short names)", s));
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  const auto ka = kind(a), kb = kind(b);
  const int sa = itemsize(a), sb = itemsize(b);
  if (ka == DKind::Complex || kb == DKind::Complex) {
    if (a == DType::Complex128 || b == DType::Complex128) return DType::Complex128;
    const DType o = ka == DKind::Complex ? b : a;  // the other one, beside complex64
    if (o == DType::Complex64) return o;
    const bool fits64 = kind(o) == DKind::Float ? o != DType::Float64 : itemsize(o) <= 2;
    return fits64 ? DType::Complex64 : DType::Complex128;
  }
  if (ka == DKind::Float && kb == DKind::Float) {
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return sa >= sb ? a : b;
  }
  if (ka == DKind::Float || kb == DKind::Float) {
    DType f = ka == DKind::Float ? a : b;
    int isz = ka == DKind::Float ? sb : sa;
    switch (f) {
      case DType::Float64: return DType::Float64;
      case DType::Float32: return isz <= 2 ? DType::Float32 : DType::Float64;
      default:  // float16, bfloat16
        return isz == 1 ? f : (isz == 2 ? DType::Float32 : DType::Float64);
    }
  }
  if (ka == kb) return sa >= sb ? a : b;
  // one signed, one unsigned
  DType s = ka == DKind::Int ? a : b, u = ka == DKind::Int ? b : a;
  if (itemsize(s) > itemsize(u)) return s;
  if (u == DType::UInt64) return DType::Float64;
  return signed_of_size(itemsize(u) * 2);
}

DType float_for(DType t) {
  if (is_float(t) || is_complex(t)) return t;
  int sz = itemsize(t);
  return sz == 1 ? DType::Float16 : (sz == 2 ? DType::Float32 : DType::Float64);
}

bool can_cast_safe(DType from, DType to) { return promote_types(from, to) == to; }

// ----------------------------------------------------------------- half types
namespace {
// Rounds x (finite, any double) to the nearest value with `mant` explicit mantissa bits and
// minimum normal exponent `emin`, ties to even; returns the encoded bits (sign excluded).
uint16_t encode_small_float(double ax, int mant, int emin, int ebias, double overflow_at) {
  if (ax >= overflow_at) return static_cast<uint16_t>(((2 * ebias + 1) << mant));  // inf
  if (ax == 0) return 0;
  int e = std::ilogb(ax);
  if (e < emin) e = emin;
  double q = std::ldexp(1.0, e - mant);
  double r = std::nearbyint(ax / q) * q;  // exact scaling, ties to even
  if (r == 0) return 0;
  int er = std::ilogb(r);
  if (er < emin) {  // subnormal
    return static_cast<uint16_t>(r / std::ldexp(1.0, emin - mant));
  }
  uint32_t m = static_cast<uint32_t>((r / std::ldexp(1.0, er) - 1.0) * (1u << mant));
  return static_cast<uint16_t>(((er + ebias) << mant) | m);
}
double decode_small_float(uint16_t bits, int mant, int emin, int ebias, int ebits) {
  bool neg = bits >> 15;
  int e = (bits >> mant) & ((1 << ebits) - 1);
  uint32_t m = bits & ((1u << mant) - 1);
  double v;
  if (e == 0) v = std::ldexp(static_cast<double>(m), emin - mant);
  else if (e == (1 << ebits) - 1) v = m ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  else v = std::ldexp(1.0 + static_cast<double>(m) / (1u << mant), e - ebias);
  return neg ? -v : v;
}
uint16_t to_f16_bits(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7e00;
  return sign | encode_small_float(std::fabs(x), 10, -14, 15, 65520.0);
}
uint16_t to_bf16_bits(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7fc0;
  return sign | encode_small_float(std::fabs(x), 7, -126, 127, std::ldexp(2.0 - std::ldexp(1.0, -8), 127));
}
}  // namespace

half::half(float f) : bits(to_f16_bits(f)) {}
half::half(double d) : bits(to_f16_bits(d)) {}
half::operator float() const { return static_cast<float>(decode_small_float(bits, 10, -14, 15, 5)); }
bfloat16_t::bfloat16_t(float f) : bits(to_bf16_bits(f)) {}
bfloat16_t::bfloat16_t(double d) : bits(to_bf16_bits(d)) {}
bfloat16_t::operator float() const { return static_cast<float>(decode_small_float(bits, 7, -126, 127, 8)); }

// ----------------------------------------------------------------- Scalar
std::complex<double> Scalar::to_complex() const {
  if (kind_ == Kind::Complex) return {v_.c.re, v_.c.im};
  return {to_double(), 0.0};
}

double Scalar::to_double() const {
  switch (kind_) {
    case Kind::Bool: return v_.b ? 1.0 : 0.0;
    case Kind::Int: return static_cast<double>(v_.i);
    case Kind::UInt: return static_cast<double>(v_.u);
    default: return v_.f;
  }
}
int64_t Scalar::to_int64() const {
  switch (kind_) {
    case Kind::Bool: return v_.b;
    case Kind::Int: return v_.i;
    case Kind::UInt: return static_cast<int64_t>(v_.u);
    default: {
      double f = v_.f;
      if (std::isnan(f)) return 0;
      if (f <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
      if (f >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
      return static_cast<int64_t>(f);
    }
  }
}
uint64_t Scalar::to_uint64() const {
  switch (kind_) {
    case Kind::Bool: return v_.b;
    case Kind::Int: return static_cast<uint64_t>(v_.i);
    case Kind::UInt: return v_.u;
    default: {
      double f = v_.f;
      if (std::isnan(f) || f <= 0) return 0;
      if (f >= 1.8446744073709552e19) return std::numeric_limits<uint64_t>::max();
      return static_cast<uint64_t>(f);
    }
  }
}
bool Scalar::to_bool() const {
  switch (kind_) {
    case Kind::Bool: return v_.b;
    case Kind::Int: return v_.i != 0;
    case Kind::UInt: return v_.u != 0;
    case Kind::Complex: return v_.c.re != 0 || v_.c.im != 0;
    default: return v_.f != 0;
  }
}

bool Scalar::fits(DType t) const {
  if (kind_ == Kind::Complex) return is_complex(t);
  if (is_complex(t)) return true;
  if (kind_ == Kind::Float) return is_float(t);
  if (kind_ == Kind::Bool) return true;
  if (is_float(t)) return true;
  if (t == DType::Bool) return false;
  int bits = itemsize(t) * 8;
  if (is_signed_int(t)) {
    int64_t lo = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1));
    int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1;
    if (kind_ == Kind::UInt) return v_.u <= static_cast<uint64_t>(hi);
    return v_.i >= lo && v_.i <= hi;
  }
  uint64_t hi = bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t(1) << bits) - 1;
  if (kind_ == Kind::Int) return v_.i >= 0 && static_cast<uint64_t>(v_.i) <= hi;
  return v_.u <= hi;
}

Scalar Scalar::typed(const Scalar& v, DType t) {
  Scalar s;
  s.weak_ = false;
  s.dtype_ = t;
  switch (cufuse::kind(t)) {
    case DKind::Complex: {  // complex64 rounds each part to float (np.complex64(v))
      s.kind_ = Kind::Complex;
      const std::complex<double> z = v.to_complex();
      s.v_.c.re = t == DType::Complex64 ? double(float(z.real())) : z.real();
      s.v_.c.im = t == DType::Complex64 ? double(float(z.imag())) : z.imag();
      break;
    }
    case DKind::Bool: s.kind_ = Kind::Bool; s.v_.b = v.to_bool(); break;
    case DKind::Int: {
      s.kind_ = Kind::Int;
      int bits = itemsize(t) * 8;
      uint64_t raw = (v.kind_ == Kind::Float || v.kind_ == Kind::Complex) ? static_cast<uint64_t>(v.to_int64()) : v.to_uint64();
      if ((v.kind_ == Kind::Float || v.kind_ == Kind::Complex)) {  // saturate like cf_cast
        double f = v.v_.f;
        int64_t lo = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1));
        int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1;
        int64_t x = std::isnan(f) ? 0 : (f <= double(lo) ? lo : (f >= double(hi) ? hi : static_cast<int64_t>(f)));
        s.v_.i = x;
      } else {
        uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
        uint64_t w = raw & mask;
        if (bits < 64 && (w >> (bits - 1)) & 1) w |= ~mask;  // sign-extend
        s.v_.i = static_cast<int64_t>(w);
      }
      break;
    }
    case DKind::UInt: {
      s.kind_ = Kind::UInt;
      int bits = itemsize(t) * 8;
      uint64_t hi = bits == 64 ? ~0ull : ((1ull << bits) - 1);
      if (v.kind_ == Kind::Float || v.kind_ == Kind::Complex) {
        double f = v.v_.f;
        s.v_.u = std::isnan(f) || f <= 0 ? 0 : (f >= double(hi) ? hi : static_cast<uint64_t>(f));
      } else {
        s.v_.u = v.to_uint64() & hi;
      }
      break;
    }
    case DKind::Float: {
      s.kind_ = Kind::Float;
      double d = v.to_double();
      switch (t) {
        case DType::Float16: d = static_cast<float>(half(d)); break;
        case DType::BFloat16: d = static_cast<float>(bfloat16_t(d)); break;
        case DType::Float32: d = static_cast<float>(d); break;
        default: break;
      }
      s.v_.f = d;
      break;
    }
  }
  return s;
}

Scalar Scalar::from_bytes(const void* p, DType t) {
  auto rd = [&](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (t) {
    case DType::Bool: return Scalar::typed(Scalar(rd(bool{})), DType::Bool);
    case DType::Int8: return Scalar::typed(Scalar(rd(int8_t{})), DType::Int8);
    case DType::Int16: return Scalar::typed(Scalar(rd(int16_t{})), DType::Int16);
    case DType::Int32: return Scalar::typed(Scalar(rd(int32_t{})), DType::Int32);
    case DType::Int64: return Scalar::typed(Scalar(rd(int64_t{})), DType::Int64);
    case DType::UInt8: return Scalar::typed(Scalar(rd(uint8_t{})), DType::UInt8);
    case DType::UInt16: return Scalar::typed(Scalar(rd(uint16_t{})), DType::UInt16);
    case DType::UInt32: return Scalar::typed(Scalar(rd(uint32_t{})), DType::UInt32);
    case DType::UInt64: return Scalar::typed(Scalar(rd(uint64_t{})), DType::UInt64);
    case DType::Float16: return Scalar::typed(Scalar(static_cast<float>(half::from_bits(rd(uint16_t{})))), DType::Float16);
    case DType::BFloat16:
      return Scalar::typed(Scalar(static_cast<float>(bfloat16_t::from_bits(rd(uint16_t{})))), DType::BFloat16);
    case DType::Float32: return Scalar::typed(Scalar(rd(float{})), DType::Float32);
    case DType::Float64: return Scalar::typed(Scalar(rd(double{})), DType::Float64);
    case DType::Complex64: return Scalar::typed(Scalar(rd(std::complex<float>{})), DType::Complex64);
    case DType::Complex128: return Scalar::typed(Scalar(rd(std::complex<double>{})), DType::Complex128);
  }
  return Scalar();
}

std::string Scalar::str() const {
  switch (kind_) {
    case Kind::Bool: return v_.b ? "True" : "False";
    case Kind::Int: return std::to_string(v_.i);
    case Kind::UInt: return std::to_string(v_.u);
    case Kind::Complex: return fmt::format("({}{}{}j)", v_.c.re, std::signbit(v_.c.im) ? "" : "+", v_.c.im);
    default: return fmt::format("{}", v_.f);
  }
}

std::string to_string(const Shape& s) {
  if (s.size() == 1) return fmt::format("({},)", s[0]);
  return fmt::format("({})", fmt::join(s.begin(), s.end(), ", "));
}

}  // namespace cufuse

namespace cufuse::detail {

bool same_scalar(const Scalar& a, const Scalar& b) {
  if (a.kind() != b.kind() || a.weak() != b.weak() || a.dtype() != b.dtype()) return false;
  switch (a.kind()) {
    case Scalar::Kind::Bool: return a.payload().b == b.payload().b;
    case Scalar::Kind::Int: return a.payload().i == b.payload().i;
    case Scalar::Kind::UInt: return a.payload().u == b.payload().u;
    case Scalar::Kind::Float: return std::memcmp(&a.payload().f, &b.payload().f, sizeof(double)) == 0;
    case Scalar::Kind::Complex: return std::memcmp(&a.payload().c, &b.payload().c, sizeof(Scalar::Pair)) == 0;
  }
  return false;
}

}  // namespace cufuse::detail
