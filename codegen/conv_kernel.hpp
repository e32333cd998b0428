// codegen/conv_kernel.hpp: the generated kernel of a direct 2-D convolution or correlation
// (scipy.signal's convolve2d/correlate2d; NumPy's convolve/correlate run as one row). Every
// output is written in correlation form over the image extended by its boundary rule:
//   out[i, j] = sum_{p < kh, q < kw} ext(img)[i + row0 + p, j + col0 + q] * wf[p, q]
// with wf = the filter reversed on both axes for a convolution, as stored for a correlation.
// A block stages an input tile and a filter chunk in shared memory; each thread keeps a
// column of RY outputs in registers and slides down the tile, so every staged value feeds
// up to kh multiply-adds. The kernel is specialized on dtypes, boundary rule, direction and
// the filter chunk (its rows exactly up to 32, else 32-row chunks); sizes, strides, offsets
// and the fill value are parameters.
#pragma once
#include <cstdint>
#include <string>

#include "cufuse/enum_names.hpp"
#include "codegen/kernel.hpp"
#include "cufuse/dtype.hpp"

namespace cufuse::detail {

#define CUFUSE_CONV_BOUNDARIES(X) \
  X(Fill, "fill")                 \
  X(Wrap, "wrap")                 \
  X(Symm, "symm")
enum class ConvBoundary : uint8_t { CUFUSE_CONV_BOUNDARIES(CUFUSE_ENUMERATOR) };
inline const char* boundary_name(ConvBoundary b) { return CUFUSE_ENUM_NAME(CUFUSE_CONV_BOUNDARIES, b); }

struct ConvProblem {
  DType img_dtype = DType::Float64, flt_dtype = DType::Float64, out_dtype = DType::Float64;
  ConvBoundary boundary = ConvBoundary::Fill;
  bool flip = true;  // convolution: the filter is read reversed
  const void* img = nullptr;
  int64_t img_rows = 0, img_cols = 0, img_row_stride = 0, img_col_stride = 0;  // elements
  const void* flt = nullptr;
  int64_t kh = 0, kw = 0, flt_row_stride = 0, flt_col_stride = 0;
  void* out = nullptr;  // contiguous (out_rows, out_cols)
  int64_t out_rows = 0, out_cols = 0;
  int64_t row0 = 0, col0 = 0;  // ext(img) position of out[0, 0]'s first filter tap
  double fill = 0;             // the fill value, already in the result dtype (floating results)
  uint64_t fill_bits = 0;      // the same as a 64-bit integer (integer and bool results)
};

// The dtype a kernel accumulates in for a result dtype: float64, float32 (float32 and the
// half types) or uint64 (integers and bool: sums wrap modulo 2^64, then truncate as NumPy's
// integer arithmetic wraps).
DType conv_accumulate_dtype(DType out);

// Source, launch shape and parameters for one problem (pointers bound; numel 0 when the
// output is empty). The source and launch shape depend on the dtypes, boundary, direction,
// filter shape and output shape only: problems that differ in pointers, strides, offsets or
// fill value share them and differ in conv_param_bytes alone.
KernelSpec emit_conv_kernel(const ConvProblem& c);
std::vector<unsigned char> conv_param_bytes(const ConvProblem& c);

}  // namespace cufuse::detail
