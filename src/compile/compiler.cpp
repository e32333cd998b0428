// src/compile/compiler.cpp: NVRTC to CUBIN behind the two kernel caches (see compiler.hpp).
//
// Memory cache: entries bucketed by a hash of (arch, extra options, name, source) and
// matched by comparing every field, so a hash collision can never return the wrong kernel.
// The first thread to ask for a key inserts a pending entry and builds it (disk cache, else
// NVRTC); threads asking for the same key meanwhile wait on its shared_future. A failure
// reaches every waiter and the entry is dropped, so a later call tries again. A hit is one
// hash of the source, one lock, one comparison and a shared_ptr copy.
#include "compile/compiler.hpp"
#include "compile/interp_images.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "compile/disk_cache.hpp"
#include "compile/dump.hpp"
#include "compile/nvrtc.hpp"
#include "core/counters.hpp"
#include "cufuse/error.hpp"
#include "cufuse/stream.hpp"
#include "core/counters.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/log.hpp"

namespace cufuse::detail {

namespace fs = std::filesystem;

// ------------------------------------------------------------------ options and keys

namespace {

// --include-path options for the toolkit headers a kernel may #include (cuda_fp16.h,
// cuda_bf16.h): the build's CUDA include dirs when they exist here, else $CUDA_HOME's.
const std::vector<std::string>& include_options() {
  static const std::vector<std::string> opts = [] {
    std::vector<std::string> dirs, out;
#ifdef CUFUSE_CUDA_INCLUDE_DIR
    std::string_view list = CUFUSE_CUDA_INCLUDE_DIR;  // CMake list: ';'-separated
    while (!list.empty()) {
      size_t semi = list.find(';');
      dirs.emplace_back(list.substr(0, semi));
      list = semi == std::string_view::npos ? std::string_view() : list.substr(semi + 1);
    }
#endif
    for (const auto* env : {&settings().cuda_home, &settings().cuda_path})
      if (*env && !(*env)->empty()) dirs.push_back(**env + "/include");
    std::error_code ec;
    for (const auto& d : dirs)
      if (!d.empty() && fs::exists(fs::path(d) / "cuda_fp16.h", ec)) {
        out.push_back("--include-path=" + d);
        break;  // one toolkit's headers, never a mix
      }
    return out;
  }();
  return opts;
}

std::string safe_file_stem(const std::string& name) {
  std::string s = name.substr(0, 120);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  return s.empty() ? std::string("kernel") : s;
}

// Parses the decimal number that ends just before `pos` in `s` (skipping spaces); -1 if none.
int number_before(std::string_view s, size_t pos) {
  while (pos > 0 && s[pos - 1] == ' ') --pos;
  size_t end = pos;
  while (pos > 0 && std::isdigit(static_cast<unsigned char>(s[pos - 1]))) --pos;
  if (pos == end) return -1;
  return std::atoi(std::string(s.substr(pos, end - pos)).c_str());
}

int number_after(std::string_view s, size_t pos) {
  while (pos < s.size() && s[pos] == ' ') ++pos;
  size_t start = pos;
  while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
  if (pos == start) return -1;
  return std::atoi(std::string(s.substr(start, pos - start)).c_str());
}

}  // namespace

std::vector<std::string> base_compile_options(int arch) {
  std::vector<std::string> o = {
      fmt::format("-arch=sm_{}", arch),  // a real arch: NVRTC then emits a CUBIN
      "-std=c++17",
      "--fmad=false",      // op-by-op rounding, as NumPy does
      "-default-device",   // helpers need no __device__
      "--ptxas-options=-v",  // registers, spills and smem into the log
      "-minimal",          // ~4 ms less front end per kernel; math functions still there
  };
  for (const auto& i : include_options()) o.push_back(i);
  return o;
}

std::string compile_key(const std::string& source, const std::string& name, int arch,
                        const std::vector<std::string>& extra_options) {
  // Length-prefixed fields: no option, name or source can make two keys spell alike.
  std::string k = fmt::format("arch {}\n", arch);
  for (const auto& o : base_compile_options(arch)) k += fmt::format("option {} {}\n", o.size(), o);
  for (const auto& o : extra_options) k += fmt::format("option {} {}\n", o.size(), o);
  k += fmt::format("name {} {}\nsource {}\n", name.size(), name, source.size());
  k += source;
  return k;
}

std::string compile_key_name(std::string_view key) {
  size_t p = key.find('\n');
  if (p == std::string_view::npos || key.substr(0, 5) != "arch ") return {};
  ++p;
  // "<tag><length> <text>\n" at p: its text, p moved past it.
  auto field = [&](std::string_view tag, std::string_view& text) {
    if (key.substr(p, tag.size()) != tag) return false;
    size_t q = p + tag.size(), len = 0;
    const size_t digits = q;
    while (q < key.size() && std::isdigit(static_cast<unsigned char>(key[q])) && len <= key.size()) len = len * 10 + (key[q++] - '0');
    if (q == digits || q >= key.size() || key[q] != ' ' || len > key.size() - q - 1) return false;
    ++q;
    if (q + len >= key.size() || key[q + len] != '\n') return false;
    text = key.substr(q, len);
    p = q + len + 1;
    return true;
  };
  std::string_view text;
  while (field("option ", text)) {}
  return field("name ", text) ? std::string(text) : std::string();
}

// ------------------------------------------------------------------ ptxas info

PtxasInfo parse_ptxas_info(const std::string& log, const std::string& name) {
  std::string_view all(log);
  const std::string_view entry_marker = "Compiling entry function '";
  // The section of `name`: from its "Compiling entry function" line to the next one.
  size_t begin = all.find(fmt::format("{}{}'", entry_marker, name));
  if (begin == std::string_view::npos) begin = all.find(entry_marker);
  if (begin == std::string_view::npos) begin = 0;
  size_t end = all.find(entry_marker, begin + 1);
  std::string_view sec = all.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);

