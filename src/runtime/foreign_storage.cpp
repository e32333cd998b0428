// src/runtime/foreign_storage.cpp: foreign memory's Storage (see foreign_storage.hpp).
#include "runtime/foreign_storage.hpp"

#include <cuda_runtime_api.h>

#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime_internal.hpp"

namespace cufuse::detail {

std::shared_ptr<Storage> wrap_foreign_storage(void* ptr, size_t nbytes, int device, std::function<void()> release) {
  auto st = std::make_shared<Storage>();
  st->ptr = ptr;
  st->nbytes = nbytes;
  st->device = device;
  if (device >= 0) {
    DeviceGuard g(device);
    st->stream = current_stream();
    st->stream_owner = current_stream_owner();
  }
  st->release = [fn = std::move(release)](Storage& s) {
    if (!fn) return;  // nobody to tell: the memory stays where it is
    if (s.device >= 0 && s.ptr != nullptr) {
      // Kernels queued on the memory finish before the owner may free or reuse it.
      try {
        if (!s.other_streams.empty()) wait_for_stream_uses(s);
        DeviceGuard g(s.device);
        const cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(s.stream));
        if (e != cudaSuccess) {
          cudaGetLastError();
          if (e != cudaErrorCudartUnloading)
            log(LogChannel::Memory, "device {}: waiting for work on foreign memory {} failed: {}", s.device, s.ptr,
                cudaGetErrorName(e));
        }
      } catch (...) {
      }
    }
    fn();
  };
  log(LogChannel::Memory, "foreign memory: {} B at {} on device {} (-1: host)", nbytes, ptr, device);
  return st;
}

int device_of_pointer(const void* ptr) {
  if (ptr == nullptr || Device::count() == 0) return -1;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  switch (a.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged: return a.device;
    case cudaMemoryTypeHost: return current_device();
    default: return -1;
  }
}

}  // namespace cufuse::detail
