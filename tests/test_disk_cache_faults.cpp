// tests/test_disk_cache_faults.cpp: the disk cache under faults, with real processes
// (tests/programs/cache_probe; NVRTC compiles here without a GPU, and the cache stores the
// compiled CUBIN): 8 processes sharing one empty directory, kill -9 at the write and at the
// rename (the probe's fault hook ends itself there), stale temp files, a read-only directory
// and a full filesystem (a small tmpfs mounted in a user namespace where the machine allows
// it, else ENOSPC faked by the hook: the test says which), and non-regular files in an
// entry's place (a FIFO must not hang the load, a dangling link, a directory). Every case
// ends with the cache reused: later processes hit, and what they load is the CUBIN a fresh
// compile makes (same checksum). test_disk_cache.cpp holds the in-process cases.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compile/disk_cache.hpp"
#include "test_sandbox.hpp"

namespace fs = std::filesystem;
namespace d = cufuse::detail;

namespace {

using cufuse_test::Sandbox;
using cufuse_test::TempDir;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string probe_path() { return std::string(CUFUSE_TEST_BINARY_DIR) + "/cache_probe"; }

struct Run {
  int rc = -1;      // exit status, or -signal
  std::string out, err;
};

// Runs `cmd` (a shell command line) with stdout and stderr to files under `scratch`.
Run shell(const std::string& cmd, const fs::path& scratch) {
  static std::atomic<int> n{0};
  const int k = n++;
  const fs::path out = scratch / fmt::format("run-{}.out", k), err = scratch / fmt::format("run-{}.err", k);
  const int st = std::system(fmt::format("{} >'{}' 2>'{}'", cmd, out.string(), err.string()).c_str());
  Run r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// The probe with the cache in `dir` (`prefix` wraps it: a timeout, an unshare).
std::string probe_cmd(const fs::path& dir, const std::string& args, const std::string& prefix = "") {
  return fmt::format("{} env -u CUFUSE_CACHE -u CUFUSE_LOG -u CUFUSE_DUMP_KERNELS CUFUSE_CACHE_DIR='{}' timeout -s KILL 120 '{}' {}",
                     prefix, dir.string(), probe_path(), args);
}
Run probe(const fs::path& dir, const fs::path& scratch, const std::string& args) {
  return shell(probe_cmd(dir, args), scratch);
}

// The probe killed by a signal: the shell reports 128 + signal for the last command.
int killed_signal(const Run& r) { return r.rc > 128 ? r.rc - 128 : 0; }

int count_of(const std::string& hay, const std::string& needle) {
  int c = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++c;
  return c;
}

// "file=<name>" -> "sum=<checksum>" for each line of a probe's output.
std::map<std::string, std::string> sums_by_file(const std::string& out) {
  std::map<std::string, std::string> m;
  static const std::regex line(R"(sum=([0-9a-f]+) file=(\S+))");
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) m[(*it)[2]] = (*it)[1];
  return m;
}

std::vector<fs::path> entries(const fs::path& dir, bool temps) {
  std::vector<fs::path> v;
  for (auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    const bool temp = n.find(".tmp-") != std::string::npos;
    if (temp == temps) v.push_back(e.path());
  }
  return v;
}

// What a fresh compile of variants [first, first + count) makes (cache off): the reference.
std::map<std::string, std::string> fresh_sums(const fs::path& scratch, int first, int count) {
  Run r = shell(fmt::format("env CUFUSE_CACHE=0 timeout -s KILL 120 '{}' {} {}", probe_path(), first, count), scratch);
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  return sums_by_file(r.out);
}

// How a small tmpfs can be mounted here for one command: as root in a private mount
// namespace, or as a mapped root in a user namespace; "" where neither works (the test then
// fakes the fault with the probe's hook and says so).
std::string mount_prefix() {
  static const std::string p = [] {
    for (std::string pre : {"unshare --mount", "unshare --user --map-root-user --mount"}) {
      TempDir t;
      const std::string cmd = fmt::format("{} sh -c 'mount -t tmpfs -o size=64k tmpfs \"{}\"' >/dev/null 2>&1", pre,
                                          t.path.string());
      if (std::system(cmd.c_str()) == 0) return pre;
    }
    return std::string();
  }();
  return p;
}

}  // namespace

