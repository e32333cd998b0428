// src/exec/hint_preload.cpp: a tier hint's read and its kernel's load, run by whichever thread
// gets to them first, and the loader thread (see hint_preload.hpp).
#include "exec/hint_preload.hpp"

#include <chrono>
#include <exception>
#include <thread>
#include <utility>

namespace cufuse::detail {

HintPreload::HintPreload(std::string key, Read read, Load load, Unload unload)
    : key_(std::move(key)), read_fn_(std::move(read)), load_fn_(std::move(load)), unload_fn_(std::move(unload)) {}

HintPreload::~HintPreload() {
  // Nobody runs a stage now (the loader holds its own reference while it works).
  if (!taken_ && result_.loaded.library && unload_fn_) unload_fn_(result_.loaded.library);
}

void HintPreload::wait_done(std::unique_lock<std::mutex>& lk, const std::atomic<Stage>& stage, bool spin) {
  if (spin) {
    lk.unlock();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    while (stage.load(std::memory_order_acquire) != Stage::Done && std::chrono::steady_clock::now() < until) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#else
      std::this_thread::yield();
#endif
    }
    lk.lock();
  }
  cv_.wait(lk, [&] { return stage.load(std::memory_order_relaxed) == Stage::Done; });
}

void HintPreload::run_read(std::unique_lock<std::mutex>& lk, bool spin) {
  if (read_ != Stage::Pending) {
    wait_done(lk, read_, spin);
    return;
  }
  read_ = Stage::Running;
  lk.unlock();
  TierHint h;
  try {
    h = read_fn_();
  } catch (...) {  // an unreadable hint is a miss, as an unreadable entry is (disk_cache.hpp)
    h = TierHint{};
  }
  lk.lock();
  hint_ = std::move(h);
  read_ = Stage::Done;
  cv_.notify_all();
}

void HintPreload::run_load(std::unique_lock<std::mutex>& lk, bool spin) {
  if (load_ == Stage::Running) wait_done(lk, load_, spin);
  if (load_ == Stage::Done) return;
  if (discarded_ || !hint_.entry || !load_fn_) {
    load_ = Stage::Done;
    cv_.notify_all();
    return;
  }
  load_ = Stage::Running;
  lk.unlock();
  PreloadResult r;
  try {
    r = load_fn_(*hint_.entry);  // hint_ is not written while the load runs (loaded() waits for it)
  } catch (const std::exception& e) {
    r = PreloadResult{};
    r.error = e.what();
  } catch (...) {
    r = PreloadResult{};
    r.error = "an unknown error";
  }
  if (r.error.empty() && !r.loaded.kernel && r.device >= 0) r.error = "the load gave no kernel";
  lk.lock();
  result_ = std::move(r);
  load_ = Stage::Done;
  cv_.notify_all();
  if (discarded_) drop_library(lk);  // refused while it loaded
}

void HintPreload::drop_library(std::unique_lock<std::mutex>& lk) {
  void* lib = std::exchange(result_.loaded.library, nullptr);
  result_.loaded.kernel = nullptr;
  if (!lib || taken_ || !unload_fn_) return;
  lk.unlock();
  unload_fn_(lib);
  lk.lock();
}

void HintPreload::work() {
  std::unique_lock<std::mutex> lk(mu_);
  run_read(lk, false);
  run_load(lk, false);
}

TierHint& HintPreload::hint() {
  std::unique_lock<std::mutex> lk(mu_);
  run_read(lk, true);
  return hint_;
}

PreloadResult& HintPreload::loaded() {
  std::unique_lock<std::mutex> lk(mu_);
  run_read(lk, true);
  run_load(lk, true);
  return result_;
}

void HintPreload::take() {
  std::lock_guard<std::mutex> lk(mu_);
  taken_ = true;
}

void HintPreload::discard() {
  std::unique_lock<std::mutex> lk(mu_);
  discarded_ = true;
  if (load_ == Stage::Done) drop_library(lk);
  // Pending: run_load skips it. Running: the loading thread drops it when done.
}

bool PreloadThread::submit(std::shared_ptr<HintPreload> p) {
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return false;
  queue_.push_back(std::move(p));
  queued_.store(queue_.size(), std::memory_order_release);
  cv_.notify_one();
  if (started_) return false;
  started_ = true;
  std::thread([this] { loop(); }).detach();  // lives for the process, as the context does
  return true;
}

void PreloadThread::loop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (queue_.empty() && !stopping_) {  // poll a while (queued_) before parking
      lk.unlock();
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
      while (queued_.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      lk.lock();
    }
    cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
    // Parked for good once the process exits (the compile pool's workers do the same).
    while (stopping_) cv_.wait(lk);
    std::shared_ptr<HintPreload> p = std::move(queue_.front());
    queue_.pop_front();
    queued_.store(queue_.size(), std::memory_order_release);
    running_ = true;
    lk.unlock();
    p->work();
    p.reset();  // may unload a library nobody took
    lk.lock();
    running_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

void PreloadThread::stop() {
  std::unique_lock<std::mutex> lk(mu_);
  stopping_ = true;
  std::deque<std::shared_ptr<HintPreload>> dropped = std::move(queue_);
  queue_.clear();
  queued_.store(0, std::memory_order_release);
  cv_.notify_all();
  idle_.wait(lk, [&] { return !running_; });
  lk.unlock();
  // `dropped` goes here: their stages run where they are needed, or never.
}

void PreloadThread::wait_idle() {
  std::unique_lock<std::mutex> lk(mu_);
  idle_.wait(lk, [&] { return queue_.empty() && !running_; });
}

}  // namespace cufuse::detail
