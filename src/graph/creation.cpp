// src/graph/creation.cpp: creating arrays: memory, filled (scalar leaves), ranges and
// random numbers (generator leaves), host data, placeholders; and the backend setting.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>

#include <fmt/format.h>

#include "core/node.hpp"
#include "cufuse/backend.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/random.hpp"
#include "core/node.hpp"
#include "graph/random_stream.hpp"
#include "graph/size_check.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/storage.hpp"
#include "runtime/transfer.hpp"

namespace cufuse {

using detail::GenKind;
using detail::GenParams;

// ------------------------------------------------------------------ backend
// Each thread starts on CUFUSE_BACKEND's backend (runtime/env.cpp; an unknown value warns).
static thread_local Backend tl_backend = detail::settings().backend;
Backend current_backend() { return tl_backend; }
BackendScope::BackendScope(Backend b) : prev_(tl_backend) { tl_backend = b; }
BackendScope::~BackendScope() { tl_backend = prev_; }

namespace detail {
std::shared_ptr<Storage> allocate_for_backend(size_t nbytes) {
  return current_backend() == Backend::Reference ? allocate_host(nbytes) : allocate_device(nbytes);
}
}  // namespace detail

static void check_shape(const Shape& s, DType t, const char* what) { detail::check_size(s, itemsize(t), what); }

// ------------------------------------------------------------------ filled
Array empty(const Shape& shape, DType dtype) {
  check_shape(shape, dtype, "empty");
  auto st = detail::allocate_for_backend(static_cast<size_t>(numel(shape) * itemsize(dtype)));
  return Array(detail::make_buffer(dtype, detail::contiguous_layout(shape), std::move(st)));
}

Array full(const Shape& shape, const Scalar& value, std::optional<DType> dtype) {
  DType t = dtype ? *dtype : value.dtype();
  check_shape(shape, t, "full");
  // NumPy 2: a Python integer out of an integer dtype's range raises (full(3, 300, uint8))
  if ((value.kind() == Scalar::Kind::Int || value.kind() == Scalar::Kind::UInt) && is_integer(t) && !value.fits(t))
    throw OverflowError(fmt::format("full: Python integer {} out of bounds for {}", value.str(), name(t)));
  return Array(detail::make_scalar(Scalar::typed(value, t), t, shape));
}
Array zeros(const Shape& shape, DType dtype) { return full(shape, Scalar(0), dtype); }
Array ones(const Shape& shape, DType dtype) { return full(shape, Scalar(1), dtype); }
Array empty_like(const Array& a, std::optional<DType> dtype) { return empty(a.shape(), dtype ? *dtype : a.dtype()); }
Array zeros_like(const Array& a, std::optional<DType> dtype) { return zeros(a.shape(), dtype ? *dtype : a.dtype()); }
Array ones_like(const Array& a, std::optional<DType> dtype) { return ones(a.shape(), dtype ? *dtype : a.dtype()); }
Array full_like(const Array& a, const Scalar& value, std::optional<DType> dtype) {
  return full(a.shape(), value, dtype ? *dtype : a.dtype());
}

// ------------------------------------------------------------------ ranges
Array arange(const Scalar& stop) { return arange(Scalar(0), stop, Scalar(1)); }

Array arange(const Scalar& start, const Scalar& stop, const Scalar& step, std::optional<DType> dtype) {
  const bool all_int = start.kind() != Scalar::Kind::Float && stop.kind() != Scalar::Kind::Float &&
                       step.kind() != Scalar::Kind::Float;
  DType t = dtype ? *dtype : (all_int ? DType::Int64 : DType::Float64);
  int64_t n;
  if (all_int) {
    int64_t a = start.to_int64(), b = stop.to_int64(), s = step.to_int64();
    if (s == 0) throw ValueError("arange: step must not be zero");
    const __int128 span = static_cast<__int128>(b) - a, st = s;  // arange(INT64_MIN, INT64_MAX) spans 2^64
    const __int128 len = st > 0 ? (span <= 0 ? 0 : (span + st - 1) / st) : (span >= 0 ? 0 : (-span - st - 1) / -st);
    if (len > INT64_MAX)
      throw ValueError(fmt::format("arange: array is too big; arange({}, {}, {}) has more than 2^63 elements", a, b, s));
    n = static_cast<int64_t>(len);
  } else {
    double a = start.to_double(), b = stop.to_double(), s = step.to_double();
    if (s == 0) throw ValueError("arange: step must not be zero");
    double len = std::ceil((b - a) / s);
    if (!std::isfinite(len)) throw ValueError(fmt::format("arange: cannot compute length of arange({}, {}, {})", a, b, s));
    if (len >= 9.2233720368547758e18)
      throw ValueError(fmt::format("arange: array is too big; arange({}, {}, {}) has {:g} elements", a, b, s, len));
    n = len > 0 ? static_cast<int64_t>(len) : 0;
  }
  detail::check_count(n, itemsize(t), "arange");
  GenParams p;
  if (is_float(t)) {
    p.start = Scalar::typed(Scalar(start.to_double()), t).to_double();
    p.step = Scalar::typed(Scalar(start.to_double() + step.to_double()), t).to_double();
  } else {
    p.istart = Scalar::typed(all_int ? start : Scalar(start.to_double()), t).to_int64();
    p.istep_second = Scalar::typed(all_int ? Scalar(start.to_int64() + step.to_int64())
                                           : Scalar(start.to_double() + step.to_double()), t).to_int64();
    if (is_unsigned_int(t)) {
      p.istart = static_cast<int64_t>(Scalar::typed(Scalar(start.to_int64()), t).to_uint64());
      p.istep_second = static_cast<int64_t>(Scalar::typed(Scalar(start.to_int64() + step.to_int64()), t).to_uint64());
    }
  }
  p.num = n;
  return Array(detail::make_generator(GenKind::Arange, t, detail::contiguous_layout({n}), p));
}

Array linspace(double start, double stop, int64_t num, bool endpoint, DType dtype) {
  if (num < 0) throw ValueError(fmt::format("linspace: number of samples, {}, must be non-negative", num));
  detail::check_count(num, itemsize(dtype), "linspace");
  int64_t div = endpoint ? num - 1 : num;
  GenParams p;
  p.start = start;
  p.stop = stop;
  p.step = div > 0 ? (stop - start) / static_cast<double>(div) : 0.0;
  p.num = num;
  p.endpoint = endpoint;
  return Array(detail::make_generator(GenKind::Linspace, dtype, detail::contiguous_layout({num}), p));
}

// ------------------------------------------------------------------ host data
Array from_host(const void* data, DType dtype, const Shape& shape) {
  check_shape(shape, dtype, "from_host");
  const size_t nbytes = static_cast<size_t>(numel(shape) * itemsize(dtype));
  if (data == nullptr && nbytes != 0)
    throw ValueError(fmt::format("from_host: the data pointer is null, for {} {} ({} bytes)", name(dtype), to_string(shape), nbytes));
  auto st = detail::allocate_for_backend(nbytes);
  if (nbytes) {
    if (st->on_host()) std::memcpy(st->ptr, data, nbytes);
    else detail::copy_from_host(st->ptr, data, nbytes, detail::current_stream());
  }
  return Array(detail::make_buffer(dtype, detail::contiguous_layout(shape), std::move(st)));
}

Array placeholder(DType dtype, const Shape& shape) {
  check_shape(shape, dtype, "placeholder");
  return Array(detail::make_placeholder(dtype, shape));
}

// ------------------------------------------------------------------ random
namespace random {
namespace {
// The unseeded calls' Philox stream: process state (runtime/context.hpp).
struct Stream {
  static constexpr detail::StateSlot kSlot = detail::StateSlot::RandomStream;
  std::mutex mu;
  bool seeded = false;
  uint64_t seed = 0, counter = 0;
};
Stream& global_stream() { return detail::runtime().state<Stream>(); }
Array make_random(GenKind g, const Shape& shape, DType dtype, std::optional<uint64_t> seed, double a, double b,
                  const char* what) {
  check_shape(shape, dtype, what);
  if (!is_float(dtype))
    throw TypeError(fmt::format("random.{}: dtype must be a floating type, got {}", what, name(dtype)));
  GenParams p;
  p.start = a;
  p.stop = b;
  if (seed) {
    p.seed = *seed;
  } else {
    auto& s = global_stream();
    std::lock_guard<std::mutex> lk(s.mu);
    if (!s.seeded) {
      std::random_device rd;
      s.seed = (uint64_t(rd()) << 32) ^ rd();
      s.seeded = true;
    }
    p.seed = s.seed;
    p.counter = s.counter;
    s.counter += static_cast<uint64_t>(numel(shape));
  }
  return Array(detail::make_generator(g, dtype, detail::contiguous_layout(shape), p));
}
}  // namespace

Array uniform(const Shape& shape, DType dtype, std::optional<uint64_t> seed, double low, double high) {
  return make_random(GenKind::RandomUniform, shape, dtype, seed, low, high, "uniform");
}
Array normal(const Shape& shape, DType dtype, std::optional<uint64_t> seed, double mean, double stddev) {
  return make_random(GenKind::RandomNormal, shape, dtype, seed, mean, stddev, "normal");
}
}  // namespace random

namespace detail {
std::pair<uint64_t, uint64_t> random_stream_take(uint64_t n) {
  auto& s = random::global_stream();
  std::lock_guard<std::mutex> lk(s.mu);
  if (!s.seeded) {
    std::random_device rd;
    s.seed = (uint64_t(rd()) << 32) ^ rd();
    s.seeded = true;
  }
  const uint64_t c = s.counter;
  s.counter += n;
  return {s.seed, c};
}
}  // namespace detail

namespace random {
void seed(uint64_t s) {
  auto& st = global_stream();
  std::lock_guard<std::mutex> lk(st.mu);
  st.seed = s;
  st.counter = 0;
  st.seeded = true;
}
}  // namespace random

}  // namespace cufuse
