// src/library/gemm_call.cpp: the GEMM node's shapes (NumPy matmul), which operand layouts
// cuBLAS reads as they are, its plan-dump line and hash, and its float64 (complex double) host
// reference.
#include "library/gemm_call.hpp"

#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "cufuse/ops.hpp"
#include "library/host_math.hpp"

namespace cufuse::detail {

ColMajor colmajor_of(int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool prefer_self) {
  const int64_t r1 = std::max<int64_t>(rows, 1), c1 = std::max<int64_t>(cols, 1);
  // Row-major with unit column stride: the column-major matrix stored is M^T (cols x rows).
  auto transposed = [&]() -> ColMajor {
    if (cols <= 1 || sc == 1) {
      const int64_t ld = rows <= 1 ? c1 : sr;
      if (ld >= c1) return ColMajor{true, false, ld};
    }
    return ColMajor{};
  };
  // Unit row stride: the column-major matrix stored is M itself (rows x cols), read with op T.
  auto self = [&]() -> ColMajor {
    if (rows <= 1 || sr == 1) {
      const int64_t ld = cols <= 1 ? r1 : sc;
      if (ld >= r1) return ColMajor{true, true, ld};
    }
    return ColMajor{};
  };
  const ColMajor first = prefer_self ? self() : transposed();
  if (first.ok) return first;
  return prefer_self ? transposed() : self();
}

std::optional<int64_t> collapse_batch(const Shape& batch, const Shape& ext, const Strides& str) {
  const int nb = batch.ndim(), no = ext.ndim();
  if (no > nb) return std::nullopt;
  std::optional<int64_t> S;
  int64_t inner = 1;
  for (int d = nb - 1; d >= 0; --d) {
    const int64_t e = batch[d];
    if (e == 1) continue;
    const int od = d - (nb - no);
    int64_t t = 0;
    if (od >= 0 && ext[od] != 1) t = str[od];
    if (!S) {
      if (t % inner != 0) return std::nullopt;
      S = t / inner;
    } else if (t != *S * inner) {
      return std::nullopt;
    }
    inner *= e;
  }
  const int64_t s = S.value_or(0);
  if (s < 0) return std::nullopt;
  return s;
}

void gemm_shapes(GemmSpec& s) {
  const Shape& a = s.a.shape;
  const Shape& b = s.b.shape;
  const char* sig = "(n?,k),(k,m?)->(n?,m?)";
  if (a.ndim() == 0 || b.ndim() == 0)
    throw ValueError(fmt::format("matmul: Input operand {} does not have enough dimensions (has 0, gufunc core with "
                                 "signature {} requires 1)", a.ndim() == 0 ? 0 : 1, sig));
  s.a_vec = a.ndim() == 1;
  s.b_vec = b.ndim() == 1;
  s.M = s.a_vec ? 1 : a[a.ndim() - 2];
  s.K = a[a.ndim() - 1];
  const int64_t kb = s.b_vec ? b[0] : b[b.ndim() - 2];
  s.N = s.b_vec ? 1 : b[b.ndim() - 1];
  if (kb != s.K)
    throw ValueError(fmt::format("matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                                 "signature {} (size {} is different from {})", sig, kb, s.K));
  Shape ba = s.a_vec ? Shape{} : Shape(a.begin(), a.end() - 2);
  Shape bb = s.b_vec ? Shape{} : Shape(b.begin(), b.end() - 2);
  s.batch = broadcast_shapes(ba, bb);
  s.out_shape = s.batch;
  if (!s.a_vec) s.out_shape.push_back(s.M);
  if (!s.b_vec) s.out_shape.push_back(s.N);
}

static uint64_t hash_layout(uint64_t h, const Layout& l) {
  for (auto d : l.shape) h = hash_mix(h, static_cast<uint64_t>(d));
  for (auto d : l.strides) h = hash_mix(h, static_cast<uint64_t>(d) ^ 0x55);
  return hash_mix(h, static_cast<uint64_t>(l.offset));
}

GemmCall::GemmCall(GemmSpec s) : s_(std::move(s)) {
  uint64_t h = hash_mix(0x6e6d6d, static_cast<uint64_t>(s_.dtype));
  for (const GemmOperand* op : {&s_.a, &s_.b}) {
    for (auto d : op->shape) h = hash_mix(h, static_cast<uint64_t>(d));
    h = hash_mix(h, op->view ? 1 : 2);
    if (op->view) h = hash_layout(h, *op->view);
  }
  uint64_t abits;
  std::memcpy(&abits, &s_.alpha, 8);
  h = hash_mix(h, abits);
  h = hash_mix(h, (s_.bias ? 1u : 0u) | static_cast<unsigned>(s_.act) << 1 | (s_.tf32 ? 16u : 0u) |
                      (s_.conj_a ? 32u : 0u) | (s_.conj_b ? 64u : 0u));
  hash_ = h;
}

std::string GemmCall::describe() const {
  std::string extra;
  if (s_.alpha != 1.0) extra += fmt::format(", alpha {}", s_.alpha);
  if (s_.bias || s_.act != GemmAct::None) {
    extra += ", epilogue ";
    extra += s_.act == GemmAct::Gelu ? "gelu" : "";
    if (s_.bias) extra += s_.act == GemmAct::None ? "bias" : "+bias";
  }
  if (s_.a.view) extra += ", a read through a view of its input";
  if (s_.b.view) extra += ", b read through a view of its input";
  if (s_.conj_a) extra += ", a conjugated (op C)";
  if (s_.conj_b) extra += ", b conjugated (op C)";
  return fmt::format("matmul {} {} @ {} -> {}, {}{}, TF32 {}", name(s_.dtype), to_string(s_.a.shape),
                     to_string(s_.b.shape), to_string(s_.out_shape),
                     is_complex(s_.dtype) ? "cuBLAS complex GEMM" : "cuBLASLt", extra,
                     s_.dtype == DType::Float32 ? (s_.tf32 ? "on" : "off") : "n/a");
}

bool GemmCall::operand_readable(int which, const Layout& l) const {
  const GemmOperand& op = which == 0 ? s_.a : s_.b;
  if (l.shape != op.shape) return false;
  const int nd = l.shape.ndim();
  const bool vec = which == 0 ? s_.a_vec : s_.b_vec;
  int64_t rows, cols, sr, sc;
  if (which == 0) {
    rows = s_.M;
    cols = s_.K;
    sr = vec ? 0 : l.strides[nd - 2];
    sc = l.strides[nd - 1];
  } else {
    rows = s_.K;
    cols = s_.N;
    sr = vec ? l.strides[0] : l.strides[nd - 2];
    sc = vec ? 0 : l.strides[nd - 1];
  }
  const bool conj = which == 0 ? s_.conj_a : s_.conj_b;
  const ColMajor cm = colmajor_of(rows, cols, sr, sc, conj);
  if (!cm.ok || (conj && !cm.is_self)) return false;
  if (vec) return true;
  Shape ext(l.shape.begin(), l.shape.end() - 2);
  Strides str(l.strides.begin(), l.strides.end() - 2);
  return collapse_batch(s_.batch, ext, str).has_value();
}

bool GemmCall::takes_epilogue() const {
  const GemmSpec& s = s_;
  const bool dtype_ok = s.dtype == DType::Float16 || s.dtype == DType::BFloat16 || s.dtype == DType::Float32;
  if (!dtype_ok || s.bias || s.act != GemmAct::None || s.a_vec || s.b_vec || s.K == 0) return false;
  if (s.out_shape.empty() || s.out_shape.back() != s.N) return false;  // a reshaped result: no bias axis
  return true;
}

std::shared_ptr<const LibraryCall> GemmCall::with_epilogue(bool bias, bool gelu) const {
  GemmSpec s = s_;
  s.act = gelu ? GemmAct::Gelu : GemmAct::None;
  s.bias = bias;
  return std::make_shared<GemmCall>(s);
}

bool GemmCall::accepts_layout(int input, const Layout& l, DType t) const {
  if (t != s_.dtype) return false;
  if (input == 0 || input == 1) {
    const GemmOperand& op = input == 0 ? s_.a : s_.b;
    if (op.view) return l.is_contiguous();
    return operand_readable(input, l);
  }
  if (input == 2 && s_.bias) {  // along the last axis, unit stride, broadcast elsewhere
    if (l.shape != s_.out_shape) return false;
    const int nd = l.shape.ndim();
    for (int d = 0; d < nd; ++d) {
      if (l.shape[d] == 1) continue;
      if (l.strides[d] != (d == nd - 1 ? 1 : 0)) return false;
    }
    return true;
  }
  return false;
}

void GemmCall::run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const {
  auto operand = [&](int i, const GemmOperand& op) {
    const TensorRef& t = inputs[static_cast<size_t>(i)];
    GemmOperandRun r;
    if (op.view) {
      r.ptr = static_cast<const char*>(t.ptr) + op.view->offset * itemsize(t.dtype);
      r.layout = Layout{op.view->shape, op.view->strides, 0};
    } else {
      r.ptr = t.ptr;
      r.layout = Layout{t.shape, t.strides, 0};
    }
    return r;
  };
  const GemmOperandRun a = operand(0, s_.a), b = operand(1, s_.b);
  const void* bias = s_.bias ? inputs[2].ptr : nullptr;
  run_gemm_cuda(s_, a, b, bias, outputs[0].ptr, stream);
}

// ------------------------------------------------------------------ reference
namespace {

// Position of element (batch index over s.batch, r, c) of an operand laid out by l.
struct OperandWalk {
  Layout l;
  int64_t sr = 0, sc = 0;
  Shape ext;
  Strides bstr;
  OperandWalk(const Layout& lay, bool vec, bool is_a) : l(lay) {
    const int nd = lay.shape.ndim();
    if (vec) {
      (is_a ? sc : sr) = lay.strides[0];
    } else {
      sr = lay.strides[nd - 2];
      sc = lay.strides[nd - 1];
      ext = Shape(lay.shape.begin(), lay.shape.end() - 2);
      bstr = Strides(lay.strides.begin(), lay.strides.end() - 2);
    }
  }
  int64_t base(const Shape& batch, const std::vector<int64_t>& bidx) const {
    int64_t p = l.offset;
    const int off = batch.ndim() - ext.ndim();
    for (int d = 0; d < ext.ndim(); ++d)
      if (ext[d] != 1) p += bidx[static_cast<size_t>(d + off)] * bstr[d];
    return p;
  }
};

double gelu_tanh(double x) {
  const double c = 0.7978845608028654;  // sqrt(2/pi)
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

}  // namespace

namespace {

// The loop of run_reference over double (real dtypes) or complex double values.
template <class T>
void gemm_reference(const GemmSpec& s, const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) {
  std::vector<T> A = to_values<T>(*inputs[0]), B = to_values<T>(*inputs[1]);
  if constexpr (!std::is_same_v<T, double>) {
    if (s.conj_a) for (auto& v : A) v = std::conj(v);
    if (s.conj_b) for (auto& v : B) v = std::conj(v);
  }
  std::vector<T> bias;
  if (s.bias) bias = to_values<T>(*inputs[2]);
  auto lay = [](const GemmOperand& op, const HostArray& h) {
    return op.view ? *op.view : contiguous_layout(h.shape);
  };
  const OperandWalk wa(lay(s.a, *inputs[0]), s.a_vec, true), wb(lay(s.b, *inputs[1]), s.b_vec, false);
  const int64_t nb = numel(s.batch), M = s.M, N = s.N, K = s.K;
  std::vector<T> out(static_cast<size_t>(nb * M * N));
  std::vector<int64_t> bidx(s.batch.size(), 0);
  std::vector<T> row(static_cast<size_t>(N));
  for (int64_t bi = 0; bi < nb; ++bi) {
    const int64_t pa = wa.base(s.batch, bidx), pb = wb.base(s.batch, bidx);
    for (int64_t m = 0; m < M; ++m) {
      std::fill(row.begin(), row.end(), T(0.0));
      for (int64_t k = 0; k < K; ++k) {
        const T av = A[static_cast<size_t>(pa + m * wa.sr + k * wa.sc)];
        const int64_t rowb = pb + k * wb.sr;
        for (int64_t n = 0; n < N; ++n) row[n] += av * B[static_cast<size_t>(rowb + n * wb.sc)];
      }
      for (int64_t n = 0; n < N; ++n) {
        T v = s.alpha * row[n];
        // bias: the output-shaped bias input, row-major; its values repeat along all but the last axis
        if (s.bias) v += bias[static_cast<size_t>((bi * M + m) * N + n)];
        if constexpr (std::is_same_v<T, double>)
          if (s.act == GemmAct::Gelu) v = gelu_tanh(v);
        out[static_cast<size_t>((bi * M + m) * N + n)] = v;
      }
    }
    for (int d = s.batch.ndim() - 1; d >= 0; --d) {
      if (++bidx[static_cast<size_t>(d)] < s.batch[d]) break;
      bidx[static_cast<size_t>(d)] = 0;
    }
  }
  from_values(outputs[0], out);
}

}  // namespace

void GemmCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  if (is_complex(s_.dtype)) gemm_reference<std::complex<double>>(s_, inputs, outputs);
  else gemm_reference<double>(s_, inputs, outputs);
}

}  // namespace cufuse::detail
