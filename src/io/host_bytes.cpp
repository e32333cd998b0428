// src/io/host_bytes.cpp: arrays <-> host bytes for the file formats (see host_bytes.hpp).
#include "io/host_bytes.hpp"

#include <algorithm>
#include <cstring>

#include "cufuse/backend.hpp"
#include "cufuse/creation.hpp"
#include "core/node.hpp"
#include "io/npy_format.hpp"
#include "runtime/storage.hpp"

namespace cufuse::io {

bool fortran_only(const Array& a) {
  if (a.ndim() < 2 || a.size() == 0) return false;
  if (a.is_contiguous()) return false;  // materializes
  const Strides st = a.strides();
  int64_t expect = 1;
  for (int i = 0; i < a.ndim(); ++i) {
    if (a.shape()[i] == 1) continue;
    if (st[i] != expect) return false;
    expect *= a.shape()[i];
  }
  return true;
}

std::vector<unsigned char> host_bytes(const Array& a, bool fortran) {
  std::vector<unsigned char> out(static_cast<size_t>(a.nbytes()));
  if (out.empty()) return out;
  const Array src = fortran ? a.transpose() : a;
  src.copy_to_host(out.data(), out.size());
  return out;
}

static void fix_bytes(void* data, uint64_t count, DType dtype, bool swap) {
  if (swap && is_complex(dtype)) byteswap(data, count * 2, itemsize(dtype) / 2);  // each part on its own
  else if (swap) byteswap(data, count, itemsize(dtype));
  if (dtype == DType::Bool) {
    auto* p = static_cast<unsigned char*>(data);
    for (uint64_t i = 0; i < count; ++i) p[i] = p[i] != 0;
  }
}

Array array_from_source(const ByteSource& src, uint64_t offset, DType dtype, const Shape& shape, bool swap,
                        bool fortran) {
  Shape file_shape = shape;
  if (fortran) std::reverse(file_shape.begin(), file_shape.end());
  const uint64_t count = static_cast<uint64_t>(numel(shape));
  const size_t nbytes = static_cast<size_t>(count * static_cast<uint64_t>(itemsize(dtype)));
  Array c;
  if (current_backend() == Backend::Reference) {
    auto st = detail::allocate_host(nbytes);
    src.read(offset, st->ptr, nbytes, "the array data");
    fix_bytes(st->ptr, count, dtype, swap);
    c = Array(detail::make_buffer(dtype, detail::contiguous_layout(file_shape), std::move(st)));
  } else {
    std::vector<unsigned char> buf(nbytes);
    src.read(offset, buf.data(), nbytes, "the array data");
    fix_bytes(buf.data(), count, dtype, swap);
    c = from_host(buf.data(), dtype, file_shape);
  }
  return fortran ? c.transpose() : c;
}

}  // namespace cufuse::io
