// src/plan/epilogue.hpp: the planner's rule for GEMM epilogues. An elementwise root that
// is a bias add or a GELU (cufuse::gelu) — or a bias add followed by a GELU — of one
// float16/bfloat16/float32 GEMM result, where nothing else reads that result or the work
// between, is computed by a new GEMM call with a cuBLASLt epilogue; the planner plans the
// root as that call's output and drops the plain GEMM. A ReLU (maximum(x, 0)) is not: the
// RELU epilogue of some cuBLASLt kernels turns NaN into 0 (src/library/gemm_call.hpp), so a ReLU, and a
// bias add under it, run in the generated kernel after the GEMM.
#pragma once
#include <memory>
#include <vector>

#include "core/library_call.hpp"

namespace cufuse::detail {

struct EpilogueFusion {
  std::shared_ptr<const LibraryCall> call;  // computes the root
  InputVec inputs;                          // the call's inputs (nodes of the graph)
  NodePtr absorbed;                         // the GEMM result no longer written to memory
};

// `topo`: the pending nodes in dependency order, `roots`: the plan's roots. False when the
// root is not such a pattern (or fusing it would lose a value someone else reads).
bool try_fuse_epilogue(const NodePtr& root, const std::vector<NodePtr>& topo, const std::vector<NodePtr>& roots,
                       EpilogueFusion& out);

}  // namespace cufuse::detail