TEST_CASE("disk cache faults: 8 processes at once on one empty directory, same and different kernels") {
  TempDir cache, scratch;
  const int n = 8;
  // Process i compiles variants 100+i .. 102+i: each kernel is shared by up to three
  // processes and compiled by them at the same time; 10 kernels in all.
  std::string cmd;
  for (int i = 0; i < n; ++i)
    cmd += fmt::format("({} >'{}/out.{}' 2>'{}/err.{}'; echo $? >'{}/rc.{}') & ", probe_cmd(cache.path, fmt::format("{} 3", 100 + i)),
                       scratch.path.string(), i, scratch.path.string(), i, scratch.path.string(), i);
  cmd += "wait";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const auto want = fresh_sums(scratch.path, 100, n + 2);
  REQUIRE(want.size() == size_t(n + 2));
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(slurp(scratch.path / fmt::format("rc.{}", i)) == "0\n");
    CHECK(slurp(scratch.path / fmt::format("err.{}", i)).empty());
    const auto got = sums_by_file(slurp(scratch.path / fmt::format("out.{}", i)));
    CHECK(got.size() == 3);
    for (const auto& [file, sum] : got) CHECK(want.at(file) == sum);
  }
  CHECK(entries(cache.path, false).size() == size_t(n + 2));
  CHECK(entries(cache.path, true).empty());
  // A ninth process loads every entry from disk, each the CUBIN a fresh compile makes.
  Run last = probe(cache.path, scratch.path, fmt::format("100 {}", n + 2));
  REQUIRE_MESSAGE(last.rc == 0, last.err);
  CHECK(count_of(last.out, "disk_hit=1 compiled=0") == n + 2);
  CHECK(sums_by_file(last.out) == want);
}

TEST_CASE("disk cache faults: kill -9 at the write and at the rename, then the cache is reused") {
  for (const char* fault : {"kill-at-write", "kill-at-rename"}) {
    CAPTURE(fault);
    TempDir cache, scratch;
    Run killed = probe(cache.path, scratch.path, fmt::format("300 1 {}", fault));
    CHECK(killed_signal(killed) == 9);
    CHECK(entries(cache.path, false).empty());       // no entry appeared
    const auto temps = entries(cache.path, true);    // the dead writer's temp file is left...
    REQUIRE(temps.size() == 1);
    const auto want = fresh_sums(scratch.path, 300, 1);
    // ...and is no entry: the next process compiles, writes the entry, and says nothing.
    Run next = probe(cache.path, scratch.path, "300 1");
    REQUIRE_MESSAGE(next.rc == 0, next.err);
    CHECK(count_of(next.out, "disk_hit=0 compiled=1") == 1);
    CHECK(next.err.empty());
    CHECK(sums_by_file(next.out) == want);
    Run hit = probe(cache.path, scratch.path, "300 1");
    CHECK(count_of(hit.out, "disk_hit=1 compiled=0") == 1);
    CHECK(sums_by_file(hit.out) == want);
    // The temp file, an hour old, goes when a process next opens the directory.
    CHECK(fs::exists(temps[0]));
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
    fs::last_write_time(temps[0], old);
    Run after = probe(cache.path, scratch.path, "300 1");
    CHECK(after.rc == 0);
    CHECK_FALSE(fs::exists(temps[0]));
    CHECK(entries(cache.path, false).size() == 1);
  }
}

TEST_CASE("disk cache faults: stale temp files are removed when the directory is opened, fresh ones kept") {
  Sandbox sb;
  const fs::path dir = sb.dir.path;
  const fs::path stale = dir / ".0123456789abcdef0123456789abcdef.kernel.tmp-4242-1-2";
  const fs::path fresh = dir / ".fedcba9876543210fedcba9876543210.kernel.tmp-4243-1-2";
  const fs::path other = dir / ".not-ours.tmp-1";          // not a cache temp name: left alone
  const fs::path stale_dir = dir / ".aaaa.kernel.tmp-1-dir";  // not a regular file: left alone
  for (const auto& p : {stale, fresh, other}) std::ofstream(p) << "partial";
  fs::create_directories(stale_dir);
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
  for (const auto& p : {stale, other, stale_dir}) fs::last_write_time(p, old);
  fs::last_write_time(fresh, fs::file_time_type::clock::now() - std::chrono::minutes(30));
  d::reset_disk_cache_settings();
  CHECK(d::disk_cache_settings().enabled);
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(fresh));
  CHECK(fs::exists(other));
  CHECK(fs::exists(stale_dir));
}

