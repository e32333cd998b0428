// src/io/pinned.cpp: PinnedBuffer (cufuse/pinned.hpp) and the asynchronous copies between
// it and arrays. A buffer's block comes from the runtime's pinned pool; an event recorded
// after each copy on it tells ready()/synchronize() and the pool when the block is free again.
// Copies issued on different streams are chained (each waits for the one before), so the
// last event covers them all.
#include "cufuse/pinned.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "cufuse/backend.hpp"
#include "exec/binding.hpp"
#include "graph/realize.hpp"
#include "core/node.hpp"
#include "runtime/device.hpp"
#include "runtime/pinned_pool.hpp"
#include "runtime/storage.hpp"

namespace cufuse {

struct PinnedBuffer::Impl {
  detail::PinnedBlock block;
  DType dtype = DType::Float64;
  Shape shape;
  size_t nbytes = 0;
  std::mutex mu;
  cudaEvent_t event = nullptr;  // recorded after the last copy on the buffer
  int event_device = -1;
  void* event_stream = nullptr;

  ~Impl() { detail::pinned_release(block, event); }

  // Called with mu held, `device` current: the new copy on `stream` waits for the earlier ones.
  void before_copy(void* stream, int device) {
    if (event == nullptr) return;
    if (event_device != device) {
      CUFUSE_CUDA_CHECK(cudaEventSynchronize(event));
      CUFUSE_CUDA_CHECK(cudaEventDestroy(event));
      event = nullptr;
    } else if (event_stream != stream) {
      CUFUSE_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), event, 0));
    }
  }
  void after_copy(void* stream, int device) {
    if (event == nullptr) {
      CUFUSE_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
      event_device = device;
    }
    CUFUSE_CUDA_CHECK(cudaEventRecord(event, static_cast<cudaStream_t>(stream)));
    event_stream = stream;
  }
};

PinnedBuffer::PinnedBuffer(const Shape& shape, DType dtype) {
  for (auto d : shape)
    if (d < 0) throw ValueError(fmt::format("empty_pinned: negative dimensions are not allowed (shape {})", to_string(shape)));
  auto impl = std::make_shared<Impl>();
  impl->dtype = dtype;
  impl->shape = shape;
  impl->nbytes = static_cast<size_t>(numel(shape) * itemsize(dtype));
  impl->block = detail::pinned_acquire(impl->nbytes);
  impl_ = std::move(impl);
}

static const PinnedBuffer::Impl& need(const std::shared_ptr<PinnedBuffer::Impl>& i, const char* what) {
  if (!i) throw ValueError(fmt::format("PinnedBuffer::{}: the buffer is empty (default-constructed)", what));
  return *i;
}

void* PinnedBuffer::data() { return need(impl_, "data").block.ptr; }
const void* PinnedBuffer::data() const { return need(impl_, "data").block.ptr; }
DType PinnedBuffer::dtype() const { return need(impl_, "dtype").dtype; }
const Shape& PinnedBuffer::shape() const { return need(impl_, "shape").shape; }
int64_t PinnedBuffer::size() const { return numel(shape()); }
size_t PinnedBuffer::nbytes() const { return need(impl_, "nbytes").nbytes; }
bool PinnedBuffer::is_pinned() const { return need(impl_, "is_pinned").block.pinned; }

bool PinnedBuffer::ready() const {
  need(impl_, "ready");
  std::lock_guard<std::mutex> lk(impl_->mu);
  if (impl_->event == nullptr) return true;
  const cudaError_t e = cudaEventQuery(impl_->event);
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  CUFUSE_CUDA_CHECK(e);
  return true;
}

void PinnedBuffer::synchronize() const {
  need(impl_, "synchronize");
  std::lock_guard<std::mutex> lk(impl_->mu);
  if (impl_->event) CUFUSE_CUDA_CHECK(cudaEventSynchronize(impl_->event));
}

void PinnedBuffer::check_type(DType t) const {
  if (t != dtype())
    throw TypeError(fmt::format("PinnedBuffer::data_as<{}>: the buffer holds {}", name(t), name(dtype())));
}

PinnedBuffer empty_pinned(const Shape& shape, DType dtype) { return PinnedBuffer(shape, dtype); }

PinnedBuffer zeros_pinned(const Shape& shape, DType dtype) {
  PinnedBuffer b(shape, dtype);
  if (b.nbytes()) std::memset(b.data(), 0, b.nbytes());
  return b;
}

Array from_host(const PinnedBuffer& src) {
  const auto& impl = need(src.impl(), "from_host");
  const size_t n = impl.nbytes;
  if (current_backend() == Backend::Reference) {
    src.synchronize();
    auto st = detail::allocate_host(n);
    if (n) std::memcpy(st->ptr, impl.block.ptr, n);
    return Array(detail::make_buffer(impl.dtype, detail::contiguous_layout(impl.shape), std::move(st)));
  }
  auto st = detail::allocate_device(n);
  if (n) {
    void* stream = detail::current_stream();
    const int device = detail::current_device();
    auto& m = *src.impl();
    std::lock_guard<std::mutex> lk(m.mu);
    m.before_copy(stream, device);
    CUFUSE_CUDA_CHECK(cudaMemcpyAsync(st->ptr, m.block.ptr, n, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream)));
    m.after_copy(stream, device);
  }
  return Array(detail::make_buffer(impl.dtype, detail::contiguous_layout(impl.shape), std::move(st)));
}

void Array::copy_to_host(const PinnedBuffer& dst) const {
  require_defined("copy_to_host");
  const auto& impl = need(dst.impl(), "copy_to_host");
  if (impl.dtype != dtype())
    throw TypeError(fmt::format("copy_to_host: the array is {}, the pinned buffer {}", name(dtype()), name(impl.dtype)));
  if (numel(impl.shape) != size())
    throw ValueError(fmt::format("copy_to_host: the array {} has {} elements, the pinned buffer {} has {}",
                                 to_string(shape()), size(), to_string(impl.shape), numel(impl.shape)));
  if (impl.nbytes == 0) return;
  eval();
  detail::NodePtr leaf = node();  // carries out a pending write into this memory by another handle
  if (leaf->storage->on_host()) {
    dst.synchronize();
    copy_to_host(impl.block.ptr, impl.nbytes);
    return;
  }
  detail::DeviceGuard on(leaf->storage->device);
  if (!leaf->layout.is_contiguous()) {
    auto tmp = detail::make_buffer(leaf->dtype, detail::contiguous_layout(leaf->shape()),
                                   detail::allocate_device(impl.nbytes));
    detail::write_into(tmp, leaf);
    leaf = tmp;
  }
  void* stream = detail::current_stream();
  const int device = leaf->storage->device;
  const char* src = static_cast<const char*>(leaf->storage->ptr) + leaf->layout.offset * itemsize();
  auto& m = *dst.impl();
  std::lock_guard<std::mutex> lk(m.mu);
  m.before_copy(stream, device);
  CUFUSE_CUDA_CHECK(cudaMemcpyAsync(m.block.ptr, src, impl.nbytes, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)));
  m.after_copy(stream, device);
  detail::note_stream_use(*leaf->storage, stream, device);
}

}  // namespace cufuse
