// src/kernel/raw_kernel.cpp: RawKernel and RawModule (include/cufuse/kernel.hpp): user CUDA
// source compiled through src/compile/compiler (NVRTC, memory and disk caches, one compile per
// key), loaded once per device, launched with cudaLaunchKernel on the current stream. Array
// arguments are materialized first, pending lazy work reading their memory is settled (the
// kernel may write them), and their use on this stream is recorded (cross-stream safety).
#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/cubin_symbols.hpp"
#include "compile/compiler.hpp"
#include "core/counters.hpp"
#include "core/registry.hpp"
#include "cufuse/kernel.hpp"
#include "exec/binding.hpp"
#include "graph/realize.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/log.hpp"

namespace cufuse {

namespace detail {

struct RawKernelImpl {
  std::string source;
  std::string name;  // the kernel's name; empty for a module
  std::vector<std::string> options;
  bool module = false;
  std::mutex mu;
  CompiledKernelPtr compiled;
  std::shared_ptr<RawKernelImpl> parent;  // a module's function: the module (compiled once)
  std::unordered_map<std::string, std::array<void*, 64>> functions;  // a module's, loaded by name
  std::array<std::atomic<void*>, 64> loaded{};

  CompiledKernelPtr get_compiled() {
    if (parent) return parent->get_compiled();
    std::lock_guard<std::mutex> lk(mu);
    if (!compiled) {  // a module compiles under one name; its functions are found by theirs
      CompiledKernelPtr c = compile_kernel(source, module ? std::string("cufuse_raw_module") : name, default_arch(), options);
      if (!module) check_defines(*c, name, "RawKernel");
      compiled = std::move(c);
    }
    return compiled;
  }

  // A ValueError naming the kernels the source does define unless it defines `fn` (read from
  // the CUBIN's symbols, so no device is needed: the mistake shows at compile time).
  static void check_defines(const CompiledKernel& c, const std::string& fn, const char* who) {
    auto names = cubin_entry_names(c.cubin);
    if (!names) return;  // a CUBIN this reader cannot read: the load will say
    for (const auto& n : *names)
      if (n == fn) return;
    std::string have;
    for (const auto& n : *names) have += (have.empty() ? "" : ", ") + n;
    throw ValueError(fmt::format(
        "{}: the source defines no kernel named '{}' (its kernels: {}; a kernel needs extern \"C\" "
        "__global__, or its C++ name is mangled)",
        who, fn, have.empty() ? "none" : have));
  }

  void* kernel_for(int device) {
    void* k = loaded[static_cast<size_t>(device)].load(std::memory_order_acquire);
    if (k) return k;
    CompiledKernelPtr c = get_compiled();
    std::lock_guard<std::mutex> lk(mu);
    k = loaded[static_cast<size_t>(device)].load(std::memory_order_acquire);
    if (!k) {
      k = parent ? parent->load_function(*c, name, device) : c->kernel_for(device);
      loaded[static_cast<size_t>(device)].store(k, std::memory_order_release);
    }
    return k;
  }

