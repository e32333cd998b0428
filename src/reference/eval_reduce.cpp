// src/reference/eval_reduce.cpp: the reference of Reduce nodes (reductions and scans):
// each output element combines its row's elements in row-major order of the reduced axes
// with the combine functions of codegen/device_helpers.inc (the kernels' own), in the
// input's compute type (float for float16/bfloat16).
#include <memory>

#include <fmt/format.h>

#include "codegen/host_helpers.hpp"
#include "core/reduce_attrs.hpp"
#include "reference/eval_nodes.hpp"
#include "reference/host_data.hpp"

namespace cufuse::detail::ref {

namespace {

// Row-major positions (into the input) of the kept index o and reduced index r.
struct RowMap {
  std::vector<int64_t> kept_off;  // per output element
  std::vector<int64_t> red_off;   // per reduced element
};

RowMap row_map(const Shape& S, const Axes& axes) {
  const Strides st = contiguous_strides(S);
  std::vector<int> kept, red;
  for (int d = 0; d < S.ndim(); ++d)
    (std::find(axes.begin(), axes.end(), d) != axes.end() ? red : kept).push_back(d);
  auto offsets = [&](const std::vector<int>& dims) {
    int64_t n = 1;
    for (int d : dims) n *= S[d];
    std::vector<int64_t> out(static_cast<size_t>(n), 0);
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (size_t k = 0; k < dims.size(); ++k) off += idx[k] * st[dims[k]];
      out[static_cast<size_t>(i)] = off;
      for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
        if (++idx[k] < S[dims[k]]) break;
        idx[k] = 0;
      }
    }
    return out;
  };
  return RowMap{offsets(kept), offsets(red)};
}

template <class T>
unsigned char truth(T v) {
  if constexpr (is_cplx_v<T>) return v != T(0) ? 1 : 0;
  else return v ? 1 : 0;
}

template <class T>
T identity(ReduceOp op) {
  using namespace ref_kern;
  if constexpr (is_cplx_v<T>) {  // complex: sums, products and NumPy's order (graph/reduce.cpp refuses any/all)
    switch (op) {
      case ReduceOp::Prod: case ReduceOp::CumProd: return T(1);
      case ReduceOp::Max: case ReduceOp::ArgMax: return cf_lowest<T>();
      case ReduceOp::Min: case ReduceOp::ArgMin: return cf_highest<T>();
      case ReduceOp::NanMax: return cf_nan_or<T>(cf_lowest<T>());
      case ReduceOp::NanMin: return cf_nan_or<T>(cf_highest<T>());
      default: return T(0);
    }
  } else switch (op) {
    case ReduceOp::Sum: case ReduceOp::CumSum: return T(0);
    case ReduceOp::Prod: case ReduceOp::CumProd: return T(1);
    case ReduceOp::Max: case ReduceOp::ArgMax: return cf_lowest<T>();
    case ReduceOp::Min: case ReduceOp::ArgMin: return cf_highest<T>();
    case ReduceOp::NanMax: return cf_nan_or<T>(cf_lowest<T>());
    case ReduceOp::NanMin: return cf_nan_or<T>(cf_highest<T>());
    case ReduceOp::Any: return T(false);
    case ReduceOp::All: return T(true);
    case ReduceOp::User: break;  // ReductionKernel: refused before this (evaluator.cpp)
  }
  return T(0);
}

