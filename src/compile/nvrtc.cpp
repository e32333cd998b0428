// src/compile/nvrtc.cpp: the checked NVRTC wrapper (see nvrtc.hpp). Every NVRTC call goes
// through CUFUSE_NVRTC_CHECK except nvrtcCompileProgram, whose failure is a result.
#include "compile/nvrtc.hpp"

#include <nvrtc.h>

#include <chrono>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "runtime/context.hpp"

namespace cufuse::detail::nvrtc {

namespace {

// NVRTC compilations run by this process (compile_calls): process state (runtime/context.hpp).
struct CompileCalls {
  static constexpr StateSlot kSlot = StateSlot::NvrtcCalls;
  std::atomic<uint64_t> n{0};
};
std::atomic<uint64_t>& compile_call_count() { return runtime().state<CompileCalls>().n; }

[[noreturn]] void throw_nvrtc(nvrtcResult r, const char* call, const std::string& program) {
  throw CudaError(fmt::format("NVRTC call {} failed for '{}': {} ({})", call, program,
                              nvrtcGetErrorString(r), static_cast<int>(r)));
}

#define CUFUSE_NVRTC_CHECK(call, program)                     \
  do {                                                        \
    nvrtcResult cufuse_r_ = (call);                           \
    if (cufuse_r_ != NVRTC_SUCCESS) throw_nvrtc(cufuse_r_, #call, program); \
  } while (0)

// Owns an nvrtcProgram; destroys it on every path.
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) nvrtcDestroyProgram(&p);  // nothing useful to do with a failure here
  }
};

}  // namespace

namespace {

// One compile; `cubin`: fetch the CUBIN (a real arch), else the PTX (into Output::cubin's bytes).
Output compile(const std::string& source, const std::string& program_name, const std::vector<std::string>& options,
               bool cubin) {
  auto t0 = std::chrono::steady_clock::now();
  Output out;
  std::string file = program_name + ".cu";
  Program prog;
  CUFUSE_NVRTC_CHECK(nvrtcCreateProgram(&prog.p, source.c_str(), file.c_str(), 0, nullptr, nullptr),
                     program_name);
  std::vector<const char*> opts;
  opts.reserve(options.size());
  for (const auto& o : options) opts.push_back(o.c_str());
  compile_call_count().fetch_add(1, std::memory_order_relaxed);
  nvrtcResult r = nvrtcCompileProgram(prog.p, static_cast<int>(opts.size()), opts.data());
  out.status = static_cast<int>(r);
  out.status_text = nvrtcGetErrorString(r);
  out.ok = r == NVRTC_SUCCESS;

  size_t log_size = 0;
  CUFUSE_NVRTC_CHECK(nvrtcGetProgramLogSize(prog.p, &log_size), program_name);
  if (log_size > 1) {
    out.log.resize(log_size);
    CUFUSE_NVRTC_CHECK(nvrtcGetProgramLog(prog.p, out.log.data()), program_name);
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
  }
  if (out.ok && cubin) {
    size_t cubin_size = 0;
    CUFUSE_NVRTC_CHECK(nvrtcGetCUBINSize(prog.p, &cubin_size), program_name);
    if (cubin_size == 0)
      throw CudaError(fmt::format("NVRTC produced no CUBIN for '{}' (the options must name a real "
                                  "arch, -arch=sm_XX, not compute_XX)", program_name));
    out.cubin.resize(cubin_size);
    CUFUSE_NVRTC_CHECK(nvrtcGetCUBIN(prog.p, out.cubin.data()), program_name);
  } else if (out.ok) {
    size_t ptx_size = 0;
    CUFUSE_NVRTC_CHECK(nvrtcGetPTXSize(prog.p, &ptx_size), program_name);
    out.cubin.resize(ptx_size);
    if (ptx_size > 0) CUFUSE_NVRTC_CHECK(nvrtcGetPTX(prog.p, out.cubin.data()), program_name);
  }
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace

Output compile_to_cubin(const std::string& source, const std::string& program_name,
                        const std::vector<std::string>& options) {
  return compile(source, program_name, options, true);
}

Output compile_to_ptx(const std::string& source, const std::string& program_name,
                      const std::vector<std::string>& options) {
  return compile(source, program_name, options, false);
}

double warm_up(const std::vector<std::string>& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Program prog;
  if (nvrtcCreateProgram(&prog.p, "extern \"C\" __global__ void cf_warm_up(int* p) { if (p) *p = 1; }\n",
                         "cf_warm_up.cu", 0, nullptr, nullptr) == NVRTC_SUCCESS) {
    std::vector<const char*> opts;
    for (const auto& o : options) opts.push_back(o.c_str());
    (void)nvrtcCompileProgram(prog.p, static_cast<int>(opts.size()), opts.data());
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

const std::string& version() {
  static const std::string v = [] {
    int major = 0, minor = 0;
    CUFUSE_NVRTC_CHECK(nvrtcVersion(&major, &minor), std::string("nvrtcVersion"));
    return fmt::format("{}.{}", major, minor);
  }();
  return v;
}

uint64_t compile_calls() { return compile_call_count().load(std::memory_order_relaxed); }

}  // namespace cufuse::detail::nvrtc
