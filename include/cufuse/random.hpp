// cufuse/random.hpp: counter-based random numbers (Philox4x32-10). Each element's value
// depends only on (seed, element number), so random arrays are lazy generators that fuse
// into their consumers and reproduce exactly on any device or on the host.
//
// The values are cufuse's own (not NumPy's streams): the same seed gives the same array on
// every GPU and on the host reference backend. permutation and choice without replacement
// need no sort: a keyed Feistel bijection of [0, n) (codegen/device_helpers.inc: cf_feistel)
// gives each position its element; shuffle and permutation of an array are that bijection
// as an index map along axis 0 (src/graph/index_map.hpp), fused with what reads them.
#pragma once
#include <cstdint>
#include <optional>

#include "cufuse/array.hpp"

namespace cufuse::random {

// Without a seed, draws from a process-wide stream (each call takes fresh counters).
Array uniform(const Shape& shape, DType dtype = f64, std::optional<uint64_t> seed = std::nullopt,
              double low = 0.0, double high = 1.0);
Array normal(const Shape& shape, DType dtype = f64, std::optional<uint64_t> seed = std::nullopt,
             double mean = 0.0, double stddev = 1.0);
inline Array rand(const Shape& shape, DType dtype = f64) { return uniform(shape, dtype); }
inline Array randn(const Shape& shape, DType dtype = f64) { return normal(shape, dtype); }
// Integers in [low, high) of an integer (or bool) dtype. ValueError "low >= high" when the
// range is empty, "low is out of bounds for int8" (and high) outside the dtype.
Array integers(int64_t low, int64_t high, const Shape& shape, DType dtype = i64,
               std::optional<uint64_t> seed = std::nullopt);
// Exponential of the given scale (>= 0), a floating dtype.
Array exponential(double scale, const Shape& shape, DType dtype = f64, std::optional<uint64_t> seed = std::nullopt);
// Poisson of mean lam (>= 0), an integer dtype.
Array poisson(double lam, const Shape& shape, DType dtype = i64, std::optional<uint64_t> seed = std::nullopt);
// Draws from arange(n) (int64): with replacement, uniform integers; without, the first
// numel(shape) elements of a permutation (ValueError when more than n are asked for).
Array choice(int64_t n, const Shape& shape, bool replace = true, std::optional<uint64_t> seed = std::nullopt);
// A permutation of arange(n) (int64).
Array permutation(int64_t n, std::optional<uint64_t> seed = std::nullopt);
// A copy of `a` with its rows (axis 0) permuted.
Array permutation(const Array& a, std::optional<uint64_t> seed = std::nullopt);
// Permutes `a`'s rows (axis 0) in place (a lazy write into its memory, as a[...] = b).
void shuffle(Array& a, std::optional<uint64_t> seed = std::nullopt);
// Reseeds the process-wide stream.
void seed(uint64_t s);

// numpy.random.Generator: a seed and a counter; each draw takes the next counters, so two
// Generators of one seed give the same sequence of arrays.
class Generator {
 public:
  explicit Generator(uint64_t seed) : seed_(seed) {}
  uint64_t seed() const { return seed_; }

  Array random(const Shape& shape, DType dtype = f64);  // uniform in [0, 1)
  Array uniform(double low, double high, const Shape& shape, DType dtype = f64);
  Array normal(double loc, double scale, const Shape& shape, DType dtype = f64);
  Array standard_normal(const Shape& shape, DType dtype = f64) { return normal(0.0, 1.0, shape, dtype); }
  Array integers(int64_t low, int64_t high, const Shape& shape, DType dtype = i64);
  Array integers(int64_t high, const Shape& shape, DType dtype = i64) { return integers(0, high, shape, dtype); }
  Array exponential(double scale, const Shape& shape, DType dtype = f64);
  Array poisson(double lam, const Shape& shape, DType dtype = i64);
  Array choice(int64_t n, const Shape& shape, bool replace = true);
  Array permutation(int64_t n);
  Array permutation(const Array& a);
  void shuffle(Array& a);

 private:
  uint64_t seed_;
  uint64_t counter_ = 0;
  uint64_t take(uint64_t n);  // the first counter of n fresh ones
  uint64_t key();             // a fresh key for a permutation
};

// numpy.random.default_rng: seeded, or from std::random_device.
Generator default_rng(std::optional<uint64_t> seed = std::nullopt);

}  // namespace cufuse::random
