// src/graph/random_stream.hpp: the process-wide Philox stream of the unseeded random calls
// (its state lives in src/graph/creation.cpp), for the draws of src/graph/random_more.cpp.
#pragma once
#include <cstdint>
#include <utility>

namespace cufuse::detail {

// (seed, first counter) of n fresh counters of the process-wide stream (seeded from
// std::random_device on first use, or by random::seed).
std::pair<uint64_t, uint64_t> random_stream_take(uint64_t n);

}  // namespace cufuse::detail
