// tests/test_core_fusion.cpp: kernel counts and kernel shapes the elementwise planner must
// produce (no GPU needed: placeholders and the reference backend).
#include "test_core_helpers.hpp"

TEST_CASE("W1's expression is one contiguous, vectorized kernel") {
  auto x = cf::placeholder(cf::f32, {1 << 27});
  auto y = (x * 2.5f + 1) * cf::sin(x) - cf::exp(-x * x) + cf::sqrt(cf::abs(x));
  auto ex = plan_of({y});
  REQUIRE(ex->steps.size() == 1);
  CHECK(ex->steps[0].spec.summary.find("16-byte vectors") != std::string::npos);
  CHECK(ex->steps[0].spec.summary.find("32-bit") != std::string::npos);
  // x is read once per element: one vector load of the only input.
  CHECK(count_of(ex->steps[0].spec.source, "reinterpret_cast<const cf_vec<float, V>*>") == 1);
  // scalars are parameters, not baked into the source: x*3 shares the kernel of x*2.5
  auto y2 = (x * 3.0f + 7) * cf::sin(x) - cf::exp(-x * x) + cf::sqrt(cf::abs(x));
  CHECK(plan_of({y2})->steps[0].spec.source == ex->steps[0].spec.source);
}

TEST_CASE("a node with several consumers is computed once per kernel") {
  auto x = cf::placeholder(cf::f32, {1000, 3}).T();  // strided: one body in the kernel
  auto t = cf::sin(x);
  auto y = t * t + t;
  auto ex = plan_of({y});
  REQUIRE(ex->steps.size() == 1);
  CHECK(ex->steps[0].spec.summary.find("strided") != std::string::npos);
  CHECK(count_of(ex->steps[0].spec.source, "sin(a)") == 1);
}

TEST_CASE("results that share an iteration space share a kernel; others get their own") {
  auto a = cf::placeholder(cf::f32, {64, 64});
  auto b = cf::placeholder(cf::f32, {64});
  auto u = a * 2 + b;
  auto v = cf::exp(a) - b;
  auto w = b * 3;
  auto one = plan_of({u, v});
  CHECK(one->steps.size() == 1);
  CHECK(one->plan.groups[0].outputs.size() == 2);
  CHECK(cf::detail::rule_name(one->plan.groups[0].rule) == std::string("output"));
  auto two = plan_of({u, v, w});
  CHECK(two->steps.size() == 2);
  CHECK(cf::detail::rule_name(two->plan.groups[0].rule) == std::string("iteration-space"));
}

