// tests/test_sandbox.hpp: scoped environment variables, temporary directories and a private
// kernel-cache sandbox, for the tests of src/compile/compiler and the disk cache.
#pragma once
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "compile/compiler.hpp"
#include "compile/disk_cache.hpp"
#include "compile/dump.hpp"
#include "runtime/context.hpp"

namespace cufuse_test {

// Sets (or, with nullopt, unsets) an environment variable for a scope, and has the runtime
// context read the environment again (runtime/context.hpp) at both ends.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
    cufuse::detail::runtime().reload_settings();
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
    cufuse::detail::runtime().reload_settings();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A fresh empty directory under the system temp dir, removed at the end.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> n{0};
    path = std::filesystem::temp_directory_path() / fmt::format("cufuse-test-{}-{}", ::getpid(), n++);
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// The text of every plan file (plan_*.txt, CUFUSE_DUMP_KERNELS) in `dir`, one after another.
inline std::string read_plan_files(const std::filesystem::path& dir) {
  std::string all;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("plan_", 0) != 0) continue;
    std::ifstream f(e.path());
    std::stringstream ss;
    ss << f.rdbuf();
    all += ss.str();
  }
  return all;
}

// A private disk cache dir, dumping off, an empty memory cache; restored at the end.
struct Sandbox {
  TempDir dir;
  ScopedEnv cache_dir{"CUFUSE_CACHE_DIR", dir.path.string()};
  ScopedEnv cache{"CUFUSE_CACHE", std::nullopt};
  ScopedEnv dump{"CUFUSE_DUMP_KERNELS", std::nullopt};
  Sandbox() { reset(); }
  ~Sandbox() { reset(); }
  static void reset() {
    cufuse::detail::reset_disk_cache_settings();
    cufuse::detail::reset_dump_settings();
    cufuse::detail::clear_memory_cache();
  }
};

}  // namespace cufuse_test
