// src/runtime/memory_pool.cpp: array memory. Device blocks come from each device's default
// stream-ordered pool (cudaMallocFromPoolAsync on the current stream, release threshold
// UINT64_MAX so freed blocks are reused instead of returned at every sync) and go back
// with cudaFreeAsync on the stream they are ordered on; host blocks are 64-byte aligned.
// In front of the pool, a small cache of recently freed small blocks per (device, stream):
// an allocation of the same rounded size on the same stream takes one back without a driver
// call (stream order makes that as safe as the pool's own reuse: work queued on the stream
// after the free runs after the work that used the block). It takes ~0.7 us of driver calls
// off each small evaluation (W7). A block allocated while its stream is being captured is a
// graph allocation, valid only inside the user's graph: it never enters the cache (its free
// is captured too). Also Storage::~Storage and the cufuse::memory statistics.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "cufuse/memory.hpp"
#include "runtime/context.hpp"
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

// ------------------------------------------------------------------ the small-block cache
constexpr size_t kCacheGranule = 512;             // sizes are rounded up to this
constexpr size_t kCacheMaxBlock = size_t(1) << 20;  // larger blocks go straight to the pool
constexpr size_t kCacheMaxBlocks = 64;
constexpr size_t kCacheMaxBytes = size_t(32) << 20;

size_t cache_size_of(size_t nbytes) { return (nbytes + kCacheGranule - 1) / kCacheGranule * kCacheGranule; }

struct CachedBlock {
  void* ptr;
  size_t size;  // rounded
  int device;
  void* stream;
  std::shared_ptr<void> stream_owner;  // the Stream stays alive while its block waits here
};

struct BlockCache {
  std::mutex mu;
  std::vector<CachedBlock> blocks;  // oldest first
  size_t bytes[kMaxDevices] = {};  // per device
  size_t total = 0;                  // all devices
};

// Process state (runtime/context.hpp), never destroyed: blocks may be freed during exit.
// Made at the first allocation or statistic, so no CUDA call happens at static init.
struct MemoryPool {
  static constexpr StateSlot kSlot = StateSlot::MemoryPool;
  PoolSlot pools[kMaxDevices];
  BlockCache cache;
};
MemoryPool& memory_pool() { return runtime().state<MemoryPool>(); }
BlockCache& block_cache() { return memory_pool().cache; }

[[gnu::noinline]] cudaMemPool_t init_pool(int device) {
  PoolSlot& s = memory_pool().pools[device];
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

void free_block(void* ptr, int device, void* stream) {
  int prev = -1;  // the legacy default stream means "of the current device"
  if (stream == nullptr) {
    int cur = current_device();
    if (cur != device && cudaSetDevice(device) == cudaSuccess) prev = cur;
  }
  cudaError_t e = cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) {
    cudaGetLastError();
    // cudaErrorCudartUnloading: the process is exiting and the driver reclaims everything.
    if (e != cudaErrorCudartUnloading)
      log(LogChannel::Memory, "device {}: cudaFreeAsync({}) failed: {}", device, ptr, cudaGetErrorName(e));
  }
  if (prev >= 0 && cudaSetDevice(prev) != cudaSuccess) cudaGetLastError();
}

// A cached block of `size` for (device, stream), or nullptr.
void* cache_take(size_t size, int device, void* stream) {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lk(c.mu);
  for (size_t i = c.blocks.size(); i-- > 0;) {
    CachedBlock& b = c.blocks[i];
    if (b.size == size && b.stream == stream && b.device == device) {
      void* p = b.ptr;
      c.bytes[device] -= size;
      c.total -= size;
      c.blocks.erase(c.blocks.begin() + static_cast<std::ptrdiff_t>(i));
      return p;
    }
  }
  return nullptr;
}

