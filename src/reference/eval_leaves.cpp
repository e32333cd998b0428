// src/reference/eval_leaves.cpp: Buffer and Scalar leaves on the host.
//
// A Buffer leaf is gathered through its layout (element offset + sum(idx * strides)) from
// host storage, or from device storage after copying to the host just the byte range the
// layout touches (on the stream the block is ordered on, so pending writes land first).
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "reference/eval_nodes.hpp"
#include "reference/host_data.hpp"
#include "runtime/storage.hpp"
#include "runtime/transfer.hpp"

namespace cufuse::detail::ref {

HostArray make_host_array(DType t, const Shape& shape) {
  HostArray a;
  a.dtype = t;
  a.shape = shape;
  a.bytes.resize(static_cast<size_t>(numel(shape)) * itemsize(t));
  return a;
}

HostArray eval_buffer(const Node& n) {
  if (!n.storage)
    throw ValueError(fmt::format(
        "reference evaluator: a placeholder ({} array of shape {}) has no data; it stands for an "
        "argument of a traced fuse() function and must be bound to an array before evaluation",
        name(n.dtype), to_string(n.shape())));
  HostArray out = make_host_array(n.dtype, n.shape());
  if (out.size() == 0) return out;
  const Storage& st = *n.storage;
  const int isz = itemsize(n.dtype);
  const int64_t capacity = static_cast<int64_t>(st.nbytes / isz);
  auto [lo, hi] = layout_extent(n.layout);
  if (lo < 0 || hi >= capacity)
    throw InternalError(fmt::format(
        "reference evaluator: a {} buffer of shape {} (strides ({}), offset {}) reaches elements {}..{} "
        "of a {}-byte block", name(n.dtype), to_string(n.shape()),
        fmt::join(n.layout.strides.begin(), n.layout.strides.end(), ", "), n.layout.offset, lo, hi, st.nbytes));
  if (st.on_host()) {
    gather(st.ptr, 0, capacity, isz, n.layout, out.bytes.data(), "a host buffer");
  } else {
    const int64_t count = hi - lo + 1;
    std::vector<unsigned char> staged(static_cast<size_t>(count) * isz);
    copy_to_host(staged.data(), static_cast<const unsigned char*>(st.ptr) + lo * isz, staged.size(), st.stream);
    gather(staged.data(), lo, count, isz, n.layout, out.bytes.data(), "a device buffer");
  }
  if (n.dtype == DType::Bool)  // any nonzero byte is True; keep bool's 0/1 representation
    for (auto& b : out.bytes) b = b ? 1 : 0;
  return out;
}

HostArray eval_scalar(const Node& n) {
  // make_scalar already holds the value as n.dtype; a strong scalar of another dtype (not
  // made by make_scalar) is converted as np.<dtype>(value) would.
  const Scalar s = (!n.scalar.weak() && n.scalar.dtype() == n.dtype) ? n.scalar : Scalar::typed(n.scalar, n.dtype);
  HostArray out = make_host_array(n.dtype, n.shape());
  unsigned char one[16] = {};
  switch (n.dtype) {
    case DType::Complex64: {
      const float v[2] = {static_cast<float>(s.to_complex().real()), static_cast<float>(s.to_complex().imag())};
      std::memcpy(one, v, 8);
      break;
    }
    case DType::Complex128: {
      const double v[2] = {s.to_complex().real(), s.to_complex().imag()};
      std::memcpy(one, v, 16);
      break;
    }
    case DType::Float16: {
      uint16_t b = double_to_f16(s.to_double());
      std::memcpy(one, &b, 2);
      break;
    }
    case DType::BFloat16: {
      uint16_t b = double_to_bf16(s.to_double());
      std::memcpy(one, &b, 2);
      break;
    }
    case DType::Float32: {
      float f = static_cast<float>(s.to_double());
      std::memcpy(one, &f, 4);
      break;
    }
    case DType::Float64: {
      double d = s.to_double();
      std::memcpy(one, &d, 8);
      break;
    }
    case DType::Bool: one[0] = s.to_bool() ? 1 : 0; break;
    default: {  // integers: the low bytes of the two's complement value (little endian)
      uint64_t u = s.kind() == Scalar::Kind::UInt ? s.to_uint64() : static_cast<uint64_t>(s.to_int64());
      std::memcpy(one, &u, 8);
      break;
    }
  }
  const int isz = itemsize(n.dtype);
  for (int64_t i = 0, m = out.size(); i < m; ++i) std::memcpy(out.bytes.data() + i * isz, one, isz);
  return out;
}

}  // namespace cufuse::detail::ref
