// src/core/registry.hpp: the pending roots: unrealized nodes that an Array handle holds
// (plain pointers, each removed by the node's destruction).
// A write into memory settles the pending roots that read it, so every lazy expression
// sees the values its inputs had when it was written.
#pragma once
#include <vector>

#include "core/node.hpp"

namespace cufuse::detail {

void register_root(const NodePtr& n);  // called when an Array first holds an unrealized node
// For an op's new node, before an Array holds it: under one lock, registers `fresh` and
// takes off the nodes it was built from that their last Array gave up (Array::take_node),
// so that neither of those needs the lock again (when that Array takes it up, or when
// they are destroyed).
void register_replacing(Node* fresh, Node* const* given_up, int k);
// Off the registry (nothing where it is not on it): by destroy_node, and for a node just
// realized, so that the registry does not grow with the arrays a program keeps.
void unregister_root(Node* n);
void unregister_root_locked(Node* n);  // the same for a registered node, under a RegistryLock
// Holds the registry's lock: no reference to a registered node is taken meanwhile (for
// ~Node, which takes over the inputs of a node it holds the only reference to).
class RegistryLock {
 public:
  RegistryLock();
  ~RegistryLock();
  RegistryLock(const RegistryLock&) = delete;
  RegistryLock& operator=(const RegistryLock&) = delete;
};
size_t registered_roots();  // entries now (for tests)
// Live, unrealized roots held by an Array whose graph reads `storage`.
std::vector<NodePtr> pending_roots_reading(const Storage* storage);
// Live, unrealized roots held by an Array (references taken), for the executor's choice of
// what else to evaluate with a materialization point.
std::vector<NodePtr> live_pending_roots();

// This thread's pending in-place writes (nodes with a WriteDest), held here so that a write
// made through a handle that is gone (`x[{slice(0, 5)}] += 1`) is not lost: every
// materialization point of the thread evaluates them with its own work. Those of threads
// that ended come along with any thread's.
void add_pending_write(const NodePtr& w);
// Those still pending, in program order (realized and superseded ones are dropped).
std::vector<NodePtr> pending_writes();
size_t pending_write_count();

}  // namespace cufuse::detail
