// src/io/dlpack.cpp: to_dlpack / from_dlpack (cufuse/dlpack.hpp), unversioned and, where the
// installed header is DLPack 1.x, versioned. Compiled to nothing where CMake found no header.
#ifdef CUFUSE_HAVE_DLPACK
#include "cufuse/dlpack.hpp"

#include <cuda_runtime_api.h>

#include <vector>

#include <fmt/format.h>

#include "cufuse/backend.hpp"
#include "io/foreign_array.hpp"
#include "exec/binding.hpp"
#include "runtime/device.hpp"

namespace cufuse {

namespace {

constexpr uint8_t kBoolCode = 6;  // kDLBool (DLPack 0.8+); 0.6's header has no name for it

DLDataType dl_dtype(DType t) {
  DLDataType d{};
  d.lanes = 1;
  d.bits = static_cast<uint8_t>(itemsize(t) * 8);
  switch (kind(t)) {
    case DKind::Bool: d.code = kBoolCode; break;
    case DKind::Int: d.code = kDLInt; break;
    case DKind::UInt: d.code = kDLUInt; break;
    case DKind::Float: d.code = t == DType::BFloat16 ? uint8_t(kDLBfloat) : uint8_t(kDLFloat); break;
    case DKind::Complex: d.code = kDLComplex; break;
  }
  return d;
}

DType cf_dtype(DLDataType d) {
  auto bad = [&](const char* why) {
    return TypeError(fmt::format("from_dlpack: dtype (code {}, bits {}, lanes {}) {}", int(d.code), int(d.bits),
                                 int(d.lanes), why));
  };
  if (d.lanes != 1) throw bad("is a vector type: only lanes == 1 is supported");
  switch (d.code) {
    case kDLInt:
      if (d.bits == 8) return DType::Int8;
      if (d.bits == 16) return DType::Int16;
      if (d.bits == 32) return DType::Int32;
      if (d.bits == 64) return DType::Int64;
      break;
    case kDLUInt:
      if (d.bits == 8) return DType::UInt8;
      if (d.bits == 16) return DType::UInt16;
      if (d.bits == 32) return DType::UInt32;
      if (d.bits == 64) return DType::UInt64;
      break;
    case kDLFloat:
      if (d.bits == 16) return DType::Float16;
      if (d.bits == 32) return DType::Float32;
      if (d.bits == 64) return DType::Float64;
      break;
    case kDLBfloat:
      if (d.bits == 16) return DType::BFloat16;
      break;
    case kBoolCode:
      if (d.bits == 8) return DType::Bool;
      break;
    case kDLComplex:
      if (d.bits == 64) return DType::Complex64;
      if (d.bits == 128) return DType::Complex128;
      break;
    default: throw bad("has an unknown type code");
  }
  throw bad("has a bit width cufuse has no dtype for");
}

// What a tensor we export holds: the memory (kept alive) and the shape and strides it points at.
struct ExportCtx {
  std::shared_ptr<void> keep;
  std::vector<int64_t> shape, strides;
};

// Fills `t` from `a` (materialized, settled, and its work finished); returns the context.
ExportCtx* fill_tensor(const Array& a, DLTensor& t, const char* what) {
  io::Materialized m = io::materialize_for_export(a, what);
  if (m.device >= 0) {
    // The consumer may read on any stream, or the host: the work that made the array is done first.
    detail::DeviceGuard on(m.device);
    CUFUSE_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(detail::current_stream())));
  }
  auto* ctx = new ExportCtx;
  ctx->keep = std::move(m.keep);
  ctx->shape.assign(m.shape.begin(), m.shape.end());
  ctx->strides.assign(m.strides.begin(), m.strides.end());
  t.data = m.element0;
  t.byte_offset = 0;
  t.device.device_type = m.device >= 0 ? kDLCUDA : kDLCPU;
  t.device.device_id = m.device >= 0 ? m.device : 0;
  t.ndim = static_cast<int>(ctx->shape.size());
  t.dtype = dl_dtype(a.dtype());
  t.shape = ctx->shape.empty() ? nullptr : ctx->shape.data();
  t.strides = ctx->strides.empty() ? nullptr : ctx->strides.data();
  return ctx;
}

