// src/runtime/transfer.hpp: copies between host and device memory through pinned staging,
// ordered on a stream; the host-side calls return when the copy is complete.
#pragma once
#include <cstddef>

namespace cufuse::detail {

// Copies larger than this go through two pinned staging buffers of this size in turn, the
// host memcpy of one chunk overlapping the DMA of the next.
inline constexpr size_t kStagingChunkBytes = size_t(8) << 20;

void copy_to_host(void* dst, const void* device_src, size_t nbytes, void* stream);
void copy_from_host(void* device_dst, const void* src, size_t nbytes, void* stream);
// Asynchronous on `stream`.
void copy_device(void* dst, const void* src, size_t nbytes, void* stream);
// Asynchronous on `stream`: nbytes of dst set to the byte value.
void memset_device(void* dst, int value, size_t nbytes, void* stream);

}  // namespace cufuse::detail
