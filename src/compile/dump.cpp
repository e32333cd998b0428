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

#include "runtime/log.hpp"

namespace cufuse::detail {

namespace fs = std::filesystem;

namespace {

std::mutex g_mu;
bool g_read = false;                 // guarded by g_mu
std::optional<fs::path> g_dir;       // guarded by g_mu
std::atomic<bool> g_warned{false};
std::atomic<uint64_t> g_counter{0};

void warn_once(const std::string& what) {
  log(LogChannel::Compile, "{}", what);
  if (!g_warned.exchange(true))
    std::fprintf(stderr, "cufuse: warning: CUFUSE_DUMP_KERNELS: %s (shown once)\n", what.c_str());
}

}  // namespace

std::optional<fs::path> dump_dir() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_read) {
    g_read = true;
    g_dir.reset();
    const char* e = std::getenv("CUFUSE_DUMP_KERNELS");
    if (e && *e) {
      std::error_code ec;
      fs::create_directories(e, ec);
      if (ec) warn_once(fmt::format("cannot create {}: {}", e, ec.message()));
      else g_dir = fs::path(e);
    }
  }
  return g_dir;
}

void reset_dump_settings() {
  std::lock_guard<std::mutex> lk(g_mu);
  g_read = false;
  g_dir.reset();
  g_warned.store(false);
}

void dump_file(const std::string& filename, const std::string& content) {
  auto dir = dump_dir();
  if (!dir) return;
  fs::path rel(filename);
  if (filename.empty() || rel.is_absolute() || filename.find("..") != std::string::npos) {
    warn_once(fmt::format("refusing to write '{}' (a plain relative name is expected)", filename));
    return;
  }
  try {
    fs::path path = *dir / rel;
    std::error_code ec;
    if (rel.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    fs::path tmp = path;
    tmp += fmt::format(".tmp-{}-{:x}-{}", ::getpid(), std::hash<std::thread::id>{}(std::this_thread::get_id()),
                       g_counter.fetch_add(1));
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(content.data(), std::streamsize(content.size()));
      out.close();
      if (!out) {
        fs::remove(tmp, ec);
        warn_once(fmt::format("cannot write {}", path.string()));
        return;
      }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
      std::string why = ec.message();
      fs::remove(tmp, ec);
      warn_once(fmt::format("cannot write {}: {}", path.string(), why));
      return;
    }
    log(LogChannel::Compile, "dumped {}", path.string());
  } catch (const std::exception& ex) {
    warn_once(fmt::format("cannot write {}: {}", filename, ex.what()));
  }
}

}  // namespace cufuse::detail
