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

LoadedKernel load_kernel_library(const std::vector<char>& cubin, const std::string& name, int device) {
  check_device_id(device);  // throws NoDeviceError without a device
  if (cubin.empty()) throw ValueError(fmt::format("load_kernel({}): empty CUBIN", name));
  DeviceGuard g(device);
  cudaLibrary_t lib = nullptr;
  // No cudaLibraryBinaryIsPreserved option: the runtime keeps its own copy of the image.
  CUFUSE_CUDA_CHECK(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t k = nullptr;
  cudaError_t e = cudaLibraryGetKernel(&k, lib, name.c_str());
  if (e != cudaSuccess) {
    cudaLibraryUnload(lib);
    auto call = fmt::format("cudaLibraryGetKernel(\"{}\")", name);
    throw_cuda_error(e, call.c_str(), __FILE__, __LINE__);
  }
  // With lazy module loading the image reaches the device only at first use; ask for the
  // attributes now so that a CUBIN the device cannot run fails here, named, not at launch.
  cudaFuncAttributes a{};
  e = cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(k));
  if (e != cudaSuccess) {
    cudaLibraryUnload(lib);
    auto call = fmt::format("cudaFuncGetAttributes(\"{}\") on device {}", name, device);
    throw_cuda_error(e, call.c_str(), __FILE__, __LINE__);
  }
  // The library stays loaded for the life of the process (callers cache the kernel handle),
  // unless the caller drops it unused (unload_library).
  log(LogChannel::Launch,
      "loaded {} on device {}: {} registers, {} B static shared, {} B local, max {} threads/block",
      name, device, a.numRegs, a.sharedSizeBytes, a.localSizeBytes, a.maxThreadsPerBlock);
  return {reinterpret_cast<void*>(k), static_cast<void*>(lib)};
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
