// src/compile/dump.hpp: CUFUSE_DUMP_KERNELS=<dir>. Writes what a program compiled or planned
// (kernel sources, ptxas info, plan text) into one directory for reading later.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace cufuse::detail {

// The dump directory if CUFUSE_DUMP_KERNELS is set (runtime().settings(); created at first
// use, and again after the context reloads the settings).
std::optional<std::filesystem::path> dump_dir();
// Writes `content` to <dump dir>/<filename> (whole, via temp file + rename) when dumping is
// on; does nothing otherwise. A failure is one warning on stderr per process.
void dump_file(const std::string& filename, const std::string& content);
// Tests: look at CUFUSE_DUMP_KERNELS again at the next use and re-arm the warning.
void reset_dump_settings();

}  // namespace cufuse::detail
