// src/library/compaction_call.hpp: the two nodes of a selection by mask
// (src/library_build/compaction.cpp builds them; codegen/compaction_kernels.hpp has the kernels).
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
