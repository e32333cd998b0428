// src/runtime/pinned_pool.hpp: the pinned (page-locked) host memory pool behind
// cufuse::PinnedBuffer, beside the device pool: cudaHostAlloc blocks rounded to 512 bytes,
// kept when freed and handed out again by size once the last copy on them has finished.
// Without a CUDA device the blocks are ordinary 64-byte aligned host memory.
#pragma once
#include <cstddef>

namespace cufuse::detail {

struct PinnedBlock {
  void* ptr = nullptr;
  size_t size = 0;      // rounded
  bool pinned = false;  // page-locked (false: no CUDA device, plain host memory)
};

// A block of at least nbytes (none for 0). On out-of-memory: frees the unused blocks and
// retries once, then throws OutOfMemoryError.
PinnedBlock pinned_acquire(size_t nbytes);
// Gives a block back. `last_use` is a cudaEvent_t recorded after the last copy that used the
// block (nullptr: none); the pool owns it from here and waits for it before reusing the block.
void pinned_release(const PinnedBlock& b, void* last_use);
size_t pinned_used();
size_t pinned_total();
void pinned_trim();  // frees every unused block (after its last copy)

}  // namespace cufuse::detail
