// src/core/node_device.hpp: the device of the memory a node reads, and the check that the
// operands of one operation live on one device (every elementwise op runs it while building
// its node; the executor's evaluation device, exec/binding.hpp, builds on the same facts).
#pragma once
#include <string>

#include "core/node.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

// The device of the memory a node reads: a device id, -1 for host memory, -2 for none
// (scalars, generators, placeholders).
inline int node_device(const Node& n) {
  if (n.k() == NodeKind::Buffer) return n.storage ? n.storage->device : -2;
  return n.device;  // set by finish_node from the first input that reads memory
}

// "device 3", or "the host (reference backend)" for -1: how messages name a device.
std::string device_word(int d);

// The ValueError of check_same_device, naming both devices.
[[noreturn]] void throw_two_devices(const NodePtr* const* nodes, int n, const char* what);
// Throws ValueError naming both devices when two operands live on different devices (null
// entries skipped). Inline: every elementwise op runs it while building its node.
inline void check_same_device(const NodePtr* const* nodes, int n, const char* what) {
  int first = -2;
  for (int i = 0; i < n; ++i) {
    if (!nodes[i] || !*nodes[i]) continue;
    const int d = node_device(**nodes[i]);
    if (d == -2) continue;  // no memory read (scalars, generators, placeholders)
    if (first == -2) first = d;
    else if (d != first) throw_two_devices(nodes, n, what);
  }
}

}  // namespace cufuse::detail
