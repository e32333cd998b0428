// src/runtime/env.hpp: the environment variables cufuse reads, as one table (env.cpp), and
// the Settings they parse into. Nothing else in cufuse calls getenv: code reads
// runtime().settings() (runtime/context.hpp), a snapshot parsed once. A value a variable does
// not accept gets one warning naming the variable, the value and what it accepts, and the
// default is used.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cufuse/backend.hpp"

namespace cufuse::detail {

enum class GraphsMode : uint8_t { Off, Repeated, All };  // CUFUSE_GRAPHS=0, 1 (default), all
enum class TieredMode : uint8_t { Off, Interpret, On };  // CUFUSE_TIERED=0, interpret, 1 (default)
// CUFUSE_REFERENCE_COMPILE=0, 1 (default: CUBIN, as a device run), ptx (NVRTC to PTX only: the
// front end and NVVM check each source; no ptxas, nothing cached)
enum class ReferenceCompile : uint8_t { Off, Cubin, Ptx };

// Everything the environment says, parsed. Defaults are the values with no variable set.
struct Settings {
  // cufuse's own variables (the table in env.cpp; README.md lists the same ones).
  std::string cache_dir;            // CUFUSE_CACHE_DIR ("": XDG_CACHE_HOME or HOME decide)
  std::string cache_off;            // CUFUSE_CACHE's value when it turns the cache off, else ""
  unsigned log_mask = 0;            // CUFUSE_LOG: LogChannel bits (runtime/log.hpp)
  std::string dump_kernels;         // CUFUSE_DUMP_KERNELS ("": no dump)
  Backend backend = Backend::Cuda;  // CUFUSE_BACKEND: each thread's starting backend
  int arch = 0;                     // CUFUSE_ARCH (0: the current device's, 90 with none)
  GraphsMode graphs = GraphsMode::Repeated;  // CUFUSE_GRAPHS
  bool cse = true;                  // CUFUSE_CSE (0 turns it off)
  bool fma = true;                  // CUFUSE_FMA: float a * b + c as one fused multiply-add
  bool tf32 = false;                // CUFUSE_TF32
  int ew_unroll = 2;                // CUFUSE_EW_UNROLL
  int ew_view_blocks = 6;           // CUFUSE_EW_VIEW_BLOCKS (0: the compiler's choice)
  bool ew_parts = true;             // CUFUSE_EW_PARTS (0: no block-partitioned joins)
  ReferenceCompile reference_compile = ReferenceCompile::Cubin;  // CUFUSE_REFERENCE_COMPILE
  bool reference_interpret = false; // CUFUSE_REFERENCE_INTERPRET
  bool linalg_errors_ignore = false;  // CUFUSE_LINALG_ERRORS=ignore
  int64_t max_kernel_ops = 0;       // CUFUSE_MAX_KERNEL_OPS (0: the planner's default)
  int64_t split_blocks = 0;         // CUFUSE_SPLIT_BLOCKS (0: per SM of the device)
  int64_t select_one_pass_bytes = int64_t(1) << 30;  // CUFUSE_SELECT_ONE_PASS_BYTES: largest one-pass buffer
  TieredMode tiered = TieredMode::On;  // CUFUSE_TIERED
  double dist_timeout = 300.0;      // CUFUSE_DIST_TIMEOUT: seconds a dist:: collective may take
  bool dist_blocking = false;       // CUFUSE_DIST_BLOCKING: blocking NCCL communicators (one process)
  bool dist_peer_access = true;     // CUFUSE_DIST_PEER_ACCESS: peer access between the world's GPUs
  int64_t dist_host_combine = 65536;  // CUFUSE_DIST_HOST_COMBINE: bytes a gathered partial block combines on the host

  // Other programs' variables cufuse consults, as they are (no validation, nullopt: unset).
  std::optional<std::string> home, xdg_cache_home, cuda_home, cuda_path, cuda_visible_devices;
  // Open MPI's process placement (mpirun): dist::init starts one process per GPU under it.
  std::optional<std::string> ompi_world_size, ompi_world_rank, ompi_local_rank;

  uint64_t generation = 0;  // which parse this is (RuntimeContext::reload_settings counts)
};

// One variable: its name, what it accepts and its default (both in words, as the warning and
// README.md say them), one line of documentation, and its parser. `parse` returns false for a
// value it does not accept; it may still keep the parts it understood (CUFUSE_LOG's known
// words), otherwise it leaves `s` as it was, the default.
struct EnvVar {
  std::string_view name;
  std::string_view accepted;
  std::string_view fallback;
  std::string_view doc;
  bool (*parse)(std::string_view value, Settings& s);
};

// cufuse's variables, in README order.
std::span<const EnvVar> env_variables();
// Other programs' variables cufuse reads (HOME, XDG_CACHE_HOME, CUDA_HOME, CUDA_PATH,
// CUDA_VISIBLE_DEVICES): name and why. Taken as they are; README.md mentions them in prose.
struct ExternalEnvVar {
  std::string_view name;
  std::string_view why;
};
std::span<const ExternalEnvVar> external_env_variables();

// Looks a name up: getenv for the process, a map in tests. nullptr: unset.
using EnvLookup = std::function<const char*(const char* name)>;

struct ParsedEnv {
  Settings settings;
  std::vector<std::string> warnings;  // one per variable with a value it does not accept
};
// Parses every variable of both tables through `lookup`. An empty value counts as unset.
ParsedEnv parse_env(const EnvLookup& lookup);
// parse_env over this process's environment (std::getenv): cufuse's only getenv.
ParsedEnv parse_process_env();

}  // namespace cufuse::detail
