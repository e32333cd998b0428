// tests/test_indexing_compaction.cpp: the tiled compaction behind selections by mask
// (src/library/compaction_call.hpp), in both forms (one pass with a look-back, the default;
// two passes, CUFUSE_SELECT_ONE_PASS_BYTES=0): results against a plain host loop at sizes
// around the tile (8192): smaller than one tile, whole tiles, partly full tiles, all True, all
// False, values of 1, 2, 4, 8 and 16 bytes, rows with tails, coordinates, strided and
// broadcast masks; the kernel counts of each form, with the mask and values in memory or
// computed by their fused producers (rule fused-input); the one pass's memory policy and its
// 64-bit form past 2^31 elements; NVRTC compiles every kernel the reference backend plans
// (CUFUSE_REFERENCE_COMPILE), every variant here included.
#include <random>

#include "codegen/compaction_kernels.hpp"
#include "compile/compiler.hpp"
#include "core/library_call.hpp"
#include "library/compaction_call.hpp"
#include "runtime/storage.hpp"
#include "test_core_helpers.hpp"
#include "test_sandbox.hpp"
#include "test_values.hpp"

namespace {
using test_values::i64;

// The two-pass form for a scope (a selection's upper bound past 0 bytes: every one).
struct TwoPasses {
  std::optional<cufuse_test::ScopedEnv> env;
  explicit TwoPasses(bool on) {
    if (on) env.emplace("CUFUSE_SELECT_ONE_PASS_BYTES", "0");
  }
};

cf::Array bools(const std::vector<uint8_t>& b, cf::Shape s) { return cf::from_host(b.data(), cf::bool_, s); }

// A mask of n elements: pattern 0 random (density p), 1 all True, 2 all False, 3 only the last.
std::vector<uint8_t> make_mask(int64_t n, int pattern, double p, uint32_t seed) {
  std::vector<uint8_t> m(static_cast<size_t>(n), pattern == 1 ? 1 : 0);
  std::mt19937 g(seed);
  std::bernoulli_distribution d(p);
  if (pattern == 0)
    for (auto& v : m) v = d(g) ? 1 : 0;
  if (pattern == 3 && n > 0) m.back() = 1;
  return m;
}
}  // namespace

TEST_CASE("x[mask] by tiles: odd sizes, partly full tiles, all True, all False, one tile or less, both forms") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t T = cf::detail::kCompactTile;
  uint32_t seed = 1;
  for (bool two : {false, true})
  for (int64_t n : {int64_t(1), int64_t(31), int64_t(33), T - 1, T, T + 1, 3 * T + 77, 40 * T + 5}) {
    for (int pattern = 0; pattern < 4; ++pattern) {
      for (double p : {0.5, 0.03}) {
        if (pattern != 0 && p != 0.5) continue;
        CAPTURE(two);
        CAPTURE(n);
        CAPTURE(pattern);
        TwoPasses form(two);
        CAPTURE(p);
        const std::vector<uint8_t> hm = make_mask(n, pattern, p, seed++);
        std::vector<int32_t> hx(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) hx[static_cast<size_t>(i)] = static_cast<int32_t>(i * 7 - 3);
        std::vector<int64_t> want, idx;
        for (int64_t i = 0; i < n; ++i)
          if (hm[static_cast<size_t>(i)]) {
            want.push_back(hx[static_cast<size_t>(i)]);
            idx.push_back(i);
          }
        const cf::Array x = cf::from_host(hx), m = bools(hm, cf::Shape{n});
        CHECK(i64(x[m]) == want);
        CHECK(i64(cf::flatnonzero(m)) == idx);
        CHECK(i64(cf::extract(m, x)) == want);
        // int64 and complex128 values (8 and 16 bytes), int16 (2 bytes), and a bool (1 byte)
        CHECK(i64(x.astype(cf::i64)[m]) == want);
        std::vector<int64_t> want16;
        for (int64_t v : want) want16.push_back(static_cast<int16_t>(v));
        CHECK(i64(x.astype(cf::i16)[m]) == want16);
        CHECK(i64(cf::real(x.astype(cf::c128)[m])) == want);
        CHECK(cf::count_nonzero(m[m]).item<int64_t>() == static_cast<int64_t>(want.size()));
      }
    }
  }
}

