// src/graph/print_format.cpp: NumPy's element formatters (see print_format.hpp): Dragon4's
// "unique" digits (the shortest that round-trip in the value's own dtype: std::to_chars for
// float32/float64, a search over %.*e for float16), capped at `precision` digits by correct
// rounding of the exact binary value (what Dragon4's cutoff does), then FloatingFormat's
// positional or scientific layout, IntegerFormat's width and BoolFormat's " True".
#include "graph/print_format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace cufuse::detail {

int64_t HostValues::size() const {
  if (is_float(dtype) || is_complex(dtype)) return static_cast<int64_t>(f.size());
  if (is_unsigned_int(dtype)) return static_cast<int64_t>(u.size());
  return static_cast<int64_t>(i.size());
}
void HostValues::resize(int64_t n) {
  if (is_complex(dtype)) f.resize(static_cast<size_t>(n)), fi.resize(static_cast<size_t>(n));
  else if (is_float(dtype)) f.resize(static_cast<size_t>(n));
  else if (is_unsigned_int(dtype)) u.resize(static_cast<size_t>(n));
  else i.resize(static_cast<size_t>(n));
}

void HostValues::set_from_raw(int64_t at, const unsigned char* bytes, int64_t k) {
  const unsigned char* p = bytes + k * itemsize(dtype);
  auto rd = [&](auto x) {
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  const size_t a = static_cast<size_t>(at);
  switch (dtype) {
    case DType::Bool: i[a] = *p != 0; break;
    case DType::Int8: i[a] = rd(int8_t{}); break;
    case DType::Int16: i[a] = rd(int16_t{}); break;
    case DType::Int32: i[a] = rd(int32_t{}); break;
    case DType::Int64: i[a] = rd(int64_t{}); break;
    case DType::UInt8: u[a] = rd(uint8_t{}); break;
    case DType::UInt16: u[a] = rd(uint16_t{}); break;
    case DType::UInt32: u[a] = rd(uint32_t{}); break;
    case DType::UInt64: u[a] = rd(uint64_t{}); break;
    case DType::Float16: f[a] = static_cast<float>(half::from_bits(rd(uint16_t{}))); break;
    case DType::BFloat16: f[a] = static_cast<float>(bfloat16_t::from_bits(rd(uint16_t{}))); break;
    case DType::Float32: f[a] = rd(float{}); break;
    case DType::Float64: f[a] = rd(double{}); break;
    case DType::Complex64: { const auto z = rd(std::complex<float>{}); f[a] = z.real(); fi[a] = z.imag(); break; }
    case DType::Complex128: { const auto z = rd(std::complex<double>{}); f[a] = z.real(); fi[a] = z.imag(); break; }
  }
}

namespace {

// ------------------------------------------------------------------ digits
// |x| = 0.D... scaled: x = D[0].D[1..] * 10^exp (D has no trailing zeros; "0" for zero).
struct Digits {
  std::string d;
  int exp = 0;
};

Digits parse_sci(const char* s) {  // "d.ddde+XX" or "de+XX" (no sign)
  Digits r;
  const char* e = std::strchr(s, 'e');
  for (const char* c = s; c != e; ++c)
    if (*c != '.') r.d.push_back(*c);
  r.exp = std::atoi(e + 1);
  while (r.d.size() > 1 && r.d.back() == '0') r.d.pop_back();
  return r;
}

bool round_trips(double cand, double x, DType t) {
  if (t == DType::Float16) return half(cand).bits == half(x).bits;
  if (t == DType::BFloat16) return bfloat16_t(cand).bits == bfloat16_t(x).bits;
  if (t == DType::Float32) return static_cast<float>(cand) == static_cast<float>(x);
  return cand == x;
}

// The shortest digits that read back as x in dtype t (x finite, >= 0).
Digits shortest(double x, DType t) {
  char buf[64];
  if (t == DType::Float64 || t == DType::Float32) {
    auto r = t == DType::Float64 ? std::to_chars(buf, buf + 63, x, std::chars_format::scientific)
                                 : std::to_chars(buf, buf + 63, static_cast<float>(x), std::chars_format::scientific);
    *r.ptr = 0;
    return parse_sci(buf);
  }
  for (int p = 0; p < 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, x);
    if (round_trips(std::strtod(buf, nullptr), x, t)) return parse_sci(buf);
  }
  std::snprintf(buf, sizeof buf, "%.16e", x);
  return parse_sci(buf);
}

// Dragon4 positional, unique, fractional, trim '.': {integer part with sign, fraction}.
std::pair<std::string, std::string> positional(double x, DType t, int precision) {
  const bool neg = std::signbit(x);
  const double ax = std::fabs(x);
  Digits d = shortest(ax, t);
  std::string ip, fp;
  const int nfrac = std::max(0, static_cast<int>(d.d.size()) - 1 - d.exp);
  if (nfrac <= precision) {
    if (d.exp >= 0) {
      ip = d.d.substr(0, std::min<size_t>(d.d.size(), static_cast<size_t>(d.exp) + 1));
      while (static_cast<int>(ip.size()) < d.exp + 1) ip.push_back('0');
      if (static_cast<int>(d.d.size()) > d.exp + 1) fp = d.d.substr(static_cast<size_t>(d.exp) + 1);
    } else {
      ip = "0";
      fp = std::string(static_cast<size_t>(-d.exp - 1), '0') + d.d;
    }
    if (d.d == "0") fp.clear();
  } else {
    char buf[512];  // positional is used below 1e8 (arrays) or 1e16 (scalars)
    std::snprintf(buf, sizeof buf, "%.*f", precision, ax);
    std::string s = buf;
    auto dot = s.find('.');
    ip = s.substr(0, dot);
    fp = dot == std::string::npos ? "" : s.substr(dot + 1);
    while (!fp.empty() && fp.back() == '0') fp.pop_back();
  }
  if (neg) ip.insert(0, 1, '-');  // (not "-" + ip: GCC 12's -Wrestrict false positive)
  return {ip, fp};
}

// Dragon4 scientific, unique, capped at `precision` fractional digits of the mantissa:
// {mantissa integer digit with sign, mantissa fraction, exponent (signed)}.
struct Sci {
  std::string ip, fp;
  int exp;
};
Sci scientific(double x, DType t, int precision) {
  const bool neg = std::signbit(x);
  const double ax = std::fabs(x);
  Digits d = shortest(ax, t);
  if (static_cast<int>(d.d.size()) - 1 > precision) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", precision, ax);
    d = parse_sci(buf);
  }
  Sci s;
  s.ip = d.d.substr(0, 1);
  if (neg) s.ip.insert(0, 1, '-');
  s.fp = d.d.size() > 1 ? d.d.substr(1) : "";
  s.exp = d.d == "0" ? 0 : d.exp;
  return s;
}

