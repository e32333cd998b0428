// tests/programs/dist_mpi_check.cpp: the multi-process dist check (issue 32), one process per
// GPU under Open MPI:
//   mpirun -np 2 build/tests/dist_mpi_check            # every result vs the unsharded run
//   mpirun -np 2 build/tests/dist_mpi_check failure    # rank 1 skips a collective: rank 0
//                                                      # must raise within CUFUSE_DIST_TIMEOUT
// dist::init() sees OMPI_COMM_WORLD_SIZE and starts one process per GPU (NCCL's id broadcast
// over MPI). Every rank runs the same program (SPMD); each compares the gathered result with
// the unsharded program run on its own GPU and prints "rank R of N: ok K checks" (or the
// failures). Exit 0 when every check passed, 1 on a failure, 77 (skipped) where this rank
// has no GPU: it then prints "rank R of N has no GPU", which the CPU test of the MPI start-up
// (tests/dist_mpi.cmake) looks for.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include <cufuse/cufuse.hpp>

namespace cf = cufuse;
namespace dist = cufuse::dist;

namespace {

int checks = 0, failures = 0;

void check(bool ok, const std::string& what) {
  ++checks;
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", dist::rank(), what.c_str());
  }
}

void close(const cf::Array& got, const cf::Array& want, const std::string& what, double rtol = 1e-5) {
  try {
    cf::testing::assert_allclose(got, want, rtol, 1e-5);
    check(true, what);
  } catch (const cf::Error& e) {
    check(false, what + ": " + e.what());
  }
}

void programs() {
  const int n = dist::world_size();
  dist::Mesh mesh({n}, {"gpu"});
  // The same inputs on every rank (the generator is counter-based): each shards its part.
  auto x = cf::random::uniform({256 * n, 96}, cf::f32, 1);
  auto b = cf::random::uniform({96}, cf::f32, 2);
  auto dx = dist::shard(x, mesh, {"gpu", dist::none});
  auto db = dist::shard(b, mesh, {dist::none});
  close(dist::gather(dist::sum(dist::exp(dx) * 2.0 + db, 0)), cf::sum(cf::exp(x) * 2.0 + b, 0), "sum(exp(x)*2+b, 0)",
        1e-4);
  close(dist::gather(dist::max(dx, 1)), cf::max(x, 1), "max(x, 1) (local)");
  close(dist::gather(dist::mean(dx)), cf::mean(x), "mean(x)", 1e-4);
  auto cols = dist::reshard(dx, {dist::none, "gpu"});
  close(dist::gather(cols), x, "alltoall to columns");
  close(dist::gather(dist::reshard(dist::sum(dx, 0), {"gpu"})), cf::sum(x, 0), "reducescatter", 1e-4);
  close(dist::gather(dx + cols), x + x, "rows + cols");
  auto A = cf::random::uniform({64 * n, 32}, cf::f64, 4);
  auto B = cf::random::uniform({32, 16}, cf::f64, 5);
  close(dist::gather(dist::matmul(dist::shard(A, mesh, {"gpu", dist::none}), dist::shard(B, mesh, {dist::none, dist::none}))),
        cf::matmul(A, B), "local GEMM");
  auto At = cf::random::uniform({16, 32 * n}, cf::f64, 6);
  auto Bt = cf::random::uniform({32 * n, 8}, cf::f64, 7);
  close(dist::gather(dist::matmul(dist::shard(At, mesh, {dist::none, "gpu"}), dist::shard(Bt, mesh, {"gpu", dist::none}))),
        cf::matmul(At, Bt), "GEMM + allreduce");
  auto u = dist::uniform({64, 48 * n}, 42, mesh, {dist::none, "gpu"}, cf::f32);
  close(dist::gather(u), cf::random::uniform({64, 48 * n}, cf::f32, 42), "uniform born sharded");
  // Views and writes.
  close(dist::gather(dx[{cf::slice(3, 3 + 2 * n)}]), x.index({cf::slice(3, 3 + 2 * n)}), "x[3:3+2n] (gathered part)");
  auto w = dist::shard(x, mesh, {"gpu", dist::none});
  auto wx = x.copy();
  w[{cf::slice(cf::none, cf::none, -3)}] += 1.0;
  wx.index({cf::slice(cf::none, cf::none, -3)}) += 1.0;
  close(dist::gather(w), wx, "w[::-3] += 1");
}

void failure() {
  // Rank 1 sits out one allreduce; the others must raise, not hang.
  const int n = dist::world_size();
  dist::Mesh mesh({n}, {"gpu"});
  auto dx = dist::shard(cf::random::uniform({8 * n, 4}, cf::f32, 1), mesh, {"gpu", dist::none});
  if (dist::rank() == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(8));
    check(true, "rank 1 sat out");
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  try {
    (void)dist::gather(dist::sum(dx, 0));
    check(false, "the allreduce without rank 1 completed");
  } catch (const dist::CollectiveError& e) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("rank %d: raised after %.1f s: %s\n", dist::rank(), s, e.what());
    check(e.timed_out() && s < 30, "CollectiveError (timed out) within the timeout");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool fail_mode = argc > 1 && std::strcmp(argv[1], "failure") == 0;
  try {
    dist::init();
  } catch (const cf::NoDeviceError& e) {
    std::printf("%s\n", e.what());
    std::fflush(stdout);
    return 77;
  } catch (const cf::Error& e) {
    std::fprintf(stderr, "dist::init failed: %s\n", e.what());
    return 1;
  }
  try {
    if (fail_mode) failure();
    else programs();
  } catch (const std::exception& e) {
    check(false, std::string("uncaught: ") + e.what());
  }
  std::printf("rank %d of %d: %s %d checks\n", dist::rank(), dist::world_size(), failures ? "FAILED" : "ok", checks);
  std::fflush(stdout);
  dist::finalize();
  return failures ? 1 : 0;
}
