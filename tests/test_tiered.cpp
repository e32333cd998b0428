// tests/test_tiered.cpp: tiered first calls without a device (issue 35): which steps start on
// the bytecode interpreter, the background compile (one per key), CUFUSE_TIERED's three
// modes, the plan dump's tier lines, and deferred sources (hint keys, hints on disk, the source
// made after the launch). The launches themselves are tests/gpu/test_tiered_gpu.cpp's.
#include <doctest/doctest.h>

#include <cufuse/cufuse.hpp>

#include "compile/compiler.hpp"
#include "compile/disk_cache.hpp"
#include "compile/interp_images.hpp"
#include "exec/executable.hpp"
#include "exec/tiered.hpp"
#include "plan/signature.hpp"
#include "test_sandbox.hpp"

namespace cf = cufuse;
using namespace cf::detail;
using cufuse_test::Sandbox;
using cufuse_test::ScopedEnv;

namespace {

// The executable a lazy evaluation on the device would build for these roots (compiled for
// sm_90, tiered), without running it.
std::shared_ptr<Executable> build_tiered(const std::vector<cf::Array>& outs) {
  std::vector<NodePtr> roots;
  for (const auto& a : outs) roots.push_back(a.node());
  GraphScan scan;
  scan_graph(roots, {}, scan);
  return build_executable(roots, {}, scan, /*compile=*/true, 90, nullptr, /*tiered=*/true);
}

// An input in memory (evaluating it compiles its kernel on the reference backend too).
cf::Array input(int64_t n) {
  cf::Array x = cf::zeros(cf::Shape{n}, cf::f32);
  x.eval();
  return x;
}

// An elementwise expression over x (its kernel in no cache: `salt` is in its text).
cf::Array fresh_expression(const cf::Array& x, double salt) {
  return cf::tanh(x * 2.0f + static_cast<float>(salt)) * cf::exp(x);
}

}  // namespace

TEST_CASE("CUFUSE_TIERED=interpret: elementwise steps run on the interpreter, nothing is compiled") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = cf::ones(cf::Shape{64, 33}, cf::f32), y = cf::ones(cf::Shape{7}, cf::f32);
  x.eval();
  y.eval();
  cf::reset_stats();
  auto ex = build_tiered({y * 3.0f + 1.0f, cf::sum(x * x, 1), cf::cumsum(x, 1)});
  REQUIRE(ex->steps.size() == 3);
  int interpreted = 0, rows = 0, compiled = 0;
  for (const auto& st : ex->steps) {
    if (st.tier) {
      ++interpreted;
      CHECK(!st.kernel);
      CHECK(!st.tier->background);
      CHECK(describe_tier(st).find("never compiled") != std::string::npos);
      if (st.tier->interp.name == kInterpRowsKernelName) {  // the row reduction (issue 35's row programs)
        ++rows;
        CHECK(st.tier->interp.numel == 64 * 33);
      } else {
        CHECK(st.tier->interp.name == kInterpNarrowKernelName);  // float32 only: the narrow core's kernel
        CHECK(st.tier->interp.numel == 7);
      }
    } else {
      ++compiled;
      CHECK(st.kernel);
      CHECK(st.interp_refusal == "a scan");
    }
  }
  CHECK(interpreted == 2);
  CHECK(rows == 1);
  CHECK(compiled == 1);
  CHECK(cf::stats().kernels_compiled == 1);  // the scan's only
  CHECK(cf::stats().background_compiles == 0);
}