static void rows_and_coordinates(bool two) {
  cf::BackendScope ref(cf::Backend::Reference);
  CAPTURE(two);
  TwoPasses form(two);
  const int64_t R = cf::detail::kCompactTile + 5;
  const std::vector<uint8_t> hm = make_mask(R, 0, 0.5, 99);
  const cf::Array m = bools(hm, cf::Shape{R});
  const cf::Array x = cf::arange(R * 3).reshape({R, 3});
  std::vector<int64_t> rows, coords;
  for (int64_t i = 0; i < R; ++i)
    if (hm[static_cast<size_t>(i)])
      for (int64_t d = 0; d < 3; ++d) rows.push_back(i * 3 + d);
  cf::Array s = x[m];
  CHECK(s.shape() == cf::Shape{static_cast<int64_t>(rows.size() / 3), 3});
  CHECK(i64(s) == rows);
  // argwhere of a (R/..., 7)-shaped mask: coordinates of each True element
  const int64_t A = 1301, B = 7;
  const std::vector<uint8_t> h2 = make_mask(A * B, 0, 0.4, 7);
  for (int64_t i = 0; i < A * B; ++i)
    if (h2[static_cast<size_t>(i)]) {
      coords.push_back(i / B);
      coords.push_back(i % B);
    }
  const cf::Array m2 = bools(h2, cf::Shape{A, B});
  CHECK(i64(cf::argwhere(m2)) == coords);
  auto nz = cf::nonzero(m2);
  REQUIRE(nz.size() == 2);
  CHECK(nz[0].size() == static_cast<int64_t>(coords.size() / 2));
  // a strided (transposed) mask is read through its view; a mask at an odd offset byte by byte
  CHECK(i64(cf::argwhere(m2.T())).size() == coords.size());
  const cf::Array odd = bools(hm, cf::Shape{R}).index({cf::slice(1, cf::none)});
  CHECK(cf::flatnonzero(odd).size() == cf::count_nonzero(odd).item<int64_t>());
}

TEST_CASE("rows and coordinates by tiles: masks over leading dims, argwhere past one tile, both forms") {
  rows_and_coordinates(false);
  rows_and_coordinates(true);
}

TEST_CASE("x[mask] of arrays in memory: one kernel and the count read back (one pass); counts, scan, compaction (two)") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = 3 * cf::detail::kCompactTile + 11;
  const cf::Array x = cf::arange(n).astype(cf::f32), m = cf::remainder(cf::arange(n), 3) == 0;
  cf::eval(x, m);
  for (bool two : {false, true}) {
    CAPTURE(two);
    TwoPasses form(two);
    cf::reset_stats();
    cf::Array s = x[m];
    CHECK(cf::stats().kernels_launched == (two ? 2 : 1));  // one pass: the selection; two: counts, their cumsum
    CHECK(cf::stats().evaluations == 1);
    s.eval();
    CHECK(cf::stats().kernels_launched == (two ? 3 : 1));  // one pass: s is the buffer's first rows already
    CHECK(s.size() == (n + 2) / 3);
    CHECK(s.index({-1}).item<float>() == static_cast<float>((n - 1) / 3 * 3));
  }
}

