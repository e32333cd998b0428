// src/runtime/log.cpp: the CUFUSE_LOG channels (parsed with the other variables, env.cpp);
// one line per write, serialized, stamped with the milliseconds since the process's first
// logged line (where a first call spends its time: plan, cache, compile, launch, memory).
#include "runtime/log.hpp"

#include <chrono>
#include <cstdio>
#include <mutex>

#include "runtime/context.hpp"

namespace cufuse::detail {

namespace {
struct LogLock {
  static constexpr StateSlot kSlot = StateSlot::LogLock;
  std::mutex mu;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
};
}  // namespace

bool log_enabled(LogChannel c) { return (settings().log_mask & unsigned(c)) != 0; }

void log_write(LogChannel c, const std::string& line) {
  const char* tag = c == LogChannel::Plan ? "plan" : c == LogChannel::Compile ? "compile"
                  : c == LogChannel::Launch ? "launch" : c == LogChannel::Cache ? "cache" : "memory";
  LogLock& l = runtime().state<LogLock>();
  std::lock_guard<std::mutex> lk(l.mu);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - l.t0).count();
  std::fprintf(stderr, "[cufuse:%s +%.3f ms] %s\n", tag, ms, line.c_str());
}

}  // namespace cufuse::detail
