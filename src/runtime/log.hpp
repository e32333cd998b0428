// src/runtime/log.hpp: CUFUSE_LOG=plan,compile,launch (or "all") logging to stderr.
#pragma once
#include <string>

#include <fmt/format.h>

namespace cufuse::detail {

enum class LogChannel : unsigned { Plan = 1, Compile = 2, Launch = 4, Cache = 8, Memory = 16 };
bool log_enabled(LogChannel c);  // CUFUSE_LOG, from runtime().settings()
void log_write(LogChannel c, const std::string& line);

template <class... A>
inline void log(LogChannel c, fmt::format_string<A...> f, A&&... a) {
  if (log_enabled(c)) log_write(c, fmt::format(f, std::forward<A>(a)...));
}

}  // namespace cufuse::detail
