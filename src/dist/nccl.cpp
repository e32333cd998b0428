// src/dist/nccl.cpp: the GPU worlds' NCCL communicators and collectives (see nccl.hpp).
// The communicators of this process's devices are made together, non-blocking
// (ncclCommInitRankConfig, config.blocking = 0; CUFUSE_DIST_BLOCKING=1 makes a single process's
// blocking), from one unique id (made here, or rank 0's
// broadcast over MPI); a group of mesh devices gets its own communicators from ncclCommSplit
// (color: the group's first device), made once per group. Each device has a communication
// stream: it waits on an event recorded on the compute stream (the shard's work and the
// output's allocation), runs the collective, and the compute stream waits on an event
// recorded after it. The host then polls that event and ncclCommGetAsyncError until the
// collective completes, fails, or CUFUSE_DIST_TIMEOUT passes (then every communicator is
// aborted: a rank that died cannot hang the others). The state is a StateSlot of the
// runtime context (DistNccl).
#include "dist/nccl.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cufuse/error.hpp"
#include "dist/world.hpp"

#ifdef CUFUSE_HAVE_NCCL
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <cuda_runtime.h>
#include <nccl.h>

#include "cufuse/creation.hpp"
#include "cufuse/stream.hpp"
#include "dist/mpi.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#endif

