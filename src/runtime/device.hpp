// src/runtime/device.hpp: what the rest of cufuse asks of the CUDA runtime about devices,
// the thread's current device and stream, and the one error-checking macro.
#pragma once
#include <memory>
#include <string>

#include "cufuse/error.hpp"

namespace cufuse::detail {

// Throws NoDeviceError ("no CUDA device: <why>. Planning, code generation and compilation
// work without one") unless a device is usable.
void require_device();
int current_device();     // this thread's current device id
void* current_stream();   // this thread's current cudaStream_t (nullptr: legacy default)
// What keeps current_stream() alive (empty for the legacy default stream): for Storage.
std::shared_ptr<void> current_stream_owner();

// A stream boundary: the thread's current stream is about to change, or its work is waited
// for or recorded (StreamScope, Stream/Device/Event synchronize, Event::record,
// cf::synchronize). Lazy in-place writes made on the stream are enqueued there first; the
// executor installs what runs (it sits above this layer), once, at start-up.
using StreamBoundaryHook = void (*)();
void set_stream_boundary_hook(StreamBoundaryHook hook);
void stream_boundary();

struct DeviceProps {
  std::string name;
  int cc = 0;                 // 90 for sm_90
  int sm_count = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  size_t shared_per_block_optin = 0;
  size_t shared_per_sm = 0;
  size_t l2_bytes = 0;
  size_t total_mem = 0;
};
const DeviceProps& device_props(int device);  // cached, thread-safe

// Throws CudaError naming the call, the error and the file:line unless `err` is success.
[[noreturn]] void throw_cuda_error(int err, const char* call, const char* file, int line);
#define CUFUSE_CUDA_CHECK(call)                                                                 \
  do {                                                                                          \
    auto cufuse_err_ = (call);                                                                  \
    if (cufuse_err_ != 0) ::cufuse::detail::throw_cuda_error(static_cast<int>(cufuse_err_), #call, \
                                                              __FILE__, __LINE__);              \
  } while (0)

}  // namespace cufuse::detail
