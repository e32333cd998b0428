// src/compile/disk_cache.hpp: the on-disk kernel cache ($CUFUSE_CACHE_DIR, default
// $XDG_CACHE_HOME/cufuse or ~/.cache/cufuse; CUFUSE_CACHE=0 turns it off), and the hashes it
// names and checks files with.
//
// One file per kernel, named by a 128-bit hash of the salted key (the full compile key, the
// NVRTC version and the cufuse version). The file holds the salted key itself, compared on
// read, so a hash collision is a miss; a checksum guards the CUBIN and the log. Anything
// wrong with a file (missing, truncated, foreign, corrupt, unreadable) is a miss, logged on
// the cache channel, never an exception; only regular files are read (a FIFO or device in
// an entry's place is a miss, and opening it does not block). Writes go to a unique temp file
// in the same directory and are renamed into place, so readers in any thread or process see a
// whole file or none; temp files a killed writer left are removed, once an hour old, when the
// directory is opened. A failed write is one warning on stderr per process.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cufuse::detail {

// MurmurHash3 x64 128 (little-endian byte order). Names files; never trusted alone.
struct Hash128 {
  uint64_t lo = 0, hi = 0;
  std::string hex() const;  // 32 lowercase hex digits
  bool operator==(const Hash128& o) const { return lo == o.lo && hi == o.hi; }
};
Hash128 hash128(std::string_view data, uint64_t seed = 0);
// A 64-bit checksum for file contents.
uint64_t checksum64(const void* data, size_t size);

struct DiskCacheSettings {
  bool enabled = false;
  std::filesystem::path dir;  // where files live (set even when disabled, if resolvable)
  std::string why_off;        // why disabled ("" when enabled)
};
// The settings, made at first use from runtime().settings() (CUFUSE_CACHE_DIR, CUFUSE_CACHE,
// XDG_CACHE_HOME, HOME; runtime/env.cpp), and again after the context reloads them.
DiskCacheSettings disk_cache_settings();
// Tests: make the settings again at the next use and re-arm the one write warning.
void reset_disk_cache_settings();

// The key as stored and hashed: `key` salted with the cufuse and NVRTC versions.
std::string disk_cache_salted_key(const std::string& key);
// The file that holds `key` (unsalted) under `dir`.
std::filesystem::path disk_cache_file(const std::filesystem::path& dir, const std::string& key);

struct DiskCacheEntry {
  std::vector<char> cubin;
  std::string log;
};
// The entry for `key` (unsalted) if the cache is on and holds a valid file for it.
std::optional<DiskCacheEntry> disk_cache_load(const std::string& key);
// Stores an entry; false (after a warning, once per process) if it could not be written.
// Does nothing and returns false when the cache is off.
bool disk_cache_store(const std::string& key, const std::vector<char>& cubin, const std::string& log);

// Hints (exec/tiered.hpp): an entry under a structural key (no source: the plan's graph
// signature and step) holding the kernel that was stored for it, so that a new process's first
// call reads one file before its launch. Named, written and checked as a kernel's entry (its
// key prefixed "hint\n"); its log section is the kernel's full compile key (length first) and
// then the kernel's log. A hint is never trusted for the kernel itself: its caller takes the
// CUBIN only where the compile key of the source it made is the stored one, byte for byte
// (tiered.cpp: hinted_kernel), the comparison a kernel's own entry makes.
struct DiskCacheHint {
  std::string compile_key;  // the kernel's (compiler.hpp: compile_key): arch, options, name, source
  std::vector<char> cubin;
  std::string log;
};
std::optional<DiskCacheHint> disk_cache_load_hint(const std::string& key);
bool disk_cache_has_hint(const std::string& key);
bool disk_cache_store_hint(const std::string& key, const std::string& compile_key, const std::vector<char>& cubin,
                           const std::string& log);

// Tests: a hook called before the temp file's bytes are written (Write, with its fd) and
// before the rename (Rename, fd -1). It returns an errno to fake there (ENOSPC: a full disk),
// or 0 to go on; a test process may also end itself there (kill -9 at the write or rename).
// Null (the default) calls nothing.
enum class DiskCacheStage { Write, Rename };
using DiskCacheFaultHook = int (*)(DiskCacheStage stage, int fd);
void set_disk_cache_fault_hook(DiskCacheFaultHook hook);

// The file layout, exposed for tests that damage files on purpose.
namespace disk_format {
inline constexpr char magic[8] = {'C', 'U', 'F', 'U', 'S', 'E', 'K', 'C'};
inline constexpr uint32_t version = 1;
inline constexpr size_t header_bytes = 64;  // magic, version, header size, 3 lengths, 2 checksums, 0
// A temp file older than this is a dead writer's, removed when the directory is opened.
inline constexpr long stale_temp_seconds = 3600;
}  // namespace disk_format

}  // namespace cufuse::detail
