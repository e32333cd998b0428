// src/dist/nccl.hpp: the GPU worlds' transport. One process over all its GPUs (one NCCL
// communicator per device, made together), or one process per GPU under mpirun (NCCL's
// unique id broadcast over MPI, mpi.hpp); communicators split per group of mesh devices as
// collectives need them; a communication stream per device ordered after and before the
// compute stream with events. Communicators are non-blocking: every call is polled with
// ncclCommGetAsyncError, and a collective (or a start-up) that fails or does not complete
// within CUFUSE_DIST_TIMEOUT aborts every communicator (ncclCommAbort) and raises a
// dist::CollectiveError naming it and its ranks. Every NCCL and CUDA call is checked. A build
// without NCCL has these too: nccl_init is a NotSupportedError.
#pragma once
#include <string>
#include <vector>

#include "cufuse/dist.hpp"

namespace cufuse::dist::detail {

void nccl_init(int devices);                         // this process drives devices 0 .. devices-1
void nccl_init_rank(int rank, int size, int device);  // one of `size` processes (MPI), on `device`
void nccl_finalize();

// Dimension-0 collectives over one group of mesh devices (its rank order), on contiguous
// device arrays `in` (one per member; only this process's members are read), evaluated;
// the outputs of this process's members are made here on their devices (the others are left
// undefined). Queued on the communication streams, ordered after each device's current
// stream and before what that stream runs next; the host waits for completion, bounded by
// CUFUSE_DIST_TIMEOUT. `label` names the collective in errors ("allreduce over 'gpu'").
enum class Coll { AllReduce, AllGather, ReduceScatter, AllToAll };
std::vector<Array> nccl_group_collective(Coll c, const std::vector<int>& group, const std::vector<Array>& in,
                                         PartialOp op, const Shape& out_shape, const std::string& label);

}  // namespace cufuse::dist::detail
