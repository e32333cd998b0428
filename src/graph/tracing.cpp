// src/graph/tracing.cpp: the per-thread tracing depth behind graph/tracing.hpp.
#include "graph/tracing.hpp"

namespace cufuse::detail {

namespace {
thread_local int t_tracing = 0;
}  // namespace

TracingScope::TracingScope() { ++t_tracing; }
TracingScope::~TracingScope() { --t_tracing; }
bool fuse_is_tracing() { return t_tracing > 0; }

}  // namespace cufuse::detail