  PtxasInfo info;
  // The stack line that follows "Function properties for <name>", else the section's first.
  size_t props = sec.find(fmt::format("Function properties for {}\n", name));
  size_t stack = sec.find(" bytes stack frame", props == std::string_view::npos ? 0 : props);
  if (stack != std::string_view::npos) {
    size_t eol = sec.find('\n', stack);
    std::string_view line = sec.substr(0, eol == std::string_view::npos ? sec.size() : eol);
    info.stack_bytes = std::max(0, number_before(line, stack));
    if (size_t p = line.find(" bytes spill stores", stack); p != std::string_view::npos)
      info.spill_stores = std::max(0, number_before(line, p));
    if (size_t p = line.find(" bytes spill loads", stack); p != std::string_view::npos)
      info.spill_loads = std::max(0, number_before(line, p));
  }
  if (size_t used = sec.find("Used "); used != std::string_view::npos) {
    size_t eol = sec.find('\n', used);
    std::string_view line = sec.substr(0, eol == std::string_view::npos ? sec.size() : eol);
    if (line.find(" registers", used) != std::string_view::npos) info.registers = number_after(line, used + 5);
    if (size_t p = line.find(" bytes smem", used); p != std::string_view::npos)
      info.shared_bytes = std::max(0, number_before(line, p));
  }
  return info;
}

// ------------------------------------------------------------------ arch

int default_arch() {
  if (int a = settings().arch) return a;  // CUFUSE_ARCH (runtime/env.cpp; a bad value warns)
  if (Device::count() > 0) return device_props(current_device()).cc;
  return 90;
}

// ------------------------------------------------------------------ loading