// The array on a tensor's memory; `release` hands the tensor back (calls its deleter).
Array import_tensor(const DLTensor& t, std::function<void()> release, bool read_only) {
  const char* what = "from_dlpack";
  int device;
  switch (t.device.device_type) {
    case kDLCPU: device = -1; break;
    case kDLCUDA:
    case kDLCUDAManaged: device = t.device.device_id; break;
    case kDLCUDAHost:
      device = current_backend() == Backend::Reference ? -1 : detail::current_device();
      break;
    default:
      throw NotSupportedError(fmt::format("{}: device type {} (id {}) is not supported: cufuse takes kDLCPU, kDLCUDA, "
                                          "kDLCUDAHost and kDLCUDAManaged tensors", what, int(t.device.device_type),
                                          t.device.device_id));
  }
  if (t.ndim < 0 || t.ndim > 64) throw ValueError(fmt::format("{}: ndim {} is out of range", what, t.ndim));
  if (t.ndim > 0 && t.shape == nullptr) throw ValueError(fmt::format("{}: ndim {} but no shape", what, t.ndim));
  const DType dtype = cf_dtype(t.dtype);
  Shape shape(t.shape, t.shape + t.ndim);
  std::optional<Strides> strides;
  if (t.strides != nullptr) strides = Strides(t.strides, t.strides + t.ndim);
  void* p = static_cast<char*>(t.data) + t.byte_offset;
  return io::foreign_array(p, dtype, shape, strides, device, std::move(release), read_only, what);
}

}  // namespace

DLManagedTensor* to_dlpack(const Array& a) {
  auto* mt = new DLManagedTensor{};
  try {
    mt->manager_ctx = fill_tensor(a, mt->dl_tensor, "to_dlpack");
  } catch (...) {
    delete mt;
    throw;
  }
  mt->deleter = [](DLManagedTensor* self) {
    delete static_cast<ExportCtx*>(self->manager_ctx);
    delete self;
  };
  return mt;
}

Array from_dlpack(DLManagedTensor* t) {
  if (t == nullptr) throw ValueError("from_dlpack: a null DLManagedTensor");
  auto release = [t] {
    if (t->deleter) t->deleter(t);
  };
  try {
    return import_tensor(t->dl_tensor, release, false);
  } catch (...) {
    release();  // the consumer owns the tensor from the call on, refused or not
    throw;
  }
}

#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
DLManagedTensorVersioned* to_dlpack_versioned(const Array& a) {
  auto* mt = new DLManagedTensorVersioned{};
  mt->version.major = DLPACK_MAJOR_VERSION;
  mt->version.minor = DLPACK_MINOR_VERSION;
  mt->flags = 0;
  try {
    mt->manager_ctx = fill_tensor(a, mt->dl_tensor, "to_dlpack_versioned");
  } catch (...) {
    delete mt;
    throw;
  }
  mt->deleter = [](DLManagedTensorVersioned* self) {
    delete static_cast<ExportCtx*>(self->manager_ctx);
    delete self;
  };
  return mt;
}

Array from_dlpack(DLManagedTensorVersioned* t) {
  if (t == nullptr) throw ValueError("from_dlpack: a null DLManagedTensorVersioned");
  auto release = [t] {
    if (t->deleter) t->deleter(t);
  };
  try {
    if (t->version.major != DLPACK_MAJOR_VERSION)
      throw NotSupportedError(fmt::format("from_dlpack: DLPack version {}.{}, this cufuse reads {}.x", t->version.major,
                                          t->version.minor, DLPACK_MAJOR_VERSION));
    return import_tensor(t->dl_tensor, release, (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  } catch (...) {
    release();
    throw;
  }
}
#endif

}  // namespace cufuse
#endif  // CUFUSE_HAVE_DLPACK
