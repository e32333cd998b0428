// src/dist/world.cpp: dist::init / finalize / rank / world_size: the world's kind and size,
// kept in the runtime context (StateSlot::DistWorld, world.hpp). A GPU world opens one NCCL
// communicator per device (nccl.hpp); under mpirun (World::Mpi, or World::Gpus when
// OMPI_COMM_WORLD_SIZE says so) one process per GPU, the NCCL id broadcast over MPI
// (mpi.hpp); the host and plan worlds simulate their devices. Also the world's failure
// state: CUFUSE_DIST_TIMEOUT, a broken world after a failed collective, and the host world's
// injected failures (simulate_failure).
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cufuse/backend.hpp"
#include "cufuse/error.hpp"
#include "dist/mpi.hpp"
#include "dist/nccl.hpp"
#include "dist/world.hpp"

namespace cufuse::dist {
namespace detail {

namespace {
const char* world_name(World w) {
  switch (w) {
    case World::Gpus: return "Gpus";
    case World::Host: return "Host";
    case World::Plan: return "Plan";
    case World::Mpi: return "Mpi";
  }
  return "?";
}

// OMPI_COMM_WORLD_SIZE as a number (0: not under Open MPI's mpirun).
int mpirun_size() {
  const auto& v = cufuse::detail::settings().ompi_world_size;
  int n = 0;
  if (!v) return 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  return ec == std::errc() && end == v->data() + v->size() && n > 0 ? n : 0;
}
}  // namespace

const WorldState& world_state() {
  const WorldState& s = dist_world().s;
  if (!s.up) throw ValueError("dist: no world; call dist::init() first (dist::init(World::Host, n) on the host)");
  return s;
}

bool world_is(World w) { return dist_world().s.up && dist_world().s.kind == w; }

int cuda_device(int mesh_device) {
  const WorldState& s = dist_world().s;
  if (!s.up) return -1;
  if (s.kind == World::Gpus) return mesh_device;
  if (s.kind == World::Mpi) return mesh_device == s.rank ? s.local_device : -1;
  return -1;
}

bool is_local(int mesh_device) {
  const WorldState& s = dist_world().s;
  return !(s.up && s.kind == World::Mpi) || mesh_device == s.rank;
}

int first_local(int devices) {
  for (int d = 0; d < devices; ++d)
    if (is_local(d)) return d;
  throw ValueError(fmt::format("dist: this process (rank {}) holds none of the mesh's {} devices", rank(), devices));
}

double collective_timeout() { return cufuse::detail::settings().dist_timeout; }

void fail_collective(const std::string& collective, const std::vector<int>& ranks, bool timed_out,
                     const std::string& what) {
  auto& w = dist_world();
  std::string msg = fmt::format("dist: {} (ranks {}) {}: {}; the world is broken (dist::finalize(), then init "
                                "again)",
                                collective, fmt::join(ranks, ", "),
                                timed_out ? fmt::format("did not complete within {} s (CUFUSE_DIST_TIMEOUT)",
                                                        collective_timeout())
                                          : std::string("failed"),
                                what);
  {
    std::lock_guard<std::mutex> lk(w.mu);
    if (w.s.broken.empty()) w.s.broken = msg;
  }
  throw CollectiveError(msg, collective, ranks, timed_out);
}

void check_not_broken(const std::string& collective, const std::vector<int>& ranks) {
  auto& w = dist_world();
  std::string first;
  {
    std::lock_guard<std::mutex> lk(w.mu);
    first = w.s.broken;
  }
  if (!first.empty())
    throw CollectiveError(fmt::format("dist: {} (ranks {}) not started: an earlier collective broke the world ({})",
                                      collective, fmt::join(ranks, ", "), first),
                          collective, ranks, false);
}

}  // namespace detail

CollectiveError::CollectiveError(const std::string& what, std::string collective, std::vector<int> ranks,
                                 bool timed_out)
    : CudaError(what), collective_(std::move(collective)), ranks_(std::move(ranks)), timed_out_(timed_out) {}

void init(World w, int devices) {
  auto& dw = detail::dist_world();
  std::lock_guard<std::mutex> lk(dw.mu);
  auto& s = dw.s;
  if (s.up)
    throw ValueError(fmt::format("dist::init: a {} world of {} devices is already up (dist::finalize() first)",
                                 detail::world_name(s.kind), s.devices));
  if (devices < 0) throw ValueError(fmt::format("dist::init: devices must be >= 0, got {}", devices));
  // Started by mpirun with several processes: one process per GPU.
  if (w == World::Gpus && detail::mpirun_size() > 1) w = World::Mpi;
  detail::WorldState n;
  n.kind = w;
  n.devices = devices;
  switch (w) {
    case World::Gpus: {
      const int visible = Device::count();
      if (visible == 0) throw NoDeviceError("dist::init: no GPU: " + Device::unavailable_reason());
      if (n.devices == 0) n.devices = visible;
      if (n.devices > visible)
        throw ValueError(fmt::format("dist::init: {} devices asked for, {} visible", n.devices, visible));
      detail::nccl_init(n.devices);  // NotSupportedError in a build without NCCL
      break;
    }
    case World::Host:
      if (n.devices == 0) throw ValueError("dist::init(World::Host, n): give the number of simulated devices (n > 0)");
      if (current_backend() != Backend::Reference)
        throw ValueError("dist::init(World::Host, n) simulates devices on the host reference backend: "
                         "make it current first (BackendScope ref(Backend::Reference))");
      break;
    case World::Plan:
      if (n.devices == 0) throw ValueError("dist::init(World::Plan, n): give the number of devices to plan for (n > 0)");
      break;
    case World::Mpi: {
      // MPI first (NotSupportedError without it), then this process's GPU and the NCCL id.
      const detail::MpiPlace p = detail::mpi_start();
      if (devices != 0 && devices != p.size)
        throw ValueError(fmt::format("dist::init(World::Mpi, {}): mpirun started {} processes (one per GPU)", devices,
                                     p.size));
      // One GPU per process: every rank checks, and all raise together (none is left
      // waiting in the NCCL id's broadcast).
      const int visible = Device::count();
      const bool mine = visible > p.local_rank;
      if (!detail::mpi_all(mine))
        throw NoDeviceError(
            mine ? fmt::format("dist::init(World::Mpi): rank {} of {}: another rank has no GPU of its own (one process "
                               "per GPU)",
                               p.rank, p.size)
                 : fmt::format("dist::init(World::Mpi): rank {} of {} has no GPU: {} visible on its host, local rank {} "
                               "(one process per GPU){}",
                               p.rank, p.size, visible, p.local_rank,
                               visible == 0 ? ": " + Device::unavailable_reason() : std::string()));
      n.devices = p.size;
      n.processes = p.size;
      n.rank = p.rank;
      n.local_device = p.local_rank;
      Device(n.local_device).use();  // this process's arrays live on its GPU
      detail::nccl_init_rank(p.rank, p.size, n.local_device);
      break;
    }
  }
  n.up = true;
  s = std::move(n);
}

void finalize() {
  auto& dw = detail::dist_world();
  std::lock_guard<std::mutex> lk(dw.mu);
  auto& s = dw.s;
  if (!s.up) return;
  if (s.kind == World::Gpus || s.kind == World::Mpi) detail::nccl_finalize();
  // MPI itself stays up (MPI_Init may run once per process): mpi_stop at exit.
  s = detail::WorldState{};
}

bool initialized() { return detail::dist_world().s.up; }
World world() { return detail::world_state().kind; }
int rank() { return detail::world_state().rank; }
int world_size() { return detail::world_state().devices; }

void simulate_failure(int device, Failure kind, int after_collectives) {
  auto& dw = detail::dist_world();
  std::lock_guard<std::mutex> lk(dw.mu);
  auto& s = dw.s;
  if (!s.up || s.kind != World::Host)
    throw ValueError("dist::simulate_failure: only a host world (dist::init(World::Host, n)) simulates failures");
  if (device < 0 || device >= s.devices)
    throw IndexError(fmt::format("dist::simulate_failure: device {} is out of range for a world of {}", device,
                                 s.devices));
  if (after_collectives < 0)
    throw ValueError(fmt::format("dist::simulate_failure: after_collectives must be >= 0, got {}", after_collectives));
  s.failures.push_back({device, kind, after_collectives});
}

}  // namespace cufuse::dist
