// src/runtime/log.cpp: the CUFUSE_LOG channels (parsed with the other variables, env.cpp);
// one line per write, serialized.
#include "runtime/log.hpp"

#include <cstdio>
#include <mutex>

#include "runtime/context.hpp"

namespace cufuse::detail {

namespace {
struct LogLock {
  static constexpr StateSlot kSlot = StateSlot::LogLock;
  std::mutex mu;
};
}  // namespace

bool log_enabled(LogChannel c) { return (settings().log_mask & unsigned(c)) != 0; }

void log_write(LogChannel c, const std::string& line) {
  const char* tag = c == LogChannel::Plan ? "plan" : c == LogChannel::Compile ? "compile"
                  : c == LogChannel::Launch ? "launch" : c == LogChannel::Cache ? "cache" : "memory";
  std::lock_guard<std::mutex> lk(runtime().state<LogLock>().mu);
  std::fprintf(stderr, "[cufuse:%s] %s\n", tag, line.c_str());
}

}  // namespace cufuse::detail
