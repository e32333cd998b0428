// src/runtime/launch.hpp: loading CUBINs and launching kernels whose only parameter is
// one struct passed by value (every generated kernel has that signature).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace cufuse::detail {

struct LaunchDims {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
};

// A driver function (its CUDA 12.0 signature) taken through the runtime, so that nothing links
// libcuda; null where the driver lacks it. Callers look it up once and keep it.
void* driver_entry_point(const char* name);
// cudaLibraryLoadData + cudaLibraryGetKernel on `device`; returns the cudaKernel_t. The
// library stays loaded for the life of the process (callers cache the handle).
void* load_kernel(const std::vector<char>& cubin, const std::string& name, int device);
// load_kernel's kernel with its library (cudaLibrary_t), for a caller that may drop it
// (a tier hint's kernel loaded before its key is checked, exec/hint_preload.hpp).
struct LoadedKernel {
  void* kernel = nullptr;
  void* library = nullptr;
};
LoadedKernel load_kernel_library(const std::vector<char>& cubin, const std::string& name, int device);
// One library for several kernels: cudaLibraryLoadData of `image` (a CUBIN, or PTX ending
// with its NUL; not copied first) once on `device`, then each of `names`, checked as
// load_kernel checks one. The interpreter's image holds its three kernels: one load, not three.
std::vector<void*> load_library_kernels(const void* image, size_t size, const std::vector<const char*>& names,
                                        int device);
// cudaLibraryUnload of a library no kernel handle of which is in use (errors are ignored).
void unload_library(void* library) noexcept;
// Raises the kernel's dynamic shared memory limit where a launch needs more than 48 KiB.
void set_max_dynamic_shared(void* kernel, int device, unsigned bytes);
// Launches kernel(params) on `stream`; params points at the kernel's parameter struct.
void launch_kernel(void* kernel, const LaunchDims& dims, void* params, void* stream);

}  // namespace cufuse::detail
