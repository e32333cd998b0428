// src/runtime/crash_trace.hpp: a backtrace on stderr when a process dies of a signal (the
// benchmark's children, the GPU test binary): on the GPU machine there is no debugger, and
// a crash at exit or a hang killed by `timeout` otherwise leaves only an exit status.
#pragma once

namespace cufuse::detail {

// Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (and SIGTERM when
// `on_term`: a hang ended by `timeout` shows where the signalled thread was). Each prints
// "<who>: signal N; backtrace:" and the frames (names need -rdynamic), then dies of the same
// signal. Installed once per process; not a state of the runtime context (a signal handler
// is the process's own).
void install_crash_backtrace(const char* who, bool on_term = false);

}  // namespace cufuse::detail