TEST_CASE("CUFUSE_TIERED=interpret: a group whose kernel a cache holds still runs on the interpreter") {
  Sandbox sb;
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = input(1000);
  {
    ScopedEnv off("CUFUSE_TIERED", "0");  // compiled into the memory and disk caches
    auto ex = build_tiered({fresh_expression(x, 0.625)});
    REQUIRE(ex->steps.size() == 1);
    CHECK(ex->steps[0].kernel);
    CHECK(!ex->steps[0].tier);
  }
  {
    ScopedEnv on("CUFUSE_TIERED", "1");  // the default takes the cached kernel
    auto ex = build_tiered({fresh_expression(x, 0.625)});
    CHECK(ex->steps[0].kernel);
    CHECK(!ex->steps[0].tier);
  }
  ScopedEnv interp("CUFUSE_TIERED", "interpret");
  auto ex = build_tiered({fresh_expression(x, 0.625)});
  REQUIRE(ex->steps.size() == 1);
  CHECK(!ex->steps[0].kernel);
  REQUIRE(ex->steps[0].tier);
  CHECK(describe_tier(ex->steps[0]).find("never compiled") != std::string::npos);
}

TEST_CASE("CUFUSE_TIERED=1: the compile goes to the background pool, once per key") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", std::nullopt);  // the default: on
  cf::BackendScope ref(cf::Backend::Reference);
  wait_for_background_compiles();
  cf::Array x = input(1000);
  cf::reset_stats();
  // Two plans (different roots) whose one kernel is the same text, asked for back to back.
  auto a = build_tiered({fresh_expression(x, 0.3125)});
  auto b = build_tiered({fresh_expression(x, 0.3125)});
  REQUIRE(a->steps.size() == 1);
  REQUIRE(b->steps.size() == 1);
  const Step& sa = a->steps[0];
  REQUIRE(sa.tier);
  CHECK(sa.tier->background);
  wait_for_background_compiles();
  CHECK(cf::stats().kernels_compiled == 1);
  CHECK(cf::stats().background_compiles == 1);
  REQUIRE(sa.tier->compiled());
  CHECK(sa.tier->compiled()->name == sa.spec.name);
  CHECK(current_kernel(sa) == sa.tier->compiled().get());
  CHECK(describe_tier(sa).find("taken over") != std::string::npos);
  // b waited for the same compile or found its kernel in the memory cache.
  const Step& sb2 = b->steps[0];
  CHECK(current_kernel(sb2) == sa.tier->compiled().get());
  // Later plans find the kernel in the cache: no tier.
  auto d = build_tiered({fresh_expression(x, 0.3125)});
  CHECK(!d->steps[0].tier);
  CHECK(d->steps[0].kernel.get() == sa.tier->compiled().get());
}

TEST_CASE("CUFUSE_TIERED=0 compiles at once; groups the interpreter cannot run say why") {
  Sandbox sb;
  cf::BackendScope ref(cf::Backend::Reference);
  {
    ScopedEnv tiered("CUFUSE_TIERED", "0");
    auto ex = build_tiered({fresh_expression(input(1000), 0.75)});
    REQUIRE(ex->steps.size() == 1);
    CHECK(!ex->steps[0].tier);
    CHECK(ex->steps[0].kernel);
    CHECK(ex->steps[0].interp_refusal == "CUFUSE_TIERED=0");
  }
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  cf::Array x = cf::ones(cf::Shape{100}, cf::f32);
  x.eval();
  auto ex = build_tiered({x + cf::arange(100.0f)});
  REQUIRE(ex->steps.size() == 1);
  CHECK(!ex->steps[0].tier);
  CHECK(ex->steps[0].kernel);
  CHECK(describe_tier(ex->steps[0]).find("generator") != std::string::npos);
  CHECK(describe_executable(*ex, false).find("tier: compiled (the interpreter cannot: a generator") != std::string::npos);
}

TEST_CASE("the plan text names the interpreter's program") {
  Sandbox sb;
  ScopedEnv tiered("CUFUSE_TIERED", "interpret");
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = cf::ones(cf::Shape{4, 5}, cf::f16);
  x.eval();
  auto ex = build_tiered({cf::sqrt(x) * x});
  const std::string text = describe_executable(*ex, false);
  CHECK(text.find("tier: interpreter (bytecode interpreter: ") != std::string::npos);
}

// ---- deferred source (exec/tiered.hpp): hint keys, hints on disk, the source made later

