// src/compile/nvrtc.hpp: a thin checked wrapper over NVRTC. One call compiles one source to
// CUBIN (or to PTX); every NVRTC call is checked, and the program handle never leaks. Knows nothing of
// caches: src/compile/compiler.cpp owns those.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace cufuse::detail::nvrtc {

struct Output {
  bool ok = false;          // false: NVRTC rejected the source or an option (see log)
  int status = 0;           // the nvrtcResult of nvrtcCompileProgram
  std::string status_text;  // nvrtcGetErrorString(status)
  std::vector<char> cubin;  // empty unless ok
  std::string log;          // the program log (errors, or ptxas info with -Xptxas -v)
  double ms = 0;            // wall time of create + compile + fetch
};

// Compiles `source` (named `program_name` in diagnostics) with `options`, to CUBIN (the
// options must name a real arch, sm_XX, so that a CUBIN exists). A rejected source or
// option is ok == false with the log; any other NVRTC failure (out of memory, a broken
// install) throws cufuse::InternalError naming the call.
Output compile_to_cubin(const std::string& source, const std::string& program_name,
                        const std::vector<std::string>& options);

// The same to PTX only (the options name a virtual arch, compute_XX): NVRTC's front end and
// NVVM without ptxas. Output::cubin holds the PTX text.
Output compile_to_ptx(const std::string& source, const std::string& program_name,
                      const std::vector<std::string>& options);

// Compiles an empty kernel with `options`, uncounted and thrown away: the process's first
// NVRTC compile pays NVRTC's start-up (loading its builtins), which the warm-up at process
// start (exec/startup.hpp) takes off the first real compile's path. Returns its wall time in
// ms; a failure is ignored (the real compile reports it).
double warm_up(const std::vector<std::string>& options);

// NVRTC's version as "major.minor" (read once).
const std::string& version();

// How many times this process has called nvrtcCompileProgram (tests: single flight).
uint64_t compile_calls();

}  // namespace cufuse::detail::nvrtc
