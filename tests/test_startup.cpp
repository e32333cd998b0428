// tests/test_startup.cpp: the process-start warm-up (src/exec/startup.hpp) with fake steps, no
// device: one start per process, its steps in order and counted, a stop at exit that waits
// for the running step and skips the rest, and the load gate: a call that needs the image
// while the warm-up loads it waits for that load (counted), never deadlocks, and a call that
// comes first loads it itself.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "cufuse/eval.hpp"
#include "exec/startup.hpp"

namespace d = cufuse::detail;
using Phase = d::StartupWarmup::Phase;

TEST_CASE("start-up warm-up: starts once, loads then warms, counted in stats()") {
  d::StartupWarmup w;
  std::vector<int> order;
  std::mutex mu;
  d::StartupSteps steps;
  steps.load_image = [&](int dev) {
    std::lock_guard<std::mutex> lk(mu);
    order.push_back(100 + dev);
  };
  steps.warm_compiler = [&] {
    std::lock_guard<std::mutex> lk(mu);
    order.push_back(1);
  };
  cufuse::reset_stats();
  CHECK(w.phase() == Phase::Idle);
  CHECK(w.start(3, steps));
  CHECK_FALSE(w.start(4, steps));  // once per process
  w.wait();
  CHECK(w.phase() == Phase::Done);
  CHECK(order == std::vector<int>{103, 1});
  CHECK(cufuse::stats().startup_warmups == 1);
  CHECK(cufuse::stats().startup_waits == 0);
  w.stop();  // after the end: returns at once
  CHECK(w.phase() == Phase::Done);
}

TEST_CASE("start-up warm-up: a stop while a step runs waits for it and skips the rest; a failing step is no crash") {
  d::StartupWarmup w;
  std::latch in_load(1), release(1);
  std::atomic<bool> warmed{false}, load_done{false};
  d::StartupSteps steps;
  steps.load_image = [&](int) {
    in_load.count_down();
    release.wait();
    load_done = true;
  };
  steps.warm_compiler = [&] { warmed = true; };
  cufuse::reset_stats();
  REQUIRE(w.start(0, steps));
  in_load.wait();
  CHECK(w.phase() == Phase::Loading);
  std::thread stopper([&] { w.stop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(load_done.load());  // stop is waiting for the load
  release.count_down();
  stopper.join();
  CHECK(load_done.load());
  CHECK_FALSE(warmed.load());
  CHECK(w.phase() == Phase::Stopped);
  CHECK(cufuse::stats().startup_warmups == 0);
  CHECK_FALSE(w.start(0, steps));  // not after a stop

  d::StartupWarmup w2;
  d::StartupSteps throwing;
  throwing.load_image = [](int) { throw std::runtime_error("no image"); };
  throwing.warm_compiler = [&] { warmed = true; };
  REQUIRE(w2.start(0, throwing));
  w2.wait();
  CHECK(w2.phase() == Phase::Done);  // the call that needs the image reports the failure
  CHECK(warmed.load());

  d::StartupWarmup never;
  never.stop();  // stopped before any start (an exit without a device use)
  CHECK(never.phase() == Phase::Stopped);
  CHECK_FALSE(never.start(0, steps));
}

TEST_CASE("load gate: a first call that needs the image while the warm-up loads it waits for that load, counted") {
  d::LoadGate gate;
  d::StartupWarmup w;
  std::latch in_load(1), release(1);
  std::atomic<int> loads{0};
  bool loaded = false;  // under the gate
  auto load = [&](bool warm_up) {
    std::unique_lock<std::mutex> lk = gate.enter(warm_up);
    struct Leave {
      d::LoadGate& g;
      bool on;
      ~Leave() {
        if (on) g.leave_warm_up();
      }
    } leave{gate, warm_up};
    if (loaded) return;
    if (warm_up) {
      in_load.count_down();
      release.wait();
    }
    ++loads;
    loaded = true;
  };
  d::StartupSteps steps;
  steps.load_image = [&](int) { load(true); };
  cufuse::reset_stats();
  REQUIRE(w.start(0, steps));
  in_load.wait();
  std::thread call([&] { load(false); });  // the first call: needs the image now
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  release.count_down();
  call.join();
  w.wait();
  CHECK(loads == 1);  // loaded once, by the warm-up
  CHECK(cufuse::stats().startup_waits == 1);

  // A call that takes the gate first loads it itself; the warm-up then finds it loaded and
  // nothing counts as a wait (the warm-up's own wait is not a call's).
  d::LoadGate gate2;
  std::unique_lock<std::mutex> held = gate2.enter(false);
  std::atomic<bool> entered{false};
  std::thread warm([&] {
    auto lk = gate2.enter(true);
    gate2.leave_warm_up();
    entered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK_FALSE(entered.load());
  held.unlock();
  warm.join();
  CHECK(entered.load());
  CHECK(cufuse::stats().startup_waits == 1);
}