std::string exp_str(int e, int digits) {
  std::string n = std::to_string(e < 0 ? -e : e);
  if (static_cast<int>(n.size()) < digits) n.insert(0, static_cast<size_t>(digits) - n.size(), '0');
  n.insert(0, 1, e < 0 ? '-' : '+');
  return n;
}

// x / y rounded as the dtype divides (float16/bfloat16 through float, as NumPy's loops).
double ratio_in(DType t, double x, double y) {
  if (t == DType::Float64) return x / y;
  const float r = static_cast<float>(x) / static_cast<float>(y);
  if (t == DType::Float16) return static_cast<float>(half(r));
  if (t == DType::BFloat16) return static_cast<float>(bfloat16_t(r));
  return r;
}

// v rounded to dtype t (and back to double).
double in_dtype(DType t, double v) {
  if (t == DType::Float16) return static_cast<float>(half(v));
  if (t == DType::BFloat16) return static_cast<float>(bfloat16_t(v));
  if (t == DType::Float32) return static_cast<float>(v);
  return v;
}

std::string pad_left_to(const std::string& s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }

// ------------------------------------------------------------------ FloatingFormat
struct FloatingFormat {
  DType t;
  int precision;
  bool plus = false;  // sign='+' (a complex value's imaginary part): "+" before non-negative values
  bool exp_format = false;
  int pad_left = 0, pad_right = 0, exp_size = -1, min_digits = 0;

