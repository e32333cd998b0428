// src/dist/nccl.hpp: the GPU world's transport: one NCCL communicator per device
// (ncclCommInitAll), split per group of mesh devices as collectives need them, a
// communication stream per device ordered after and before the compute stream with events.
// Every NCCL call is checked; a failure is a cufuse::CudaError naming the call and NCCL's
// message. A build without NCCL has these too: nccl_init is a NotSupportedError.
#pragma once
#include <vector>

#include "cufuse/dist.hpp"

namespace cufuse::dist::detail {

void nccl_init(int devices);
void nccl_finalize();

// Dimension-0 collectives over one group of devices (its rank order), on contiguous device
// arrays `in` (one per member, each on its member's device, evaluated); `out` arrays are
// made here on each member's device. Queued on the communication streams, ordered after
// each device's current stream and before what that stream runs next.
enum class Coll { AllReduce, AllGather, ReduceScatter, AllToAll };
std::vector<Array> nccl_group_collective(Coll c, const std::vector<int>& group, const std::vector<Array>& in,
                                         PartialOp op, const Shape& out_shape);

}  // namespace cufuse::dist::detail
