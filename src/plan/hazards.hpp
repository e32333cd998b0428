// src/plan/hazards.hpp: can a plan write its targets (lazy in-place writes) in place?
//
// A plan whose roots include pending writes writes each into its array's memory from the
// group that computes it. Every leaf that reads such memory reads the values it had before
// the evaluation (the new values are nodes, read from the group that computed them), so the
// plan is safe when every read of written memory happens before the write lands:
//   - in an earlier group, or
//   - in the writing group itself, if that is an elementwise kernel and the read is at the
//     element being written (the same layout as the target, reached through elementwise
//     nodes only): each thread loads an element's inputs before it stores the element
//     (codegen/elementwise_kernel.cpp: stores come after every output's value).
// Also unsafe: a later group reading a written result whose target is not dense (buffers
// are read back as dense arrays). An unsafe plan is run through temporaries instead (the
// executor: results into new memory, then one copy into each target), which moves more
// bytes but is always right.
#pragma once
#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace cufuse::detail {

struct WriteHazard {
  bool unsafe = false;
  std::string why;  // for the plan dump: the first read that makes the plan unsafe
};

WriteHazard find_write_hazard(const Plan& plan);

}  // namespace cufuse::detail
