// src/plan/cse.hpp: common-subexpression elimination on the pending graph of one
// evaluation (issue 37): identical subexpressions are computed once, library calls
// included (`matmul(A, p)` twice is one GEMM).
//
// Two nodes are the same value when kind, op, dtype, shape, layout (View, Generator,
// Buffer), attributes and their inputs' values are: Buffer leaves on the same memory with
// the same layout, Scalar leaves of equal value, dtype and weak-ness, generators of equal
// parameters (random ones: seed and counter), reductions of equal op, axes and keepdims,
// library nodes of calls of one class with equal attributes (the plan cache's
// attributes_hash) and the same output index. Never merged: placeholders, Scalar leaves
// bound to a fuse() argument (`varies`), and nodes running user code (ElementwiseKernel,
// ReductionKernel: their code may not be a function of the inputs alone).
//
// What changes (under graph_mutex(); every node keeps its value):
//  - a node of the graph that reads a duplicate reads its class's representative instead
//    (a root if the class has one, else the first met inputs-first);
//  - a duplicate that is a root of the evaluation becomes an elementwise copy (Cast to its
//    own dtype) of the representative: it still ends up as memory of its own, so a later
//    in-place write to one array does not change the other (for an elementwise or reduction
//    representative the copy is one more output of the same kernel; for a library one, one
//    small copy kernel);
//  - nothing else: a duplicate that is neither (an interior node an Array holds) keeps its
//    own inputs, stays pending and is computed, if ever, by its own evaluation.
//
// Cost: a screening walk over the inner nodes alone (value hashes; leaves hashed where they
// are read) ends the pass where no two are equal: about 0.1 us for 10 nodes, a quarter of
// the signature scan for 600 (tests/test_core_cse.cpp prints both). Only where two are
// equal does the full walk run, and only where it finds a duplicate is anything changed.
// No allocation once the thread's scratch has grown (small graphs: linear searches; past
// 32 nodes, open-addressing tables).
#pragma once
#include <vector>

#include "core/node.hpp"

namespace cufuse::detail {

// Runs the pass over the pending graph under `roots` (distinct nodes, as the executor's run
// takes them), if enabled. Call with graph_mutex() held, before the graph's signature scan.
// Returns the number of nodes found equal to another one (0: nothing was changed).
int eliminate_common_subexpressions(const std::vector<NodePtr>& roots);

// CUFUSE_CSE (runtime().settings(); off by default) unless set_cse_enabled overrode it
// (tests, debugging; the override is process state in the runtime context).
bool cse_enabled();
void set_cse_enabled(bool on);

}  // namespace cufuse::detail