  // A module's function on a device, loaded once whatever RawKernel handles ask for it.
  void* load_function(const CompiledKernel& c, const std::string& fn, int device) {
    std::lock_guard<std::mutex> lk(mu);
    auto [it, fresh] = functions.try_emplace(fn);
    if (fresh) it->second.fill(nullptr);
    void*& k = it->second[static_cast<size_t>(device)];
    if (!k) k = load_kernel(c.cubin, fn, device);
    return k;
  }
};

}  // namespace detail

// ------------------------------------------------------------------ RawKernel
RawKernel::RawKernel(const std::string& source, const std::string& name, const std::vector<std::string>& options)
    : impl_(std::make_shared<detail::RawKernelImpl>()) {
  if (name.empty()) throw ValueError("RawKernel: the kernel name is empty");
  impl_->source = source;
  impl_->name = name;
  impl_->options = options;
}

void RawKernel::compile() const { impl_->get_compiled(); }

int RawKernel::num_regs() const {
  auto c = impl_->get_compiled();
  if (impl_->parent) return detail::parse_ptxas_info(c->log, impl_->name).registers;
  return c->registers;
}

const std::string& RawKernel::name() const { return impl_->name; }

void RawKernel::launch(Dim3 grid, Dim3 block, const std::vector<KernelArg>& args, unsigned shared_mem) const {
  detail::require_device();
  const int dev = detail::current_device();
  // Arrays: in memory, on this device, with no pending lazy work still to read them.
  std::vector<Array> held;  // keeps evaluated arrays (and their memory) alive over the launch
  held.reserve(args.size());
  // Pending in-place writes go first: the kernel may read or write their memory.
  detail::settle_pending_writes();
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_array()) continue;
    const Array& a = args[i].array();
    if (!a.defined()) throw ValueError(fmt::format("RawKernel '{}': argument {} is an empty Array handle", impl_->name, i));
    held.push_back(a);
    held.back().eval();
    const auto& n = held.back().node();
    if (n->storage->device != dev)
      throw ValueError(fmt::format("RawKernel '{}': argument {} lives on {} but the current device is {} (copy it with "
                                   "to_device({}), or launch under DeviceScope({}))", impl_->name, i,
                                   n->storage->device < 0 ? std::string("the host") : fmt::format("device {}", n->storage->device),
                                   dev, dev, n->storage->device));
    auto readers = detail::pending_roots_reading(n->storage.get());
    if (!readers.empty()) detail::realize(readers);
  }
  void* k = impl_->kernel_for(dev);
  // One slot per argument: the pointer to the array's first element, or the value.
  std::vector<std::array<unsigned char, 16>> slots(args.size());
  std::vector<void*> ptrs(args.size());
  size_t h = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_array()) {
      const auto& n = held[h++].node();
      const char* p = static_cast<const char*>(n->storage->ptr) + n->layout.offset * itemsize(n->dtype);
      std::memcpy(slots[i].data(), &p, sizeof(p));
    } else {
      std::memcpy(slots[i].data(), args[i].bytes(), args[i].size());
    }
    ptrs[i] = slots[i].data();
  }
  if (shared_mem > 48 * 1024) detail::set_max_dynamic_shared(k, dev, shared_mem);
  void* stream = detail::current_stream();
  cudaError_t e = cudaLaunchKernel(k, dim3(grid.x, grid.y, grid.z), dim3(block.x, block.y, block.z), ptrs.data(),
                                   shared_mem, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) {
    auto call = fmt::format("cudaLaunchKernel(RawKernel '{}', grid ({},{},{}), block ({},{},{}), {} B shared)", impl_->name,
                            grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_mem);
    detail::throw_cuda_error(e, call.c_str(), __FILE__, __LINE__);
  }
  detail::counters().kernels_launched++;
  for (auto& a : held) detail::note_stream_use(*a.node()->storage, stream, dev);
  detail::log(detail::LogChannel::Launch, "raw kernel {} grid ({},{},{}) block ({},{},{}) shared {} B stream {}",
              impl_->name, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_mem, stream);
}

// ------------------------------------------------------------------ RawModule
RawModule::RawModule(const std::string& source, const std::vector<std::string>& options)
    : impl_(std::make_shared<detail::RawKernelImpl>()) {
  impl_->source = source;
  impl_->options = options;
  impl_->module = true;
}

void RawModule::compile() const { impl_->get_compiled(); }

RawKernel RawModule::get_function(const std::string& name) const {
  if (name.empty()) throw ValueError("RawModule::get_function: the kernel name is empty");
  // Compiled now (NVRTC works without a device) so that a name the source does not define
  // is an error here, as CuPy's get_function is, not at the launch.
  detail::RawKernelImpl::check_defines(*impl_->get_compiled(), name, "RawModule::get_function");
  auto f = std::make_shared<detail::RawKernelImpl>();
  f->name = name;
  f->parent = impl_;  // the module loads each function once per device (load_function)
  return RawKernel(std::move(f));
}

}  // namespace cufuse