TEST_CASE("one pass: a sparse selection is copied out of its upper-bound buffer; a dense one stays a view of it") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = int64_t(1) << 19;  // f32: a buffer of 2 MiB
  const cf::Array x = cf::arange(n).astype(cf::f32);
  const cf::Array sparse = cf::remainder(cf::arange(n), 100) == 0, dense = cf::remainder(cf::arange(n), 3) == 0;
  const cf::Array small = cf::remainder(cf::arange(1000), 100) == 0;
  cf::eval(x, sparse, dense, small);
  cf::reset_stats();
  cf::Array s = x[sparse];  // 1% selected: under a quarter of the buffer, 2 MiB wasted
  CHECK(cf::stats().kernels_launched == 2);  // the selection, then the copy of the selected rows
  CHECK(s.node()->storage->nbytes == static_cast<size_t>(s.nbytes()));
  CHECK(s.index({-1}).item<float>() == static_cast<float>((n - 1) / 100 * 100));
  cf::reset_stats();
  cf::Array d = x[dense];  // a third: kept as a view of the buffer
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(d.node()->storage->nbytes == static_cast<size_t>(n) * 4);
  CHECK(d.size() == (n + 2) / 3);
  cf::reset_stats();
  cf::Array t = x.index({cf::slice(0, 1000)})[small];  // sparse, but wasting less than 1 MiB: a view
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(i64(t) == std::vector<int64_t>{0, 100, 200, 300, 400, 500, 600, 700, 800, 900});
  // under the threshold's bytes one pass, past it two (the same values)
  for (const char* limit : {"4194304", "2097152", "2097151"}) {
    CAPTURE(limit);
    cufuse_test::ScopedEnv e("CUFUSE_SELECT_ONE_PASS_BYTES", limit);
    cf::reset_stats();
    cf::Array u = x[dense];
    CHECK(cf::stats().kernels_launched == (std::string(limit) == "2097151" ? 2 : 1));
    CHECK(cf::array_equal(u, d));
  }
}

TEST_CASE("one pass past 2^31 elements: 64-bit indices, tiles by ticket, 62-bit counts in the status words") {
  cf::BackendScope ref(cf::Backend::Reference);
  namespace d = cf::detail;
  const int64_t n = (int64_t(1) << 31) + 5;
  const cf::Array m = cf::placeholder(cf::bool_, {n}), x = cf::placeholder(cf::i8, {n});
  auto call = std::make_shared<d::SelectCall>(d::SelectedRows::values(n, 1, cf::i8), cf::Shape{n});
  auto nodes = d::make_library_nodes(call, d::InputVec{m.node(), x.node()});
  const cf::Array buffer(nodes.at(0)), count(nodes.at(1));
  CHECK(count.dtype() == cf::i64);
  CHECK(count.shape() == cf::Shape{});
  const std::string plan = cf::plan_dump({buffer, count});
  CHECK(plan.find("selection by mask in one pass") != std::string::npos);
  CHECK(plan.find("1 kernel") != std::string::npos);
  CHECK(plan.find("typedef long long I;") != std::string::npos);
  CHECK(plan.find("cf_lookback(p.tw, tile") != std::string::npos);
  CHECK(plan.find("atomicAdd(p.ctr, 1u)") != std::string::npos);
  // a placeholder mask has no values to select by
  CHECK_THROWS_AS(static_cast<cf::Array>(x[m]), cf::ValueError);
}

TEST_CASE("a mask a reduction computes is written once, not copied; a reshaped one is copied") {
  cf::BackendScope ref(cf::Backend::Reference);
  const std::vector<uint8_t> hb = make_mask(300 * 4, 0, 0.2, 5);
  const cf::Array b = bools(hb, cf::Shape{300, 4}), x = cf::arange(300);
  cf::eval(b, x);
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 300; ++i) {
    bool any = false;
    for (int64_t j = 0; j < 4; ++j) any = any || hb[static_cast<size_t>(i * 4 + j)];
    if (any) want.push_back(i);
  }
  for (bool two : {false, true}) {
    CAPTURE(two);
    TwoPasses form(two);
    cf::reset_stats();
    cf::Array s = x[cf::any(b, 1)];
    // the reduction (written: a handle names it), then the selection (one pass) or the tile count
    CHECK(cf::stats().kernels_launched == 2);
    CHECK(i64(s) == want);
    CHECK(cf::stats().kernels_launched == (two ? 4 : 3));  // (two: the compaction), then i64's cast
  }
  // any over axis 0 of the transpose, reshaped: a view of a result, copied first
  cf::Array r = x[cf::any(b.T(), 0).reshape({3, 100}).reshape({300})];
  CHECK(i64(r) == want);
}

