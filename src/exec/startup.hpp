// src/exec/startup.hpp: process start (issue 35). At the first use of a device
// (runtime/first_use.hpp) a background thread loads the bytecode interpreter's image on it
// and then warms NVRTC with a tiny compile, so that neither sits on the first call's path:
// a first call that runs interpreted finds the image loaded, and the background compile of
// its kernel finds NVRTC started. Not with CUFUSE_TIERED=0 (nothing is interpreted then, and
// the first compile stays where it was). A call that needs the image while the thread loads
// it waits for that load (LoadGate), never for the NVRTC warm-up; at exit no new step starts
// and the running one is awaited (as the compile pool's stop, exec/tiered.cpp).
// The steps are functions, so tests run the logic with fakes and no device.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace cufuse::detail {

// One load shared by the warm-up thread and the calls that need it: whoever comes first
// loads, the other waits (a call that finds the warm-up loading counts a startup_wait).
class LoadGate {
 public:
  // Locks the gate for a load; `warm_up`: the caller is the warm-up thread.
  std::unique_lock<std::mutex> enter(bool warm_up);
  // Marks the warm-up thread's load done (call before releasing the lock it got).
  void leave_warm_up() { warm_up_holds_.store(false, std::memory_order_release); }

 private:
  std::mutex mu_;
  std::atomic<bool> warm_up_holds_{false};
};

struct StartupSteps {
  std::function<void(int device)> load_image;  // the interpreter's image onto `device`
  std::function<void()> warm_compiler;         // a tiny NVRTC compile
};

class StartupWarmup {
 public:
  enum class Phase { Idle, Loading, Warming, Done, Stopped };
  // Starts the thread for `device` the first time (later calls, and calls after stop, do
  // nothing); false when this call did not start it.
  bool start(int device, StartupSteps steps);
  // No step starts after this; waits for the running one. For std::atexit and tests.
  void stop();
  // Waits for the thread to finish (tests, benchmarks).
  void wait();
  Phase phase() const { return phase_.load(std::memory_order_acquire); }
  double load_ms() const { return load_ms_; }    // valid once Done
  double warm_ms() const { return warm_ms_; }

 private:
  void run(int device, StartupSteps steps);
  std::mutex mu_;
  std::condition_variable done_;
  bool started_ = false, stopping_ = false, running_ = false;
  std::atomic<Phase> phase_{Phase::Idle};
  double load_ms_ = 0, warm_ms_ = 0;
};

// The process's warm-up (held by the tiered state, exec/tiered.cpp).
StartupWarmup& startup_warmup();

}  // namespace cufuse::detail