namespace {

// The hint key of step `step` of the plan of these roots for `arch`.
std::string hint_of(const std::vector<cf::Array>& outs, size_t step = 0, int arch = 90) {
  std::vector<NodePtr> roots;
  for (const auto& a : outs) roots.push_back(a.node());
  GraphScan scan;
  scan_graph(roots, {}, scan);
  return tier_hint_key(scan, step, arch);
}

// The one kernel step of these roots' plan (nothing compiled).
KernelSpec spec_of(const std::vector<cf::Array>& outs) {
  std::vector<NodePtr> roots;
  for (const auto& a : outs) roots.push_back(a.node());
  GraphScan scan;
  scan_graph(roots, {}, scan);
  auto ex = build_executable(roots, {}, scan, /*compile=*/false, 90);
  REQUIRE(ex->steps.size() == 1);
  return ex->steps[0].spec;
}
std::string source_of(const std::vector<cf::Array>& outs) { return spec_of(outs).source; }

cf::Array host_input(const cf::Shape& shape, cf::DType t) {
  cf::Array x = cf::ones(shape, t);
  x.eval();
  return x;
}

// A test on the reference backend with the default tier (CUFUSE_TIERED unset), no compile
// of an earlier test still running.
struct DefaultTierOnHost {
  Sandbox sb;
  ScopedEnv tiered{"CUFUSE_TIERED", std::nullopt};
  cf::BackendScope ref{cf::Backend::Reference};
  DefaultTierOnHost() { wait_for_background_compiles(); }
};

cf::Array row_softmax(const cf::Array& a) {
  cf::Array e = cf::exp(a - cf::max(a, 1, true));
  return e / cf::sum(e, 1, true);
}

}  // namespace

TEST_CASE("a CUBIN runs on its own major arch at an equal or higher minor version only") {
  using cufuse::detail::cubin_runs_on;
  CHECK(cubin_runs_on(90, 90));
  CHECK(cubin_runs_on(80, 86));
  CHECK_FALSE(cubin_runs_on(86, 80));
  CHECK_FALSE(cubin_runs_on(80, 90));
  CHECK_FALSE(cubin_runs_on(90, 100));
  CHECK_FALSE(cubin_runs_on(100, 90));
}

TEST_CASE("tier hint keys: equal for plans of one structure, distinct where the kernels differ") {
  Sandbox sb;
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array x = host_input({1000}, cf::f32), x2 = host_input({1000}, cf::f32);
  const cf::Array m = host_input({64, 100}, cf::f32);
  // Equal: another graph of the same structure (other arrays, another scalar value: a
  // parameter of the same kernel).
  auto f = [](const cf::Array& a, float s) { return cf::tanh(a * 2.0f + s) * cf::exp(a); };
  CHECK(hint_of({f(x, 0.5f)}) == hint_of({f(x2, 0.25f)}));
  CHECK(source_of({f(x, 0.5f)}) == source_of({f(x2, 0.25f)}));
  CHECK(hint_of({row_softmax(m)}) == hint_of({row_softmax(host_input({64, 100}, cf::f32))}));
  // Distinct: every pair below (some make the same kernel text, the size being a parameter:
  // their hints differ all the same), another step, another arch.
  const std::vector<std::pair<std::string, std::vector<cf::Array>>> graphs = {
      {"f32", {f(x, 0.5f)}},
      {"f64 input", {f(host_input({1000}, cf::f64), 0.5f)}},
      {"another size", {f(host_input({1001}, cf::f32), 0.5f)}},
      {"another op", {cf::sin(x * 2.0f + 0.5f) * cf::exp(x)}},
      {"a strided view", {f(host_input({2000}, cf::f32)[{cf::slice(0, 2000, 2)}], 0.5f)}},
      {"two outputs", {f(x, 0.5f), x * 3.0f}},
      {"softmax rows", {row_softmax(m)}},
      {"softmax of another shape", {row_softmax(host_input({64, 101}, cf::f32))}},
      {"a sum of rows", {cf::sum(m, 1)}},
  };
  for (size_t i = 0; i < graphs.size(); ++i)
    for (size_t j = i + 1; j < graphs.size(); ++j)
      CHECK_MESSAGE(hint_of(graphs[i].second) != hint_of(graphs[j].second), graphs[i].first << " / " << graphs[j].first);
  int differ = 0;  // pairs whose kernels differ (which their hints must tell apart, as checked above)
  for (size_t i = 0; i < graphs.size(); ++i) {
    if (graphs[i].first == "two outputs") continue;  // (two kernels or one: not source_of's case)
    for (size_t j = i + 1; j < graphs.size(); ++j)
      if (graphs[j].first != "two outputs") differ += source_of(graphs[i].second) != source_of(graphs[j].second);
  }
  CHECK(differ >= 20);
  CHECK(hint_of({f(x, 0.5f)}, 0, 90) != hint_of({f(x, 0.5f)}, 0, 80));
  CHECK(hint_of({f(x, 0.5f)}, 0) != hint_of({f(x, 0.5f)}, 1));
  // A setting code generation reads.
  const std::string unrolled = hint_of({f(x, 0.5f)});
  {
    ScopedEnv unroll("CUFUSE_EW_UNROLL", "4");
    CHECK(hint_of({f(x, 0.5f)}) != unrolled);
  }
  ScopedEnv blocks("CUFUSE_EW_VIEW_BLOCKS", "0");
  CHECK(hint_of({f(x, 0.5f)}) != unrolled);
}

