// tests/test_fuzz.cpp: random array programs (tests/fuzz_program.hpp) on the reference
// backend. There each planned kernel is generated and compiled by NVRTC and its work done by
// the reference evaluator group by group, so a result that differs from the whole graph's
// reference value (bitwise) is a planning or execution bug: a wrong group boundary, buffer,
// view of an intermediate, in-place ordering or fuse() replay. A program that writes in place
// (tests/fuzz_writes.hpp) runs lazily, evaluated once at the end, and (one in four) eagerly,
// each statement evaluated as made: each must agree bitwise with the model, every statement
// computed by the host reference evaluator as it is made. The device version of this test is
// tests/gpu/test_fuzz_gpu.cpp. CUFUSE_FUZZ_SEED=<n> runs program n alone.
#include <doctest/doctest.h>

#include "fuzz_program.hpp"
#include "test_sandbox.hpp"

namespace cf = cufuse;

TEST_CASE("fuzz: the comparison catches what it should and forgives what it may") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto host = [](std::vector<float> v) { return fuzz::host_of(cf::from_host(v)); };
  std::string r;
  CHECK(fuzz::compare(host({1, 2, 3}), host({1, 2, 3}), 0, r) == 0);
  CHECK(fuzz::compare(host({1, 2, 3}), host({1, 2, 3.0001f}), 0, r) == 1);
  CHECK(fuzz::compare(host({1, 2, 3}), host({1, 2, 3.0001f}), 1e-3, r) == 0);
  CHECK(fuzz::compare(host({NAN, -0.0f}), host({NAN, 0.0f}), 0, r) == 0);
  CHECK(fuzz::compare(host({NAN, 1}), host({1, 1}), 1.0, r) == 1);
  CHECK(fuzz::compare(host({INFINITY}), host({-INFINITY}), 0, r) == 1);
  CHECK(fuzz::compare(host({1, 2}), fuzz::host_of(cf::from_host(std::vector<double>{1, 2})), 0, r) == 1);
  CHECK(fuzz::compare(fuzz::host_of(cf::from_host(std::vector<int32_t>{7, -1})),
                      fuzz::host_of(cf::from_host(std::vector<int32_t>{7, 1})), 0, r) == 1);
}

TEST_CASE("fuzz: bounds follow the ops (exact paths get 0, sums grow with their length)") {
  cf::BackendScope ref(cf::Backend::Reference);
  fuzz::Program p;
  p.in_dtype = {cf::f32};
  p.in_shape = {cf::Shape{100}};
  p.exact = {true};
  fuzz::Instr neg{fuzz::Kind::Unary, "negative", 0};
  fuzz::Instr th{fuzz::Kind::Unary, "tanh", 1};
  fuzz::Instr sum{fuzz::Kind::Reduce, "sum", 2};
  sum.axis = -1;
  p.code = {neg, th, sum};
  p.exact = {true, true, false, false};
  p.outputs = {3};
  cf::Array x = cf::arange(100).astype(cf::f32) / 50.0f;
  std::vector<cf::detail::NodePtr> roots;
  for (const auto& v : fuzz::values(p, {x})) roots.push_back(v.node());
  auto E = fuzz::bounds(p, cf::detail::reference_evaluate(roots));
  CHECK(E[1] == 0);
  CHECK(E[2] > 0);
  CHECK(E[2] < 1e-5);
  CHECK(E[3] > 100 * E[2]);
  CHECK(E[3] < 0.05);
  // an exact factor against an unbounded error stays exact (device seed 791372973274 met 0 * inf)
  CHECK(fuzz::times(0.0, INFINITY) == 0);
  CHECK(fuzz::times(2.0, INFINITY) == INFINITY);
}

// Programs the device campaigns found wrong that were wrong on the reference backend too
// (the device list: tests/gpu/test_fuzz_gpu.cpp). 50566 (found by the CPU run with the
// interpreter, device config): v5.assign(v5) read a freed node's shape. 717923282040: `h7.T /= 0.5` through a
// view of v7, a view of a lazy array evaluated early, was lost (graph/array.cpp: apply_view).
TEST_CASE("fuzz: the programs the campaigns found that the reference backend also got wrong") {
  cf::BackendScope ref(cf::Backend::Reference);
  const fuzz::Config cfg = fuzz::device_config();
  for (uint64_t seed : {717923282040ULL, 50566ULL}) {
    const fuzz::Outcome o = fuzz::run_program(seed, cfg, /*strict=*/false, /*with_fuse=*/true);
    CHECK_MESSAGE(o.bad == 0, o.report);
  }
}

