// src/exec/startup.cpp: the process-start warm-up (exec/startup.hpp): its thread and the
// load gate. The real steps and the hook are installed by exec/tiered.cpp.
#include "exec/startup.hpp"

#include <chrono>
#include <exception>

#include "core/counters.hpp"
#include "runtime/log.hpp"

namespace cufuse::detail {

std::unique_lock<std::mutex> LoadGate::enter(bool warm_up) {
  std::unique_lock<std::mutex> lk(mu_, std::try_to_lock);
  if (!lk.owns_lock()) {
    if (!warm_up && warm_up_holds_.load(std::memory_order_acquire))
      counters().startup_waits.fetch_add(1, std::memory_order_relaxed);
    lk.lock();
  }
  if (warm_up) warm_up_holds_.store(true, std::memory_order_release);
  return lk;
}

bool StartupWarmup::start(int device, StartupSteps steps) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (started_ || stopping_) return false;
    started_ = running_ = true;
  }
  phase_.store(Phase::Loading, std::memory_order_release);
  std::thread([this, device, s = std::move(steps)]() mutable { run(device, std::move(s)); }).detach();
  return true;
}

void StartupWarmup::run(int device, StartupSteps steps) {
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); };
  auto step = [&](Phase p, const std::function<void()>& f, double& took) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (stopping_) return false;
      phase_.store(p, std::memory_order_release);
    }
    const auto t0 = clock::now();
    try {
      f();
    } catch (const std::exception& e) {  // the call that needs it reports it
      log(LogChannel::Launch, "start-up warm-up: {}", e.what());
    }
    took = ms(t0);
    return true;
  };
  const bool loaded = step(Phase::Loading, [&] { if (steps.load_image) steps.load_image(device); }, load_ms_);
  const bool warmed = loaded && step(Phase::Warming, [&] { if (steps.warm_compiler) steps.warm_compiler(); }, warm_ms_);
  std::lock_guard<std::mutex> lk(mu_);
  if (warmed) {
    counters().startup_warmups.fetch_add(1, std::memory_order_relaxed);
    log(LogChannel::Compile, "start-up warm-up on device {}: interpreter image {:.1f} ms, NVRTC {:.1f} ms", device,
        load_ms_, warm_ms_);
  }
  phase_.store(warmed ? Phase::Done : Phase::Stopped, std::memory_order_release);
  running_ = false;
  done_.notify_all();
}

void StartupWarmup::stop() {
  std::unique_lock<std::mutex> lk(mu_);
  stopping_ = true;
  done_.wait(lk, [&] { return !running_; });
  if (!started_) phase_.store(Phase::Stopped, std::memory_order_release);
}

void StartupWarmup::wait() {
  std::unique_lock<std::mutex> lk(mu_);
  done_.wait(lk, [&] { return !running_; });
}

}  // namespace cufuse::detail