TEST_CASE("kernel shape follows the layout") {
  auto big = cf::placeholder(cf::f32, {(int64_t(1) << 31) + 64});
  CHECK(plan_of({big + 1})->steps[0].spec.summary.find("64-bit") != std::string::npos);
  auto m = cf::placeholder(cf::f32, {128, 256});
  // a broadcast row vector keeps rank 2: rows mode, vectorized, the row vector read by vectors
  // and the column vector once per row (no index division per element)
  auto rowb = plan_of({m + cf::placeholder(cf::f32, {256})})->steps[0].spec;
  CHECK(rowb.summary.find("rows rank 2") != std::string::npos);
  CHECK(rowb.summary.find("16-byte vectors") != std::string::npos);
  CHECK(rowb.source.find(" % p.shape") == std::string::npos);
  auto outer = plan_of({cf::placeholder(cf::f32, {128})[{cf::_, cf::newaxis}] * cf::placeholder(cf::f32, {256})})->steps[0].spec;
  CHECK(outer.summary.find("rows rank 2") != std::string::npos);
  CHECK(count_of(outer.source, "reinterpret_cast<const cf_vec<float, V>*>") == 1);
  // a row length that is not a multiple of the vector width: rows mode without vectors
  auto odd = plan_of({cf::placeholder(cf::f32, {128, 255}) + cf::placeholder(cf::f32, {255})})->steps[0].spec;
  CHECK(odd.summary.find("rows rank 2") != std::string::npos);
  CHECK(odd.summary.find("16-byte") == std::string::npos);
  // rank 3 with a broadcast middle axis: the outer two unravelled once per row
  auto r3 = plan_of({cf::placeholder(cf::f32, {4, 1, 512}) * cf::placeholder(cf::f32, {4, 8, 512})})->steps[0].spec;
  CHECK(r3.summary.find("rows rank") != std::string::npos);
  // short rows stay strided (a 2-D grid would leave most threads idle)
  CHECK(plan_of({cf::placeholder(cf::f32, {1000, 3}) + cf::placeholder(cf::f32, {3})})->steps[0].spec.summary.find("strided rank 2") !=
        std::string::npos);
  CHECK(plan_of({m[{cf::_, cf::slice(0, 256)}] + 1})->steps[0].spec.summary.find("contiguous") != std::string::npos);
  CHECK(plan_of({m[{cf::slice(cf::none, cf::none, 2)}] * 2})->steps[0].spec.summary.find("rows rank 2") != std::string::npos);
  // a transposed read: 32x32 tiles through shared memory (loads and stores both coalesced)
  auto tr = plan_of({m.T() * 2})->steps[0].spec;
  CHECK(tr.summary.find("tiled rank 2") != std::string::npos);
  CHECK(tr.source.find("__shared__ float t0[32][33]") != std::string::npos);
  CHECK(tr.dims.block[0] == 32);
  CHECK(tr.dims.block[1] == 8);
  CHECK(tr.dims.grid[0] == 4);  // C = 128 / 32
  CHECK(tr.dims.grid[1] == 8);  // R = 256 / 32
  // a batched permute (0, 2, 1), two transposed reads and a direct one, a half-precision read
  auto b3 = cf::placeholder(cf::f32, {5, 64, 96});
  auto c3 = cf::placeholder(cf::f16, {5, 64, 96});
  auto perm = plan_of({b3.transpose({0, 2, 1}) * c3.transpose({0, 2, 1}) + cf::placeholder(cf::f32, {5, 96, 64})})->steps[0].spec;
  CHECK(perm.summary.find("tiled rank 3") != std::string::npos);
  CHECK(perm.summary.find("2 read(s) through shared memory") != std::string::npos);
  CHECK(perm.dims.grid[2] == 5);
  CHECK(perm.source.find("__shared__ float t1[32][33]") != std::string::npos);  // f16 staged as float
  // too short along R for a tile: the strided form
  CHECK(plan_of({cf::placeholder(cf::f32, {8, 1000}).T() * 2})->steps[0].spec.summary.find("strided rank 2") !=
        std::string::npos);
  // a reshape strides cannot express reads through an index remap, still one kernel
  auto r = m.T().reshape({-1}) + 1;
  auto ex = plan_of({r});
  CHECK(ex->steps.size() == 1);
  CHECK(ex->steps[0].spec.source.find("_sh[") != std::string::npos);
}

TEST_CASE("evaluation counts kernels (reference backend)") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(1000).astype(cf::f32);
  auto y = cf::arange(1000).astype(cf::f32) * 0.5f;
  cf::reset_stats();
  auto z = (x - y) * (x - y);
  auto w = cf::sqrt(z) + 1;
  cf::eval(z, w);
  CHECK(cf::stats().kernels_launched == 1);
  auto zh = z.to_host<float>();
  CHECK(zh[10] == doctest::Approx(25.0f));
  CHECK(cf::stats().kernels_launched == 1);  // already in memory: no more work
}

TEST_CASE("evaluating a placeholder is an error, planning it is not") {
  auto x = cf::placeholder(cf::f32, {8});
  CHECK_NOTHROW(cf::plan_dump({x + 1}));
  CHECK_THROWS_AS((x + 1).eval(), cf::ValueError);
}

