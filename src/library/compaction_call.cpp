// src/library/compaction_call.cpp: the selection-by-mask nodes: plan-dump lines, hashes, the
// kernel steps they give their plans (one generated kernel each, codegen/compaction_kernels) and
// the host references,
// which place each selected row as the device does (its tile's start from the ends, plus its
// rank in the tile).
#include "library/compaction_call.hpp"

#include <cstring>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "reference/evaluator.hpp"

namespace cufuse::detail {

namespace {
[[noreturn]] void not_a_call(const char* what) {
  throw InternalError(fmt::format("{} runs as a kernel step of its plan (emit_kernel), never as a call", what));
}
}  // namespace

// ------------------------------------------------------------------------------ count
std::string MaskCountCall::describe() const {
  return fmt::format("mask tile counts bool ({},) -> int32 ({},), tiles of {}, generated kernel", n_, tiles(),
                     kCompactTile);
}

uint64_t MaskCountCall::attributes_hash() const { return hash_mix(0x6d61736b636e74, static_cast<uint64_t>(n_)); }

void MaskCountCall::run(const std::vector<TensorRef>&, const std::vector<TensorRef>&, void*) const {
  not_a_call("the mask count");
}

bool MaskCountCall::emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers,
                                const LeafBinding& bind, KernelSpec& k) const {
  k = emit_compact_count(inputs.at(0), out_buffers.at(0), bind);
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
CompactCall::CompactCall(int64_t n, int64_t w, int64_t count, DType t, DType ends, Shape out)
    : n_(n), w_(w), count_(count), t_(t), ends_(ends), coords_(false), out_(std::move(out)) {
  if (numel(out_) != count_ * w_) throw InternalError("compaction: the result's shape holds count * w elements");
}

CompactCall::CompactCall(int64_t n, int64_t count, DType ends, std::vector<int64_t> strides, std::vector<int64_t> shape,
                         Shape out)
    : n_(n), w_(static_cast<int64_t>(strides.size())), count_(count), t_(DType::Int64), ends_(ends), coords_(true),
      strides_(std::move(strides)), shape_(std::move(shape)), out_(std::move(out)) {
  if (w_ < 1 || w_ > kCompactMaxCoordDims || shape_.size() != strides_.size())
    throw InternalError(fmt::format("compaction: {} coordinates a row (1 to {})", w_, kCompactMaxCoordDims));
  if (numel(out_) != count_ * w_) throw InternalError("compaction: the result's shape holds count * w elements");
}

std::string CompactCall::describe() const {
  return fmt::format("compaction by mask ({},) of {} -> {} {}, {} a row, tiles of {}, generated kernel", n_,
                     coords_ ? "coordinates" : name(t_), name(t_), to_string(out_), w_, kCompactTile);
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

void CompactCall::run(const std::vector<TensorRef>&, const std::vector<TensorRef>&, void*) const {
  not_a_call("the compaction");
}

bool CompactCall::emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers,
                              const LeafBinding& bind, KernelSpec& k) const {
  CompactPass c;
  c.mask = inputs.at(0);
  c.ends = inputs.at(1);
  c.values = coords_ ? nullptr : inputs.at(2);
  c.w = w_;
  c.strides = strides_;
  c.shape = shape_;
  c.out_buffer = out_buffers.at(0);
  k = emit_compact(c, bind);
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
