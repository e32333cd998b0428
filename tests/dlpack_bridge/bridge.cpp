// tests/dlpack_bridge/bridge.cpp: libcufuse_dlpack_bridge, a tiny C-ABI shared library over
// cufuse's DLPack functions, for scripts/dlpack_check.py to load with ctypes and exchange
// DLPack capsules with NumPy, PyTorch, CuPy and JAX (no pybind11). Every function returns 0 on
// success and -1 on a cufuse::Error, whose message cufuse_bridge_last_error() gives.
#include <cstdint>
#include <cstring>
#include <string>

#include "cufuse/cufuse.hpp"
#include "cufuse/dlpack.hpp"

namespace cf = cufuse;

namespace {
thread_local std::string g_error;

// arange(rows * cols) * 0.5 - 3 of `dtype`, shape (rows, cols).
cf::Array sample(const char* dtype, int64_t rows, int64_t cols) {
  return (cf::arange(rows * cols).astype(cf::f64) * 0.5 - 3).astype(cf::parse_dtype(dtype)).reshape({rows, cols});
}

template <class F>
int guarded(F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    g_error = e.what();
    return -1;
  }
}
}  // namespace

extern "C" {

const char* cufuse_bridge_last_error() { return g_error.c_str(); }

// A new DLManagedTensor* (the caller owns it) over sample(dtype, rows, cols), in host memory
// (kDLCPU: the reference backend) when `host`, else on the current device (kDLCUDA).
int cufuse_bridge_make(const char* dtype, int64_t rows, int64_t cols, int host, void** out) {
  return guarded([&] {
    cf::BackendScope scope(host ? cf::Backend::Reference : cf::Backend::Cuda);
    *out = cf::to_dlpack(sample(dtype, rows, cols));
  });
}

// Takes a DLManagedTensor* (cufuse owns it from here), returns the sum of its elements as
// float64, then adds `add` to every element in place (in the producer's memory: zero copy)
// and waits for that write. The deleter runs when the arrays on it are gone (before return).
int cufuse_bridge_consume(void* managed, int host, double add, double* sum) {
  return guarded([&] {
    cf::BackendScope scope(host ? cf::Backend::Reference : cf::Backend::Cuda);
    cf::Array a = cf::from_dlpack(static_cast<DLManagedTensor*>(managed));
    *sum = cf::sum(a.astype(cf::f64)).item<double>();
    if (add != 0) {
      a += cf::Scalar(add);
      (void)a.data_ptr();  // carries the write out
      if (!host) cf::synchronize();
    }
  });
}

// Saves sample(dtype, rows, cols) to `path` with cf::save, for NumPy to np.load.
int cufuse_bridge_save(const char* path, const char* dtype, int64_t rows, int64_t cols) {
  return guarded([&] {
    cf::BackendScope scope(cf::Backend::Reference);
    cf::save(path, sample(dtype, rows, cols));
  });
}

}  // extern "C"
