// src/runtime/stream.cpp: Stream, StreamScope and Event. CUDA streams and events are
// created at first use, so all three can be built (and scopes entered) with no device.
#include <cuda_runtime_api.h>

#include <chrono>

#include <fmt/format.h>

#include "cufuse/backend.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime_internal.hpp"

namespace cufuse {

using detail::current_device;

// ------------------------------------------------------------------ Stream::Impl
cudaStream_t Stream::Impl::create() {
  std::lock_guard<std::mutex> lk(mu);
  cudaStream_t h = handle.load(std::memory_order_acquire);
  if (h != nullptr) return h;
  detail::require_device();
  detail::DeviceGuard g(device);
  CUFUSE_CUDA_CHECK(cudaStreamCreateWithFlags(&h, cudaStreamNonBlocking));
  handle.store(h, std::memory_order_release);
  return h;
}

Stream::Impl::~Impl() {
  cudaStream_t h = handle.load(std::memory_order_acquire);
  if (!owned || h == nullptr) return;
  // Work still queued on it completes; the handle is released once it has.
  // (cudaErrorCudartUnloading at process exit is expected and ignored.)
  if (cudaStreamDestroy(h) != cudaSuccess) cudaGetLastError();
}

// ------------------------------------------------------------------ Stream
Stream::Stream() : impl_(std::make_shared<Impl>(current_device(), true)) {}

Stream Stream::null() { return Stream(std::make_shared<Impl>(current_device(), false)); }

Stream Stream::current() {
  int d = current_device();
  const auto& slot = detail::current_stream_slot(d);
  if (slot) return Stream(slot);
  return Stream(std::make_shared<Impl>(d, false));
}

void Stream::synchronize() const {
  detail::stream_boundary();
  if (!impl_->exists()) return;  // never used: nothing to wait for
  detail::require_device();
  detail::DeviceGuard g(impl_->device);  // the legacy stream is the current device's
  CUFUSE_CUDA_CHECK(cudaStreamSynchronize(impl_->get()));
}

void Stream::wait(const Event& e) const {
  auto* ev = static_cast<cudaEvent_t>(e.native_if_recorded());
  if (ev == nullptr) return;  // never recorded: complete, as in CUDA
  detail::DeviceGuard g(impl_->device);
  CUFUSE_CUDA_CHECK(cudaStreamWaitEvent(impl_->get(), ev, 0));
}

bool Stream::query() const {
  if (!impl_->exists()) return true;
  detail::require_device();
  detail::DeviceGuard g(impl_->device);
  cudaError_t r = cudaStreamQuery(impl_->get());
  if (r == cudaSuccess) return true;
  if (r == cudaErrorNotReady) return false;
  detail::throw_cuda_error(r, "cudaStreamQuery(stream)", __FILE__, __LINE__);
}

void* Stream::native() const { return impl_->get(); }

int Stream::device() const { return impl_->device; }

// ------------------------------------------------------------------ StreamScope
StreamScope::StreamScope(const Stream& s) : device_(s.impl_->device) {
  detail::stream_boundary();  // writes made on the stream being left are enqueued there
  if (device_ != current_device()) {
    // A stream of another device: that device is current for the scope (as in PyTorch).
    int prev = current_device();
    detail::set_current_device(device_);
    prev_device_ = prev;
  }
  auto& slot = detail::current_stream_slot(device_);
  prev_ = std::move(slot);
  // The null stream is kept as an empty slot so current_stream() returns nullptr fast.
  if (s.impl_->owned) slot = s.impl_;
  else slot.reset();
}

StreamScope::~StreamScope() {
  try {
    detail::stream_boundary();  // writes made in the scope are enqueued on its stream
  } catch (...) {  // a destructor must not throw; the writes stay pending and run later
  }
  detail::current_stream_slot(device_) = std::move(prev_);
  if (prev_device_ >= 0) {
    try {
      detail::set_current_device(prev_device_);
    } catch (...) {  // a destructor must not throw; the device was valid when we left it
    }
  }
}

// ------------------------------------------------------------------ Event::Impl
cudaEvent_t Event::Impl::get_or_create(int dev) {
  cudaEvent_t h = handle.load(std::memory_order_acquire);
  if (h == nullptr) {
    std::lock_guard<std::mutex> lk(mu);
    h = handle.load(std::memory_order_acquire);
    if (h == nullptr) {
      detail::require_device();
      detail::DeviceGuard g(dev);
      CUFUSE_CUDA_CHECK(
          cudaEventCreateWithFlags(&h, timing ? cudaEventDefault : cudaEventDisableTiming));
      device = dev;
      handle.store(h, std::memory_order_release);
      return h;
    }
  }
  if (device != dev)
    throw ValueError(fmt::format("an Event created on device {} cannot be recorded on a stream of device {}",
                                 device, dev));
  return h;
}

Event::Impl::~Impl() {
  cudaEvent_t h = handle.load(std::memory_order_acquire);
  if (h != nullptr && cudaEventDestroy(h) != cudaSuccess) cudaGetLastError();
}

// ------------------------------------------------------------------ Event
Event::Event(bool timing) : impl_(std::make_shared<Impl>(timing)) {}

void Event::record(const Stream& s) {
  detail::stream_boundary();
  if (detail::host_only()) {  // the reference backend's work is done: the event completes now
    impl_->host_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now().time_since_epoch()).count(),
                         std::memory_order_release);
    return;
  }
  detail::require_device();
  int dev = s.device();
  cudaEvent_t h = impl_->get_or_create(dev);
  detail::DeviceGuard g(dev);  // the legacy stream is the current device's
  CUFUSE_CUDA_CHECK(cudaEventRecord(h, static_cast<cudaStream_t>(s.native())));
  impl_->recorded.store(true, std::memory_order_release);
}

