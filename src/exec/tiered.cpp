// src/exec/tiered.cpp: tiered first calls (see tiered.hpp): choosing a step's tier, the
// background compile pool (bounded, lowest priority, one compile per key), and the
// interpreter's kernel per device.
#include "exec/tiered.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "compile/disk_cache.hpp"
#include "codegen/preamble.hpp"
#include "compile/interp_images.hpp"
#include "compile/nvrtc.hpp"
#include "exec/startup.hpp"
#include "core/counters.hpp"
#include "cufuse/error.hpp"
#include "cufuse/stream.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/env.hpp"
#include "runtime/first_use.hpp"
#include "runtime/launch.hpp"
#include "runtime/log.hpp"

namespace cufuse::detail {

namespace {

// Process state: the runtime context's Tiers slot (runtime/context.hpp).
struct TierState {
  static constexpr StateSlot kSlot = StateSlot::Tiers;
  std::mutex mu;
  std::condition_variable cv, idle;
  std::deque<std::string> queue;  // compile keys, oldest first
  // Per key queued or compiling: the steps waiting for it (the first one's source is compiled).
  std::unordered_map<std::string, std::vector<std::shared_ptr<TieredStep>>> waiting;
  int workers = 0, busy = 0;
  // Hint keys (tier_hint_key) whose kernels this process has compiled or found: a new plan
  // of the same structure generates its source first (with the disk cache off too).
  std::unordered_set<std::string> hinted;
  // Set at process exit (stop_at_exit): queued compiles are dropped, the running ones finish,
  // and the workers park (they never return), so none is inside NVRTC, a module load or its
  // thread-exit destructors while the process tears down (demo_fusion and seed002 crashed at
  // exit with a compile still running).
  bool stopping = false, exit_hook = false;
  // Set once an NVRTC compile of this process has finished (after_first_compile).
  bool late_exit_hook = false;
  // The interpreter kernel per device (loaded once; 1 marks "no image"), loaded by the first
  // call that needs it or by the start-up warm-up (exec/startup.hpp), whichever comes first.
  LoadGate load_gate;
  // Per kernel (kInterpKernels' order: cf_interp, cf_interp_narrow, cf_interp_rows), per device.
  std::array<std::array<std::atomic<void*>, 64>, 3> interp{};
  StartupWarmup startup;
  // The loader thread of hint preloads (exec/hint_preload.hpp), and the tests' loader.
  PreloadThread loader;
  KernelLoader test_loader;
};

TierState& tiers() { return runtime().state<TierState>(); }

// Threads of the pool: a quarter of the cores, 1 or 2 (NVRTC is single-threaded per compile,
// and the pool must not take the cores from the user's own work).
int max_workers() {
  const unsigned hc = std::thread::hardware_concurrency();
  return std::clamp(static_cast<int>(hc / 4), 1, 2);
}

void stop_background_work();

// After an NVRTC compile of this process has finished: one more atexit hook stopping the pool
// and the warm-up. NVRTC registers the destructors of its statics during its first compile,
// after the hooks registered with the first worker, so those ran after them; this one is
// registered after NVRTC's and runs before them, whichever thread calls exit() (the main
// thread's exit guard below acts only where the main thread armed it: in the device fuzzer's
// four-thread batches it never queued a compile, and 7 of 32 batches on the H200 crashed at
// exit in nvrtcCompileProgram, on a pool worker). Called with t.mu held.
void after_first_compile(TierState& t) {
  if (t.late_exit_hook) return;
  t.late_exit_hook = true;
  std::atexit([] { stop_background_work(); });
}

void worker() {
  // The lowest priority (Linux: nice is per thread).
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);
  TierState& t = tiers();
  std::unique_lock<std::mutex> lk(t.mu);
  for (;;) {
    t.cv.wait(lk, [&] { return t.stopping || !t.queue.empty(); });
    // Parked for good once the process exits: a worker that returned here would run its
    // thread-exit destructors while the main thread tears the process down (a rare SIGSEGV at
    // exit in the device fuzzer's four-thread batches, after all their programs had passed).
    while (t.stopping) t.cv.wait(lk);
    const std::string key = std::move(t.queue.front());
    t.queue.pop_front();
    const std::shared_ptr<TieredStep> first = t.waiting.at(key).front();
    ++t.busy;
    lk.unlock();
    CompiledKernelPtr k;
    std::string failure;
    try {
      k = compile_kernel(first->source, first->name, first->arch);
    } catch (const std::exception& e) {
      failure = e.what();
      log(LogChannel::Compile, "background compile of {} failed; it stays interpreted", first->name);
    }
    counters().background_compiles.fetch_add(1, std::memory_order_relaxed);
    lk.lock();
    after_first_compile(t);
    if (k) {
      // The steps' hints, stored before the compile counts as done (a process exiting waits
      // for it: the next one's first call then finds the kernel before its launch).
      std::vector<std::string> hints;
      if (t.hinted.size() > 16384) t.hinted.clear();  // bounded as the plan cache is (the disk keeps them)
      for (const auto& s : t.waiting.at(key))
        if (!s->hint.empty() && t.hinted.insert(s->hint).second) hints.push_back(s->hint);
      lk.unlock();
      for (const auto& h : hints) (void)store_tier_hint(h, *k);
      lk.lock();
    }
    std::vector<std::shared_ptr<TieredStep>> steps = std::move(t.waiting.at(key));
    t.waiting.erase(key);
    --t.busy;
    for (const auto& s : steps) s->publish(k, failure);
    if (t.busy == 0 && (t.queue.empty() || t.stopping)) t.idle.notify_all();
  }
}

// At exit: no new compile starts; wait for the running ones (std::atexit, registered with the
// first worker, after the CUDA runtime's own teardown was registered, so it runs before it).
void stop_at_exit() {
  TierState& t = tiers();
  std::unique_lock<std::mutex> lk(t.mu);
  t.stopping = true;
  t.queue.clear();
  t.cv.notify_all();
  t.idle.wait(lk, [&] { return t.busy == 0; });
}

// The exiting thread's guard. exit() (and a return from main) runs the calling thread's
// thread_local destructors before any atexit handler (glibc's __run_exit_handlers), so this
// one runs before the destructors NVRTC registers for the statics its first compile makes.
// Those were registered after our atexit hooks and so ran before them: a background compile
// still running then crashed in nvrtcCompileProgram (__sigsetjmp; five of fourteen device
// fuzz batches on the H200, and W12's warm-cache child). Armed in each thread that queues a
// compile or first uses a device; it acts only where the thread is the main one (its end is
// the process's), stopping the pool and the start-up warm-up and waiting for their running
// NVRTC work. The atexit hooks stay for an exit from another thread.
struct ExitGuard {
  ExitGuard() = default;
  ExitGuard(const ExitGuard&) = delete;
  ExitGuard& operator=(const ExitGuard&) = delete;
  ~ExitGuard() {
    if (::getpid() == static_cast<pid_t>(::syscall(SYS_gettid))) stop_background_work();
  }
};
void arm_exit_guard() {
  thread_local ExitGuard guard;
  (void)&guard;
}

void queue_compile(const std::shared_ptr<TieredStep>& step) {
  arm_exit_guard();
  TierState& t = tiers();
  const std::string key = compile_key(step->source, step->name, step->arch);
  std::lock_guard<std::mutex> lk(t.mu);
  if (t.stopping) return;  // the process is exiting: the step stays interpreted
  auto [it, fresh] = t.waiting.try_emplace(key);
  it->second.push_back(step);
  if (!fresh) return;  // one compile per key: this step waits for the one queued
  t.queue.push_back(key);
  if (t.workers < max_workers() && t.workers <= t.busy) {
    if (!t.exit_hook) {
      t.exit_hook = true;
      std::atexit(stop_at_exit);
    }
    ++t.workers;
    std::thread(worker).detach();  // lives for the process, as the context does
  }
  t.cv.notify_one();
}

}  // namespace

