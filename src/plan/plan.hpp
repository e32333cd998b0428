// src/plan/plan.hpp: a plan: the pending subgraph cut into groups (kernels, later library
// calls), in execution order, each boundary labelled with the named rule that made it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/node.hpp"

namespace cufuse::detail {

// The planner's rules. A plan dump names the rule behind each group and each fusion.
enum class Rule : uint8_t {
  Output,          // "output": elementwise/view/scalar/generator work fuses into the kernel writing a result
  IterationSpace,  // "iteration-space": results over one shape share a kernel; other shapes get their own
  Prologue,        // "prologue": elementwise producers of a reduction fuse into it
  Epilogue,        // "epilogue": elementwise consumers over a reduction's output fuse after it
  Siblings,        // "siblings": reductions over the same iteration space and axes share one kernel
  Rows,            // "rows": a reduction broadcast back over its rows and reduced/mapped again: one row kernel
  MultiPass,       // "multi-pass": rows too long for one block: each reduction its own kernel
  Materialize,     // "materialize": a reduction result read other than by broadcast or epilogue is written to memory
  Scan,            // "scan": a cumulative sum/product is its own kernel, with its prologue fused
  Library,         // "library": a matmul, contraction, solver or convolution call runs on its own (cuBLAS, cuSOLVER, or its generated kernel)
  LibraryInput,    // "library-input": a library input whose layout the call cannot read is written contiguously first
  ParamSpace,      // "param-space": work whose kernel would pass CUDA's parameter limit is split (plan/param_budget.hpp)
  KernelSize,      // "kernel-size": work whose kernel would pass max_kernel_ops() ops is split (plan/kernel_size.hpp)
};
const char* rule_name(Rule r);
const char* rule_doc(Rule r);
// The limit behind a rule's cut, as a plan dump prints it after the rule's name ("" for a
// rule without one): "limit 1024 ops a kernel".
std::string rule_limit(Rule r);

// Memory a group writes into instead of new memory (a write into an existing array).
struct Target {
  std::shared_ptr<Storage> storage;
  Layout layout;
};

enum class GroupKind : uint8_t { Elementwise, Reduction, Scan, Library };
class LibraryCall;
const char* group_kind_name(GroupKind k);

// What a reduction group writes per output.
enum class OutKind : uint8_t {
  Value,     // a Reduce node's result
  Epilogue,  // an elementwise node over a reduction's output shape
  Row,       // an elementwise node over the group's input shape (after the last phase)
  Plain,     // an elementwise group's output
};

struct Group {
  GroupKind kind = GroupKind::Elementwise;
  Shape iter_shape;               // elementwise: the outputs' shape; reduction/scan: the input shape
  Axes axes;                      // reduction/scan: the reduced (scanned) axes of iter_shape
  std::vector<NodePtr> outputs;   // what this group writes to memory
  std::vector<OutKind> out_kinds;
  std::vector<int> output_root;   // per output: index in Plan::roots, or -1 (an intermediate)
  std::vector<int> output_buffer; // per output: the executable's buffer
  std::vector<NodePtr> reductions;  // reduction groups: Reduce nodes computed here, by phase
  std::vector<int> phase;           // per reduction
  Rule rule = Rule::Output;         // why this group exists
  std::vector<Rule> fused;          // rules that fused work into it
  bool multipass = false;           // rows too long: re-read per phase (no register cache)
  // library groups: the call, its inputs, and which output of the call each output is
  std::shared_ptr<const LibraryCall> call;
  std::vector<NodePtr> lib_inputs;
  std::vector<int> lib_output_index;
};

struct Plan {
  std::vector<NodePtr> roots;
  std::vector<const Target*> targets;  // per root: nullptr (new memory) or where to write
  std::vector<Group> groups;           // in execution order
  std::vector<NodePtr> buffers;        // node held by each buffer (roots first, then intermediates)
  // The buffer that holds a node materialized by an earlier group, or -1.
  int buffer_of(const Node* n) const;
  // Drops every node and target of the graph the plan was made from (shapes, kinds, rules
  // and buffer indices stay): a plan kept for later graphs of the same signature must not
  // keep the first graph's arrays, and their memory, alive.
  void forget_graph();
};

// Cuts the pending subgraph under `roots` into groups. roots are distinct, unmaterialized
// (or, with a target, anything) nodes.
Plan make_plan(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets);

// Is `v` (a View node over a Reduce node r) r's result broadcast back over r's input
// shape, each row's value over the row it reduced?
bool is_broadcast_back(const Node* v, const Node* r);

}  // namespace cufuse::detail
