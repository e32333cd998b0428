// src/compile/compiler.hpp: NVRTC to CUBIN, behind an in-memory cache (full-key compare) and a
// disk cache (src/compile/disk_cache.hpp). One compile per key even when many threads ask.
#pragma once
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
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
  // Takes `kernel`, this CUBIN's kernel loaded on `device` elsewhere (a tier hint's preload,
  // exec/hint_preload.hpp), as kernel_for's; false (not taken) where one is loaded already.
  bool adopt_loaded(int device, void* kernel) const;

 private:
  mutable std::mutex mu_;  // loading (once per device); a loaded kernel is read without it
  mutable std::array<std::atomic<void*>, 64> loaded_{};
};
using CompiledKernelPtr = std::shared_ptr<const CompiledKernel>;

// The arch kernels are built for: CUFUSE_ARCH if set, else the current device's compute
// capability, else 90 (no device).
int default_arch();

// Compiles `source` (which defines extern "C" kernel `name`) for sm_<arch>. Throws
// CompileError with the log and the path where the failing source was saved.
// Counters: kernels_compiled (successful NVRTC compiles), disk_cache_hits, and
// memory_cache_hits (which includes threads that waited for another thread's compile).
CompiledKernelPtr compile_kernel(const std::string& source, const std::string& name, int arch,
                                 const std::vector<std::string>& extra_options = {});

// The kernel compile_kernel would return, where that costs no NVRTC call: in the memory cache
// (built), else on disk (loaded now); else null, also while another thread compiles it. The
// tiered executor (exec/tiered.hpp) asks this before choosing the interpreter.
CompiledKernelPtr find_compiled_kernel(const std::string& source, const std::string& name, int arch);

// A kernel whose CUBIN and log the caller read from the disk cache under a key it compared with
// compile_key(source, name, arch) itself (a hint's entry, exec/tiered.hpp): the memory cache's
// kernel of that key if it has one built, else this one, entered there (counted as a disk hit).
// `loaded`: the CUBIN's kernel already loaded on `device` (a preload), given to the new kernel;
// *used (if given) says whether it was (else the memory cache's kernel was returned).
CompiledKernelPtr adopt_disk_kernel(const std::string& source, const std::string& name, int arch,
                                    std::vector<char> cubin, std::string log_text, int device = -1,
                                    void* loaded = nullptr, bool* used = nullptr);

// Compiles `source` for compute_<arch> to PTX only (NVRTC's front end and NVVM, no ptxas and
// no CUBIN, nothing cached on disk), to check that it compiles where no kernel will run
// (CUFUSE_REFERENCE_COMPILE=ptx): throws CompileError as compile_kernel does. Each (source,
// name, arch) once per process; not counted in kernels_compiled.
void check_kernel_source(const std::string& source, const std::string& name, int arch);

// Drops the in-memory cache (tests; the disk cache is untouched).
void clear_memory_cache();

// What ptxas -v said about one entry function.
struct PtxasInfo {
  int registers = -1;  // -1 when the log does not say
  int spill_stores = 0, spill_loads = 0;
  int stack_bytes = 0, shared_bytes = 0;
};
// Parses NVRTC's log for entry function `name` (the first entry function if `name` has no
// section of its own).
PtxasInfo parse_ptxas_info(const std::string& log, const std::string& name);

// Every option NVRTC gets for `arch`, before the caller's extra options.
std::vector<std::string> base_compile_options(int arch);
// The full key of one compile: arch, every option, name and source. The memory cache
// compares it field by field; the disk cache stores it (salted with the versions).
std::string compile_key(const std::string& source, const std::string& name, int arch,
                        const std::vector<std::string>& extra_options = {});
// The kernel name a compile key holds (its length-prefixed name field); empty if `key` is not
// one compile_key made.
std::string compile_key_name(std::string_view key);

}  // namespace cufuse::detail
