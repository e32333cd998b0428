// src/compile/disk_cache.cpp: the on-disk kernel cache and its hashes (see disk_cache.hpp).
// Reads and writes use POSIX calls (open/read/write/rename) so every failure is an errno,
// turned into a logged miss or a one-time warning, never an exception.
#include "compile/disk_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "compile/nvrtc.hpp"
#include "runtime/context.hpp"
#include "runtime/log.hpp"

#ifndef CUFUSE_VERSION_STRING
#error "CUFUSE_VERSION_STRING must be defined by the build (it salts the disk cache)"
#endif

namespace cufuse::detail {

namespace fs = std::filesystem;

// ------------------------------------------------------------------ hashes

namespace {

inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
inline uint64_t load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

Hash128 hash128(std::string_view s, uint64_t seed) {
  const auto* data = reinterpret_cast<const unsigned char*>(s.data());
  const size_t len = s.size(), nblocks = len / 16;
  const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
  uint64_t h1 = seed, h2 = seed;
  for (size_t i = 0; i < nblocks; ++i) {
    uint64_t k1 = load64(data + 16 * i), k2 = load64(data + 16 * i + 8);
    k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    h1 = rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;
    k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
    h2 = rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
  }
  const unsigned char* tail = data + 16 * nblocks;
  uint64_t k1 = 0, k2 = 0;
  const size_t rest = len & 15;
  for (size_t i = rest; i > 8; --i) k2 ^= uint64_t(tail[i - 1]) << (8 * (i - 9));
  if (rest > 8) { k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2; }
  for (size_t i = rest < 8 ? rest : 8; i > 0; --i) k1 ^= uint64_t(tail[i - 1]) << (8 * (i - 1));
  if (rest > 0) { k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1; }
  h1 ^= len; h2 ^= len;
  h1 += h2; h2 += h1;
  h1 = fmix64(h1); h2 = fmix64(h2);
  h1 += h2; h2 += h1;
  return {h1, h2};
}

std::string Hash128::hex() const { return fmt::format("{:016x}{:016x}", lo, hi); }

uint64_t checksum64(const void* data, size_t size) {
  return hash128(std::string_view(static_cast<const char*>(data), size), 0x6366636b73756dULL).lo;
}

// ------------------------------------------------------------------ settings

namespace {

// The disk cache's process state (runtime/context.hpp): its settings, made from the
// environment's (runtime/env.cpp) at first use and again after a reload or a reset, the one
// write warning, and the temp-file counter.
struct DiskCacheState {
  static constexpr StateSlot kSlot = StateSlot::DiskCache;
  std::mutex mu;
  std::optional<DiskCacheSettings> settings;  // guarded by mu
  uint64_t generation = 0;                    // of the Settings it was made from; guarded by mu
  std::atomic<bool> warned{false};
  std::atomic<uint64_t> temp_counter{0};
};
DiskCacheState& state() { return runtime().state<DiskCacheState>(); }

std::string home_dir(const Settings& env) {
  if (env.home && !env.home->empty()) return *env.home;
  struct passwd pw, *res = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res && res->pw_dir) return res->pw_dir;
  return {};
}

// Temp files (".<entry>.kernel.tmp-<pid>-...") that a process killed between its open and
// its rename left behind: removed when the directory is opened, once older than an hour (a
// younger one may be another process's write in progress). Errors are ignored.
void remove_stale_temp_files(const fs::path& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const int dfd = ::dirfd(d);
  const time_t now = ::time(nullptr);
  int removed = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.size() < 2 || name[0] != '.' || name.find(".kernel.tmp-") == std::string_view::npos) continue;
    struct stat st;
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (now - st.st_mtime < disk_format::stale_temp_seconds) continue;
    if (::unlinkat(dfd, e->d_name, 0) == 0) ++removed;
  }
  ::closedir(d);
  if (removed) log(LogChannel::Cache, "removed {} stale temp file{} from {}", removed, removed == 1 ? "" : "s", dir.string());
}

