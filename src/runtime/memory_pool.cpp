// src/runtime/memory_pool.cpp: array memory. Device blocks come from each device's default
// stream-ordered pool (cudaMallocFromPoolAsync on the current stream, release threshold
// UINT64_MAX so freed blocks are reused instead of returned at every sync) and go back
// with cudaFreeAsync on the stream they are ordered on; host blocks are 64-byte aligned.
// Also Storage::~Storage and the cufuse::memory statistics.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "cufuse/memory.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime_internal.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

namespace {

struct PoolSlot {
  std::atomic<cudaMemPool_t> pool{nullptr};
  std::mutex mu;
};
PoolSlot pool_slots[kMaxDevices];  // constant-initialized: no CUDA at static init

[[gnu::noinline]] cudaMemPool_t init_pool(int device) {
  PoolSlot& s = pool_slots[device];
  std::lock_guard<std::mutex> lk(s.mu);
  cudaMemPool_t p = s.pool.load(std::memory_order_acquire);
  if (p != nullptr) return p;
  CUFUSE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&p, device));
  uint64_t threshold = UINT64_MAX;  // keep freed memory in the pool for reuse
  CUFUSE_CUDA_CHECK(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &threshold));
  s.pool.store(p, std::memory_order_release);
  log(LogChannel::Memory, "device {}: default pool {}, release threshold UINT64_MAX", device,
      static_cast<void*>(p));
  return p;
}

uint64_t pool_attr(int device, cudaMemPoolAttr a) {
  uint64_t v = 0;  // cuuint64_t (cuda.h) is a uint64_t
  CUFUSE_CUDA_CHECK(cudaMemPoolGetAttribute(device_pool(device), a, &v));
  return v;
}

int resolve_device(int device) {
  require_device();
  int d = device < 0 ? current_device() : device;
  check_device_id(d);
  return d;
}

[[noreturn]] void throw_oom(size_t nbytes, int device) {
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) cudaGetLastError();
  uint64_t pool_used = 0, pool_reserved = 0;
  try {
    pool_used = pool_attr(device, cudaMemPoolAttrUsedMemCurrent);
    pool_reserved = pool_attr(device, cudaMemPoolAttrReservedMemCurrent);
  } catch (const Error&) {
  }
  throw OutOfMemoryError(fmt::format(
      "out of device memory on device {}: {} requested, {} free of {} ({} in live cufuse "
      "arrays, {} held by the cufuse pool)",
      device, format_bytes(nbytes), format_bytes(free_b), format_bytes(total_b),
      format_bytes(pool_used), format_bytes(pool_reserved)));
}

}  // namespace

cudaMemPool_t device_pool(int device) {
  cudaMemPool_t p = pool_slots[device].pool.load(std::memory_order_acquire);
  return p != nullptr ? p : init_pool(device);
}

std::shared_ptr<Storage> allocate_device(size_t nbytes) {
  require_device();
  int dev = current_device();
  auto st = std::make_shared<Storage>();
  st->device = dev;
  st->nbytes = nbytes;
  st->stream = current_stream();
  st->stream_owner = current_stream_owner();
  if (nbytes == 0) return st;  // ptr stays nullptr; nothing to free

  auto stream = static_cast<cudaStream_t>(st->stream);
  cudaMemPool_t pool = device_pool(dev);
  void* p = nullptr;
  cudaError_t e = cudaMallocFromPoolAsync(&p, nbytes, pool, stream);
  if (e == cudaErrorMemoryAllocation) {
    // Blocks freed on other streams may still be pending and the pool may be fragmented:
    // wait for everything, give unused memory back to the driver and try once more.
    cudaGetLastError();
    log(LogChannel::Memory, "device {}: {} failed; synchronizing, trimming the pool and retrying",
        dev, format_bytes(nbytes));
    CUFUSE_CUDA_CHECK(cudaDeviceSynchronize());
    CUFUSE_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
    e = cudaMallocFromPoolAsync(&p, nbytes, pool, stream);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw_oom(nbytes, dev);
    }
  }
  if (e != cudaSuccess) {
    auto call = fmt::format("cudaMallocFromPoolAsync({})", format_bytes(nbytes));
    throw_cuda_error(e, call.c_str(), __FILE__, __LINE__);
  }
  st->ptr = p;
  log(LogChannel::Memory, "device {}: alloc {} B at {} on stream {}", dev, nbytes, p, st->stream);
  return st;
}

std::shared_ptr<Storage> allocate_host(size_t nbytes) {
  auto st = std::make_shared<Storage>();
  st->nbytes = nbytes;
  st->device = -1;
  size_t rounded = (nbytes + 63) / 64 * 64;
  if (rounded < nbytes) throw OutOfMemoryError(fmt::format("host allocation of {} B is too large", nbytes));
  st->ptr = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (st->ptr == nullptr)
    throw OutOfMemoryError(fmt::format("out of host memory: {} requested", format_bytes(nbytes)));
  return st;
}

Storage::~Storage() {
  if (release) {
    try {
      release(*this);
    } catch (...) {  // a foreign deleter must not take the process down from a destructor
    }
    return;
  }
  if (ptr == nullptr) return;
  if (on_host()) {
    std::free(ptr);
    return;
  }
  // Cross-stream safety: work on other streams that used this block finishes first.
  if (!other_streams.empty()) wait_for_stream_uses(*this);
  // The legacy default stream means "of the current device": make the block's device
  // current for the free when it is not.
  int prev = -1;
  if (stream == nullptr) {
    int cur = current_device();
    if (cur != device && cudaSetDevice(device) == cudaSuccess) prev = cur;
  }
  cudaError_t e = cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) {
    cudaGetLastError();
    // cudaErrorCudartUnloading: the process is exiting and the driver reclaims everything.
    if (e != cudaErrorCudartUnloading)
      log(LogChannel::Memory, "device {}: cudaFreeAsync({}) failed: {}", device, ptr,
          cudaGetErrorName(e));
  } else {
    log(LogChannel::Memory, "device {}: free {} B at {} on stream {}", device, nbytes, ptr, stream);
  }
  if (prev >= 0 && cudaSetDevice(prev) != cudaSuccess) cudaGetLastError();
}

}  // namespace cufuse::detail

namespace cufuse::memory {

size_t used_bytes(int device) {
  int d = detail::resolve_device(device);
  return size_t(detail::pool_attr(d, cudaMemPoolAttrUsedMemCurrent));
}

size_t total_bytes(int device) {
  int d = detail::resolve_device(device);
  return size_t(detail::pool_attr(d, cudaMemPoolAttrReservedMemCurrent));
}

void free_all_blocks(int device) {
  int d = detail::resolve_device(device);
  detail::DeviceGuard g(d);
  CUFUSE_CUDA_CHECK(cudaDeviceSynchronize());
  CUFUSE_CUDA_CHECK(cudaMemPoolTrimTo(detail::device_pool(d), 0));
  detail::log(detail::LogChannel::Memory, "device {}: pool trimmed, {} still reserved", d,
              detail::format_bytes(detail::pool_attr(d, cudaMemPoolAttrReservedMemCurrent)));
}

}  // namespace cufuse::memory