  std::string sg(std::string ip, double x) const { return plus && !std::signbit(x) ? "+" + ip : ip; }

  FloatingFormat(const std::vector<double>& data, DType dt, int prec, bool plus_sign = false)
      : t(dt), precision(prec), plus(plus_sign) {
    std::vector<double> finite;
    bool has_neg_inf = false, nonfinite = false;
    for (double x : data) {
      if (std::isfinite(x)) finite.push_back(x);
      else {
        nonfinite = true;
        if (std::isinf(x) && x < 0) has_neg_inf = true;
      }
    }
    double mx = 0, mn = 0;
    bool any_nz = false;
    for (double x : finite) {
      if (x == 0) continue;
      const double a = std::fabs(x);
      if (!any_nz) mx = mn = a, any_nz = true;
      mx = std::max(mx, a);
      mn = std::min(mn, a);
    }
    // NumPy 2.4 compares in the dtype (the Python floats are weak), with a cutoff of
    // 10 ** min(8, finfo(dtype).precision): 1e3 for float16, 1e6 for float32, 1e8 for float64.
    const double cutoff = t == DType::Float16 ? 1e3 : (t == DType::Float32 ? 1e6 : 1e8);
    if (any_nz && (mx >= cutoff || mn < in_dtype(t, 0.0001) || ratio_in(t, mx, mn) > 1000.)) exp_format = true;
    if (finite.empty()) {
      pad_left = pad_right = 0;
      exp_size = -1;
    } else if (exp_format) {
      int maxfrac = 0, maxexp = 0;
      for (double x : finite) {
        Sci s = scientific(x, t, precision);
        maxfrac = std::max(maxfrac, static_cast<int>(s.fp.size()));
        pad_left = std::max(pad_left, static_cast<int>(sg(s.ip, x).size()));
        maxexp = std::max(maxexp, static_cast<int>(exp_str(s.exp, 2).size()));
      }
      exp_size = maxexp - 1;
      precision = min_digits = maxfrac;
      pad_right = exp_size + 2 + precision;
    } else {
      for (double x : finite) {
        auto [ip, fp] = positional(x, t, precision);
        pad_left = std::max(pad_left, static_cast<int>(sg(ip, x).size()));
        pad_right = std::max(pad_right, static_cast<int>(fp.size()));
      }
    }
    if (nonfinite) {
      const int offset = pad_right + 1;
      pad_left = std::max({pad_left, 3 - offset, 3 + (has_neg_inf || plus ? 1 : 0) - offset});
    }
  }

  std::string operator()(double x) const {
    if (!std::isfinite(x)) {
      std::string r = std::isnan(x) ? "nan" : (x < 0 ? "-inf" : "inf");
      if (plus && !(x < 0)) r.insert(0, 1, '+');
      return pad_left_to(r, static_cast<size_t>(pad_left + pad_right + 1));
    }
    if (exp_format) {
      Sci s = scientific(x, t, precision);
      std::string fp = s.fp;
      if (static_cast<int>(fp.size()) < min_digits) {
        // Dragon4's min_digits: more digits of the exact value (correctly rounded), not zeros.
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*e", min_digits, std::fabs(x));
        Digits d = parse_sci(buf);
        s.ip = d.d.substr(0, 1);
        if (std::signbit(x)) s.ip.insert(0, 1, '-');
        s.exp = d.exp;
        fp = d.d.size() > 1 ? d.d.substr(1) : "";
        while (static_cast<int>(fp.size()) < min_digits) fp.push_back('0');
      }
      return pad_left_to(sg(s.ip, x), static_cast<size_t>(pad_left)) + "." + fp + "e" + exp_str(s.exp, std::max(exp_size, 2));
    }
    auto [ip, fp] = positional(x, t, precision);
    std::string r = pad_left_to(sg(ip, x), static_cast<size_t>(pad_left)) + "." + fp;
    if (static_cast<int>(fp.size()) < pad_right) r += std::string(static_cast<size_t>(pad_right) - fp.size(), ' ');
    return r;
  }
};

