// src/runtime/crash_trace.cpp: the crash backtrace handlers (crash_trace.hpp). Only
// async-signal-safe calls in the handler: write, backtrace (its first call is made at
// installation, so it has loaded libgcc before any signal), backtrace_symbols_fd, raise.
#include "runtime/crash_trace.hpp"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <initializer_list>

namespace cufuse::detail {

namespace {

const char* g_who = "cufuse";  // set once before the handlers are installed, then only read

void put(const char* s) { (void)!write(STDERR_FILENO, s, std::strlen(s)); }

void on_signal(int sig) {
  char num[16];
  int n = 0;
  for (int v = sig; v > 0 && n < 15; v /= 10) num[n++] = static_cast<char>('0' + v % 10);
  char rev[16];
  for (int i = 0; i < n; ++i) rev[i] = num[n - 1 - i];
  rev[n] = '\0';
  put("\n");
  put(g_who);
  put(": signal ");
  put(rev);
  put("; backtrace:\n");
  void* frames[64];
  const int k = backtrace(frames, 64);
  backtrace_symbols_fd(frames, k, STDERR_FILENO);
  ::signal(sig, SIG_DFL);  // ::, not cufuse::signal (convolve2d and kin)
  raise(sig);
}

}  // namespace

void install_crash_backtrace(const char* who, bool on_term) {
  g_who = who;
  void* warm[1];
  (void)backtrace(warm, 1);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, on_signal);
  if (on_term) ::signal(SIGTERM, on_signal);
}

}  // namespace cufuse::detail
