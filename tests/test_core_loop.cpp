// tests/test_core_loop.cpp: a growing lazy graph evaluates itself before it grows past
// its budget: `x = x + 1` a hundred thousand times stays bounded in graph size, kernels
// compiled and memory.
#include <chrono>

#include "test_core_helpers.hpp"

TEST_CASE("x = x + 1 in a long loop stays bounded") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::zeros({16}, cf::f32);
  cf::reset_stats();
  const int steps = 100000;
  int max_pending = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) {
    x = x + 1;
    max_pending = std::max(max_pending, x.node()->pending);
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(host<float>(x)[7] == float(steps));
  CHECK(max_pending <= cf::config().max_pending_nodes + 1);
  CHECK(cf::stats().auto_evaluations >= uint64_t(steps / (cf::config().max_pending_nodes + 1)));
  // the chunks share one kernel: a few distinct kernels at most, not one per chunk
  CHECK(cf::stats().kernels_compiled + cf::stats().memory_cache_hits + cf::stats().disk_cache_hits >= 1);
  CHECK(cf::stats().kernels_compiled <= 3);
  MESSAGE("100000 lazy steps took " << ms << " ms on the reference backend");
}

TEST_CASE("memory that only a lazy graph keeps alive bounds it too") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Config saved = cf::config();
  cf::Config c = saved;
  c.max_pinned_bytes = 1 << 20;  // 1 MiB
  cf::set_config(c);
  cf::reset_stats();
  auto acc = cf::zeros({65536}, cf::f32);
  for (int i = 0; i < 40; ++i) {
    acc = acc + cf::full({65536}, 1.0f, cf::f32).eval();  // 256 KiB of memory each, dead after this line
    CHECK(acc.node()->pins.total() <= (uint64_t(1) << 20) + 16 * 65536 * 4);
  }
  CHECK(cf::stats().auto_evaluations > 0);
  CHECK(host<float>(acc)[100] == 40.0f);
  cf::set_config(saved);
}
