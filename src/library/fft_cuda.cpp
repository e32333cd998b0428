// src/library/fft_cuda.cpp: the FFT node on the device (see fft_call.hpp): a cuFFT plan from
// the runtime context's cache (library/blas_runtime.hpp: fft_plan), made without its own work
// area (cufftSetAutoAllocation off) so each call takes one from the stream-ordered pool, run
// on the call's stream. Every cuFFT call's status is checked and named in the error.
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <cufftXt.h>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "library/blas_runtime.hpp"
#include "library/fft_call.hpp"
#include "runtime/device.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

namespace {

const char* cufft_status_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cufftResult";
  }
}

#define CUFUSE_CUFFT_CHECK(call)                                                                          \
  do {                                                                                                    \
    const cufftResult cufuse_r_ = (call);                                                                 \
    if (cufuse_r_ != CUFFT_SUCCESS)                                                                       \
      throw CudaError(fmt::format("cuFFT call {} failed: {} ({}) at {}:{}", #call, cufft_status_name(cufuse_r_), \
                                  static_cast<int>(cufuse_r_), __FILE__, __LINE__));                    \
  } while (0)

cufftType cufft_type(FftKind k, bool dbl) {
  switch (k) {
    case FftKind::C2C: return dbl ? CUFFT_Z2Z : CUFFT_C2C;
    case FftKind::R2C: return dbl ? CUFFT_D2Z : CUFFT_R2C;
    default: return dbl ? CUFFT_Z2D : CUFFT_C2R;
  }
}

}  // namespace

void FftCall::run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const {
  if (batch_ == 0 || numel(outputs.at(0).shape) == 0) return;
  require_device();
  const bool dbl = cdtype_ == DType::Complex128;
  const cufftType type = cufft_type(kind_, dbl);
  const int dev = current_device();
  // columns: one plan for one matrix (W transforms of stride W, written contiguous), run per matrix
  const int64_t plan_batch = columns_ ? width() : batch_;
  const std::string key = fmt::format("{}:{}{}:{}:{}:{}", dev, half() ? "f16-" : "", static_cast<int>(type),
                                      fmt::join(n_, ","), plan_batch, columns_ ? "columns" : "contiguous");
  auto plan = fft_plan(key, [&](FftPlan& p) {
    cufftHandle h = 0;
    CUFUSE_CUFFT_CHECK(cufftCreate(&h));
    try {
      CUFUSE_CUFFT_CHECK(cufftSetAutoAllocation(h, 0));
      long long n[3] = {};
      for (size_t i = 0; i < n_.size(); ++i) n[i] = n_[i];
      size_t work = 0;
      if (half()) {  // cuFFT's half precision: complex32 pairs (CUDA_C_16F), real float16 (CUDA_R_16F)
        const cudaDataType it = kind_ == FftKind::R2C ? CUDA_R_16F : CUDA_C_16F;
        const cudaDataType ot = kind_ == FftKind::C2R ? CUDA_R_16F : CUDA_C_16F;
        CUFUSE_CUFFT_CHECK(cufftXtMakePlanMany(h, static_cast<int>(n_.size()), n, nullptr, 1, in_dist(), it, nullptr,
                                               1, out_dist(), ot, batch_, &work, CUDA_C_16F));
      } else if (columns_) {
        long long embed[1] = {n[0]};
        CUFUSE_CUFFT_CHECK(cufftMakePlanMany64(h, 1, n, embed, width(), 1, embed, 1, n[0], type, width(), &work));
      } else {
        CUFUSE_CUFFT_CHECK(cufftMakePlanMany64(h, static_cast<int>(n_.size()), n, nullptr, 1, in_dist(), nullptr, 1,
                                               out_dist(), type, batch_, &work));
      }
      p.handle = h;
      p.work_bytes = work;
    } catch (...) {
      cufftDestroy(h);
      throw;
    }
  });
  std::lock_guard<std::mutex> lk(plan->mu);
  const cufftHandle h = plan->handle;
  std::shared_ptr<Storage> work = device_scratch(plan->work_bytes);
  CUFUSE_CUFFT_CHECK(cufftSetStream(h, static_cast<cudaStream_t>(stream)));
  CUFUSE_CUFFT_CHECK(cufftSetWorkArea(h, work->ptr));
  void* in = inputs.at(0).ptr;
  void* out = outputs.at(0).ptr;
  std::shared_ptr<Storage> copy;
  if (kind_ == FftKind::C2R) {  // cuFFT's C2R may overwrite its input, which may be a user's array
    const size_t bytes = static_cast<size_t>(batch_ * in_dist()) * static_cast<size_t>(complex_bytes());
    copy = device_scratch(bytes);
    CUFUSE_CUDA_CHECK(cudaMemcpyAsync(copy->ptr, in, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)));
    in = copy->ptr;
  }
  const int dir = inverse_ ? CUFFT_INVERSE : CUFFT_FORWARD;
  if (half()) {
    CUFUSE_CUFFT_CHECK(cufftXtExec(h, in, out, dir));
    return;
  }
  if (columns_) {
    const int64_t per = n_[0] * width();
    for (int64_t m = 0; m < matrices(); ++m) {
      if (type == CUFFT_C2C)
        CUFUSE_CUFFT_CHECK(cufftExecC2C(h, static_cast<cufftComplex*>(in) + m * per,
                                        static_cast<cufftComplex*>(out) + m * per, dir));
      else
        CUFUSE_CUFFT_CHECK(cufftExecZ2Z(h, static_cast<cufftDoubleComplex*>(in) + m * per,
                                        static_cast<cufftDoubleComplex*>(out) + m * per, dir));
    }
    return;
  }
  switch (type) {
    case CUFFT_C2C:
      CUFUSE_CUFFT_CHECK(cufftExecC2C(h, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out), dir));
      break;
    case CUFFT_Z2Z:
      CUFUSE_CUFFT_CHECK(
          cufftExecZ2Z(h, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(out), dir));
      break;
    case CUFFT_R2C:
      CUFUSE_CUFFT_CHECK(cufftExecR2C(h, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)));
      break;
    case CUFFT_D2Z:
      CUFUSE_CUFFT_CHECK(cufftExecD2Z(h, static_cast<cufftDoubleReal*>(in), static_cast<cufftDoubleComplex*>(out)));
      break;
    case CUFFT_C2R:
      CUFUSE_CUFFT_CHECK(cufftExecC2R(h, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)));
      break;
    default:
      CUFUSE_CUFFT_CHECK(cufftExecZ2D(h, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleReal*>(out)));
      break;
  }
}

}  // namespace cufuse::detail
