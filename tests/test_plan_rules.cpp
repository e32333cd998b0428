// tests/test_plan_rules.cpp: the planner's rule table (plan/rules.hpp) and the cuts each rule
// records (plan.hpp's Cut): in the executable, in the plan dump, in the CLI's text and --json;
// and the reason an auto-evaluation happened, in the plan dump.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "plan/kernel_size.hpp"
#include "plan/plan.hpp"
#include "test_core_helpers.hpp"
#include "test_sandbox.hpp"

using cf::detail::Cut;
using cf::detail::Group;
using cf::detail::Rule;

namespace {
const Cut* find_cut(const cf::detail::Plan& p, Rule r) {
  for (const Group& g : p.groups)
    for (const Cut& c : g.cuts)
      if (c.rule == r) return &c;
  return nullptr;
}
}  // namespace

TEST_CASE("plan rules: one table gives each rule its name, doc and place") {
  std::set<std::string> names;
  for (const auto& r : cf::detail::kRules) {
    CHECK(!r.name.empty());
    CHECK(!r.doc.empty());
    CHECK(names.insert(std::string(r.name)).second);
    CHECK(std::string(cf::detail::rule_name(r.id)) == r.name);
  }
  CHECK(names.size() == static_cast<size_t>(Rule::Count));
  CHECK(std::string(cf::detail::rule_name(Rule::IterationSpace)) == "iteration-space");
  CHECK(cf::detail::rule_limit(Rule::KernelSize).find("ops a kernel") != std::string::npos);
  CHECK(cf::detail::rule_limit(Rule::Output).empty());
}

TEST_CASE("plan rules: a reduction read by a result over another shape is cut: materialize, read by 1 group") {
  auto x = cf::placeholder(cf::f32, {64, 128});
  auto z = cf::placeholder(cf::f32, {128, 64});
  auto s = cf::sum(x, 1);                      // f32 (64,)
  auto y = z * s;                              // s broadcast over z's rows: not broadcast back
  auto ex = plan_of({y});
  REQUIRE(ex->plan.groups.size() == 2);
  const Cut* c = find_cut(ex->plan, Rule::Materialize);
  REQUIRE(c != nullptr);
  CHECK(c->what.find("sum over axes (1,)") != std::string::npos);
  CHECK(c->why.find("read by 1 group") != std::string::npos);
  CHECK(c->index >= 0);
  const std::string text = cf::detail::describe_cut(*c);
  CHECK(text.rfind("cut at n", 0) == 0);
  CHECK(text.find(": materialize, read by 1 group") != std::string::npos);
  // The dump prints it under the reduction's kernel.
  const std::string dump = cf::plan_dump({y}, false);
  CHECK(count_of(dump, "cut at n") == 1);
  CHECK(count_of(dump, "materialize, read by 1 group") == 1);
}

TEST_CASE("plan rules: iteration-space, kernel-size and library cuts name their node") {
  auto a = cf::placeholder(cf::f32, {64, 64});
  auto b = cf::placeholder(cf::f32, {64});
  auto ex = plan_of({a * 2 + b, b * 3});
  const Cut* c = find_cut(ex->plan, Rule::IterationSpace);
  REQUIRE(c != nullptr);
  CHECK(c->what.find("multiply f32 (64,)") != std::string::npos);
  // One shape: no cut at all.
  auto one = plan_of({a * 2 + b, cf::exp(a)});
  CHECK(find_cut(one->plan, Rule::IterationSpace) == nullptr);
  CHECK(one->plan.groups[0].cuts.empty());

  auto m = cf::matmul(a, a);
  auto lib = plan_of({m});
  const Cut* l = find_cut(lib->plan, Rule::Library);
  REQUIRE(l != nullptr);
  CHECK(l->what.find("matmul") != std::string::npos);
}

TEST_CASE("plan rules: a cut at the kernel-size limit is recorded and dumped") {
  const int64_t limit = cf::detail::max_kernel_ops();
  cf::Config saved = cf::config(), c = saved;
  c.max_pending_nodes = 1 << 30;
  cf::set_config(c);
  auto x = cf::placeholder(cf::f32, {1024});
  cf::Array y = x;
  for (int64_t i = 0; i < limit + 10; ++i) y = y + 1.0f;
  auto ex = plan_of({y});
  const Cut* k = find_cut(ex->plan, Rule::KernelSize);
  REQUIRE(k != nullptr);
  CHECK(k->why.find("kernel of its own") != std::string::npos);
  CHECK(cf::detail::describe_cut(*k).find("kernel-size (limit " + std::to_string(limit) + " ops a kernel)") !=
        std::string::npos);
  cf::set_config(saved);
}

TEST_CASE("plan rules: a plan kept for later graphs forgets the cut nodes but keeps their words") {
  auto x = cf::placeholder(cf::f32, {64, 128});
  auto z = cf::placeholder(cf::f32, {128, 64});
  auto ex = plan_of({z * cf::sum(x, 1)});
  ex->plan.forget_graph();
  const Cut* c = find_cut(ex->plan, Rule::Materialize);
  REQUIRE(c != nullptr);
  CHECK(c->node == nullptr);
  CHECK(c->what.find("sum over axes (1,)") != std::string::npos);
}

TEST_CASE("plan rules: the plan dump says why an auto-evaluation happened") {
  cf::BackendScope ref(cf::Backend::Reference);
  cufuse_test::TempDir dir;
  cufuse_test::ScopedEnv dump("CUFUSE_DUMP_KERNELS", dir.path.string());
  cufuse_test::Sandbox::reset();
  cf::Config saved = cf::config(), c = saved;
  c.max_pending_nodes = 40;
  cf::set_config(c);
  const uint64_t before = cf::stats().auto_evaluations;
  auto x = cf::ones({16}, cf::f32);
  cf::Array y = x;
  for (int i = 0; i < 60; ++i) y = y * 1.5f + 1.0f;
  cf::set_config(saved);
  CHECK(cf::stats().auto_evaluations > before);
  const std::string all = cufuse_test::read_plan_files(dir.path);
  CHECK(all.find("auto-evaluation: the pending graph under it has") != std::string::npos);
  CHECK(all.find("Config::max_pending_nodes (40)") != std::string::npos);
  cufuse_test::Sandbox::reset();
}