TEST_CASE("a temporary operand gives its node to the operation; values are unchanged") {
  auto x = cf::placeholder(cf::f32, {8});
  auto y = cf::placeholder(cf::f32, {8});
  cf::Array d = x - y;
  const cf::detail::Node* dn = d.node().get();
  cf::Array z = std::move(d) * 2;
  CHECK_FALSE(d.defined());  // NOLINT(bugprone-use-after-move): moved from on purpose
  CHECK(z.node()->inputs[0].get() == dn);
  CHECK(dn->array_refs.load() == 0);  // no handle holds it now: not a root of its own
  // The same array twice in one operation: shared. (Moved twice, it reaches one operand empty,
  // as a moved-from C++ object does, and the op says so.)
  cf::Array s = x + y;
  const cf::detail::Node* sn = s.node().get();
  cf::Array sq = s * s;
  CHECK(sq.node()->inputs[0].get() == sn);
  CHECK(sq.node()->inputs[1].get() == sn);
  CHECK_THROWS_WITH_AS(cf::multiply(std::move(s), std::move(s)), doctest::Contains("empty Array handle"), cf::ValueError);
  // A function (not an operator) shares its temporary operands: such an Operand may be kept
  // and used again (test_core_promotion.cpp), so only the operators' own operands give nodes up.
  cf::Array e = x - y;
  const cf::detail::Node* en = e.node().get();
  cf::Array f = cf::multiply(std::move(e), 2);
  CHECK(f.node()->inputs[0].get() == en);
  // A named array stays: an lvalue operand is shared.
  cf::Array w = x * 3;
  cf::Array w2 = w + 1;
  CHECK(w.defined());
  CHECK(w2.node()->inputs[0] == w.node());
  // Values, through the reference backend.
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::from_host(std::vector<float>{1, 2, 3});
  auto b = cf::from_host(std::vector<float>{4, 6, 8});
  cf::Array t = a - b;
  CHECK(host<float>(cf::multiply(t, t)) == std::vector<float>{9, 16, 25});
  CHECK(host<float>(((a - b) * (a + b) * 0.5 + a * 3 - b / 2) * (a * a + 1)) ==
        std::vector<float>{(-7.5f + 3 - 2) * 2, (-16 + 6 - 3) * 5, (-27.5f + 9 - 4) * 10});
}

TEST_CASE("a reduction of a temporary, evaluated in the same statement, is one kernel; of a named array, two") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::random::normal({4096}, cf::f32, 1).eval();
  auto y = cf::random::normal({4096}, cf::f32, 2).eval();
  double want = 0;
  {
    const auto hx = x.to_host<float>(), hy = y.to_host<float>();
    for (size_t i = 0; i < hx.size(); ++i) want += double(hx[i] - hy[i]) * double(hx[i] - hy[i]);
  }
  // The temporaries (x - y) * (x - y) live to the end of the statement, past .item(): taken
  // by value and dropped by sum, they are named by no handle, so they fuse into the reduction.
  cf::reset_stats();
  const float s = cf::sum((x - y) * (x - y)).item<float>();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(s == doctest::Approx(want).epsilon(1e-5));
  cf::reset_stats();
  (void)cf::max(cf::abs(x - y) * 2, 0).item<float>();
  (void)cf::mean(x * y).item<float>();
  (void)cf::linalg::norm(x - y).item<float>();
  (void)cf::argmax(x * y).item<int64_t>();
  CHECK(cf::stats().kernels_launched == 4);
  // A named array computed by the same evaluation is kept in memory (later statements read
  // it from there): two kernels, and the handle still holds its value.
  cf::Array d = (x - y) * (x - y);
  cf::reset_stats();
  const float s2 = cf::sum(d).item<float>();
  CHECK(cf::stats().kernels_launched == 2);
  CHECK(s2 == s);
  CHECK(d.defined());
  CHECK(d.node()->is_materialized());
}