// Kernels of each step below: one pass, two passes.
static void lazy_masks_and_values(bool two) {
  CAPTURE(two);
  TwoPasses form(two);
  auto K = [two](int one_pass, int two_passes) { return static_cast<uint64_t>(two ? two_passes : one_pass); };
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = 3 * cf::detail::kCompactTile + 11;
  const cf::Array x = cf::arange(n).astype(cf::f32) - 7.0f;
  cf::eval(x);
  const std::vector<float> hx = x.to_host<float>();
  auto want = [&](auto keep, auto val) {
    std::vector<int64_t> w;
    for (int64_t i = 0; i < n; ++i)
      if (keep(hx[static_cast<size_t>(i)])) w.push_back(static_cast<int64_t>(val(hx[static_cast<size_t>(i)], i)));
    return w;
  };
  auto ident = [](float v, int64_t) { return v; };
  auto mod3 = [](float v) { return std::fmod(v + 7.0f, 3.0f) == 0.0f; };
  const cf::Array m = cf::remainder(x + 7.0f, 3.0f) == 0.0f;  // a handle on a lazy mask: stays lazy
  SUBCASE("lazy mask") {
    cf::reset_stats();
    cf::Array s = x[m];
    CHECK(cf::stats().kernels_launched == K(1, 2));  // the selection (mask computed); or count (mask computed), scan
    s.eval();
    CHECK(cf::stats().kernels_launched == K(1, 3));  // (two: compaction, mask computed again)
    CHECK(!m.node()->is_materialized());
    CHECK(i64(s) == want(mod3, ident));
  }
  SUBCASE("lazy values, mask in memory") {
    const cf::Array mm = m.copy();
    cf::eval(mm);
    cf::reset_stats();
    cf::Array s = (x * 2.0f)[mm];
    s.eval();
    CHECK(cf::stats().kernels_launched == K(1, 3));
    CHECK(i64(s) == want(mod3, [](float v, int64_t) { return 2 * v; }));
  }
  SUBCASE("both lazy, and mask and values sharing their producer") {
    cf::reset_stats();
    cf::Array s = (x * 2.0f)[cf::remainder(x + 7.0f, 3.0f) == 0.0f];
    cf::Array t = (x + 1.0f)[(x + 1.0f) > 100.0f];
    cf::eval(s, t);
    CHECK(cf::stats().kernels_launched == K(2, 6));
    CHECK(i64(s) == want(mod3, [](float v, int64_t) { return 2 * v; }));
    CHECK(i64(t) == want([](float v) { return v + 1.0f > 100.0f; }, [](float v, int64_t) { return v + 1; }));
  }
  SUBCASE("mask in memory: as before") {
    const cf::Array mm = m.copy();
    cf::eval(mm);
    cf::reset_stats();
    cf::Array s = x[mm];
    s.eval();
    CHECK(cf::stats().kernels_launched == K(1, 3));
  }
  SUBCASE("nonzero, flatnonzero, argwhere, extract, compress, where of a lazy condition") {
    auto idx = [](float, int64_t i) { return i; };
    auto big = [](float v) { return v > 20000.0f; };
    cf::reset_stats();
    cf::Array f = cf::flatnonzero(x > 20000.0f);
    f.eval();
    CHECK(cf::stats().kernels_launched == K(1, 3));
    CHECK(i64(f) == want(big, idx));
    cf::reset_stats();
    std::vector<cf::Array> nz = cf::nonzero(x > 20000.0f);
    REQUIRE(nz.size() == 1);
    nz[0].eval();
    CHECK(cf::stats().kernels_launched == K(1, 3));
    CHECK(i64(nz[0]) == want(big, idx));
    CHECK(i64(cf::where(x > 20000.0f)[0]) == want(big, idx));
    CHECK(i64(cf::extract(x > 20000.0f, x * 2.0f)) == want(big, [](float v, int64_t) { return 2 * v; }));
    CHECK(i64(cf::compress(x > 20000.0f, x)) == want(big, ident));
    // a float condition: its != 0 computed in the passes
    CHECK(i64(cf::flatnonzero(cf::remainder(x + 7.0f, 3.0f))) == want([&](float v) { return !mod3(v); }, idx));
    // argwhere of a lazy 2-D mask over a transposed array: coordinates, the view read in the passes
    const cf::Array x2 = x.index({cf::slice(0, 3 * 8192)}).reshape({8192, 3});
    cf::eval(x2);
    cf::reset_stats();
    cf::Array a = cf::argwhere(x2.T() > 20000.0f);
    a.eval();
    CHECK(cf::stats().kernels_launched == K(1, 3));
    std::vector<int64_t> co;
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 8192; ++c)
        if (hx[static_cast<size_t>(c * 3 + r)] > 20000.0f) {
          co.push_back(r);
          co.push_back(c);
        }
    CHECK(i64(a) == co);
  }
  SUBCASE("one tile: no scan, no look-back; rows selected by a lazy mask over the leading dim") {
    const cf::Array y = cf::arange(300 * 4).reshape({300, 4});
    cf::eval(y);
    cf::reset_stats();
    cf::Array s = y[cf::remainder(cf::arange(300), 7) == 0];
    s.eval();
    CHECK(cf::stats().kernels_launched == K(1, 2));  // the selection; or count, compaction
    REQUIRE(s.shape() == cf::Shape{43, 4});
    CHECK(s.index({1, 2}).item<int64_t>() == 7 * 4 + 2);
    // a broadcast mask (a scalar comparison broadcast to the rows) and bool, int8, float16 and complex values
    CHECK(cf::array({true}).broadcast_to({300}).size() == 300);
    CHECK(y.index({cf::slice(0, cf::none), 0})[cf::array({true}).broadcast_to({300})].size() == 300);
    const cf::Array sel = cf::remainder(cf::arange(300), 7) == 0;
    CHECK(cf::count_nonzero((y.index({cf::slice(0, cf::none), 0}) > 3)[sel]).item<int64_t>() == 42);
    CHECK(i64((y.index({cf::slice(0, cf::none), 1}).astype(cf::i8) + 1)[sel]).size() == 43);
    const cf::Array c = (y.index({cf::slice(0, cf::none), 1}).astype(cf::c128) * 2.0)[sel];
    CHECK(cf::real(c).index({2}).item<double>() == 2.0 * (14 * 4 + 1));
    const cf::Array h = (y.index({cf::slice(0, cf::none), 1}).astype(cf::f16) * 2.0f)[sel];
    CHECK(h.index({1}).astype(cf::f32).item<float>() == 2.0f * (7 * 4 + 1));
  }
}

