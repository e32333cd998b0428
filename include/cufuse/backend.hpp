// cufuse/backend.hpp: where new arrays live and evaluation runs.
//   Cuda      — device memory; fused kernels compiled by NVRTC and launched (the default).
//   Reference — host memory; each planned kernel is still generated and compiled, but its
//               work is done by the host reference evaluator. For machines with no GPU
//               (tests, CI, debugging NumPy semantics). Set CUFUSE_BACKEND=reference.
#pragma once

namespace cufuse {

enum class Backend { Cuda, Reference };

Backend current_backend();  // this thread's; starts as CUFUSE_BACKEND's value (default cuda)

class BackendScope {
 public:
  explicit BackendScope(Backend b);
  ~BackendScope();
  BackendScope(const BackendScope&) = delete;
  BackendScope& operator=(const BackendScope&) = delete;

 private:
  Backend prev_;
};

}  // namespace cufuse
