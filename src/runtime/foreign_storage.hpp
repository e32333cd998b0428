// src/runtime/foreign_storage.hpp: Storage for memory cufuse does not own (DLPack tensors,
// from_device_pointer): never freed by cufuse; when the last node on it goes away, the work
// queued on it (on its stream and the other streams that used it) is waited for, then the
// owner's release runs (a DLPack deleter, the last reference to an owner object).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "runtime/storage.hpp"

namespace cufuse::detail {

// `nbytes` at `ptr` on `device` (-1: host memory), ordered on this thread's current stream
// of that device. `release` may be empty (nothing to tell the owner); it must not throw.
std::shared_ptr<Storage> wrap_foreign_storage(void* ptr, size_t nbytes, int device, std::function<void()> release);

// The device a pointer's memory belongs to for kernels: its device for device or managed
// memory, the current device for registered/pinned host memory (reachable through unified
// addressing); -1 for ordinary host memory or where there is no CUDA device.
int device_of_pointer(const void* ptr);

}  // namespace cufuse::detail
