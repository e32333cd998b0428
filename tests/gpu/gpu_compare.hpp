// tests/gpu/gpu_compare.hpp: comparing a device result with the host reference evaluator,
// and random inputs of every dtype.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <cufuse/cufuse.hpp>

#include "reference/evaluator.hpp"

namespace cf = cufuse;

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(std::random_device{}());
  return g;
}

// Host bytes of n random values of dtype t. `kind`: 0 general (floats include +-0 and, one
// element in 291, +inf), 1 positive, 2 small ints (0..5), 3 finite (kind 0 without the
// infinities: for sums, rows and products, where one inf would turn a whole row into inf or
// NaN and the comparison would check only that).
enum : int { kGeneral = 0, kPositive = 1, kSmallInts = 2, kFinite = 3 };
inline std::vector<unsigned char> random_bytes(cf::DType t, int64_t n, int kind = 0) {
  std::vector<unsigned char> b(static_cast<size_t>(n * cf::itemsize(t)));
  std::normal_distribution<double> nd(0.0, 3.0);
  std::uniform_int_distribution<int64_t> id(-120, 120);
  auto& g = rng();
  for (int64_t i = 0; i < n; ++i) {
    unsigned char* p = b.data() + i * cf::itemsize(t);
    double f = nd(g);
    if (kind == 1) f = std::fabs(f) + 0.01;
    int64_t k = kind == 2 ? (id(g) % 6 + 6) % 6 : id(g);
    if (cf::is_unsigned_int(t) || kind == 1) k = k < 0 ? -k : k;
    if (i % 97 == 5 && cf::is_float(t) && (kind == kGeneral || kind == kFinite))
      f = (i % 3 == 0) ? 0.0 : ((i % 3 == 1) ? -0.0 : (kind == kFinite ? f : INFINITY));
    // Integers of kind 0 hold both of their dtype's extremes now and then (where negation,
    // abs and widening wrap: ptxas once lost the wrap of an int16 negation).
    const bool extreme = kind == kGeneral && cf::is_integer(t) && (i % 89 == 7 || i % 89 == 8);
    if (extreme) {
      const int bits = static_cast<int>(cf::itemsize(t)) * 8;
      const bool low = i % 89 == 7;
      uint64_t v = cf::is_unsigned_int(t) ? (low ? 0 : ~0ULL >> (64 - bits))
                                          : (low ? 1ULL << (bits - 1) : (1ULL << (bits - 1)) - 1);
      std::memcpy(p, &v, static_cast<size_t>(cf::itemsize(t)));  // little-endian: the low bytes
      continue;
    }
    switch (t) {
      case cf::DType::Bool: { bool v = (k & 1) != 0; std::memcpy(p, &v, 1); break; }
      case cf::DType::Int8: { int8_t v = static_cast<int8_t>(k); std::memcpy(p, &v, 1); break; }
      case cf::DType::Int16: { int16_t v = static_cast<int16_t>(k * 97); if (kind == 2) v = k; std::memcpy(p, &v, 2); break; }
      case cf::DType::Int32: { int32_t v = static_cast<int32_t>(k * 1000003); if (kind == 2) v = k; std::memcpy(p, &v, 4); break; }
      case cf::DType::Int64: { int64_t v = k * 1000000007LL; if (kind == 2) v = k; std::memcpy(p, &v, 8); break; }
      case cf::DType::UInt8: { uint8_t v = static_cast<uint8_t>(k); std::memcpy(p, &v, 1); break; }
      case cf::DType::UInt16: { uint16_t v = static_cast<uint16_t>(kind == 2 ? k : k * 500); std::memcpy(p, &v, 2); break; }
      case cf::DType::UInt32: { uint32_t v = static_cast<uint32_t>(kind == 2 ? k : k * 30000001); std::memcpy(p, &v, 4); break; }
      case cf::DType::UInt64: { uint64_t v = static_cast<uint64_t>(kind == 2 ? k : k * 70000000001ULL); std::memcpy(p, &v, 8); break; }
      case cf::DType::Float16: { cf::half v(f); std::memcpy(p, &v, 2); break; }
      case cf::DType::BFloat16: { cf::bfloat16_t v(f); std::memcpy(p, &v, 2); break; }
      case cf::DType::Float32: { float v = static_cast<float>(f); std::memcpy(p, &v, 4); break; }
      case cf::DType::Float64: { std::memcpy(p, &f, 8); break; }
    }
  }
  return b;
}

