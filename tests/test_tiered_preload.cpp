// tests/test_tiered_preload.cpp: a tier hint's kernel loaded off the first call's path
// (exec/hint_preload.hpp), without a device: the preload's stages with fake functions, and
// build_executable's hinted steps with a fake loader (tiered.hpp: set_kernel_loader_for_tests):
// the kernel comes loaded where the keys agree, a refused entry's module is unloaded (or never
// loaded, where the comparison came first), a CUBIN
// that does not load is compiled, and two threads building the same first plan share one
// kernel. The device's load is tests/gpu/test_tiered_gpu.cpp's.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <cufuse/cufuse.hpp>

#include "compile/compiler.hpp"
#include "compile/disk_cache.hpp"
#include "exec/executable.hpp"
#include "exec/hint_preload.hpp"
#include "exec/tiered.hpp"
#include "plan/signature.hpp"
#include "test_sandbox.hpp"

namespace cf = cufuse;
using namespace cf::detail;
using cufuse_test::Sandbox;
using cufuse_test::ScopedEnv;

namespace {

void* handle(uintptr_t v) { return reinterpret_cast<void*>(v); }

// Fake stages counting their calls: the entry (when `with_entry`) holds CUBIN "c".
struct FakeStages {
  std::atomic<int> reads{0}, loads{0}, unloads{0};
  std::shared_ptr<HintPreload> make(bool with_entry) {
    return std::make_shared<HintPreload>(
        "k",
        [this, with_entry] {
          ++reads;
          TierHint h;
          h.found = true;
          if (with_entry) h.entry = DiskCacheHint{"key", {'c'}, ""};
          return h;
        },
        [this](const DiskCacheHint& e) {
          CHECK(e.cubin == std::vector<char>{'c'});
          ++loads;
          PreloadResult r;
          r.loaded = {handle(0x10), handle(0x20)};
          r.device = 0;
          return r;
        },
        [this](void* lib) {
          CHECK(lib == handle(0x20));
          ++unloads;
        });
  }
};

// The tests' loader (tiered.hpp) for a scope: each load a new handle, a CUBIN "bad" refused.
struct FakeLoader {
  std::mutex mu;
  std::vector<std::vector<char>> loaded;  // the CUBINs loaded, in order
  std::vector<void*> kernels;             // their kernels (library = kernel + 1)
  int unloads = 0;
  FakeLoader() {
    KernelLoader l;
    l.load = [this](const std::vector<char>& cubin, const std::string&, int device) {
      CHECK(device == 0);
      if (cubin == std::vector<char>{'b', 'a', 'd'}) throw std::runtime_error("invalid kernel image");
      std::lock_guard<std::mutex> lk(mu);
      loaded.push_back(cubin);
      kernels.push_back(handle(0x1000 + 16 * kernels.size()));
      return LoadedKernel{kernels.back(), handle(0x1001 + 16 * (kernels.size() - 1))};
    };
    l.unload = [this](void* lib) {
      std::lock_guard<std::mutex> lk(mu);
      CHECK(reinterpret_cast<uintptr_t>(lib) % 16 == 1);
      ++unloads;
    };
    set_kernel_loader_for_tests(std::move(l));
  }
  ~FakeLoader() {
    wait_for_preloads();
    set_kernel_loader_for_tests({});
  }
};

// The default tier on the reference backend, as a new process would build a lazy plan.
struct NewProcess {
  Sandbox sb;
  ScopedEnv tiered{"CUFUSE_TIERED", std::nullopt};
  cf::BackendScope ref{cf::Backend::Reference};
  NewProcess() { wait_for_background_compiles(); }
  // The executable of a lazy evaluation of `r` in a process that knows nothing yet.
  static std::shared_ptr<Executable> build(const cf::Array& r, std::string* hint = nullptr) {
    std::vector<NodePtr> roots = {r.node()};
    GraphScan scan;
    scan_graph(roots, {}, scan);
    if (hint) *hint = tier_hint_key(scan, 0, 90);
    return build_executable(roots, {}, scan, true, 90, nullptr, /*tiered=*/true, false, /*defer_source=*/true);
  }
  static void forget() {
    wait_for_preloads();
    clear_memory_cache();
    forget_tier_hints();
  }
};

cf::Array input(int64_t n) {
  cf::Array x = cf::ones(cf::Shape{n}, cf::f32);
  x.eval();
  return x;
}
const auto f = [](const cf::Array& x) { return cf::tanh(x * 1.625f - 0.375f) * cf::exp(x); };
const auto g = [](const cf::Array& x) { return cf::sin(x * 1.625f - 0.375f) * cf::exp(x); };

}  // namespace

