// src/cli/numbers.cpp: Python's arithmetic on bool, int and float constants (see numbers.hpp).
// Integers are computed in 128 bits and must come back within int64 or uint64.
#include "cli/numbers.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "cufuse/error.hpp"

namespace cufuse::cli {

namespace {

using i128 = __int128;

bool is_float(const Scalar& s) { return s.kind() == Scalar::Kind::Float; }
bool is_bool(const Scalar& s) { return s.kind() == Scalar::Kind::Bool; }

i128 as_int(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return s.to_bool() ? 1 : 0;
    case Scalar::Kind::UInt: return static_cast<i128>(s.to_uint64());
    default: return static_cast<i128>(s.to_int64());
  }
}

Scalar from_int(i128 v, std::string_view op) {
  if (v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max())
    return Scalar(static_cast<int64_t>(v));
  if (v > 0 && v <= static_cast<i128>(std::numeric_limits<uint64_t>::max())) return Scalar(static_cast<uint64_t>(v));
  throw OverflowError(fmt::format("integer overflow in constant expression ('{}'): the result does not fit 64 bits", op));
}

// The dtype a result takes when an operand is strong (float32(2) * 3): NumPy 2's rule for a
// strong scalar next to a weak Python one, or promotion of two strong ones.
std::optional<DType> strong_result(const Scalar& a, const Scalar& b, const Scalar& r) {
  if (a.weak() && b.weak()) return std::nullopt;
  if (!a.weak() && !b.weak()) return promote_types(a.dtype(), b.dtype());
  const Scalar& s = a.weak() ? b : a;
  const Scalar& w = a.weak() ? a : b;
  if (is_float(w) && !cufuse::is_float(s.dtype())) return DType::Float64;
  if (is_float(r) && !cufuse::is_float(s.dtype())) return DType::Float64;
  return s.dtype();
}

Scalar finish(const Scalar& a, const Scalar& b, Scalar r, std::string_view op) {
  const bool compare = op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=";
  if (compare) return r;
  if (auto t = strong_result(a, b, r)) return Scalar::typed(r, *t);
  return r;
}

// Python's float divmod (Objects/floatobject.c): the remainder takes the divisor's sign.
double py_mod(double x, double y) {
  double m = std::fmod(x, y);
  if (m != 0 && ((y < 0) != (m < 0))) m += y;
  else if (m == 0) m = std::copysign(0.0, y);
  return m;
}
double py_floor_div(double x, double y) {
  double m = std::fmod(x, y);
  double div = (x - m) / y;
  if (m != 0 && ((y < 0) != (m < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, x / y);
  double f = std::floor(div);
  if (div - f > 0.5) f += 1.0;
  return f;
}

}  // namespace

// Python's complex arithmetic (1+2j, 2j * x): + - * / ** == !=; ordering is a TypeError.
Scalar complex_binary(std::string_view op, const Scalar& a, const Scalar& b) {
  const std::complex<double> x = a.to_complex(), y = b.to_complex();
  if (op == "==" || op == "!=") return Scalar((x == y) == (op == "=="));
  std::complex<double> r;
  if (op == "+") r = x + y;
  else if (op == "-") r = x - y;
  else if (op == "*") r = x * y;
  else if (op == "/") {
    if (y == 0.0) throw ValueError("complex division by zero");
    r = x / y;
  } else if (op == "**") {
    r = std::pow(x, y);
  } else {
    throw TypeError(fmt::format("unsupported operand type(s) for {}: 'complex'", op));
  }
  if (a.weak() && b.weak()) return Scalar(r);
  const DType s = !a.weak() && !b.weak() ? promote_types(a.dtype(), b.dtype()) : (a.weak() ? b : a).dtype();
  const DType t = is_complex(s) ? s : (is_float(s) && s != DType::Float64 ? DType::Complex64 : DType::Complex128);
  return Scalar::typed(Scalar(r), t);
}

Scalar number_binary(std::string_view op, const Scalar& a, const Scalar& b) {
  if (a.kind() == Scalar::Kind::Complex || b.kind() == Scalar::Kind::Complex) return complex_binary(op, a, b);
  // comparisons
  if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=") {
    bool r;
    if (is_float(a) || is_float(b)) {
      double x = a.to_double(), y = b.to_double();
      r = op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : op == ">=" ? x >= y : op == "==" ? x == y : x != y;
    } else {
      i128 x = as_int(a), y = as_int(b);
      r = op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : op == ">=" ? x >= y : op == "==" ? x == y : x != y;
    }
    return Scalar(r);
  }
  // bitwise: ints and bools only
  if (op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>") {
    if (is_float(a) || is_float(b))
      throw TypeError(fmt::format("unsupported operand type(s) for {}: 'float'", op));
    if (is_bool(a) && is_bool(b) && (op == "&" || op == "|" || op == "^")) {
      bool x = a.to_bool(), y = b.to_bool();
      return finish(a, b, Scalar(op == "&" ? (x && y) : op == "|" ? (x || y) : (x != y)), op);
    }
    i128 x = as_int(a), y = as_int(b);
    if (op == "&") return finish(a, b, from_int(x & y, op), op);
    if (op == "|") return finish(a, b, from_int(x | y, op), op);
    if (op == "^") return finish(a, b, from_int(x ^ y, op), op);
    if (y < 0) throw ValueError("negative shift count");
    if (op == ">>") return finish(a, b, from_int(y >= 127 ? (x < 0 ? -1 : 0) : (x >> static_cast<int>(y)), op), op);
    if (x == 0) return finish(a, b, Scalar(int64_t{0}), op);                 // 0 << 700 (no shift past the width)
    if (y >= 64) from_int(std::numeric_limits<i128>::max(), op);  // throws
    return finish(a, b, from_int(x << static_cast<int>(y), op), op);
  }
  if (op == "/") {
    double y = b.to_double();
    if (y == 0) throw ValueError("division by zero");
    return finish(a, b, Scalar(a.to_double() / y), op);
  }
  if (is_float(a) || is_float(b)) {
    double x = a.to_double(), y = b.to_double();
    if (op == "+") return finish(a, b, Scalar(x + y), op);
    if (op == "-") return finish(a, b, Scalar(x - y), op);
    if (op == "*") return finish(a, b, Scalar(x * y), op);
    if (op == "//" || op == "%") {
      if (y == 0) throw ValueError(op == "//" ? "float floor division by zero" : "float modulo");
      return finish(a, b, Scalar(op == "//" ? py_floor_div(x, y) : py_mod(x, y)), op);
    }
    if (op == "**") {
      if (x == 0 && y < 0) throw ValueError("0.0 cannot be raised to a negative power");
      double r = std::pow(x, y);
      if (std::isnan(r) && !std::isnan(x) && !std::isnan(y))
        throw ValueError("a negative number raised to a fractional power is complex (not supported)");
      return finish(a, b, Scalar(r), op);
    }
  } else {
    i128 x = as_int(a), y = as_int(b);
    if (op == "+") return finish(a, b, from_int(x + y, op), op);
    if (op == "-") return finish(a, b, from_int(x - y, op), op);
    if (op == "*") {
      i128 r;
      if (__builtin_mul_overflow(x, y, &r)) from_int(std::numeric_limits<i128>::max(), op);
      return finish(a, b, from_int(r, op), op);
    }
    if (op == "//" || op == "%") {
      if (y == 0) throw ValueError(op == "//" ? "integer division by zero" : "integer modulo by zero");
      i128 q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        q -= 1;
        m += y;
      }
      return finish(a, b, from_int(op == "//" ? q : m, op), op);
    }
    if (op == "**") {
      if (y < 0) {
        if (x == 0) throw ValueError("0.0 cannot be raised to a negative power");
        return finish(a, b, Scalar(std::pow(static_cast<double>(x), static_cast<double>(y))), op);
      }
      // 0, 1 and -1 to any power without looping (and (-1) ** 3 is -1).
      if (x == 0 || x == 1) return finish(a, b, from_int(y == 0 ? 1 : x, op), op);
      if (x == -1) return finish(a, b, from_int(y % 2 == 0 ? 1 : -1, op), op);
      i128 r = 1;
      for (i128 k = 0; k < y; ++k) {
        if (__builtin_mul_overflow(r, x, &r) || r > static_cast<i128>(std::numeric_limits<uint64_t>::max()) ||
            r < std::numeric_limits<int64_t>::min())
          from_int(std::numeric_limits<i128>::max(), op);
        if (r == 0 || r == 1) break;
      }
      return finish(a, b, from_int(r, op), op);
    }
  }
  throw ValueError(fmt::format("unsupported operator '{}' on numbers", op));
}

Scalar number_unary(std::string_view op, const Scalar& a) {
  if (op == "+") return is_bool(a) ? Scalar(int64_t{a.to_bool() ? 1 : 0}) : a;
  if (op == "-" && a.kind() == Scalar::Kind::Complex)
    return a.weak() ? Scalar(-a.to_complex()) : Scalar::typed(Scalar(-a.to_complex()), a.dtype());
  if (op == "-") {
    if (is_float(a)) return a.weak() ? Scalar(-a.to_double()) : Scalar::typed(Scalar(-a.to_double()), a.dtype());
    Scalar r = from_int(-as_int(a), op);
    return a.weak() ? r : Scalar::typed(r, a.dtype());
  }
  if (op == "~") {
    if (is_float(a)) throw TypeError("bad operand type for unary ~: 'float'");
    Scalar r = from_int(-as_int(a) - 1, op);
    return a.weak() ? r : Scalar::typed(r, a.dtype());
  }
  throw ValueError(fmt::format("unsupported unary operator '{}' on numbers", op));
}

}  // namespace cufuse::cli