TEST_CASE("disk cache faults: a read-only directory and a full filesystem fall back to memory with one warning") {
  TempDir scratch;
  const std::string pre = mount_prefix();
  const auto want = fresh_sums(scratch.path, 400, 3);
  SUBCASE("read-only") {
    TempDir cache;
    Run r;
    if (!pre.empty()) {
      r = shell(fmt::format("{} sh -c 'mount -t tmpfs -o ro,size=1m tmpfs \"{}\" && {}'", pre, cache.path.string(),
                            probe_cmd(cache.path, "400 3")),
                scratch.path);
    } else {
      MESSAGE("no tmpfs can be mounted here: the read-only directory is a chmod 0555 one");
      fs::permissions(cache.path, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
      r = probe(cache.path, scratch.path, "400 3");
      fs::permissions(cache.path, fs::perms::owner_all);
      if (::geteuid() == 0) {  // root writes anyway: nothing to check but success
        CHECK(r.rc == 0);
        return;
      }
    }
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    CHECK(count_of(r.out, "disk_hit=0 compiled=1") == 3);
    CHECK(sums_by_file(r.out) == want);
    CHECK(count_of(r.err, "cufuse: warning") == 1);
    CHECK(r.err.find("Read-only file system") != std::string::npos);
  }
  SUBCASE("full") {
    TempDir cache;
    Run r;
    if (!pre.empty()) {
      // A 64 KiB tmpfs filled by a filler file: the temp file's open or write fails (ENOSPC).
      r = shell(fmt::format("{} sh -c 'mount -t tmpfs -o size=64k tmpfs \"{}\" && (dd if=/dev/zero of=\"{}/filler\" "
                            "bs=4k 2>/dev/null; true) && {}'",
                            pre, cache.path.string(), cache.path.string(), probe_cmd(cache.path, "400 3")),
                scratch.path);
    } else {
      MESSAGE("no tmpfs can be mounted here: ENOSPC is faked by the probe's fault hook");
      r = probe(cache.path, scratch.path, "400 3 enospc");
    }
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    CHECK(count_of(r.out, "disk_hit=0 compiled=1") == 3);
    CHECK(sums_by_file(r.out) == want);
    CHECK(count_of(r.err, "cufuse: warning") == 1);
    CHECK(r.err.find("No space left on device") != std::string::npos);
  }
  SUBCASE("full, faked (the hook's path, on every machine)") {
    TempDir cache;
    Run r = probe(cache.path, scratch.path, "400 3 enospc");
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    CHECK(count_of(r.out, "disk_hit=0 compiled=1") == 3);
    CHECK(count_of(r.err, "cufuse: warning") == 1);
    CHECK(r.err.find("No space left on device") != std::string::npos);
    CHECK(entries(cache.path, true).empty());  // the failed temp file was removed
    CHECK(entries(cache.path, false).empty());
  }
}

TEST_CASE("disk cache faults: a FIFO, a dangling link or a directory in an entry's place is a miss, never a hang") {
  TempDir cache, scratch;
  Run first = probe(cache.path, scratch.path, "500 1");
  REQUIRE_MESSAGE(first.rc == 0, first.err);
  const auto want = sums_by_file(first.out);
  REQUIRE(want.size() == 1);
  const fs::path entry = cache.path / want.begin()->first;
  REQUIRE(fs::is_regular_file(entry));
  const fs::path elsewhere = scratch.path / "a-valid-entry";
  fs::copy_file(entry, elsewhere);
  for (const char* kind : {"fifo", "dangling link", "directory", "link to a directory", "link to a valid entry"}) {
    CAPTURE(kind);
    fs::remove_all(entry);
    const std::string k = kind;
    if (k == "fifo") REQUIRE(::mkfifo(entry.c_str(), 0644) == 0);
    else if (k == "dangling link") fs::create_symlink(scratch.path / "no-such-file", entry);
    else if (k == "directory") fs::create_directories(entry / "inside");
    else if (k == "link to a directory") fs::create_directory_symlink(scratch.path, entry);
    else fs::create_symlink(elsewhere, entry);
    const auto t0 = std::chrono::steady_clock::now();
    Run r = probe(cache.path, scratch.path, "500 1");  // killed after 120 s if the open blocked
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    CHECK(sums_by_file(r.out) == want);
    if (k == "link to a valid entry") CHECK(count_of(r.out, "disk_hit=1 compiled=0") == 1);
    else CHECK(count_of(r.out, "disk_hit=0 compiled=1") == 1);
  }
}
