// src/compile/dump.cpp: CUFUSE_DUMP_KERNELS (see dump.hpp). Files are written whole (temp file
// + rename) so a reader never sees half of one, even when threads dump at once.
#include "compile/dump.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "runtime/context.hpp"
#include "runtime/log.hpp"

namespace cufuse::detail {

namespace fs = std::filesystem;

namespace {

// The dump's process state (runtime/context.hpp): the directory, made from the environment's
// CUFUSE_DUMP_KERNELS (runtime/env.cpp) at first use and again after a reload or a reset,
// the one warning, and the temp-file counter.
struct DumpState {
  static constexpr StateSlot kSlot = StateSlot::KernelDump;
  std::mutex mu;
  bool read = false;            // guarded by mu
  uint64_t generation = 0;      // of the Settings `dir` was made from; guarded by mu
  std::optional<fs::path> dir;  // guarded by mu
  std::atomic<bool> warned{false};
  std::atomic<uint64_t> counter{0};
};
DumpState& dump_state() { return runtime().state<DumpState>(); }

void dump_warn_once(const std::string& what) {
  log(LogChannel::Compile, "{}", what);
  if (!dump_state().warned.exchange(true))
    std::fprintf(stderr, "cufuse: warning: CUFUSE_DUMP_KERNELS: %s (shown once)\n", what.c_str());
}

}  // namespace

std::optional<fs::path> dump_dir() {
  DumpState& st = dump_state();
  const Settings& env = settings();
  std::lock_guard<std::mutex> lk(st.mu);
  if (!st.read || st.generation != env.generation) {
    st.read = true;
    st.generation = env.generation;
    st.dir.reset();
    if (const std::string& e = env.dump_kernels; !e.empty()) {
      std::error_code ec;
      fs::create_directories(e, ec);
      if (ec) dump_warn_once(fmt::format("cannot create {}: {}", e, ec.message()));
      else st.dir = fs::path(e);
    }
  }
  return st.dir;
}

void reset_dump_settings() {
  DumpState& st = dump_state();
  std::lock_guard<std::mutex> lk(st.mu);
  st.read = false;
  st.dir.reset();
  st.warned.store(false);
}

void dump_file(const std::string& filename, const std::string& content) {
  auto dir = dump_dir();
  if (!dir) return;
  fs::path rel(filename);
  if (filename.empty() || rel.is_absolute() || filename.find("..") != std::string::npos) {
    dump_warn_once(fmt::format("refusing to write '{}' (a plain relative name is expected)", filename));
    return;
  }
  try {
    fs::path path = *dir / rel;
    std::error_code ec;
    if (rel.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    fs::path tmp = path;
    tmp += fmt::format(".tmp-{}-{:x}-{}", ::getpid(), std::hash<std::thread::id>{}(std::this_thread::get_id()),
                       dump_state().counter.fetch_add(1));
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(content.data(), std::streamsize(content.size()));
      out.close();
      if (!out) {
        fs::remove(tmp, ec);
        dump_warn_once(fmt::format("cannot write {}", path.string()));
        return;
      }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
      std::string why = ec.message();
      fs::remove(tmp, ec);
      dump_warn_once(fmt::format("cannot write {}: {}", path.string(), why));
      return;
    }
    log(LogChannel::Compile, "dumped {}", path.string());
  } catch (const std::exception& ex) {
    dump_warn_once(fmt::format("cannot write {}: {}", filename, ex.what()));
  }
}

}  // namespace cufuse::detail