TEST_CASE("a result that reads another through a reduction or a matmul does not share its kernel") {
  // Found by tests/test_fuzz (device seed 656456491555): x and f(sum(x)) of one shape in one
  // kernel made the reduction run both after and before it ("groups depend on each other in
  // a cycle"). Now the later result starts a kernel of its own.
  cf::BackendScope ref(cf::Backend::Reference);
  auto v1 = cf::from_host(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}, cf::Shape{3, 3});
  auto v0 = cf::from_host(std::vector<int32_t>{1, 0, 2, 0, 1, 0, 3, 0, 1}, cf::Shape{3, 3});
  auto v3 = v1.astype(cf::f64);
  auto v7 = cf::sum(v3, 0, true) - v0;
  auto v9 = cf::matmul(v3, v7);
  auto ex = plan_of({v9, v3});
  CHECK(ex->steps.size() == 4);  // v3, sum, v7 (the matmul's input), matmul
  cf::eval(v9, v3);
  CHECK(host<double>(v9) == std::vector<double>{62, 88, 103, 158, 220, 256, 254, 352, 409});
  // Without a library call the reduction's kernel writes x itself (rule siblings), so
  // nothing needs splitting: still two kernels.
  auto x = v1 * 2;
  auto y = x - cf::sum(x, 0, true);
  auto ex2 = plan_of({x, y});
  CHECK(ex2->steps.size() == 2);
  cf::eval(x, y);
  CHECK(host<float>(y) == std::vector<float>{-22, -26, -30, -16, -20, -24, -10, -14, -18});
}

TEST_CASE("a row kernel that reads a result computed from its own first phase computes it inline") {
  // Found by tests/gpu/test_fuzz_gpu (seed 171496370102): x = cumsum(a) - mean(a) (its own
  // kernel, after the scan and the mean) and min(x) (a second phase of the mean's row
  // kernel): reading x from memory would make that kernel run both before and after x's
  // ("groups depend on each other in a cycle"). The row kernel runs first and computes x
  // inline; x's kernel reads the mean it wrote.
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::from_host(std::vector<float>{1, 2, 3, 4, 8, 6, 4, 2}, cf::Shape{2, 4});
  auto x = cf::cumsum(a, 1) - cf::mean(a, 1, true);
  auto m = cf::min(x, 1);
  auto ex = plan_of({m, x});
  CHECK(ex->steps.size() == 3);  // the scan, the row kernel (mean, then min), x
  cf::eval(m, x);
  CHECK(host<float>(x) == std::vector<float>{-1.5f, 0.5f, 3.5f, 7.5f, 3, 9, 13, 15});
  CHECK(host<float>(m) == std::vector<float>{-1.5f, 3});
}

TEST_CASE("a generator that is also a result is generated inline by its readers: the plan does not change") {
  // Device fuzz seed 538946791883: with arange(64) among the results, the sibling reductions
  // nanmin(arange) and sum(f(x)) read the int64 result back from memory and loaded two wide;
  // fuse(), which returns a copy of a leaf result, generated it inline and loaded four wide,
  // so the float32 sum came out rounded differently traced and untraced.
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::ones({64}, cf::f32).eval();
  auto g = cf::arange(64);
  auto reduction_kernel = [](const std::string& dump) {
    const size_t at = dump.find("reduction kernel ");
    REQUIRE(at != std::string::npos);
    return dump.substr(at, dump.find(' ', at + 17) - at);
  };
  const std::string alone = reduction_kernel(cf::plan_dump({cf::nanmin(g, 0), cf::sum(cf::log1p(cf::abs(x)), 0)}));
  const std::string with_g = reduction_kernel(cf::plan_dump({cf::nanmin(g, 0), cf::sum(cf::log1p(cf::abs(x)), 0), g}));
  CHECK(alone == with_g);
  auto f = cf::fuse([](const cf::Array& v) {
    auto a = cf::arange(64);
    return std::vector<cf::Array>{cf::nanmin(a, 0), cf::sum(cf::log1p(cf::abs(v)), 0), a};
  });
  auto r = f(x);
  CHECK(host<int64_t>(r[2]) == host<int64_t>(g));
  CHECK(host<int64_t>(r[0]) == std::vector<int64_t>{0});
}