namespace cufuse::dist::detail {

#ifndef CUFUSE_HAVE_NCCL

void nccl_init(int) {
  throw NotSupportedError("dist::init(): this build of cufuse has no NCCL (nccl.h and libnccl were not found); "
                          "dist::init(World::Host, n) simulates devices on the host");
}
void nccl_init_rank(int, int, int) { nccl_init(0); }
void nccl_finalize() {}
std::vector<Array> nccl_group_collective(Coll, const std::vector<int>&, const std::vector<Array>&, PartialOp,
                                         const Shape&, const std::string&) {
  throw NotSupportedError("dist: this build of cufuse has no NCCL");
}

#else

namespace {

void check(ncclResult_t r, const char* call) {
  if (r == ncclSuccess || r == ncclInProgress) return;  // non-blocking: completion is polled
  throw CudaError(fmt::format("dist: {} failed: {} ({})", call, ncclGetErrorString(r), ncclGetLastError(nullptr)));
}
void check_cuda(cudaError_t r, const char* call) {
  if (r == cudaSuccess) return;
  throw CudaError(fmt::format("dist: {} failed: {}", call, cudaGetErrorString(r)));
}

// This process's devices: mesh device numbers and their CUDA devices, with a communicator,
// a communication stream and two events each.
struct NcclWorld {
  static constexpr cufuse::detail::StateSlot kSlot = cufuse::detail::StateSlot::DistNccl;
  std::mutex m;
  int world_size = 0;            // ranks of the world communicator
  std::vector<int> mesh_dev;     // by local slot: the mesh device (= NCCL world rank)
  std::vector<int> cuda_dev;     // by local slot
  std::vector<ncclComm_t> comms;          // by local slot
  std::vector<cudaStream_t> comm_streams;  // by local slot
  std::vector<cudaEvent_t> before, after;  // by local slot
  // By group (member mesh devices): this process's members' communicators, by local slot
  // (nullptr for slots outside the group).
  std::map<std::vector<int>, std::vector<ncclComm_t>> groups;
  bool aborted = false;
  // CUFUSE_DIST_BLOCKING=1 in a single process: blocking communicators. A non-blocking group
  // stays ncclInProgress 114-377 us after ncclGroupEnd on the H200 pair (CUFUSE_LOG=launch,
  // DS): NCCL launches it from its own thread, after D2's 0.26 ms of local work. Waits stay
  // bounded either way (events polled, ncclCommAbort at the timeout).
  bool blocking = false;
};
NcclWorld& nw() { return cufuse::detail::runtime().state<NcclWorld>(); }

int slot_of(const NcclWorld& w, int mesh_device) {
  for (size_t i = 0; i < w.mesh_dev.size(); ++i)
    if (w.mesh_dev[i] == mesh_device) return static_cast<int>(i);
  return -1;
}

// Every communicator this process holds, once.
std::vector<ncclComm_t> all_comms(const NcclWorld& w) {
  std::vector<ncclComm_t> out = w.comms;
  for (const auto& [g, cs] : w.groups)
    for (auto c : cs)
      if (c != nullptr && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  return out;
}

// Aborts every communicator (a rank died or a collective failed): NCCL's kernels stop, the
// streams drain, and the communicators are freed (ncclCommAbort), so finalize destroys none.
void abort_all(NcclWorld& w) {
  if (w.aborted) return;
  for (auto c : all_comms(w))
    if (c != nullptr) (void)ncclCommAbort(c);  // best effort: the error being raised says why
  w.aborted = true;
}

// Polls until `done()` or a communicator reports an error or the timeout passes; then
// aborts and raises CollectiveError naming `label` and `ranks`.
template <class Done>
void wait_bounded(NcclWorld& w, const std::vector<ncclComm_t>& comms, const std::string& label,
                  const std::vector<int>& ranks, Done done) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto limit = std::chrono::duration<double>(collective_timeout());
  for (int spins = 0;; ++spins) {
    for (auto c : comms) {  // errors first: a failed communicator may also look "done"
      if (c == nullptr) continue;
      ncclResult_t async = ncclSuccess;
      const ncclResult_t q = ncclCommGetAsyncError(c, &async);
      const ncclResult_t bad = q != ncclSuccess ? q : async;
      if (bad != ncclSuccess && bad != ncclInProgress) {
        const std::string msg = fmt::format("NCCL reports {} ({})", ncclGetErrorString(bad), ncclGetLastError(c));
        abort_all(w);
        fail_collective(label, ranks, false, msg);
      }
    }
    if (done()) return;
    if (clock::now() - start > limit) {
      abort_all(w);
      fail_collective(label, ranks, true, "a rank did not take part (it died, hangs, or runs another program)");
    }
    // Spin (yielding) for the first 20 ms: a collective of a few hundred microseconds (the
    // local reductions before it included) is seen done within a microsecond. The first
    // version slept 50 us after 2000 yields (under a millisecond), and a sleep wakes late:
    // the H200 pair measured 120 us added by a 2-GPU allreduce (DS), where NCCL itself takes
    // ~10 us (torch DTensor's 9.6 us). Longer waits (a slow rank, the timeout) sleep 20 us.
    if (spins < 16 || clock::now() - start < std::chrono::milliseconds(20)) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

// Every communicator ready (a non-blocking init or split completes asynchronously).
void wait_ready(NcclWorld& w, const std::vector<ncclComm_t>& comms, const std::string& label,
                const std::vector<int>& ranks) {
  wait_bounded(w, comms, label, ranks, [&] {
    for (auto c : comms) {
      if (c == nullptr) continue;
      ncclResult_t async = ncclSuccess;
      (void)ncclCommGetAsyncError(c, &async);  // errors: raised by wait_bounded before this
      if (async == ncclInProgress) return false;
    }
    return true;
  });
}

ncclConfig_t comm_config(bool blocking) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = blocking ? 1 : 0;
  return cfg;
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8: return ncclUint8;
    case DType::Int8: return ncclInt8;
    case DType::Int32: return ncclInt32;
    case DType::UInt32: return ncclUint32;
    case DType::Int64: return ncclInt64;
    case DType::UInt64: return ncclUint64;
    case DType::Float16: return ncclFloat16;
#if NCCL_VERSION_CODE >= 21000
    case DType::BFloat16: return ncclBfloat16;
#endif
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    default: break;
  }
  throw NotSupportedError(fmt::format("dist: NCCL has no type for {}", cufuse::name(t)));
}

ncclRedOp_t nccl_op(PartialOp op) {
  switch (op) {
    case PartialOp::Sum: return ncclSum;
    case PartialOp::Prod: return ncclProd;
    case PartialOp::Max: return ncclMax;
    case PartialOp::Min: return ncclMin;
  }
  return ncclSum;
}

std::vector<int> iota(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// The group's communicators for this process's slots, split from the world's once. The
// split is collective over the world communicator: every local slot calls it, those outside
// the group with NCCL_SPLIT_NOCOLOR (under MPI every process does the same at the same
// collective, SPMD, each with its own group's color).
const std::vector<ncclComm_t>& group_comms(NcclWorld& w, const std::vector<int>& group) {
  auto it = w.groups.find(group);
  if (it != w.groups.end()) return it->second;
  std::vector<ncclComm_t> comms(w.comms.size(), nullptr);
  if (static_cast<int>(group.size()) == w.world_size) {
    comms = w.comms;
  } else {
    check(ncclGroupStart(), "ncclGroupStart");
    for (size_t s = 0; s < w.comms.size(); ++s) {
      int pos = -1;
      for (size_t r = 0; r < group.size(); ++r)
        if (group[r] == w.mesh_dev[s]) pos = static_cast<int>(r);
      ncclConfig_t cfg = comm_config(w.blocking);
      DeviceScope scope(w.cuda_dev[s]);
      check(ncclCommSplit(w.comms[s], pos < 0 ? NCCL_SPLIT_NOCOLOR : group[0], pos < 0 ? 0 : pos, &comms[s], &cfg),
            "ncclCommSplit");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    std::vector<ncclComm_t> wait = w.comms;  // the parents finish the split with the children
    for (auto c : comms)
      if (c != nullptr) wait.push_back(c);
    wait_ready(w, wait, fmt::format("ncclCommSplit of mesh devices {}", fmt::join(group, ", ")), group);
  }
  return w.groups.emplace(group, std::move(comms)).first->second;
}

void make_streams(NcclWorld& w) {
  const size_t n = w.comms.size();
  w.comm_streams.assign(n, nullptr);
  w.before.assign(n, nullptr);
  w.after.assign(n, nullptr);
  for (size_t s = 0; s < n; ++s) {
    DeviceScope scope(w.cuda_dev[s]);
    check_cuda(cudaStreamCreateWithFlags(&w.comm_streams[s], cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check_cuda(cudaEventCreateWithFlags(&w.before[s], cudaEventDisableTiming), "cudaEventCreate");
    check_cuda(cudaEventCreateWithFlags(&w.after[s], cudaEventDisableTiming), "cudaEventCreate");
  }
}

// Peer access between every pair of devices that can (CUFUSE_DIST_PEER_ACCESS): gather's peer
// copies of partial results then go device to device over NVLink, not staged through the host.
// NCCL may have enabled some pairs already (its P2P transport in one process).
void enable_peer_access(int devices) {
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b) {
      if (a == b) continue;
      int can = 0;
      check_cuda(cudaDeviceCanAccessPeer(&can, a, b), "cudaDeviceCanAccessPeer");
      if (!can) continue;
      DeviceScope scope(a);
      const cudaError_t r = cudaDeviceEnablePeerAccess(b, 0);
      if (r == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
      else check_cuda(r, "cudaDeviceEnablePeerAccess");
    }
}

}  // namespace

void nccl_init(int devices) {
  auto& w = nw();
  std::lock_guard<std::mutex> lk(w.m);
  w.world_size = devices;
  w.mesh_dev = iota(devices);
  w.cuda_dev = iota(devices);
  w.comms.assign(static_cast<size_t>(devices), nullptr);
  w.aborted = false;
  w.blocking = cufuse::detail::settings().dist_blocking;
  ncclUniqueId id;
  check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  check(ncclGroupStart(), "ncclGroupStart");
  for (int d = 0; d < devices; ++d) {
    DeviceScope scope(d);
    ncclConfig_t cfg = comm_config(w.blocking);
    check(ncclCommInitRankConfig(&w.comms[static_cast<size_t>(d)], devices, id, d, &cfg), "ncclCommInitRankConfig");
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
  wait_ready(w, w.comms, "ncclCommInitRankConfig (dist::init)", iota(devices));
  make_streams(w);
  if (cufuse::detail::settings().dist_peer_access) enable_peer_access(devices);
}

void nccl_init_rank(int rank, int size, int device) {
  auto& w = nw();
  std::lock_guard<std::mutex> lk(w.m);
  w.world_size = size;
  w.mesh_dev = {rank};
  w.cuda_dev = {device};
  w.comms.assign(1, nullptr);
  w.aborted = false;
  ncclUniqueId id;
  if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  mpi_broadcast(&id, sizeof(id), 0);
  w.blocking = false;  // under MPI a dead peer could hang a blocking launch
  DeviceScope scope(device);
  ncclConfig_t cfg = comm_config(false);
  check(ncclCommInitRankConfig(&w.comms[0], size, id, rank, &cfg), "ncclCommInitRankConfig");
  wait_ready(w, w.comms, fmt::format("ncclCommInitRankConfig (dist::init under mpirun, rank {} of {})", rank, size),
             iota(size));
  make_streams(w);
}

void nccl_finalize() {
  auto& w = nw();
  std::lock_guard<std::mutex> lk(w.m);
  for (size_t s = 0; s < w.comms.size(); ++s) {
    DeviceScope scope(w.cuda_dev[s]);
    (void)cudaStreamSynchronize(w.comm_streams[s]);  // after an abort the kernels have stopped
  }
  if (!w.aborted) {
    for (auto& [g, comms] : w.groups)
      if (comms != w.comms)
        for (auto c : comms)
          if (c != nullptr) (void)ncclCommDestroy(c);
    for (auto c : w.comms) (void)ncclCommDestroy(c);
  }
  w.groups.clear();
  for (size_t s = 0; s < w.comms.size(); ++s) {
    DeviceScope scope(w.cuda_dev[s]);
    (void)cudaStreamDestroy(w.comm_streams[s]);
    (void)cudaEventDestroy(w.before[s]);
    (void)cudaEventDestroy(w.after[s]);
  }
  w.comms.clear();
  w.comm_streams.clear();
  w.before.clear();
  w.after.clear();
  w.mesh_dev.clear();
  w.cuda_dev.clear();
  w.world_size = 0;
  w.aborted = false;
}

std::vector<Array> nccl_group_collective(Coll c, const std::vector<int>& group, const std::vector<Array>& in,
                                         PartialOp op, const Shape& out_shape, const std::string& label) {
  auto& w = nw();
  std::lock_guard<std::mutex> lk(w.m);
  if (w.aborted) check_not_broken(label, group);
  // CUFUSE_LOG=launch: where a collective's host time goes (microseconds from entry).
  using clock = std::chrono::steady_clock;
  const bool timed = cufuse::detail::log_enabled(cufuse::detail::LogChannel::Launch);
  const auto t_entry = timed ? clock::now() : clock::time_point{};
  auto us = [&] { return std::chrono::duration<double, std::micro>(clock::now() - t_entry).count(); };
  double t_prepared = 0, t_enqueued = 0, t_queued = 0;
  const auto& comms = group_comms(w, group);
  const size_t k = group.size();
  // This process's members: (rank in the group, local slot).
  std::vector<std::pair<size_t, int>> mine;
  for (size_t r = 0; r < k; ++r)
    if (int s = slot_of(w, group[r]); s >= 0) mine.emplace_back(r, s);
  const DType t = in[mine.at(0).first].dtype();
  const ncclDataType_t nt = nccl_type(t);
  std::vector<Array> out(k);
  std::vector<const void*> send(k);
  std::vector<void*> recv(k);
  // Inputs evaluated and outputs allocated on each compute stream; the comm stream waits.
  for (auto [r, s] : mine) {
    DeviceScope scope(w.cuda_dev[static_cast<size_t>(s)]);
    out[r] = empty(out_shape, t);
    send[r] = in[r].data_ptr();
    recv[r] = out[r].data_ptr();
    // NCCL reads the input on the member's device: memory of another device is a placement
    // error upstream (with peer access on it would be read over NVLink, slowly and silently).
    if (in[r].device() != w.cuda_dev[static_cast<size_t>(s)])
      throw InternalError(fmt::format("dist: {}: the input of mesh device {} is in memory of device {}, not its own "
                                      "device {}", label, group[r], in[r].device(), w.cuda_dev[static_cast<size_t>(s)]));
    auto compute = static_cast<cudaStream_t>(Stream::current().native());
    check_cuda(cudaEventRecord(w.before[static_cast<size_t>(s)], compute), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(w.comm_streams[static_cast<size_t>(s)], w.before[static_cast<size_t>(s)], 0),
               "cudaStreamWaitEvent");
  }
  const size_t n = static_cast<size_t>(in[mine[0].first].size());
  if (timed) t_prepared = us();
  check(ncclGroupStart(), "ncclGroupStart");
  for (auto [r, s] : mine) {
    cudaStream_t st = w.comm_streams[static_cast<size_t>(s)];
    ncclComm_t cm = comms[static_cast<size_t>(s)];
    switch (c) {
      case Coll::AllReduce: check(ncclAllReduce(send[r], recv[r], n, nt, nccl_op(op), cm, st), "ncclAllReduce"); break;
      case Coll::AllGather: check(ncclAllGather(send[r], recv[r], n, nt, cm, st), "ncclAllGather"); break;
      case Coll::ReduceScatter:
        check(ncclReduceScatter(send[r], recv[r], n / k, nt, nccl_op(op), cm, st), "ncclReduceScatter");
        break;
      case Coll::AllToAll: {
        const size_t part = n / k, bytes = part * static_cast<size_t>(itemsize(t));
        for (size_t p = 0; p < k; ++p) {
          check(ncclSend(static_cast<const char*>(send[r]) + p * bytes, part, nt, static_cast<int>(p), cm, st),
                "ncclSend");
          check(ncclRecv(static_cast<char*>(recv[r]) + p * bytes, part, nt, static_cast<int>(p), cm, st), "ncclRecv");
        }
        break;
      }
    }
  }
  check(ncclGroupEnd(), "ncclGroupEnd");  // ncclInProgress: still being queued (polled below)
  if (timed) t_enqueued = us();
  std::vector<ncclComm_t> used;
  for (auto [r, s] : mine) used.push_back(comms[static_cast<size_t>(s)]);
  // Queued: every used communicator out of ncclInProgress.
  wait_ready(w, used, label, group);
  if (timed) t_queued = us();
  for (auto [r, s] : mine) {
    DeviceScope scope(w.cuda_dev[static_cast<size_t>(s)]);
    auto compute = static_cast<cudaStream_t>(Stream::current().native());
    check_cuda(cudaEventRecord(w.after[static_cast<size_t>(s)], w.comm_streams[static_cast<size_t>(s)]),
               "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(compute, w.after[static_cast<size_t>(s)], 0), "cudaStreamWaitEvent");
  }
  // Completed (or failed, or timed out: then aborted and raised).
  wait_bounded(w, used, label, group, [&] {
    for (auto [r, s] : mine) {
      const cudaError_t q = cudaEventQuery(w.after[static_cast<size_t>(s)]);
      if (q == cudaErrorNotReady) return false;
      check_cuda(q, "cudaEventQuery");
    }
    return true;
  });
  if (timed)
    cufuse::detail::log(cufuse::detail::LogChannel::Launch,
                        "nccl {}: {} elements on {} device(s); outputs and events {:.1f} us, group enqueued {:.1f} "
                        "us, queued {:.1f} us, done {:.1f} us (from entry)",
                        label, n, mine.size(), t_prepared, t_enqueued, t_queued, us());
  return out;
}

#endif

}  // namespace cufuse::dist::detail
