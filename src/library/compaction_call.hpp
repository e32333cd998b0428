// src/library/compaction_call.hpp: the two nodes of a selection by mask
// (src/library_build/compaction.cpp builds them; codegen/compaction_kernels.hpp has the kernels).
//   MaskCountCall   a bool mask (n,) -> int32 (tiles,): each tile's count of True elements.
//   CompactCall     mask (n,), the tiles' inclusive ends (the counts' cumsum, int32 or int64) and,
//                   for values from memory, values (n * w,) -> (count * w,): the rows of w values
//                   whose mask element is True, in order; or, for coordinates, each selected
//                   row's coordinates (int64, w = their number) over a shape given by strides.
// On the device each is one generated kernel; the host reference loops over the elements.
#pragma once
#include <functional>
#include <mutex>
#include <vector>

#include "codegen/compaction_kernels.hpp"
#include "compile/compiler.hpp"
#include "core/library_call.hpp"

namespace cufuse::detail {

// A compaction kernel compiled once per call object and arch (a cached plan replays the object);
// its source is made only then (`make`), not at every run.
class CompactKernelCache {
 public:
  CompiledKernelPtr get(const std::function<CompactKernel()>& make) const;

 private:
  mutable std::mutex mu_;
  mutable CompiledKernelPtr kernel_;
  mutable int arch_ = -1;
};

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
  bool generated_kernel(KernelSpec& k) const override;

 private:
  int64_t n_;
  CompactKernelCache kernel_;
};

class CompactCall : public LibraryCall {
 public:
  // Values from memory (input 2) of dtype t, w a row.
  CompactCall(int64_t n, int64_t w, int64_t count, DType t, DType ends);
  // Coordinates: w = strides.size() coordinates a row, (row / strides[d]) % shape[d].
  CompactCall(int64_t n, int64_t count, DType ends, std::vector<int64_t> strides, std::vector<int64_t> shape);
  std::string describe() const override;
  int num_outputs() const override { return 1; }
  DType output_dtype(int) const override { return t_; }
  Shape output_shape(int) const override { return Shape{count_ * w_}; }
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override;
  bool generated_kernel(KernelSpec& k) const override;

 private:
  CompactKernel kernel() const;
  int64_t n_, w_, count_;
  DType t_, ends_;
  bool coords_;
  std::vector<int64_t> strides_, shape_;
  CompactKernelCache kernel_;
};

}  // namespace cufuse::detail
