// src/dist/world.cpp: dist::init / finalize / rank / world_size: the world's kind and size.
// A GPU world opens one NCCL communicator per device (nccl.hpp); the host and plan worlds
// simulate their devices. The state is one process-wide object here (to become a StateSlot
// of runtime/context.hpp when that header is next touched).
#include <mutex>

#include <fmt/format.h>

#include "cufuse/backend.hpp"
#include "cufuse/error.hpp"
#include "dist/nccl.hpp"
#include "dist/world.hpp"

namespace cufuse::dist {
namespace detail {

namespace {
WorldState& state() {
  static WorldState s;
  return s;
}
std::mutex& world_mutex() {
  static std::mutex m;
  return m;
}
const char* world_name(World w) {
  switch (w) {
    case World::Gpus: return "Gpus";
    case World::Host: return "Host";
    case World::Plan: return "Plan";
    case World::Mpi: return "Mpi";
  }
  return "?";
}
}  // namespace

const WorldState& world_state() {
  const WorldState& s = state();
  if (!s.up) throw ValueError("dist: no world; call dist::init() first (dist::init(World::Host, n) on the host)");
  return s;
}

bool world_is(World w) { return state().up && state().kind == w; }

int cuda_device(int mesh_device) { return world_is(World::Gpus) ? mesh_device : -1; }

}  // namespace detail

void init(World w, int devices) {
  std::lock_guard<std::mutex> lk(detail::world_mutex());
  auto& s = detail::state();
  if (s.up)
    throw ValueError(fmt::format("dist::init: a {} world of {} devices is already up (dist::finalize() first)",
                                 detail::world_name(s.kind), s.devices));
  if (devices < 0) throw ValueError(fmt::format("dist::init: devices must be >= 0, got {}", devices));
  int n = devices;
  switch (w) {
    case World::Gpus: {
      const int visible = Device::count();
      if (visible == 0) throw NoDeviceError("dist::init: no GPU: " + Device::unavailable_reason());
      if (n == 0) n = visible;
      if (n > visible)
        throw ValueError(fmt::format("dist::init: {} devices asked for, {} visible", n, visible));
      detail::nccl_init(n);  // NotSupportedError in a build without NCCL
      break;
    }
    case World::Host:
      if (n == 0) throw ValueError("dist::init(World::Host, n): give the number of simulated devices (n > 0)");
      if (current_backend() != Backend::Reference)
        throw ValueError("dist::init(World::Host, n) simulates devices on the host reference backend: "
                         "make it current first (BackendScope ref(Backend::Reference))");
      break;
    case World::Plan:
      if (n == 0) throw ValueError("dist::init(World::Plan, n): give the number of devices to plan for (n > 0)");
      break;
    case World::Mpi:
      throw NotSupportedError(
          "dist::init(World::Mpi): one process per GPU under mpirun is not available in this build (MPI not "
          "found, or not implemented yet); use dist::init() for all GPUs of one process");
  }
  s.kind = w;
  s.devices = n;
  s.rank = 0;
  s.up = true;
}

void finalize() {
  std::lock_guard<std::mutex> lk(detail::world_mutex());
  auto& s = detail::state();
  if (!s.up) return;
  if (s.kind == World::Gpus) detail::nccl_finalize();
  s = detail::WorldState{};
}

bool initialized() { return detail::state().up; }
World world() { return detail::world_state().kind; }
int rank() { return detail::world_state().rank; }
int world_size() { return detail::world_state().devices; }

}  // namespace cufuse::dist
