// src/runtime/pinned_pool.cpp: the pinned host memory pool (see pinned_pool.hpp) and the
// cufuse::memory::pinned_* statistics. One pool per process, guarded by a mutex; never
// destroyed (blocks may be given back during exit, after the CUDA runtime is gone).
#include "runtime/pinned_pool.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "cufuse/pinned.hpp"
#include "cufuse/stream.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime_internal.hpp"

namespace cufuse::detail {

namespace {

constexpr size_t kGranule = 512;

struct FreeBlock {
  PinnedBlock block;
  cudaEvent_t last_use = nullptr;
};

struct PinnedPool {
  std::mutex mu;
  std::vector<FreeBlock> free;
  size_t used = 0, total = 0;
};
PinnedPool& pool() {
  static PinnedPool* p = new PinnedPool;
  return *p;
}

bool finished(cudaEvent_t e) {
  if (e == nullptr) return true;
  const cudaError_t r = cudaEventQuery(e);
  if (r == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  if (r != cudaSuccess) cudaGetLastError();  // a failed copy: the block is no longer in use either
  return true;
}

void drop(FreeBlock& f) {
  if (f.last_use) {
    if (cudaEventSynchronize(f.last_use) != cudaSuccess) cudaGetLastError();
    if (cudaEventDestroy(f.last_use) != cudaSuccess) cudaGetLastError();
    f.last_use = nullptr;
  }
  if (f.block.pinned) {
    if (cudaFreeHost(f.block.ptr) != cudaSuccess) cudaGetLastError();
  } else {
    std::free(f.block.ptr);
  }
}

// Frees every unused block; called with the pool's lock held.
void trim_locked(PinnedPool& p) {
  for (auto& f : p.free) {
    drop(f);
    p.total -= f.block.size;
  }
  p.free.clear();
}

}  // namespace

PinnedBlock pinned_acquire(size_t nbytes) {
  PinnedBlock b;
  if (nbytes == 0) return b;
  const size_t size = (nbytes + kGranule - 1) / kGranule * kGranule;
  if (size < nbytes) throw OutOfMemoryError(fmt::format("pinned allocation of {} B is too large", nbytes));
  PinnedPool& p = pool();
  std::lock_guard<std::mutex> lk(p.mu);
  for (size_t i = p.free.size(); i-- > 0;) {
    FreeBlock& f = p.free[i];
    if (f.block.size != size || !finished(f.last_use)) continue;
    if (f.last_use && cudaEventDestroy(f.last_use) != cudaSuccess) cudaGetLastError();
    b = f.block;
    p.free.erase(p.free.begin() + static_cast<std::ptrdiff_t>(i));
    p.used += size;
    return b;
  }
  b.size = size;
  if (Device::count() > 0) {
    cudaError_t e = cudaHostAlloc(&b.ptr, size, cudaHostAllocPortable);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      trim_locked(p);
      e = cudaHostAlloc(&b.ptr, size, cudaHostAllocPortable);
      if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        throw OutOfMemoryError(fmt::format("out of pinned host memory: {} requested, {} held by the pinned pool",
                                           format_bytes(size), format_bytes(p.total)));
      }
    }
    if (e != cudaSuccess) throw_cuda_error(e, "cudaHostAlloc", __FILE__, __LINE__);
    b.pinned = true;
  } else {
    b.ptr = std::aligned_alloc(64, size);
    if (b.ptr == nullptr) throw OutOfMemoryError(fmt::format("out of host memory: {} requested", format_bytes(size)));
  }
  p.used += size;
  p.total += size;
  log(LogChannel::Memory, "pinned pool: new block of {} at {} ({})", format_bytes(size), b.ptr,
      b.pinned ? "page-locked" : "no device: plain host memory");
  return b;
}

void pinned_release(const PinnedBlock& b, void* last_use) {
  if (b.ptr == nullptr) return;
  PinnedPool& p = pool();
  std::lock_guard<std::mutex> lk(p.mu);
  p.free.push_back(FreeBlock{b, static_cast<cudaEvent_t>(last_use)});
  p.used -= b.size;
}

size_t pinned_used() {
  PinnedPool& p = pool();
  std::lock_guard<std::mutex> lk(p.mu);
  return p.used;
}

size_t pinned_total() {
  PinnedPool& p = pool();
  std::lock_guard<std::mutex> lk(p.mu);
  return p.total;
}

void pinned_trim() {
  PinnedPool& p = pool();
  std::lock_guard<std::mutex> lk(p.mu);
  trim_locked(p);
}

}  // namespace cufuse::detail

namespace cufuse::memory {
size_t pinned_used_bytes() { return detail::pinned_used(); }
size_t pinned_total_bytes() { return detail::pinned_total(); }
void pinned_free_all_blocks() { detail::pinned_trim(); }
}  // namespace cufuse::memory
