// tests/test_core_param_space.cpp: the planner's param-space rule (plan/param_budget.hpp):
// results over thousands of distinct arrays are cut into kernels whose parameters fit
// CUDA's 32,764 bytes, every such kernel compiles with NVRTC, and the values stay those of
// the node-by-node reference (reference backend: no GPU needed).
#include <random>

#include "plan/param_budget.hpp"
#include "plan/plan.hpp"
#include "test_core_helpers.hpp"

namespace {

using cf::detail::GroupKind;
using cf::detail::Rule;

std::vector<cf::Array> placeholders(int n, const cf::Shape& shape) {
  std::vector<cf::Array> xs;
  for (int i = 0; i < n; ++i) xs.push_back(cf::placeholder(cf::f32, shape));
  return xs;
}

int groups_with_rule(const cf::detail::Plan& p, Rule r) {
  int n = 0;
  for (const auto& g : p.groups) n += g.rule == r;
  return n;
}

// Every kernel of the executable compiled (plan_of with compile=true throws on an NVRTC
// failure such as "Formal parameter space overflowed").
void check_compiles(const std::vector<cf::Array>& outs, size_t min_kernels) {
  std::shared_ptr<cf::detail::Executable> ex;
  REQUIRE_NOTHROW(ex = plan_of(outs, true));
  CHECK(ex->plan.groups.size() >= min_kernels);
}

// Lifts the pending-node budget, which would otherwise evaluate these graphs early.
struct NoAutoEval {
  cf::Config saved = cf::config();
  NoAutoEval() {
    cf::Config c = saved;
    c.max_pending_nodes = 1 << 30;
    cf::set_config(c);
  }
  ~NoAutoEval() { cf::set_config(saved); }
};

}  // namespace

TEST_CASE("param-space: a sum of 4,500 arrays is cut into kernels that each compile") {
  auto xs = placeholders(4500, {64, 3});
  cf::Array z = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) z = z + xs[i];
  auto ex = plan_of({z});
  CHECK(ex->plan.groups.size() > 1);
  // Every kernel but the result's is a cut: param-space, or kernel-size (4,499 ops in a chain,
  // plan/kernel_size.hpp).
  CHECK(groups_with_rule(ex->plan, Rule::ParamSpace) >= 1);
  CHECK(groups_with_rule(ex->plan, Rule::ParamSpace) + groups_with_rule(ex->plan, Rule::KernelSize) ==
        static_cast<int>(ex->plan.groups.size()) - 1);
  CHECK(ex->plan.groups.back().rule == Rule::Output);  // the result's own kernel
  CHECK(count_of(cf::plan_dump({z}, false), "param-space") >= 1);
  check_compiles({z}, 2);
}

TEST_CASE("param-space: one leaf read thousands of times is one pointer, and no cut") {
  auto x = cf::placeholder(cf::f32, {64, 3});
  cf::Array z = x;
  for (int i = 0; i < 3000; ++i) z = z * 0.5f + x;
  auto ex = plan_of({z});
  CHECK(groups_with_rule(ex->plan, Rule::ParamSpace) == 0);
  // 6,000 ops: rule kernel-size (plan/kernel_size.hpp) cuts the chain, param-space nothing.
  CHECK(ex->plan.groups.size() == 1 + static_cast<size_t>(groups_with_rule(ex->plan, Rule::KernelSize)));
}

TEST_CASE("param-space: eval() of 2,000 results of one shape starts more kernels, each compiling") {
  auto xs = placeholders(2000, {64});
  std::vector<cf::Array> outs;
  for (auto& x : xs) outs.push_back(x * 2.0f);
  auto ex = plan_of(outs);
  CHECK(ex->plan.groups.size() > 1);
  CHECK(groups_with_rule(ex->plan, Rule::ParamSpace) >= 1);
  size_t written = 0;
  for (const auto& g : ex->plan.groups) written += g.outputs.size();
  CHECK(written == outs.size());  // each result written once
  check_compiles(outs, 2);
  for (const auto& st : ex->steps) {  // names say "f32x450", not "f32" 450 times
    CHECK(st.spec.name.size() < 48);
    CHECK(st.spec.name.find("cf_ew_f32x") == 0);
  }
}

TEST_CASE("param-space: 1,500 sibling reductions split over several reduction kernels") {
  auto xs = placeholders(1500, {8, 16});
  std::vector<cf::Array> outs;
  for (auto& x : xs) outs.push_back(cf::sum(x, 1));
  auto ex = plan_of(outs);
  int reductions = 0;
  for (const auto& g : ex->plan.groups) reductions += g.kind == GroupKind::Reduction;
  CHECK(reductions > 1);
  check_compiles(outs, 2);
  for (const auto& st : ex->steps) CHECK(st.spec.name.size() < 48);
}

TEST_CASE("param-space: a reduction over a sum of 3,000 arrays, and a row kernel past the limit") {
  auto xs = placeholders(3000, {16, 32});
  cf::Array t = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) t = t + xs[i];
  cf::Array m = cf::mean(t, 1, true);
  cf::Array c = t - m;  // broadcast back over the rows: a row kernel where it fits
  check_compiles({cf::sum(t, 1), c}, 2);
}

TEST_CASE("param-space: values of cut plans equal the node-by-node reference") {
  NoAutoEval no_auto;
  cf::BackendScope ref(cf::Backend::Reference);
  std::mt19937 rng(20261122);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  constexpr int kArrays = 1500, kLen = 7;
  std::vector<std::vector<float>> data(kArrays, std::vector<float>(kLen));
  std::vector<cf::Array> xs;
  for (auto& d : data) {
    for (auto& v : d) v = u(rng);
    xs.push_back(cf::from_host(d));
  }
  SUBCASE("a chain of adds") {
    cf::Array z = xs[0];
    for (int i = 1; i < kArrays; ++i) z = z + xs[i];
    cf::reset_stats();
    auto got = z.to_host<float>();
    CHECK(cf::stats().kernels_launched > 1);
    for (int j = 0; j < kLen; ++j) {
      float want = data[0][j];
      for (int i = 1; i < kArrays; ++i) want = want + data[i][j];  // the same order of roundings
      CHECK(got[j] == want);
    }
  }
  SUBCASE("sibling results and reductions") {
    std::vector<cf::Array> outs;
    for (int i = 0; i < kArrays; ++i) outs.push_back(i % 2 ? xs[i] * 3.0f : cf::sum(xs[i]));
    cf::reset_stats();
    cf::eval_all(outs);
    CHECK(cf::stats().kernels_launched > 2);
    for (int i = 0; i < kArrays; i += 97) {
      auto got = outs[i].to_host<float>();
      if (i % 2) {
        for (int j = 0; j < kLen; ++j) CHECK(got[j] == data[i][j] * 3.0f);
      } else {
        float want = 0;
        for (float v : data[i]) want += v;
        CHECK(got[0] == doctest::Approx(want).epsilon(1e-5));
      }
    }
  }
}
