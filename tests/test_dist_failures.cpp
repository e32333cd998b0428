// tests/test_dist_failures.cpp: failures on a host world. A rank that dies (simulated: it
// never arrives) makes the collective raise a CollectiveError naming the collective and its
// ranks after CUFUSE_DIST_TIMEOUT seconds, not hang; a rank that reports an error fails it at
// once; afterwards the world is broken (every collective raises at once, naming the first
// failure) until finalize; the world's state lives in the runtime context.
#include <chrono>

#include "dist/world.hpp"
#include "runtime/context.hpp"
#include "test_dist_helpers.hpp"
#include "test_sandbox.hpp"

namespace {

dist::DArray partial_sum(const dist::Mesh& mesh) {
  auto x = cf::random::uniform({8, 4}, cf::f32, 1);
  return dist::sum(dist::shard(x, mesh, {"gpu", dist::none}), 0);
}

}  // namespace

TEST_CASE("a dead rank: the allreduce raises a CollectiveError within the timeout, naming it and its ranks") {
  cufuse_test::ScopedEnv timeout("CUFUSE_DIST_TIMEOUT", "0.25");
  HostWorld w(4);
  dist::Mesh mesh({2, 2}, {"node", "gpu"});
  dist::simulate_failure(3, dist::Failure::Dead);
  auto s = partial_sum(mesh);
  const auto t0 = std::chrono::steady_clock::now();
  bool raised = false;
  try {
    dist::eval(s);  // finishes the partial sum: an allreduce (a gather would combine it where it lands)
  } catch (const dist::CollectiveError& e) {
    raised = true;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(waited >= 0.25);
    CHECK(waited < 5.0);
    CHECK(e.timed_out());
    CHECK(e.kind() == cf::ErrorKind::Cuda);
    CHECK(dynamic_cast<const cf::CudaError*>(&e) != nullptr);  // caught as any CUDA failure
    CHECK(e.collective() == "allreduce over 'gpu'");
    CHECK(e.ranks() == std::vector<int>{2, 3});  // the group of device 3 over 'gpu'
    CHECK(contains(e.what(), "did not complete within 0.25 s (CUFUSE_DIST_TIMEOUT)"));
    CHECK(contains(e.what(), "rank 3 did not arrive"));
  }
  CHECK(raised);
  // Broken: the next collective raises at once, naming the first failure.
  const auto t1 = std::chrono::steady_clock::now();
  const std::string again = error_of(
      [&] {
        auto p = partial_sum(mesh);
        dist::eval(p);
      },
      cf::ErrorKind::Cuda);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() < 0.2);
  CHECK(contains(again, "an earlier collective broke the world"));
  CHECK(contains(again, "rank 3 did not arrive"));
}

TEST_CASE("a rank that reports an error fails its collective at once; finalize and init mend the world") {
  cufuse_test::ScopedEnv timeout("CUFUSE_DIST_TIMEOUT", "30");
  cf::BackendScope ref(cf::Backend::Reference);
  {
    WorldScope w(dist::World::Host, 2);
    dist::Mesh mesh({2}, {"gpu"});
    dist::simulate_failure(1, dist::Failure::Error, 1);  // its second collective
    auto x = cf::random::uniform({4, 6}, cf::f64, 4);
    auto rows = dist::shard(x, mesh, {"gpu", dist::none});
    auto cols = dist::reshard(rows, {dist::none, "gpu"});  // the first: fine
    cf::testing::assert_array_equal(dist::gather(cols), x);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string msg = error_of([&] { (void)dist::reshard(cols, {dist::none, dist::none}); }, cf::ErrorKind::Cuda);
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 5.0);
    CHECK(contains(msg, "allgather over 'gpu'"));
    CHECK(contains(msg, "ranks 0, 1"));
    CHECK(contains(msg, "rank 1 reported an error"));
  }
  WorldScope w(dist::World::Host, 2);  // a fresh world: no failures, not broken
  dist::Mesh mesh({2}, {"gpu"});
  auto x = cf::random::uniform({8, 4}, cf::f32, 1);
  cf::testing::assert_allclose(dist::gather(partial_sum(mesh)), cf::sum(x, 0), 1e-5, 1e-6);
}

