// tests/test_disk_cache.cpp: the on-disk kernel cache without a GPU: hashes, the file
// format, hits after clear_memory_cache and in new processes (tests/programs/cache_probe),
// damaged files as misses that get rewritten, CUFUSE_CACHE=0, many processes and threads at
// once, and an unwritable directory that only warns.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <latch>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "compile/compiler.hpp"
#include "compile/disk_cache.hpp"
#include "compile/dump.hpp"
#include "compile/nvrtc.hpp"
#include "core/counters.hpp"
#include "cufuse/error.hpp"
#include "test_sandbox.hpp"

namespace fs = std::filesystem;
namespace d = cufuse::detail;

namespace {

using cufuse_test::Sandbox;
using cufuse_test::ScopedEnv;
using cufuse_test::TempDir;

std::string tiny_source(const std::string& name) {
  static std::atomic<int> n{0};
  return fmt::format(
      "// nonce {} {} {}\n"
      "extern \"C\" __global__ void {}(const float* a, float* o, int n) {{\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) o[i] = expf(a[i]) + 1.0f;\n"
      "}}\n",
      ::getpid(), n++, std::chrono::steady_clock::now().time_since_epoch().count(), name);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(s.data(), std::streamsize(s.size()));
}

// Files under `dir` (recursively) whose name ends with `suffix` ("" for all).
std::vector<fs::path> files_in(const fs::path& dir, const std::string& suffix = "") {
  std::vector<fs::path> out;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) {
      std::string n = e.path().filename().string();
      if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
        out.push_back(e.path());
    }
  return out;
}

std::string probe_path() { return std::string(CUFUSE_TEST_BINARY_DIR) + "/cache_probe"; }

// Runs cache_probe with CUFUSE_CACHE_DIR=dir; returns its exit status, stdout and stderr.
struct ProbeRun {
  int rc = -1;
  std::string out, err;
};
ProbeRun run_probe(const fs::path& cache_dir, const fs::path& scratch, const std::string& args) {
  static std::atomic<int> n{0};
  fs::path out = scratch / fmt::format("probe-{}.out", n.load()), err = scratch / fmt::format("probe-{}.err", n++);
  std::string cmd = fmt::format("env -u CUFUSE_CACHE -u CUFUSE_LOG -u CUFUSE_DUMP_KERNELS CUFUSE_CACHE_DIR='{}' '{}' {} >'{}' 2>'{}'",
                                cache_dir.string(), probe_path(), args, out.string(), err.string());
  int st = std::system(cmd.c_str());
  ProbeRun r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

int count_of(const std::string& hay, const std::string& needle) {
  int c = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++c;
  return c;
}

}  // namespace

TEST_CASE("disk cache: hash128 is MurmurHash3 x64 128 and checksums differ by content") {
  auto h = d::hash128("The quick brown fox jumps over the lazy dog");
  CHECK(h.lo == 0xe34bbc7bbc071b6cULL);
  CHECK(h.hi == 0x7a433ca9c49a9347ULL);
  CHECK(d::hash128("").lo == 0);
  CHECK(d::hash128("").hex() == std::string(32, '0'));
  CHECK(d::hash128("a").hex().size() == 32);
  // Every tail length hashes differently.
  std::string s = "0123456789abcdefghijklmnopqrstuv";
  for (size_t len = 1; len < s.size(); ++len)
    CHECK_FALSE(d::hash128(s.substr(0, len)) == d::hash128(s.substr(0, len + 1)));
  std::string a = "cubin bytes", b = "cubin bytez";
  CHECK(d::checksum64(a.data(), a.size()) != d::checksum64(b.data(), b.size()));
}

TEST_CASE("disk cache: settings come from the environment") {
  ScopedEnv dir("CUFUSE_CACHE_DIR", std::nullopt);
  ScopedEnv onoff("CUFUSE_CACHE", std::nullopt);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/some/xdg");
    d::reset_disk_cache_settings();
    auto s = d::disk_cache_settings();
    CHECK(s.enabled);
    CHECK(s.dir == fs::path("/some/xdg/cufuse"));
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
    ScopedEnv home("HOME", "/home/someone");
    d::reset_disk_cache_settings();
    CHECK(d::disk_cache_settings().dir == fs::path("/home/someone/.cache/cufuse"));
  }
  {
    ScopedEnv dir2("CUFUSE_CACHE_DIR", "/explicit/dir");
    ScopedEnv off("CUFUSE_CACHE", "0");
    d::reset_disk_cache_settings();
    auto s = d::disk_cache_settings();
    CHECK_FALSE(s.enabled);
    CHECK(s.why_off.find("CUFUSE_CACHE") != std::string::npos);
    CHECK(s.dir == fs::path("/explicit/dir"));
  }
  d::reset_disk_cache_settings();
}

