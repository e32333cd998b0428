// src/library/convolve_call.hpp: the direct convolution node. One call computes, in the
// correlation form of codegen/conv_kernel.hpp, a 2-D (or one-row) convolution or
// correlation of an image by a filter with a boundary rule; src/library_build/convolve.cpp maps
// scipy's and NumPy's parameters (modes, swaps, offsets) onto it. On the device it is one
// generated kernel; the host reference sums in float64 (uint64, wrapping, for integers).
#pragma once
#include <mutex>

#include "codegen/conv_kernel.hpp"
#include "compile/compiler.hpp"
#include "core/library_call.hpp"

namespace cufuse::detail {

struct ConvSpec {
  DType out_dtype = DType::Float64;
  ConvBoundary boundary = ConvBoundary::Fill;
  bool flip = true;        // convolution (else correlation)
  int image_input = 0;     // which input is the image (the other is the filter)
  bool one_row = false;    // 1-D: both inputs and the output are vectors
  int64_t out_rows = 1, out_cols = 0;
  int64_t row0 = 0, col0 = 0;  // see ConvProblem
  Scalar fill = Scalar(0);     // already typed as out_dtype
  std::string what;            // "convolve2d", "correlate", ... for plan dumps
  std::string mode;            // "full", "same", "valid"
};

class ConvolveCall : public LibraryCall {
 public:
  ConvolveCall(ConvSpec s, DType image_dtype, DType filter_dtype, Shape image_shape, Shape filter_shape);
  const ConvSpec& spec() const { return s_; }
  std::string describe() const override;
  int num_outputs() const override { return 1; }
  DType output_dtype(int) const override { return s_.out_dtype; }
  Shape output_shape(int) const override;
  bool accepts_layout(int, const Layout&, DType) const override { return true; }  // read through strides
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override { return hash_; }
  bool generated_kernel(KernelSpec& k) const override;

  // The kernel problem for device (or host) pointers laid out as `inputs` say.
  ConvProblem problem(const std::vector<TensorRef>& inputs, void* out) const;

 private:
  // The call's kernel, made and compiled at its first run for an arch and kept: a cached plan
  // replays this call object, so later runs only write the parameters and launch.
  struct Compiled {
    int arch = -1;
    KernelSpec spec;
    CompiledKernelPtr kernel;
  };
  std::shared_ptr<const Compiled> compiled(const ConvProblem& p) const;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Compiled> compiled_;

  ConvSpec s_;
  DType img_t_, flt_t_;
  Shape img_shape_, flt_shape_;
  uint64_t hash_;
};

}  // namespace cufuse::detail