DiskCacheSettings read_settings(const Settings& env) {
  DiskCacheSettings s;
  const std::string& dir = env.cache_dir;
  const std::string xdg = env.xdg_cache_home.value_or("");
  if (!dir.empty()) s.dir = dir;
  else if (!xdg.empty() && fs::path(xdg).is_absolute()) s.dir = fs::path(xdg) / "cufuse";
  else if (auto home = home_dir(env); !home.empty()) s.dir = fs::path(home) / ".cache" / "cufuse";

  if (!env.cache_off.empty())
    s.why_off = fmt::format("CUFUSE_CACHE={}", env.cache_off);
  else if (s.dir.empty())
    s.why_off = "no cache directory (set CUFUSE_CACHE_DIR, XDG_CACHE_HOME or HOME)";
  s.enabled = s.why_off.empty();
  if (s.enabled) remove_stale_temp_files(s.dir);
  if (s.enabled) log(LogChannel::Cache, "disk cache at {}", s.dir.string());
  else log(LogChannel::Cache, "disk cache off: {}", s.why_off);
  return s;
}

}  // namespace

DiskCacheSettings disk_cache_settings() {
  DiskCacheState& st = state();
  const Settings& env = settings();
  std::lock_guard<std::mutex> lk(st.mu);
  if (!st.settings || st.generation != env.generation) {
    st.settings = read_settings(env);
    st.generation = env.generation;
  }
  return *st.settings;
}

void reset_disk_cache_settings() {
  DiskCacheState& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  st.settings.reset();
  st.warned.store(false);
}

// ------------------------------------------------------------------ file naming

std::string disk_cache_salted_key(const std::string& key) {
  return fmt::format("cufuse {}\nnvrtc {}\nformat {}\n{}", CUFUSE_VERSION_STRING, nvrtc::version(),
                     disk_format::version, key);
}

static fs::path file_for_salted(const fs::path& dir, const std::string& salted) {
  return dir / (hash128(salted).hex() + ".kernel");
}

fs::path disk_cache_file(const fs::path& dir, const std::string& key) {
  return file_for_salted(dir, disk_cache_salted_key(key));
}

// ------------------------------------------------------------------ reading

