// src/library/compaction_call.cpp: the selection-by-mask nodes: plan-dump lines, hashes, the
// device runs (one generated kernel each, codegen/compaction_kernels) and the host references,
// which place each selected row as the device does (its tile's start from the ends, plus its
// rank in the tile).
#include "library/compaction_call.hpp"

#include <cstring>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "reference/evaluator.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"

namespace cufuse::detail {

namespace {

KernelSpec spec_of(const CompactKernel& k, int64_t n, const void* params, size_t bytes, const std::string& summary) {
  KernelSpec s;
  s.name = k.name;
  s.source = k.source;
  s.dims = compact_launch_dims(n);
  s.params.assign(static_cast<const unsigned char*>(params), static_cast<const unsigned char*>(params) + bytes);
  s.numel = n;
  s.summary = summary;
  return s;
}

}  // namespace

CompiledKernelPtr CompactKernelCache::get(const std::function<CompactKernel()>& make) const {
  const int arch = default_arch();
  std::lock_guard<std::mutex> lk(mu_);
  if (!kernel_ || arch_ != arch) {
    const CompactKernel k = make();
    kernel_ = compile_kernel(k.source, k.name, arch);
    arch_ = arch;
  }
  return kernel_;
}

// ------------------------------------------------------------------------------ count
std::string MaskCountCall::describe() const {
  return fmt::format("mask tile counts bool ({},) -> int32 ({},), tiles of {}, generated kernel", n_, tiles(),
                     kCompactTile);
}

uint64_t MaskCountCall::attributes_hash() const { return hash_mix(0x6d61736b636e74, static_cast<uint64_t>(n_)); }

void MaskCountCall::run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const {
  if (n_ == 0) return;
  CompactCountParams p{static_cast<const unsigned char*>(inputs.at(0).ptr), static_cast<int*>(outputs.at(0).ptr), n_};
  launch_kernel(kernel_.get(compact_count_kernel)->kernel_for(current_device()), compact_launch_dims(n_), &p, stream);
}

bool MaskCountCall::generated_kernel(KernelSpec& k) const {
  CompactCountParams p{nullptr, nullptr, n_};
  k = spec_of(compact_count_kernel(), n_, &p, sizeof p,
              fmt::format("a block a tile of {} mask elements: 32 flags a thread as one bit word", kCompactTile));
  return true;
}

void MaskCountCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  const unsigned char* m = inputs.at(0)->bytes.data();
  int32_t* c = outputs.at(0).data<int32_t>();
  for (int64_t t = 0; t < tiles(); ++t) {
    int32_t s = 0;
    for (int64_t i = t * kCompactTile; i < std::min(n_, (t + 1) * kCompactTile); ++i) s += m[i] != 0;
    c[t] = s;
  }
}

// ---------------------------------------------------------------------------- compact
CompactCall::CompactCall(int64_t n, int64_t w, int64_t count, DType t, DType ends)
    : n_(n), w_(w), count_(count), t_(t), ends_(ends), coords_(false) {}

CompactCall::CompactCall(int64_t n, int64_t count, DType ends, std::vector<int64_t> strides, std::vector<int64_t> shape)
    : n_(n), w_(static_cast<int64_t>(strides.size())), count_(count), t_(DType::Int64), ends_(ends), coords_(true),
      strides_(std::move(strides)), shape_(std::move(shape)) {
  if (w_ < 1 || w_ > kCompactMaxCoordDims || shape_.size() != strides_.size())
    throw InternalError(fmt::format("compaction: {} coordinates a row (1 to {})", w_, kCompactMaxCoordDims));
}

CompactKernel CompactCall::kernel() const {
  CompactForm f;
  f.values = !coords_ ? CompactValues::Bits
             : w_ == 1 && strides_[0] == 1 && shape_[0] >= n_ ? CompactValues::Index  // (row / 1) % shape: row
                                                              : CompactValues::Coords;
  f.value_bytes = coords_ ? 8 : itemsize(t_);  // raw bits
  f.ends64 = ends_ == DType::Int64;
  f.one = w_ == 1;
  f.idx32 = n_ * w_ < (int64_t(1) << 31);
  return compact_kernel(f);
}

std::string CompactCall::describe() const {
  return fmt::format("compaction by mask ({},) of {} -> {} ({},), {} a row, tiles of {}, generated kernel", n_,
                     coords_ ? "coordinates" : name(t_), name(t_), count_ * w_, w_, kCompactTile);
}

uint64_t CompactCall::attributes_hash() const {
  uint64_t h = hash_mix(0x636f6d70616374, static_cast<uint64_t>(n_));
  for (int64_t v : {w_, count_, static_cast<int64_t>(t_), static_cast<int64_t>(ends_), int64_t(coords_)})
    h = hash_mix(h, static_cast<uint64_t>(v));
  for (size_t d = 0; d < strides_.size(); ++d) {
    h = hash_mix(h, static_cast<uint64_t>(strides_[d]));
    h = hash_mix(h, static_cast<uint64_t>(shape_[d]));
  }
  return h;
}

namespace {
CompactParams compact_params(int64_t n, int64_t w, const std::vector<int64_t>& strides, const std::vector<int64_t>& shape) {
  CompactParams p{};
  p.n = n;
  p.w = w;
  for (size_t d = 0; d < strides.size(); ++d) {
    p.stride[d] = strides[d];
    p.shape[d] = shape[d];
  }
  return p;
}
}  // namespace

void CompactCall::run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const {
  if (n_ == 0 || count_ * w_ == 0) return;
  CompactParams p = compact_params(n_, w_, strides_, shape_);
  p.mask = static_cast<const unsigned char*>(inputs.at(0).ptr);
  p.ends = inputs.at(1).ptr;
  p.values = coords_ ? nullptr : inputs.at(2).ptr;
  p.out = outputs.at(0).ptr;
  launch_kernel(kernel_.get([this] { return kernel(); })->kernel_for(current_device()), compact_launch_dims(n_), &p,
                stream);
}

bool CompactCall::generated_kernel(KernelSpec& k) const {
  const CompactParams p = compact_params(n_, w_, strides_, shape_);
  k = spec_of(kernel(), n_, &p, sizeof p,
              fmt::format("a block a tile of {} mask elements: ranks by a block scan of bit words, the selected rows "
                          "staged in shared memory, then copied in order",
                          kCompactTile));
  return true;
}

void CompactCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  const unsigned char* m = inputs.at(0)->bytes.data();
  const HostArray& ends = *inputs.at(1);
  HostArray& out = outputs.at(0);
  const size_t vb = static_cast<size_t>(itemsize(t_));
  const int64_t tiles = (n_ + kCompactTile - 1) / kCompactTile;
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t k = t == 0 ? 0 : ends.get_int64(t - 1);  // the tile's start, then each selected row's place
    for (int64_t row = t * kCompactTile; row < std::min(n_, (t + 1) * kCompactTile); ++row) {
      if (m[row] == 0) continue;
      if (k >= count_) throw InternalError("compaction: more selected rows than counted");
      for (int64_t d = 0; d < w_; ++d) {
        unsigned char* dst = out.bytes.data() + static_cast<size_t>(k * w_ + d) * vb;
        if (coords_) {
          const int64_t c = (row / strides_[static_cast<size_t>(d)]) % shape_[static_cast<size_t>(d)];
          std::memcpy(dst, &c, sizeof c);
        } else {
          std::memcpy(dst, inputs.at(2)->bytes.data() + static_cast<size_t>(row * w_ + d) * vb, vb);
        }
      }
      ++k;
    }
  }
}

}  // namespace cufuse::detail
