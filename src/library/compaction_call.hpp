// src/library/compaction_call.hpp: the nodes of a selection by mask
// (src/library_build/compaction.cpp builds them and chooses the form; codegen/compaction_kernels.hpp
// has the kernels).
// One pass:
//   SelectCall      mask (n,) and, for values, values (n * w,) -> two outputs: a buffer of n rows
//                   (the upper bound; shaped as the selection's result with n leading) whose first
//                   count rows are the selected ones, in order (the rest unwritten), and the count
//                   (int64, shape ()). Values or coordinates as CompactCall's.
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

// The rows of w elements of t (itemsize vb) where mask m (n elements) holds, placed in order at
// out (coordinates: int64 (row / strides[d]) % shape[d] instead of values' rows); the starts of
// the tiles from `ends` (the tiles' inclusive ends, as the two passes have them) or, with none,
// counted as it goes (the one pass). Returns the count of selected rows. Both forms' host
// references.
struct CompactRef {
  int64_t n = 0, w = 1, vb = 1;
  const unsigned char* mask = nullptr;
  const unsigned char* values = nullptr;  // null: coordinates
  const std::vector<int64_t>* strides = nullptr;
  const std::vector<int64_t>* shape = nullptr;
  const HostArray* ends = nullptr;
  int64_t capacity = 0;  // rows out holds
};
int64_t compact_reference(const CompactRef& r, unsigned char* out);

class SelectCall : public LibraryCall {
 public:
  // Values (input 1) of dtype t, w a row; the buffer shaped `buffer` (n * w elements).
  SelectCall(int64_t n, int64_t w, DType t, Shape buffer);
  // Coordinates: w = strides.size() coordinates a row; the buffer shaped `buffer` ((n, w), or (n,)).
  SelectCall(int64_t n, std::vector<int64_t> strides, std::vector<int64_t> shape, Shape buffer);
  std::string describe() const override;
  int num_outputs() const override { return 2; }
  DType output_dtype(int i) const override { return i == 0 ? t_ : DType::Int64; }
  Shape output_shape(int i) const override { return i == 0 ? buffer_ : Shape{}; }
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override;
  bool emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers, const LeafBinding& bind,
                   KernelSpec& k) const override;
  bool fuses_input(int input) const override { return true; }  // mask, values

 private:
  int64_t n_, w_;
  DType t_;
  bool coords_;
  std::vector<int64_t> strides_, shape_;
  Shape buffer_;
};

class CompactCall : public LibraryCall {
 public:
  // Values (input 2) of dtype t, w a row; the result (count * w elements) shaped `out`.
  CompactCall(int64_t n, int64_t w, int64_t count, DType t, DType ends, Shape out);
  // Coordinates: w = strides.size() coordinates a row, (row / strides[d]) % shape[d]; the
  // result shaped `out` ((count, w), or (count,) for one).
  CompactCall(int64_t n, int64_t count, DType ends, std::vector<int64_t> strides, std::vector<int64_t> shape, Shape out);
  std::string describe() const override;
  int num_outputs() const override { return 1; }
  DType output_dtype(int) const override { return t_; }
  Shape output_shape(int) const override { return out_; }
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override;
  bool emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers, const LeafBinding& bind,
                   KernelSpec& k) const override;
  bool fuses_input(int input) const override { return input == 0 || input == 2; }  // mask, values

 private:
  int64_t n_, w_, count_;
  DType t_, ends_;
  bool coords_;
  std::vector<int64_t> strides_, shape_;
  Shape out_;
};

}  // namespace cufuse::detail
