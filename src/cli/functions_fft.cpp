// src/cli/functions_fft.cpp: the function table's rows for numpy.fft (cufuse/fft.hpp), named
// "fft.<name>" as np.fft.<name> reaches them (evaluator.cpp's module attributes). functions.cpp
// appends these rows to THE function table.
#include "cli/registry.hpp"
#include "cufuse/fft.hpp"

namespace cufuse::cli {

namespace {

std::optional<int64_t> opt_n(const Args& a) { return a.given("n") ? std::optional<int64_t>(a.integer("n")) : std::nullopt; }
std::optional<fft::Sizes> opt_s(const Args& a) {
  if (!a.given("s")) return std::nullopt;
  const Shape s = a.shape("s");
  return fft::Sizes(s.begin(), s.end());
}
std::optional<fft::AxisList> opt_axes(const Args& a) {
  if (!a.given("axes")) return std::nullopt;
  const Axes ax = a.axes("axes");
  return fft::AxisList(ax.begin(), ax.end());
}
// fft2 & co: axes None means (-2, -1) (the table takes no tuple defaults)
fft::AxisList axes2(const Args& a) { return a.given("axes") ? *opt_axes(a) : fft::AxisList{-2, -1}; }
std::string norm_of(const Args& a) { return a.given("norm") ? a.string("norm") : "backward"; }

template <Array (*F)(const Array&, std::optional<int64_t>, int, std::string_view)>
Value one_d(const Args& a) {
  return Value::of(F(a.array("a"), opt_n(a), static_cast<int>(a.integer("axis")), norm_of(a)));
}
template <Array (*F)(const Array&, std::optional<fft::Sizes>, std::optional<fft::AxisList>, std::string_view)>
Value n_d(const Args& a) {
  return Value::of(F(a.array("a"), opt_s(a), opt_axes(a), norm_of(a)));
}
template <Array (*F)(const Array&, std::optional<fft::Sizes>, fft::AxisList, std::string_view)>
Value two_d(const Args& a) {
  return Value::of(F(a.array("a"), opt_s(a), axes2(a), norm_of(a)));
}
template <Array (*F)(const Array&, int, std::string_view)>
Value half(const Args& a) {
  return Value::of(F(a.array("x"), static_cast<int>(a.integer("rank")), norm_of(a)));
}
template <Array (*F)(int64_t, double, DType)>
Value freq(const Args& a) {
  return Value::of(F(a.integer("n"), a.real("d"), a.dtype("dtype").value_or(DType::Float64)));
}
template <Array (*F)(const Array&, std::optional<fft::AxisList>)>
Value shift(const Args& a) {
  return Value::of(F(a.array("x"), opt_axes(a)));
}

}  // namespace

const std::vector<FunctionRow>& fft_function_rows() {
  static const std::vector<FunctionRow> rows = {
    {"fft.fft", "a, n=None, axis=-1, norm=None", one_d<fft::fft>, false, "discrete Fourier transform (cuFFT)"},
    {"fft.ifft", "a, n=None, axis=-1, norm=None", one_d<fft::ifft>, false, "inverse DFT"},
    {"fft.rfft", "a, n=None, axis=-1, norm=None", one_d<fft::rfft>, false, "DFT of a real input, n/2+1 frequencies"},
    {"fft.irfft", "a, n=None, axis=-1, norm=None", one_d<fft::irfft>, false, "inverse of rfft"},
    {"fft.hfft", "a, n=None, axis=-1, norm=None", one_d<fft::hfft>, false, "DFT of a Hermitian-symmetric signal"},
    {"fft.ihfft", "a, n=None, axis=-1, norm=None", one_d<fft::ihfft>, false, "inverse of hfft"},
    {"fft.fftn", "a, s=None, axes=None, norm=None", n_d<fft::fftn>, false, "N-D DFT"},
    {"fft.ifftn", "a, s=None, axes=None, norm=None", n_d<fft::ifftn>, false, "N-D inverse DFT"},
    {"fft.rfftn", "a, s=None, axes=None, norm=None", n_d<fft::rfftn>, false, "N-D DFT of a real input"},
    {"fft.irfftn", "a, s=None, axes=None, norm=None", n_d<fft::irfftn>, false, "inverse of rfftn"},
    {"fft.fft2", "a, s=None, axes=None, norm=None", two_d<fft::fft2>, false, "2-D DFT"},
    {"fft.ifft2", "a, s=None, axes=None, norm=None", two_d<fft::ifft2>, false, "2-D inverse DFT"},
    {"fft.rfft2", "a, s=None, axes=None, norm=None", two_d<fft::rfft2>, false, "2-D DFT of a real input"},
    {"fft.irfft2", "a, s=None, axes=None, norm=None", two_d<fft::irfft2>, false, "inverse of rfft2"},
    {"fft.fftfreq", "n, d=1.0, dtype=None", freq<fft::fftfreq>, false, "sample frequencies (a generator)"},
    {"fft.rfftfreq", "n, d=1.0, dtype=None", freq<fft::rfftfreq>, false, "non-negative sample frequencies"},
    {"fft.fft_half", "x, rank=1, norm=None", half<fft::fft_half>, false,
     "half-precision DFT of complex32 (float16 pairs, last axis 2); power-of-two sizes"},
    {"fft.ifft_half", "x, rank=1, norm=None", half<fft::ifft_half>, false, "inverse of fft_half"},
    {"fft.rfft_half", "x, rank=1, norm=None", half<fft::rfft_half>, false,
     "half-precision DFT of real float16, n/2+1 frequencies as float16 pairs"},
    {"fft.irfft_half", "x, rank=1, norm=None", half<fft::irfft_half>, false, "inverse of rfft_half"},
    {"fft.fftshift", "x, axes=None", shift<fft::fftshift>, false, "zero frequency to the middle (a roll)"},
    {"fft.ifftshift", "x, axes=None", shift<fft::ifftshift>, false, "inverse of fftshift"},
  };
  return rows;
}

}  // namespace cufuse::cli
