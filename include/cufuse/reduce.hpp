// cufuse/reduce.hpp: reductions, scans and vector norms, NumPy's semantics: over any set
// of axes (negative ones too) or all of them, keepdims, a dtype, NumPy's accumulators
// (integer sums in 64 bits, float16/bfloat16 in float32), NaN propagation, NumPy's answers
// for empty inputs. All lazy: the planner fuses what feeds a reduction (prologue), what
// follows it over its output (epilogue), sibling reductions of one iteration space, and a
// reduction broadcast back over its rows (softmax, layernorm, var) into one kernel.
// Results are deterministic: the same input gives the same bits on every run.
#pragma once
#include <initializer_list>
#include <optional>
#include <utility>

#include "cufuse/array.hpp"

namespace cufuse {

// Which axes: all of them (the default, axis=None), one, or several.
class AxisArg {
 public:
  AxisArg() = default;  // all axes
  AxisArg(int axis) : axes_(Axes{axis}) {}  // NOLINT
  AxisArg(std::initializer_list<int> axes) : axes_(Axes(axes)) {}  // NOLINT
  AxisArg(const Axes& axes) : axes_(axes) {}  // NOLINT
  AxisArg(std::nullopt_t) {}  // NOLINT: cf::none = all axes
  bool all() const { return !axes_.has_value(); }
  const Axes& axes() const { return *axes_; }

 private:
  std::optional<Axes> axes_;
};

// The array argument of a reduction is taken by value, and its handle is dropped once the
// result is built: a temporary's value (`cf::sum((x - y) * (x - y)).item()`) is then named
// by no handle while the statement that made it evaluates, so it fuses into the reduction
// instead of being kept in memory for a handle about to die (a named array is unaffected:
// the copy is dropped, the caller's handle stays).
Array sum(Array a, AxisArg axis = {}, bool keepdims = false, std::optional<DType> dtype = std::nullopt);
Array prod(Array a, AxisArg axis = {}, bool keepdims = false, std::optional<DType> dtype = std::nullopt);
Array max(Array a, AxisArg axis = {}, bool keepdims = false);
Array min(Array a, AxisArg axis = {}, bool keepdims = false);
inline Array amax(Array a, AxisArg axis = {}, bool keepdims = false) { return max(std::move(a), axis, keepdims); }
inline Array amin(Array a, AxisArg axis = {}, bool keepdims = false) { return min(std::move(a), axis, keepdims); }
Array mean(Array a, AxisArg axis = {}, bool keepdims = false, std::optional<DType> dtype = std::nullopt);
Array var(Array a, AxisArg axis = {}, int ddof = 0, bool keepdims = false,
          std::optional<DType> dtype = std::nullopt);
Array std(Array a, AxisArg axis = {}, int ddof = 0, bool keepdims = false,
          std::optional<DType> dtype = std::nullopt);
Array any(Array a, AxisArg axis = {}, bool keepdims = false);
Array all(Array a, AxisArg axis = {}, bool keepdims = false);
Array count_nonzero(Array a, AxisArg axis = {}, bool keepdims = false);
Array nansum(Array a, AxisArg axis = {}, bool keepdims = false, std::optional<DType> dtype = std::nullopt);
Array nanmean(Array a, AxisArg axis = {}, bool keepdims = false, std::optional<DType> dtype = std::nullopt);
Array nanmax(Array a, AxisArg axis = {}, bool keepdims = false);
Array nanmin(Array a, AxisArg axis = {}, bool keepdims = false);
Array ptp(Array a, AxisArg axis = {}, bool keepdims = false);
// Index of the first maximum (minimum; a NaN counts as the extreme) along `axis`, or in
// the flattened array when axis is none.
Array argmax(Array a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array argmin(Array a, std::optional<int> axis = std::nullopt, bool keepdims = false);
// Running sum / product along `axis` (the flattened array when none).
Array cumsum(Array a, std::optional<int> axis = std::nullopt, std::optional<DType> dtype = std::nullopt);
Array cumprod(Array a, std::optional<int> axis = std::nullopt, std::optional<DType> dtype = std::nullopt);

namespace linalg {
// Vector norms (ord = 2 by default; 1, inf, -inf, 0 and any p), over `axis` (all when none).
// Matrix norms (fro, nuc, 2 over two axes) come with the linear algebra library nodes.
Array norm(Array x, std::optional<double> ord = std::nullopt, AxisArg axis = {}, bool keepdims = false);
}  // namespace linalg

}  // namespace cufuse
