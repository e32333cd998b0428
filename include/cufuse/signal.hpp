// cufuse/signal.hpp: direct convolution and correlation, lazy like every op.
//
//   cufuse::convolve(a, v, "full")       NumPy's np.convolve (modes full, same, valid)
//   cufuse::correlate(a, v, "valid")     NumPy's np.correlate
//   cufuse::signal::convolve2d(in1, in2, "full", "fill", 0)    scipy.signal.convolve2d
//   cufuse::signal::correlate2d(in1, in2, "full", "fill", 0)   scipy.signal.correlate2d
//
// Semantics are NumPy's and SciPy's: output shapes and the centring of "same", the input
// swap of "valid" mode (and of np.convolve when v is longer), boundaries "fill"/"pad" (with
// `fillvalue`), "wrap"/"circular" and "symm"/"symmetric", the result dtype of the two
// inputs (integer sums wrap as NumPy's do; bool is "any of a AND b", as np.convolve gives;
// float16/bfloat16 sum in float32). Each call is one node of the DAG: one generated kernel
// that reads its inputs through their strides (views cost no copy; a lazy input is
// materialized first) and whose result feeds later elementwise work like any array.
// Bad input (wrong ndim, an unknown mode or boundary, an empty 1-D input, 'valid' shapes
// where neither input covers the other, a C++ (weak) fill value that np.asarray(fillvalue,
// result dtype) refuses: -1 or 256 for uint8, NaN or inf for an integer; SciPy converts it
// whenever the boundary is "fill", in 'valid' mode too) throws ValueError naming the shapes
// or the value.
#pragma once
#include <string_view>

#include "cufuse/array.hpp"
#include "cufuse/scalar.hpp"

namespace cufuse {

Array convolve(const Array& a, const Array& v, std::string_view mode = "full");
Array correlate(const Array& a, const Array& v, std::string_view mode = "valid");

namespace signal {
Array convolve2d(const Array& in1, const Array& in2, std::string_view mode = "full",
                 std::string_view boundary = "fill", Scalar fillvalue = 0);
Array correlate2d(const Array& in1, const Array& in2, std::string_view mode = "full",
                  std::string_view boundary = "fill", Scalar fillvalue = 0);
}  // namespace signal

}  // namespace cufuse
