// src/runtime/env.cpp: the one place cufuse reads environment variables. The table below
// names each variable, what it accepts, its default and what it does, and parses it into
// Settings; RuntimeContext (context.cpp) runs parse_env once with getenv and prints the
// warnings. README.md's "Environment variables" table lists the same names (a CPU test,
// tests/test_env.cpp, checks both ways).
#include "runtime/env.hpp"

#include <array>
#include <charconv>
#include <cstdlib>
#include <initializer_list>
#include <utility>

#include <fmt/format.h>

#include "runtime/log.hpp"

namespace cufuse::detail {

namespace {

// A whole decimal integer in [lo, hi], nothing else (no sign, no spaces, no suffix).
std::optional<int64_t> integer_in(std::string_view v, int64_t lo, int64_t hi) {
  int64_t x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || x < lo || x > hi) return std::nullopt;
  return x;
}

// The value of the spelling `v` among `choices` into `out`; false where none is spelled so.
template <class T>
bool one_of(std::string_view v, T& out, std::initializer_list<std::pair<std::string_view, T>> choices) {
  for (const auto& [spelling, value] : choices)
    if (v == spelling) {
      out = value;
      return true;
    }
  return false;
}

// 0 or 1 into `out`.
bool zero_one(std::string_view v, bool& out) { return one_of(v, out, {{"0", false}, {"1", true}}); }

bool parse_cache_dir(std::string_view v, Settings& s) {
  s.cache_dir = std::string(v);
  return true;
}

bool parse_cache(std::string_view v, Settings& s) {
  for (std::string_view off : {"0", "off", "OFF", "false", "no"})
    if (v == off) {
      s.cache_off = std::string(v);
      return true;
    }
  for (std::string_view on : {"1", "on", "ON", "true", "yes"})
    if (v == on) return true;
  return false;
}

bool parse_log(std::string_view v, Settings& s) {
  unsigned m = 0;
  bool ok = true;
  size_t pos = 0;
  while (pos <= v.size()) {
    size_t end = v.find(',', pos);
    if (end == std::string_view::npos) end = v.size();
    auto w = v.substr(pos, end - pos);
    if (w == "all" || w == "1") m = ~0u;
    else if (w == "plan") m |= unsigned(LogChannel::Plan);
    else if (w == "compile") m |= unsigned(LogChannel::Compile);
    else if (w == "launch") m |= unsigned(LogChannel::Launch);
    else if (w == "cache") m |= unsigned(LogChannel::Cache);
    else if (w == "memory") m |= unsigned(LogChannel::Memory);
    else if (!w.empty() && w != "0") ok = false;  // an unknown word: the others still count
    pos = end + 1;
  }
  s.log_mask = m;
  return ok;
}

bool parse_dump(std::string_view v, Settings& s) {
  s.dump_kernels = std::string(v);
  return true;
}

bool parse_backend(std::string_view v, Settings& s) {
  if (v == "cuda") s.backend = Backend::Cuda;
  else if (v == "reference" || v == "host") s.backend = Backend::Reference;
  else return false;
  return true;
}

bool parse_arch(std::string_view v, Settings& s) {
  if (v.substr(0, 3) == "sm_") v.remove_prefix(3);
  else if (v.substr(0, 8) == "compute_") v.remove_prefix(8);
  if (v.empty() || v.size() > 4) return false;
  auto x = integer_in(v, 10, 9999);
  if (!x) return false;
  s.arch = static_cast<int>(*x);
  return true;
}

bool parse_graphs(std::string_view v, Settings& s) {
  return one_of(v, s.graphs, {{"0", GraphsMode::Off}, {"1", GraphsMode::Repeated}, {"all", GraphsMode::All}});
}

bool parse_cse(std::string_view v, Settings& s) { return zero_one(v, s.cse); }
bool parse_fma(std::string_view v, Settings& s) { return zero_one(v, s.fma); }
bool parse_ew_parts(std::string_view v, Settings& s) { return zero_one(v, s.ew_parts); }
bool parse_tf32(std::string_view v, Settings& s) { return zero_one(v, s.tf32); }
bool parse_dist_blocking(std::string_view v, Settings& s) { return zero_one(v, s.dist_blocking); }
bool parse_dist_peer_access(std::string_view v, Settings& s) { return zero_one(v, s.dist_peer_access); }
bool parse_dist_host_combine(std::string_view v, Settings& s) {
  auto x = integer_in(v, 0, int64_t(1) << 30);
  if (x) s.dist_host_combine = *x;
  return x.has_value();
}
bool parse_reference_compile(std::string_view v, Settings& s) {
  return one_of(v, s.reference_compile,
                {{"0", ReferenceCompile::Off}, {"1", ReferenceCompile::Cubin}, {"ptx", ReferenceCompile::Ptx}});
}
bool parse_reference_interpret(std::string_view v, Settings& s) { return zero_one(v, s.reference_interpret); }

bool parse_unroll(std::string_view v, Settings& s) {
  auto x = integer_in(v, 1, 8);
  if (x) s.ew_unroll = static_cast<int>(*x);
  return x.has_value();
}

bool parse_view_blocks(std::string_view v, Settings& s) {
  auto x = integer_in(v, 0, 8);
  if (x) s.ew_view_blocks = static_cast<int>(*x);
  return x.has_value();
}

bool parse_linalg_errors(std::string_view v, Settings& s) {
  if (v == "ignore") s.linalg_errors_ignore = true;
  else if (v == "raise") s.linalg_errors_ignore = false;
  else return false;
  return true;
}

bool parse_max_kernel_ops(std::string_view v, Settings& s) {
  auto x = integer_in(v, 1, INT64_MAX);
  if (x) s.max_kernel_ops = *x;
  return x.has_value();
}

bool parse_split_blocks(std::string_view v, Settings& s) {
  auto x = integer_in(v, 1, int64_t(1) << 20);
  if (x) s.split_blocks = *x;
  return x.has_value();
}

bool parse_select_one_pass_bytes(std::string_view v, Settings& s) {
  auto x = integer_in(v, 0, int64_t(1) << 62);
  if (x) s.select_one_pass_bytes = *x;
  return x.has_value();
}

bool parse_tiered(std::string_view v, Settings& s) {
  return one_of(v, s.tiered, {{"0", TieredMode::Off}, {"interpret", TieredMode::Interpret}, {"1", TieredMode::On}});
}

// Seconds, a decimal number > 0 and <= 1e6 (fractions allowed: tests use short timeouts).
bool parse_dist_timeout(std::string_view v, Settings& s) {
  double x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || !(x > 0) || x > 1e6) return false;
  s.dist_timeout = x;
  return true;
}

