// src/io/foreign.cpp: from_device_pointer and Array::data_ptr (cufuse/foreign.hpp), and the
// foreign-array helpers DLPack shares (foreign_array.hpp).
#include <cstdint>

#include <fmt/format.h>

#include "cufuse/backend.hpp"
#include "cufuse/foreign.hpp"
#include "graph/realize.hpp"
#include "core/node.hpp"
#include "core/registry.hpp"
#include "graph/lazy_base.hpp"
#include "io/foreign_array.hpp"
#include "runtime/foreign_storage.hpp"

namespace cufuse {

namespace io {

Array foreign_array(void* ptr, DType dtype, const Shape& shape, const std::optional<Strides>& strides, int device,
                    std::function<void()> release, bool read_only, const char* what) {
  const int64_t isz = itemsize(dtype);
  for (auto d : shape)
    if (d < 0) throw ValueError(fmt::format("{}: negative dimensions are not allowed (shape {})", what, to_string(shape)));
  if (strides && static_cast<int>(strides->size()) != shape.ndim())
    throw ValueError(fmt::format("{}: {} strides for shape {} of {} dimensions", what, strides->size(), to_string(shape),
                                 shape.ndim()));
  detail::Layout l;
  l.shape = shape;
  l.strides = strides ? *strides : detail::contiguous_layout(shape).strides;
  const int64_t n = numel(shape);
  int64_t lo = 0, hi = 0;  // element offsets reached from element 0
  if (n > 0) {
    for (int i = 0; i < shape.ndim(); ++i) {
      const __int128 reach = static_cast<__int128>(l.strides[i]) * (shape[i] - 1);
      if (reach > INT64_MAX / 2 || reach < -(INT64_MAX / 2))
        throw ValueError(fmt::format("{}: strides {} of shape {} reach too far", what, to_string(l.strides), to_string(shape)));
      if (reach < 0) lo += static_cast<int64_t>(reach);
      else hi += static_cast<int64_t>(reach);
    }
    if (ptr == nullptr)
      throw ValueError(fmt::format("{}: a null pointer for {} elements of shape {}", what, n, to_string(shape)));
    if (reinterpret_cast<uintptr_t>(ptr) % static_cast<uintptr_t>(isz) != 0)
      throw ValueError(fmt::format("{}: the address {} is not aligned to the {}-byte items of {}", what, ptr, isz,
                                   name(dtype)));
  }
  void* base = static_cast<char*>(ptr) + lo * isz;
  const size_t nbytes = n > 0 ? static_cast<size_t>((hi - lo + 1) * isz) : 0;
  l.offset = -lo;
  auto st = detail::wrap_foreign_storage(n > 0 ? base : ptr, nbytes, device, std::move(release));
  auto leaf = detail::make_buffer(dtype, std::move(l), std::move(st));
  leaf->read_only = read_only;
  return Array(std::move(leaf));
}

Materialized materialize_for_export(const Array& a, const char* what) {
  if (!a.defined()) throw ValueError(fmt::format("{}: the Array handle is empty (default-constructed)", what));
  // A view of a lazy array gets that array's memory, where its values live from now on: a view
  // evaluated alone is computed into memory of its own, which it gives up for the base's once
  // the base is in memory (a write through another view of it: graph/array.cpp), and the
  // pointer handed out would then be stale.
  if (const std::shared_ptr<detail::LazyBase> base = a.lazy_base(); base && !base->node->is_materialized())
    detail::realize({base->node});
  a.eval();
  const detail::NodePtr& n = a.node();  // carries out a pending write into this memory by another handle
  if (!n->storage) throw ValueError(fmt::format("{}: a placeholder array has no memory", what));
  detail::settle_pending_write(n);
  {
    // Drops the thread's record of writes now carried out, so that the memory (and a foreign
    // owner's deleter) goes when the last handle does, not at the next materialization point.
    std::lock_guard<std::recursive_mutex> lk(detail::graph_mutex());
    (void)detail::pending_writes();
  }
  Materialized m;
  m.element0 = static_cast<char*>(n->storage->ptr) + n->layout.offset * itemsize(n->dtype);
  m.shape = n->layout.shape;
  m.strides = n->layout.strides;
  m.device = n->storage->device;
  m.keep = n->storage;
  return m;
}

}  // namespace io

Array from_device_pointer(void* ptr, DType dtype, const Shape& shape, std::optional<std::vector<int64_t>> strides_bytes,
                          std::shared_ptr<void> owner, std::optional<int> device) {
  const char* what = "from_device_pointer";
  std::optional<Strides> st;
  if (strides_bytes) {
    Strides s;
    for (int64_t b : *strides_bytes) {
      if (b % itemsize(dtype) != 0)
        throw ValueError(fmt::format("{}: stride {} bytes is not a multiple of the itemsize {} of {}", what, b,
                                     itemsize(dtype), name(dtype)));
      s.push_back(b / itemsize(dtype));
    }
    st = std::move(s);
  }
  int dev;
  if (device) {
    dev = *device;
    if (dev < -1) throw ValueError(fmt::format("{}: device {} is not a device id (-1: host memory)", what, dev));
  } else {
    dev = current_backend() == Backend::Reference ? -1 : detail::device_of_pointer(ptr);
  }
  std::function<void()> release;
  if (owner) release = [o = std::move(owner)]() mutable { o.reset(); };
  return io::foreign_array(ptr, dtype, shape, st, dev, std::move(release), false, what);
}

void* Array::data_ptr() const { return io::materialize_for_export(*this, "data_ptr").element0; }

}  // namespace cufuse