TEST_CASE("disk cache: store and load round trip; another key is a miss") {
  Sandbox sb;
  std::vector<char> cubin = {'\x7f', 'E', 'L', 'F', '\0', '\1', '\2', '\xff'};
  std::string key = "arch 90\nsource 3\nabc", log = "ptxas info    : Used 8 registers";
  CHECK_FALSE(d::disk_cache_load(key));
  CHECK(d::disk_cache_store(key, cubin, log));
  auto e = d::disk_cache_load(key);
  REQUIRE(e);
  CHECK(e->cubin == cubin);
  CHECK(e->log == log);
  CHECK_FALSE(d::disk_cache_load(key + " "));
  auto file = d::disk_cache_file(sb.dir.path, key);
  CHECK(fs::exists(file));
  CHECK(file.filename().string().size() == 32 + std::string(".kernel").size());
  CHECK(fs::file_size(file) == d::disk_format::header_bytes + d::disk_cache_salted_key(key).size() + log.size() +
                                   cubin.size());
  // The salt names both versions.
  CHECK(d::disk_cache_salted_key(key).find("nvrtc " + d::nvrtc::version()) != std::string::npos);
  CHECK(d::disk_cache_salted_key(key).find(std::string("cufuse ")) != std::string::npos);
}

TEST_CASE("disk cache: a kernel is a disk hit after clear_memory_cache") {
  Sandbox sb;
  std::string src = tiny_source("disk_k");
  auto a = d::compile_kernel(src, "disk_k", 90);
  CHECK_FALSE(a->from_disk);
  auto files = files_in(sb.dir.path);
  REQUIRE(files.size() == 1);  // one file, no temp left behind
  CHECK(files[0] == d::disk_cache_file(sb.dir.path, d::compile_key(src, "disk_k", 90)));

  d::clear_memory_cache();
  auto hits0 = d::counters().disk_cache_hits.load();
  auto calls0 = d::nvrtc::compile_calls();
  auto b = d::compile_kernel(src, "disk_k", 90);
  CHECK(b.get() != a.get());
  CHECK(b->from_disk);
  CHECK(b->compile_ms == 0);
  CHECK(b->cubin == a->cubin);
  CHECK(b->log == a->log);
  CHECK(b->registers == a->registers);
  CHECK(b->registers > 0);
  CHECK(d::counters().disk_cache_hits.load() == hits0 + 1);
  CHECK(d::nvrtc::compile_calls() == calls0);
  // And then a memory hit.
  CHECK(d::compile_kernel(src, "disk_k", 90).get() == b.get());
}

TEST_CASE("disk cache: a new process hits what an earlier process wrote") {
  TempDir cache, scratch;
  auto first = run_probe(cache.path, scratch.path, "11");
  REQUIRE_MESSAGE(first.rc == 0, first.err);
  CHECK(first.out.find("disk_hit=0 compiled=1") != std::string::npos);
  auto second = run_probe(cache.path, scratch.path, "11");
  REQUIRE_MESSAGE(second.rc == 0, second.err);
  CHECK(second.out.find("disk_hit=1 compiled=0") != std::string::npos);
  // Same file, same registers, and nothing on stderr.
  CHECK(first.out.substr(first.out.find("registers")) == second.out.substr(second.out.find("registers")));
  CHECK(first.err.empty());
  CHECK(second.err.empty());
}

