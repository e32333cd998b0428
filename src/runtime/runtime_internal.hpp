// src/runtime/runtime_internal.hpp: what the runtime's own .cpp files share and nothing
// else needs: Stream::Impl and Event::Impl, the per-thread current-stream slots, a scoped
// device switch, the default memory pool handle and the byte formatter of messages.
// Everything here is lazy: no CUDA call happens at static-initialization time.
#pragma once
#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "cufuse/stream.hpp"
#include "runtime/device.hpp"

namespace cufuse {

// A stream: the legacy default stream of `device` (owned == false, handle stays nullptr)
// or a non-blocking stream created on `device` at the first get().
struct Stream::Impl {
  const int device;
  const bool owned;
  std::atomic<cudaStream_t> handle{nullptr};
  std::mutex mu;  // serializes the lazy creation

  Impl(int d, bool o) : device(d), owned(o) {}
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // The cudaStream_t, created here on first use (throws NoDeviceError without a device).
  cudaStream_t get() {
    cudaStream_t h = handle.load(std::memory_order_acquire);
    if (h != nullptr || !owned) return h;
    return create();
  }
  // False for an owned stream that was never used: it has no work to wait for.
  bool exists() const { return !owned || handle.load(std::memory_order_acquire) != nullptr; }

 private:
  cudaStream_t create();
};

// An event, created on the device of the first stream it is recorded on.
struct Event::Impl {
  const bool timing;
  std::atomic<cudaEvent_t> handle{nullptr};
  std::atomic<bool> recorded{false};
  std::atomic<int64_t> host_ns{-1};  // recorded on the host reference backend (no device): steady clock
  int device = -1;  // set once, under mu, before handle is published
  std::mutex mu;

  explicit Impl(bool t) : timing(t) {}
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  cudaEvent_t get_or_create(int device);  // throws if it exists on another device
};

}  // namespace cufuse

namespace cufuse::detail {
// True on the host reference backend with no device (device.cpp): synchronize, stream and
// event waits are no-ops there (its work is done when each call returns), so a GPU program
// runs unchanged.
bool host_only();
}  // namespace cufuse::detail

namespace cufuse::detail {

// Device ids past this are refused (NotSupportedError); per-device tables are this long.
inline constexpr int kMaxDevices = 64;

// This thread's current stream of `device` (empty: the legacy default stream). The slot
// is what StreamScope saves and restores; `device` must be in [0, kMaxDevices).
std::shared_ptr<Stream::Impl>& current_stream_slot(int device);
// Sets this thread's current device: the bookkeeping and cudaSetDevice. Validates id.
void set_current_device(int device);
// Throws IndexError / NotSupportedError unless 0 <= device < count (requires a device).
void check_device_id(int device);
// "no CUDA device: <why>. Planning, ... still work without one; ..." (NoDeviceError's text).
std::string no_device_message(const std::string& why);

// DeviceGuard: runtime/device.hpp.

// The device's default pool, release threshold raised to UINT64_MAX on first use.
cudaMemPool_t device_pool(int device);

// "1.00 TiB", "79.1 GiB", "512 B": three significant digits, binary units.
std::string format_bytes(size_t n);

}  // namespace cufuse::detail