TEST_CASE("hints on disk: found by their key, holding the kernel's compile key, never taken for a kernel entry") {
  Sandbox sb;
  const std::vector<char> cubin = {'c', 'u', 'b'};
  CHECK(!disk_cache_has_hint("tier hint test a"));
  CHECK(disk_cache_store_hint("tier hint test a", "the compile key\nof a", cubin, "its log"));
  REQUIRE(disk_cache_has_hint("tier hint test a"));
  const auto h = disk_cache_load_hint("tier hint test a");
  REQUIRE(h);
  CHECK(h->compile_key == "the compile key\nof a");
  CHECK(h->cubin == cubin);
  CHECK(h->log == "its log");
  CHECK(!disk_cache_has_hint("tier hint test b"));
  CHECK(!disk_cache_load("tier hint test a"));  // the hint is no kernel entry of the same key
  CHECK(!tier_hinted("tier hint test b"));
  CHECK(tier_hinted("tier hint test a"));
  // A hint entry of the older layout (a one-byte CUBIN, no compile key) is a miss.
  CHECK(disk_cache_store("hint\ntier hint test old", {'h'}, ""));
  CHECK(!disk_cache_has_hint("tier hint test old"));
  CHECK(disk_cache_store("hint\ntier hint test bad", {'h'}, "99\nshort"));
  CHECK(!disk_cache_has_hint("tier hint test bad"));
  ScopedEnv off("CUFUSE_CACHE", "0");
  Sandbox::reset();
  CHECK(!disk_cache_has_hint("tier hint test a"));
  CHECK(!disk_cache_store_hint("tier hint test c", "k", cubin, ""));
}

