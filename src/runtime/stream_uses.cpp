// src/runtime/stream_uses.cpp: cross-stream safety of memory blocks (see storage.hpp): work
// on a stream other than the one a block is ordered on is recorded (by the executor and
// fuse() replay), and before the block goes back to the pool its stream waits for that work.
#include <cuda_runtime_api.h>

#include <mutex>

#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

namespace {
// The lock on every Storage's list of other-stream uses: process state (runtime/context.hpp).
struct StreamUses {
  static constexpr StateSlot kSlot = StateSlot::StreamUses;
  std::mutex mu;
};
std::mutex& uses_mutex() { return runtime().state<StreamUses>().mu; }
}  // namespace

void record_stream_use_slow(Storage& s, void* stream, int device) {
  std::lock_guard<std::mutex> lk(uses_mutex());
  for (const auto& u : s.other_streams)
    if (u.stream == stream) return;
  // The owner keeps a user's Stream alive until the wait at free time has been enqueued.
  s.other_streams.push_back(Storage::StreamUse{stream, device, current_stream_owner()});
  log(LogChannel::Memory, "device {}: block {} ({} B, ordered on stream {}) used on stream {}", s.device, s.ptr,
      s.nbytes, s.stream, stream);
}

// Called by ~Storage before cudaFreeAsync on s.stream: s.stream waits for the work each
// other stream had queued by now, so the pool cannot hand the block out while it runs.
// Errors are logged, never thrown (a destructor).
void wait_for_stream_uses(Storage& s) {
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) {
    cudaGetLastError();
    prev = -1;
  }
  for (const auto& u : s.other_streams) {
    cudaEvent_t ev = nullptr;
    bool ok = cudaSetDevice(u.device) == cudaSuccess &&
              cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess &&
              cudaEventRecord(ev, static_cast<cudaStream_t>(u.stream)) == cudaSuccess &&
              cudaSetDevice(s.device) == cudaSuccess &&
              cudaStreamWaitEvent(static_cast<cudaStream_t>(s.stream), ev, 0) == cudaSuccess;
    if (!ok) {
      cudaError_t e = cudaGetLastError();
      log(LogChannel::Memory, "device {}: ordering the free of {} after stream {} failed: {}", s.device, s.ptr,
          u.stream, cudaGetErrorName(e));
    }
    if (ev != nullptr && cudaEventDestroy(ev) != cudaSuccess) cudaGetLastError();
  }
  s.other_streams.clear();
  if (prev >= 0 && cudaSetDevice(prev) != cudaSuccess) cudaGetLastError();
}

}  // namespace cufuse::detail