// Keeps a freed block for reuse; evicts the oldest blocks past the limits (freed to the pool).
bool cache_put(Storage& s) {
  const size_t size = cache_size_of(s.nbytes);
  if (size > kCacheMaxBlock || s.device < 0 || s.device >= kMaxDevices) return false;
  if (s.graph_memory) return false;  // the user's graph owns it (Storage::graph_memory)
  std::vector<CachedBlock> evicted;
  {
    BlockCache& c = block_cache();
    std::lock_guard<std::mutex> lk(c.mu);
    c.blocks.push_back(CachedBlock{s.ptr, size, s.device, s.stream, std::move(s.stream_owner)});
    c.bytes[s.device] += size;
    c.total += size;
    size_t drop = 0;
    while (drop < c.blocks.size() && (c.blocks.size() - drop > kCacheMaxBlocks || c.total > kCacheMaxBytes)) {
      c.total -= c.blocks[drop].size;
      c.bytes[c.blocks[drop].device] -= c.blocks[drop].size;
      ++drop;
    }
    if (drop) {
      evicted.assign(std::make_move_iterator(c.blocks.begin()), std::make_move_iterator(c.blocks.begin() + drop));
      c.blocks.erase(c.blocks.begin(), c.blocks.begin() + static_cast<std::ptrdiff_t>(drop));
    }
  }
  for (auto& b : evicted) free_block(b.ptr, b.device, b.stream);
  return true;
}

// Gives every cached block of `device` (all devices: -1) back to the pool.
void cache_flush(int device) {
  std::vector<CachedBlock> out;
  {
    BlockCache& c = block_cache();
    std::lock_guard<std::mutex> lk(c.mu);
    for (size_t i = 0; i < c.blocks.size();) {
      if (device < 0 || c.blocks[i].device == device) {
        c.bytes[c.blocks[i].device] -= c.blocks[i].size;
        c.total -= c.blocks[i].size;
        out.push_back(std::move(c.blocks[i]));
        c.blocks.erase(c.blocks.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }
  for (auto& b : out) free_block(b.ptr, b.device, b.stream);
}

size_t cache_bytes(int device) {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lk(c.mu);
  return c.bytes[device];
}

}  // namespace

cudaMemPool_t device_pool(int device) {
  cudaMemPool_t p = memory_pool().pools[device].pool.load(std::memory_order_acquire);
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

  const size_t csize = cache_size_of(nbytes);
  if (csize <= kCacheMaxBlock) {
    if (void* p = cache_take(csize, dev, st->stream)) {
      st->ptr = p;
      return st;
    }
    nbytes = csize;  // so that the block can be cached when it is freed
  }
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
    cache_flush(dev);
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
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  // The legacy stream reports cudaErrorStreamCaptureImplicit while another stream captures
  // (it cannot be captured itself): not capturing.
  if (cudaStreamIsCapturing(stream, &cs) != cudaSuccess) {
    cudaGetLastError();
    cs = cudaStreamCaptureStatusNone;
  }
  st->graph_memory = cs != cudaStreamCaptureStatusNone;
  log(LogChannel::Memory, "device {}: alloc {} B at {} on stream {}{}", dev, nbytes, p, st->stream,
      cs != cudaStreamCaptureStatusNone ? " (captured: graph memory)" : "");
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
  else if (cache_put(*this)) return;
  free_block(ptr, device, stream);
  log(LogChannel::Memory, "device {}: free {} B at {} on stream {}", device, nbytes, ptr, stream);
}

}  // namespace cufuse::detail

namespace cufuse::memory {

size_t used_bytes(int device) {
  int d = detail::resolve_device(device);
  const size_t used = size_t(detail::pool_attr(d, cudaMemPoolAttrUsedMemCurrent)), cached = detail::cache_bytes(d);
  return used > cached ? used - cached : 0;  // blocks waiting in the small-block cache are free
}

size_t total_bytes(int device) {
  int d = detail::resolve_device(device);
  return size_t(detail::pool_attr(d, cudaMemPoolAttrReservedMemCurrent));
}

void free_all_blocks(int device) {
  int d = detail::resolve_device(device);
  detail::DeviceGuard g(d);
  detail::cache_flush(d);
  CUFUSE_CUDA_CHECK(cudaDeviceSynchronize());
  CUFUSE_CUDA_CHECK(cudaMemPoolTrimTo(detail::device_pool(d), 0));
  detail::log(detail::LogChannel::Memory, "device {}: pool trimmed, {} still reserved", d,
              detail::format_bytes(detail::pool_attr(d, cudaMemPoolAttrReservedMemCurrent)));
}

}  // namespace cufuse::memory