void TieredStep::publish(CompiledKernelPtr k, std::string failure) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    kernel_ = std::move(k);
    failure_ = std::move(failure);
  }
  ready_.store(true, std::memory_order_release);
}

std::string tier_hint_key(const GraphScan& scan, size_t step, int arch) {
  const Settings& s = settings();
  // What code generation reads besides the graph: the settings below (CSE is in the signature
  // already: it runs before the scan). Not the device's SM count (a reduction's split), so that
  // a cache precompiled without a device (cufuse-dump-kernels --precompile) gives hints too:
  // where the count changes a kernel, its hint finds no kernel, and the step is interpreted.
  std::string k = fmt::format("tier hint 2\narch {}\new_unroll {}\new_view_blocks {}\new_parts {}\nsplit_blocks {}\n"
                              "max_kernel_ops {}\nstep {}\nsignature {}\n",
                              arch, s.ew_unroll, s.ew_view_blocks, s.ew_parts ? 1 : 0, s.split_blocks, s.max_kernel_ops, step,
                              scan.key.size());
  k.append(reinterpret_cast<const char*>(scan.key.data()), scan.key.size() * sizeof(int64_t));
  return k;
}

TierHint find_tier_hint(const std::string& hint) {
  TierHint h;
  {
    TierState& t = tiers();
    std::lock_guard<std::mutex> lk(t.mu);
    h.found = t.hinted.count(hint) > 0;
  }
  if (!h.found) {
    h.entry = disk_cache_load_hint(hint);
    h.found = h.entry.has_value();
  }
  return h;
}

