// src/library/gemm_cuda.cpp: running a GemmSpec on the device with cuBLASLt. Row-major
// C (M x N) is column-major C^T (N x M) = B^T A^T, so cuBLASLt's "A" is our b and its "B"
// our a, each read as stored (op N) or through op T (see colmajor_of). Plans (descriptors,
// layouts and the heuristic's algorithm) are cached under a parameter struct compared in
// full; the workspace comes from the pool. A configuration cuBLASLt has no algorithm for
// falls back to cublasGemmStridedBatchedEx when there is no epilogue. Complex GEMMs (no
// epilogue, no TF32) go to cublasGemmStridedBatchedEx with CUDA_C_32F/CUDA_C_64F directly,
// a conjugated operand through op C.
#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "library/blas_runtime.hpp"
#include "library/gemm_call.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "runtime/transfer.hpp"

namespace cufuse::detail {

namespace {

constexpr size_t kLtWorkspace = size_t(32) << 20;

uint32_t alignment_of(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a >>= 1;
  return a;
}

struct LtKey {
  int device;
  int dtype;
  int tf32;
  int op_a, op_b;  // cuBLASLt's A (our b) and B (our a)
  int epilogue;
  int64_t rows_a, cols_a, ld_a, rows_b, cols_b, ld_b, m, n, k;
  int64_t batch;
  int64_t stride_a, stride_b;
  uint32_t align_a, align_b, align_d, align_bias;
  bool operator==(const LtKey& o) const { return std::memcmp(this, &o, sizeof(LtKey)) == 0; }
};
static_assert(std::has_unique_object_representations_v<LtKey>, "LtKey is compared bytewise");

struct LtKeyHash {
  size_t operator()(const LtKey& k) const noexcept {
    const auto* w = reinterpret_cast<const uint32_t*>(&k);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof(LtKey) / 4; ++i) h = hash_mix(h, w[i]);
    return static_cast<size_t>(h);
  }
};

struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  bool have_algo = false;
  std::mutex mu;  // the bias pointer is set on the shared descriptor per call
  ~LtPlan() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

// cuBLASLt plans by layout: process state (runtime/context.hpp), never destroyed.
struct LtPlans {
  static constexpr StateSlot kSlot = StateSlot::LtPlans;
  std::mutex mu;
  std::unordered_map<LtKey, std::shared_ptr<LtPlan>, LtKeyHash> map;
};
std::mutex& plans_mutex() { return runtime().state<LtPlans>().mu; }
std::unordered_map<LtKey, std::shared_ptr<LtPlan>, LtKeyHash>& plans() { return runtime().state<LtPlans>().map; }

cublasComputeType_t compute_type(DType t, bool tf32) {
  if (t == DType::Float64) return CUBLAS_COMPUTE_64F;
  if (t == DType::Float32 && tf32) return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;  // float32, and float16/bfloat16 with float32 accumulation
}

void set_layout_batch(cublasLtMatrixLayout_t l, int64_t batch, int64_t stride) {
  if (batch <= 1) return;
  const int32_t count = static_cast<int32_t>(batch);
  CUFUSE_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
  CUFUSE_CUBLAS_CHECK(
      cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
}

std::shared_ptr<LtPlan> make_lt_plan(const LtKey& k, DType t, cublasLtHandle_t h, int64_t stride_d) {
  auto p = std::make_shared<LtPlan>();
  const cudaDataType_t dt = cuda_data_type(t);
  const cudaDataType_t scale = t == DType::Float64 ? CUDA_R_64F : CUDA_R_32F;
  CUFUSE_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->desc, compute_type(t, k.tf32 != 0), scale));
  const int32_t opa = k.op_a, opb = k.op_b;
  CUFUSE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)));
  CUFUSE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)));
  const cublasLtEpilogue_t epi = static_cast<cublasLtEpilogue_t>(k.epilogue);
  CUFUSE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  CUFUSE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->a, dt, static_cast<uint64_t>(k.rows_a),
                                                 static_cast<uint64_t>(k.cols_a), k.ld_a));
  CUFUSE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->b, dt, static_cast<uint64_t>(k.rows_b),
                                                 static_cast<uint64_t>(k.cols_b), k.ld_b));
  CUFUSE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->d, dt, static_cast<uint64_t>(k.m), static_cast<uint64_t>(k.n), k.m));
  set_layout_batch(p->a, k.batch, k.stride_a);
  set_layout_batch(p->b, k.batch, k.stride_b);
  set_layout_batch(p->d, k.batch, stride_d);

  cublasLtMatmulPreference_t pref = nullptr;
  CUFUSE_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>, decltype(&cublasLtMatmulPreferenceDestroy)> guard(
      pref, cublasLtMatmulPreferenceDestroy);
  const uint64_t ws = kLtWorkspace;
  CUFUSE_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  CUFUSE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                           &k.align_a, sizeof(k.align_a)));
  CUFUSE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                           &k.align_b, sizeof(k.align_b)));
  CUFUSE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                           &k.align_d, sizeof(k.align_d)));
  CUFUSE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                           &k.align_d, sizeof(k.align_d)));
  cublasLtMatmulHeuristicResult_t res[4] = {};
  int returned = 0;
  const cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(h, p->desc, p->a, p->b, p->d, p->d, pref, 4, res, &returned);
  if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED)
    throw_cublas_error(st, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  for (int i = 0; st == CUBLAS_STATUS_SUCCESS && i < returned; ++i) {
    if (res[i].state != CUBLAS_STATUS_SUCCESS || res[i].workspaceSize > kLtWorkspace) continue;
    p->algo = res[i].algo;
    p->workspace = res[i].workspaceSize;
    p->have_algo = true;
    break;
  }
  return p;
}

