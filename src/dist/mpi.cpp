// src/dist/mpi.cpp: MPI start-up for one process per GPU (mpi.hpp). Built with MPI only when
// CMake found it (CUFUSE_HAVE_MPI on this file alone); otherwise the same functions say so.
#include "dist/mpi.hpp"

#include <fmt/format.h>

#include "cufuse/error.hpp"

#ifdef CUFUSE_HAVE_MPI
#include <mpi.h>

#include <cstdlib>
#endif

namespace cufuse::dist::detail {

#ifndef CUFUSE_HAVE_MPI

bool mpi_available() { return false; }
MpiPlace mpi_start() {
  throw NotSupportedError(
      "dist::init(World::Mpi): one process per GPU under mpirun needs a build of cufuse with MPI (CMake's "
      "find_package(MPI) found none; install an MPI, e.g. libopenmpi-dev, and configure again); use dist::init() for "
      "all GPUs of one process");
}
void mpi_broadcast(void*, size_t, int) { throw NotSupportedError("dist: this build of cufuse has no MPI"); }
bool mpi_all(bool ok) { return ok; }

#else

namespace {
void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw CudaError(fmt::format("dist: {} failed: {}", call, std::string(msg, static_cast<size_t>(len))));
}
void finalize_at_exit() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}
}  // namespace

bool mpi_available() { return true; }

MpiPlace mpi_start() {
  int up = 0;
  check(MPI_Initialized(&up), "MPI_Initialized");
  if (!up) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    std::atexit(finalize_at_exit);  // MPI was started here, so it ends here
  }
  MpiPlace p;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &p.rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &p.size), "MPI_Comm_size");
  // The processes of this host, in rank order: the local rank picks the GPU.
  MPI_Comm local = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, p.rank, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type");
  check(MPI_Comm_rank(local, &p.local_rank), "MPI_Comm_rank");
  check(MPI_Comm_free(&local), "MPI_Comm_free");
  return p;
}

void mpi_broadcast(void* data, size_t bytes, int root) {
  check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

bool mpi_all(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), "MPI_Allreduce");
  return all != 0;
}

#endif

}  // namespace cufuse::dist::detail
