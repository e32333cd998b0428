// cufuse/foreign.hpp: arrays on memory someone else allocated (CuPy's UnownedMemory and
// __cuda_array_interface__): zero copy, never freed by cufuse.
//
//   from_device_pointer(ptr, dtype, shape)             a C-contiguous array at ptr
//   from_device_pointer(ptr, dtype, shape, strides)    strides in bytes (multiples of the
//                                                      itemsize; negative and 0 allowed)
//   owner   kept alive (and released, after the work queued on the memory has finished)
//           until the last array on the memory goes away
//   device  the memory's device; -1 for host memory (the reference backend's kind); by
//           default the device CUDA says the pointer belongs to (host memory where there is
//           no CUDA device or the pointer is ordinary host memory)
//
// Array::data_ptr() (array.hpp) is the other direction: the address of element 0 of a
// materialized array. Writes into foreign memory are lazy like every write: they are carried
// out at the next materialization point or stream boundary (cf::synchronize, a stream's
// synchronize, Event::record, ...), by data_ptr() and to_dlpack() on that memory, and never
// dropped, since the owner may read the memory behind cufuse's back.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "cufuse/array.hpp"

namespace cufuse {

Array from_device_pointer(void* ptr, DType dtype, const Shape& shape,
                          std::optional<std::vector<int64_t>> strides_bytes = std::nullopt,
                          std::shared_ptr<void> owner = nullptr, std::optional<int> device = std::nullopt);

}  // namespace cufuse