void* CompiledKernel::kernel_for(int device) const {
  if (device < 0 || device >= static_cast<int>(loaded_.size()))
    throw ValueError(fmt::format("kernel '{}': device id {} is out of range (0..{})", name, device,
                                 loaded_.size() - 1));
  std::atomic<void*>& slot = loaded_[static_cast<size_t>(device)];
  if (void* k = slot.load(std::memory_order_acquire)) [[likely]]
    return k;  // every launch after the first: no lock
  std::lock_guard<std::mutex> lk(mu_);
  void* k = slot.load(std::memory_order_relaxed);
  if (!k) {
    int cc = device_props(device).cc;
    if (!cubin_runs_on(arch, cc))
      throw NotSupportedError(fmt::format(
          "kernel '{}' was compiled for sm_{} but device {} is sm_{}; compile for the device's arch "
          "(unset CUFUSE_ARCH, or set it to {})", name, arch, device, cc, cc));
    k = load_kernel(cubin, name, device);
    slot.store(k, std::memory_order_release);
    detail::log(LogChannel::Launch, "loaded kernel {} (sm_{}) on device {}", name, arch, device);
  }
  return k;
}

bool CompiledKernel::adopt_loaded(int device, void* kernel) const {
  if (device < 0 || device >= static_cast<int>(loaded_.size()) || kernel == nullptr) return false;
  std::lock_guard<std::mutex> lk(mu_);
  std::atomic<void*>& slot = loaded_[static_cast<size_t>(device)];
  if (slot.load(std::memory_order_relaxed)) return false;
  slot.store(kernel, std::memory_order_release);
  return true;
}

// ------------------------------------------------------------------ the memory cache

