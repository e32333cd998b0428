// src/runtime/log.cpp: the CUFUSE_LOG channels; one line per write, serialized.
#include "runtime/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>

namespace cufuse::detail {

static unsigned parse_log_env() {
  const char* e = std::getenv("CUFUSE_LOG");
  if (!e) return 0;
  std::string_view s(e);
  unsigned m = 0;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string_view::npos) end = s.size();
    auto w = s.substr(pos, end - pos);
    if (w == "all" || w == "1") m = ~0u;
    else if (w == "plan") m |= unsigned(LogChannel::Plan);
    else if (w == "compile") m |= unsigned(LogChannel::Compile);
    else if (w == "launch") m |= unsigned(LogChannel::Launch);
    else if (w == "cache") m |= unsigned(LogChannel::Cache);
    else if (w == "memory") m |= unsigned(LogChannel::Memory);
    pos = end + 1;
  }
  return m;
}

bool log_enabled(LogChannel c) {
  static const unsigned mask = parse_log_env();
  return (mask & unsigned(c)) != 0;
}

void log_write(LogChannel c, const std::string& line) {
  static std::mutex mu;
  const char* tag = c == LogChannel::Plan ? "plan" : c == LogChannel::Compile ? "compile"
                  : c == LogChannel::Launch ? "launch" : c == LogChannel::Cache ? "cache" : "memory";
  std::lock_guard<std::mutex> lk(mu);
  std::fprintf(stderr, "[cufuse:%s] %s\n", tag, line.c_str());
}

}  // namespace cufuse::detail