inline cf::Array random_array(cf::DType t, const cf::Shape& s, int kind = 0) {
  auto b = random_bytes(t, cf::numel(s), kind);
  return cf::from_host(b.data(), t, s);
}

// Random normal values (no infinities) as a materialized array of dtype t, scaled by `scale`.
inline cf::Array random_normal(cf::DType t, const cf::Shape& s, double scale = 1.0) {
  std::normal_distribution<double> nd(0.0, scale);
  std::vector<double> v(static_cast<size_t>(cf::numel(s)));
  for (auto& x : v) x = nd(rng());
  cf::Array a = cf::from_host(v.data(), cf::f64, s);
  if (t != cf::f64) a = a.astype(t);
  a.eval();
  return a;
}

// A host array's elements as doubles (the reference evaluator's results).
inline std::vector<double> host_values(const cf::detail::HostArray& h) {
  std::vector<double> v(static_cast<size_t>(h.size()));
  for (int64_t i = 0; i < h.size(); ++i) v[static_cast<size_t>(i)] = h.get_double(i);
  return v;
}

// A floating dtype's format: significand digits (the implicit bit included) and the exponent
// of its smallest normal value. Every rounding bound below derives from these two numbers.
struct FloatFormat {
  int digits, min_exp;
};
inline FloatFormat float_format(cf::DType t) {
  switch (t) {
    case cf::DType::Float16: return {11, -14};
    case cf::DType::BFloat16: return {8, -126};
    case cf::DType::Float32: return {24, -126};
    default: return {53, -1022};
  }
}

// Units in the last place of dtype t at value v.
inline double ulp_of(cf::DType t, double v) {
  const FloatFormat f = float_format(t);
  const int e = v == 0 ? -1000 : std::ilogb(v);
  return std::ldexp(1.0, std::max(e, f.min_exp) - (f.digits - 1));
}

// The same bits (NaN == NaN): for results that must be identical, e.g. a fused function
// against the same expression unfused.
// Ulps allowed between a reduction's result (of the result dtype t) and the reference's.
inline double red_tol(cf::DType t) { return t == cf::f32 ? 64 : (t == cf::f64 ? 64 : (cf::is_half(t) ? 2 : 0)); }

inline bool same_bits(const cf::Array& a, const cf::Array& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  std::vector<unsigned char> x(static_cast<size_t>(a.nbytes())), y(static_cast<size_t>(b.nbytes()));
  a.copy_to_host(x.data(), x.size());
  b.copy_to_host(y.data(), y.size());
  return x == y;
}

// A bound for sums computed in different orders (the reference adds sequentially, the GPU by
// a tree): eps of the accumulator times the number of terms times the largest |term|.
inline double sum_atol(const cf::Array& a, int64_t terms) {
  const double mx = cf::max(cf::abs(a.astype(cf::f64))).item<double>();
  const double eps = a.dtype() == cf::f64 || !cf::is_float(a.dtype()) ? 2.2e-16 : 1.2e-7;
  return 8 * eps * static_cast<double>(terms) * (std::isfinite(mx) ? mx : 1.0);
}

// A device array's values on the host, in the reference evaluator's form: computed on the
// device first, then read from its memory by the reference's Buffer leaf.
inline cf::detail::HostArray device_values(const cf::Array& got) {
  got.eval();
  return cf::detail::reference_evaluate(got.node());
}

// Compares the device array `got` with host values `want` element by element: floats within
// `ulps` units in the last place or `atol`, NaN matching NaN; integers exactly. Returns the
// number of mismatches (and reports the first few).
inline int64_t compare_with(const cf::Array& got, const cf::detail::HostArray& want, double ulps,
                            const std::string& what, double atol = 0) {
  const cf::detail::HostArray dev = device_values(got);
  if (want.dtype != dev.dtype || !(want.shape == dev.shape)) {
    MESSAGE(what << ": device " << cf::name(dev.dtype) << " " << cf::to_string(dev.shape) << ", reference "
                 << cf::name(want.dtype) << " " << cf::to_string(want.shape));
    return 1;
  }
  const cf::DType t = dev.dtype;
  int64_t bad = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    bool ok;
    if (cf::is_float(t)) {
      double a = dev.get_double(i), b = want.get_double(i);
      if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
      else if (std::isinf(a) || std::isinf(b)) ok = a == b || (ulps > 0 && std::fabs(a - b) <= ulps * ulp_of(t, std::fabs(std::isinf(a) ? b : a)) * 2);
      else ok = a == b || std::fabs(a - b) <= ulps * ulp_of(t, std::fabs(b)) || std::fabs(a - b) <= atol;
    } else {
      ok = dev.get_uint64(i) == want.get_uint64(i);
    }
    if (!ok) {
      if (bad < 5)
        MESSAGE(what << ": element " << i << " device " << dev.get_double(i) << " reference " << want.get_double(i));
      ++bad;
    }
  }
  return bad;
}

