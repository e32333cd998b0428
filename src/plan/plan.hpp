// src/plan/plan.hpp: a plan: the pending subgraph cut into groups (kernels, later library
// calls), in execution order, each boundary labelled with the named rule that made it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "graph/node.hpp"

namespace cufuse::detail {

// The planner's rules. Each boundary a plan dump shows names the rule that placed it.
enum class Rule : uint8_t {
  Output,          // "output": a requested result is written to memory by the kernel computing it
  IterationSpace,  // "iteration-space": results over different shapes come from different kernels
};
const char* rule_name(Rule r);
const char* rule_doc(Rule r);

// Memory a group writes into instead of new memory (a write into an existing array).
struct Target {
  std::shared_ptr<Storage> storage;
  Layout layout;
};

enum class GroupKind : uint8_t { Elementwise };

struct Group {
  GroupKind kind = GroupKind::Elementwise;
  Shape iter_shape;
  std::vector<NodePtr> outputs;   // what this group writes
  std::vector<int> output_root;   // per output: index in Plan::roots
  Rule rule = Rule::Output;
};

struct Plan {
  std::vector<NodePtr> roots;
  std::vector<const Target*> targets;  // per root: nullptr (new memory) or where to write
  std::vector<Group> groups;           // in execution order
};

// Cuts the pending subgraph under `roots` into groups. roots are distinct, unmaterialized
// (or, with a target, anything) nodes.
Plan make_plan(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets);

}  // namespace cufuse::detail
