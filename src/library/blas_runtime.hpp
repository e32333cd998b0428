// src/library/blas_runtime.hpp: what every cuBLAS/cuBLASLt/cuSOLVER call of src/library
// shares: the status checks (one macro per library, naming the status), the handles (one
// per (device, stream), created on first use, thread-safe, kept for the process), device
// workspace from the stream-ordered pool, and small device helpers (transpose by geam,
// identity fill, pointer arrays, reading info back).
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cufuse/dtype.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

[[noreturn]] void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line);
[[noreturn]] void throw_cusolver_error(cusolverStatus_t s, const char* call, const char* file, int line);
const char* cusolver_status_name(cusolverStatus_t s);

// cuBLAS and cuBLASLt calls (both return cublasStatus_t).
#define CUFUSE_CUBLAS_CHECK(call)                                                              \
  do {                                                                                         \
    cublasStatus_t cufuse_st_ = (call);                                                        \
    if (cufuse_st_ != CUBLAS_STATUS_SUCCESS)                                                   \
      ::cufuse::detail::throw_cublas_error(cufuse_st_, #call, __FILE__, __LINE__);             \
  } while (0)
#define CUFUSE_CUSOLVER_CHECK(call)                                                            \
  do {                                                                                         \
    cusolverStatus_t cufuse_st_ = (call);                                                      \
    if (cufuse_st_ != CUSOLVER_STATUS_SUCCESS)                                                 \
      ::cufuse::detail::throw_cusolver_error(cufuse_st_, #call, __FILE__, __LINE__);           \
  } while (0)

// Handles for the current device and `stream` (a cudaStream_t). The cuBLAS handle has the
// stream set and a workspace from the pool; the cuSOLVER handle has the stream set.
cublasHandle_t cublas_handle(void* stream);
cublasLtHandle_t cublaslt_handle(void* stream);
cusolverDnHandle_t cusolver_handle(void* stream);

// cuFFT plans (library/fft_cuda.cpp), kept with the handles above in the runtime context:
// one per key (kind, precision, sizes, batch, device), made by `make` under the table's lock
// at first use, kept for the process. A plan is used under its own lock (its stream and work
// area are set per call).
struct FftPlan {
  int handle = 0;  // cufftHandle
  size_t work_bytes = 0;
  std::mutex mu;
};
std::shared_ptr<FftPlan> fft_plan(const std::string& key, const std::function<void(FftPlan&)>& make);
// FFTW's planner is not thread-safe (library/fft_call.cpp's host reference plans under this).
std::mutex& fftw_planner_mutex();

// CUDA's data type of a cufuse float or complex dtype (f16, bf16, f32, f64, c64, c128).
cudaDataType_t cuda_data_type(DType t);

// nbytes of device memory from the pool, on the current stream (at least 1 byte).
std::shared_ptr<Storage> device_scratch(size_t nbytes);

// dst (row-major cols x rows, i.e. column-major rows x cols with ld = rows) = transpose of
// src (column-major cols x rows with ld = lds), float32, float64, complex64 or complex128, by
// cublas<t>geam; conj (complex only): the conjugate transpose.
//   In row-major words: dst[j][i] = src[i][j] for src row-major (rows x cols, row stride lds).
void transpose_device(DType t, int64_t rows, int64_t cols, const void* src, int64_t lds, void* dst, int64_t ldd,
                      void* stream, bool conj = false);
// batch identity matrices (n x n, contiguous) of dtype t (float32, float64 or complex) at dst.
void fill_identity(DType t, int64_t n, int64_t batch, void* dst, void* stream);
// The column-major n x n matrices P_b I (batch of them, contiguous at dst, float32 or
// float64): the identity with getrf's row interchanges (piv, 1-based, n per matrix) applied in
// order, i.e. what getrs makes of the identity before its two triangular solves (complex64 /
// complex128 too: the ones are real parts). Returns
// false, doing nothing, where n is too large for the swaps to run in one block's shared
// memory (the caller then solves against the identity with getrs).
bool fill_permuted_identity(DType t, int64_t n, int64_t batch, const int* piv, void* dst, void* stream);
// Its kernel's CUDA source (float32, float64 or complex); sets kname to the kernel's name.
std::string permuted_identity_source(DType t, std::string& kname);
// A device array holding the pointers base + i * stride_bytes, i < count.
std::shared_ptr<Storage> device_pointer_array(void* base, int64_t stride_bytes, int64_t count, void* stream);
// Copies count int32 values from the device (synchronizes the stream).
std::vector<int> read_device_ints(const void* src, int64_t count, void* stream);

}  // namespace cufuse::detail
