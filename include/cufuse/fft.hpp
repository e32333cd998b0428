// cufuse/fft.hpp: numpy.fft's functions (NumPy 2's names, arguments, dtypes and errors).
//
// Each transform is a library node (cuFFT on the device, FFTW on the host reference backend):
// its input is written contiguously by one kernel that also computes whatever elementwise work
// produced it (fft(x * w) is one kernel and the FFT), and its output is read by the next
// kernel, which also applies the normalization (abs(fft(x * w)) ** 2 is one kernel, the FFT
// and one kernel). float32 (and float16/bfloat16, computed in float32) transforms to
// complex64, float64 and integers to complex128, as NumPy 2 does. `n`/`s` crop or zero-pad the
// input along the transformed axes; `norm` is "backward" (default), "ortho" or "forward".
// fftfreq and rfftfreq are generators, fftshift and ifftshift index maps (rolls): lazy, and
// fused into whatever reads them.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "cufuse/array.hpp"

namespace cufuse::fft {

using Sizes = std::vector<int64_t>;
using AxisList = std::vector<int>;

// 1-D transforms along `axis`.
Array fft(const Array& a, std::optional<int64_t> n = std::nullopt, int axis = -1, std::string_view norm = "backward");
Array ifft(const Array& a, std::optional<int64_t> n = std::nullopt, int axis = -1, std::string_view norm = "backward");
Array rfft(const Array& a, std::optional<int64_t> n = std::nullopt, int axis = -1, std::string_view norm = "backward");
Array irfft(const Array& a, std::optional<int64_t> n = std::nullopt, int axis = -1, std::string_view norm = "backward");
Array hfft(const Array& a, std::optional<int64_t> n = std::nullopt, int axis = -1, std::string_view norm = "backward");
Array ihfft(const Array& a, std::optional<int64_t> n = std::nullopt, int axis = -1, std::string_view norm = "backward");

// N-D transforms over `axes` (default: the last len(s) axes, or all axes), sizes `s`.
Array fftn(const Array& a, std::optional<Sizes> s = std::nullopt, std::optional<AxisList> axes = std::nullopt,
           std::string_view norm = "backward");
Array ifftn(const Array& a, std::optional<Sizes> s = std::nullopt, std::optional<AxisList> axes = std::nullopt,
            std::string_view norm = "backward");
Array rfftn(const Array& a, std::optional<Sizes> s = std::nullopt, std::optional<AxisList> axes = std::nullopt,
            std::string_view norm = "backward");
Array irfftn(const Array& a, std::optional<Sizes> s = std::nullopt, std::optional<AxisList> axes = std::nullopt,
             std::string_view norm = "backward");
// 2-D transforms (axes default (-2, -1)).
Array fft2(const Array& a, std::optional<Sizes> s = std::nullopt, AxisList axes = {-2, -1},
           std::string_view norm = "backward");
Array ifft2(const Array& a, std::optional<Sizes> s = std::nullopt, AxisList axes = {-2, -1},
            std::string_view norm = "backward");
Array rfft2(const Array& a, std::optional<Sizes> s = std::nullopt, AxisList axes = {-2, -1},
            std::string_view norm = "backward");
Array irfft2(const Array& a, std::optional<Sizes> s = std::nullopt, AxisList axes = {-2, -1},
             std::string_view norm = "backward");

// Half-precision transforms (cuFFT's CUDA_C_16F / CUDA_R_16F plans; power-of-two sizes only,
// as cuFFT requires; ValueError otherwise). NumPy has no complex32 dtype, so, as with CuPy's
// half-precision plans (cupy.cuda.cufft.XtPlanNd with dtype 'E', whose arrays are float16 with
// the last axis doubled), a complex32 array here is a float16 array whose last axis, of length
// 2, holds (real, imaginary): fft_half/ifft_half take and give (..., n1, [n2, [n3,]] 2);
// rfft_half takes real float16 (..., n) and gives (..., n/2 + 1, 2); irfft_half takes
// (..., m, 2) and gives real float16 (..., 2 (m - 1)). The transform runs over the last `rank`
// (1 to 3) axes of the values, batched over the others; `norm` as numpy.fft's, its factor
// applied in float16. The plain fft/rfft/... of float16 input compute in float32 and give
// complex64 (NumPy 2's and cupy.fft's dtypes); these are the opt-in half-precision path.
// Host reference (no half FFT library exists there): float32 FFTW on the float16 values, each
// result rounded to float16 once. cuFFT keeps float16 between its log2(n) stages, so the
// device's results differ from the reference by float16 roundings that grow with log2(n)
// (about 1e-3 of the spectrum's largest magnitude for random data of a few thousand points).
Array fft_half(const Array& x, int rank = 1, std::string_view norm = "backward");
Array ifft_half(const Array& x, int rank = 1, std::string_view norm = "backward");
Array rfft_half(const Array& x, int rank = 1, std::string_view norm = "backward");
Array irfft_half(const Array& x, int rank = 1, std::string_view norm = "backward");

// Sample frequencies: float64 (or `dtype`, a float dtype), generated where they are read.
Array fftfreq(int64_t n, double d = 1.0, DType dtype = DType::Float64);
Array rfftfreq(int64_t n, double d = 1.0, DType dtype = DType::Float64);
// The zero frequency moved to the middle (and back): rolls by n // 2 (and -(n // 2)) along
// `axes` (default all).
Array fftshift(const Array& x, std::optional<AxisList> axes = std::nullopt);
Array ifftshift(const Array& x, std::optional<AxisList> axes = std::nullopt);

}  // namespace cufuse::fft