CompiledKernelPtr hinted_kernel(const std::string& hint, TierHint found, const KernelSpec& spec, int arch) {
  HintPreload pre(hint, [&found] { return std::move(found); }, nullptr, nullptr);
  return hinted_kernel(hint, pre, spec, arch);
}

CompiledKernelPtr hinted_kernel(const std::string& hint, HintPreload& pre, const KernelSpec& spec, int arch) {
  // The entry's kernel is this source's only where the keys are equal byte for byte: the key
  // holds the arch, every NVRTC option, the name and the whole source (the comparison the
  // kernel's own entry makes on read; the entry's file was salted with the same cufuse and
  // NVRTC versions). A hint of another kernel (a setting or a code generator the hint key does
  // not see) fails here, its preloaded module is dropped, and the step goes on as without the
  // entry.
  TierHint& found = pre.hint();
  if (found.entry && found.entry->compile_key == compile_key(spec.source, spec.name, arch)) {
    PreloadResult& loaded = pre.loaded();
    if (!loaded.error.empty()) {
      // A CUBIN the driver refuses (a damaged file whose checksum held): not taken, and the
      // step compiles (the background pool stores a new hint once its kernel is built).
      pre.discard();
      log(LogChannel::Cache, "a hint's kernel {} does not load ({}); it is compiled", spec.name, loaded.error);
      return nullptr;
    }
    bool used = false;
    CompiledKernelPtr k = adopt_disk_kernel(spec.source, spec.name, arch, std::move(found.entry->cubin),
                                            std::move(found.entry->log), loaded.device, loaded.loaded.kernel, &used);
    if (used) pre.take();
    else pre.discard();
    TierState& t = tiers();
    std::lock_guard<std::mutex> lk(t.mu);
    if (t.hinted.size() > 16384) t.hinted.clear();
    t.hinted.insert(hint);  // a plan of the same structure built again finds it in memory
    return k;
  }
  pre.discard();
  if (found.entry) log(LogChannel::Cache, "a hint's kernel is not the one of {}'s source", spec.name);
  return find_compiled_kernel(spec.source, spec.name, arch);
}

std::shared_ptr<HintPreload> make_hint_preload(std::string hint, int arch) {
  TierState& t = tiers();
  KernelLoader loader;
  {
    std::lock_guard<std::mutex> lk(t.mu);
    loader = t.test_loader;
  }
  int device = 0;
  if (!loader.load) {
    if (Device::count() <= 0) return std::make_shared<HintPreload>(hint, [hint] { return find_tier_hint(hint); }, nullptr, nullptr);
    device = current_device();
    const int cc = device_props(device).cc;
    loader.load = load_kernel_library;
    loader.unload = unload_library;
    if (!cubin_runs_on(arch, cc)) loader.load = nullptr;  // kernel_for says why, at the launch
  }
  HintPreload::Load load;
  if (loader.load)
    load = [device, f = std::move(loader.load)](const DiskCacheHint& e) {
      PreloadResult r;
      const std::string name = compile_key_name(e.compile_key);
      if (name.empty()) return r;  // not a compile key: the comparison refuses the entry anyway
      r.loaded = f(e.cubin, name, device);
      r.device = device;
      return r;
    };
  return std::make_shared<HintPreload>(hint, [hint] { return find_tier_hint(hint); }, std::move(load),
                                       std::move(loader.unload));
}

void submit_hint_preload(const std::shared_ptr<HintPreload>& pre) {
  if (!pre->loads() || !pre->mark_submitted()) return;  // nothing to load: the hint is read where it is needed
  arm_exit_guard();
  if (tiers().loader.submit(pre)) std::atexit([] { tiers().loader.stop(); });
}

