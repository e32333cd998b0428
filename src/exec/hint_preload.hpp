// src/exec/hint_preload.hpp: a tier hint's kernel made ready off the first call's path
// (issue 35). A new plan's step whose hint (exec/tiered.hpp) is on disk gets its kernel's CUBIN
// from the hint's entry before its source exists; making the source and comparing the compile
// keys then take the main thread about 0.1 ms. A HintPreload is the two stages that need no
// source: reading the hint (`read`, done by the building thread: it decides whether the source
// is made first) and loading the entry's CUBIN as a module on the device (`load`), run by the
// loader thread (PreloadThread, one a process, started with the first preload) while the
// building thread makes the source. Whichever thread needs a stage that nobody has started
// runs it itself, so nothing waits for the loader to wake up; a stage running on the other
// thread is waited for (the building thread spins a while first: the stages take tens of
// microseconds, about what a sleeping thread takes to wake). The loaded kernel is used only where the keys
// agree (tiered.cpp: hinted_kernel, which calls take()); otherwise it is dropped (discard(), or
// the destructor) and its library unloaded. A load that fails (a CUBIN the driver refuses) is
// recorded, never thrown: its caller does without the entry's kernel.
// The stages are functions, so tests run the logic with fakes and no device.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "compile/disk_cache.hpp"
#include "runtime/launch.hpp"

namespace cufuse::detail {

// What a step's hint found: nothing, this process's hint (its memory cache has or builds the
// kernel), or an earlier process's entry on disk holding the kernel.
struct TierHint {
  bool found = false;
  std::optional<DiskCacheHint> entry;
};

// What loading a hint entry's CUBIN gave: its kernel on `device` (null: not loaded), or the
// load's error.
struct PreloadResult {
  LoadedKernel loaded;
  int device = -1;
  std::string error;
};

class HintPreload {
 public:
  using Read = std::function<TierHint()>;
  using Load = std::function<PreloadResult(const DiskCacheHint&)>;  // may throw (an error)
  using Unload = std::function<void(void* library)>;
  // `load` null: nothing is loaded (no device); `unload` drops a library not taken.
  HintPreload(std::string key, Read read, Load load, Unload unload);
  ~HintPreload();
  HintPreload(const HintPreload&) = delete;
  HintPreload& operator=(const HintPreload&) = delete;

  const std::string& key() const { return key_; }
  bool loads() const { return static_cast<bool>(load_fn_); }  // a load function was given
  // True the first time only: the preload goes to the loader thread once.
  bool mark_submitted() { return !submitted_.exchange(true); }
  // The loader thread: every stage nobody has started.
  void work();
  // The hint as read (read here if nobody has started; waits while another thread reads).
  TierHint& hint();
  // The load of the entry's CUBIN (loaded here if nobody has started; waits while another
  // thread loads). Calls hint() first. Its entry may be moved from afterwards.
  PreloadResult& loaded();
  // The loaded kernel is in use: its library stays loaded.
  void take();
  // Not used: a load not started is skipped; a loaded library is unloaded (now, or by the
  // thread loading it once it is done).
  void discard();

 private:
  enum class Stage : unsigned char { Pending, Running, Done };
  // Waits for a stage another thread runs; `spin`: first without sleeping, a while (a caller on
  // the first call's path: the stages take tens of microseconds, about what a sleeping thread
  // takes to wake).
  void wait_done(std::unique_lock<std::mutex>& lk, const std::atomic<Stage>& stage, bool spin);
  void run_read(std::unique_lock<std::mutex>& lk, bool spin);
  void run_load(std::unique_lock<std::mutex>& lk, bool spin);
  void drop_library(std::unique_lock<std::mutex>& lk);  // unloads a library not taken

  const std::string key_;
  Read read_fn_;
  Load load_fn_;
  Unload unload_fn_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<Stage> read_{Stage::Pending}, load_{Stage::Pending};  // written under mu_
  bool taken_ = false, discarded_ = false;
  std::atomic<bool> submitted_{false};
  TierHint hint_;
  PreloadResult result_;
};

// The loader thread: runs the preloads it is given, oldest first, at the caller's priority.
class PreloadThread {
 public:
  // Queues `p` (its stages left to run); starts the thread the first time (then true: the
  // caller registers its exit hook). After stop(), nothing is queued: the preload's stages run
  // where they are needed.
  bool submit(std::shared_ptr<HintPreload> p);
  // No preload starts after this; waits for the running one (process exit: nothing is inside
  // a module load while the process tears down). The thread parks for good.
  void stop();
  // Waits until nothing is queued or running (tests).
  void wait_idle();

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<std::shared_ptr<HintPreload>> queue_;
  bool started_ = false, stopping_ = false, running_ = false;
  // queue_.size(), read without the lock: after a preload the thread polls it for a while
  // before it parks (a warm start's kernels come one call after another; waking a parked
  // thread took 20-45 us on the H100 hosts, and the caller waits for the load).
  std::atomic<size_t> queued_{0};
};

}  // namespace cufuse::detail
