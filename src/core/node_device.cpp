// src/core/node_device.cpp: the mixed-device error (see node_device.hpp).
#include "core/node_device.hpp"

#include <fmt/format.h>

#include "cufuse/error.hpp"

namespace cufuse::detail {

std::string device_word(int d) { return d < 0 ? std::string("the host (reference backend)") : fmt::format("device {}", d); }

void throw_two_devices(const NodePtr* const* nodes, int n, const char* what) {
  int first = -2, at = -1;
  for (int i = 0; i < n; ++i) {
    if (!nodes[i] || !*nodes[i]) continue;
    const int d = node_device(**nodes[i]);
    if (d == -2) continue;  // no memory read (scalars, generators, placeholders)
    if (first == -2) {
      first = d;
      at = i;
    } else if (d != first) {
      throw ValueError(fmt::format("{}: operand {} is on {} but operand {} is on {}; an operation takes arrays "
                                   "of one device (copy one with to_device({}))",
                                   what, at, device_word(first), i, device_word(d), first < 0 ? d : first));
    }
  }
  throw InternalError(fmt::format("{}: throw_two_devices called with operands of one device", what));
}

}  // namespace cufuse::detail
