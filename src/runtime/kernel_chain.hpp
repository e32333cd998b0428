// src/runtime/kernel_chain.hpp: a fixed sequence of kernel launches (kernels, grids, blocks
// fixed; parameter bytes new at each call) replayed as one CUDA graph launch per call.
//
// Why: on the H100 machine a graph launch with its kernel nodes' parameters updated costs
// the host ~1.4 us against ~2.7 us for one cuLaunchKernel, and the GPU runs the graph's
// kernels no slower than launched ones (exp: 10k to 4M elements, one node and ten). So a
// repeated plan, even one of a single kernel, goes out as a graph.
//
// Launches of one executable graph are ordered behind each other, whatever their stream;
// a chain therefore keeps one executable graph per stream it is launched on (the least
// recently used goes beyond kMaxStreams), so work on different streams stays concurrent.
// A node's parameters are set only when they differ from those of the graph's last launch.
// Thread-safe: one lock per chain around the update and launch of a stream's graph.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/launch.hpp"

namespace cufuse::detail {

struct ChainNode {
  void* kernel = nullptr;  // a cudaKernel_t from load_kernel
  LaunchDims dims;
  size_t param_bytes = 0;  // the size of its parameter struct
};

class KernelChain {
 public:
  static constexpr size_t kMaxStreams = 8;
  KernelChain(std::vector<ChainNode> nodes, int device);
  ~KernelChain();
  KernelChain(const KernelChain&) = delete;
  KernelChain& operator=(const KernelChain&) = delete;

  // Runs node i with the parameter struct at params[i], in order, on `stream` (the current
  // device must be the chain's). On a stream being captured: one launch per node, and
  // false returned (true: one graph launch).
  bool launch(const void* const* params, void* stream);
  size_t size() const { return nodes_.size(); }
  int device() const { return device_; }

 private:
  struct Slot;
  Slot& slot_for(void* stream, const void* const* params);
  void build_graph(const void* const* params);

  const std::vector<ChainNode> nodes_;
  const int device_;
  std::mutex mu_;
  void* graph_ = nullptr;               // cudaGraph_t, built at the first launch
  std::vector<void*> graph_nodes_;      // cudaGraphNode_t per node
  std::vector<std::unique_ptr<Slot>> slots_;
  uint64_t clock_ = 0;
};

// CUFUSE_GRAPHS=0 turns chains off everywhere (one launch per kernel, as without them);
// CUFUSE_GRAPHS=all gives every plan its chain from its first run (for tests).
bool chains_enabled();
// Is the stream being captured into a CUDA graph by the user? (~20 ns)
bool stream_is_capturing(void* stream);
bool chains_eager();

// A chain built on demand for a plan that is run repeatedly: get() returns null for the
// first `after` calls (a plan run once does not pay for a graph), then the chain for
// `device`, built once from `nodes()` (null when that returns no nodes, or chains are off).
class ChainSlot {
 public:
  template <class F>
  std::shared_ptr<KernelChain> get(int device, int after, F&& nodes) {
    std::lock_guard<std::mutex> lk(mu_);
    if (calls_ < after && !chains_eager()) {
      ++calls_;
      return nullptr;
    }
    for (const auto& [d, c] : chains_)
      if (d == device) return c;
    if (!chains_enabled()) return nullptr;
    std::vector<ChainNode> n = nodes();
    chains_.emplace_back(device, n.empty() ? nullptr : std::make_shared<KernelChain>(std::move(n), device));
    return chains_.back().second;
  }

 private:
  std::mutex mu_;
  int calls_ = 0;
  std::vector<std::pair<int, std::shared_ptr<KernelChain>>> chains_;  // per device (null: none)
};

}  // namespace cufuse::detail
