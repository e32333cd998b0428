// src/graph/random_more.cpp: random integers, exponential, poisson, choice, permutation and
// shuffle, and the Generator object (numpy.random.default_rng). All are Generator leaves
// (src/graph/node.hpp's GenKind: a value from (seed, counter + element number)) or, for
// permuting an array, a Feistel index map along axis 0 (src/graph/index_map.hpp), so they
// are lazy, fuse with their consumers and give the same values on the host and the GPU.
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "cufuse/random.hpp"
#include "graph/manip_support.hpp"
#include "core/node.hpp"
#include "graph/random_stream.hpp"
#include "graph/size_check.hpp"

namespace cufuse::random {

namespace {

using detail::GenKind;
using detail::GenParams;

// Where a draw's counters come from: a seed given (counters from 0), a Generator's, or the
// process-wide stream's.
struct Draw {
  uint64_t seed = 0, counter = 0;
};
Draw draw(std::optional<uint64_t> seed, uint64_t n) {
  if (seed) return Draw{*seed, 0};
  auto [s, c] = detail::random_stream_take(n);
  return Draw{s, c};
}

// The key of a permutation: the same mix as the kernels' (cf_mix64 in device_helpers.inc).
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t perm_key(const Draw& d) { return mix64(d.seed ^ mix64(d.counter)); }

Array generator(GenKind g, DType t, const Shape& shape, const GenParams& p) {
  return Array(detail::make_generator(g, t, detail::contiguous_layout(shape), p));
}

void check_random_shape(const Shape& shape, DType t, const char* what) { detail::check_size(shape, itemsize(t), what); }

void need_float(DType t, const char* what) {
  if (!is_float(t)) throw TypeError(fmt::format("random.{}: dtype must be a floating type, got {}", what, name(t)));
}
void need_int(DType t, const char* what, bool bool_ok) {
  if (is_float(t) || (t == DType::Bool && !bool_ok))
    throw TypeError(fmt::format("Unsupported dtype {} for {}", name(t), what));
}

Array uniform_at(double low, double high, const Shape& shape, DType t, Draw d, GenKind g, const char* what) {
  check_random_shape(shape, t, what);
  need_float(t, what);
  GenParams p;
  p.start = low;
  p.stop = high;
  p.seed = d.seed;
  p.counter = d.counter;
  return generator(g, t, shape, p);
}

// The dtype's range, as int64 and uint64 bounds.
void int_range(DType t, int64_t& lo, uint64_t& hi) {
  switch (t) {
    case DType::Bool: lo = 0, hi = 1; break;
    case DType::Int8: lo = INT8_MIN, hi = INT8_MAX; break;
    case DType::Int16: lo = INT16_MIN, hi = INT16_MAX; break;
    case DType::Int32: lo = INT32_MIN, hi = INT32_MAX; break;
    case DType::UInt8: lo = 0, hi = UINT8_MAX; break;
    case DType::UInt16: lo = 0, hi = UINT16_MAX; break;
    case DType::UInt32: lo = 0, hi = UINT32_MAX; break;
    case DType::UInt64: lo = 0, hi = UINT64_MAX; break;
    default: lo = INT64_MIN, hi = INT64_MAX; break;
  }
}

Array integers_at(int64_t low, int64_t high, const Shape& shape, DType t, Draw d) {
  check_random_shape(shape, t, "integers");
  need_int(t, "integers", true);
  int64_t tlo;
  uint64_t thi;
  int_range(t, tlo, thi);
  if (low < tlo) throw ValueError(fmt::format("low is out of bounds for {}", name(t)));
  if (high > 0 && static_cast<uint64_t>(high) - 1 > thi) throw ValueError(fmt::format("high is out of bounds for {}", name(t)));
  if (low >= high) throw ValueError(fmt::format("low >= high (low {}, high {})", low, high));
  GenParams p;
  p.istart = low;
  p.istep_second = static_cast<int64_t>(static_cast<uint64_t>(high) - static_cast<uint64_t>(low));
  p.seed = d.seed;
  p.counter = d.counter;
  return generator(GenKind::RandomIntegers, t, shape, p);
}

Array exponential_at(double scale, const Shape& shape, DType t, Draw d) {
  check_random_shape(shape, t, "exponential");
  need_float(t, "exponential");
  if (!(scale >= 0)) throw ValueError(fmt::format("scale < 0 (scale {})", scale));
  GenParams p;
  p.start = scale;
  p.seed = d.seed;
  p.counter = d.counter;
  return generator(GenKind::RandomExponential, t, shape, p);
}

Array poisson_at(double lam, const Shape& shape, DType t, Draw d) {
  check_random_shape(shape, t, "poisson");
  need_int(t, "poisson", false);
  if (!(lam >= 0)) throw ValueError(fmt::format("lam < 0 (lam {})", lam));
  // NumPy's POISSON_LAM_MAX: past it the draws overflow int64.
  const double lam_max = 9223372036854775807.0 - std::sqrt(9223372036854775807.0) * 10;
  if (lam > lam_max) throw ValueError(fmt::format("lam value too large (lam {})", lam));
  GenParams p;
  p.start = lam;
  p.seed = d.seed;
  p.counter = d.counter;
  return generator(GenKind::RandomPoisson, t, shape, p);
}

Array permutation_at(int64_t n, Draw d) {
  if (n < 0) throw ValueError(fmt::format("permutation: negative dimensions are not allowed (n = {})", n));
  check_random_shape(Shape{n}, DType::Int64, "permutation");
  GenParams p;
  p.num = n;
  p.seed = d.seed;
  p.counter = d.counter;
  return generator(GenKind::RandomPermutation, DType::Int64, Shape{n}, p);
}

Array permuted_rows(const Array& a, Draw d) {
  if (!a.defined()) throw ValueError("permutation: the Array handle is empty");
  if (a.ndim() == 0) throw ValueError("permutation: a 0-d array has no axis 0 to permute");
  const int64_t n = a.shape()[0];
  if (n <= 1 || a.size() == 0) return a.copy();
  detail::IndexMap m = detail::identity_map(a.shape());
  m.axes[0].kind = detail::AxisMapKind::Feistel;
  m.axes[0].seed = perm_key(d);
  return detail::mapped(a, a.shape(), m);
}

Array choice_at(int64_t n, const Shape& shape, bool replace, Draw d) {
  const int64_t k = numel(shape);
  if (n < 0) throw ValueError(fmt::format("a must be greater than 0 unless no samples are taken (a = {})", n));
  if (n == 0 && k > 0) throw ValueError("a cannot be empty unless no samples are taken");
  if (replace) {
    if (k == 0) return detail::empty_result(shape, DType::Int64);
    return integers_at(0, n, shape, DType::Int64, d);
  }
  if (k > n) throw ValueError("Cannot take a larger sample than population when replace is False");
  return permutation_at(n, d).index({slice(0, k)}).reshape(shape);
}

}  // namespace

Array integers(int64_t low, int64_t high, const Shape& shape, DType dtype, std::optional<uint64_t> seed) {
  return integers_at(low, high, shape, dtype, draw(seed, static_cast<uint64_t>(numel(shape))));
}
Array exponential(double scale, const Shape& shape, DType dtype, std::optional<uint64_t> seed) {
  return exponential_at(scale, shape, dtype, draw(seed, static_cast<uint64_t>(numel(shape))));
}
Array poisson(double lam, const Shape& shape, DType dtype, std::optional<uint64_t> seed) {
  return poisson_at(lam, shape, dtype, draw(seed, static_cast<uint64_t>(numel(shape))));
}
Array choice(int64_t n, const Shape& shape, bool replace, std::optional<uint64_t> seed) {
  return choice_at(n, shape, replace, draw(seed, static_cast<uint64_t>(std::max<int64_t>(n, numel(shape)))));
}
Array permutation(int64_t n, std::optional<uint64_t> seed) { return permutation_at(n, draw(seed, 1)); }
Array permutation(const Array& a, std::optional<uint64_t> seed) { return permuted_rows(a, draw(seed, 1)); }
void shuffle(Array& a, std::optional<uint64_t> seed) { a.assign(permuted_rows(a, draw(seed, 1))); }

// ------------------------------------------------------------------ Generator
uint64_t Generator::take(uint64_t n) {
  const uint64_t c = counter_;
  counter_ += n;
  return c;
}
uint64_t Generator::key() { return take(1); }

Array Generator::random(const Shape& shape, DType dtype) { return uniform(0.0, 1.0, shape, dtype); }
Array Generator::uniform(double low, double high, const Shape& shape, DType dtype) {
  return uniform_at(low, high, shape, dtype, Draw{seed_, take(static_cast<uint64_t>(numel(shape)))},
                    GenKind::RandomUniform, "uniform");
}
Array Generator::normal(double loc, double scale, const Shape& shape, DType dtype) {
  if (!(scale >= 0)) throw ValueError(fmt::format("scale < 0 (scale {})", scale));
  return uniform_at(loc, scale, shape, dtype, Draw{seed_, take(static_cast<uint64_t>(numel(shape)))},
                    GenKind::RandomNormal, "normal");
}
Array Generator::integers(int64_t low, int64_t high, const Shape& shape, DType dtype) {
  return integers_at(low, high, shape, dtype, Draw{seed_, take(static_cast<uint64_t>(numel(shape)))});
}
Array Generator::exponential(double scale, const Shape& shape, DType dtype) {
  return exponential_at(scale, shape, dtype, Draw{seed_, take(static_cast<uint64_t>(numel(shape)))});
}
Array Generator::poisson(double lam, const Shape& shape, DType dtype) {
  return poisson_at(lam, shape, dtype, Draw{seed_, take(static_cast<uint64_t>(numel(shape)))});
}
Array Generator::choice(int64_t n, const Shape& shape, bool replace) {
  return choice_at(n, shape, replace, Draw{seed_, take(static_cast<uint64_t>(std::max<int64_t>(n, numel(shape))))});
}
Array Generator::permutation(int64_t n) { return permutation_at(n, Draw{seed_, key()}); }
Array Generator::permutation(const Array& a) { return permuted_rows(a, Draw{seed_, key()}); }
void Generator::shuffle(Array& a) { a.assign(permuted_rows(a, Draw{seed_, key()})); }

Generator default_rng(std::optional<uint64_t> seed) {
  if (seed) return Generator(*seed);
  std::random_device rd;
  return Generator((uint64_t(rd()) << 32) ^ rd());
}

}  // namespace cufuse::random
