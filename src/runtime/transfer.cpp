// src/runtime/transfer.cpp: host <-> device copies through pinned staging buffers (one set
// per device, grown on demand, guarded by a mutex) and device -> device copies. A copy
// larger than one chunk alternates between two buffers so that the host memcpy of one
// chunk overlaps the DMA of the next; the host-side calls return when the copy is done.
#include "runtime/transfer.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "runtime/device.hpp"
#include "runtime/context.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime_internal.hpp"

namespace cufuse::detail {

namespace {

// Pinned buffers of one device. Never freed at exit (the driver reclaims them; freeing
// from a static destructor would race the CUDA runtime's own teardown).
struct Staging {
  std::mutex mu;
  void* buf[2] = {nullptr, nullptr};
  size_t cap[2] = {0, 0};
  cudaEvent_t done[2] = {nullptr, nullptr};  // last DMA issued on buf[i]
};
// Process state (runtime/context.hpp), never destroyed.
struct Stagings {
  static constexpr StateSlot kSlot = StateSlot::Staging;
  Staging per_device[kMaxDevices];
};
Staging& staging(int device) { return runtime().state<Stagings>().per_device[device]; }

size_t round_capacity(size_t n) {
  size_t c = 64 << 10;  // at least 64 KiB: small copies (item()) never regrow it
  while (c < n) c <<= 1;
  return std::min(c, kStagingChunkBytes);
}

// Makes buf[0..nbufs) at least `need` bytes (need <= kStagingChunkBytes) and the events
// exist. Called with st.mu held and `device` current.
void ensure(Staging& st, size_t need, int nbufs) {
  for (int i = 0; i < nbufs; ++i) {
    if (st.cap[i] >= need) continue;
    size_t c = round_capacity(need);
    if (st.buf[i] != nullptr) {
      // Every earlier use was waited for before its copy returned.
      if (cudaFreeHost(st.buf[i]) != cudaSuccess) cudaGetLastError();
      st.buf[i] = nullptr;
      st.cap[i] = 0;
    }
    CUFUSE_CUDA_CHECK(cudaHostAlloc(&st.buf[i], c, cudaHostAllocPortable));
    st.cap[i] = c;
    log(LogChannel::Memory, "pinned staging buffer {}: {}", i, format_bytes(c));
  }
  for (int i = 0; i < 2 && nbufs > 1; ++i)
    if (st.done[i] == nullptr)
      CUFUSE_CUDA_CHECK(cudaEventCreateWithFlags(&st.done[i], cudaEventDisableTiming));
}

// If a chunked copy throws halfway, DMAs into the staging buffers may still be in flight:
// wait for them before the next caller reuses the buffers.
struct DrainOnThrow {
  cudaStream_t stream;
  bool armed = true;
  ~DrainOnThrow() {
    if (armed && cudaStreamSynchronize(stream) != cudaSuccess) cudaGetLastError();
  }
};

}  // namespace

void copy_to_host(void* dst, const void* device_src, size_t nbytes, void* stream) {
  if (nbytes == 0) return;
  require_device();
  const int dev = current_device();
  auto s = static_cast<cudaStream_t>(stream);
  auto* out = static_cast<char*>(dst);
  auto* in = static_cast<const char*>(device_src);
  Staging& st = staging(dev);
  std::lock_guard<std::mutex> lk(st.mu);
  DrainOnThrow drain{s};

  if (nbytes <= kStagingChunkBytes) {
    ensure(st, nbytes, 1);
    CUFUSE_CUDA_CHECK(cudaMemcpyAsync(st.buf[0], in, nbytes, cudaMemcpyDeviceToHost, s));
    CUFUSE_CUDA_CHECK(cudaStreamSynchronize(s));
    std::memcpy(out, st.buf[0], nbytes);
  } else {
    ensure(st, kStagingChunkBytes, 2);
    const size_t chunk = kStagingChunkBytes;
    const size_t n = (nbytes + chunk - 1) / chunk;
    auto issue = [&](size_t i) {
      int b = int(i & 1);
      size_t off = i * chunk, len = std::min(chunk, nbytes - off);
      CUFUSE_CUDA_CHECK(cudaMemcpyAsync(st.buf[b], in + off, len, cudaMemcpyDeviceToHost, s));
      CUFUSE_CUDA_CHECK(cudaEventRecord(st.done[b], s));
    };
    issue(0);
    issue(1);  // n >= 2 here
    for (size_t i = 0; i < n; ++i) {
      int b = int(i & 1);
      size_t off = i * chunk, len = std::min(chunk, nbytes - off);
      CUFUSE_CUDA_CHECK(cudaEventSynchronize(st.done[b]));
      std::memcpy(out + off, st.buf[b], len);
      if (i + 2 < n) issue(i + 2);  // buf[b] is free again
    }
  }
  drain.armed = false;
  log(LogChannel::Memory, "copy to host: {} B on stream {}", nbytes, stream);
}

void copy_from_host(void* device_dst, const void* src, size_t nbytes, void* stream) {
  if (nbytes == 0) return;
  require_device();
  const int dev = current_device();
  auto s = static_cast<cudaStream_t>(stream);
  auto* out = static_cast<char*>(device_dst);
  auto* in = static_cast<const char*>(src);
  Staging& st = staging(dev);
  std::lock_guard<std::mutex> lk(st.mu);
  DrainOnThrow drain{s};

  if (nbytes <= kStagingChunkBytes) {
    ensure(st, nbytes, 1);
    std::memcpy(st.buf[0], in, nbytes);
    CUFUSE_CUDA_CHECK(cudaMemcpyAsync(out, st.buf[0], nbytes, cudaMemcpyHostToDevice, s));
    CUFUSE_CUDA_CHECK(cudaStreamSynchronize(s));
  } else {
    ensure(st, kStagingChunkBytes, 2);
    const size_t chunk = kStagingChunkBytes;
    const size_t n = (nbytes + chunk - 1) / chunk;
    for (size_t i = 0; i < n; ++i) {
      int b = int(i & 1);
      size_t off = i * chunk, len = std::min(chunk, nbytes - off);
      if (i >= 2) CUFUSE_CUDA_CHECK(cudaEventSynchronize(st.done[b]));  // buf[b]'s DMA is done
      std::memcpy(st.buf[b], in + off, len);
      CUFUSE_CUDA_CHECK(cudaMemcpyAsync(out + off, st.buf[b], len, cudaMemcpyHostToDevice, s));
      CUFUSE_CUDA_CHECK(cudaEventRecord(st.done[b], s));
    }
    CUFUSE_CUDA_CHECK(cudaEventSynchronize(st.done[(n - 1) & 1]));  // the stream is in order
  }
  drain.armed = false;
  log(LogChannel::Memory, "copy from host: {} B on stream {}", nbytes, stream);
}

void copy_device(void* dst, const void* src, size_t nbytes, void* stream) {
  if (nbytes == 0) return;
  require_device();
  CUFUSE_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)));
}

void memset_device(void* dst, int value, size_t nbytes, void* stream) {
  if (nbytes == 0) return;
  require_device();
  CUFUSE_CUDA_CHECK(cudaMemsetAsync(dst, value, nbytes, static_cast<cudaStream_t>(stream)));
}

}  // namespace cufuse::detail
