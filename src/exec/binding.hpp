// src/exec/binding.hpp: binding a planned executable to one evaluation, shared by the lazy
// path (src/exec/executor.cpp) and fuse() replay (src/fuse). Owns:
//   - LeafSource: where a leaf's data pointer, scalar value and planned node come from
//     (a GraphScan's nodes for the lazy path; a fused call's arguments for replay);
//   - apply_patches: writing those values into a kernel's parameter bytes;
//   - run_library_step: a library step's operands from the same source;
//   - the device an evaluation runs on (where its leaves live; mixing devices is an error:
//     core/node_device.hpp);
//   - noting the leaves' memory used on the evaluation's stream (the cross-stream records
//     and waits are runtime/storage.hpp's).
#pragma once
#include <vector>

#include "codegen/kernel.hpp"
#include "core/node_device.hpp"
#include "plan/signature.hpp"
#include "runtime/device.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

struct Step;  // exec/executable.hpp

class LeafSource {
 public:
  virtual ~LeafSource() = default;
  // The planned leaf (its dtype, layout and generator parameters).
  virtual const Node& node(int leaf) const = 0;
  // A Buffer leaf's data pointer for this evaluation (storage + layout offset).
  virtual const char* data(int leaf) const = 0;
  // A Scalar leaf's value for this evaluation, of the leaf's dtype.
  virtual Scalar scalar(int leaf) const = 0;
};

// The lazy path: the leaves of the graph being evaluated, as scan_graph found them.
class ScanSource final : public LeafSource {
 public:
  explicit ScanSource(const GraphScan& s) : scan_(s) {}
  const Node& node(int leaf) const override { return *scan_.leaves[leaf]; }
  const char* data(int leaf) const override {
    const Node* l = scan_.leaves[leaf];
    return static_cast<const char*>(l->storage->ptr) + l->layout.offset * itemsize(l->dtype);
  }
  Scalar scalar(int leaf) const override { return scan_.leaves[leaf]->scalar; }

 private:
  const GraphScan& scan_;
};

// Writes the patches' values into `bytes` (a kernel's parameter struct).
void apply_patches(unsigned char* bytes, const Patch* patches, size_t n, const LeafSource& src,
                   void* const* buffers, void* workspace);
// One patch (true when it depends only on the plan: generator parameters).
bool patch_is_static(const Patch& p);
inline void apply_patches(std::vector<unsigned char>& bytes, const KernelSpec& spec, const LeafSource& src,
                          const std::vector<void*>& buffers, void* workspace) {
  bytes.assign(spec.params.begin(), spec.params.end());
  apply_patches(bytes.data(), spec.patches.data(), spec.patches.size(), src, buffers.data(), workspace);
}

// The scratch memory a kernel needs (nullptr for none), its leading bytes zeroed as the spec
// asks, on `stream`; `keep` holds it until the launches that use it are queued.
void* step_workspace(const KernelSpec& spec, std::vector<std::shared_ptr<Storage>>& keep, void* stream);

// Runs a library step: inputs from leaves (through `src`) or earlier buffers.
void run_library_step(const Step& st, const LeafSource& src, const std::vector<void*>& ptrs, void* stream);

// ------------------------------------------------------------------ devices
// The device the Buffer leaves of a scan and the write targets live on (-1: host memory or
// no buffers); throws ValueError naming both devices when they differ. A write whose value
// reads no memory (`x[...] = 2.0` into an array on device 1) runs where its target is, not
// on the current device (a kernel on one device writing another's memory).
int leaves_device(const GraphScan& scan, const std::vector<const Target*>& targets);
// ------------------------------------------------------------------ streams
// Every Buffer leaf of a scan was used on `stream` by this evaluation.
void note_leaves_used(const GraphScan& scan, void* stream, int device);

}  // namespace cufuse::detail