void set_kernel_loader_for_tests(KernelLoader loader) {
  TierState& t = tiers();
  std::lock_guard<std::mutex> lk(t.mu);
  t.test_loader = std::move(loader);
}

void wait_for_preloads() { tiers().loader.wait_idle(); }

void forget_tier_hints() {
  TierState& t = tiers();
  std::lock_guard<std::mutex> lk(t.mu);
  t.hinted.clear();
}

bool store_tier_hint(const std::string& hint, const CompiledKernel& k) {
  return disk_cache_store_hint(hint, compile_key(k.source, k.name, k.arch), k.cubin, k.log);
}

void defer_tier(Step& st, BytecodeProgram prog, int arch, std::string hint) {
  auto t = std::make_shared<TieredStep>();
  st.spec.numel = prog.spec.numel;
  t->interp = std::move(prog.spec);
  t->arch = arch;
  t->hint = std::move(hint);
  t->background = true;
  t->deferred = true;
  st.tier = std::move(t);
}

void start_deferred(Step& st) {
  TieredStep& t = *st.tier;
  t.source = st.spec.source;
  t.name = st.spec.name;
  t.deferred = false;
  queue_compile(st.tier);
}

void choose_tier(Step& st, BytecodeProgram prog, int arch, std::string hint, bool looked_up) {
  const TieredMode mode = settings().tiered;
  if (mode != TieredMode::Off && prog.refusal.empty()) {
    // CUFUSE_TIERED=interpret runs every group it can on the interpreter, even one whose kernel
    // a memory or disk cache holds (W3-interp after W3 ran W3's cached kernel).
    const bool ask = mode == TieredMode::On && !looked_up;
    if (CompiledKernelPtr k = ask ? find_compiled_kernel(st.spec.source, st.spec.name, arch) : nullptr) {
      st.kernel = std::move(k);
      return;
    }
    auto t = std::make_shared<TieredStep>();
    t->interp = std::move(prog.spec);
    t->source = st.spec.source;
    t->name = st.spec.name;
    t->arch = arch;
    t->hint = std::move(hint);
    t->background = mode == TieredMode::On;
    st.tier = t;
    if (t->background) queue_compile(t);
    return;
  }
  st.interp_refusal = mode == TieredMode::Off ? "CUFUSE_TIERED=0" : prog.refusal;
  st.kernel = compile_kernel(st.spec.source, st.spec.name, arch);
}

