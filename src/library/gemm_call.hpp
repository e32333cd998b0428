// src/library/gemm_call.hpp: the GEMM library node: out = act(alpha * A @ B + bias), NumPy
// matmul semantics over float16/bfloat16/float32/float64/complex64/complex128 (batched,
// leading dims broadcast, 1-D operands as a row/column; a complex operand may be read
// conjugated). It owns the mapping of row-major, possibly strided operands onto cuBLAS's
// column-major view (op flags, leading dims, batch strides), which accepts_layout() answers
// and run() uses; the run itself is cuBLASLt, or cuBLAS's complex GEMM (cublasGemmStridedBatchedEx
// with CUDA_C_32F/CUDA_C_64F, src/library/gemm_cuda.cpp), the reference a float64 (complex
// double) loop (gemm_call.cpp).
#pragma once
#include <optional>

#include "core/library_call.hpp"

namespace cufuse::detail {

// No ReLU: cuBLASLt's RELU epilogue turns a NaN into 0 in some of its kernels (H100, CUDA
// 13.0: float16 at every K, float32 and bfloat16 at K = 1; NaN kept elsewhere), where
// maximum(x, 0) keeps it. A ReLU after a GEMM is a generated kernel (src/plan/epilogue.hpp).
enum class GemmAct : uint8_t { None, Gelu };

// One operand as the GEMM reads it.
struct GemmOperand {
  Shape shape;                 // logical shape (1-D, or (..., rows, cols))
  std::optional<Layout> view;  // when set: a view (shape == view->shape) of the input's
                               // contiguous memory (a transposed library/reduction result)
};

struct GemmSpec {
  DType dtype = DType::Float32;  // A, B, out (and bias)
  GemmOperand a, b;
  Shape batch;                   // broadcast leading dims
  int64_t M = 1, N = 1, K = 1;
  bool a_vec = false, b_vec = false;  // 1-D operands (their dim is dropped from the output)
  double alpha = 1.0;
  // Complex only: the operand is read conjugated (cuBLAS's op C). Only an operand that
  // cuBLAS reads through op T (a transposed view: unit row stride) can be, since there is
  // no conjugate without a transpose: matmul.cpp sets it only where colmajor_of(...,
  // prefer_self = true) reads the operand's layout as M itself.
  bool conj_a = false, conj_b = false;
  bool bias = false;                  // input 2: a bias along the last output axis
  GemmAct act = GemmAct::None;
  bool tf32 = false;
  Shape out_shape;
};

// The column-major reading of one row-major (rows x cols) matrix with strides (sr, sc):
// memory with a unit column stride holds M^T column-major (is_self false, ld = the row
// stride: cuBLAS reads it with op N); memory with a unit row stride holds M itself
// column-major (is_self true, ld = the column stride: op T). ld >= the stored rows.
struct ColMajor {
  bool ok = false;
  bool is_self = false;  // the column-major matrix stored is M itself (else M^T)
  int64_t ld = 0;
};
// prefer_self: try the op-T reading (is_self) first (a conjugated operand needs it).
ColMajor colmajor_of(int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool prefer_self = false);

// A single stride for the flattened batch index over `batch` given an operand's batch
// extents and strides (right-aligned against batch; missing dims broadcast), or nullopt.
std::optional<int64_t> collapse_batch(const Shape& batch, const Shape& ext, const Strides& str);

class GemmCall : public LibraryCall {
 public:
  explicit GemmCall(GemmSpec s);
  const GemmSpec& spec() const { return s_; }
  std::string describe() const override;
  int num_outputs() const override { return 1; }
  DType output_dtype(int) const override { return s_.dtype; }
  Shape output_shape(int) const override { return s_.out_shape; }
  bool accepts_layout(int input, const Layout& l, DType t) const override;
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override { return hash_; }

  // A float16/bfloat16/float32 GEMM of matrices with no bias or activation yet, whose output's
  // last axis is N (a reshaped result has no bias axis): the planner may fuse an epilogue.
  bool takes_epilogue() const override;
  std::shared_ptr<const LibraryCall> with_epilogue(bool bias, bool gelu) const override;

  // Can operand 0 (a) or 1 (b) be read with this layout (shape = the operand's logical shape)?
  bool operand_readable(int which, const Layout& l) const;

 private:
  GemmSpec s_;
  uint64_t hash_;
};

// Shapes of matmul(a, b) (NumPy): fills batch, M, N, K, a_vec, b_vec, out_shape of s from
// s.a.shape / s.b.shape; throws ValueError with NumPy's message on a mismatch.
void gemm_shapes(GemmSpec& s);

// The strided layout of an operand as the GEMM reads it (its view, or the input's layout).
inline const Layout& operand_layout(const GemmOperand& op, const Layout& input) { return op.view ? *op.view : input; }

// cuBLASLt run (gemm_cuda.cpp). Pointers are at the operands' first elements.
struct GemmOperandRun {
  const void* ptr;
  Layout layout;  // shape = logical shape, strides in elements, offset already in ptr
};
void run_gemm_cuda(const GemmSpec& s, const GemmOperandRun& a, const GemmOperandRun& b, const void* bias, void* out,
                   void* stream);

}  // namespace cufuse::detail
