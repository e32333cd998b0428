// src/dist/world.hpp: the world dist::init made (which kind, how many devices, this
// process's rank), the device each mesh device number maps to, and running a builder on a
// shard's device.
#pragma once
#include <utility>

#include "cufuse/dist.hpp"
#include "cufuse/stream.hpp"

namespace cufuse::dist::detail {

struct WorldState {
  bool up = false;
  World kind = World::Gpus;
  int devices = 0;
  int rank = 0;
};
const WorldState& world_state();  // ValueError when dist::init has not run
bool world_is(World w);

// The CUDA device of a mesh device number (Gpus world), -1 elsewhere.
int cuda_device(int mesh_device);

// Calls f() with the shard's device current (Gpus world); elsewhere just f().
template <class F>
auto on_device(int mesh_device, F&& f) {
  const int dev = cuda_device(mesh_device);
  if (dev < 0) return std::forward<F>(f)();
  DeviceScope scope(dev);
  return std::forward<F>(f)();
}

}  // namespace cufuse::dist::detail
