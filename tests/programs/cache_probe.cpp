// tests/programs/cache_probe.cpp: a small program the disk-cache tests start as separate
// processes. It compiles tiny kernels through src/compile/compiler (the environment picks the
// cache dir) and prints one line per kernel saying whether it came from disk:
//   cache_probe [variant] [count] [fault]
//     -> "probe disk_hit=1 compiled=0 registers=8 cubin=3456 sum=<cubin checksum> file=<cache file name>"
// With count > 1 it compiles variants variant, variant+1, ... (one line each). A fault
// (tests/test_disk_cache_faults.cpp) installs the disk cache's test hook:
//   kill-at-write   writes half the entry into the temp file, then SIGKILL (kill -9 mid-write)
//   kill-at-rename  the whole temp file written, SIGKILL before the rename
//   enospc          the write fails with ENOSPC (a full disk, where no small tmpfs can be mounted)
// Exit status 0 on success, 1 (with the error on stderr) on failure.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <string>

#include "compile/compiler.hpp"
#include "compile/disk_cache.hpp"
#include "core/counters.hpp"

namespace d = cufuse::detail;

static std::string probe_source(int variant) {
  std::string v = std::to_string(variant);
  return "// cache_probe variant " + v + "\n"
         "struct ProbeParams { const float* a; float* out; long long n; float s; };\n"
         "extern \"C\" __global__ void cache_probe_kernel(ProbeParams p) {\n"
         "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
         "  if (i < p.n) p.out[i] = sinf(p.a[i]) * p.s + " + v + ".0f;\n"
         "}\n";
}

static int kill_at_write(d::DiskCacheStage stage, int fd) {
  if (stage == d::DiskCacheStage::Write) {
    char half[256];
    std::memset(half, 'x', sizeof half);
    if (::write(fd, "CUFUSEKC", 8) < 0 || ::write(fd, half, sizeof half) < 0) std::perror("write");
    ::raise(SIGKILL);
  }
  return 0;
}
static int kill_at_rename(d::DiskCacheStage stage, int) {
  if (stage == d::DiskCacheStage::Rename) ::raise(SIGKILL);
  return 0;
}
static int enospc(d::DiskCacheStage stage, int) { return stage == d::DiskCacheStage::Write ? ENOSPC : 0; }

int main(int argc, char** argv) {
  const int first = argc > 1 ? std::atoi(argv[1]) : 0;
  const int count = argc > 2 ? std::atoi(argv[2]) : 1;
  const std::string fault = argc > 3 ? argv[3] : "";
  if (fault == "kill-at-write") d::set_disk_cache_fault_hook(kill_at_write);
  else if (fault == "kill-at-rename") d::set_disk_cache_fault_hook(kill_at_rename);
  else if (fault == "enospc") d::set_disk_cache_fault_hook(enospc);
  else if (!fault.empty()) {
    std::fprintf(stderr, "cache_probe: unknown fault '%s'\n", fault.c_str());
    return 1;
  }
  const int arch = 90;
  auto& c = d::counters();
  try {
    for (int v = first; v < first + count; ++v) {
      std::string source = probe_source(v);
      auto hits0 = c.disk_cache_hits.load(), compiled0 = c.kernels_compiled.load();
      auto k = d::compile_kernel(source, "cache_probe_kernel", arch);
      auto file = d::disk_cache_file("", d::compile_key(source, "cache_probe_kernel", arch));
      std::printf("probe disk_hit=%d compiled=%d registers=%d cubin=%zu sum=%016llx file=%s\n",
                  int(c.disk_cache_hits.load() - hits0), int(c.kernels_compiled.load() - compiled0),
                  k->registers, k->cubin.size(),
                  static_cast<unsigned long long>(d::checksum64(k->cubin.data(), k->cubin.size())),
                  file.filename().c_str());
      std::fflush(stdout);
      if (k->cubin.empty()) return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cache_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