TEST_CASE("a hint's kernel is taken only for the source whose compile key it holds") {
  Sandbox sb;
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::Array x = host_input({1000}, cf::f32);
  // Two distinct kernels: their compile keys differ (the source is in the key).
  const KernelSpec a = spec_of({cf::tanh(x * 2.0f + 0.5f) * cf::exp(x)});
  const KernelSpec b = spec_of({cf::sin(x * 2.0f + 0.5f) * cf::exp(x)});
  REQUIRE(a.source != b.source);
  CHECK(compile_key(a.source, a.name, 90) != compile_key(b.source, b.name, 90));
  CHECK(compile_key(a.source, a.name, 90) != compile_key(a.source, a.name, 80));
  // A hint under which a's kernel was stored (a fake CUBIN: nothing loads it here).
  const std::vector<char> cubin_a = {'a', 'a'};
  REQUIRE(disk_cache_store_hint("tier hint test k", compile_key(a.source, a.name, 90), cubin_a, ""));
  cf::reset_stats();
  TierHint found = find_tier_hint("tier hint test k");
  REQUIRE(found.entry);
  // Asked for b (a wrong hint: the structure's key is the same, the kernel is not): not a's CUBIN,
  // and no kernel at all, since no cache holds b's.
  CHECK(!hinted_kernel("tier hint test k", found, b, 90));
  CHECK(!hinted_kernel("tier hint test k", found, a, 80));  // another arch: another key
  CHECK(cf::stats().disk_cache_hits == 0);
  // Asked for a: its kernel, read once, entered into the memory cache.
  CompiledKernelPtr k = hinted_kernel("tier hint test k", found, a, 90);
  REQUIRE(k);
  CHECK(k->cubin == cubin_a);
  CHECK(k->source == a.source);
  CHECK(k->from_disk);
  CHECK(cf::stats().disk_cache_hits == 1);
  CHECK(find_compiled_kernel(a.source, a.name, 90) == k);  // the memory cache's now
  CHECK(cf::stats().disk_cache_hits == 1);
  CHECK(tier_hinted("tier hint test k"));
  // b's kernel on disk under its own source: a wrong hint finds it by that source.
  const std::vector<char> cubin_b = {'b'};
  REQUIRE(disk_cache_store(compile_key(b.source, b.name, 90), cubin_b, ""));
  CompiledKernelPtr kb = hinted_kernel("tier hint test k", found, b, 90);
  REQUIRE(kb);
  CHECK(kb->cubin == cubin_b);
  CHECK(cf::stats().disk_cache_hits == 2);
}

TEST_CASE("a new process's first build: the kernel from its hint's entry, verified, no bytecode; a stale hint never gives its kernel") {
  DefaultTierOnHost host;
  auto f = [](const cf::Array& x) { return cf::tanh(x * 1.75f - 0.125f) * cf::exp(x); };
  auto g = [](const cf::Array& x) { return cf::sin(x * 1.75f - 0.125f) * cf::exp(x); };
  const int arch = default_arch();
  // An earlier process: the kernels and their hints on disk (precompile stores both).
  REQUIRE(cf::precompile(f, cf::signature(cf::ArgType{cf::f32, {4096}})).kernels == 1);
  REQUIRE(cf::precompile(g, cf::signature(cf::ArgType{cf::f32, {4096}})).kernels == 1);
  const cf::Array x = host_input({4096}, cf::f32);
  // This process: nothing in memory, no hints of its own; a new plan as a lazy evaluation builds it.
  auto build = [&](const cf::Array& r) {
    clear_memory_cache();
    forget_tier_hints();
    std::vector<NodePtr> roots = {r.node()};
    GraphScan scan;
    scan_graph(roots, {}, scan);
    return std::pair{build_executable(roots, {}, scan, true, arch, nullptr, /*tiered=*/true, false, /*defer_source=*/true),
                     tier_hint_key(scan, 0, arch)};
  };
  cf::reset_stats();
  auto [ex, hint] = build(f(x));
  REQUIRE(ex->steps.size() == 1);
  const Step& st = ex->steps[0];
  REQUIRE(st.kernel);
  CHECK(st.kernel->from_disk);
  CHECK(st.kernel->source == source_of({f(x)}));
  CHECK(!st.tier);  // neither interpreted nor compiled: no bytecode program was made
  CHECK(cf::stats().disk_cache_hits == 1);  // the hint's entry, read once
  CHECK(cf::stats().kernels_compiled == 0);
  CHECK(tier_hinted(hint));
  // A stale hint: its entry holds g's kernel (as a hint key blind to some change of the code
  // generator would). f's step never gets it: f's kernel comes by f's source (on disk).
  auto [gx, ghint] = build(g(x));
  REQUIRE(gx->steps[0].kernel);
  const CompiledKernelPtr gk = gx->steps[0].kernel;
  REQUIRE(store_tier_hint(hint, *gk));
  cf::reset_stats();
  auto [ex2, hint2] = build(f(x));
  CHECK(hint2 == hint);
  REQUIRE(ex2->steps[0].kernel);
  CHECK(ex2->steps[0].kernel->source == st.kernel->source);
  CHECK(ex2->steps[0].kernel->cubin == st.kernel->cubin);
  CHECK(ex2->steps[0].kernel->cubin != gk->cubin);
  CHECK(cf::stats().disk_cache_hits == 1);  // by f's source, after the hint's entry was refused
  CHECK(cf::stats().kernels_compiled == 0);
}

