// src/library/blas_runtime.cpp: status checks, per-(device, stream) handles and the small
// device helpers of src/library (see blas_runtime.hpp).
#include "library/blas_runtime.hpp"
#include "library/solver_typed.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "compile/compiler.hpp"
#include "cufuse/error.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/transfer.hpp"

namespace cufuse::detail {

void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  const char* nm = cublasGetStatusName(s);
  throw CudaError(fmt::format("cuBLAS call {} failed: {} ({}) at {}:{}", call, nm ? nm : "?", static_cast<int>(s),
                              file, line));
}

const char* cusolver_status_name(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
    default: return "CUSOLVER_STATUS_(other)";
  }
}

void throw_cusolver_error(cusolverStatus_t s, const char* call, const char* file, int line) {
  throw CudaError(fmt::format("cuSOLVER call {} failed: {} ({}) at {}:{}", call, cusolver_status_name(s),
                              static_cast<int>(s), file, line));
}

cudaDataType_t cuda_data_type(DType t) {
  switch (t) {
    case DType::Float16: return CUDA_R_16F;
    case DType::BFloat16: return CUDA_R_16BF;
    case DType::Float32: return CUDA_R_32F;
    case DType::Float64: return CUDA_R_64F;
    case DType::Complex64: return CUDA_C_32F;
    case DType::Complex128: return CUDA_C_64F;
    default: throw InternalError(fmt::format("no cuBLAS data type for {}", name(t)));
  }
}

// ------------------------------------------------------------------ handles
namespace {

// cuBLAS on Hopper uses up to 32 MiB of workspace for its fastest kernels.
constexpr size_t kCublasWorkspace = size_t(32) << 20;

struct HandleSet {
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  cusolverDnHandle_t solver = nullptr;
  std::shared_ptr<Storage> blas_workspace;  // lives as long as the handle (the process)
};

// Keyed by (device, stream): process state (runtime/context.hpp). Handles are never
// destroyed: they live for the process (a stream that goes away leaves a handle that nothing
// asks for again, or that a new stream with the same address reuses with the same stream value).
struct BlasHandles {
  static constexpr StateSlot kSlot = StateSlot::BlasHandles;
  std::mutex mu;
  std::map<std::pair<int, void*>, HandleSet> table;
  std::mutex fft_mu;  // the cuFFT plans (fft_plan) and FFTW's planner
  std::map<std::string, std::shared_ptr<FftPlan>> fft_plans;
  std::mutex fftw_mu;
};
std::mutex& handles_mutex() { return runtime().state<BlasHandles>().mu; }
std::map<std::pair<int, void*>, HandleSet>& handle_table() { return runtime().state<BlasHandles>().table; }

HandleSet& handles_for(void* stream) {
  require_device();
  const int dev = current_device();
  // Caller holds handles_mutex().
  return handle_table()[{dev, stream}];
}

}  // namespace

cublasHandle_t cublas_handle(void* stream) {
  std::lock_guard<std::mutex> lk(handles_mutex());
  HandleSet& h = handles_for(stream);
  if (!h.blas) {
    cublasHandle_t b = nullptr;
    CUFUSE_CUBLAS_CHECK(cublasCreate(&b));
    CUFUSE_CUBLAS_CHECK(cublasSetStream(b, static_cast<cudaStream_t>(stream)));
    auto ws = allocate_device(kCublasWorkspace);
    CUFUSE_CUBLAS_CHECK(cublasSetWorkspace(b, ws->ptr, kCublasWorkspace));
    h.blas_workspace = std::move(ws);
    h.blas = b;
  }
  return h.blas;
}

cublasLtHandle_t cublaslt_handle(void* stream) {
  std::lock_guard<std::mutex> lk(handles_mutex());
  HandleSet& h = handles_for(stream);
  if (!h.lt) CUFUSE_CUBLAS_CHECK(cublasLtCreate(&h.lt));
  return h.lt;
}