namespace {
// The interpreter's kernels, in TierState::interp's order.
constexpr const char* kInterpKernels[] = {kInterpKernelName, kInterpNarrowKernelName, kInterpRowsKernelName};

// Kernel kInterpKernels[which] on `device`. The image holds the three kernels: the first
// caller loads it once for all of them (three loads of the whole image each took the driver
// for as long, beside a warm first call's own module load).
void* load_interpreter(int device, bool warm_up, size_t which) {
  TierState& t = tiers();
  if (device < 0 || device >= static_cast<int>(t.interp[0].size())) return nullptr;
  static constexpr uintptr_t kNone = 1;
  const size_t d = static_cast<size_t>(device);
  void* k = t.interp[which][d].load(std::memory_order_acquire);
  if (!k) {
    std::unique_lock<std::mutex> lk = t.load_gate.enter(warm_up);
    struct Leave {
      LoadGate& g;
      bool on;
      ~Leave() {
        if (on) g.leave_warm_up();
      }
    } leave{t.load_gate, warm_up};
    k = t.interp[which][d].load(std::memory_order_relaxed);
    if (!k) {
      std::vector<void*> ks(std::size(kInterpKernels), reinterpret_cast<void*>(kNone));
      const InterpImage* im = interp_image_for(device_props(device).cc);
      if (im) {
        try {
          ks = load_library_kernels(im->data, im->size, {std::begin(kInterpKernels), std::end(kInterpKernels)}, device);
          log(LogChannel::Launch, "loaded the bytecode interpreter ({}_{}) on device {}", im->ptx ? "compute" : "sm",
              im->arch, device);
        } catch (const Error& e) {
          // An image the driver refuses (a PTX its JIT cannot take: an sm_90 instruction in the
          // compute_80 image once) leaves this device without the interpreter: its kernels wait
          // for NVRTC, as with no image, instead of every first call failing.
          log(LogChannel::Launch, "the bytecode interpreter ({}_{}) does not load on device {}: {}; kernels wait for NVRTC",
              im->ptx ? "compute" : "sm", im->arch, device, e.what());
        }
      } else {
        log(LogChannel::Launch, "no bytecode interpreter image for sm_{}: kernels wait for NVRTC", device_props(device).cc);
      }
      for (size_t i = 0; i < ks.size(); ++i) t.interp[i][d].store(ks[i], std::memory_order_release);
      k = ks[which];
    }
  }
  return k == reinterpret_cast<void*>(kNone) ? nullptr : k;
}

void stop_background_work() {
  startup_warmup().stop();
  tiers().loader.stop();
  stop_at_exit();
}

// The first use of a device (runtime/first_use.hpp): the start-up warm-up, unless nothing
// would be interpreted (CUFUSE_TIERED=0).
void on_first_device_use(int device) {
  if (settings().tiered == TieredMode::Off) return;
  arm_exit_guard();
  StartupSteps steps;
  steps.load_image = [](int d) {
    load_interpreter(d, true, 0);  // all three kernels
    // The preamble's chunks and their dependencies, cut once a process (about 0.5 ms), here
    // rather than in the first call's source.
    (void)kernel_preamble("");
  };
  // NVRTC's warm-up: a process that exits while it runs waits for it in the exit guard above
  // (without the guard, W12's warm-cache child crashed inside it on the H200).
  steps.warm_compiler = [] {
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);  // as the pool's
    nvrtc::warm_up(base_compile_options(default_arch()));
    TierState& t = tiers();
    std::lock_guard<std::mutex> lk(t.mu);
    after_first_compile(t);
  };
  if (startup_warmup().start(device, std::move(steps))) std::atexit([] { startup_warmup().stop(); });
}
const bool g_first_use_hook = [] {
  set_first_device_use_hook(&on_first_device_use);
  // Static initialization runs on the main thread: its exit guard is armed before any thread
  // queues a compile, so a return from main stops the pool first, whichever threads used the
  // device (NVRTC may register destructors in later compiles too, after after_first_compile's
  // hook; the main thread's thread_local destructors run before every atexit handler).
  arm_exit_guard();
  return true;
}();
}  // namespace

void* interpreter_kernel(int device, const std::string& name) {
  for (size_t which = 0; which < std::size(kInterpKernels); ++which)
    if (name == kInterpKernels[which]) return load_interpreter(device, false, which);
  throw InternalError(fmt::format("no interpreter kernel {}", name));
}

StartupWarmup& startup_warmup() { return tiers().startup; }

const CompiledKernel* current_kernel(const Step& st) {
  if (st.kernel) return st.kernel.get();
  if (st.tier) return st.tier->compiled().get();
  return nullptr;
}

CompiledKernelPtr compiled_now(const Step& st) {
  if (st.kernel) return st.kernel;
  if (CompiledKernelPtr k = st.tier->compiled()) return k;
  if (st.tier->source.empty())  // deferred, and its source could not be made (see its failure)
    throw InternalError(fmt::format("a tiered step has no kernel source: {}", st.tier->failure()));
  return compile_kernel(st.tier->source, st.tier->name, st.tier->arch);  // the pool's, if it is on it
}

const CompiledKernel* kernel_for_run(const Step& st, int device) {
  const CompiledKernel* k = current_kernel(st);
  if (!st.tier) return k;
  if (!k && !interpreter_kernel(device, st.tier->interp.name)) k = compiled_now(st).get();  // no image: wait
  if (k && !st.tier->swapped.exchange(true)) {
    counters().tier_swaps++;
    log(LogChannel::Launch, "kernel {} takes over from the interpreter", k->name);
  }
  return k;
}

void wait_for_background_compiles() {
  TierState& t = tiers();
  std::unique_lock<std::mutex> lk(t.mu);
  t.idle.wait(lk, [&] { return t.queue.empty() && t.busy == 0; });
}

std::string describe_tier(const Step& st) {
  if (st.tier) {
    const std::string state = st.tier->compiled() ? "its compiled kernel has taken over"
                              : st.tier->deferred ? "its source is generated after the first launch"
                              : st.tier->background ? "NVRTC compiles it in the background"
                                                    : "never compiled (CUFUSE_TIERED=interpret)";
    return fmt::format("tier: interpreter ({}); {}", st.tier->interp.summary, state);
  }
  if (!st.interp_refusal.empty()) return fmt::format("tier: compiled (the interpreter cannot: {})", st.interp_refusal);
  return {};
}

}  // namespace cufuse::detail
