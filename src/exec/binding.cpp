// src/exec/binding.cpp: binding an executable to one evaluation (see binding.hpp): the
// parameter patches, library operands, the evaluation's device, and cross-stream safety.
#include "exec/binding.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "codegen/scalar_forms.hpp"
#include "exec/counters.hpp"
#include "exec/executable.hpp"
#include "library/library_call.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime_internal.hpp"
#include "runtime/transfer.hpp"

namespace cufuse::detail {

// ------------------------------------------------------------------ patches
bool patch_is_static(const Patch& p) {
  switch (p.src) {
    case PatchSrc::GenA:
    case PatchSrc::GenB:
    case PatchSrc::GenC:
    case PatchSrc::GenSeed:
    case PatchSrc::GenCounter: return true;
    default: return false;
  }
}

void apply_patches(unsigned char* bytes, const Patch* patches, size_t n, const LeafSource& src,
                   void* const* buffers, void* workspace) {
  for (size_t i = 0; i < n; ++i) {
    const Patch& p = patches[i];
    unsigned char* dst = bytes + p.offset;
    switch (p.src) {
      case PatchSrc::BufferPtr: std::memcpy(dst, &buffers[p.index], sizeof(void*)); break;
      case PatchSrc::Workspace: {
        char* w = static_cast<char*>(workspace) + p.index;
        std::memcpy(dst, &w, sizeof(void*));
        break;
      }
      case PatchSrc::LeafPtr: {
        const char* ptr = src.data(static_cast<int>(p.index));
        std::memcpy(dst, &ptr, sizeof(void*));
        break;
      }
      case PatchSrc::ScalarValue: {
        const Scalar s = src.scalar(static_cast<int>(p.index));
        write_compute_value(dst, p.dtype, s.to_double(), s.to_int64(), s.to_uint64(), s.to_bool());
        break;
      }
      case PatchSrc::ScalarReciprocal: {
        const Scalar s = src.scalar(static_cast<int>(p.index));
        const double r = exact_reciprocal(s.to_double(), p.dtype);
        if (std::isnan(r))  // the key (plan/signature.cpp) keeps other values off this kernel
          throw InternalError(fmt::format("a kernel made for a power-of-two divisor was bound to {}", s.to_double()));
        write_compute_value(dst, p.dtype, r, 0, 0, true);
        break;
      }
      case PatchSrc::GenA:
      case PatchSrc::GenB:
      case PatchSrc::GenC: {
        const Node& l = src.node(static_cast<int>(p.index));
        const GenParams& g = l.gen;
        const auto kind = static_cast<GenKind>(l.op);
        if ((kind == GenKind::Arange && !is_float(l.dtype)) || kind == GenKind::RandomIntegers ||
            kind == GenKind::RandomPermutation) {
          int64_t v = kind == GenKind::RandomPermutation ? g.num : p.src == PatchSrc::GenA ? g.istart : g.istep_second;
          write_compute_value(dst, p.dtype, static_cast<double>(v), v, static_cast<uint64_t>(v), v != 0);
        } else {
          double v = p.src == PatchSrc::GenA ? g.start
                     : (p.src == PatchSrc::GenB ? (kind == GenKind::Arange || kind == GenKind::Linspace ? g.step : g.stop)
                                                : g.stop);
          write_compute_value(dst, p.dtype, v, static_cast<int64_t>(v), static_cast<uint64_t>(v), v != 0);
        }
        break;
      }
      case PatchSrc::GenSeed: std::memcpy(dst, &src.node(static_cast<int>(p.index)).gen.seed, 8); break;
      case PatchSrc::GenCounter: std::memcpy(dst, &src.node(static_cast<int>(p.index)).gen.counter, 8); break;
    }
  }
}

// ------------------------------------------------------------------ library steps
void* step_workspace(const KernelSpec& spec, std::vector<std::shared_ptr<Storage>>& keep, void* stream) {
  if (!spec.workspace_bytes) return nullptr;
  keep.push_back(allocate_device(spec.workspace_bytes));
  void* w = keep.back()->ptr;
  if (spec.workspace_zero_bytes) memset_device(w, 0, spec.workspace_zero_bytes, stream);
  return w;
}

void run_library_step(const Step& st, const LeafSource& src, const std::vector<void*>& ptrs, void* stream) {
  const LibraryCall& call = *st.call;
  std::vector<TensorRef> in, out;
  for (const auto& li : st.lib_in) {
    TensorRef t;
    if (li.buffer >= 0) {
      t.ptr = ptrs[li.buffer];
      t.dtype = li.dtype;
      t.shape = li.shape;
      t.strides = contiguous_strides(li.shape);
    } else {
      const Node& l = src.node(li.leaf);
      t.ptr = const_cast<char*>(src.data(li.leaf));
      t.dtype = l.dtype;
      t.shape = l.shape();
      t.strides = l.layout.strides;
    }
    in.push_back(std::move(t));
  }
  std::vector<std::shared_ptr<Storage>> scratch;
  for (int k = 0; k < call.num_outputs(); ++k) {
    TensorRef t;
    t.dtype = call.output_dtype(k);
    t.shape = call.output_shape(k);
    t.strides = contiguous_strides(t.shape);
    if (st.lib_out[k] >= 0) {
      t.ptr = ptrs[st.lib_out[k]];
    } else {
      scratch.push_back(allocate_device(static_cast<size_t>(numel(t.shape) * itemsize(t.dtype))));
      t.ptr = scratch.back()->ptr;
    }
    out.push_back(std::move(t));
  }
  call.run(in, out, stream);
  counters().kernels_launched++;
  if (log_enabled(LogChannel::Launch)) log(LogChannel::Launch, "library: {}", call.describe());
}

// ------------------------------------------------------------------ devices
static std::string device_word(int d) { return d < 0 ? std::string("the host (reference backend)") : fmt::format("device {}", d); }

void throw_two_devices(const NodePtr* const* nodes, int n, const char* what) {
  int first = -2, at = -1;
  for (int i = 0; i < n; ++i) {
    if (!nodes[i] || !*nodes[i]) continue;
    const int d = node_device(**nodes[i]);
    if (d == -2) continue;  // no memory read (scalars, generators, placeholders)
    if (first == -2) {
      first = d;
      at = i;
    } else if (d != first) {
      throw ValueError(fmt::format("{}: operand {} is on {} but operand {} is on {}; an operation takes arrays "
                                   "of one device (copy one with to_device({}))",
                                   what, at, device_word(first), i, device_word(d), first < 0 ? d : first));
    }
  }
  throw InternalError(fmt::format("{}: throw_two_devices called with operands of one device", what));
}

int leaves_device(const GraphScan& scan) {
  int dev = -2;
  for (const Node* l : scan.leaves) {
    if (l->k() != NodeKind::Buffer || !l->storage) continue;
    const int d = l->storage->device;
    if (dev == -2) dev = d;
    else if (d != dev)
      throw ValueError(fmt::format("an expression reads arrays on {} and on {}; an evaluation runs on one "
                                   "device (copy with to_device)", device_word(dev), device_word(d)));
  }
  return dev < 0 ? -1 : dev;
}

RunOnDevice::RunOnDevice(int device) {
  if (device < 0) return;
  const int cur = current_device();
  if (cur == device) return;
  set_current_device(device);
  prev_ = cur;
}

RunOnDevice::~RunOnDevice() {
  if (prev_ < 0) return;
  try {
    set_current_device(prev_);
  } catch (...) {  // the device was valid when we left it; a destructor must not throw
  }
}

// ------------------------------------------------------------------ streams
namespace {
// The lock on every Storage's list of other-stream uses: process state (runtime/context.hpp).
struct StreamUses {
  static constexpr StateSlot kSlot = StateSlot::StreamUses;
  std::mutex mu;
};
std::mutex& uses_mutex() { return runtime().state<StreamUses>().mu; }
}  // namespace

void record_stream_use_slow(Storage& s, void* stream, int device) {
  std::lock_guard<std::mutex> lk(uses_mutex());
  for (const auto& u : s.other_streams)
    if (u.stream == stream) return;
  // The owner keeps a user's Stream alive until the wait at free time has been enqueued.
  s.other_streams.push_back(Storage::StreamUse{stream, device, current_stream_owner()});
  log(LogChannel::Memory, "device {}: block {} ({} B, ordered on stream {}) used on stream {}", s.device, s.ptr,
      s.nbytes, s.stream, stream);
}

void note_leaves_used(const GraphScan& scan, void* stream, int device) {
  for (const Node* l : scan.leaves)
    if (l->k() == NodeKind::Buffer && l->storage) note_stream_use(*l->storage, stream, device);
}

// Called by ~Storage before cudaFreeAsync on s.stream: s.stream waits for the work each
// other stream had queued by now, so the pool cannot hand the block out while it runs.
// Errors are logged, never thrown (a destructor).
void wait_for_stream_uses(Storage& s) {
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) {
    cudaGetLastError();
    prev = -1;
  }
  for (const auto& u : s.other_streams) {
    cudaEvent_t ev = nullptr;
    bool ok = cudaSetDevice(u.device) == cudaSuccess &&
              cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess &&
              cudaEventRecord(ev, static_cast<cudaStream_t>(u.stream)) == cudaSuccess &&
              cudaSetDevice(s.device) == cudaSuccess &&
              cudaStreamWaitEvent(static_cast<cudaStream_t>(s.stream), ev, 0) == cudaSuccess;
    if (!ok) {
      cudaError_t e = cudaGetLastError();
      log(LogChannel::Memory, "device {}: ordering the free of {} after stream {} failed: {}", s.device, s.ptr,
          u.stream, cudaGetErrorName(e));
    }
    if (ev != nullptr && cudaEventDestroy(ev) != cudaSuccess) cudaGetLastError();
  }
  s.other_streams.clear();
  if (prev >= 0 && cudaSetDevice(prev) != cudaSuccess) cudaGetLastError();
}

}  // namespace cufuse::detail