cusolverDnHandle_t cusolver_handle(void* stream) {
  std::lock_guard<std::mutex> lk(handles_mutex());
  HandleSet& h = handles_for(stream);
  if (!h.solver) {
    cusolverDnHandle_t s = nullptr;
    CUFUSE_CUSOLVER_CHECK(cusolverDnCreate(&s));
    CUFUSE_CUSOLVER_CHECK(cusolverDnSetStream(s, static_cast<cudaStream_t>(stream)));
    h.solver = s;
  }
  return h.solver;
}

std::shared_ptr<FftPlan> fft_plan(const std::string& key, const std::function<void(FftPlan&)>& make) {
  BlasHandles& s = runtime().state<BlasHandles>();
  std::lock_guard<std::mutex> lk(s.fft_mu);
  auto& p = s.fft_plans[key];
  if (!p) {
    auto fresh = std::make_shared<FftPlan>();
    make(*fresh);  // throws without keeping a half-made plan
    p = std::move(fresh);
  }
  return p;
}

std::mutex& fftw_planner_mutex() { return runtime().state<BlasHandles>().fftw_mu; }

std::shared_ptr<Storage> device_scratch(size_t nbytes) { return allocate_device(nbytes ? nbytes : 1); }

// ------------------------------------------------------------------ helpers
void transpose_device(DType t, int64_t rows, int64_t cols, const void* src, int64_t lds, void* dst, int64_t ldd,
                      void* stream, bool conj) {
  if (rows == 0 || cols == 0) return;
  cublasHandle_t h = cublas_handle(stream);
  // Column-major: C (rows x cols, ldc = ldd) = op(A)^T with A column-major (cols x rows, lda = lds).
  using namespace solver_typed;
  const cublasOperation_t op = conj && is_complex(t) ? CUBLAS_OP_C : CUBLAS_OP_T;
  switch (t) {
    case DType::Float32:
      CUFUSE_CUBLAS_CHECK(geam_t(h, op, rows, cols, static_cast<const float*>(src), lds, static_cast<float*>(dst), ldd));
      break;
    case DType::Float64:
      CUFUSE_CUBLAS_CHECK(
          geam_t(h, op, rows, cols, static_cast<const double*>(src), lds, static_cast<double*>(dst), ldd));
      break;
    case DType::Complex64:
      CUFUSE_CUBLAS_CHECK(
          geam_t(h, op, rows, cols, static_cast<const cuComplex*>(src), lds, static_cast<cuComplex*>(dst), ldd));
      break;
    case DType::Complex128:
      CUFUSE_CUBLAS_CHECK(geam_t(h, op, rows, cols, static_cast<const cuDoubleComplex*>(src), lds,
                                 static_cast<cuDoubleComplex*>(dst), ldd));
      break;
    default: throw InternalError(fmt::format("transpose_device: {} is not float32/float64/complex", name(t)));
  }
}

void fill_identity(DType t, int64_t n, int64_t batch, void* dst, void* stream) {
  const size_t sz = static_cast<size_t>(itemsize(t));
  if (n == 0 || batch == 0) return;
  memset_device(dst, 0, static_cast<size_t>(n * n * batch) * sz, stream);
  // A column of ones, then one strided 2-D copy per matrix onto its diagonal (a complex one
  // is a real part of 1 and an imaginary part of 0).
  std::vector<unsigned char> ones(static_cast<size_t>(n) * sz, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (t == DType::Float32 || t == DType::Complex64) {
      const float v = 1.0f;
      std::memcpy(ones.data() + i * sz, &v, sizeof(v));
    } else {
      const double v = 1.0;
      std::memcpy(ones.data() + i * sz, &v, sizeof(v));
    }
  }
  auto dev_ones = device_scratch(ones.size());
  copy_from_host(dev_ones->ptr, ones.data(), ones.size(), stream);
  for (int64_t b = 0; b < batch; ++b) {
    char* base = static_cast<char*>(dst) + static_cast<size_t>(b * n * n) * sz;
    CUFUSE_CUDA_CHECK(cudaMemcpy2DAsync(base, static_cast<size_t>(n + 1) * sz, dev_ones->ptr, sz, sz,
                                        static_cast<size_t>(n), cudaMemcpyDeviceToDevice,
                                        static_cast<cudaStream_t>(stream)));
  }
}

