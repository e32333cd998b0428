// src/runtime/device.cpp: whether there is a device and why not, the thread's current
// device and current streams (thread_local bookkeeping, read on every launch without a
// CUDA call), cached device properties, and the CUDA error -> cufuse::Error mapping.
#include "runtime/device.hpp"

#include <cuda_runtime_api.h>

#include <atomic>

#include <cstdlib>
#include <mutex>
#include <string_view>

#include <fmt/format.h>

#include "cufuse/backend.hpp"
#include "runtime/context.hpp"
#include "runtime/first_use.hpp"
#include "runtime/runtime_internal.hpp"

namespace cufuse::detail {

namespace {

struct Availability {
  int count = 0;
  std::string reason;  // "" when count > 0
};

Availability probe() {
  Availability a;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();  // the failed probe must not surface in someone's later check
    a.reason = fmt::format("cudaGetDeviceCount failed with {}: {}", cudaGetErrorName(e),
                           cudaGetErrorString(e));
    if (e == cudaErrorInsufficientDriver)
      a.reason += ". The NVIDIA driver is missing or older than this CUDA runtime";
    else if (e == cudaErrorNoDevice)
      a.reason += ". No NVIDIA GPU is visible to this process";
  } else if (n <= 0) {
    a.reason = "cudaGetDeviceCount found 0 devices";
  } else {
    a.count = n;
  }
  if (a.count == 0) {
    if (const auto& v = settings().cuda_visible_devices)
      a.reason += fmt::format("; CUDA_VISIBLE_DEVICES=\"{}\"", *v);
  }
  return a;
}

const Availability& availability() {
  static const Availability a = probe();  // first use, never at static initialization
  return a;
}

// The thread's current device (-1: not read yet) and its current stream on each device.
struct ThreadState {
  int device = -1;
  std::shared_ptr<Stream::Impl> streams[kMaxDevices];
};
thread_local ThreadState tls;

struct PropsSlot {
  std::once_flag once;
  DeviceProps props;
};
// Process state (runtime/context.hpp): each device's properties, and the stream-boundary
// hook, set once at start-up by the executor (exec/executor.cpp) and read at every boundary.
struct Devices {
  static constexpr StateSlot kSlot = StateSlot::Devices;
  PropsSlot props[kMaxDevices];
  std::atomic<StreamBoundaryHook> stream_boundary{nullptr};
  std::atomic<FirstDeviceUseHook> first_use{nullptr};  // runtime/first_use.hpp
  std::atomic<bool> first_used{false};
};

[[gnu::noinline]] int init_thread_device() {
  int d = 0;
  if (availability().count > 0) {
    // Respect a cudaSetDevice the program made on this thread before using cufuse.
    if (cudaGetDevice(&d) != cudaSuccess) {
      cudaGetLastError();
      d = 0;
    }
    if (d < 0 || d >= kMaxDevices) d = 0;
  }
  tls.device = d;
  if (availability().count > 0) {
    Devices& ds = runtime().state<Devices>();
    if (!ds.first_used.load(std::memory_order_relaxed) && !ds.first_used.exchange(true))
      if (FirstDeviceUseHook h = ds.first_use.load()) h(d);
  }
  return d;
}

const char* short_path(const char* file) {
  // Keep the repository-relative part of __FILE__ (src/..., codegen/..., tests/...).
  std::string_view f(file);
  for (std::string_view dir : {"/src/", "/codegen/", "/tests/", "/include/"}) {
    auto p = f.rfind(dir);
    if (p != std::string_view::npos) return file + p + 1;
  }
  return file;
}

}  // namespace

std::string no_device_message(const std::string& why) {
  return fmt::format(
      "no CUDA device: {}. Planning, code generation and NVRTC compilation still work "
      "without one; running kernels and allocating device memory need a GPU. To run on the host "
      "instead, set CUFUSE_BACKEND=reference (or use cufuse::BackendScope(cufuse::Backend::Reference))",
      why);
}

void require_device() {
  const Availability& a = availability();
  if (a.count <= 0) [[unlikely]]
    throw NoDeviceError(no_device_message(a.reason));
}

int current_device() {
  int d = tls.device;
  if (d >= 0) [[likely]]
    return d;
  return init_thread_device();
}

void* current_stream() {
  Stream::Impl* s = tls.streams[current_device()].get();
  return s != nullptr ? s->get() : nullptr;
}

std::shared_ptr<void> current_stream_owner() { return tls.streams[current_device()]; }

std::shared_ptr<Stream::Impl>& current_stream_slot(int device) { return tls.streams[device]; }

void check_device_id(int device) {
  require_device();
  int n = availability().count;
  if (device < 0 || device >= n)
    throw IndexError(fmt::format("CUDA device {} does not exist: this machine has {} device{} (0..{})",
                                 device, n, n == 1 ? "" : "s", n - 1));
  if (device >= kMaxDevices)
    throw NotSupportedError(
        fmt::format("CUDA device {}: cufuse supports device ids below {}", device, kMaxDevices));
}

