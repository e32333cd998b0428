// src/fuse/devices.cpp: moving arrays between devices (Array::to_device). Every array lives on
// one device; an op mixing devices throws (core/node_device.hpp check_same_device), and this is
// how a user moves data instead: a peer copy on the destination device's current stream,
// ordered after the source's pending work, with the source kept from the pool until the
// copy is done (cross-stream use recorded on its Storage).
#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "core/node.hpp"
#include "cufuse/array.hpp"
#include "cufuse/creation.hpp"
#include "exec/binding.hpp"
#include "runtime/device.hpp"
#include "runtime/runtime_internal.hpp"
#include "runtime/storage.hpp"
#include "runtime/transfer.hpp"

namespace cufuse {

Array Array::to_device(int device) const {
  if (!defined()) throw ValueError("to_device: the Array handle is empty (default-constructed)");
  detail::check_device_id(device);
  Array src = *this;
  src.eval();
  if (!src.node()->layout.is_contiguous()) src = src.copy().eval();  // one dense block to copy
  const detail::NodePtr n = src.node();
  const detail::Storage& st = *n->storage;
  if (st.device == device) return *this;
  const size_t nbytes = static_cast<size_t>(src.nbytes());
  const char* from = static_cast<const char*>(st.ptr) + n->layout.offset * src.itemsize();
  if (st.on_host()) {  // reference-backend memory: a host -> device copy
    detail::DeviceGuard on(device);
    auto dst = detail::allocate_device(nbytes);
    detail::copy_from_host(dst->ptr, from, nbytes, detail::current_stream());
    return Array(detail::make_buffer(n->dtype, detail::contiguous_layout(n->shape()), std::move(dst)));
  }
  // What made the source may still run on its device: on the stream its block is ordered
  // on, or this thread's current stream there. The copy waits for both.
  cudaEvent_t made[2] = {nullptr, nullptr};
  {
    detail::DeviceGuard on(st.device);
    void* streams[2] = {st.stream, detail::current_stream()};
    for (int i = 0; i < 2; ++i) {
      if (i == 1 && streams[1] == streams[0]) break;
      CUFUSE_CUDA_CHECK(cudaEventCreateWithFlags(&made[i], cudaEventDisableTiming));
      CUFUSE_CUDA_CHECK(cudaEventRecord(made[i], static_cast<cudaStream_t>(streams[i])));
    }
  }
  std::shared_ptr<detail::Storage> dst;
  {
    detail::DeviceGuard on(device);
    void* stream = detail::current_stream();
    dst = detail::allocate_device(nbytes);
    for (auto& ev : made)
      if (ev) CUFUSE_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), ev, 0));
    if (nbytes)
      CUFUSE_CUDA_CHECK(cudaMemcpyPeerAsync(dst->ptr, device, from, st.device, nbytes, static_cast<cudaStream_t>(stream)));
    detail::note_stream_use(*n->storage, stream, device);  // the source is not reused before the copy ran
  }
  {  // the events belong to the source's device (released once they complete)
    detail::DeviceGuard on(st.device);
    for (auto& ev : made)
      if (ev && cudaEventDestroy(ev) != cudaSuccess) cudaGetLastError();
  }
  return Array(detail::make_buffer(n->dtype, detail::contiguous_layout(n->shape()), std::move(dst)));
}

}  // namespace cufuse