std::string permuted_identity_source(DType t, std::string& kname) {
  // A complex matrix is written as its real parts' array (element e's real part at 2 e).
  const bool single = t == DType::Float32 || t == DType::Complex64;
  const std::string tn = single ? "float" : "double";
  const char* idx = is_complex(t) ? "2 * " : "";
  const char* suffix = t == DType::Complex64 ? "c64" : t == DType::Complex128 ? "c128" : single ? "f32" : "f64";
  kname = std::string("cf_lu_permuted_identity_") + suffix;
  const std::string src = fmt::format(
      "struct cf_perm_params {{ const int* piv; {0}* out; long long n; }};\n"
      "extern \"C\" __global__ void __launch_bounds__(256) {1}(const cf_perm_params p) {{\n"
      "  extern __shared__ int sh[];\n"
      "  const int n = (int)p.n;\n"
      "  int* perm = sh;\n"
      "  int* pv = sh + n;\n"
      "  const int* piv = p.piv + (long long)blockIdx.x * n;\n"
      "  {0}* out = p.out + {2}(long long)blockIdx.x * n * n;\n"
      "  for (int i = threadIdx.x; i < n; i += blockDim.x) {{ perm[i] = i; pv[i] = piv[i] - 1; }}\n"
      "  __syncthreads();\n"
      "  if (threadIdx.x == 0)\n"
      "    for (int i = 0; i < n; ++i) {{ const int j = pv[i]; const int a = perm[i]; perm[i] = perm[j]; perm[j] = a; }}\n"
      "  __syncthreads();\n"
      "  for (int r = threadIdx.x; r < n; r += blockDim.x) out[{2}(r + (long long)perm[r] * n)] = ({0})1;\n"
      "}}\n",
      tn, kname, idx);
  return src;
}

// One block per matrix: the pivots into shared memory, thread 0 applies the interchanges to
// the row numbers there (they are sequential), then every thread places its rows' ones. This
// replaces getrs's laswp on the n x n right-hand side, whose row swaps read a column-major
// matrix across its columns (W11's inv: 19.1 ms of getrs against 14.0 ms of two trsm).
bool fill_permuted_identity(DType t, int64_t n, int64_t batch, const int* piv, void* dst, void* stream) {
  if (t != DType::Float32 && t != DType::Float64 && !is_complex(t))
    throw InternalError(fmt::format("fill_permuted_identity: {} is not float32/float64/complex", name(t)));
  constexpr int64_t kMaxShared = 200 * 1024;
  const int64_t shared = 2 * n * static_cast<int64_t>(sizeof(int));
  if (shared > kMaxShared || batch > INT32_MAX) return false;
  if (n == 0 || batch == 0) return true;
  const size_t sz = static_cast<size_t>(itemsize(t));
  memset_device(dst, 0, static_cast<size_t>(n * n * batch) * sz, stream);
  std::string kname;
  const std::string src = permuted_identity_source(t, kname);
  const int dev = current_device();
  CompiledKernelPtr k = compile_kernel(src, kname, default_arch());
  void* fn = k->kernel_for(dev);
  if (shared > 48 * 1024) set_max_dynamic_shared(fn, dev, static_cast<unsigned>(shared));
  struct {
    const int* piv;
    void* out;
    long long n;
  } params{piv, dst, static_cast<long long>(n)};
  LaunchDims d;
  d.grid[0] = static_cast<unsigned>(batch);
  d.block[0] = 256;
  d.shared_bytes = static_cast<unsigned>(shared);
  launch_kernel(fn, d, &params, stream);
  return true;
}

std::shared_ptr<Storage> device_pointer_array(void* base, int64_t stride_bytes, int64_t count, void* stream) {
  std::vector<void*> ptrs(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) ptrs[i] = static_cast<char*>(base) + i * stride_bytes;
  auto dev = device_scratch(ptrs.size() * sizeof(void*));
  copy_from_host(dev->ptr, ptrs.data(), ptrs.size() * sizeof(void*), stream);
  return dev;
}

std::vector<int> read_device_ints(const void* src, int64_t count, void* stream) {
  std::vector<int> v(static_cast<size_t>(count));
  if (count) copy_to_host(v.data(), src, v.size() * sizeof(int), stream);
  return v;
}

}  // namespace cufuse::detail
