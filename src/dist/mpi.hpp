// src/dist/mpi.hpp: the MPI start-up of a world of one process per GPU (mpirun): MPI_Init
// once per process, this process's place, and broadcasting NCCL's unique id. A build without
// MPI has these too: mpi_start is a NotSupportedError.
#pragma once
#include <cstddef>

namespace cufuse::dist::detail {

struct MpiPlace {
  int rank = 0, size = 1;
  int local_rank = 0;  // among the processes of this host (its GPU)
};
// MPI_Init_thread on the first call (MPI_Finalize at exit when cufuse started it).
MpiPlace mpi_start();
// MPI_Bcast of `bytes` from rank `root` over MPI_COMM_WORLD; CudaError naming MPI's message.
void mpi_broadcast(void* data, size_t bytes, int root);
// Whether `ok` holds on every rank (MPI_Allreduce, logical and): ranks decide together
// before a collective one of them would not join.
bool mpi_all(bool ok);
// Whether this build has MPI.
bool mpi_available();

}  // namespace cufuse::dist::detail
