// src/library/sort_call.hpp: the sort node. One call sorts `rows` rows of `n` elements (its one
// input, row-major (rows, n)) ascending and stably by the keys of codegen/sort_kernels.hpp
// (NaNs last), giving the sorted values, each element's index within its row (argsort), or
// both. src/library_build/sorting.cpp moves the axis last and flattens the rest; the planner
// writes a strided or lazy input contiguously first, its producer fused into that kernel.
//
// On the device: one row, or a few long rows sorted one by one, are CUB's radix sort of the
// elements themselves (library/cub_sort.hpp: CUB maps their bits to the keys as it loads them
// in each pass and back as it stores them), written straight into the result; argsort adds a
// generated kernel before it writing the int32 iota and one after it widening the sorted int32
// indices to int64 (rows of 2^31 or more sort int64 indices). Many rows, one segmented sort:
// one generated key-loading kernel (unsigned keys, the iota, the segment offsets; none where
// the dtype is its own key and no index is asked), CUB, one generated store kernel mapping keys
// back to values (none for unsigned and bool values), the widening of the indices. Scratch
// comes from the pool on the call's stream. The host reference is std::stable_sort on the same
// keys.
//
// The search node (searchsorted) is here too: a sorted row `a` (n) and elements `v` (m) of one
// dtype, giving int64 insertion points by a binary search over the same keys (NumPy's order:
// NaN after everything, -0.0 == 0.0).
#pragma once
#include "core/library_call.hpp"

namespace cufuse::detail {

class SortCall : public LibraryCall {
 public:
  // `shape`: the outputs' shape, rows * n elements row-major ((rows, n) when empty), so a sort
  // along the last axis needs no reshape (a copy kernel) after the node.
  SortCall(DType t, int64_t rows, int64_t n, bool values, bool indices, std::string what, Shape shape = {});
  std::string describe() const override;
  int num_outputs() const override { return (values_ ? 1 : 0) + (indices_ ? 1 : 0); }
  DType output_dtype(int i) const override { return values_ && i == 0 ? t_ : DType::Int64; }
  Shape output_shape(int) const override { return shape_; }
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override;
  // -0.0 and 0.0 get one key where indices are asked (a stable argsort keeps their order, as
  // NumPy's); a sort of values alone keeps each value's bits (-0.0 before 0.0).
  bool zeros_equal() const { return indices_; }

 private:
  DType t_;
  int64_t rows_, n_;
  bool values_, indices_;
  std::string what_;
  Shape shape_;
};

class SearchCall : public LibraryCall {
 public:
  SearchCall(DType t, int64_t n, Shape v_shape, bool right);
  std::string describe() const override;
  int num_outputs() const override { return 1; }
  DType output_dtype(int) const override { return DType::Int64; }
  Shape output_shape(int) const override { return v_shape_; }
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override;

 private:
  DType t_;
  int64_t n_;
  Shape v_shape_;
  bool right_;
};

}  // namespace cufuse::detail
