// src/library_build/convolve.cpp: NumPy's convolve/correlate and scipy.signal's convolve2d/
// correlate2d on the direct convolution node (library/convolve_call.hpp): argument checks
// with NumPy's and SciPy's messages, the input swaps, output shapes and the offset of each
// mode in the node's correlation form.
#include <cmath>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "cufuse/signal.hpp"
#include "library/convolve_call.hpp"

namespace cufuse {

namespace {

using detail::ConvBoundary;
using detail::ConvSpec;

enum class Mode { Full, Same, Valid };

Mode parse_mode(std::string_view m, bool scipy) {
  if (m == "full") return Mode::Full;
  if (m == "same") return Mode::Same;
  if (m == "valid") return Mode::Valid;
  if (scipy) throw ValueError(fmt::format("Acceptable mode flags are 'valid', 'same', or 'full' (got '{}')", m));
  throw ValueError(fmt::format("mode must be one of 'valid', 'same', or 'full' (got '{}')", m));
}

// SciPy's names, with its undocumented "pad" for "fill" (scipy.signal._signaltools._boundarydict).
ConvBoundary parse_boundary(std::string_view b) {
  if (b == "fill" || b == "pad") return ConvBoundary::Fill;
  if (b == "wrap" || b == "circular") return ConvBoundary::Wrap;
  if (b == "symm" || b == "symmetric") return ConvBoundary::Symm;
  throw ValueError(fmt::format("Acceptable boundary flags are 'fill', 'circular' (or 'wrap'), and 'symmetric' "
                               "(or 'symm') (got '{}')", b));
}

// Does SciPy take v as the fill value of a result of dtype t? It converts it as
// np.asarray(v, dtype=t) does and raises ValueError where that fails: a Python int (a weak
// scalar) out of an integer t's range, a float that is not finite or whose truncation is. A
// strong scalar casts as a 0-d array does (no error); floats and bool take any value.
bool fill_converts(const Scalar& v, DType t) {
  if (!v.weak() || !is_integer(t) || v.kind() == Scalar::Kind::Bool) return true;
  if (v.kind() != Scalar::Kind::Float) return v.fits(t);
  const int bits = itemsize(t) * 8;
  const double f = std::trunc(v.to_double());
  const double lo = is_signed_int(t) ? -std::ldexp(1.0, bits - 1) : 0.0;
  const double end = std::ldexp(1.0, is_signed_int(t) ? bits - 1 : bits);  // exact powers of two
  return std::isfinite(f) && f >= lo && f < end;
}

// Output extent and the first output's offset into the full output, for one axis: image
// length n, filter length m. Correlations centre 'same' at m/2 (scipy's correlate2d) or
// (m-1)/2 (np.correlate, whose full output is the convolution with the reversed filter).
void extent(Mode mode, int64_t n, int64_t m, bool corr_centre, int64_t& len, int64_t& start) {
  switch (mode) {
    case Mode::Full: len = n + m - 1, start = 0; break;
    case Mode::Same: len = n, start = corr_centre ? m / 2 : (m - 1) / 2; break;
    case Mode::Valid: len = n - m + 1, start = m - 1; break;
  }
  if (len < 0) len = 0;
}

Array make_call(ConvSpec s, const Array& image, const Array& filter, const Array& in0, const Array& in1) {
  auto call = std::make_shared<detail::ConvolveCall>(std::move(s), image.dtype(), filter.dtype(), image.shape(),
                                                     filter.shape());
  detail::InputVec ins;
  ins.push_back(in0.node());
  ins.push_back(in1.node());
  auto nodes = detail::make_library_nodes(std::move(call), std::move(ins));
  return Array(nodes.at(0));
}

Array conv1d(const Array& a0, const Array& v0, std::string_view mode_name, bool corr) {
  const char* what = corr ? "correlate" : "convolve";
  const Mode mode = parse_mode(mode_name, false);
  auto as_vector = [&](const Array& x, const char* arg) {
    if (x.ndim() == 0) return x.reshape({1});
    if (x.ndim() > 1)
      throw ValueError(fmt::format("{}: {} must be 1-D, got shape {} (object too deep for desired array; "
                                   "signal::{}2d takes 2-D arrays)", what, arg, to_string(x.shape()), what));
    return x;
  };
  const Array a = as_vector(a0, "a"), v = as_vector(v0, "v");
  if (a.shape()[0] == 0) throw ValueError(fmt::format("{}: a cannot be empty", what));
  if (v.shape()[0] == 0) throw ValueError(fmt::format("{}: v cannot be empty", what));
  const bool swapped = v.shape()[0] > a.shape()[0];
  const Array& image = swapped ? v : a;
  const Array& filter = swapped ? a : v;
  const int64_t n = image.shape()[0], m = filter.shape()[0];
  ConvSpec s;
  s.out_dtype = promote_types(a.dtype(), v.dtype());
  s.flip = !corr;
  s.image_input = swapped ? 1 : 0;
  s.one_row = true;
  s.what = what;
  s.mode = std::string(mode_name);
  int64_t start = 0;
  extent(mode, n, m, false, s.out_cols, start);
  s.out_rows = 1;
  s.row0 = 0;
  s.col0 = start - (m - 1);
  s.fill = Scalar::typed(Scalar(0), s.out_dtype);
  Array out = make_call(std::move(s), image, filter, a, v);
  // np.correlate with the longer input second correlates the other way round, reversed.
  if (corr && swapped) out = out[{slice(std::nullopt, std::nullopt, -1)}];
  return out;
}

Array conv2d(const Array& in1, const Array& in2, std::string_view mode_name, std::string_view boundary_name,
             const Scalar& fillvalue, bool corr) {
  const char* what = corr ? "correlate2d" : "convolve2d";
  if (in1.ndim() != 2 || in2.ndim() != 2)
    throw ValueError(fmt::format("{} inputs must both be 2-D arrays (got shapes {} and {})", what,
                                 to_string(in1.shape()), to_string(in2.shape())));
  const Mode mode = parse_mode(mode_name, true);
  const ConvBoundary boundary = parse_boundary(boundary_name);
  const DType out_dtype = promote_types(in1.dtype(), in2.dtype());
  // SciPy converts the fill value whenever the boundary is 'fill', in 'valid' mode too.
  if (boundary == ConvBoundary::Fill && !fill_converts(fillvalue, out_dtype))
    throw ValueError(fmt::format("{}: could not cast `fillvalue` {} to the output type {}", what, fillvalue.str(),
                                 name(out_dtype)));
  const int64_t a0 = in1.shape()[0], a1 = in1.shape()[1], b0 = in2.shape()[0], b1 = in2.shape()[1];
  bool swapped = false;
  if (mode == Mode::Valid) {
    const bool ok1 = a0 >= b0 && a1 >= b1, ok2 = b0 >= a0 && b1 >= a1;
    if (!ok1 && !ok2)
      throw ValueError(fmt::format("For 'valid' mode, one must be at least as large as the other in every "
                                   "dimension (got shapes {} and {})", to_string(in1.shape()), to_string(in2.shape())));
    swapped = !ok1;
  }
  if (mode == Mode::Full && ((a0 == 0 && b0 == 0) || (a1 == 0 && b1 == 0)))  // SciPy: a -1 extent
    throw ValueError(fmt::format("{}: 'full' mode of shapes {} and {} is empty along an axis of both: "
                                 "negative dimensions are not allowed", what, to_string(in1.shape()),
                                 to_string(in2.shape())));
  const Array& image = swapped ? in2 : in1;
  const Array& filter = swapped ? in1 : in2;
  const int64_t m1 = image.shape()[0], n1 = image.shape()[1], m2 = filter.shape()[0], n2 = filter.shape()[1];
  ConvSpec s;
  s.out_dtype = out_dtype;
  // 'valid' reads no padding, and an empty filter reads nothing (every sum is empty: zeros,
  // whatever the boundary; a wrapped or mirrored empty image would have no element to read).
  s.boundary = mode == Mode::Valid || m2 * n2 == 0 ? ConvBoundary::Fill : boundary;
  s.flip = !corr;
  s.image_input = swapped ? 1 : 0;
  s.what = what;
  s.mode = std::string(mode_name);
  int64_t si = 0, sj = 0;
  extent(mode, m1, m2, corr, s.out_rows, si);
  extent(mode, n1, n2, corr, s.out_cols, sj);
  s.row0 = si - (m2 - 1);
  s.col0 = sj - (n2 - 1);
  s.fill = Scalar::typed(fillvalue, s.out_dtype);
  if (s.boundary != ConvBoundary::Fill && (m1 == 0 || n1 == 0) && s.out_rows * s.out_cols > 0 && m2 * n2 > 0)
    throw ValueError(fmt::format("{}: boundary '{}' needs a non-empty in1 (got shape {})", what, boundary_name,
                                 to_string(image.shape())));
  Array out = make_call(std::move(s), image, filter, in1, in2);
  // scipy's correlate2d with swapped inputs correlates the other way round, reversed.
  if (corr && swapped) out = out[{slice(std::nullopt, std::nullopt, -1), slice(std::nullopt, std::nullopt, -1)}];
  return out;
}

}  // namespace

Array convolve(const Array& a, const Array& v, std::string_view mode) { return conv1d(a, v, mode, false); }
Array correlate(const Array& a, const Array& v, std::string_view mode) { return conv1d(a, v, mode, true); }

namespace signal {
Array convolve2d(const Array& in1, const Array& in2, std::string_view mode, std::string_view boundary,
                 Scalar fillvalue) {
  return conv2d(in1, in2, mode, boundary, fillvalue, false);
}
Array correlate2d(const Array& in1, const Array& in2, std::string_view mode, std::string_view boundary,
                  Scalar fillvalue) {
  return conv2d(in1, in2, mode, boundary, fillvalue, true);
}
}  // namespace signal

}  // namespace cufuse
