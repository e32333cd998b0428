// src/library/compaction_call.cpp: the selection-by-mask nodes (one pass: SelectCall; two
// passes: MaskCountCall, CompactCall): plan-dump lines, hashes, the kernel steps they give their
// plans (one generated kernel each, codegen/compaction_kernels) and the host references, which
// place each selected row as the device does (its tile's start, from the ends or counted, plus
// its rank in the tile).
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
  return fmt::format("selection by mask in two passes, 1: mask tile counts bool ({},) -> int32 ({},), tiles of {}, "
                     "generated kernel",
                     n_, tiles(),
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
  return fmt::format("selection by mask in two passes, 2: compaction ({},) of {} -> {} {}, {} a row, tiles of {}, "
                     "generated kernel",
                     n_,
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
  CompactRef r;
  r.n = n_;
  r.w = w_;
  r.vb = itemsize(t_);
  r.mask = inputs.at(0)->bytes.data();
  r.values = coords_ ? nullptr : inputs.at(2)->bytes.data();
  r.strides = &strides_;
  r.shape = &shape_;
  r.ends = inputs.at(1);
  r.capacity = count_;
  if (compact_reference(r, outputs.at(0).bytes.data()) != count_)
    throw InternalError("compaction: the selected rows are not the counted ones");
}

// ------------------------------------------------------------------------- reference
int64_t compact_reference(const CompactRef& r, unsigned char* out) {
  const size_t vb = static_cast<size_t>(r.vb);
  const int64_t tiles = (r.n + kCompactTile - 1) / kCompactTile;
  int64_t k = 0;  // the next selected row's place
  for (int64_t t = 0; t < tiles; ++t) {
    if (r.ends && t > 0) k = r.ends->get_int64(t - 1);  // the tile's start
    for (int64_t row = t * kCompactTile; row < std::min(r.n, (t + 1) * kCompactTile); ++row) {
      if (r.mask[row] == 0) continue;
      if (k >= r.capacity) throw InternalError("compaction: more selected rows than counted");
      for (int64_t d = 0; d < r.w; ++d) {
        unsigned char* dst = out + static_cast<size_t>(k * r.w + d) * vb;
        if (!r.values) {
          const int64_t c = (row / (*r.strides)[static_cast<size_t>(d)]) % (*r.shape)[static_cast<size_t>(d)];
          std::memcpy(dst, &c, sizeof c);
        } else {
          std::memcpy(dst, r.values + static_cast<size_t>(row * r.w + d) * vb, vb);
        }
      }
      ++k;
    }
  }
  return k;
}

// ------------------------------------------------------------------------- one pass
SelectCall::SelectCall(int64_t n, int64_t w, DType t, Shape buffer)
    : n_(n), w_(w), t_(t), coords_(false), buffer_(std::move(buffer)) {
  if (numel(buffer_) != n_ * w_) throw InternalError("selection: the buffer holds n * w elements");
}

SelectCall::SelectCall(int64_t n, std::vector<int64_t> strides, std::vector<int64_t> shape, Shape buffer)
    : n_(n), w_(static_cast<int64_t>(strides.size())), t_(DType::Int64), coords_(true), strides_(std::move(strides)),
      shape_(std::move(shape)), buffer_(std::move(buffer)) {
  if (w_ < 1 || w_ > kCompactMaxCoordDims || shape_.size() != strides_.size())
    throw InternalError(fmt::format("selection: {} coordinates a row (1 to {})", w_, kCompactMaxCoordDims));
  if (numel(buffer_) != n_ * w_) throw InternalError("selection: the buffer holds n * w elements");
}

std::string SelectCall::describe() const {
  return fmt::format("selection by mask in one pass ({},) of {} -> {} buffer {} (the upper bound) and the count, {} a "
                     "row, tiles of {}, generated kernel",
                     n_, coords_ ? "coordinates" : name(t_), name(t_), to_string(buffer_), w_, kCompactTile);
}

uint64_t SelectCall::attributes_hash() const {
  uint64_t h = hash_mix(0x73656c65637431, static_cast<uint64_t>(n_));
  for (int64_t v : {w_, static_cast<int64_t>(t_), int64_t(coords_)}) h = hash_mix(h, static_cast<uint64_t>(v));
  for (size_t d = 0; d < strides_.size(); ++d) {
    h = hash_mix(h, static_cast<uint64_t>(strides_[d]));
    h = hash_mix(h, static_cast<uint64_t>(shape_[d]));
  }
  for (auto d : buffer_) h = hash_mix(h, static_cast<uint64_t>(d));
  return h;
}

void SelectCall::run(const std::vector<TensorRef>&, const std::vector<TensorRef>&, void*) const {
  not_a_call("the selection");
}

bool SelectCall::emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers,
                             const LeafBinding& bind, KernelSpec& k) const {
  CompactPass c;
  c.mask = inputs.at(0);
  c.values = coords_ ? nullptr : inputs.at(1);
  c.w = w_;
  c.strides = strides_;
  c.shape = shape_;
  c.out_buffer = out_buffers.at(0);
  c.count_buffer = out_buffers.at(1);
  if (c.out_buffer < 0) throw InternalError("selection: the plan keeps no buffer for the selected rows");
  k = emit_compact(c, bind);
  return true;
}

void SelectCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  CompactRef r;
  r.n = n_;
  r.w = w_;
  r.vb = itemsize(t_);
  r.mask = inputs.at(0)->bytes.data();
  r.values = coords_ ? nullptr : inputs.at(1)->bytes.data();
  r.strides = &strides_;
  r.shape = &shape_;
  r.capacity = n_;
  const int64_t count = compact_reference(r, outputs.at(0).bytes.data());
  std::memcpy(outputs.at(1).bytes.data(), &count, sizeof count);
}

}  // namespace cufuse::detail
