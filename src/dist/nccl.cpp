// src/dist/nccl.cpp: the GPU world's NCCL communicators and collectives (see nccl.hpp).
// One communicator per device from ncclCommInitAll; a group of mesh devices gets its own
// communicators from ncclCommSplit (color: the group's first device), made once per group.
// Each device has a communication stream: it waits on an event recorded on the compute
// stream (the shard's work and the output's allocation), runs the collective, and the
// compute stream waits on an event recorded after it. Every NCCL and CUDA call is checked.
#include "dist/nccl.hpp"

#include <fmt/format.h>

#include "cufuse/error.hpp"

#ifdef CUFUSE_HAVE_NCCL
#include <map>
#include <mutex>

#include <cuda_runtime.h>
#include <nccl.h>

#include "cufuse/creation.hpp"
#include "cufuse/stream.hpp"
#endif

namespace cufuse::dist::detail {

#ifndef CUFUSE_HAVE_NCCL

void nccl_init(int) {
  throw NotSupportedError("dist::init(): this build of cufuse has no NCCL (nccl.h and libnccl were not found); "
                          "dist::init(World::Host, n) simulates devices on the host");
}
void nccl_finalize() {}
std::vector<Array> nccl_group_collective(Coll, const std::vector<int>&, const std::vector<Array>&, PartialOp,
                                         const Shape&) {
  throw NotSupportedError("dist: this build of cufuse has no NCCL");
}

#else

namespace {

void check(ncclResult_t r, const char* call) {
  if (r == ncclSuccess) return;
  throw CudaError(fmt::format("dist: {} failed: {} ({})", call, ncclGetErrorString(r), ncclGetLastError(nullptr)));
}
void check_cuda(cudaError_t r, const char* call) {
  if (r == cudaSuccess) return;
  throw CudaError(fmt::format("dist: {} failed: {}", call, cudaGetErrorString(r)));
}

struct NcclWorld {
  std::mutex m;
  int devices = 0;
  std::vector<ncclComm_t> comms;          // by device
  std::vector<cudaStream_t> comm_streams;  // by device
  std::vector<cudaEvent_t> before, after;  // by device
  std::map<std::vector<int>, std::vector<ncclComm_t>> groups;  // by member devices: one per member
};
NcclWorld& nw() {
  static NcclWorld w;
  return w;
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

// The group's communicators (one per member, in rank order), split from the world's once.
const std::vector<ncclComm_t>& group_comms(const std::vector<int>& group) {
  auto& w = nw();
  auto it = w.groups.find(group);
  if (it != w.groups.end()) return it->second;
  std::vector<ncclComm_t> comms(group.size(), nullptr);
  if (static_cast<int>(group.size()) == w.devices) {
    comms = w.comms;
  } else {
    // ncclCommSplit is collective over the parent: every device calls it, those outside the
    // group with NCCL_SPLIT_NOCOLOR.
    std::vector<ncclComm_t> all(static_cast<size_t>(w.devices), nullptr);
    check(ncclGroupStart(), "ncclGroupStart");
    for (int d = 0; d < w.devices; ++d) {
      int pos = -1;
      for (size_t r = 0; r < group.size(); ++r)
        if (group[r] == d) pos = static_cast<int>(r);
      check(ncclCommSplit(w.comms[static_cast<size_t>(d)], pos < 0 ? NCCL_SPLIT_NOCOLOR : group[0], pos < 0 ? 0 : pos,
                          &all[static_cast<size_t>(d)], nullptr),
            "ncclCommSplit");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    for (size_t r = 0; r < group.size(); ++r) comms[r] = all[static_cast<size_t>(group[r])];
  }
  return w.groups.emplace(group, std::move(comms)).first->second;
}

}  // namespace

void nccl_init(int devices) {
  auto& w = nw();
  std::lock_guard<std::mutex> lk(w.m);
  w.devices = devices;
  w.comms.assign(static_cast<size_t>(devices), nullptr);
  std::vector<int> ids(static_cast<size_t>(devices));
  for (int d = 0; d < devices; ++d) ids[static_cast<size_t>(d)] = d;
  check(ncclCommInitAll(w.comms.data(), devices, ids.data()), "ncclCommInitAll");
  w.comm_streams.assign(static_cast<size_t>(devices), nullptr);
  w.before.assign(static_cast<size_t>(devices), nullptr);
  w.after.assign(static_cast<size_t>(devices), nullptr);
  for (int d = 0; d < devices; ++d) {
    DeviceScope scope(d);
    check_cuda(cudaStreamCreateWithFlags(&w.comm_streams[static_cast<size_t>(d)], cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags");
    check_cuda(cudaEventCreateWithFlags(&w.before[static_cast<size_t>(d)], cudaEventDisableTiming), "cudaEventCreate");
    check_cuda(cudaEventCreateWithFlags(&w.after[static_cast<size_t>(d)], cudaEventDisableTiming), "cudaEventCreate");
  }
}

void nccl_finalize() {
  auto& w = nw();
  std::lock_guard<std::mutex> lk(w.m);
  for (int d = 0; d < w.devices; ++d) {
    DeviceScope scope(d);
    cudaStreamSynchronize(w.comm_streams[static_cast<size_t>(d)]);
  }
  for (auto& [g, comms] : w.groups)
    if (comms != w.comms)
      for (auto c : comms) ncclCommDestroy(c);
  w.groups.clear();
  for (int d = 0; d < w.devices; ++d) {
    DeviceScope scope(d);
    ncclCommDestroy(w.comms[static_cast<size_t>(d)]);
    cudaStreamDestroy(w.comm_streams[static_cast<size_t>(d)]);
    cudaEventDestroy(w.before[static_cast<size_t>(d)]);
    cudaEventDestroy(w.after[static_cast<size_t>(d)]);
  }
  w.comms.clear();
  w.comm_streams.clear();
  w.before.clear();
  w.after.clear();
  w.devices = 0;
}

std::vector<Array> nccl_group_collective(Coll c, const std::vector<int>& group, const std::vector<Array>& in,
                                         PartialOp op, const Shape& out_shape) {
  auto& w = nw();
  std::lock_guard<std::mutex> lk(w.m);
  const auto& comms = group_comms(group);
  const size_t k = group.size();
  const DType t = in[0].dtype();
  const ncclDataType_t nt = nccl_type(t);
  std::vector<Array> out(k);
  std::vector<const void*> send(k);
  std::vector<void*> recv(k);
  // Inputs evaluated and outputs allocated on each compute stream; the comm stream waits.
  for (size_t r = 0; r < k; ++r) {
    const int d = group[r];
    DeviceScope scope(d);
    out[r] = empty(out_shape, t);
    send[r] = in[r].data_ptr();
    recv[r] = out[r].data_ptr();
    auto compute = static_cast<cudaStream_t>(Stream::current().native());
    check_cuda(cudaEventRecord(w.before[static_cast<size_t>(d)], compute), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(w.comm_streams[static_cast<size_t>(d)], w.before[static_cast<size_t>(d)], 0),
               "cudaStreamWaitEvent");
  }
  const size_t n = static_cast<size_t>(in[0].size());
  check(ncclGroupStart(), "ncclGroupStart");
  for (size_t r = 0; r < k; ++r) {
    const int d = group[r];
    cudaStream_t s = w.comm_streams[static_cast<size_t>(d)];
    switch (c) {
      case Coll::AllReduce:
        check(ncclAllReduce(send[r], recv[r], n, nt, nccl_op(op), comms[r], s), "ncclAllReduce");
        break;
      case Coll::AllGather: check(ncclAllGather(send[r], recv[r], n, nt, comms[r], s), "ncclAllGather"); break;
      case Coll::ReduceScatter:
        check(ncclReduceScatter(send[r], recv[r], n / k, nt, nccl_op(op), comms[r], s), "ncclReduceScatter");
        break;
      case Coll::AllToAll: {
        const size_t part = n / k, bytes = part * static_cast<size_t>(itemsize(t));
        for (size_t p = 0; p < k; ++p) {
          check(ncclSend(static_cast<const char*>(send[r]) + p * bytes, part, nt, static_cast<int>(p), comms[r], s),
                "ncclSend");
          check(ncclRecv(static_cast<char*>(recv[r]) + p * bytes, part, nt, static_cast<int>(p), comms[r], s),
                "ncclRecv");
        }
        break;
      }
    }
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
  for (size_t r = 0; r < k; ++r) {
    const int d = group[r];
    DeviceScope scope(d);
    auto compute = static_cast<cudaStream_t>(Stream::current().native());
    check_cuda(cudaEventRecord(w.after[static_cast<size_t>(d)], w.comm_streams[static_cast<size_t>(d)]),
               "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(compute, w.after[static_cast<size_t>(d)], 0), "cudaStreamWaitEvent");
  }
  return out;
}

#endif

}  // namespace cufuse::dist::detail