namespace {

struct MemoryCacheEntry {
  int arch = 0;
  std::vector<std::string> extra;
  std::string name, source;
  CompiledKernelPtr ready;  // set (under the cache lock) once built
  std::shared_future<CompiledKernelPtr> pending;
};

// Compiled kernels by full key: process state (runtime/context.hpp), never destroyed (safe
// from other statics' destructors).
struct MemoryCache {
  static constexpr StateSlot kSlot = StateSlot::KernelCache;
  std::mutex mu;
  std::unordered_multimap<size_t, std::shared_ptr<MemoryCacheEntry>> map;
  // check_kernel_source's sources that compiled to PTX, by key_hash (source, name and arch compared).
  std::unordered_multimap<size_t, std::shared_ptr<MemoryCacheEntry>> checked;
};

MemoryCache& memory_cache() { return runtime().state<MemoryCache>(); }

inline size_t mix(size_t h, size_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

size_t key_hash(const std::string& source, const std::string& name, int arch,
                const std::vector<std::string>& extra) {
  std::hash<std::string_view> hs;
  size_t h = mix(static_cast<size_t>(hash128(source).lo), hs(name));  // murmur3: 16 bytes a step
  h = mix(h, static_cast<size_t>(arch));
  for (const auto& o : extra) h = mix(h, hs(o));
  return h;
}

bool matches(const MemoryCacheEntry& e, const std::string& source, const std::string& name, int arch,
             const std::vector<std::string>& extra) {
  return e.arch == arch && e.name == name && e.extra == extra && e.source == source;
}

std::string save_failed_source(const std::string& source, const std::string& name, const std::string& key,
                               std::string* why_not) {
  auto settings = disk_cache_settings();
  std::vector<fs::path> dirs;
  if (settings.enabled) dirs.push_back(settings.dir / "cufuse-failed");
  std::error_code ec;
  fs::path tmpdir = fs::temp_directory_path(ec);
  dirs.push_back((ec ? fs::path("/tmp") : tmpdir) / "cufuse-failed");
  std::string file = fmt::format("{}-{}.cu", safe_file_stem(name), hash128(key).hex().substr(0, 16));
  for (const auto& dir : dirs) {
    fs::create_directories(dir, ec);
    if (ec) {
      *why_not = fmt::format("{}: {}", dir.string(), ec.message());
      continue;
    }
    fs::path path = dir / file, tmp = dir / fmt::format(".{}.tmp-{}-{:x}", file, ::getpid(),
                                                       std::hash<std::thread::id>{}(std::this_thread::get_id()));
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(source.data(), static_cast<std::streamsize>(source.size()));
    out.close();
    if (out) {
      fs::rename(tmp, path, ec);
      if (!ec) return path.string();
    }
    *why_not = fmt::format("cannot write {}", path.string());
    fs::remove(tmp, ec);
  }
  return {};
}

[[noreturn]] void throw_compile_error(const std::string& source, const std::string& name, int arch,
                                      const std::vector<std::string>& options, const std::string& key,
                                      const nvrtc::Output& out) {
  std::string why_not;
  std::string path = save_failed_source(source, name, key, &why_not);
  std::string opts;
  for (const auto& o : options) opts += (opts.empty() ? "" : " ") + o;
  std::string what = fmt::format(
      "NVRTC could not compile kernel '{}' for sm_{} ({}).\n{}\noptions: {}\nNVRTC log:\n{}", name, arch,
      out.status_text,
      path.empty() ? fmt::format("The source could not be saved ({}).", why_not)
                   : fmt::format("The source is saved at {}", path),
      opts, out.log.empty() ? std::string("(empty)") : out.log);
  log(LogChannel::Compile, "FAILED {} for sm_{}: {}", name, arch, out.status_text);
  throw CompileError(what, out.log, path);
}

void set_ptxas_info(CompiledKernel& k) {
  const PtxasInfo info = parse_ptxas_info(k.log, k.name);
  k.registers = info.registers;
  k.spill_stores = info.spill_stores;
  k.spill_loads = info.spill_loads;
  k.stack_bytes = info.stack_bytes;
  k.shared_bytes = info.shared_bytes;
}

// A kernel read from the disk cache (counted).
std::shared_ptr<CompiledKernel> from_disk(const std::string& source, const std::string& name, int arch,
                                          std::vector<char> cubin, std::string log_text) {
  auto k = std::make_shared<CompiledKernel>();
  k->name = name;
  k->source = source;
  k->arch = arch;
  k->cubin = std::move(cubin);
  k->log = std::move(log_text);
  k->from_disk = true;
  set_ptxas_info(*k);
  counters().disk_cache_hits.fetch_add(1, std::memory_order_relaxed);
  return k;
}

// The new kernel for a key nobody has built in this process: from disk, else from NVRTC.
std::shared_ptr<CompiledKernel> build(const std::string& source, const std::string& name, int arch,
                                      const std::vector<std::string>& extra, const std::string& key,
                                      bool* compiled_now) {
  auto hit = disk_cache_load(key);
  *compiled_now = !hit;
  if (hit) return from_disk(source, name, arch, std::move(hit->cubin), std::move(hit->log));
  auto options = base_compile_options(arch);
  options.insert(options.end(), extra.begin(), extra.end());
  auto out = nvrtc::compile_to_cubin(source, name, options);
  if (!out.ok) throw_compile_error(source, name, arch, options, key, out);
  auto k = std::make_shared<CompiledKernel>();
  k->name = name;
  k->source = source;
  k->arch = arch;
  k->cubin = std::move(out.cubin);
  k->log = std::move(out.log);
  k->compile_ms = out.ms;
  counters().kernels_compiled.fetch_add(1, std::memory_order_relaxed);
  counters().compile_us.fetch_add(static_cast<uint64_t>(std::max(0.0, out.ms) * 1000.0), std::memory_order_relaxed);
  set_ptxas_info(*k);
  return k;
}

std::string describe(const CompiledKernel& k) {
  return fmt::format("{} sm_{}: {}; {} registers, {} B stack, {} B spill stores, {} B spill loads, "
                     "{} B smem, {} B cubin",
                     k.name, k.arch,
                     k.from_disk ? std::string("loaded from the disk cache")
                                 : fmt::format("compiled in {:.1f} ms", k.compile_ms),
                     k.registers, k.stack_bytes, k.spill_stores, k.spill_loads, k.shared_bytes, k.cubin.size());
}

// After the kernel is published: write it to disk (if compiled now) and to the dump dir.
// Never throws: both are best effort.
void after_publish(const CompiledKernel& k, const std::vector<std::string>& extra, const std::string& key,
                   bool compiled_now) noexcept {
  try {
    log(compiled_now ? LogChannel::Compile : LogChannel::Cache, "{}", describe(k));
    if (compiled_now) disk_cache_store(key, k.cubin, k.log);
    if (dump_dir()) {
      std::string stem = safe_file_stem(k.name);
      std::string opts;
      for (const auto& o : base_compile_options(k.arch)) opts += " " + o;
      for (const auto& o : extra) opts += " " + o;
      dump_file(stem + ".cu", k.source);
      dump_file(stem + ".ptxas.txt", fmt::format("{}\noptions:{}\n\n{}\n", describe(k), opts, k.log));
    }
  } catch (...) {
  }
}

}  // namespace

CompiledKernelPtr compile_kernel(const std::string& source, const std::string& name, int arch,
                                 const std::vector<std::string>& extra_options) {
  auto& cache = memory_cache();
  const size_t h = key_hash(source, name, arch, extra_options);
  std::shared_future<CompiledKernelPtr> wait_on;
  std::shared_ptr<MemoryCacheEntry> mine;
  std::promise<CompiledKernelPtr> promise;
  {
    std::lock_guard<std::mutex> lk(cache.mu);
    auto [it, end] = cache.map.equal_range(h);
    for (; it != end; ++it) {
      const MemoryCacheEntry& e = *it->second;
      if (!matches(e, source, name, arch, extra_options)) continue;
      counters().memory_cache_hits.fetch_add(1, std::memory_order_relaxed);
      if (e.ready) return e.ready;
      wait_on = e.pending;
      break;
    }
    if (!wait_on.valid()) {
      mine = std::make_shared<MemoryCacheEntry>();
      mine->arch = arch;
      mine->extra = extra_options;
      mine->name = name;
      mine->source = source;
      mine->pending = promise.get_future().share();
      cache.map.emplace(h, mine);
    }
  }
  if (wait_on.valid()) {
    log(LogChannel::Cache, "{} sm_{}: waiting for the thread compiling it", name, arch);
    return wait_on.get();  // the builder's kernel, or its exception
  }

  std::string key;
  bool compiled_now = false;
  std::shared_ptr<CompiledKernel> k;
  try {
    key = compile_key(source, name, arch, extra_options);
    k = build(source, name, arch, extra_options, key, &compiled_now);
  } catch (...) {
    {
      std::lock_guard<std::mutex> lk(cache.mu);
      auto [it, end] = cache.map.equal_range(h);
      for (; it != end; ++it)
        if (it->second == mine) {
          cache.map.erase(it);
          break;
        }
    }
    promise.set_exception(std::current_exception());  // every waiter gets it; nothing cached
    throw;
  }
  CompiledKernelPtr result = k;
  {
    std::lock_guard<std::mutex> lk(cache.mu);
    mine->ready = result;
  }
  promise.set_value(result);
  after_publish(*k, extra_options, key, compiled_now);
  return result;
}

namespace {
// The memory cache's entry of (source, name, arch) without extra options, if any (under its lock).
std::shared_ptr<MemoryCacheEntry> find_entry(MemoryCache& cache, size_t h, const std::string& source,
                                             const std::string& name, int arch) {
  auto [it, end] = cache.map.equal_range(h);
  for (; it != end; ++it)
    if (matches(*it->second, source, name, arch, {})) return it->second;
  return nullptr;
}
}  // namespace

CompiledKernelPtr adopt_disk_kernel(const std::string& source, const std::string& name, int arch,
                                    std::vector<char> cubin, std::string log_text, int device, void* loaded,
                                    bool* used) {
  auto& cache = memory_cache();
  const size_t h = key_hash(source, name, arch, {});
  std::shared_ptr<CompiledKernel> k = from_disk(source, name, arch, std::move(cubin), std::move(log_text));
  // Before it is published: whoever finds it in the memory cache finds it loaded.
  const bool mine = k->adopt_loaded(device, loaded);
  if (used) *used = mine;
  {
    std::lock_guard<std::mutex> lk(cache.mu);
    if (auto e = find_entry(cache, h, source, name, arch)) {
      // Built meanwhile: that one (loaded once). Being built: this one, not entered (the
      // builder publishes its own to its waiters; both are the same CUBIN's kernel).
      if (e->ready) {
        if (used) *used = false;
        return e->ready;
      }
    } else {
      auto mine = std::make_shared<MemoryCacheEntry>();
      mine->arch = arch;
      mine->name = name;
      mine->source = source;
      mine->ready = k;
      std::promise<CompiledKernelPtr> done;
      done.set_value(k);
      mine->pending = done.get_future().share();
      cache.map.emplace(h, std::move(mine));
    }
  }
  log(LogChannel::Cache, "{}", describe(*k));
  return k;
}

CompiledKernelPtr find_compiled_kernel(const std::string& source, const std::string& name, int arch) {
  auto& cache = memory_cache();
  {
    std::lock_guard<std::mutex> lk(cache.mu);
    if (auto e = find_entry(cache, key_hash(source, name, arch, {}), source, name, arch)) return e->ready;  // null while being built
  }
  std::optional<DiskCacheEntry> hit = disk_cache_load(compile_key(source, name, arch));
  if (!hit) return nullptr;
  return adopt_disk_kernel(source, name, arch, std::move(hit->cubin), std::move(hit->log));  // no NVRTC
}

void check_kernel_source(const std::string& source, const std::string& name, int arch) {
  auto& cache = memory_cache();
  const std::vector<std::string> kPtx = {"<ptx>"};  // (in the hash only: not an NVRTC option)
  const size_t h = key_hash(source, name, arch, kPtx);
  const auto checked = [&] {  // under cache.mu
    auto [it, end] = cache.checked.equal_range(h);
    for (; it != end; ++it)
      if (matches(*it->second, source, name, arch, {})) return true;
    return false;
  };
  {
    std::lock_guard<std::mutex> lk(cache.mu);
    if (checked()) return;
  }
  // The compile options but a virtual arch and no ptxas report: NVRTC stops at PTX.
  std::vector<std::string> options;
  for (const auto& o : base_compile_options(arch)) {
    if (o.rfind("-arch=", 0) == 0) options.push_back(fmt::format("-arch=compute_{}", arch));
    else if (o.rfind("--ptxas-options", 0) != 0) options.push_back(o);
  }
  const nvrtc::Output out = nvrtc::compile_to_ptx(source, name, options);
  if (!out.ok) throw_compile_error(source, name, arch, options, compile_key(source, name, arch, kPtx), out);
  log(LogChannel::Compile, "checked {} for compute_{} (PTX, no CUBIN) in {:.1f} ms", name, arch, out.ms);
  std::lock_guard<std::mutex> lk(cache.mu);  // (two threads checking one source both compile it: harmless)
  if (checked()) return;
  auto e = std::make_shared<MemoryCacheEntry>();
  e->arch = arch;
  e->name = name;
  e->source = source;
  cache.checked.emplace(h, std::move(e));
}

void clear_memory_cache() {
  auto& cache = memory_cache();
  std::lock_guard<std::mutex> lk(cache.mu);
  // Pending entries keep their promise: their builder still publishes to its waiters.
  cache.map.clear();
  cache.checked.clear();
}

}  // namespace cufuse::detail