TEST_CASE("deferred source: made from the plan's graph after the launch, as it is made at once; the kernel's hint is stored") {
  DefaultTierOnHost host;
  // Two kernel groups, the second reading the buffer the first (a scan) writes, then a row
  // program: each deferred step's binding of earlier groups' buffers is the one made at once.
  const cf::Array x = host_input({32, 48}, cf::f32);
  const cf::Array c = cf::cumsum(x * 0.375f, 1);
  const std::vector<cf::Array> outs = {c, row_softmax(c * 1.5f + x)};
  std::vector<NodePtr> roots;
  for (const auto& a : outs) roots.push_back(a.node());
  GraphScan scan;
  scan_graph(roots, {}, scan);
  auto at_once = build_executable(roots, {}, scan, /*compile=*/false, 90);
  auto ex = build_executable(roots, {}, scan, /*compile=*/false, 90, nullptr, false, /*host_programs=*/true);
  REQUIRE(ex->steps.size() == at_once->steps.size());
  REQUIRE(ex->steps.size() >= 2);
  cf::reset_stats();
  std::vector<std::string> hints;
  int deferred = 0;
  for (size_t si = 0; si < ex->steps.size(); ++si) {
    Step& st = ex->steps[si];
    if (st.call || ex->host_interp[si].name.empty()) continue;  // (the scan: no program)
    BytecodeProgram prog;
    prog.spec = ex->host_interp[si];
    st.spec = KernelSpec{};
    hints.push_back(tier_hint_key(scan, si, 90) + " (test)");
    CHECK(!tier_hinted(hints.back()));
    defer_tier(st, std::move(prog), 90, hints.back());
    CHECK(st.spec.numel > 0);
    CHECK(st.spec.source.empty());
    CHECK(describe_tier(st).find("after the first launch") != std::string::npos);
    ++deferred;
  }
  REQUIRE(deferred >= 1);
  CHECK(has_deferred_steps(*ex));
  make_deferred_sources(*ex, scan, {});
  CHECK(!has_deferred_steps(*ex));
  for (size_t si = 0; si < ex->steps.size(); ++si) {
    const KernelSpec& a = ex->steps[si].spec;
    const KernelSpec& b = at_once->steps[si].spec;
    CHECK(a.source == b.source);
    CHECK(a.name == b.name);
    CHECK(a.params == b.params);
    CHECK(a.patches.size() == b.patches.size());
    CHECK(a.workspace_bytes == b.workspace_bytes);
  }
  wait_for_background_compiles();
  CHECK(cf::stats().background_compiles == static_cast<uint64_t>(deferred));
  for (size_t si = 0; si < ex->steps.size(); ++si)
    if (const Step& st = ex->steps[si]; st.tier) {
      REQUIRE(st.tier->compiled());
      CHECK(st.tier->compiled()->name == st.spec.name);
      CHECK(current_kernel(st) == st.tier->compiled().get());
    }
  for (const auto& h : hints) {
    CHECK(tier_hinted(h));
    CHECK(disk_cache_has_hint(h));
  }
}