constexpr std::array kVariables = {
    EnvVar{"CUFUSE_CACHE_DIR", "a directory", "$XDG_CACHE_HOME/cufuse, else ~/.cache/cufuse",
           "disk cache of compiled kernels", parse_cache_dir},
    EnvVar{"CUFUSE_CACHE", "0, off, OFF, false, no (off) or 1, on, ON, true, yes (on)", "on",
           "whether compiled kernels are kept on disk", parse_cache},
    EnvVar{"CUFUSE_LOG", "a comma-separated list of plan, compile, launch, cache, memory, or all (1)",
           "the known words in it (no logging by default)", "log each stage to stderr", parse_log},
    EnvVar{"CUFUSE_DUMP_KERNELS", "a directory", "no dump",
           "write each new kernel's source and each new plan there", parse_dump},
    EnvVar{"CUFUSE_BACKEND", "cuda, reference or host (= reference)", "cuda",
           "each thread's starting backend: the GPU or the host reference evaluator", parse_backend},
    EnvVar{"CUFUSE_ARCH", "a compute capability as digits, e.g. 90, sm_90 or compute_90",
           "the current device's (sm_90 with none)", "compile for this arch", parse_arch},
    EnvVar{"CUFUSE_GRAPHS", "0, 1 or all", "1",
           "0: each kernel launched on its own; 1: repeated plans as one CUDA graph; all: from the first run",
           parse_graphs},
    EnvVar{"CUFUSE_CSE", "0 or 1", "1", "common-subexpression elimination within one evaluation (0 turns it off)", parse_cse},
    EnvVar{"CUFUSE_FMA", "0 or 1", "1",
           "1: float32/float64 a * b + c, a * b - c and c - a * b are built as one fused multiply-add, rounded "
           "once (as CuPy's, torch.compile's and JAX's compilers contract them); 0: rounded op by op, as NumPy "
           "does (also Config::contract_fma)",
           parse_fma},
    EnvVar{"CUFUSE_TF32", "0 or 1", "0", "float32 matmuls may use TF32", parse_tf32},
    EnvVar{"CUFUSE_EW_UNROLL", "an integer 1..8", "2",
           "vectors (or elements) per thread in the unrolled contiguous elementwise form", parse_unroll},
    EnvVar{"CUFUSE_EW_VIEW_BLOCKS", "an integer 0..8", "6",
           "blocks an SM that an elementwise kernel reading through index maps a vector at a time asks "
           "__launch_bounds__ for (0: the compiler's choice)",
           parse_view_blocks},
    EnvVar{"CUFUSE_EW_PARTS", "0 or 1", "1",
           "1: a concatenation's or stack's kernel gives each part a range of its blocks, each part's own "
           "contiguous code (codegen/elementwise_parts.hpp); 0: every element selects its part",
           parse_ew_parts},
    EnvVar{"CUFUSE_REFERENCE_COMPILE", "0, 1 or ptx", "1",
           "0: the reference backend skips compiling the kernels it plans; ptx: it compiles each to PTX only "
           "(NVRTC's front end and NVVM check the source; no ptxas, no CUBIN, nothing cached), about half "
           "the time of 1",
           parse_reference_compile},
    EnvVar{"CUFUSE_REFERENCE_INTERPRET", "0 or 1", "0",
           "1: the reference backend runs each group the bytecode interpreter takes on the interpreter's host "
           "build (the generated core the device's interpreter kernels are made of), reading earlier groups' "
           "results, as a tiered device run starts; for testing the interpreter on a CPU",
           parse_reference_interpret},
    EnvVar{"CUFUSE_LINALG_ERRORS", "raise or ignore", "raise",
           "ignore: singular / not positive definite inputs give inf/NaN instead of an error",
           parse_linalg_errors},
    EnvVar{"CUFUSE_MAX_KERNEL_OPS", "an integer >= 1", "1024",
           "the most elementwise ops and views one kernel computes before the planner cuts",
           parse_max_kernel_ops},
    EnvVar{"CUFUSE_SPLIT_BLOCKS", "an integer 1..1048576", "24 per SM (2048 with no device)",
           "blocks a reduction of few long rows is split over", parse_split_blocks},
    EnvVar{"CUFUSE_SELECT_ONE_PASS_BYTES", "a number of bytes 0..4611686018427387904", "1073741824",
           "a selection by mask (x[mask], nonzero, argwhere, flatnonzero, extract, compress) whose result could "
           "take up to this many bytes (all rows selected) runs in one pass into a buffer of that upper bound; "
           "larger ones (or 0: all) count first, then compact into a result of exactly its size",
           parse_select_one_pass_bytes},
    EnvVar{"CUFUSE_TIERED", "0, interpret or 1", "1",
           "1: a plan whose kernels are not compiled yet runs on the prebuilt interpreter while NVRTC "
           "compiles them in the background; 0: wait for the compile; interpret: the interpreter runs "
           "every group it can, never compiled nor taken from a cache", parse_tiered},
    EnvVar{"CUFUSE_DIST_TIMEOUT", "a number of seconds > 0 (fractions allowed)", "300",
           "a dist:: collective (or a rank it waits on) that takes longer fails with an error naming it",
           parse_dist_timeout},
    EnvVar{"CUFUSE_DIST_BLOCKING", "0 or 1", "0",
           "1: the single-process GPU world's NCCL communicators are blocking (a collective is launched "
           "by the calling thread; a non-blocking group is launched from NCCL's own thread, 0.1-0.4 ms "
           "later on an H200 pair); under mpirun they stay non-blocking (a dead peer cannot hang a launch)",
           parse_dist_blocking},
    EnvVar{"CUFUSE_DIST_PEER_ACCESS", "0 or 1", "1",
           "1: dist::init enables peer access between every pair of the single-process GPU world's "
           "devices that can (gathering a partial result copies the other devices' partials over "
           "NVLink); 0 leaves it off (a kernel that reads another GPU's memory then faults, for debugging)",
           parse_dist_peer_access},
    EnvVar{"CUFUSE_DIST_HOST_COMBINE", "a number of bytes 0..1073741824", "65536",
           "dist::gather of a partial result (a reduction over a sharded axis) whose blocks are at most "
           "this big reads each device's partial back and combines them on the host, then copies the "
           "result to the gathering device; larger blocks (or 0) are combined there by peer copies and "
           "a kernel",
           parse_dist_host_combine},
};

