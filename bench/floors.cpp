// bench/floors.cpp: the ceilings measured in the same run that make each workload's floor:
// device-to-device copy bandwidth, a tiny kernel's launch cost, one NVRTC compile.
// These use the CUDA runtime and NVRTC directly, never cufuse, so a cufuse bug cannot move them.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <nvrtc.h>

#include "harness.hpp"

namespace bench {
namespace {

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}


std::string arch_option() {
  int dev = 0, major = 0, minor = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "cudaDeviceGetAttribute");
  cuda_check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), "cudaDeviceGetAttribute");
  return "--gpu-architecture=sm_" + std::to_string(major * 10 + minor);
}

// Compiles src to CUBIN for this device; returns the CUBIN.
std::vector<char> nvrtc_cubin(const std::string& src, const std::string& name, bool minimal = false) {
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, src.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw std::runtime_error("nvrtcCreateProgram failed");
  std::string arch = arch_option();
  // --no-cache: NVRTC's own cache (12.9+) would answer a source it saw in an earlier run on
  // this machine without compiling; the floor is a real compile (an NVRTC without the
  // option is asked again without it).
  std::vector<const char*> opts = {arch.c_str(), "--no-cache"};
  if (minimal) opts.push_back("-minimal");
  nvrtcResult res = nvrtcCompileProgram(prog, int(opts.size()), opts.data());
  if (res == NVRTC_ERROR_INVALID_OPTION) {
    opts.erase(opts.begin() + 1);
    res = nvrtcCompileProgram(prog, int(opts.size()), opts.data());
  }
  if (res != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(prog, log.data());
    nvrtcDestroyProgram(&prog);
    throw std::runtime_error(std::string("NVRTC: ") + nvrtcGetErrorString(res) + ": " + log);
  }
  size_t n = 0;
  nvrtcGetCUBINSize(prog, &n);
  std::vector<char> cubin(n);
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  return cubin;
}

// The kind of kernel W7b and W12 make: two inputs, one output, a few flops.
std::string elementwise_source(const std::string& name) {
  return "extern \"C\" __global__ void " + name +
         "(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out, long long n) {\n"
         "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) { float a = x[i], b = y[i];\n"
         "    out[i] = ((a - b) * (a + b) * 0.5f + a * 3.0f - b / 2.0f) * (a * a + 1.0f); }\n"
         "}\n";
}

}  // namespace

namespace {
// One NVRTC compile of the floor's kernel under `name` (its source made before the clock starts).
double timed_compile_ms(const std::string& name, bool minimal) {
  const std::string src = elementwise_source(name);
  const double t0 = now_ms();
  nvrtc_cubin(src, name, minimal);
  return now_ms() - t0;
}
}  // namespace

double nvrtc_floor_compile_once_ms() {
  static std::atomic<int> k{0};
  return timed_compile_ms("cufuse_bench_once" + std::to_string(k.fetch_add(1)), /*minimal=*/true);
}

double Floors::copy_bandwidth_gbs() {
  if (bw_done_) return bw_;
  bw_done_ = true;
  const size_t bytes = size_t(1) << 30;
  void *a = nullptr, *b = nullptr;
  try {
    cuda_check(cudaMalloc(&a, bytes), "cudaMalloc (copy bandwidth)");
    cuda_check(cudaMalloc(&b, bytes), "cudaMalloc (copy bandwidth)");
    cuda_check(cudaMemset(a, 0x3c, bytes), "cudaMemset");
    cuda_check(cudaMemset(b, 0x41, bytes), "cudaMemset");
    for (int i = 0; i < 3; ++i) cuda_check(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync");
    device_sync();
    std::vector<double> per_copy;
    for (int batch = 0; batch < 7; ++batch) {
      const int reps = 10;
      double t0 = now_ms();
      for (int i = 0; i < reps; ++i)
        cuda_check(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync");
      device_sync();
      per_copy.push_back((now_ms() - t0) / reps);
    }
    bw_ = 2.0 * double(bytes) / (median(per_copy) * 1e-3) / 1e9;
  } catch (const std::exception& e) {
    add_note(std::string("copy bandwidth not measured (") + e.what() + ")");
  }
  if (a) cudaFree(a);
  if (b) cudaFree(b);
  return bw_;
}

double Floors::launch_us() {
  if (launch_done_) return launch_;
  launch_done_ = true;
  try {
    std::vector<char> cubin = nvrtc_cubin(
        "extern \"C\" __global__ void cufuse_bench_tiny(const float* x, const float* y, float* out, long long n) {\n"
        "  if ((long long)threadIdx.x < n) out[threadIdx.x] = x[threadIdx.x] + y[threadIdx.x];\n}\n",
        "cufuse_bench_tiny");
    cudaLibrary_t lib;
    cuda_check(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), "cudaLibraryLoadData");
    cudaKernel_t k;
    cuda_check(cudaLibraryGetKernel(&k, lib, "cufuse_bench_tiny"), "cudaLibraryGetKernel");
    const float* x = nullptr;
    const float* y = nullptr;
    float* out = nullptr;
    long long n = 0;
    void* args[] = {&x, &y, &out, &n};
    auto launch = [&] {
      cuda_check(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(1), dim3(128), args, 0, nullptr),
                 "cudaLaunchKernel");
    };
    for (int i = 0; i < 200; ++i) launch();
    device_sync();
    std::vector<double> per_call;
    for (int loop = 0; loop < 5; ++loop) {
      const int calls = 2000;
      double t0 = now_ms();
      for (int i = 0; i < calls; ++i) launch();
      device_sync();
      per_call.push_back((now_ms() - t0) / calls * 1e3);
    }
    launch_ = median(per_call);
    cudaLibraryUnload(lib);
  } catch (const std::exception& e) {
    launch_ = 3.3;
    add_note(std::string("launch floor not measured, WORKLOADS.md's 3.3 us used (") + e.what() + ")");
  }
  return launch_;
}

double Floors::nvrtc_ms() {
  if (nvrtc_done_) return nvrtc_;
  nvrtc_done_ = true;
  try {
    cuda_check(cudaFree(nullptr), "cudaFree(0)");  // as in W12's children: the context is up
    // NVRTC's own start-up (~0.2 s per process on the H100 machine) stays out. The floor is
    // the fastest of several compiles: on a freshly started machine some take 3-5x longer.
    nvrtc_cubin(elementwise_source("cufuse_bench_first"), "cufuse_bench_first");
    auto fastest_compile = [&](bool minimal) {
      std::vector<double> t;
      for (int i = 0; i < 6; ++i)
        t.push_back(timed_compile_ms(std::string("cufuse_bench_k") + (minimal ? "m" : "") + std::to_string(i), minimal));
      return *std::min_element(t.begin(), t.end());
    };
    double plain = fastest_compile(false);
    double minimal = kNaN;
    try {
      minimal = fastest_compile(true);
    } catch (const std::exception&) {  // an NVRTC without -minimal
    }
    nvrtc_ = std::isfinite(minimal) ? std::min(plain, minimal) : plain;
    nvrtc_detail = strf("NVRTC compile of a W7b-sized kernel to CUBIN, fastest of 6: %.1f ms, %.1f ms with -minimal",
                        plain, minimal);
  } catch (const std::exception& e) {
    add_note(std::string("NVRTC floor not measured (") + e.what() + ")");
  }
  return nvrtc_;
}

}  // namespace bench
