// src/runtime/kernel_chain.cpp: KernelChain (kernel_chain.hpp): the graph of a chain's
// kernel nodes, its executable graphs per stream, and the per-call update and launch (the
// driver's cuGraphExecKernelNodeSetParams and cuGraphLaunch, taken once through the runtime
// as launch.cpp takes cuLaunchKernel; the runtime's calls serve where they are missing).
#include "runtime/kernel_chain.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"

namespace cufuse::detail {

namespace {

using SetParamsFn = CUresult (*)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS*);
using GraphLaunchFn = CUresult (*)(CUgraphExec, CUstream);
using IsCapturingFn = CUresult (*)(CUstream, CUstreamCaptureStatus*);

template <class Fn>
Fn driver_entry(const char* name) {
  return reinterpret_cast<Fn>(driver_entry_point(name));
}

SetParamsFn driver_set_params() {
  static const SetParamsFn fn = driver_entry<SetParamsFn>("cuGraphExecKernelNodeSetParams");
  return fn;
}

GraphLaunchFn driver_graph_launch() {
  static const GraphLaunchFn fn = driver_entry<GraphLaunchFn>("cuGraphLaunch");
  return fn;
}

IsCapturingFn driver_is_capturing() {
  static const IsCapturingFn fn = driver_entry<IsCapturingFn>("cuStreamIsCapturing");
  return fn;
}

// A graph cannot be launched into a stream being captured (CUDA refuses it and the capture
// fails): there the chain's kernels are launched one by one, and captured as kernels. ~20 ns.
bool capturing(void* stream) {
  const IsCapturingFn q = driver_is_capturing();
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUresult r = q ? q(static_cast<CUstream>(stream), &cs) : CUDA_ERROR_INVALID_CONTEXT;
  if (r == CUDA_SUCCESS) return cs != CU_STREAM_CAPTURE_STATUS_NONE;
  cudaStreamCaptureStatus rs = cudaStreamCaptureStatusNone;
  CUFUSE_CUDA_CHECK(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &rs));
  return rs != cudaStreamCaptureStatusNone;
}

cudaKernelNodeParams runtime_params(const ChainNode& n, void** kp) {
  cudaKernelNodeParams p{};
  p.func = n.kernel;  // a cudaKernel_t: accepted by graph kernel nodes
  p.gridDim = dim3(n.dims.grid[0], n.dims.grid[1], n.dims.grid[2]);
  p.blockDim = dim3(n.dims.block[0], n.dims.block[1], n.dims.block[2]);
  p.sharedMemBytes = n.dims.shared_bytes;
  p.kernelParams = kp;
  return p;
}

}  // namespace

bool stream_is_capturing(void* stream) { return capturing(stream); }

bool chains_enabled() { return settings().graphs != GraphsMode::Off; }  // CUFUSE_GRAPHS
bool chains_eager() { return settings().graphs == GraphsMode::All; }

struct KernelChain::Slot {
  void* stream = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<std::vector<unsigned char>> last;  // each node's parameters at the last launch
  uint64_t used = 0;
  ~Slot() {
    // An executable graph still running is freed when it completes.
    if (exec && cudaGraphExecDestroy(exec) != cudaSuccess) cudaGetLastError();
  }
};

KernelChain::KernelChain(std::vector<ChainNode> nodes, int device) : nodes_(std::move(nodes)), device_(device) {}

KernelChain::~KernelChain() {
  slots_.clear();
  if (graph_ && cudaGraphDestroy(static_cast<cudaGraph_t>(graph_)) != cudaSuccess) cudaGetLastError();
}

void KernelChain::build_graph(const void* const* params) {
  cudaGraph_t g = nullptr;
  CUFUSE_CUDA_CHECK(cudaGraphCreate(&g, 0));
  graph_ = g;
  cudaGraphNode_t prev = nullptr;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    void* kp[1] = {const_cast<void*>(params[i])};
    const cudaKernelNodeParams p = runtime_params(nodes_[i], kp);
    cudaGraphNode_t node = nullptr;
    CUFUSE_CUDA_CHECK(cudaGraphAddKernelNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
    graph_nodes_.push_back(node);
    prev = node;
  }
  log(LogChannel::Launch, "kernel chain of {} kernels: graph built on device {}", nodes_.size(), device_);
}