TEST_CASE("a hint preload: each stage once, on whichever thread comes first; a kernel not taken is unloaded") {
  FakeStages s;
  {  // taken: loaded once, never unloaded
    auto p = s.make(true);
    CHECK(p->hint().found);
    CHECK(p->loaded().loaded.kernel == handle(0x10));
    p->take();
    p->work();  // the loader after the fact: nothing left to run
  }
  CHECK(s.reads == 1);
  CHECK(s.loads == 1);
  CHECK(s.unloads == 0);
  {  // refused after its load: unloaded at once
    auto p = s.make(true);
    p->loaded();
    p->discard();
    CHECK(s.unloads == 1);
  }
  {  // refused before its load: never loaded
    auto p = s.make(true);
    p->hint();
    p->discard();
    p->work();
    CHECK(p->loaded().loaded.kernel == nullptr);
  }
  CHECK(s.loads == 2);
  {  // neither taken nor refused (an unused prefetch): its destructor unloads
    auto p = s.make(true);
    p->loaded();
  }
  CHECK(s.unloads == 2);
  {  // no entry: nothing to load
    auto p = s.make(false);
    CHECK(p->loaded().loaded.kernel == nullptr);
    CHECK(p->loaded().error.empty());
  }
  CHECK(s.loads == 3);
  {  // a load that throws is an error, never an exception
    HintPreload p(
        "k", [] { return TierHint{true, DiskCacheHint{"key", {'x'}, ""}}; },
        [](const DiskCacheHint&) -> PreloadResult { throw std::runtime_error("refused"); }, nullptr);
    CHECK(p.loaded().error == "refused");
    CHECK(p.loaded().loaded.kernel == nullptr);
  }
  // Racing a thread (the loader's part): still each stage once, and every kernel taken or unloaded.
  const int reads = s.reads, loads = s.loads, unloads = s.unloads;
  for (int i = 0; i < 200; ++i) {
    auto p = s.make(true);
    std::thread t([p] { p->work(); });
    CHECK(p->hint().found);
    if (i % 2) {
      CHECK(p->loaded().loaded.kernel == handle(0x10));
      p->take();
    } else {
      p->discard();
    }
    t.join();
  }
  CHECK(s.reads == reads + 200);
  CHECK(s.loads <= loads + 200);
  CHECK(s.loads >= loads + 100);
  CHECK(s.loads - loads - (s.unloads - unloads) == 100);  // the 100 taken stay loaded
}

TEST_CASE("the loader thread runs what it is given once; after its stop the stages run where they are needed") {
  static FakeStages s;  // (outlives the parked thread, as the loader does)
  // Never destroyed: its thread parks for good at stop(), as the process's loader does.
  PreloadThread& loader = *new PreloadThread;
  std::vector<std::shared_ptr<HintPreload>> ps;
  for (int i = 0; i < 20; ++i) {
    ps.push_back(s.make(true));
    CHECK(loader.submit(ps.back()) == (i == 0));  // the thread starts with the first
  }
  loader.wait_idle();
  CHECK(s.reads == 20);
  CHECK(s.loads == 20);
  for (auto& p : ps) p->take();
  loader.stop();
  auto late = s.make(true);
  CHECK(!loader.submit(late));
  CHECK(s.reads == 20);
  CHECK(late->loaded().loaded.kernel == handle(0x10));  // run here
  late->take();
  CHECK(s.loads == 21);
}

TEST_CASE("compile keys name their kernel") {
  CHECK(compile_key_name(compile_key("extern \"C\" __global__ void k1() {}", "k1", 90)) == "k1");
  CHECK(compile_key_name(compile_key("src", "name with\nnewline", 80, {"-DX=1", "name 3 abc"})) == "name with\nnewline");
  CHECK(compile_key_name("").empty());
  CHECK(compile_key_name("arch 90\nname 99 k\n").empty());
  CHECK(compile_key_name("the compile key\nof a").empty());
}