const char* op_name(int op) { return op == CUBLAS_OP_N ? "N" : "T"; }

// A complex GEMM with k's shapes and op flags (T becomes C for a conjugated operand: our b is
// cuBLAS's A, our a its B), on cuBLAS's strided batched GEMM in CUDA_C_32F / CUDA_C_64F.
void run_complex_gemm(const GemmSpec& s, const LtKey& k, const void* a, const void* b, void* out, void* stream) {
  const bool single = s.dtype == DType::Complex64;
  const cudaDataType_t dt = single ? CUDA_C_32F : CUDA_C_64F;
  const auto op = [](int o, bool conj) {
    return o == CUBLAS_OP_T && conj ? CUBLAS_OP_C : static_cast<cublasOperation_t>(o);
  };
  const cuComplex alpha32{static_cast<float>(s.alpha), 0.0f}, beta32{0.0f, 0.0f};
  const cuDoubleComplex alpha64{s.alpha, 0.0}, beta64{0.0, 0.0};
  const void* alpha = single ? static_cast<const void*>(&alpha32) : &alpha64;
  const void* beta = single ? static_cast<const void*>(&beta32) : &beta64;
  log(LogChannel::Launch, "cuBLAS complex GEMM {} {}x{}x{} batch {} ops {}{}{}{}", name(s.dtype), k.m, k.n, k.k,
      k.batch, op_name(k.op_a), s.conj_b ? "(C)" : "", op_name(k.op_b), s.conj_a ? "(C)" : "");
  CUFUSE_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(
      cublas_handle(stream), op(k.op_a, s.conj_b), op(k.op_b, s.conj_a), k.m, k.n, k.k, alpha, b, dt, k.ld_a,
      k.stride_a, a, dt, k.ld_b, k.stride_b, beta, out, dt, k.m, k.m * k.n, k.batch,
      single ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

void run_gemm_cuda(const GemmSpec& s, const GemmOperandRun& a, const GemmOperandRun& b, const void* bias, void* out,
                   void* stream) {
  const int64_t nb = numel(s.batch), M = s.M, N = s.N, K = s.K;
  const int sz = itemsize(s.dtype);
  if (nb * M * N == 0) return;
  if (K == 0) {  // an empty sum (no epilogue is fused when K == 0)
    memset_device(out, 0, static_cast<size_t>(nb * M * N * sz), stream);
    return;
  }
  if (nb > INT32_MAX) throw NotSupportedError(fmt::format("matmul: {} matrices in one batch", nb));
  // Core of each operand.
  auto core = [&](const GemmOperandRun& op, bool is_a, bool vec) {
    const Layout& l = op.layout;
    const int nd = l.shape.ndim();
    int64_t rows = is_a ? M : K, cols = is_a ? K : N, sr, sc;
    if (vec) {
      sr = is_a ? 0 : l.strides[0];
      sc = is_a ? l.strides[0] : 0;
    } else {
      sr = l.strides[nd - 2];
      sc = l.strides[nd - 1];
    }
    const bool conj = is_a ? s.conj_a : s.conj_b;
    ColMajor cm = colmajor_of(rows, cols, sr, sc, conj);
    if (!cm.ok) throw InternalError("matmul: an operand layout cuBLAS cannot read reached the GEMM");
    if (conj && !cm.is_self)
      throw InternalError("matmul: a conjugated operand cuBLAS would read without a transpose reached the GEMM");
    int64_t bstride = 0;
    if (!vec) {
      auto c = collapse_batch(s.batch, Shape(l.shape.begin(), l.shape.end() - 2),
                              Strides(l.strides.begin(), l.strides.end() - 2));
      if (!c) throw InternalError("matmul: operand batch strides cuBLAS cannot read reached the GEMM");
      bstride = *c;
    }
    return std::make_pair(cm, bstride);
  };
  const auto [cb, sb] = core(b, false, s.b_vec);  // cuBLASLt's A
  const auto [ca, sa] = core(a, true, s.a_vec);   // cuBLASLt's B

  LtKey k{};
  k.device = current_device();
  k.dtype = static_cast<int>(s.dtype);
  k.tf32 = s.dtype == DType::Float32 && s.tf32 ? 1 : 0;
  // Lt A = our b as stored: B^T (N x K, op N) or B (K x N, op T).
  k.op_a = cb.is_self ? CUBLAS_OP_T : CUBLAS_OP_N;
  k.rows_a = cb.is_self ? K : N;
  k.cols_a = cb.is_self ? N : K;
  k.ld_a = cb.ld;
  // Lt B = our a as stored: A^T (K x M, op N) or A (M x K, op T).
  k.op_b = ca.is_self ? CUBLAS_OP_T : CUBLAS_OP_N;
  k.rows_b = ca.is_self ? M : K;
  k.cols_b = ca.is_self ? K : M;
  k.ld_b = ca.ld;
  k.m = N;
  k.n = M;
  k.k = K;
  k.batch = nb;
  k.stride_a = sb;
  k.stride_b = sa;
  int epi = CUBLASLT_EPILOGUE_DEFAULT;
  if (s.act == GemmAct::Gelu) epi = s.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  else if (s.bias) epi = CUBLASLT_EPILOGUE_BIAS;
  k.epilogue = epi;
  if (is_complex(s.dtype)) {
    if (epi != CUBLASLT_EPILOGUE_DEFAULT) throw InternalError("matmul: an epilogue on a complex GEMM");
    run_complex_gemm(s, k, a.ptr, b.ptr, out, stream);
    return;
  }
  k.align_a = alignment_of(b.ptr);
  k.align_b = alignment_of(a.ptr);
  k.align_d = alignment_of(out);
  k.align_bias = bias ? alignment_of(bias) : 0;

  cublasLtHandle_t lt = cublaslt_handle(stream);
  std::shared_ptr<LtPlan> plan;  // held while in use: the cache may drop its entry meanwhile
  {
    std::lock_guard<std::mutex> lk(plans_mutex());
    auto it = plans().find(k);
    if (it == plans().end()) {
      if (plans().size() > 4096) plans().clear();
      it = plans().emplace(k, make_lt_plan(k, s.dtype, lt, M * N)).first;
      log(LogChannel::Launch, "cuBLASLt plan {}x{}x{} batch {} ops {}{} epilogue {}: {}", N, M, K, nb,
          op_name(k.op_a), op_name(k.op_b), epi, it->second->have_algo ? "algorithm found" : "no algorithm");
    }
    plan = it->second;
  }
  const float alpha32 = static_cast<float>(s.alpha), beta32 = 0.0f;
  const double alpha64 = s.alpha, beta64 = 0.0;
  const void* alpha = s.dtype == DType::Float64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = s.dtype == DType::Float64 ? static_cast<const void*>(&beta64) : &beta32;

  if (plan->have_algo) {
    std::shared_ptr<Storage> ws;
    if (plan->workspace) ws = device_scratch(plan->workspace);
    std::lock_guard<std::mutex> lk(plan->mu);
    if (bias)
      CUFUSE_CUBLAS_CHECK(
          cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    CUFUSE_CUBLAS_CHECK(cublasLtMatmul(lt, plan->desc, alpha, b.ptr, plan->a, a.ptr, plan->b, beta, out, plan->d, out,
                                       plan->d, &plan->algo, ws ? ws->ptr : nullptr, plan->workspace,
                                       static_cast<cudaStream_t>(stream)));
    return;
  }
  if (epi != CUBLASLT_EPILOGUE_DEFAULT)
    throw NotSupportedError(fmt::format("matmul: cuBLASLt has no algorithm for {} ({}x{}x{}, epilogue {})",
                                        name(s.dtype), M, N, K, epi));
  const cudaDataType_t dt = cuda_data_type(s.dtype);
  CUFUSE_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(
      cublas_handle(stream), static_cast<cublasOperation_t>(k.op_a), static_cast<cublasOperation_t>(k.op_b), N, M, K,
      alpha, b.ptr, dt, k.ld_a, sb, a.ptr, dt, k.ld_b, sa, beta, out, dt, N, M * N, nb,
      compute_type(s.dtype, k.tf32 != 0), CUBLAS_GEMM_DEFAULT));
}

}  // namespace cufuse::detail