TEST_CASE("disk cache: a damaged or foreign file is a miss and is rewritten") {
  Sandbox sb;
  std::string src = tiny_source("damaged_k");
  const std::string key = d::compile_key(src, "damaged_k", 90);
  const fs::path file = d::disk_cache_file(sb.dir.path, key);
  auto good = d::compile_kernel(src, "damaged_k", 90);
  const std::string valid = read_file(file);
  REQUIRE(valid.size() > d::disk_format::header_bytes + good->cubin.size());

  // Another key's valid file, for the "stored key differs" case.
  std::string other_src = tiny_source("other_k");
  REQUIRE(d::disk_cache_store(d::compile_key(other_src, "other_k", 90), good->cubin, good->log));
  const std::string other_file = read_file(d::disk_cache_file(sb.dir.path, d::compile_key(other_src, "other_k", 90)));

  std::string bad;
  bool make_directory = false;
  SUBCASE("truncated in the cubin") { bad = valid.substr(0, valid.size() - 100); }
  SUBCASE("truncated in the header") { bad = valid.substr(0, 20); }
  SUBCASE("empty") { bad = ""; }
  SUBCASE("a flipped byte in the cubin") {
    bad = valid;
    bad[bad.size() - good->cubin.size() / 2] ^= 0x40;
  }
  SUBCASE("a flipped byte in the stored key") {
    bad = valid;
    bad[d::disk_format::header_bytes + 3] ^= 0x01;
  }
  SUBCASE("a flipped byte in the log") {
    bad = valid;
    bad[valid.size() - good->cubin.size() - 5] ^= 0x01;
  }
  SUBCASE("a huge length in the header") {
    bad = valid;
    for (int i = 0; i < 8; ++i) bad[32 + i] = '\xff';  // cubin_len
  }
  SUBCASE("extra bytes at the end") { bad = valid + "tail"; }
  SUBCASE("another format version") {
    bad = valid;
    bad[8] ^= 0x7f;
  }
  SUBCASE("a foreign file under the right name") { bad = "#!/bin/sh\necho this is not a kernel\n"; }
  SUBCASE("random garbage as long as the real file") {
    bad.resize(valid.size());
    uint64_t x = 88172645463325252ULL;
    for (auto& c : bad) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = char(x);
    }
  }
  SUBCASE("a file whose stored key differs") { bad = other_file; }
  SUBCASE("a directory in its place") { make_directory = true; }

  fs::remove(file);
  if (make_directory) fs::create_directories(file / "inside");
  else write_file(file, bad);

  d::clear_memory_cache();
  auto hits0 = d::counters().disk_cache_hits.load();
  auto calls0 = d::nvrtc::compile_calls();
  d::CompiledKernelPtr k;
  CHECK_NOTHROW(k = d::compile_kernel(src, "damaged_k", 90));
  REQUIRE(k);
  CHECK_FALSE(k->from_disk);
  CHECK(k->cubin == good->cubin);
  CHECK(d::counters().disk_cache_hits.load() == hits0);
  CHECK(d::nvrtc::compile_calls() == calls0 + 1);
  if (make_directory) {
    CHECK(fs::is_directory(file));  // cannot be replaced by rename; still no crash
  } else {
    // Rewritten: valid again.
    auto e = d::disk_cache_load(key);
    REQUIRE(e);
    CHECK(e->cubin == good->cubin);
  }
  for (auto& f : files_in(sb.dir.path)) CHECK(f.filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("disk cache: CUFUSE_CACHE=0 writes nothing and reads nothing") {
  Sandbox sb;
  std::string src = tiny_source("nocache_k");
  {
    // A valid file is there, but the cache is off: it must not be read.
    d::compile_kernel(src, "nocache_k", 90);
    REQUIRE(files_in(sb.dir.path).size() == 1);
  }
  ScopedEnv off("CUFUSE_CACHE", "0");
  d::reset_disk_cache_settings();
  d::clear_memory_cache();
  fs::remove_all(sb.dir.path);
  fs::create_directories(sb.dir.path);
  auto calls0 = d::nvrtc::compile_calls();
  auto a = d::compile_kernel(src, "nocache_k", 90);
  auto b = d::compile_kernel(tiny_source("nocache2_k"), "nocache2_k", 90);
  CHECK_FALSE(a->from_disk);
  CHECK(d::nvrtc::compile_calls() == calls0 + 2);
  CHECK(files_in(sb.dir.path).empty());
  CHECK_FALSE(d::disk_cache_store("k", {'x'}, ""));
  CHECK(files_in(sb.dir.path).empty());
  // A failing source is saved outside the (off) cache dir.
  try {
    d::compile_kernel("this is not CUDA " + tiny_source("x"), "nocache_bad", 90);
    FAIL("expected a CompileError");
  } catch (const cufuse::CompileError& e) {
    CHECK(fs::exists(e.source_path()));
    CHECK(e.source_path().find(sb.dir.path.string()) == std::string::npos);
    std::error_code ec;
    fs::remove(e.source_path(), ec);
  }
  CHECK(files_in(sb.dir.path).empty());
}

TEST_CASE("disk cache: 6 processes started at once on an empty dir all succeed") {
  TempDir cache, scratch;
  const int n = 6;
  std::string cmd;
  for (int i = 0; i < n; ++i)
    cmd += fmt::format("(env -u CUFUSE_CACHE -u CUFUSE_LOG CUFUSE_CACHE_DIR='{}' '{}' 21 2 >'{}/out.{}' 2>'{}/err.{}'; "
                       "echo $? >'{}/rc.{}') & ",
                       cache.path.string(), probe_path(), scratch.path.string(), i, scratch.path.string(), i,
                       scratch.path.string(), i);
  cmd += "wait";
  REQUIRE(std::system(cmd.c_str()) == 0);
  for (int i = 0; i < n; ++i) {
    CHECK(read_file(scratch.path / fmt::format("rc.{}", i)) == "0\n");
    std::string out = read_file(scratch.path / fmt::format("out.{}", i));
    CHECK(count_of(out, "probe ") == 2);
    CHECK(read_file(scratch.path / fmt::format("err.{}", i)).empty());
  }
  // Exactly the two kernels' files, no temp files, and each is valid: a 7th process hits both.
  auto files = files_in(cache.path);
  CHECK(files.size() == 2);
  for (auto& f : files) CHECK(f.extension() == ".kernel");
  auto last = run_probe(cache.path, scratch.path, "21 2");
  REQUIRE_MESSAGE(last.rc == 0, last.err);
  CHECK(count_of(last.out, "disk_hit=1 compiled=0") == 2);
}

TEST_CASE("disk cache: threads storing and loading one key never see a partial file") {
  Sandbox sb;
  std::vector<char> cubin(200000);
  for (size_t i = 0; i < cubin.size(); ++i) cubin[i] = char(i * 7);
  const std::string key = "threads key", log = "log";
  const int n = 6;
  std::atomic<int> bad{0}, hits{0};
  std::latch start(n);
  std::vector<std::thread> ts;
  for (int t = 0; t < n; ++t)
    ts.emplace_back([&] {
      start.arrive_and_wait();
      for (int i = 0; i < 20; ++i) {
        if (!d::disk_cache_store(key, cubin, log)) ++bad;
        auto e = d::disk_cache_load(key);
        if (e) {
          ++hits;
          if (e->cubin != cubin || e->log != log) ++bad;
        }
      }
    });
  for (auto& t : ts) t.join();
  CHECK(bad.load() == 0);
  CHECK(hits.load() == n * 20);  // each thread's own store precedes its load
  CHECK(files_in(sb.dir.path).size() == 1);
}

TEST_CASE("disk cache: an unwritable cache dir only warns, once") {
  TempDir scratch;
  write_file(scratch.path / "a-file", "not a directory");
  fs::path unwritable = scratch.path / "a-file" / "cache";  // ENOTDIR, even for root
  auto r = run_probe(unwritable, scratch.path, "31 3");
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  CHECK(count_of(r.out, "disk_hit=0 compiled=1") == 3);
  CHECK(count_of(r.err, "cufuse: warning") == 1);
  CHECK(r.err.find(unwritable.string()) != std::string::npos);

  // In this process too: no exception, the kernel is compiled and used.
  ScopedEnv dir("CUFUSE_CACHE_DIR", unwritable.string());
  ScopedEnv on("CUFUSE_CACHE", std::nullopt);
  d::reset_disk_cache_settings();
  d::clear_memory_cache();
  d::CompiledKernelPtr k;
  CHECK_NOTHROW(k = d::compile_kernel(tiny_source("unwritable_k"), "unwritable_k", 90));
  CHECK(k);
  CHECK_FALSE(d::disk_cache_store("k", {'x'}, ""));
  d::reset_disk_cache_settings();
  d::clear_memory_cache();
}