TEST_CASE("fuzz: random programs, planned evaluation against the whole-graph reference") {
  cf::BackendScope ref(cf::Backend::Reference);
  fuzz::Config cfg;
  cfg.dims = {1, 2, 3, 5, 16, 33};
  cfg.p_big = 0.05;  // a few long shapes (multi-block reduction plans)
  cfg.p_writes = 0.1;  // programs with writes compile the kernels of their write plans: fewer here
  cfg.p_inplace = 0.1;  // than on the device
  if (const char* e = std::getenv("CUFUSE_FUZZ_DEVICE_CONFIG"); e && std::string(e) == "1") cfg = fuzz::device_config();
  const fuzz::Seeds seeds = fuzz::seeds(1000, 80);  // fixed on CI: a red run names a real bug
  const fuzz::Summary sum = fuzz::run_many(seeds, cfg, /*strict=*/true, /*with_fuse=*/true);
  for (const auto& r : sum.reports) FAIL_CHECK(r);
  const fuzz::WriteTally& w = sum.writes;
  MESSAGE(sum.programs << " programs, " << sum.failed << " failed; " << sum.inplace << " with in-place writes ("
                       << sum.eager << " also run eagerly; "
                       << w.stmts << " statements: " << w.ops << " op=, " << w.assigns << " assignments, " << w.views
                       << " through views, " << w.alias_reads << " reading the array written (" << w.reduced_reads
                       << " reduced), " << w.copies << " through a second handle, " << w.lazy_targets
                       << " into lazy values; " << w.several_arrays << " programs writing several arrays, "
                       << w.kept_old << " with an output built before a write, " << w.seen_through_views
                       << " with an output viewing an array written), " << sum.fused << " also through fuse(), "
                       << sum.early << " with early evaluations, " << sum.convolutions << " convolutions, " << sum.finite
                       << " on finite inputs");
  if (!seeds.replay && seeds.count >= 80) {  // the generator reaches every kind of instruction, in-place writes and fuse()
    CHECK(sum.kinds.size() == static_cast<size_t>(fuzz::kKinds));
    CHECK(sum.inplace >= 10);
    CHECK(sum.eager >= 2);
    CHECK(w.ops >= 5);
    CHECK(w.assigns >= 5);
    CHECK(w.views >= 5);
    CHECK(w.alias_reads >= 3);
    CHECK(w.reduced_reads >= 1);
    CHECK(w.copies >= 3);
    CHECK(w.lazy_targets >= 2);
    CHECK(w.several_arrays >= 3);
    CHECK(w.kept_old >= 3);
    CHECK(w.seen_through_views >= 1);
    CHECK(sum.fused >= 20);
    CHECK(sum.early >= 10);
    CHECK(sum.finite >= 20);
  }
}

// The bytecode interpreter on the CPU (CUFUSE_REFERENCE_INTERPRET): every group it takes runs on
// its host build (the generated core of the device's interpreter kernels) and reads the earlier
// groups' results, as a tiered device run's first launches do; the rest stays on the reference.
// Compared within the device's bounds (the interpreter's reductions add in their own order).
// The interpreter gave complex norms wrong in its first run on the H200 (loading complex
// operands as real), which no CPU test could see.
// The device campaigns' programs that went wrong only on a run's first launches (the
// interpreter's), replayed by its host build: 728327525901 (a row program stored a write in
// place before another output loaded the array written: codegen/bytecode_rows.cpp) and
// 728217886719 (1 / nanmin of a column of signed zeros: the interpreter combined in another
// order than the kernel; max and min now order -0 below +0).
TEST_CASE("fuzz: the programs the campaigns found wrong on the interpreter, on its host build") {
  cf::BackendScope ref(cf::Backend::Reference);
  cufuse_test::ScopedEnv interp("CUFUSE_REFERENCE_INTERPRET", "1");
  const fuzz::Config cfg = fuzz::device_config();
  for (uint64_t seed : {728327525901ULL, 728217886719ULL}) {
    cf::reset_stats();
    const fuzz::Outcome o = fuzz::run_program(seed, cfg, /*strict=*/false, /*with_fuse=*/true);
    CHECK_MESSAGE(o.bad == 0, o.report);
    CHECK(cf::stats().interpreted_launches >= 1);
  }
}

TEST_CASE("fuzz: random programs with the interpreter's host build running the groups it takes") {
  cf::BackendScope ref(cf::Backend::Reference);
  cufuse_test::ScopedEnv interp("CUFUSE_REFERENCE_INTERPRET", "1");
  const fuzz::Config cfg = fuzz::device_config();
  const fuzz::Seeds seeds = fuzz::seeds(40000, 120);
  cf::reset_stats();
  const fuzz::Summary sum = fuzz::run_many(seeds, cfg, /*strict=*/false, /*with_fuse=*/true);
  for (const auto& r : sum.reports) FAIL_CHECK(r);
  MESSAGE(sum.programs << " programs, " << sum.failed << " failed; " << cf::stats().interpreted_launches
                       << " groups run on the interpreter");
  if (!seeds.replay) CHECK(cf::stats().interpreted_launches >= 100);
}