void Event::synchronize() const {
  detail::stream_boundary();
  auto* h = static_cast<cudaEvent_t>(native_if_recorded());
  if (h == nullptr) return;
  CUFUSE_CUDA_CHECK(cudaEventSynchronize(h));
}

bool Event::query() const {
  auto* h = static_cast<cudaEvent_t>(native_if_recorded());
  if (h == nullptr) return true;
  cudaError_t r = cudaEventQuery(h);
  if (r == cudaSuccess) return true;
  if (r == cudaErrorNotReady) return false;
  detail::throw_cuda_error(r, "cudaEventQuery(event)", __FILE__, __LINE__);
}

void* Event::native() const { return impl_->get_or_create(current_device()); }

void* Event::native_if_recorded() const {
  if (!impl_->recorded.load(std::memory_order_acquire)) return nullptr;
  return impl_->handle.load(std::memory_order_acquire);
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  for (const Event* e : {&start, &end})
    if (!e->impl_->timing)
      throw ValueError("Event::elapsed_ms needs events made with timing=true (Event(true))");
  const int64_t h0 = start.impl_->host_ns.load(std::memory_order_acquire),
                h1 = end.impl_->host_ns.load(std::memory_order_acquire);
  if (h0 >= 0 && h1 >= 0 && start.native_if_recorded() == nullptr && end.native_if_recorded() == nullptr)
    return float(double(h1 - h0) / 1e6);  // both recorded on the host reference backend
  for (const Event* e : {&start, &end}) {
    if (e->native_if_recorded() == nullptr)
      throw ValueError(fmt::format("Event::elapsed_ms: the {} event was never recorded",
                                   e == &start ? "start" : "end"));
  }
  start.synchronize();
  end.synchronize();
  float ms = 0.f;
  CUFUSE_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start.native_if_recorded()),
                                         static_cast<cudaEvent_t>(end.native_if_recorded())));
  return ms;
}

}  // namespace cufuse