constexpr std::array kExternal = {
    ExternalEnvVar{"HOME", "the disk cache's default directory, ~/.cache/cufuse"},
    ExternalEnvVar{"XDG_CACHE_HOME", "the disk cache's default directory, $XDG_CACHE_HOME/cufuse"},
    ExternalEnvVar{"CUDA_HOME", "the toolkit headers (cuda_fp16.h) NVRTC includes, when the build's are absent"},
    ExternalEnvVar{"CUDA_PATH", "as CUDA_HOME"},
    ExternalEnvVar{"CUDA_VISIBLE_DEVICES", "quoted in the message when no device is found"},
    ExternalEnvVar{"OMPI_COMM_WORLD_SIZE", "dist::init: started by Open MPI's mpirun, one process per GPU"},
    ExternalEnvVar{"OMPI_COMM_WORLD_RANK", "dist::init under mpirun: this process's rank"},
    ExternalEnvVar{"OMPI_COMM_WORLD_LOCAL_RANK", "dist::init under mpirun: the local GPU this process takes"},
};

std::optional<std::string>* external_field(Settings& s, std::string_view name) {
  if (name == "HOME") return &s.home;
  if (name == "XDG_CACHE_HOME") return &s.xdg_cache_home;
  if (name == "CUDA_HOME") return &s.cuda_home;
  if (name == "CUDA_PATH") return &s.cuda_path;
  if (name == "CUDA_VISIBLE_DEVICES") return &s.cuda_visible_devices;
  if (name == "OMPI_COMM_WORLD_SIZE") return &s.ompi_world_size;
  if (name == "OMPI_COMM_WORLD_RANK") return &s.ompi_world_rank;
  if (name == "OMPI_COMM_WORLD_LOCAL_RANK") return &s.ompi_local_rank;
  return nullptr;
}

}  // namespace

std::span<const EnvVar> env_variables() { return kVariables; }
std::span<const ExternalEnvVar> external_env_variables() { return kExternal; }

ParsedEnv parse_env(const EnvLookup& lookup) {
  ParsedEnv out;
  for (const EnvVar& v : kVariables) {
    const char* e = lookup(std::string(v.name).c_str());
    if (e == nullptr || *e == '\0') continue;
    if (!v.parse(e, out.settings))
      out.warnings.push_back(fmt::format("cufuse: warning: {}={} is not accepted (expected {}); using {}", v.name,
                                         e, v.accepted, v.fallback));
  }
  for (const ExternalEnvVar& v : kExternal) {
    const char* e = lookup(std::string(v.name).c_str());
    if (e != nullptr)
      if (auto* f = external_field(out.settings, v.name)) *f = std::string(e);
  }
  return out;
}

ParsedEnv parse_process_env() {
  return parse_env([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace cufuse::detail
