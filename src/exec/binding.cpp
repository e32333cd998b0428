// src/exec/binding.cpp: binding an executable to one evaluation (see binding.hpp): the
// parameter patches, library operands, the evaluation's device, and its leaves noted as
// used on its stream.
#include "exec/binding.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "core/counters.hpp"
#include "core/library_call.hpp"
#include "exec/executable.hpp"
#include "plan/scalar_forms.hpp"
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
        if (is_complex(p.dtype)) {  // cf_cplx<float/double>: (re, im)
          const std::complex<double> z = s.to_complex();
          if (p.dtype == DType::Complex64) {
            const float v[2] = {float(z.real()), float(z.imag())};
            std::memcpy(dst, v, sizeof v);
          } else {
            const double v[2] = {z.real(), z.imag()};
            std::memcpy(dst, v, sizeof v);
          }
          break;
        }
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
int leaves_device(const GraphScan& scan, const std::vector<const Target*>& targets) {
  int dev = -2;
  auto meet = [&](int d, const char* what) {
    if (dev == -2) dev = d;
    else if (d != dev)
      throw ValueError(fmt::format("an expression {} arrays on {} and on {}; an evaluation runs on one "
                                   "device (copy with to_device)", what, device_word(dev), device_word(d)));
  };
  for (const Node* l : scan.leaves)
    if (l->k() == NodeKind::Buffer && l->storage) meet(l->storage->device, "reads");
  for (const Target* t : targets)
    if (t && t->storage) meet(t->storage->device, "reads and writes");
  return dev < 0 ? -1 : dev;
}

// ------------------------------------------------------------------ streams
void note_leaves_used(const GraphScan& scan, void* stream, int device) {
  for (const Node* l : scan.leaves)
    if (l->k() == NodeKind::Buffer && l->storage) note_stream_use(*l->storage, stream, device);
}

}  // namespace cufuse::detail
