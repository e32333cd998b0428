// codegen/compiler.hpp: NVRTC to CUBIN, behind an in-memory cache (full-key compare) and a
// disk cache (codegen/disk_cache.hpp). One compile per key even when many threads ask.
#pragma once
#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cufuse::detail {

struct CompiledKernel {
  std::string name;          // the kernel's extern "C" name
  std::string source;        // the full CUDA source compiled
  int arch = 0;              // 90 for sm_90
  std::vector<char> cubin;
  double compile_ms = 0;     // NVRTC time (0 when loaded from disk)
  bool from_disk = false;
  int registers = -1;        // from ptxas -v, -1 when unknown
  int spill_stores = 0, spill_loads = 0;
  int stack_bytes = 0, shared_bytes = 0;
  std::string log;           // NVRTC's log (ptxas info lines)

  // The loaded cudaKernel_t for a device, loaded on first use (thread-safe).
  void* kernel_for(int device) const;

 private:
  mutable std::mutex mu_;
  mutable std::array<void*, 64> loaded_{};
};
using CompiledKernelPtr = std::shared_ptr<const CompiledKernel>;

// The arch kernels are built for: CUFUSE_ARCH if set, else the current device's compute
// capability, else 90 (no device).
int default_arch();

// Compiles `source` (which defines extern "C" kernel `name`) for sm_<arch>. Throws
// CompileError with the log and the path where the failing source was saved.
CompiledKernelPtr compile_kernel(const std::string& source, const std::string& name, int arch,
                                 const std::vector<std::string>& extra_options = {});

// Drops the in-memory cache (tests; the disk cache is untouched).
void clear_memory_cache();

}  // namespace cufuse::detail