void set_current_device(int device) {
  check_device_id(device);
  CUFUSE_CUDA_CHECK(cudaSetDevice(device));
  tls.device = device;
}

DeviceGuard::DeviceGuard(int device) {
  if (device < 0) return;
  int cur = current_device();
  if (device == cur) return;
  set_current_device(device);
  prev_ = cur;
}

DeviceGuard::~DeviceGuard() {
  if (prev_ < 0) return;
  tls.device = prev_;
  if (cudaSetDevice(prev_) != cudaSuccess) cudaGetLastError();
}

const DeviceProps& device_props(int device) {
  check_device_id(device);
  PropsSlot& s = runtime().state<Devices>().props[device];
  std::call_once(s.once, [&] {
    DeviceProps p;
    auto attr = [&](cudaDeviceAttr a) {
      int v = 0;
      CUFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
      return v;
    };
    p.cc = attr(cudaDevAttrComputeCapabilityMajor) * 10 + attr(cudaDevAttrComputeCapabilityMinor);
    p.sm_count = attr(cudaDevAttrMultiProcessorCount);
    p.max_threads_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor);
    p.max_blocks_per_sm = attr(cudaDevAttrMaxBlocksPerMultiprocessor);
    p.shared_per_block_optin = size_t(attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
    p.shared_per_sm = size_t(attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
    p.l2_bytes = size_t(attr(cudaDevAttrL2CacheSize));
    cudaDeviceProp prop{};
    CUFUSE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    p.name = prop.name;
    p.total_mem = prop.totalGlobalMem;
    s.props = std::move(p);
  });  // a throw leaves the flag unset: the next call tries again
  return s.props;
}

[[noreturn]] void throw_cuda_error(int err, const char* call, const char* file, int line) {
  auto e = static_cast<cudaError_t>(err);
  cudaGetLastError();  // clear the non-sticky error state this failure left behind
  std::string what = fmt::format("{} failed with {}: {} [{}:{}]", call, cudaGetErrorName(e),
                                 cudaGetErrorString(e), short_path(file), line);
  switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorStubLibrary:  // the toolkit's stub libcuda.so on the library path, no driver
      throw NoDeviceError(no_device_message(what));
    case cudaErrorMemoryAllocation:
      throw OutOfMemoryError("out of memory: " + what);
    default:
      throw CudaError("CUDA error: " + what);
  }
}

std::string format_bytes(size_t n) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024) return fmt::format("{} B", n);
  double v = double(n);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  // Three significant digits; a value that rounds up to 1024 moves to the next unit.
  if (v >= 999.5 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  if (v >= 99.95) return fmt::format("{:.0f} {}", v, units[u]);
  if (v >= 9.995) return fmt::format("{:.1f} {}", v, units[u]);
  return fmt::format("{:.2f} {}", v, units[u]);
}

}  // namespace cufuse::detail

// ------------------------------------------------------------------ public Device API
namespace cufuse {

Device::Device() : id_(detail::current_device()) {}
Device::Device(int id) : id_(id) {}

int Device::count() {
  try {
    return detail::availability().count;
  } catch (...) {  // only std::bad_alloc could get here; count() never throws
    return 0;
  }
}

std::string Device::unavailable_reason() { return detail::availability().reason; }

Device Device::current() { return Device(detail::current_device()); }

void Device::use() const { detail::set_current_device(id_); }

void Device::synchronize() const {
  detail::stream_boundary();
  if (detail::host_only()) return;  // the reference backend's work is done when it returns
  detail::DeviceGuard g(id_);
  CUFUSE_CUDA_CHECK(cudaDeviceSynchronize());
}

std::string Device::name() const { return detail::device_props(id_).name; }
int Device::compute_capability() const { return detail::device_props(id_).cc; }
int Device::multiprocessor_count() const { return detail::device_props(id_).sm_count; }

DeviceScope::DeviceScope(const Device& d) : prev_(detail::current_device()) { d.use(); }

DeviceScope::~DeviceScope() {
  if (detail::current_device() == prev_) return;
  detail::tls.device = prev_;
  if (cudaSetDevice(prev_) != cudaSuccess) cudaGetLastError();
}

namespace detail {
void set_first_device_use_hook(FirstDeviceUseHook hook) { runtime().state<Devices>().first_use.store(hook); }

void set_stream_boundary_hook(StreamBoundaryHook hook) { runtime().state<Devices>().stream_boundary.store(hook); }
void stream_boundary() {
  if (StreamBoundaryHook h = runtime().state<Devices>().stream_boundary.load(std::memory_order_acquire)) h();
}
}  // namespace detail

namespace detail {
bool host_only() { return current_backend() == Backend::Reference && availability().count <= 0; }
}  // namespace detail

void synchronize() {
  detail::stream_boundary();
  if (detail::host_only()) return;  // nothing runs asynchronously on the host reference backend
  detail::require_device();
  CUFUSE_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace cufuse