KernelChain::Slot& KernelChain::slot_for(void* stream, const void* const* params) {
  ++clock_;
  for (auto& s : slots_)
    if (s->stream == stream) {
      s->used = clock_;
      return *s;
    }
  if (!graph_) build_graph(params);
  auto s = std::make_unique<Slot>();
  s->stream = stream;
  s->used = clock_;
  CUFUSE_CUDA_CHECK(cudaGraphInstantiate(&s->exec, static_cast<cudaGraph_t>(graph_), 0));
  s->last.resize(nodes_.size());  // empty: the first launch sets every node
  if (slots_.size() >= kMaxStreams) {
    size_t oldest = 0;
    for (size_t i = 1; i < slots_.size(); ++i)
      if (slots_[i]->used < slots_[oldest]->used) oldest = i;
    slots_[oldest] = std::move(s);
    return *slots_[oldest];
  }
  slots_.push_back(std::move(s));
  log(LogChannel::Launch, "kernel chain of {} kernels: executable graph for stream {}", nodes_.size(), stream);
  return *slots_.back();
}

bool KernelChain::launch(const void* const* params, void* stream) {
  if (capturing(stream)) {
    for (size_t i = 0; i < nodes_.size(); ++i) launch_kernel(nodes_[i].kernel, nodes_[i].dims, const_cast<void*>(params[i]), stream);
    return false;
  }
  std::lock_guard<std::mutex> lk(mu_);
  Slot& s = slot_for(stream, params);
  const SetParamsFn set = driver_set_params();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const ChainNode& n = nodes_[i];
    std::vector<unsigned char>& last = s.last[i];
    if (last.size() == n.param_bytes && std::memcmp(last.data(), params[i], n.param_bytes) == 0) continue;
    void* kp[1] = {const_cast<void*>(params[i])};
    CUresult r = CUDA_ERROR_INVALID_CONTEXT;
    if (set) {
      CUDA_KERNEL_NODE_PARAMS p{};
      p.kern = static_cast<CUkernel>(n.kernel);
      p.gridDimX = n.dims.grid[0];
      p.gridDimY = n.dims.grid[1];
      p.gridDimZ = n.dims.grid[2];
      p.blockDimX = n.dims.block[0];
      p.blockDimY = n.dims.block[1];
      p.blockDimZ = n.dims.block[2];
      p.sharedMemBytes = n.dims.shared_bytes;
      p.kernelParams = kp;
      r = set(reinterpret_cast<CUgraphExec>(s.exec), static_cast<CUgraphNode>(graph_nodes_[i]), &p);
    }
    cudaError_t e = static_cast<cudaError_t>(r);  // the runtime shares the driver's numbers here
    if (r == CUDA_ERROR_INVALID_CONTEXT) {  // no entry point, or no current context: the runtime makes one
      const cudaKernelNodeParams p = runtime_params(n, kp);
      e = cudaGraphExecKernelNodeSetParams(s.exec, static_cast<cudaGraphNode_t>(graph_nodes_[i]), &p);
    }
    if (e != cudaSuccess) {
      last.clear();
      const auto call = fmt::format("cuGraphExecKernelNodeSetParams (kernel chain node {} of {})", i, nodes_.size());
      throw_cuda_error(e, call.c_str(), __FILE__, __LINE__);
    }
    last.assign(static_cast<const unsigned char*>(params[i]), static_cast<const unsigned char*>(params[i]) + n.param_bytes);
  }
  const GraphLaunchFn gl = driver_graph_launch();
  const CUresult r = gl ? gl(reinterpret_cast<CUgraphExec>(s.exec), static_cast<CUstream>(stream))
                       : CUDA_ERROR_INVALID_CONTEXT;
  const cudaError_t e = r == CUDA_ERROR_INVALID_CONTEXT ? cudaGraphLaunch(s.exec, static_cast<cudaStream_t>(stream))
                                                        : static_cast<cudaError_t>(r);
  if (e != cudaSuccess) [[unlikely]] {
    const auto call = fmt::format("cuGraphLaunch (kernel chain of {} kernels, stream {})", nodes_.size(), stream);
    throw_cuda_error(e, call.c_str(), __FILE__, __LINE__);
  }
  if (log_enabled(LogChannel::Launch)) [[unlikely]] {
    std::string names;
    for (const ChainNode& n : nodes_) {
      const char* name = nullptr;
      if (cudaFuncGetName(&name, n.kernel) != cudaSuccess || name == nullptr) {
        cudaGetLastError();
        name = "<unknown kernel>";
      }
      names += fmt::format("{}{} grid ({},{},{}) block ({},{},{}) shared {} B", names.empty() ? "" : "; ", name,
                           n.dims.grid[0], n.dims.grid[1], n.dims.grid[2], n.dims.block[0], n.dims.block[1],
                           n.dims.block[2], n.dims.shared_bytes);
    }
    log_write(LogChannel::Launch, fmt::format("graph of {} kernel(s) on stream {}: {}", nodes_.size(), stream, names));
  }
  return true;
}

}  // namespace cufuse::detail
