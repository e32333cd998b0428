// src/library/solver_call.cpp: the solver node's output shapes, plan-dump line and hash
// (the runs live in solver_cuda.cpp and solver_reference.cpp).
#include "library/solver_call.hpp"

#include <fmt/format.h>

namespace cufuse::detail {

static Shape with_batch(const Shape& batch, std::initializer_list<int64_t> dims) {
  Shape s = batch;
  for (auto d : dims) s.push_back(d);
  return s;
}

SolverCall::SolverCall(SolverSpec s) : s_(std::move(s)) {
  const Shape& b = s_.batch;
  const int64_t m = s_.m, n = s_.n, k = std::min(m, n);
  switch (s_.kind) {
    case SolverKind::LU:
      shapes_ = {with_batch(b, {n, n}), with_batch(b, {n})};
      break;
    case SolverKind::Inv:
    case SolverKind::Cholesky: shapes_ = {with_batch(b, {n, n})}; break;
    case SolverKind::Solve:
      shapes_ = {s_.vector_rhs ? with_batch(b, {n}) : with_batch(b, {n, s_.nrhs})};
      break;
    case SolverKind::QR:
      if (s_.qr_mode == 0) shapes_ = {with_batch(b, {m, k}), with_batch(b, {k, n})};
      else if (s_.qr_mode == 1) shapes_ = {with_batch(b, {m, m}), with_batch(b, {m, n})};
      else shapes_ = {with_batch(b, {k, n})};
      break;
    case SolverKind::SVD:
      if (s_.vectors)
        shapes_ = {with_batch(b, {m, s_.full ? m : k}), with_batch(b, {k}), with_batch(b, {s_.full ? n : k, n})};
      else
        shapes_ = {with_batch(b, {k})};
      break;
    case SolverKind::Eigh:
      shapes_ = s_.vectors ? std::vector<Shape>{with_batch(b, {n}), with_batch(b, {n, n})}
                           : std::vector<Shape>{with_batch(b, {n})};
      break;
  }
  uint64_t h = hash_mix(0x736f6c76, static_cast<uint64_t>(s_.kind));
  h = hash_mix(h, static_cast<uint64_t>(s_.dtype));
  for (auto d : b) h = hash_mix(h, static_cast<uint64_t>(d));
  h = hash_mix(h, static_cast<uint64_t>(m));
  h = hash_mix(h, static_cast<uint64_t>(n));
  h = hash_mix(h, static_cast<uint64_t>(s_.nrhs));
  h = hash_mix(h, (s_.vector_rhs ? 1u : 0u) | static_cast<unsigned>(s_.qr_mode) << 1 | (s_.full ? 8u : 0u) |
                      (s_.vectors ? 16u : 0u) | (s_.lower ? 32u : 0u) | (s_.check_errors ? 64u : 0u));
  hash_ = h;
}

DType SolverCall::output_dtype(int i) const {
  if (s_.kind == SolverKind::LU && i == 1) return DType::Int32;
  // Singular values and a Hermitian matrix's eigenvalues are real (NumPy: float32 of complex64).
  const bool real_values = (s_.kind == SolverKind::SVD && i == (s_.vectors ? 1 : 0)) ||
                           (s_.kind == SolverKind::Eigh && i == 0);
  return real_values ? real_dtype(s_.dtype) : s_.dtype;
}

std::string SolverCall::describe() const {
  std::string extra;
  if (s_.kind == SolverKind::QR) extra = s_.qr_mode == 0 ? ", reduced" : s_.qr_mode == 1 ? ", complete" : ", r";
  if (s_.kind == SolverKind::SVD)
    extra = !s_.vectors ? ", values only" : s_.full ? ", full matrices" : ", reduced";
  if (s_.kind == SolverKind::Eigh) extra = fmt::format(", UPLO {}{}", s_.lower ? 'L' : 'U', s_.vectors ? "" : ", values only");
  if (s_.kind == SolverKind::Solve) extra = s_.vector_rhs ? ", vector b" : fmt::format(", {} right-hand sides", s_.nrhs);
  return fmt::format("linalg.{} {} batch {} of ({}, {}){}, cuSOLVER", solver_kind_name(s_.kind), name(s_.dtype),
                     to_string(s_.batch), s_.m, s_.n, extra);
}

void SolverCall::run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const {
  run_solver_cuda(s_, inputs, outputs, stream);
}

void SolverCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  run_solver_reference(s_, inputs, outputs);
}

}  // namespace cufuse::detail