// Unit roundoff of a floating dtype (float16/bfloat16 results are computed in float32).
inline double unit_roundoff(cf::DType t) { return std::ldexp(1.0, -float_format(t).digits); }

// Roundings along the longest path of a sum of n terms as the reduction kernels order it: a
// thread adds its share in turn (n / G terms for a group of G <= 1024 threads, or fewer when a
// row is split over blocks), then a tree of log2(G) levels and the split's partials. Bounded
// by sqrt(n) + 16, which covers every kernel shape for n >= 64: the relative error of a
// float32 sum of non-negative terms is at most that many unit roundoffs.
inline double sum_depth(int64_t n) { return std::sqrt(static_cast<double>(n)) + 16; }

// Half the spacing of a dtype's subnormals: what rounding a result that underflows costs,
// whatever its relative error (float16 softmax values of 1e-7 are subnormal).
inline double underflow_atol(cf::DType t) {
  const FloatFormat f = float_format(t);
  return std::ldexp(1.0, f.min_exp - f.digits);
}

// Compares a device result with the float64 truth of the same computation, element by
// element: |got - truth| <= rel * |scale| + underflows * underflow_atol(got's dtype), NaN
// matching NaN; `underflows`: the roundings along the way that may underflow, each passed on
// with a factor of at most 1 (softmax: exp(x - max), then the quotient).
// `truth64` and `scale64` are float64 expressions evaluated by the host reference (float64
// sums there are ~2^29 times finer than float32). For float32 reductions the reference
// evaluator's own float32 result is the worse oracle: it adds n terms one after another, an
// error up to ~n roundings, where the device's tree has ~sqrt(n). Prints the largest error
// as a fraction of its bound.
inline int64_t check_against_truth(const cf::Array& got, const cf::Array& truth64, const cf::Array& scale64, double rel,
                                   const std::string& what, int underflows = 1) {
  // one evaluation of both: what they share (or all of it, when the scale is the truth) once
  const std::vector<cf::detail::HostArray> ref = cf::detail::reference_evaluate({truth64.node(), scale64.node()});
  const cf::detail::HostArray& want = ref[0];
  const cf::detail::HostArray& scale = ref[1];
  const cf::detail::HostArray dev = device_values(got);
  if (!(want.shape == dev.shape) || !(scale.shape == dev.shape)) {
    MESSAGE(what << ": shapes " << cf::to_string(dev.shape) << ", truth " << cf::to_string(want.shape));
    return 1;
  }
  const double tiny = underflows * underflow_atol(dev.dtype);
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    const double a = dev.get_double(i), b = want.get_double(i), sc = std::fabs(scale.get_double(i));
    bool ok;
    if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
    else ok = a == b || std::fabs(a - b) <= rel * sc + tiny;
    if (std::isfinite(a - b)) worst = std::max(worst, std::fabs(a - b) / (rel * sc + tiny));
    if (!ok) {
      if (bad < 5) MESSAGE(what << ": element " << i << " device " << a << " truth " << b << " bound " << rel * sc + tiny);
      ++bad;
    }
  }
  MESSAGE(what << ": largest error " << worst << " of the bound");
  return bad;
}

// Compares the device result of `expr` with the reference evaluator's, element by element.
// Must be called before `expr` is evaluated (the reference reads its inputs from the device).
inline int64_t check_against_reference(const cf::Array& expr, double ulps, const std::string& what, double atol = 0) {
  cf::detail::HostArray ref = cf::detail::reference_evaluate(expr.node());
  return compare_with(expr, ref, ulps, what, atol);
}

// Runs body(t) for t = 0 .. n-1 on n threads at once, each with a Stream of its own as its
// current stream (synchronized before the thread ends). Returns what each thread threw, ""
// where nothing.
template <class F>
std::vector<std::string> on_threads_with_own_streams(int n, F body) {
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      try {
        cf::Stream s;
        cf::StreamScope on(s);
        body(t);
        s.synchronize();
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(t)] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  return errors;
}