namespace {

struct Header {
  char magic[8];
  uint32_t version, header_bytes;
  uint64_t key_len, log_len, cubin_len, key_log_sum, cubin_sum, reserved;
};
static_assert(sizeof(Header) == disk_format::header_bytes, "the header is 64 bytes, no padding");

// Reads all of `fd` (expected `size` bytes) into `buf`; false on error or short read.
bool read_all(int fd, char* buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

bool write_all(int fd, const char* buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The entry in `path` if it is a valid file for `salted`; a miss says why on the log.
std::optional<DiskCacheEntry> read_entry(const fs::path& path, const std::string& salted) {
  auto miss = [&](const std::string& why) -> std::optional<DiskCacheEntry> {
    log(LogChannel::Cache, "disk miss {}: {}", path.filename().string(), why);
    return std::nullopt;
  };
  Fd f;
  // O_NONBLOCK: a FIFO (or a device) named like an entry must not block the open; it is
  // refused below, as anything that is not a regular file is. (No effect on regular files.)
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (f.fd < 0) return miss(errno == ENOENT ? "no file" : fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat st;
  if (::fstat(f.fd, &st) != 0) return miss(fmt::format("cannot stat: {}", std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return miss("not a regular file");
  const uint64_t size = uint64_t(st.st_size);
  if (size < sizeof(Header)) return miss(fmt::format("truncated ({} bytes, header is {})", size, sizeof(Header)));
  Header h;
  if (!read_all(f.fd, reinterpret_cast<char*>(&h), sizeof h)) return miss("read error in header");
  if (std::memcmp(h.magic, disk_format::magic, sizeof h.magic) != 0) return miss("foreign file (bad magic)");
  if (h.version != disk_format::version) return miss(fmt::format("format version {}, want {}", h.version, disk_format::version));
  if (h.header_bytes != sizeof(Header)) return miss("bad header size");
  // Lengths are checked against the file size before anything is allocated.
  if (h.key_len != salted.size()) return miss("stored key differs (length)");
  if (h.log_len > size || h.cubin_len > size || h.key_len > size ||
      sizeof(Header) + h.key_len + h.log_len + h.cubin_len != size)
    return miss(fmt::format("size mismatch: file has {} bytes, header says {}", size,
                            sizeof(Header) + h.key_len + h.log_len + h.cubin_len));
  if (h.cubin_len == 0) return miss("empty cubin");
  std::string key_and_log(h.key_len + h.log_len, '\0');
  if (!read_all(f.fd, key_and_log.data(), key_and_log.size())) return miss("read error in key/log");
  if (std::string_view(key_and_log).substr(0, h.key_len) != salted) return miss("stored key differs");
  if (checksum64(key_and_log.data(), key_and_log.size()) != h.key_log_sum) return miss("key/log checksum mismatch");
  DiskCacheEntry e;
  e.cubin.resize(h.cubin_len);
  if (!read_all(f.fd, e.cubin.data(), e.cubin.size())) return miss("read error in cubin");
  if (checksum64(e.cubin.data(), e.cubin.size()) != h.cubin_sum) return miss("cubin checksum mismatch");
  e.log = key_and_log.substr(h.key_len);
  return e;
}

}  // namespace

std::optional<DiskCacheEntry> disk_cache_load(const std::string& key) {
  auto s = disk_cache_settings();
  if (!s.enabled) return std::nullopt;
  try {
    std::string salted = disk_cache_salted_key(key);
    auto path = file_for_salted(s.dir, salted);
    auto e = read_entry(path, salted);
    if (e) log(LogChannel::Cache, "disk hit {} ({} bytes cubin)", path.filename().string(), e->cubin.size());
    return e;
  } catch (const std::exception& ex) {  // bad_alloc and the like: still only a miss
    log(LogChannel::Cache, "disk miss: {}", ex.what());
    return std::nullopt;
  }
}

// ------------------------------------------------------------------ writing

namespace {

void warn_once(const std::string& what) {
  log(LogChannel::Cache, "{}", what);
  if (!state().warned.exchange(true))
    std::fprintf(stderr,
                 "cufuse: warning: %s; kernels will be compiled again in later runs "
                 "(set CUFUSE_CACHE_DIR to a writable directory, or CUFUSE_CACHE=0 to turn the disk "
                 "cache off). This warning is shown once.\n",
                 what.c_str());
}

uint64_t temp_nonce() {
  thread_local std::mt19937_64 rng = [] {
    uint64_t entropy = 0;
    try {
      entropy = std::random_device{}();
    } catch (...) {  // no entropy source: time, pid and thread id still make the name unique
    }
    std::seed_seq seq{entropy, uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()),
                      uint64_t(::getpid()), uint64_t(std::hash<std::thread::id>{}(std::this_thread::get_id()))};
    return std::mt19937_64(seq);
  }();
  return rng() ^ (state().temp_counter.fetch_add(1) << 48);
}

}  // namespace

namespace {
std::atomic<DiskCacheFaultHook> g_fault_hook{nullptr};
// The errno a test's hook fakes at `stage` (0: go on).
int fault_at(DiskCacheStage stage, int fd) {
  DiskCacheFaultHook h = g_fault_hook.load(std::memory_order_acquire);
  return h ? h(stage, fd) : 0;
}
}  // namespace

void set_disk_cache_fault_hook(DiskCacheFaultHook hook) { g_fault_hook.store(hook, std::memory_order_release); }

bool disk_cache_store(const std::string& key, const std::vector<char>& cubin, const std::string& log_text) {
  auto s = disk_cache_settings();
  if (!s.enabled) return false;
  fs::path tmp;
  try {
    std::string salted = disk_cache_salted_key(key);
    fs::path path = file_for_salted(s.dir, salted);
    std::error_code ec;
    fs::create_directories(s.dir, ec);
    if (ec) {
      warn_once(fmt::format("cannot create kernel cache directory {}: {}", s.dir.string(), ec.message()));
      return false;
    }
    Header h{};
    std::memcpy(h.magic, disk_format::magic, sizeof h.magic);
    h.version = disk_format::version;
    h.header_bytes = sizeof(Header);
    h.key_len = salted.size();
    h.log_len = log_text.size();
    h.cubin_len = cubin.size();
    std::string key_and_log = salted + log_text;
    h.key_log_sum = checksum64(key_and_log.data(), key_and_log.size());
    h.cubin_sum = checksum64(cubin.data(), cubin.size());

    std::string buf;
    buf.reserve(sizeof h + key_and_log.size() + cubin.size());
    buf.append(reinterpret_cast<const char*>(&h), sizeof h);
    buf += key_and_log;
    buf.append(cubin.data(), cubin.size());

    tmp = s.dir / fmt::format(".{}.tmp-{}-{:x}-{:016x}", path.filename().string(), ::getpid(),
                              std::hash<std::thread::id>{}(std::this_thread::get_id()), temp_nonce());
    Fd f;
    f.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (f.fd < 0) {
      warn_once(fmt::format("cannot write kernel cache file in {}: {}", s.dir.string(), std::strerror(errno)));
      tmp.clear();
      return false;
    }
    int write_errno = fault_at(DiskCacheStage::Write, f.fd);
    bool ok = write_errno == 0;
    if (ok) {
      ok = write_all(f.fd, buf.data(), buf.size());
      write_errno = errno;
    }
    int rc = ::close(f.fd);
    f.fd = -1;
    if (!ok || rc != 0) {
      ::unlink(tmp.c_str());
      warn_once(fmt::format("cannot write kernel cache file {}: {}", tmp.string(),
                            std::strerror(ok ? errno : write_errno)));
      return false;
    }
    const int fake = fault_at(DiskCacheStage::Rename, -1);
    if (fake != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
      int e = fake != 0 ? fake : errno;
      ::unlink(tmp.c_str());
      warn_once(fmt::format("cannot rename kernel cache file into {}: {}", path.string(), std::strerror(e)));
      return false;
    }
    log(LogChannel::Cache, "disk store {} ({} bytes)", path.filename().string(), buf.size());
    return true;
  } catch (const std::exception& ex) {
    if (!tmp.empty()) ::unlink(tmp.c_str());
    warn_once(fmt::format("cannot write kernel cache file in {}: {}", s.dir.string(), ex.what()));
    return false;
  }
}

// ------------------------------------------------------------------ hints

namespace {
std::string hint_entry_key(const std::string& key) { return "hint\n" + key; }
}  // namespace

std::optional<DiskCacheHint> disk_cache_load_hint(const std::string& key) {
  std::optional<DiskCacheEntry> e = disk_cache_load(hint_entry_key(key));
  if (!e) return std::nullopt;
  // "<length>\n<compile key><log>"; anything else (a hint of an older layout) is a miss.
  const size_t nl = e->log.find('\n');
  size_t len = 0;
  const auto [end, ec] = std::from_chars(e->log.data(), e->log.data() + (nl == std::string::npos ? 0 : nl), len);
  if (nl == std::string::npos || nl == 0 || ec != std::errc() || end != e->log.data() + nl || len > e->log.size() - nl - 1) {
    log(LogChannel::Cache, "disk miss: a hint entry without a kernel's compile key");
    return std::nullopt;
  }
  DiskCacheHint h;
  h.compile_key = e->log.substr(nl + 1, len);
  h.log = e->log.substr(nl + 1 + len);
  h.cubin = std::move(e->cubin);
  return h;
}

bool disk_cache_has_hint(const std::string& key) { return disk_cache_load_hint(key).has_value(); }

bool disk_cache_store_hint(const std::string& key, const std::string& compile_key, const std::vector<char>& cubin,
                           const std::string& log_text) {
  return disk_cache_store(hint_entry_key(key), cubin, fmt::format("{}\n", compile_key.size()) + compile_key + log_text);
}

}  // namespace cufuse::detail
