// cufuse/dtype.hpp: the dtypes, their facts, NumPy 2 promotion, and the map
// between C++ types and dtypes (Boost.Hana), including the host half types.
#pragma once
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include <boost/hana/at_key.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/contains.hpp>

namespace cufuse {

enum class DType : uint8_t {
  Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float16, BFloat16, Float32, Float64,
  Complex64, Complex128,  // std::complex<float> / std::complex<double> on the host: (real, imag) pairs
};
inline constexpr int kNumDTypes = 15;

inline constexpr DType bool_ = DType::Bool;
inline constexpr DType i8 = DType::Int8, i16 = DType::Int16, i32 = DType::Int32, i64 = DType::Int64;
inline constexpr DType u8 = DType::UInt8, u16 = DType::UInt16, u32 = DType::UInt32, u64 = DType::UInt64;
inline constexpr DType f16 = DType::Float16, bf16 = DType::BFloat16, f32 = DType::Float32, f64 = DType::Float64;
inline constexpr DType int8 = i8, int16 = i16, int32 = i32, int64 = i64;
inline constexpr DType uint8 = u8, uint16 = u16, uint32 = u32, uint64 = u64;
inline constexpr DType float16 = f16, bfloat16 = bf16, float32 = f32, float64 = f64;
inline constexpr DType c64 = DType::Complex64, c128 = DType::Complex128;
inline constexpr DType complex64 = c64, complex128 = c128;

enum class DKind : uint8_t { Bool, Int, UInt, Float, Complex };

struct DTypeInfo {
  std::string_view name;       // NumPy's name: "float32"
  std::string_view short_name; // "f32", as the tools spell it
  std::string_view cuda_type;  // storage type in generated CUDA
  int itemsize;
  DKind kind;
};
const DTypeInfo& info(DType t);
inline std::string_view name(DType t) { return info(t).name; }
inline int itemsize(DType t) { return info(t).itemsize; }
inline DKind kind(DType t) { return info(t).kind; }
inline bool is_bool(DType t) { return t == DType::Bool; }
inline bool is_float(DType t) { return kind(t) == DKind::Float; }
inline bool is_signed_int(DType t) { return kind(t) == DKind::Int; }
inline bool is_unsigned_int(DType t) { return kind(t) == DKind::UInt; }
inline bool is_integer(DType t) { return is_signed_int(t) || is_unsigned_int(t); }
inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
inline bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
// float32 for complex64, float64 for complex128 (the dtype of real, imag and abs); t otherwise.
inline DType real_dtype(DType t) {
  return t == DType::Complex64 ? DType::Float32 : (t == DType::Complex128 ? DType::Float64 : t);
}

// Parses "float32", "f32", "int64", "i64", "bool", "bfloat16", "bf16" ...; throws TypeError.
DType parse_dtype(std::string_view s);

// NumPy 2 promotion of two strong dtypes (with ml_dtypes' bfloat16 rules:
// bf16 with bool/int8/uint8 -> bf16; with float16/int16/uint16 -> f32; wider ints -> f64).
// Complex: complex64 holds float16/bfloat16/float32 and 8/16-bit integers; float64, int32
// and wider integers with complex64 give complex128.
DType promote_types(DType a, DType b);
// The smallest float dtype an integer or bool dtype casts to safely (NumPy's choice of
// loop for float-only ufuncs such as sqrt: int8 -> float16, int16 -> float32, int32 -> float64).
DType float_for(DType t);
// NumPy's can_cast(from, to, "safe").
bool can_cast_safe(DType from, DType to);

// ------------------------------------------------------------ host half types
// Storage-only 16-bit floats for host data; conversions round to nearest even.
struct half {
  uint16_t bits = 0;
  half() = default;
  explicit half(float f);
  explicit half(double d);
  explicit operator float() const;
  static half from_bits(uint16_t b) { half h; h.bits = b; return h; }
};
struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  explicit bfloat16_t(float f);
  explicit bfloat16_t(double d);
  explicit operator float() const;
  static bfloat16_t from_bits(uint16_t b) { bfloat16_t h; h.bits = b; return h; }
};
using bfloat16_type = bfloat16_t;

// ------------------------------------------------------------ C++ type <-> dtype
namespace detail {
namespace hana = boost::hana;
inline constexpr auto dtype_map = hana::make_map(
    hana::make_pair(hana::type_c<bool>, hana::integral_c<DType, DType::Bool>),
    hana::make_pair(hana::type_c<int8_t>, hana::integral_c<DType, DType::Int8>),
    hana::make_pair(hana::type_c<int16_t>, hana::integral_c<DType, DType::Int16>),
    hana::make_pair(hana::type_c<int32_t>, hana::integral_c<DType, DType::Int32>),
    hana::make_pair(hana::type_c<int64_t>, hana::integral_c<DType, DType::Int64>),
    hana::make_pair(hana::type_c<uint8_t>, hana::integral_c<DType, DType::UInt8>),
    hana::make_pair(hana::type_c<uint16_t>, hana::integral_c<DType, DType::UInt16>),
    hana::make_pair(hana::type_c<uint32_t>, hana::integral_c<DType, DType::UInt32>),
    hana::make_pair(hana::type_c<uint64_t>, hana::integral_c<DType, DType::UInt64>),
    hana::make_pair(hana::type_c<half>, hana::integral_c<DType, DType::Float16>),
    hana::make_pair(hana::type_c<bfloat16_t>, hana::integral_c<DType, DType::BFloat16>),
    hana::make_pair(hana::type_c<float>, hana::integral_c<DType, DType::Float32>),
    hana::make_pair(hana::type_c<double>, hana::integral_c<DType, DType::Float64>),
    hana::make_pair(hana::type_c<std::complex<float>>, hana::integral_c<DType, DType::Complex64>),
    hana::make_pair(hana::type_c<std::complex<double>>, hana::integral_c<DType, DType::Complex128>));

// long long / unsigned long long / long map onto the fixed-width types of the same size.
template <class T>
struct canonical {
  using type = std::remove_cv_t<T>;
};
template <> struct canonical<long long> { using type = int64_t; };
template <> struct canonical<unsigned long long> { using type = uint64_t; };
template <> struct canonical<long> { using type = std::conditional_t<sizeof(long) == 8, int64_t, int32_t>; };
template <> struct canonical<unsigned long> { using type = std::conditional_t<sizeof(long) == 8, uint64_t, uint32_t>; };
}  // namespace detail

template <class T> struct is_std_complex : std::false_type {};
template <class F> struct is_std_complex<std::complex<F>> : std::true_type {};
template <class T> inline constexpr bool is_std_complex_v = is_std_complex<std::remove_cv_t<T>>::value;

template <class T>
inline constexpr bool has_dtype_v =
    decltype(boost::hana::contains(detail::dtype_map,
                                   boost::hana::type_c<typename detail::canonical<T>::type>))::value;

template <class T>
constexpr DType dtype_of() {
  static_assert(has_dtype_v<T>, "no cufuse dtype for this C++ type");
  using C = std::remove_cv_t<std::remove_reference_t<decltype(detail::dtype_map[boost::hana::type_c<typename detail::canonical<T>::type>])>>;
  return C::value;
}

}  // namespace cufuse
