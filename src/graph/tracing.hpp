// src/graph/tracing.hpp: whether this thread is tracing a fused function (cufuse::fuse;
// src/fuse/trace.cpp opens the scope). Graph building reads it: while tracing, every C++
// scalar operand gets a Scalar leaf of its own (graph/elementwise.cpp), which the trace marks.
#pragma once

namespace cufuse::detail {

// True while this thread runs a callable being traced (a fused call inside is inlined).
bool fuse_is_tracing();

// Marks this thread as tracing for a scope (scopes nest).
struct TracingScope {
  TracingScope();
  ~TracingScope();
  TracingScope(const TracingScope&) = delete;
  TracingScope& operator=(const TracingScope&) = delete;
};

}  // namespace cufuse::detail
