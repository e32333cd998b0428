// src/runtime/launch.cpp: loading CUBINs as context-independent libraries
// (cudaLibraryLoadData + cudaLibraryGetKernel) and launching a cudaKernel_t whose only
// parameter is one struct passed by value. launch_kernel is on the hot path: one
// cuLaunchKernel (the driver's entry point, taken once through the runtime, so nothing links
// libcuda; the driver launches a CUkernel in the current context, a few hundred ns cheaper
// per launch than cudaLaunchKernel's own lookup) and a check of its return value.
#include "runtime/launch.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime_internal.hpp"

namespace cufuse::detail {

namespace {

const char* kernel_name(void* kernel) {
  const char* name = nullptr;
  if (cudaFuncGetName(&name, kernel) != cudaSuccess || name == nullptr) {
    cudaGetLastError();
    return "<unknown kernel>";
  }
  return name;
}

[[noreturn, gnu::noinline, gnu::cold]] void launch_failed(cudaError_t e, void* kernel,
                                                          const LaunchDims& d, void* stream) {
  auto call = fmt::format("launch of {}, grid ({},{},{}), block ({},{},{}), {} B shared, stream {})",
                          kernel_name(kernel), d.grid[0], d.grid[1], d.grid[2], d.block[0],
                          d.block[1], d.block[2], d.shared_bytes, stream);
  throw_cuda_error(e, call.c_str(), __FILE__, __LINE__);
}

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);

// cuLaunchKernel from the driver, or null (then cudaLaunchKernel serves).
LaunchFn driver_launch() {
  static const auto fn = reinterpret_cast<LaunchFn>(driver_entry_point("cuLaunchKernel"));
  return fn;
}

}  // namespace

void* driver_entry_point(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}

void* load_kernel(const std::vector<char>& cubin, const std::string& name, int device) {
  return load_kernel_library(cubin, name, device).kernel;
}

void unload_library(void* library) noexcept {
  if (library != nullptr && cudaLibraryUnload(static_cast<cudaLibrary_t>(library)) != cudaSuccess) cudaGetLastError();
}

namespace {
// cudaLibraryGetKernel of `name`, its attributes asked for at once: with lazy module loading
// the image reaches the device only at first use, so a CUBIN the device cannot run fails here,
// named, not at launch. Unloads `lib` and throws on failure.
void* library_kernel(cudaLibrary_t lib, const char* name, int device) {
  cudaKernel_t k = nullptr;
  cudaError_t e = cudaLibraryGetKernel(&k, lib, name);
  if (e != cudaSuccess) {
    cudaLibraryUnload(lib);
    auto call = fmt::format("cudaLibraryGetKernel(\"{}\")", name);
    throw_cuda_error(e, call.c_str(), __FILE__, __LINE__);
  }
  cudaFuncAttributes a{};
  e = cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(k));
  if (e != cudaSuccess) {
    cudaLibraryUnload(lib);
    auto call = fmt::format("cudaFuncGetAttributes(\"{}\") on device {}", name, device);
    throw_cuda_error(e, call.c_str(), __FILE__, __LINE__);
  }
  log(LogChannel::Launch,
      "loaded {} on device {}: {} registers, {} B static shared, {} B local, max {} threads/block",
      name, device, a.numRegs, a.sharedSizeBytes, a.localSizeBytes, a.maxThreadsPerBlock);
  return reinterpret_cast<void*>(k);
}

cudaLibrary_t load_library(const void* image, size_t size, const char* what) {
  if (image == nullptr || size == 0) throw ValueError(fmt::format("load_kernel({}): empty CUBIN", what));
  cudaLibrary_t lib = nullptr;
  // No cudaLibraryBinaryIsPreserved option: the runtime keeps its own copy of the image.
  CUFUSE_CUDA_CHECK(cudaLibraryLoadData(&lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0));
  return lib;
}
}  // namespace

// The library stays loaded for the life of the process (callers cache the kernel handle),
// unless the caller drops it unused (unload_library).
LoadedKernel load_kernel_library(const std::vector<char>& cubin, const std::string& name, int device) {
  check_device_id(device);  // throws NoDeviceError without a device
  DeviceGuard g(device);
  cudaLibrary_t lib = load_library(cubin.data(), cubin.size(), name.c_str());
  void* k = library_kernel(lib, name.c_str(), device);
  return {k, static_cast<void*>(lib)};
}

std::vector<void*> load_library_kernels(const void* image, size_t size, const std::vector<const char*>& names,
                                        int device) {
  check_device_id(device);
  DeviceGuard g(device);
  cudaLibrary_t lib = load_library(image, size, names.empty() ? "" : names.front());
  std::vector<void*> out;
  for (const char* n : names) out.push_back(library_kernel(lib, n, device));
  return out;
}

void set_max_dynamic_shared(void* kernel, int device, unsigned bytes) {
  check_device_id(device);
  CUFUSE_CUDA_CHECK(cudaKernelSetAttributeForDevice(static_cast<cudaKernel_t>(kernel),
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    static_cast<int>(bytes), device));
}

void launch_kernel(void* kernel, const LaunchDims& d, void* params, void* stream) {
  void* args[1] = {params};
  // A cudaKernel_t is a CUkernel, which cuLaunchKernel takes in place of a CUfunction. The
  // runtime's launch serves where the driver's entry point is missing, and where this thread
  // has no current context yet (the runtime makes one current; later launches go fast). The
  // runtime's error codes share the driver's numbers for everything a launch returns.
  const LaunchFn launch = driver_launch();
  const CUresult r = launch ? launch(reinterpret_cast<CUfunction>(kernel), d.grid[0], d.grid[1], d.grid[2], d.block[0],
                                     d.block[1], d.block[2], d.shared_bytes, static_cast<CUstream>(stream), args, nullptr)
                            : CUDA_ERROR_INVALID_CONTEXT;
  if (r != CUDA_SUCCESS) [[unlikely]] {
    const cudaError_t e = r != CUDA_ERROR_INVALID_CONTEXT
                              ? static_cast<cudaError_t>(r)
                              : cudaLaunchKernel(kernel, dim3(d.grid[0], d.grid[1], d.grid[2]),
                                                 dim3(d.block[0], d.block[1], d.block[2]), args, d.shared_bytes,
                                                 static_cast<cudaStream_t>(stream));
    if (e != cudaSuccess) launch_failed(e, kernel, d, stream);
  }
  if (log_enabled(LogChannel::Launch)) [[unlikely]]
    log_write(LogChannel::Launch,
              fmt::format("{} grid ({},{},{}) block ({},{},{}) shared {} B stream {}", kernel_name(kernel),
                          d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1], d.block[2],
                          d.shared_bytes, stream));
}

}  // namespace cufuse::detail
