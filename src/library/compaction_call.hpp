// src/library/compaction_call.hpp: the nodes of a selection by mask
// (src/library_build/compaction.cpp builds them and chooses the form; codegen/compaction_kernels.hpp
// has the kernels).
// One pass:
//   SelectCall      mask (n,) and, for values, values (n * w,) -> two outputs: a buffer of n rows
//                   (the upper bound; shaped as the selection's result with n leading) whose first
//                   count rows are the selected ones, in order (the rest unwritten), and the count
//                   (int64, shape ()). Values or coordinates (SelectedRows) as CompactCall's.
// Two passes:
//   MaskCountCall   a bool mask (n,) -> int32 (tiles,): each tile's count of True elements.
//   CompactCall     mask (n,), the tiles' inclusive ends (the counts' cumsum, int32 or int64) and,
//                   for values, values (n * w,) -> count * w elements (shaped as the selection's
//                   result, so that no reshape copies it): the rows of w values
//                   whose mask element is True, in order; or, for coordinates, each selected
//                   row's coordinates (int64, w = their number) over a shape given by strides.
// On the device each is one generated kernel, a kernel step of the plan (emit_kernel): the mask
// (both) and the values (compact) may be computed there by their fused elementwise producers
// (fuses_input, the planner's fused-input rule); the host reference loops over the elements.
#pragma once
#include <vector>

#include "codegen/compaction_kernels.hpp"
#include "core/library_call.hpp"

namespace cufuse::detail {

class MaskCountCall : public LibraryCall {
 public:
  explicit MaskCountCall(int64_t n) : n_(n) {}
  int64_t tiles() const { return (n_ + kCompactTile - 1) / kCompactTile; }
  std::string describe() const override;
  int num_outputs() const override { return 1; }
  DType output_dtype(int) const override { return DType::Int32; }
  Shape output_shape(int) const override { return Shape{tiles()}; }
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override;
  bool emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers, const LeafBinding& bind,
                   KernelSpec& k) const override;
  bool fuses_input(int input) const override { return input == 0; }

 private:
  int64_t n_;
};

// What both forms' selection nodes select: rows of w elements of t where the mask (n elements)
// holds, copied from the values, or (coords) each selected row's int64 coordinates
// (row / strides[d]) % shape[d], w = strides.size().
struct SelectedRows {
  int64_t n = 0, w = 1;
  DType t = DType::Int64;
  bool coords = false;
  std::vector<int64_t> strides, shape;
  static SelectedRows values(int64_t n, int64_t w, DType t);
  static SelectedRows coordinates(int64_t n, std::vector<int64_t> strides, std::vector<int64_t> shape);
  std::string what() const;     // "coordinates" or the values' dtype
  uint64_t hash(uint64_t h) const;
  // The kernel's description: mask input 0, values input `values_input`, the tiles' ends (two
  // passes) or none (one pass).
  CompactPass pass(const std::vector<const Node*>& inputs, int values_input, const Node* ends, int out_buffer) const;
  // The host reference: places the selected rows (in order) at out, `capacity` rows at most; the
  // starts of the tiles from `ends` (the tiles' inclusive ends, as the two passes have them) or,
  // with none, counted as it goes (the one pass). Returns the count of selected rows.
  int64_t reference(const std::vector<const HostArray*>& inputs, int values_input, const HostArray* ends,
                    int64_t capacity, unsigned char* out) const;
};

class SelectCall : public LibraryCall {
 public:
  // The buffer shaped `buffer` (n * w elements); values are input 1.
  SelectCall(SelectedRows rows, Shape buffer);
  std::string describe() const override;
  int num_outputs() const override { return 2; }
  DType output_dtype(int i) const override { return i == 0 ? rows_.t : DType::Int64; }
  Shape output_shape(int i) const override { return i == 0 ? buffer_ : Shape{}; }
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override;
  bool emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers, const LeafBinding& bind,
                   KernelSpec& k) const override;
  bool fuses_input(int input) const override { return true; }  // mask, values

 private:
  SelectedRows rows_;
  Shape buffer_;
};

class CompactCall : public LibraryCall {
 public:
  // The result (count * w elements) shaped `out`; the tiles' ends (int32 or int64) are input 1,
  // values input 2.
  CompactCall(SelectedRows rows, int64_t count, DType ends, Shape out);
  std::string describe() const override;
  int num_outputs() const override { return 1; }
  DType output_dtype(int) const override { return rows_.t; }
  Shape output_shape(int) const override { return out_; }
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override;
  bool emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers, const LeafBinding& bind,
                   KernelSpec& k) const override;
  bool fuses_input(int input) const override { return input == 0 || input == 2; }  // mask, values

 private:
  SelectedRows rows_;
  int64_t count_;
  DType ends_;
  Shape out_;
};

}  // namespace cufuse::detail
