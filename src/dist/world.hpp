// src/dist/world.hpp: the world dist::init made (which kind, how many devices, this
// process's rank), kept in the runtime context (StateSlot::DistWorld), the device each mesh
// device number maps to, running a builder on a shard's device, and the world's failure
// state: a collective that failed or timed out breaks the world (every later collective
// fails at once, naming the first failure) until dist::finalize.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cufuse/dist.hpp"
#include "cufuse/stream.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"

namespace cufuse::dist::detail {

struct WorldState {
  bool up = false;
  World kind = World::Gpus;
  int devices = 0;     // devices in the world, over all processes
  int rank = 0;        // this process's rank (Mpi: its one device is mesh device `rank`)
  int processes = 1;   // processes in the world (Mpi: one per device)
  int local_device = 0;  // Mpi: the CUDA device this process drives
  std::vector<SimulatedFailure> failures;  // Host world: injected by simulate_failure
  std::vector<int> collectives_seen;       // Host world: per device, the collectives it was in
  std::string broken;  // the first collective failure ("" while the world is sound)
};

// Process state (runtime/context.hpp): the one world and its lock.
struct DistWorld {
  static constexpr cufuse::detail::StateSlot kSlot = cufuse::detail::StateSlot::DistWorld;
  std::mutex mu;
  WorldState s;
  // The per-shard plan record of pending work (plan_steps.cpp: pending_kernels), by the plan
  // signature of the graph: made once per graph structure, not at each collective (building
  // and describing a plan cost tens of microseconds, paid before every allreduce).
  std::mutex steps_mu;
  std::map<std::vector<int64_t>, std::pair<int, std::string>> kernel_steps;
};
inline DistWorld& dist_world() { return cufuse::detail::runtime().state<DistWorld>(); }

const WorldState& world_state();  // ValueError when dist::init has not run
bool world_is(World w);

// The CUDA device of a mesh device number (Gpus world; Mpi: this process's device for its own
// rank), -1 elsewhere (a host or plan world, or another process's device).
int cuda_device(int mesh_device);
// Whether this process holds the shard of a mesh device (every device in a single process).
bool is_local(int mesh_device);
// The first mesh device this process holds, of `devices` (0 in a single process).
int first_local(int devices);

// The collective timeout, CUFUSE_DIST_TIMEOUT seconds.
double collective_timeout();
// Marks the world broken by `what` (the first failure is kept) and throws CollectiveError.
[[noreturn]] void fail_collective(const std::string& collective, const std::vector<int>& ranks, bool timed_out,
                                  const std::string& what);
// CollectiveError at once when an earlier collective broke the world.
void check_not_broken(const std::string& collective, const std::vector<int>& ranks);

// Calls f() with the shard's device current (Gpus world); elsewhere just f().
template <class F>
auto on_device(int mesh_device, F&& f) {
  const int dev = cuda_device(mesh_device);
  if (dev < 0) return std::forward<F>(f)();
  cufuse::detail::DeviceGuard scope(dev);  // no cudaSetDevice where dev is current already
  return std::forward<F>(f)();
}

}  // namespace cufuse::dist::detail