TEST_CASE("simulate_failure: host worlds only, devices in range") {
  cf::BackendScope ref(cf::Backend::Reference);
  {
    WorldScope w(dist::World::Plan, 2);
    CHECK(contains(error_of([] { dist::simulate_failure(0, dist::Failure::Dead); }, cf::ErrorKind::Value),
                   "only a host world"));
  }
  WorldScope w(dist::World::Host, 2);
  CHECK(contains(error_of([] { dist::simulate_failure(2, dist::Failure::Dead); }, cf::ErrorKind::Index),
                 "out of range"));
}

TEST_CASE("CUFUSE_DIST_TIMEOUT: seconds > 0, fractions allowed; a bad value warns and keeps 300") {
  {
    cufuse_test::ScopedEnv t("CUFUSE_DIST_TIMEOUT", "1.5");
    CHECK(cufuse::detail::settings().dist_timeout == 1.5);
  }
  for (const char* bad : {"0", "-1", "soon", "1e9"}) {
    cufuse_test::ScopedEnv t("CUFUSE_DIST_TIMEOUT", bad);
    CHECK(cufuse::detail::settings().dist_timeout == 300.0);
  }
}

// A 0-or-1 switch: its default; the other value; values neither 0 nor 1 warn and keep the default.
TEST_CASE("CUFUSE_DIST_BLOCKING (default 0) and CUFUSE_DIST_PEER_ACCESS (default 1): 0 or 1, else the default") {
  struct Switch {
    const char* name;
    bool cufuse::detail::Settings::*field;
    bool dflt;
  };
  for (const Switch& sw : {Switch{"CUFUSE_DIST_BLOCKING", &cufuse::detail::Settings::dist_blocking, false},
                           Switch{"CUFUSE_DIST_PEER_ACCESS", &cufuse::detail::Settings::dist_peer_access, true}}) {
    CAPTURE(sw.name);
    CHECK(cufuse::detail::settings().*sw.field == sw.dflt);
    {
      cufuse_test::ScopedEnv t(sw.name, sw.dflt ? "0" : "1");
      CHECK(cufuse::detail::settings().*sw.field == !sw.dflt);
    }
    for (const char* bad : {"2", "yes", "off", ""}) {
      cufuse_test::ScopedEnv t(sw.name, bad);
      CHECK(cufuse::detail::settings().*sw.field == sw.dflt);
    }
  }
}

TEST_CASE("CUFUSE_DIST_HOST_COMBINE: bytes 0..2^30 (default 65536), else the default") {
  CHECK(cufuse::detail::settings().dist_host_combine == 65536);
  {
    cufuse_test::ScopedEnv t("CUFUSE_DIST_HOST_COMBINE", "0");
    CHECK(cufuse::detail::settings().dist_host_combine == 0);
  }
  {
    cufuse_test::ScopedEnv t("CUFUSE_DIST_HOST_COMBINE", "1048576");
    CHECK(cufuse::detail::settings().dist_host_combine == 1048576);
  }
  for (const char* bad : {"-1", "lots", "", "2147483648"}) {
    cufuse_test::ScopedEnv t("CUFUSE_DIST_HOST_COMBINE", bad);
    CHECK(cufuse::detail::settings().dist_host_combine == 65536);
  }
}

TEST_CASE("the world lives in the runtime context's DistWorld slot") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto& slot = cufuse::detail::runtime().state<dist::detail::DistWorld>();
  CHECK_FALSE(slot.s.up);
  {
    WorldScope w(dist::World::Host, 3);
    CHECK(slot.s.up);
    CHECK(slot.s.devices == 3);
    CHECK(&slot == &dist::detail::dist_world());
  }
  CHECK_FALSE(slot.s.up);
  CHECK_FALSE(dist::initialized());
}