TEST_CASE("a new process's first build: the hint's kernel comes loaded; a refused hint's module is unloaded") {
  NewProcess np;
  FakeLoader fl;
  REQUIRE(cf::precompile(f, cf::signature(cf::ArgType{cf::f32, {4096}})).kernels == 1);
  REQUIRE(cf::precompile(g, cf::signature(cf::ArgType{cf::f32, {4096}})).kernels == 1);
  const cf::Array x = input(4096);
  NewProcess::forget();
  cf::reset_stats();
  std::string hint;
  auto ex = NewProcess::build(f(x), &hint);
  REQUIRE(ex->steps.size() == 1);
  const CompiledKernelPtr fk = ex->steps[0].kernel;
  REQUIRE(fk);
  CHECK(fk->from_disk);
  CHECK(cf::stats().disk_cache_hits == 1);
  wait_for_preloads();
  REQUIRE(fl.loaded.size() == 1);
  CHECK(fl.loaded[0] == fk->cubin);
  CHECK(fk->kernel_for(0) == fl.kernels[0]);  // loaded by the preload, not at the launch
  CHECK(fl.unloads == 0);
  // A stale hint (its entry holds g's kernel): f's step gets f's kernel by f's source, and the
  // module loaded from the entry meanwhile is unloaded, never used.
  NewProcess::forget();
  auto gx = NewProcess::build(g(x));
  REQUIRE(gx->steps[0].kernel);
  const CompiledKernelPtr gk = gx->steps[0].kernel;
  REQUIRE(store_tier_hint(hint, *gk));
  NewProcess::forget();
  const size_t loads = fl.loaded.size();
  auto ex2 = NewProcess::build(f(x));
  REQUIRE(ex2->steps[0].kernel);
  CHECK(ex2->steps[0].kernel->cubin == fk->cubin);
  CHECK(ex2->steps[0].kernel->cubin != gk->cubin);
  wait_for_preloads();
  // g's CUBIN was loaded, unless the comparison came first (a load not started is skipped),
  // and a module loaded for nothing is unloaded.
  const size_t extra = fl.loaded.size() - loads;
  CHECK(extra <= 1);
  if (extra == 1) CHECK(fl.loaded.back() == gk->cubin);
  CHECK(fl.unloads == static_cast<int>(extra));
  CHECK(ex2->steps[0].kernel->adopt_loaded(0, handle(0x7)));  // f's was not loaded (it would be at its launch)
  NewProcess::forget();
}

TEST_CASE("a hint whose CUBIN does not load: the step compiles, and the hint then holds the new kernel") {
  NewProcess np;
  FakeLoader fl;
  const cf::Array x = input(4096);
  std::string hint;
  std::vector<NodePtr> roots = {f(x).node()};
  GraphScan scan;
  scan_graph(roots, {}, scan);
  const KernelSpec spec = build_executable(roots, {}, scan, false, 90)->steps.at(0).spec;
  // The hint of f's plan holding f's compile key and a CUBIN the driver refuses; no kernel entry.
  NewProcess::forget();
  REQUIRE(disk_cache_store_hint(tier_hint_key(scan, 0, 90), compile_key(spec.source, spec.name, 90), {'b', 'a', 'd'}, ""));
  cf::reset_stats();
  auto ex = NewProcess::build(f(x), &hint);
  REQUIRE(ex->steps.size() == 1);
  const Step& st = ex->steps[0];
  CHECK(!st.kernel);  // not the entry's
  REQUIRE(st.tier);   // the interpreter, while NVRTC compiles it
  CHECK(st.tier->background);
  wait_for_background_compiles();
  REQUIRE(st.tier->compiled());
  CHECK(cf::stats().kernels_compiled == 1);
  CHECK(st.tier->compiled()->source == spec.source);
  const auto entry = disk_cache_load_hint(hint);
  REQUIRE(entry);
  CHECK(entry->cubin == st.tier->compiled()->cubin);
  CHECK(fl.unloads == 0);
}

TEST_CASE("two threads building the same first plan: one kernel, each module loaded for nothing unloaded") {
  NewProcess np;
  FakeLoader fl;
  REQUIRE(cf::precompile(f, cf::signature(cf::ArgType{cf::f32, {4096}})).kernels == 1);
  const cf::Array x = input(4096);
  for (int round = 0; round < 20; ++round) {
    NewProcess::forget();
    const size_t loads = fl.loaded.size();
    const int unloads = fl.unloads;
    CompiledKernelPtr k[2];
    std::thread t([&] { k[1] = NewProcess::build(f(x))->steps.at(0).kernel; });
    k[0] = NewProcess::build(f(x))->steps.at(0).kernel;
    t.join();
    wait_for_preloads();
    REQUIRE(k[0]);
    CHECK(k[0] == k[1]);  // the memory cache's one kernel
    const size_t loaded = fl.loaded.size() - loads;
    CHECK(loaded >= 1);
    CHECK(loaded <= 2);
    CHECK(static_cast<int>(loaded) - (fl.unloads - unloads) == 1);
    bool preloaded = false;  // the kernel kept is one of this round's loads
    for (size_t i = loads; i < fl.kernels.size(); ++i) preloaded = preloaded || k[0]->kernel_for(0) == fl.kernels[i];
    CHECK(preloaded);
  }
}