template <class T>
T combine(ReduceOp op, T a, T b) {
  using namespace ref_kern;
  if constexpr (is_cplx_v<T>) {
    switch (op) {
      case ReduceOp::Prod: case ReduceOp::CumProd: return cf_mul(a, b);
      case ReduceOp::Max: return cf_red_max(a, b);
      case ReduceOp::Min: return cf_red_min(a, b);
      case ReduceOp::NanMax: return cf_red_nanmax(a, b);
      case ReduceOp::NanMin: return cf_red_nanmin(a, b);
      default: return cf_add(a, b);
    }
  } else switch (op) {
    case ReduceOp::Sum: case ReduceOp::CumSum:
      if constexpr (std::is_same_v<T, bool>) return a || b; else return cf_add(a, b);
    case ReduceOp::Prod: case ReduceOp::CumProd:
      if constexpr (std::is_same_v<T, bool>) return a && b; else return cf_mul(a, b);
    case ReduceOp::Max: return cf_red_max(a, b);
    case ReduceOp::Min: return cf_red_min(a, b);
    case ReduceOp::NanMax: return cf_red_nanmax(a, b);
    case ReduceOp::NanMin: return cf_red_nanmin(a, b);
    case ReduceOp::Any: return a || b;
    case ReduceOp::All: return a && b;
    default: return a;
  }
}

}  // namespace

HostArray eval_reduce(const Node& n, const HostArray& in) {
  const ReduceAttrs& at = reduce_attrs(n);
  const Shape& S = in.shape;
  const int64_t total = numel(S);
  HostArray out = make_host_array(n.dtype, n.shape());
  // the input in its compute type
  std::vector<unsigned char> comp(static_cast<size_t>(total * compute_size(in.dtype)));
  to_compute(in.dtype, in.bytes.data(), in.dtype, comp.data(), total);
  with_compute_type(in.dtype, [&](auto tg) {
    using T = typename decltype(tg)::type;
    const T* x = reinterpret_cast<const T*>(comp.data());
    if (is_scan(at.op)) {
      const int a = at.axes[0];
      const int64_t len = S[a];
      const int64_t stride = contiguous_strides(S)[a];
      std::unique_ptr<T[]> res(new T[static_cast<size_t>(total > 0 ? total : 1)]);
      const int64_t outer = len == 0 ? 0 : total / len;
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t base = (o / stride) * stride * len + o % stride;
        T acc = identity<T>(at.op);
        for (int64_t k = 0; k < len; ++k) {
          acc = combine(at.op, acc, x[base + k * stride]);
          res[static_cast<size_t>(base + k * stride)] = acc;
        }
      }
      if (n.dtype == DType::Bool)
        for (int64_t i = 0; i < total; ++i) out.bytes[static_cast<size_t>(i)] = truth(res[static_cast<size_t>(i)]);
      else
        compute_to_storage(n.dtype, res.get(), out.bytes.data(), total);
      return;
    }
    RowMap m = row_map(S, at.axes);
    const int64_t rows = static_cast<int64_t>(m.kept_off.size());
    if (is_arg(at.op)) {
      auto* o = out.data<long long>();
      const bool is_max = at.op == ReduceOp::ArgMax;
      for (int64_t i = 0; i < rows; ++i) {
        T best = identity<T>(at.op);
        long long bi = 0x7fffffffffffffffLL;
        for (size_t r = 0; r < m.red_off.size(); ++r) {
          const T v = x[m.kept_off[i] + m.red_off[r]];
          if (ref_kern::cf_arg_better(v, static_cast<long long>(r), best, bi, is_max)) {
            best = v;
            bi = static_cast<long long>(r);
          }
        }
        o[i] = bi;
      }
      return;
    }
    std::unique_ptr<T[]> res(new T[static_cast<size_t>(rows > 0 ? rows : 1)]);
    for (int64_t i = 0; i < rows; ++i) {
      T acc = identity<T>(at.op);
      for (int64_t r : m.red_off) acc = combine(at.op, acc, x[m.kept_off[i] + r]);
      res[static_cast<size_t>(i)] = acc;
    }
    if (n.dtype == DType::Bool) {
      for (int64_t i = 0; i < rows; ++i) out.bytes[static_cast<size_t>(i)] = truth(res[static_cast<size_t>(i)]);
    } else {
      compute_to_storage(n.dtype, res.get(), out.bytes.data(), rows);
    }
  });
  return out;
}

}  // namespace cufuse::detail::ref
