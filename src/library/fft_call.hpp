// src/library/fft_call.hpp: the FFT node. One call transforms the last `rank` (1 to 3) axes of
// its one input (row-major, contiguous: the planner writes a lazy or strided input first, its
// producer fused into that kernel), batched over the axes before them, unnormalized (the
// builder, src/library_build/fft.cpp, scales the result lazily, fused with its reader):
//   C2C  complex -> complex, forward (exp(-2 pi i ...)) or inverse (exp(+2 pi i ...));
//   R2C  real -> complex, the last axis n -> n / 2 + 1 (the non-negative frequencies);
//   C2R  complex -> real, the last axis n / 2 + 1 -> n (the input taken as Hermitian).
//   C2C along columns: a rank-1 C2C along the input's axis -2, batched over its last axis and
//   the axes before; the output holds the transform axis LAST (in (B, N, W) -> out (B, W, N)),
//   so both its reads (strided, a sector a column group) and its writes (contiguous) stay
//   cheap. rfft2 uses it after an R2C over the rows and returns the output's swapaxes view
//   (PyTorch's layout: H200, f32[4096, 4096], 0.108 ms against 0.128 for cuFFT's 2-D plan,
//   whose own column pass writes in place with strides).
// float32 / complex64 stay single precision; float64 / complex128 double. Precision float16 is
// cuFFT's half transforms (fft.hpp's *_half: power-of-two sizes): a complex side is complex32
// stored as float16 (re, im) pairs, so its array has one more axis, of length 2, than the
// call's shapes count; the host reference computes those in float32 and rounds once.
//
// On the device (library/fft_cuda.cpp): cuFFT, its plan from the cache of library/blas_runtime
// (keyed by kind, precision, sizes, batch and device; the contiguous layout is the only one
// the call takes), its work area from the pool, on the call's stream; a C2R input is copied
// first (cuFFT may overwrite it). On the host: FFTW (library/fft_call.cpp), planned
// FFTW_ESTIMATE under the planner's lock.
#pragma once
#include <memory>
#include <vector>

#include "core/library_call.hpp"

namespace cufuse::detail {

enum class FftKind : uint8_t { C2C, R2C, C2R };

class FftCall : public LibraryCall {
 public:
  // `in_shape`: the input's (batch axes, then the transform's); `n`: the transform's logical
  // sizes (C2C, R2C: the input's last axes; C2R: the output's, the input's last axis n/2 + 1).
  // `cdtype`: complex64, complex128 or float16 (complex32 pairs), the transform's precision.
  FftCall(FftKind kind, bool inverse, DType cdtype, Shape in_shape, std::vector<int64_t> n);
  // The C2C along columns (see the file comment): in_shape (..., N, W), complex64 or complex128.
  static std::shared_ptr<FftCall> columns(bool inverse, DType cdtype, Shape in_shape);
  std::string describe() const override;
  int num_outputs() const override { return 1; }
  DType output_dtype(int) const override {
    return half() ? DType::Float16 : kind_ == FftKind::C2R ? real_dtype(cdtype_) : cdtype_;
  }
  Shape output_shape(int) const override;
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override;

  FftKind kind() const { return kind_; }
  bool inverse() const { return inverse_; }
  DType cdtype() const { return cdtype_; }
  bool half() const { return cdtype_ == DType::Float16; }
  // Bytes of one complex element of the transform (a float16 pair for half precision).
  int64_t complex_bytes() const { return half() ? 4 : itemsize(cdtype_); }
  const std::vector<int64_t>& sizes() const { return n_; }
  int64_t batch() const { return batch_; }
  bool along_columns() const { return columns_; }
  // columns: the matrices (the product of the axes before the last two) and their width W.
  int64_t matrices() const;
  int64_t width() const { return in_shape_[in_shape_.ndim() - 1]; }
  // Elements of one transform's input and output (per batch entry).
  int64_t in_dist() const;
  int64_t out_dist() const;

 private:
  FftKind kind_;
  bool inverse_;
  DType cdtype_;
  Shape in_shape_;
  std::vector<int64_t> n_;
  int64_t batch_ = 1;
  bool columns_ = false;
};

}  // namespace cufuse::detail
