// src/plan/plan.hpp: a plan: the pending subgraph cut into groups (kernels, later library
// calls), in execution order, each boundary labelled with the named rule that made it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "cufuse/enum_names.hpp"
#include "core/node.hpp"
#include "plan/rules.hpp"

namespace cufuse::detail {

// Memory a group writes into instead of new memory (a write into an existing array).
struct Target {
  std::shared_ptr<Storage> storage;
  Layout layout;
};

// A cut a rule made: the node (or the edge into it) where the rule stopped fusing, and why.
// The dump prints "cut at n17 sum over axes (1,) f32 (8192,): materialize, read by 2 groups";
// n17 is the node's place in the planner's walk of the graph (inputs before users).
struct Cut {
  Rule rule;
  const Node* node = nullptr;  // the node cut at (nullptr once the plan forgets its graph)
  int index = -1;              // its place in the planner's walk: the dump's n<index>
  std::string what;            // node_summary(node), kept past forget_graph
  std::string why;             // "read by 2 groups"
};
// "cut at n17 sum over axes (1,) f32 (8192,): materialize, read by 2 groups"
std::string describe_cut(const Cut& c);

#define CUFUSE_GROUP_KINDS(X)   \
  X(Elementwise, "elementwise") \
  X(Reduction, "reduction")     \
  X(Scan, "scan")               \
  X(Library, "library")
enum class GroupKind : uint8_t { CUFUSE_GROUP_KINDS(CUFUSE_ENUMERATOR) };
class LibraryCall;
inline const char* group_kind_name(GroupKind k) { return CUFUSE_ENUM_NAME(CUFUSE_GROUP_KINDS, k); }

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
  std::vector<Cut> cuts;            // where rules cut the graph at this group's boundary, and why
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
