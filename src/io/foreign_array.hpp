// src/io/foreign_array.hpp: an Array on memory cufuse does not own, the part DLPack and
// from_device_pointer share: layout checks, the extent the strides reach, the Storage.
#pragma once
#include <functional>
#include <optional>

#include "cufuse/array.hpp"

namespace cufuse::io {

// An array of `dtype` and `shape` whose element 0 is at `ptr`, with strides in elements
// (none: C-contiguous), on `device` (-1: host memory). `release` runs once the last array on
// the memory has gone and the work queued on it has finished. `what` starts the messages.
Array foreign_array(void* ptr, DType dtype, const Shape& shape, const std::optional<Strides>& strides, int device,
                    std::function<void()> release, bool read_only, const char* what);

// Materializes `a`, carries out pending writes into its memory, and returns its leaf's
// storage pointer plus the element offset, for data_ptr and to_dlpack.
struct Materialized {
  void* element0;
  Shape shape;
  Strides strides;       // in elements
  int device;            // -1: host
  std::shared_ptr<void> keep;  // keeps the memory alive
};
Materialized materialize_for_export(const Array& a, const char* what);

}  // namespace cufuse::io
