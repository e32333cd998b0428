// cufuse/memory.hpp: the stream-ordered device memory pool (cudaMallocAsync).
// Freed blocks stay in the pool for reuse; free_all_blocks gives them back to the driver.
// The pinned host pool's pinned_used_bytes / pinned_total_bytes / pinned_free_all_blocks are
// declared with PinnedBuffer in cufuse/pinned.hpp.
#pragma once
#include <cstddef>

namespace cufuse::memory {

size_t used_bytes(int device = -1);   // bytes in live arrays (-1: current device)
size_t total_bytes(int device = -1);  // bytes the pool holds from the driver
void free_all_blocks(int device = -1);  // synchronizes, then trims the pool to what is used

}  // namespace cufuse::memory
