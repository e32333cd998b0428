// tests/test_compiler.cpp: src/compile/compiler without a GPU: NVRTC to CUBIN for sm_90, ptxas
// info, the in-memory cache (full keys, single flight), CompileError, default_arch and
// CUFUSE_DUMP_KERNELS. Each test runs in its own temp cache dir with fresh settings.
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

#include "codegen/preamble.hpp"
#include "compile/compiler.hpp"
#include "compile/disk_cache.hpp"
#include "compile/dump.hpp"
#include "compile/nvrtc.hpp"
#include "core/counters.hpp"
#include "cufuse/error.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/stream.hpp"
#include "test_sandbox.hpp"

namespace fs = std::filesystem;
namespace d = cufuse::detail;

namespace {

using cufuse_test::Sandbox;
using cufuse_test::ScopedEnv;
using cufuse_test::TempDir;

// A source no earlier run has compiled (the nonce), so a "new key" is really new.
std::string tiny_source(const std::string& name, const std::string& body = "p.out[i] = sinf(p.a[i]) * p.s;") {
  static std::atomic<int> n{0};
  return fmt::format(
      "// nonce {} {} {}\n"
      "struct Params {{ const float* a; float* out; long long n; float s; }};\n"
      "extern \"C\" __global__ void {}(Params p) {{\n"
      "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
      "  if (i < p.n) {{ {} }}\n"
      "}}\n",
      ::getpid(), n++, std::chrono::steady_clock::now().time_since_epoch().count(), name, body);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("compiler: a tiny kernel compiles to an sm_90 CUBIN with its ptxas info") {
  Sandbox sb;
  auto compiled0 = d::counters().kernels_compiled.load();
  const double compile_ms0 = cufuse::stats().compile_ms;
  std::string src = tiny_source("tiny_sin");
  auto k = d::compile_kernel(src, "tiny_sin", 90);
  REQUIRE(k);
  CHECK(k->name == "tiny_sin");
  CHECK(k->source == src);
  CHECK(k->arch == 90);
  REQUIRE(k->cubin.size() > 4);
  CHECK(std::string(k->cubin.data(), 4) == "\x7f" "ELF");
  CHECK_FALSE(k->from_disk);
  CHECK(k->compile_ms > 0);
  CHECK(k->registers > 0);
  CHECK(k->spill_stores == 0);
  CHECK(k->spill_loads == 0);
  CHECK(k->log.find("Used") != std::string::npos);
  CHECK(d::counters().kernels_compiled.load() == compiled0 + 1);
  // stats().compile_ms adds up NVRTC's wall time (other threads' compiles may add to it too)
  CHECK(cufuse::stats().compile_ms - compile_ms0 >= k->compile_ms - 0.001);
  MESSAGE(fmt::format("tiny kernel: {:.1f} ms, {} registers, {} B cubin", k->compile_ms, k->registers,
                      k->cubin.size()));
}

TEST_CASE("compiler: math functions and shared memory compile with -minimal; smem is parsed") {
  Sandbox sb;
  std::string src =
      "extern \"C\" __global__ void mathy(const float* a, double* o, int n) {\n"
      "  __shared__ double tile[256];\n"
      "  int i = threadIdx.x;\n"
      "  tile[i] = expf(a[i]) + logf(a[i]) + tanhf(a[i]) + erff(a[i]) + powf(a[i], 1.5f) + fmodf(a[i], 3.f)\n"
      "          + sqrt((double)a[i]) + atan2(1.0, (double)a[i]) + lgamma((double)a[i]) + isnan(a[i]);\n"
      "  __syncthreads();\n"
      "  if (i < n) o[i] = tile[255 - i] + __shfl_down_sync(0xffffffffu, tile[i], 1);\n"
      "}\n// " + tiny_source("unused");
  auto k = d::compile_kernel(src, "mathy", 90);
  CHECK(k->registers > 0);
  CHECK(k->shared_bytes == 256 * 8);
  auto opts = d::base_compile_options(90);
  CHECK(std::find(opts.begin(), opts.end(), "-minimal") != opts.end());
  CHECK(std::find(opts.begin(), opts.end(), "--fmad=false") != opts.end());
  CHECK(std::find(opts.begin(), opts.end(), "-arch=sm_90") != opts.end());
}

TEST_CASE("compiler: fp16/bf16 headers are found when a kernel includes them") {
  Sandbox sb;
  std::string src = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
                    "extern \"C\" __global__ void halfy(const __half* a, __nv_bfloat16* o) {\n"
                    "  o[threadIdx.x] = __float2bfloat16(__half2float(a[threadIdx.x]) * 2.f);\n"
                    "}\n// " + tiny_source("unused");
  auto k = d::compile_kernel(src, "halfy", 90);
  CHECK(!k->cubin.empty());
}

TEST_CASE("compiler: a memory hit returns the same object and counts") {
  Sandbox sb;
  std::string src = tiny_source("hit_me");
  auto a = d::compile_kernel(src, "hit_me", 90);
  auto hits0 = d::counters().memory_cache_hits.load();
  auto calls0 = d::nvrtc::compile_calls();
  auto b = d::compile_kernel(src, "hit_me", 90);
  CHECK(a.get() == b.get());
  CHECK(d::counters().memory_cache_hits.load() == hits0 + 1);
  CHECK(d::nvrtc::compile_calls() == calls0);

  // The hit path is cheap: measure it (informational; a generous bound only).
  const int n = 20000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    auto c = d::compile_kernel(src, "hit_me", 90);
    if (c.get() != a.get()) FAIL("a hit returned another kernel");
  }
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
  MESSAGE(fmt::format("memory hit: {:.0f} ns for a {}-byte source", ns, src.size()));
  CHECK(ns < 50000);
}

TEST_CASE("compiler: arch, options and name are part of the key") {
  Sandbox sb;
  // Two kernels in one source: the name picks which one's ptxas info is reported.
  std::string src = tiny_source("first_k") +
                    "extern \"C\" __global__ void second_k(float* o) {\n"
                    "  __shared__ float s[64]; s[threadIdx.x] = o[threadIdx.x]; __syncthreads();\n"
                    "  o[threadIdx.x] = s[63 - threadIdx.x];\n}\n";
  auto k90 = d::compile_kernel(src, "first_k", 90);
  auto k80 = d::compile_kernel(src, "first_k", 80);
  auto kopt = d::compile_kernel(src, "first_k", 90, {"-lineinfo"});
  auto kname = d::compile_kernel(src, "second_k", 90);
  CHECK(k80.get() != k90.get());
  CHECK(kopt.get() != k90.get());
  CHECK(kname.get() != k90.get());
  CHECK(k80->arch == 80);
  CHECK(k90->shared_bytes == 0);
  CHECK(kname->shared_bytes == 64 * 4);
  // And each is a hit afterwards.
  CHECK(d::compile_kernel(src, "first_k", 80).get() == k80.get());
  CHECK(d::compile_kernel(src, "first_k", 90, {"-lineinfo"}).get() == kopt.get());
  CHECK(d::compile_kernel(src, "second_k", 90).get() == kname.get());
  CHECK(d::compile_key(src, "first_k", 90) != d::compile_key(src, "first_k", 80));
  CHECK(d::compile_key(src, "first_k", 90) != d::compile_key(src, "first_k", 90, {"-lineinfo"}));
}

TEST_CASE("compiler: a syntax error throws CompileError with the log and a saved source") {
  Sandbox sb;
  std::string src = tiny_source("broken_k", "p.out[i] = this is not C++;");
  auto calls0 = d::nvrtc::compile_calls();
  bool threw = false;
  try {
    d::compile_kernel(src, "broken_k", 90);
  } catch (const cufuse::CompileError& e) {
    threw = true;
    std::string what = e.what();
    CHECK(e.kind() == cufuse::ErrorKind::Compile);
    CHECK(what.find("broken_k") != std::string::npos);
    CHECK(what.find("sm_90") != std::string::npos);
    CHECK(e.log().find("error") != std::string::npos);
    CHECK(what.find(e.log()) != std::string::npos);
    REQUIRE(!e.source_path().empty());
    CHECK(what.find(e.source_path()) != std::string::npos);
    CHECK(fs::exists(e.source_path()));
    CHECK(read_file(e.source_path()) == src);
    CHECK(fs::path(e.source_path()).parent_path() == sb.dir.path / "cufuse-failed");
  }
  CHECK(threw);
  // Not cached: the next call compiles again (and fails again).
  CHECK_THROWS_AS(d::compile_kernel(src, "broken_k", 90), cufuse::CompileError);
  CHECK(d::nvrtc::compile_calls() == calls0 + 2);
  // A bad option is a CompileError too, not a crash.
  CHECK_THROWS_AS(d::compile_kernel(tiny_source("opt_k"), "opt_k", 90, {"--no-such-option"}),
                  cufuse::CompileError);
}

TEST_CASE("compiler: 8 threads asking for one new key compile it once") {
  Sandbox sb;
  std::string src = tiny_source("together_k");
  auto calls0 = d::nvrtc::compile_calls();
  auto compiled0 = d::counters().kernels_compiled.load();
  const int n = 8;
  std::vector<d::CompiledKernelPtr> got(n);
  std::latch start(n);
  std::vector<std::thread> ts;
  for (int t = 0; t < n; ++t)
    ts.emplace_back([&, t] {
      start.arrive_and_wait();
      got[t] = d::compile_kernel(src, "together_k", 90);
    });
  for (auto& t : ts) t.join();
  CHECK(d::nvrtc::compile_calls() == calls0 + 1);
  CHECK(d::counters().kernels_compiled.load() == compiled0 + 1);
  for (int t = 0; t < n; ++t) CHECK(got[t].get() == got[0].get());
}

TEST_CASE("compiler: a failure reaches every waiting thread and is not cached") {
  Sandbox sb;
  std::string src = tiny_source("fail_together_k", "p.out[i] = undefined_thing(p.a[i]);");
  auto calls0 = d::nvrtc::compile_calls();
  const int n = 8;
  std::atomic<int> compile_errors{0};
  std::latch start(n);
  std::vector<std::thread> ts;
  for (int t = 0; t < n; ++t)
    ts.emplace_back([&] {
      start.arrive_and_wait();
      try {
        d::compile_kernel(src, "fail_together_k", 90);
      } catch (const cufuse::CompileError& e) {
        if (std::string(e.what()).find("undefined_thing") != std::string::npos) ++compile_errors;
      }
    });
  for (auto& t : ts) t.join();
  CHECK(compile_errors.load() == n);
  auto calls = d::nvrtc::compile_calls() - calls0;
  // A thread that arrives after the failure was published starts a new attempt (failures
  // are not cached); with the latch they all arrive while the first attempt runs, so this
  // is 1 unless the machine is very busy.
  MESSAGE(fmt::format("8 threads, failing key: {} NVRTC call(s)", calls));
  CHECK(calls >= 1);
  CHECK(calls <= n);
  CHECK_THROWS_AS(d::compile_kernel(src, "fail_together_k", 90), cufuse::CompileError);
  CHECK(d::nvrtc::compile_calls() == calls0 + calls + 1);
}

TEST_CASE("compiler: ptxas info is parsed per entry function") {
  std::string log =
      "ptxas info    : 24 bytes gmem\n"
      "ptxas info    : Compiling entry function 'other' for 'sm_90'\n"
      "ptxas info    : Function properties for other\n"
      "ptxas         .     8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, used 0 barriers\n"
      "ptxas info    : Compiling entry function 'mine' for 'sm_90'\n"
      "ptxas info    : Function properties for helper\n"
      "ptxas         .     16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Function properties for mine\n"
      "ptxas         .     96 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem\n"
      "ptxas info    : Compile time = 36.034 ms\n";
  auto m = d::parse_ptxas_info(log, "mine");
  CHECK(m.registers == 255);
  CHECK(m.stack_bytes == 96);
  CHECK(m.spill_stores == 40);
  CHECK(m.spill_loads == 36);
  CHECK(m.shared_bytes == 4096);
  auto o = d::parse_ptxas_info(log, "other");
  CHECK(o.registers == 12);
  CHECK(o.stack_bytes == 8);
  CHECK(o.shared_bytes == 0);
  auto none = d::parse_ptxas_info("", "x");
  CHECK(none.registers == -1);
  auto garbage = d::parse_ptxas_info("Used registers\n bytes stack frame\n", "x");
  CHECK(garbage.registers == -1);
}

TEST_CASE("compiler: default_arch reads CUFUSE_ARCH, else the device, else 90 (a bad value warns)") {
  {
    ScopedEnv e("CUFUSE_ARCH", std::nullopt);
    if (cufuse::Device::count() == 0) CHECK(d::default_arch() == 90);
    else CHECK(d::default_arch() == cufuse::Device::current().compute_capability());
  }
  {
    ScopedEnv e("CUFUSE_ARCH", "sm_86");
    CHECK(d::default_arch() == 86);
  }
  {
    ScopedEnv e("CUFUSE_ARCH", "90");
    CHECK(d::default_arch() == 90);
  }
  {
    ScopedEnv e("CUFUSE_ARCH", "banana");  // warned once (runtime/env.cpp); the default instead
    if (cufuse::Device::count() == 0) CHECK(d::default_arch() == 90);
    else CHECK(d::default_arch() == cufuse::Device::current().compute_capability());
  }
}

TEST_CASE("compiler: CUFUSE_DUMP_KERNELS gets each kernel's source and ptxas info") {
  Sandbox sb;
  TempDir dump;
  ScopedEnv e("CUFUSE_DUMP_KERNELS", (dump.path / "sub").string());
  d::reset_dump_settings();
  REQUIRE(d::dump_dir());
  std::string src = tiny_source("dumped_k");
  auto k = d::compile_kernel(src, "dumped_k", 90);
  CHECK(read_file(dump.path / "sub" / "dumped_k.cu") == src);
  std::string info = read_file(dump.path / "sub" / "dumped_k.ptxas.txt");
  CHECK(info.find("registers") != std::string::npos);
  CHECK(info.find("Used") != std::string::npos);
  CHECK(info.find("-arch=sm_90") != std::string::npos);

  // A kernel loaded from the disk cache is dumped too (the first time this process sees it).
  fs::remove(dump.path / "sub" / "dumped_k.cu");
  d::clear_memory_cache();
  auto again = d::compile_kernel(src, "dumped_k", 90);
  CHECK(again->from_disk);
  CHECK(read_file(dump.path / "sub" / "dumped_k.cu") == src);
  CHECK(read_file(dump.path / "sub" / "dumped_k.ptxas.txt").find("disk cache") != std::string::npos);

  d::dump_file("plan-1.txt", "a plan");
  CHECK(read_file(dump.path / "sub" / "plan-1.txt") == "a plan");
  d::dump_file("../escape.txt", "no");
  CHECK_FALSE(fs::exists(dump.path / "escape.txt"));
  // No temp files are left behind.
  for (auto& f : fs::directory_iterator(dump.path / "sub"))
    CHECK(f.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("compiler: kernel_for without a device says so") {
  Sandbox sb;
  auto k = d::compile_kernel(tiny_source("load_k"), "load_k", 90);
  CHECK_THROWS_AS(k->kernel_for(64), cufuse::ValueError);
  CHECK_THROWS_AS(k->kernel_for(-1), cufuse::ValueError);
  if (cufuse::Device::count() == 0) CHECK_THROWS_AS(k->kernel_for(0), cufuse::Error);
}

TEST_CASE("preamble: a kernel gets the helpers it names, with theirs, in their written order") {
  using cufuse::detail::full_preamble;
  using cufuse::detail::kernel_preamble;
  using cufuse::detail::kPreambleEnd;
  // naming everything gives everything back: no declaration is lost in the cutting
  CHECK(kernel_preamble(full_preamble()) == full_preamble() + std::string(kPreambleEnd));
  const std::string none = kernel_preamble("extern \"C\" __global__ void k(float* p) { p[0] = 1; }");
  CHECK(none == "#define CF_FN __device__ __forceinline__\n" + std::string(kPreambleEnd));
  const std::string rnd = kernel_preamble("float v = cf_random_normal<float>(1, 2, 0.f, 1.f);");
  for (const char* need : {"struct cf_u4", "cf_mulhilo(", "cf_philox(", "cf_unit_open(", "cf_random_normal("})
    CHECK_MESSAGE(rnd.find(need) != std::string::npos, need);
  CHECK(rnd.find("cf_floor_divide") == std::string::npos);
  CHECK(rnd.find("cf_philox(") > rnd.find("cf_mulhilo("));  // declared before use
  // the normal generator is out of line (a call, not 16 inlined copies a thread): its kernels
  // define CF_FN_OUTLINE; a kernel with no such helper does not (its source, so its key, as before)
  CHECK(rnd.find("#define CF_FN_OUTLINE __device__ __noinline__\n") != std::string::npos);
  CHECK(rnd.find("CF_FN_OUTLINE T cf_random_normal(") != std::string::npos);
  const std::string uni = kernel_preamble("float v = cf_random_uniform<float>(1, 2, 0.f, 1.f);");
  CHECK(uni.find("cf_random_uniform(") != std::string::npos);
  CHECK(uni.find("CF_FN_OUTLINE") == std::string::npos);
  // a template's specializations come with it: cf_st<cf_f16> and cf_st<cf_bf16>
  const std::string st = kernel_preamble("cf_f16 h = cf_st<cf_f16>(1.0f);");
  CHECK(st.find("cf_st<cf_f16>(float v)") != std::string::npos);
  CHECK(st.find("cf_st<cf_bf16>(float v)") != std::string::npos);
  CHECK(st.find("struct cf_bf16") != std::string::npos);
  // the whole text compiles, as one kernel's preamble
  CHECK(cufuse::detail::compile_kernel(full_preamble() + "\nextern \"C\" __global__ void cf_pre_all(float* p) { p[0] = 1; }\n",
                                       "cf_pre_all", 90)->cubin.size() > 0);
}

TEST_CASE("compiler: check_kernel_source compiles to PTX only, once a source; a bad source throws CompileError") {
  Sandbox sb;
  const std::string src = tiny_source("checked_k");
  const auto calls0 = d::nvrtc::compile_calls();
  const auto compiled0 = cufuse::stats().kernels_compiled;
  d::check_kernel_source(src, "checked_k", 90);
  CHECK(d::nvrtc::compile_calls() == calls0 + 1);
  CHECK(cufuse::stats().kernels_compiled == compiled0);  // no CUBIN built
  CHECK(!d::find_compiled_kernel(src, "checked_k", 90));  // nor cached as a kernel
  d::check_kernel_source(src, "checked_k", 90);  // checked already: no NVRTC call
  CHECK(d::nvrtc::compile_calls() == calls0 + 1);
  d::check_kernel_source(src, "checked_k", 80);  // another arch is another check
  CHECK(d::nvrtc::compile_calls() == calls0 + 2);
  const std::string bad = tiny_source("checked_bad", "p.out[i] = undeclared_name;");
  bool threw = false;
  try {
    d::check_kernel_source(bad, "checked_bad", 90);
  } catch (const cufuse::CompileError& e) {
    threw = true;
    const std::string what = e.what();
    CHECK(what.find("checked_bad") != std::string::npos);
    CHECK(what.find("-arch=compute_90") != std::string::npos);
    CHECK(e.log().find("undeclared_name") != std::string::npos);
  }
  CHECK(threw);
  CHECK_THROWS_AS(d::check_kernel_source(bad, "checked_bad", 90), cufuse::CompileError);  // failures not kept
}
