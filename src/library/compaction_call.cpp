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

// ------------------------------------------------------------------------------ rows
SelectedRows SelectedRows::values(int64_t n, int64_t w, DType t) {
  SelectedRows r;
  r.n = n;
  r.w = w;
  r.t = t;
  return r;
}

SelectedRows SelectedRows::coordinates(int64_t n, std::vector<int64_t> strides, std::vector<int64_t> shape) {
  SelectedRows r;
  r.n = n;
  r.w = static_cast<int64_t>(strides.size());
  r.coords = true;
  if (r.w < 1 || r.w > kCompactMaxCoordDims || shape.size() != strides.size())
    throw InternalError(fmt::format("compaction: {} coordinates a row (1 to {})", r.w, kCompactMaxCoordDims));
  r.strides = std::move(strides);
  r.shape = std::move(shape);
  return r;
}

std::string SelectedRows::what() const { return coords ? "coordinates" : std::string(name(t)); }

uint64_t SelectedRows::hash(uint64_t h) const {
  for (int64_t v : {n, w, static_cast<int64_t>(t), int64_t(coords)}) h = hash_mix(h, static_cast<uint64_t>(v));
  for (size_t d = 0; d < strides.size(); ++d) {
    h = hash_mix(h, static_cast<uint64_t>(strides[d]));
    h = hash_mix(h, static_cast<uint64_t>(shape[d]));
  }
  return h;
}

CompactPass SelectedRows::pass(const std::vector<const Node*>& inputs, int values_input, const Node* ends,
                               int out_buffer) const {
  CompactPass c;
  c.mask = inputs.at(0);
  c.ends = ends;
  c.values = coords ? nullptr : inputs.at(static_cast<size_t>(values_input));
  c.w = w;
  c.strides = strides;
  c.shape = shape;
  c.out_buffer = out_buffer;
  return c;
}

int64_t SelectedRows::reference(const std::vector<const HostArray*>& inputs, int values_input, const HostArray* ends,
                                int64_t capacity, unsigned char* out) const {
  const unsigned char* m = inputs.at(0)->bytes.data();
  const unsigned char* v = coords ? nullptr : inputs.at(static_cast<size_t>(values_input))->bytes.data();
  const size_t vb = static_cast<size_t>(itemsize(t));
  const int64_t tiles = (n + kCompactTile - 1) / kCompactTile;
  int64_t k = 0;  // the next selected row's place
  for (int64_t tile = 0; tile < tiles; ++tile) {
    if (ends && tile > 0) k = ends->get_int64(tile - 1);  // the tile's start
    for (int64_t row = tile * kCompactTile; row < std::min(n, (tile + 1) * kCompactTile); ++row) {
      if (m[row] == 0) continue;
      if (k >= capacity) throw InternalError("compaction: more selected rows than counted");
      for (int64_t d = 0; d < w; ++d) {
        unsigned char* dst = out + static_cast<size_t>(k * w + d) * vb;
        if (coords) {
          const int64_t c = (row / strides[static_cast<size_t>(d)]) % shape[static_cast<size_t>(d)];
          std::memcpy(dst, &c, sizeof c);
        } else {
          std::memcpy(dst, v + static_cast<size_t>(row * w + d) * vb, vb);
        }
      }
      ++k;
    }
  }
  return k;
}

// ------------------------------------------------------------------------- one pass
SelectCall::SelectCall(SelectedRows rows, Shape buffer) : rows_(std::move(rows)), buffer_(std::move(buffer)) {
  if (numel(buffer_) != rows_.n * rows_.w) throw InternalError("selection: the buffer holds n * w elements");
}

std::string SelectCall::describe() const {
  return fmt::format("selection by mask in one pass ({},) of {} -> {} buffer {} (the upper bound) and the count, {} a "
                     "row, tiles of {}, generated kernel",
                     rows_.n, rows_.what(), name(rows_.t), to_string(buffer_), rows_.w, kCompactTile);
}

uint64_t SelectCall::attributes_hash() const {
  uint64_t h = rows_.hash(0x73656c65637431);
  for (auto d : buffer_) h = hash_mix(h, static_cast<uint64_t>(d));
  return h;
}

void SelectCall::run(const std::vector<TensorRef>&, const std::vector<TensorRef>&, void*) const {
  not_a_call("the selection");
}

bool SelectCall::emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers,
                             const LeafBinding& bind, KernelSpec& k) const {
  if (out_buffers.at(0) < 0) throw InternalError("selection: the plan keeps no buffer for the selected rows");
  CompactPass c = rows_.pass(inputs, 1, nullptr, out_buffers.at(0));
  c.count_buffer = out_buffers.at(1);
  k = emit_compact(c, bind);
  return true;
}

void SelectCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  const int64_t count = rows_.reference(inputs, 1, nullptr, rows_.n, outputs.at(0).bytes.data());
  std::memcpy(outputs.at(1).bytes.data(), &count, sizeof count);
}

// ------------------------------------------------------------------------ two passes
CompactCall::CompactCall(SelectedRows rows, int64_t count, DType ends, Shape out)
    : rows_(std::move(rows)), count_(count), ends_(ends), out_(std::move(out)) {
  if (numel(out_) != count_ * rows_.w) throw InternalError("compaction: the result's shape holds count * w elements");
}

std::string CompactCall::describe() const {
  return fmt::format("selection by mask in two passes, 2: compaction ({},) of {} -> {} {}, {} a row, tiles of {}, "
                     "generated kernel",
                     rows_.n, rows_.what(), name(rows_.t), to_string(out_), rows_.w, kCompactTile);
}

uint64_t CompactCall::attributes_hash() const {
  uint64_t h = rows_.hash(0x636f6d70616374);
  for (int64_t v : {count_, static_cast<int64_t>(ends_)}) h = hash_mix(h, static_cast<uint64_t>(v));
  return h;
}

void CompactCall::run(const std::vector<TensorRef>&, const std::vector<TensorRef>&, void*) const {
  not_a_call("the compaction");
}

bool CompactCall::emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers,
                              const LeafBinding& bind, KernelSpec& k) const {
  k = emit_compact(rows_.pass(inputs, 2, inputs.at(1), out_buffers.at(0)), bind);
  return true;
}

void CompactCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  if (rows_.reference(inputs, 2, inputs.at(1), count_, outputs.at(0).bytes.data()) != count_)
    throw InternalError("compaction: the selected rows are not the counted ones");
}

}  // namespace cufuse::detail
