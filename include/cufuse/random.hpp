// cufuse/random.hpp: counter-based random numbers (Philox4x32-10). Each element's value
// depends only on (seed, element number), so random arrays are lazy generators that fuse
// into their consumers and reproduce exactly on any device or on the host.
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
// Reseeds the process-wide stream.
void seed(uint64_t s);

}  // namespace cufuse::random
