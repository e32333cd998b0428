// src/runtime/storage.hpp: a block of array memory, on a device (from the stream-ordered
// pool) or on the host (the reference backend). Freed back to the pool on the stream it
// was last ordered on when the last node holding it goes away.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace cufuse::detail {

struct Storage {
  void* ptr = nullptr;
  size_t nbytes = 0;
  int device = -1;         // -1: host memory
  void* stream = nullptr;  // cudaStream_t the block is ordered on (freed there)
  std::function<void(Storage&)> release;  // non-empty for memory cufuse does not own (DLPack)
  // Keeps the cufuse Stream behind `stream` alive until the block is freed on it (a user
  // Stream may go away before the arrays made on it). Whoever changes `stream` sets this
  // too: current_stream_owner() goes with current_stream().
  std::shared_ptr<void> stream_owner;
  // Streams other than `stream` whose work used this block (recorded by the executor and
  // fuse() replay, note_stream_use below): before the block goes back to the pool, `stream`
  // waits for the work each of them had queued (wait_for_stream_uses).
  struct StreamUse {
    void* stream;
    int device;
    std::shared_ptr<void> owner;  // keeps that Stream alive until the wait is enqueued
  };
  std::vector<StreamUse> other_streams;
  // The pending in-place write into this memory (a graph Node with a WriteDest here), or
  // null. There is at most one: a second write, or a read of this memory through any other
  // handle, settles it first (src/graph/array.cpp, src/exec/executor.cpp). Changed under
  // graph_mutex(); read without it.
  std::atomic<void*> pending_write{nullptr};
  // Allocated while its stream was being captured: graph memory, valid only inside the user's
  // graph, so it never enters the small-block cache (a cached one handed to an upload outside
  // the graph failed with cudaErrorInvalidValue, tests/gpu/test_graph_launch_gpu.cpp).
  bool graph_memory = false;

  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();
  bool on_host() const { return device < 0; }
};

// Makes s.stream wait for the work of s.other_streams (runtime/stream_uses.cpp; called by
// ~Storage before the block is freed; logs, never throws).
void wait_for_stream_uses(Storage& s);

// Records that work on `stream` (this thread's current stream of `device`) used `s`. Free
// when `stream` is the one `s` is ordered on.
void record_stream_use_slow(Storage& s, void* stream, int device);
inline void note_stream_use(Storage& s, void* stream, int device) {
  if (s.stream != stream && s.device >= 0 && s.ptr != nullptr) [[unlikely]]
    record_stream_use_slow(s, stream, device);
}

// nbytes of device memory on the current device, ordered on the current stream, from the
// pool. On out-of-memory: trims the pool and retries once, then throws OutOfMemoryError
// saying how much was asked and how much is free. Throws NoDeviceError with no device.
std::shared_ptr<Storage> allocate_device(size_t nbytes);
// nbytes of 64-byte aligned host memory (reference backend).
std::shared_ptr<Storage> allocate_host(size_t nbytes);

}  // namespace cufuse::detail