TEST_CASE("a lazy mask and lazy values are computed in the one pass's kernel, nothing else") {
  lazy_masks_and_values(false);
}

TEST_CASE("a lazy mask and lazy values are computed in the two passes: count, scan, compaction, nothing else") {
  lazy_masks_and_values(true);
}

TEST_CASE("both forms over a strided and a broadcast mask past one tile, and what their plans say") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = 5 * cf::detail::kCompactTile + 3;
  const std::vector<uint8_t> hm = make_mask(2 * n, 0, 0.5, 17);
  const cf::Array big = bools(hm, cf::Shape{2 * n});
  const cf::Array x = cf::arange(n).astype(cf::f64);
  cf::eval(big, x);
  std::vector<int64_t> want, all;
  for (int64_t i = 0; i < n; ++i) {
    if (hm[static_cast<size_t>(2 * i + 1)]) want.push_back(i);
    all.push_back(i);
  }
  const cf::Array strided = big.index({cf::slice(1, cf::none, 2)});  // every other byte, at an odd offset
  const cf::Array everywhere = cf::array({true}).broadcast_to({n}), nowhere = cf::array({false}).broadcast_to({n});
  for (bool two : {false, true}) {
    CAPTURE(two);
    TwoPasses form(two);
    CHECK(i64(x[strided]) == want);
    CHECK(i64(cf::flatnonzero(strided)) == want);
    CHECK(i64(x[everywhere]) == all);
    CHECK(x[nowhere].shape() == cf::Shape{0});
    CHECK(cf::argwhere(nowhere).shape() == cf::Shape{0, 1});
  }
  // the two-pass plan names its passes (its compaction is lazy until used)
  TwoPasses form(true);
  const std::string plan = cf::plan_dump({x[strided]});
  CHECK(plan.find("selection by mask in two passes, 2: compaction") != std::string::npos);
}
