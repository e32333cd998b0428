// tests/test_context.cpp: the runtime context (src/runtime/context.hpp): one object per slot
// however many threads ask at once, the same one for the process, and the public knobs
// (cufuse::Config, stats) kept there.
#include <doctest/doctest.h>

#include <latch>
#include <thread>
#include <vector>

#include "cufuse/eval.hpp"
#include "core/counters.hpp"
#include "runtime/context.hpp"

namespace d = cufuse::detail;

TEST_CASE("context: threads asking for a slot at once get one object") {
  constexpr int kThreads = 8;
  std::vector<const void*> seen(kThreads, nullptr);
  std::latch go(kThreads);
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; ++i)
    ts.emplace_back([&, i] {
      go.arrive_and_wait();
      seen[i] = &d::runtime().state<d::Counters>();
    });
  for (auto& t : ts) t.join();
  for (const void* p : seen) CHECK(p == &d::counters());
  CHECK(&d::runtime() == &d::RuntimeContext::get());
}

TEST_CASE("context: cufuse::Config lives in the context and round-trips") {
  const cufuse::Config before = cufuse::config();
  cufuse::Config c = before;
  c.max_pending_nodes = 1234;
  c.max_pinned_bytes = 5678;
  cufuse::set_config(c);
  CHECK(cufuse::config().max_pending_nodes == 1234);
  CHECK(cufuse::config().max_pinned_bytes == 5678);
  cufuse::set_config(before);
  CHECK(cufuse::config().max_pending_nodes == before.max_pending_nodes);
}
