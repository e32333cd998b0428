// src/library_build/fft.cpp: numpy.fft's functions (cufuse/fft.hpp) from FFT nodes
// (library/fft_call.hpp). The transformed axes are moved last (a transpose view: the planner's
// input kernel writes them contiguously, fused with the input's producer), transformed by one
// call per group of up to three axes (cuFFT's ranks), and moved back (a view); `n`/`s` crop
// (a slice) or zero-pad (pad, an index map) first, and the normalization is one lazy multiply
// by a weak scalar, fused into the kernel that reads the result. NumPy's rules: dtypes (float32
// and the half types in complex64; irfft/hfft of a half input give that half type), defaults
// of s and axes (_cook_nd_args), hfft/ihfft as irfft/rfft with the norm's direction swapped,
// and its errors. At the end, the half-precision transforms (fft_half & co, no NumPy name).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/library_call.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/fft.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/ops.hpp"
#include "library/fft_call.hpp"

namespace cufuse::fft {

namespace {

using detail::FftCall;
using detail::FftKind;

void check_norm(std::string_view norm) {
  if (norm != "backward" && norm != "ortho" && norm != "forward")
    throw ValueError(fmt::format("Invalid norm value {}; should be \"backward\",\"ortho\" or \"forward\".", norm));
}

// The factor a transform of N points takes under `norm` (backward: 1/N on the inverse).
double scale_of(std::string_view norm, bool inverse, double N) {
  check_norm(norm);
  if (norm == "ortho") return 1.0 / std::sqrt(N);
  return (norm == "backward") == inverse ? 1.0 / N : 1.0;
}

std::string_view swapped(std::string_view norm) {
  check_norm(norm);
  return norm == "backward" ? "forward" : (norm == "forward" ? "backward" : "ortho");
}

int axis_of(int axis, int nd, const char* what) {
  if (axis < -nd || axis >= nd)
    throw IndexError(fmt::format("{}: axis {} is out of bounds for array of dimension {}", what, axis, nd));
  return axis < 0 ? axis + nd : axis;
}

void check_n(int64_t n) {
  if (n < 1) throw ValueError(fmt::format("Invalid number of FFT data points ({}) specified.", n));
}

// The transform's precision: complex64 for complex64, float32 and the half types; else complex128.
DType cplx_for(DType t) {
  return t == DType::Complex64 || t == DType::Float32 || is_half(t) ? DType::Complex64 : DType::Complex128;
}

Array as(const Array& a, DType t) { return a.dtype() == t ? a : a.astype(t); }

// a along `axis` at length n: its first n elements, or zero-padded at the end.
Array resized(const Array& a, int axis, int64_t n) {
  check_n(n);
  const int64_t m = a.shape(axis);
  if (n == m) return a;
  if (n < m) {
    std::vector<Index> idx(static_cast<size_t>(a.ndim()), Index(slice(std::nullopt, std::nullopt)));
    idx[static_cast<size_t>(axis)] = Index(slice(0, n));
    return a.index(idx);
  }
  std::vector<std::pair<int64_t, int64_t>> w(static_cast<size_t>(a.ndim()), {0, 0});
  w[static_cast<size_t>(axis)] = {0, n - m};
  return pad(a, w);
}

// r times the norm's factor s; for a half-precision input, s as that half type holds it (NumPy
// computes the factor in the input's precision: ifft of float16 values scales by float16(1/n)).
Array scaled(const Array& r, double s, DType in) {
  if (is_half(in)) s = Scalar::typed(Scalar(s), in).to_double();
  return s == 1.0 ? r : r * s;
}

// One FFT node over `axes` of x (distinct, at most 3, in that order), the other axes batched.
Array call_over(FftKind kind, bool inverse, DType ct, const Array& x, const std::vector<int>& axes,
                const std::vector<int64_t>& n) {
  const int nd = x.ndim();
  Axes perm;
  for (int d = 0; d < nd; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) perm.push_back(d);
  for (int a : axes) perm.push_back(a);
  bool identity = true;
  for (int d = 0; d < nd; ++d) identity = identity && perm[static_cast<size_t>(d)] == d;
  const Array t = identity ? x : x.transpose(perm);
  auto call = std::make_shared<FftCall>(kind, inverse, ct, t.shape(), n);
  Array r;
  if (t.size() == 0) {
    r = zeros(call->output_shape(0), call->output_dtype(0));
  } else {
    detail::InputVec ins;
    ins.push_back(t.node());
    r = Array(detail::make_library_nodes(std::move(call), std::move(ins)).at(0));
  }
  if (identity) return r;
  Axes inv(static_cast<size_t>(nd));
  for (int d = 0; d < nd; ++d) inv[static_cast<size_t>(perm[static_cast<size_t>(d)])] = d;
  return r.transpose(inv);
}

// Where the call that ends at axes[end - 1] begins: up to three distinct axes (cuFFT's ranks).
size_t group_begin(const std::vector<int>& axes, size_t end) {
  size_t beg = end;
  while (beg > 0 && end - beg < 3 &&
         std::find(axes.begin() + static_cast<long>(beg), axes.begin() + static_cast<long>(end), axes[beg - 1]) ==
             axes.begin() + static_cast<long>(end))
    --beg;
  return beg;
}

// Complex-to-complex transforms of x (complex, already at its sizes) over `axes`, unscaled:
// groups of up to three distinct axes per call, from the last.
Array c2c_unscaled(Array x, const std::vector<int>& axes, bool inverse) {
  const DType ct = x.dtype();
  size_t end = axes.size();
  while (end > 0) {
    const size_t beg = group_begin(axes, end);
    std::vector<int> g(axes.begin() + static_cast<long>(beg), axes.begin() + static_cast<long>(end));
    std::vector<int64_t> n;
    for (int a : g) n.push_back(x.shape(a));
    x = call_over(FftKind::C2C, inverse, ct, x, g, n);
    end = beg;
  }
  return x;
}

// NumPy's _cook_nd_args: the axes (normalized) and sizes of an N-D transform.
void cook(const Array& a, const std::optional<Sizes>& s, const std::optional<AxisList>& axes, bool inverse_real,
          std::vector<int>& ax, std::vector<int64_t>& n, const char* what) {
  const int nd = a.ndim();
  if (axes) {
    for (int v : *axes) ax.push_back(axis_of(v, nd, what));
  } else if (s) {
    if (static_cast<int>(s->size()) > nd)
      throw ValueError(fmt::format("{}: s has {} sizes, the array {} axes", what, s->size(), nd));
    for (int i = nd - static_cast<int>(s->size()); i < nd; ++i) ax.push_back(i);
  } else {
    for (int i = 0; i < nd; ++i) ax.push_back(i);
  }
  if (s) {
    if (s->size() != ax.size()) throw ValueError("Shape and axes have different lengths.");
    n = *s;
  } else {
    for (int v : ax) n.push_back(a.shape(v));
    if (inverse_real && !n.empty()) n.back() = 2 * (n.back() - 1);
  }
  for (int64_t v : n) check_n(v);
}

Array require(const Array& a, const char* what) {
  if (!a.defined()) throw ValueError(fmt::format("{}: the Array handle is empty", what));
  return a;
}

Array c2c_nd(const Array& a0, const std::optional<Sizes>& s, const std::optional<AxisList>& axes, bool inverse,
             std::string_view norm, const char* what) {
  const Array& a = require(a0, what);
  check_norm(norm);
  std::vector<int> ax;
  std::vector<int64_t> n;
  cook(a, s, axes, false, ax, n, what);
  Array x = as(a, cplx_for(a.dtype()));
  double N = 1;
  for (size_t i = 0; i < ax.size(); ++i) {
    x = resized(x, ax[i], n[i]);
    N *= static_cast<double>(n[i]);
  }
  return scaled(c2c_unscaled(x, ax, inverse), scale_of(norm, inverse, N), a.dtype());
}

void require_real(const Array& a, const char* what) {
  if (is_complex(a.dtype()))
    throw TypeError(fmt::format("{}: the input must be real (got {})", what, name(a.dtype())));
}

// rfftn without its scale: one R2C call over the last group of up to three distinct axes (the
// last halved; cuFFT's multi-dimensional R2C, so rfft2 of a small contiguous matrix is one call
// with no transposes; a large one takes the columns form above), then C2C forward over the axes
// before the group. The C2C along the other
// axes commutes with the R2C (both linear), so this is NumPy's order's result.
// rfft2 of large matrices (over the last two axes, in order): an R2C over the rows, then the
// C2C down the columns written transform axis last (FftCall::columns), the result that call's
// swapaxes view, strided as PyTorch's. cuFFT's 2-D plan runs its column pass in place with
// strided writes: H200, f32[4096, 4096], 0.128 ms against 0.039 + 0.068 ms this way. Small or
// many matrices keep the one 2-D call (one launch, no transposed result).
constexpr int64_t kColumnsMinElements = int64_t(1) << 18;
constexpr int64_t kColumnsMaxMatrices = 8;

bool rfft2_by_columns(const Array& x, const std::vector<int>& ax) {
  const int nd = x.ndim();
  if (ax.size() != 2 || ax[0] != nd - 2 || ax[1] != nd - 1) return false;
  const int64_t rows = x.shape(nd - 2), cols = x.shape(nd - 1) / 2 + 1;
  int64_t matrices = 1;
  for (int d = 0; d + 2 < nd; ++d) matrices *= x.shape(d);
  return matrices >= 1 && matrices <= kColumnsMaxMatrices && rows > 1 && rows * cols >= kColumnsMinElements;
}

Array rfftn_unscaled(const Array& a, const std::vector<int>& ax, const std::vector<int64_t>& n) {
  const DType ct = cplx_for(a.dtype());
  Array x = as(a, real_dtype(ct));
  for (size_t i = 0; i < ax.size(); ++i) x = resized(x, ax[i], n[i]);
  if (rfft2_by_columns(x, ax)) {
    const int nd = x.ndim();
    const Array r = call_over(FftKind::R2C, false, ct, x, {nd - 1}, {n[1]});
    detail::InputVec ins;
    ins.push_back(r.node());
    const Array c(detail::make_library_nodes(FftCall::columns(false, ct, r.shape()), std::move(ins)).at(0));
    return c.swapaxes(nd - 2, nd - 1);
  }
  const size_t beg = group_begin(ax, ax.size());
  const std::vector<int> g(ax.begin() + static_cast<long>(beg), ax.end());
  const std::vector<int64_t> gn(n.begin() + static_cast<long>(beg), n.end());
  Array r = call_over(FftKind::R2C, false, ct, x, g, gn);
  return c2c_unscaled(r, std::vector<int>(ax.begin(), ax.begin() + static_cast<long>(beg)), false);
}

// irfftn without its scale: C2C inverse over all but the last axis, then C2R to n.back().
Array irfftn_unscaled(const Array& a, const std::vector<int>& ax, const std::vector<int64_t>& n) {
  const DType ct = cplx_for(a.dtype());
  Array x = as(a, ct);
  for (size_t i = 0; i + 1 < ax.size(); ++i) x = resized(x, ax[i], n[i]);
  x = resized(x, ax.back(), n.back() / 2 + 1);
  x = c2c_unscaled(x, std::vector<int>(ax.begin(), ax.end() - 1), true);
  Array r = call_over(FftKind::C2R, true, ct, x, {ax.back()}, {n.back()});
  return is_half(a.dtype()) ? r.astype(a.dtype()) : r;  // NumPy gives a half input's dtype back
}

double product(const std::vector<int64_t>& n) {
  double N = 1;
  for (int64_t v : n) N *= static_cast<double>(v);
  return N;
}

}  // namespace

Array fft(const Array& a, std::optional<int64_t> n, int axis, std::string_view norm) {
  const int ax = axis_of(axis, require(a, "fft").ndim(), "fft");
  return c2c_nd(a, Sizes{n ? *n : a.shape(ax)}, AxisList{ax}, false, norm, "fft");
}
Array ifft(const Array& a, std::optional<int64_t> n, int axis, std::string_view norm) {
  const int ax = axis_of(axis, require(a, "ifft").ndim(), "ifft");
  return c2c_nd(a, Sizes{n ? *n : a.shape(ax)}, AxisList{ax}, true, norm, "ifft");
}
Array rfft(const Array& a, std::optional<int64_t> n, int axis, std::string_view norm) {
  require_real(require(a, "rfft"), "rfft");
  const int ax = axis_of(axis, a.ndim(), "rfft");
  const int64_t len = n ? *n : a.shape(ax);
  check_n(len);
  return scaled(rfftn_unscaled(a, {ax}, {len}), scale_of(norm, false, double(len)), a.dtype());
}
Array irfft(const Array& a, std::optional<int64_t> n, int axis, std::string_view norm) {
  const int ax = axis_of(axis, require(a, "irfft").ndim(), "irfft");
  const int64_t len = n ? *n : 2 * (a.shape(ax) - 1);
  check_n(len);
  return scaled(irfftn_unscaled(a, {ax}, {len}), scale_of(norm, true, double(len)), a.dtype());
}
Array hfft(const Array& a, std::optional<int64_t> n, int axis, std::string_view norm) {
  require(a, "hfft");
  return irfft(conjugate(a), n, axis, swapped(norm));
}
Array ihfft(const Array& a, std::optional<int64_t> n, int axis, std::string_view norm) {
  return conjugate(rfft(a, n, axis, swapped(norm)));
}

Array fftn(const Array& a, std::optional<Sizes> s, std::optional<AxisList> axes, std::string_view norm) {
  return c2c_nd(a, s, axes, false, norm, "fftn");
}
Array ifftn(const Array& a, std::optional<Sizes> s, std::optional<AxisList> axes, std::string_view norm) {
  return c2c_nd(a, s, axes, true, norm, "ifftn");
}
Array rfftn(const Array& a, std::optional<Sizes> s, std::optional<AxisList> axes, std::string_view norm) {
  require_real(require(a, "rfftn"), "rfftn");
  check_norm(norm);
  std::vector<int> ax;
  std::vector<int64_t> n;
  cook(a, s, axes, false, ax, n, "rfftn");
  if (ax.empty()) throw ValueError("rfftn: at least one axis must be transformed");
  return scaled(rfftn_unscaled(a, ax, n), scale_of(norm, false, product(n)), a.dtype());
}
Array irfftn(const Array& a, std::optional<Sizes> s, std::optional<AxisList> axes, std::string_view norm) {
  require(a, "irfftn");
  check_norm(norm);
  std::vector<int> ax;
  std::vector<int64_t> n;
  cook(a, s, axes, !s, ax, n, "irfftn");
  if (ax.empty()) throw ValueError("irfftn: at least one axis must be transformed");
  return scaled(irfftn_unscaled(a, ax, n), scale_of(norm, true, product(n)), a.dtype());
}
Array fft2(const Array& a, std::optional<Sizes> s, AxisList axes, std::string_view norm) {
  return fftn(a, std::move(s), std::move(axes), norm);
}
Array ifft2(const Array& a, std::optional<Sizes> s, AxisList axes, std::string_view norm) {
  return ifftn(a, std::move(s), std::move(axes), norm);
}
Array rfft2(const Array& a, std::optional<Sizes> s, AxisList axes, std::string_view norm) {
  return rfftn(a, std::move(s), std::move(axes), norm);
}
Array irfft2(const Array& a, std::optional<Sizes> s, AxisList axes, std::string_view norm) {
  return irfftn(a, std::move(s), std::move(axes), norm);
}

Array fftfreq(int64_t n, double d, DType dtype) {
  if (n < 1) throw ValueError(fmt::format("fftfreq: n must be positive (got {})", n));
  const Array i = arange(n);
  const Array k = where(i < (n - 1) / 2 + 1, i, i - n);
  return as(k * (1.0 / (static_cast<double>(n) * d)), dtype);
}
Array rfftfreq(int64_t n, double d, DType dtype) {
  if (n < 1) throw ValueError(fmt::format("rfftfreq: n must be positive (got {})", n));
  return as(arange(n / 2 + 1) * (1.0 / (static_cast<double>(n) * d)), dtype);
}

namespace {
Array shift(const Array& x, const std::optional<AxisList>& axes, bool inverse, const char* what) {
  require(x, what);
  std::vector<int> ax;
  if (axes) {
    for (int a : *axes) ax.push_back(axis_of(a, x.ndim(), what));
  } else {
    for (int a = 0; a < x.ndim(); ++a) ax.push_back(a);
  }
  if (ax.empty()) return x;
  std::vector<int64_t> by;
  for (int a : ax) by.push_back(inverse ? -(x.shape(a) / 2) : x.shape(a) / 2);
  return roll(x, by, ax);
}
}  // namespace

Array fftshift(const Array& x, std::optional<AxisList> axes) { return shift(x, axes, false, "fftshift"); }
Array ifftshift(const Array& x, std::optional<AxisList> axes) { return shift(x, axes, true, "ifftshift"); }

// ---------------------------------------------------------------- half precision
// (cufuse/fft.hpp: *_half) FFT nodes of precision float16: complex32 values as float16 pairs
// (the last axis, of length 2), power-of-two sizes, the norm's factor a lazy float16 multiply.
namespace {

// Checks x (float16, at least rank axes of values, plus the pair axis where `pairs`) and
// returns the shape of its values (the pair axis dropped).
Shape half_values(const Array& x, int rank, bool pairs, const char* what) {
  require(x, what);
  if (x.dtype() != DType::Float16)
    throw TypeError(fmt::format("{}: the input must be float16 (got {}); complex32 is float16 pairs", what,
                                name(x.dtype())));
  if (rank < 1 || rank > 3) throw ValueError(fmt::format("{}: rank must be 1, 2 or 3 (got {})", what, rank));
  if (x.ndim() < rank + (pairs ? 1 : 0) || (pairs && x.shape(x.ndim() - 1) != 2))
    throw ValueError(fmt::format("{}: expected {} axes of values{} (got shape {})", what, rank,
                                 pairs ? " and a last axis of 2 (real, imaginary)" : "", to_string(x.shape())));
  Shape v = x.shape();
  if (pairs) v.pop_back();
  return v;
}

std::vector<int64_t> half_sizes(const Shape& v, int rank, bool c2r, const char* what) {
  std::vector<int64_t> n;
  for (int d = v.ndim() - rank; d < v.ndim(); ++d) n.push_back(v[d]);
  if (c2r) n.back() = 2 * (n.back() - 1);
  for (int64_t m : n)
    if (m < 1 || (m & (m - 1)) != 0)
      throw ValueError(fmt::format("{}: cuFFT's half-precision transforms take power-of-two sizes (got {})", what, m));
  return n;
}

Array half_call(FftKind kind, bool inverse, const Array& x, const Shape& values, const std::vector<int64_t>& n,
                std::string_view norm) {
  check_norm(norm);
  auto call = std::make_shared<FftCall>(kind, inverse, DType::Float16, values, n);
  Array r;
  if (x.size() == 0) {
    r = zeros(call->output_shape(0), DType::Float16);
  } else {
    detail::InputVec ins;
    ins.push_back(x.node());
    r = Array(detail::make_library_nodes(std::move(call), std::move(ins)).at(0));
  }
  double N = 1;
  for (int64_t m : n) N *= static_cast<double>(m);
  return scaled(r, scale_of(norm, inverse, N), DType::Float16);
}

Array c2c_half(const Array& x, int rank, bool inverse, std::string_view norm, const char* what) {
  const Shape v = half_values(x, rank, true, what);
  return half_call(FftKind::C2C, inverse, x, v, half_sizes(v, rank, false, what), norm);
}

}  // namespace

Array fft_half(const Array& x, int rank, std::string_view norm) { return c2c_half(x, rank, false, norm, "fft_half"); }
Array ifft_half(const Array& x, int rank, std::string_view norm) { return c2c_half(x, rank, true, norm, "ifft_half"); }

Array rfft_half(const Array& x, int rank, std::string_view norm) {
  const Shape v = half_values(x, rank, false, "rfft_half");
  return half_call(FftKind::R2C, false, x, v, half_sizes(v, rank, false, "rfft_half"), norm);
}

Array irfft_half(const Array& x, int rank, std::string_view norm) {
  const Shape v = half_values(x, rank, true, "irfft_half");
  return half_call(FftKind::C2R, true, x, v, half_sizes(v, rank, true, "irfft_half"), norm);
}

}  // namespace cufuse::fft
