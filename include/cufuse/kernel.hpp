// cufuse/kernel.hpp: user kernels, the CuPy way.
//
//   ElementwiseKernel — CuPy's ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "sqdiff"):
//     parameters typed by name (float32, int64, ...) or by a one-letter placeholder (T) bound
//     from the arguments' dtypes; arguments broadcast; strides handled. Unlike CuPy's, the
//     result is a lazy node: the user code fuses into one kernel with the cufuse ops around it.
//   ReductionKernel — CuPy's ReductionKernel(in, out, map_expr, reduce_expr, post_map_expr,
//     identity, name): map, reduce over axes (keepdims), post-map; fuses like cufuse::sum.
//   RawKernel / RawModule — CUDA source compiled by NVRTC (cached in memory and on disk like
//     every kernel), launched with an explicit grid, block and shared memory size on the
//     current stream. Kernels need extern "C" names.
//
// Differences from CuPy, by design or not yet done (each throws a clear error):
//   - `raw` parameters and the element index `i` / `_ind` are not available in fused kernels
//     (the element a fused kernel visits is not the user's); use cufuse views or arange;
//   - float16/bfloat16 values are computed as float inside user code, rounded on store;
//   - no preamble / loop_prep / after_loop; ReductionKernel takes one output parameter and
//     needs an identity; `_in_ind.size()` / `_out_ind.size()` work in map and post-map code;
//   - the host reference backend cannot run user code: it throws NotSupportedError.
#pragma once
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cufuse/array.hpp"
#include "cufuse/reduce.hpp"

namespace cufuse {

namespace detail {
struct UserKernelDef;
struct RawKernelImpl;
}  // namespace detail

class ElementwiseKernel {
 public:
  // in_params / out_params: "T x, float32 y" / "T z"; operation: statements assigning the
  // outputs ("z = x * y + 1;"); name: for messages and the generated source.
  ElementwiseKernel(const std::string& in_params, const std::string& out_params, const std::string& operation,
                    const std::string& name = "kernel");
  // Inputs (arrays or scalars; scalars take their parameter's type), then optionally one
  // array per output to write into (its current value is the output's initial value).
  // Returns the outputs (lazy), or the given output arrays after writing them.
  std::vector<Array> call(const std::vector<Operand>& args) const;
  // The single output of a one-output kernel (ValueError otherwise: use call()).
  template <class... A>
  Array operator()(const A&... args) const {
    return single(call(std::vector<Operand>{Operand(args)...}));
  }
  int nin() const;
  int nout() const;
  const std::string& name() const;

 private:
  Array single(std::vector<Array> r) const;
  std::shared_ptr<const detail::UserKernelDef> def_;
};

class ReductionKernel {
 public:
  // map_expr: an expression over the inputs (converted to the reduce type); reduce_expr:
  // combines `a` and `b`; post_map_expr: statements setting the output from `a`; identity:
  // the reduction's identity (an expression). reduce_type defaults to the output's type.
  ReductionKernel(const std::string& in_params, const std::string& out_params, const std::string& map_expr,
                  const std::string& reduce_expr, const std::string& post_map_expr, const std::string& identity,
                  const std::string& name = "reduce_kernel", const std::string& reduce_type = "");
  // Inputs (arrays or scalars), then optionally the output array to write into.
  Array call(const std::vector<Operand>& args, AxisArg axis = {}, bool keepdims = false) const;
  // Over all axes: kernel(x, y).
  template <class... A>
  Array operator()(const A&... args) const {
    return call(std::vector<Operand>{Operand(args)...});
  }
  // kernel({x, y}, /*axis=*/1, /*keepdims=*/true)
  Array operator()(std::initializer_list<Operand> args, AxisArg axis, bool keepdims = false) const {
    return call(std::vector<Operand>(args), axis, keepdims);
  }
  const std::string& name() const;

 private:
  std::shared_ptr<const detail::UserKernelDef> def_;
};

// ------------------------------------------------------------------ raw kernels
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  Dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}  // NOLINT: Dim3 g = 128;
};

// One argument of a raw kernel: an array (passed as its data pointer, after any pending
// work on it is done) or a value passed as its C++ type (a device pointer too).
class KernelArg {
 public:
  KernelArg(const Array& a) : array_(&a) {}  // NOLINT
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T> || std::is_pointer_v<T> ||
                                              std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>>>
  KernelArg(T v) : size_(sizeof(T)), align_(alignof(T)) {  // NOLINT
    std::memcpy(bytes_, &v, sizeof(T));
  }
  bool is_array() const { return array_ != nullptr; }
  const Array& array() const { return *array_; }
  const unsigned char* bytes() const { return bytes_; }
  unsigned size() const { return size_; }
  unsigned align() const { return align_; }

 private:
  const Array* array_ = nullptr;  // arguments live for the call only
  alignas(16) unsigned char bytes_[16] = {};
  unsigned size_ = 0, align_ = 1;
};

class RawKernel {
 public:
  // source defines `extern "C" __global__ void name(...)`; options go to NVRTC after cufuse's own.
  RawKernel(const std::string& source, const std::string& name, const std::vector<std::string>& options = {});
  // Launches on the current stream of the current device; arrays must live there.
  void launch(Dim3 grid, Dim3 block, const std::vector<KernelArg>& args, unsigned shared_mem = 0) const;
  void operator()(Dim3 grid, Dim3 block, std::initializer_list<KernelArg> args, unsigned shared_mem = 0) const {
    launch(grid, block, std::vector<KernelArg>(args), shared_mem);
  }
  // Compiles now (NVRTC, or a cache hit) without launching; works without a GPU.
  void compile() const;
  int num_regs() const;           // from ptxas (-1 when unknown); compiles first
  const std::string& name() const;

 private:
  friend class RawModule;
  explicit RawKernel(std::shared_ptr<detail::RawKernelImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::RawKernelImpl> impl_;
};

// A CUDA source with several kernels, compiled once.
class RawModule {
 public:
  explicit RawModule(const std::string& source, const std::vector<std::string>& options = {});
  RawKernel get_function(const std::string& name) const;
  void compile() const;

 private:
  std::shared_ptr<detail::RawKernelImpl> impl_;
};

}  // namespace cufuse