std::string percent_g(double x) {  // C's %g, as ml_dtypes prints a bfloat16
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

std::function<std::string(int64_t)> element_formatter(const HostValues& v, int precision, bool zero_d) {
  const DType t = v.dtype;
  if (t == DType::Bool) {
    const std::string truestr = zero_d ? "True" : " True";
    return [&v, truestr](int64_t k) { return v.i[static_cast<size_t>(k)] ? truestr : std::string("False"); };
  }
  if (t == DType::BFloat16)
    return [&v](int64_t k) { return percent_g(v.f[static_cast<size_t>(k)]); };
  if (is_complex(t)) {  // NumPy's ComplexFloatingFormat: real, then imaginary with sign '+', 'j' before its padding
    auto re = std::make_shared<FloatingFormat>(v.f, real_dtype(t), precision);
    auto im = std::make_shared<FloatingFormat>(v.fi, real_dtype(t), precision, true);
    return [&v, re, im](int64_t k) {
      std::string i = (*im)(v.fi[static_cast<size_t>(k)]);
      const size_t sp = i.find_last_not_of(' ') + 1;
      i.insert(sp, 1, 'j');
      return (*re)(v.f[static_cast<size_t>(k)]) + i;
    };
  }
  if (is_float(t)) {
    auto ff = std::make_shared<FloatingFormat>(v.f, t, precision);
    return [&v, ff](int64_t k) { return (*ff)(v.f[static_cast<size_t>(k)]); };
  }
  size_t w = 0;
  if (is_unsigned_int(t)) {
    for (auto x : v.u) w = std::max(w, std::to_string(x).size());
    return [&v, w](int64_t k) { return pad_left_to(std::to_string(v.u[static_cast<size_t>(k)]), w); };
  }
  for (auto x : v.i) w = std::max(w, std::to_string(x).size());
  return [&v, w](int64_t k) { return pad_left_to(std::to_string(v.i[static_cast<size_t>(k)]), w); };
}

namespace {
// A part of a complex scalar as Python's complex repr writes it: 1, 1.5, 1e-05, 1e+20, nan, inf.
std::string complex_part(double x, DType t) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  const double ax = std::fabs(x);
  if (ax == 0 || (ax >= 1e-4 && ax < 1e16)) {
    auto [ip, fp] = positional(x, t, 400);
    return fp.empty() ? ip : ip + "." + fp;
  }
  Sci s = scientific(x, t, 400);
  return s.ip + (s.fp.empty() ? "" : "." + s.fp) + "e" + exp_str(s.exp, 2);
}
}  // namespace

std::string scalar_str(const HostValues& v, int64_t k) {
  const DType t = v.dtype;
  const size_t a = static_cast<size_t>(k);
  if (is_complex(t)) {  // NumPy's complex scalar str: (1+2j), 2j, (-0-1j), (nan+infj)
    const DType r = real_dtype(t);
    const double re = v.f[a], im = v.fi[a];
    std::string is = complex_part(im, r);
    if (re == 0 && !std::signbit(re)) return is + "j";
    if (is[0] != '-') is.insert(0, 1, '+');  // nan is written unsigned, as Python does
    return "(" + complex_part(re, r) + is + "j)";
  }
  if (t == DType::Bool) return v.i[a] ? "True" : "False";
  if (is_unsigned_int(t)) return std::to_string(v.u[a]);
  if (!is_float(t)) return std::to_string(v.i[a]);
  const double x = v.f[a];
  if (t == DType::BFloat16) return percent_g(x);
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  const double ax = std::fabs(x);
  if (ax == 0 || (ax >= 1e-4 && ax < 1e16)) {  // positional, unique, trim '0': 5.0
    auto [ip, fp] = positional(x, t, 400);
    return ip + "." + (fp.empty() ? "0" : fp);
  }
  Sci s = scientific(x, t, 400);  // scientific, unique, trim '-': 1e-05, 1.5e+20
  return s.ip + (s.fp.empty() ? "" : "." + s.fp) + "e" + exp_str(s.exp, 2);
}

}  // namespace cufuse::detail
