// tests/gpu/test_reduce_layouts_gpu.cpp: the reduction and scan kernels' layouts one by one,
// on the device against the reference evaluator: strided lanes (columns of tall arrays, split
// and not), tiled scans (long rows and outer axes over many blocks, a look-back per tile) and
// part-warp lanes (short rows). A file of its own so that ctest runs it beside
// test_reduce_gpu.cpp (each compiles a few hundred kernels).
#include <algorithm>
#include <cmath>

#include "gpu_compare.hpp"

TEST_CASE("strided lanes: columns of tall arrays, split and not, every reduction") {
  // Rows read across threads (a reduction over axis 0 of a C-order array) with fewer rows
  // than fill the GPU get several lanes each, strided by the block's rows, combined through
  // shared memory (reduction_emitter.cpp, choose_strided_lanes); long ones also split over blocks.
  const cf::DType types[] = {cf::bool_, cf::i8, cf::i32, cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};
  const std::vector<cf::Shape> shapes = {{20000, 1}, {4000, 3}, {70000, 3}, {3000, 16}, {50000, 33}, {9000, 256}, {600, 40, 7}};
  for (cf::DType t : types)
    for (const auto& s : shapes) {
      auto a = random_array(t, s, cf::is_float(t) ? kFinite : kGeneral);
      const std::string what = std::string(cf::name(t)) + " " + cf::to_string(s);
      INFO(what);
      const double tol = red_tol(cf::sum(a).dtype());
      const double atol = cf::is_float(t) ? sum_atol(a, s[0]) : 0;
      CHECK(check_against_reference(cf::sum(a, 0), tol, "sum " + what, atol) == 0);
      CHECK(check_against_reference(cf::max(a, 0, true), 0, "max " + what) == 0);
      CHECK(check_against_reference(cf::any(a, 0), 0, "any " + what) == 0);
      CHECK(check_against_reference(cf::all(a, 0), 0, "all " + what) == 0);
      CHECK(check_against_reference(cf::argmax(a, 0), 0, "argmax " + what) == 0);
      CHECK(check_against_reference(cf::argmin(a, 0), 0, "argmin " + what) == 0);
      if (t == cf::bool_) continue;
      const double mean_atol = cf::is_float(t) ? atol / double(s[0]) : sum_atol(a.astype(cf::f64), s[0]);
      CHECK(check_against_reference(cf::mean(a, 0), 64, "mean " + what, mean_atol) == 0);
      const double var_ulps = std::max(1024.0, 2.0 * static_cast<double>(s[0]));
      CHECK(check_against_reference(cf::var(a, 0), var_ulps, "var " + what) == 0);
      CHECK(check_against_reference(cf::nanmin(a, 0), 0, "nanmin " + what) == 0);
    }
  // a row pattern over axis 0 with a row-shaped result and phases (rows of 700 stay one kernel)
  for (int64_t c : {3, 16, 100}) {
    auto a = random_array(cf::f32, {700, c}, kFinite);
    auto e = cf::exp(a - cf::max(a, 0, true));
    CHECK(check_against_reference(e / cf::sum(e, 0, true), 64, "softmax over axis 0", 1e-7) == 0);
    CHECK(check_against_reference(a - cf::mean(a, 0, true), 64, "centred columns", 1e-5) == 0);
  }
  // scans along an outer axis over many rows: a thread per row, in order
  for (cf::DType t : {cf::i8, cf::i64, cf::f16, cf::f32, cf::f64}) {
    auto a = random_array(t, {40, 3000, 3}, cf::is_float(t) ? kFinite : kSmallInts);
    const double tol = red_tol(cf::sum(a).dtype());
    CHECK(check_against_reference(cf::cumsum(a, 0), tol, "cumsum over axis 0", cf::is_float(t) ? sum_atol(a, 40) : 0) == 0);
    CHECK(check_against_reference(cf::cumsum(a * 2 + 1, 1), tol, "cumsum over axis 1 of an expression",
                                  cf::is_float(t) ? 3 * sum_atol(a, 3000) : 0) == 0);
    auto rev = a[{cf::slice(cf::none, cf::none, -1)}];
    CHECK(check_against_reference(cf::cumprod(rev[{cf::slice(0, 6)}], 0), tol, "cumprod of a reversed view") == 0);
  }
  // the same bits on every run
  auto big = random_array(cf::f32, {300000, 5}, kFinite);
  auto first = cf::sum(big, 0).to_host<float>();
  for (int i = 0; i < 3; ++i) CHECK(cf::sum(big, 0).to_host<float>() == first);
}

TEST_CASE("tiled scans: long rows and outer axes over many blocks, every dtype, the same bits every run") {
  // Scans cut into tiles over many blocks with a look-back for each tile's prefix:
  // contiguous rows of 4096 or more (scan_tiles.cpp), vector loads or not (odd lengths, a
  // view one element in), and outer-axis scans of up to 2^18 columns (scan_kernel.cpp); and
  // many short contiguous rows, 1 to 32 lanes each (scan_rows.cpp).
  const cf::DType types[] = {cf::bool_, cf::i8, cf::u8, cf::i32, cf::i64, cf::f16, cf::bf16, cf::f32, cf::f64};
  const std::vector<std::pair<cf::Shape, int>> cases = {
      {{(1 << 20) + 5}, 0}, {{3, 70001}, 1}, {{2, 40000}, 1}, {{5000, 7}, 0}, {{3001, 40}, 0}, {{700, 300}, 0}, {{90, 3, 500}, 0},
      {{3000, 17}, 1}, {{2100, 32}, 1}, {{2100, 64}, 1}};
  for (cf::DType t : types)
    for (const auto& [s, ax] : cases) {
      auto a = random_array(t, s, cf::is_float(t) ? kFinite : kGeneral);
      const std::string what = std::string(cf::name(t)) + " " + cf::to_string(s) + " axis " + std::to_string(ax);
      INFO(what);
      const double tol = red_tol(cf::sum(a).dtype());
      const double atol = cf::is_float(t) ? sum_atol(a, s[ax]) : 0;
      CHECK(check_against_reference(cf::cumsum(a, ax), tol, "cumsum " + what, atol) == 0);
      if (t == cf::bool_) continue;
      // an unaligned view of the same data: element loads, not vectors
      auto off = s.ndim() == 1 ? a[{cf::slice(1, cf::none)}] : a[{cf::slice(cf::none, cf::none), cf::slice(1, cf::none)}];
      CHECK(check_against_reference(cf::cumsum(off, ax), tol, "cumsum of a view one element in " + what,
                                    cf::is_float(t) ? sum_atol(off, off.shape(ax)) : 0) == 0);
      // a fused producer. It keeps the mean of `a` (0): one that drifts (a * 2 - 1) takes a
      // float16 sum of 70001 terms past 65504, where NumPy's one-by-one rounding sticks at
      // -65504 for a while and a sum reassociated into tiles reaches -inf sooner.
      CHECK(check_against_reference(cf::cumsum(a * 2 + a, ax), tol, "cumsum of an expression " + what,
                                    cf::is_float(t) ? 3 * atol + 1e-6 : 0) == 0);
    }
  // products: factors near 1 over long rows; small integers wrap the same in any order
  auto near1 = random_normal(cf::f64, {2, 30000}, 1e-3) + 1.0;
  CHECK(check_against_reference(cf::cumprod(near1, 1), 4096, "cumprod of long rows") == 0);
  CHECK(check_against_reference(cf::cumprod(near1.T(), 0), 4096, "cumprod over axis 0 of a transposed view") == 0);
  auto ints = random_array(cf::i64, {40000, 3}, kSmallInts);
  CHECK(check_against_reference(cf::cumprod(ints, 0), 0, "cumprod of small ints over axis 0") == 0);
  CHECK(check_against_reference(cf::cumprod(ints.T(), 1), 0, "cumprod of small ints along rows") == 0);
  // the same bits on every run, whichever predecessor a tile's look-back found ready
  auto big = random_normal(cf::f32, {1 << 22});
  auto cols = random_normal(cf::f32, {20000, 33});
  const auto b0 = cf::cumsum(big).to_host<float>();
  const auto c0 = cf::cumsum(cols, 0).to_host<float>();
  for (int i = 0; i < 3; ++i) {
    CHECK(cf::cumsum(big).to_host<float>() == b0);
    CHECK(cf::cumsum(cols, 0).to_host<float>() == c0);
  }
  CHECK(check_against_reference(cf::cumsum(big), 64, "cumsum of 2^22 normals", sum_atol(big, 1 << 22)) == 0);
}

TEST_CASE("row scans: lanes for rows shorter than a tile, tiles and a two-level look-back for longer ones") {
  // Contiguous rows (scan_rows.cpp, scan_tiles.cpp): rows under a tile get 1 to 32 lanes each
  // (16-byte vectors striped over them, or elements); rows of several tiles, many rows at once,
  // find each tile's prefix by groups of 32 tiles (rows of 300000 f32: 74 tiles, 3 groups).
  const cf::DType types[] = {cf::i8, cf::i64, cf::f16, cf::f32, cf::f64};
  const std::vector<cf::Shape> shapes = {{1000, 100}, {300, 1000}, {64, 4095}, {7, 300000}, {5, 140001}};
  for (cf::DType t : types)
    for (const auto& s : shapes) {
      auto a = random_array(t, s, cf::is_float(t) ? kFinite : kGeneral);
      const std::string what = std::string(cf::name(t)) + " " + cf::to_string(s);
      INFO(what);
      const double tol = red_tol(cf::sum(a).dtype());
      CHECK(check_against_reference(cf::cumsum(a, 1), tol, "cumsum " + what, cf::is_float(t) ? sum_atol(a, s[1]) : 0) == 0);
      auto off = a[{cf::slice(cf::none, cf::none), cf::slice(1, cf::none)}];
      CHECK(check_against_reference(cf::cumsum(off, 1), tol, "cumsum of a view one element in " + what,
                                    cf::is_float(t) ? sum_atol(off, s[1] - 1) : 0) == 0);
    }
  // products: odd integers multiply (wrapping) to the same bits in any order; factors near 1
  // over rows of 69 tiles of 2048 (f64 rounds each product a little differently from NumPy's
  // one-by-one order: the drift over 140000 factors is far under a misplaced tile's factor)
  auto odd = random_array(cf::i64, {3, 300000}, kSmallInts) * 2 + 1;
  CHECK(check_against_reference(cf::cumprod(odd, 1), 0, "cumprod of odd integers along rows of 300000") == 0);
  auto near1 = random_normal(cf::f64, {2, 140000}, 1e-3) + 1.0;
  CHECK(check_against_reference(cf::cumprod(near1, 1), 65536, "cumprod of factors near 1 along rows of 140000") == 0);
  // the same bits on every run: many rows, each of several groups of tiles
  auto rows = random_normal(cf::f32, {7, 300000});
  const auto r0 = cf::cumsum(rows, 1).to_host<float>();
  for (int i = 0; i < 3; ++i) CHECK(cf::cumsum(rows, 1).to_host<float>() == r0);
}

TEST_CASE("long 1-D scans: tiles of 8192, a tile a block, many groups of tiles") {
  // Rows past 2^18 elements (scan_tiles.cpp): a block takes one tile by ticket and looks back
  // by groups of 32 tiles. 2^23 + 3 f32 (1025 tiles, 33 groups; no 16-byte vectors), 2^23
  // (vectors), f64 (2048-element tiles, 2049 of them), ints, fused producers, products of
  // signs and rows of several long tiles each; the same bits on every run.
  for (int64_t n : {(int64_t(1) << 23) + 3, int64_t(1) << 23}) {
    auto a = random_normal(cf::f32, {n});
    const std::string what = "f32[" + std::to_string(n) + "]";
    INFO(what);
    CHECK(check_against_reference(cf::cumsum(a), 64, "cumsum " + what, sum_atol(a, n)) == 0);
    // a fused producer that drifts, in whole numbers below 2^24: exact in any order (NumPy's
    // one-by-one f32 sum of a * 2 + 1 is itself up to ~500 off the exact sums here, past
    // any tolerance a reordered sum could be held to)
    CHECK(check_against_reference(cf::cumsum(cf::floor(a * 4) + 1), 0, "cumsum(floor(x * 4) + 1) " + what) == 0);
    const auto b0 = cf::cumsum(a).to_host<float>();
    for (int i = 0; i < 3; ++i) CHECK(cf::cumsum(a).to_host<float>() == b0);
  }
  auto d = random_normal(cf::f64, {(int64_t(1) << 22) + 1});
  CHECK(check_against_reference(cf::cumsum(d), 64, "cumsum f64[2^22 + 1]", sum_atol(d, d.shape(0))) == 0);
  CHECK(check_against_reference(cf::cumsum(cf::floor(d * 4) + 1), 0, "cumsum(floor(x * 4) + 1) f64[2^22 + 1]") == 0);
  auto i32 = random_array(cf::i32, {(int64_t(1) << 22) + 7}, kSmallInts);
  CHECK(check_against_reference(cf::cumsum(i32), 0, "cumsum i32[2^22 + 7] (int64 sums)") == 0);
  CHECK(check_against_reference(cf::cumsum(i32, 0, cf::i32), 0, "cumsum i32[2^22 + 7] in int32") == 0);
  auto u32 = random_array(cf::u32, {int64_t(1) << 22}, kGeneral);
  CHECK(check_against_reference(cf::cumprod(u32 * 2 + 1), 0, "cumprod of odd u32[2^22] (wrapping)") == 0);
  // f32 products of +-1 are exact in any order (factors near 1 are not: f32 rounds them with
  // a bias near 1, a drift of 0.4% over 2^20 of them whichever the order)
  auto signs = cf::sign(random_normal(cf::f32, {(int64_t(1) << 21) + 4}));
  CHECK(check_against_reference(cf::cumprod(signs), 0, "cumprod of f32[2^21 + 4] signs") == 0);
  auto rows = random_normal(cf::f32, {3, (int64_t(1) << 20) + 4});
  CHECK(check_against_reference(cf::cumsum(rows, 1), 64, "cumsum along rows of 2^20 + 4", sum_atol(rows, rows.shape(1))) == 0);
}

TEST_CASE("part-warp lanes: short rows, every reduction, aligned or not, with row-shaped results") {
  // Rows of 4 to 255 elements along the innermost axis: 2 to 32 adjacent lanes per row
  // (reduction_emitter.cpp, choose_shape), with 16-byte vectors where rows are aligned.
  const cf::DType types[] = {cf::bool_, cf::i8, cf::i64, cf::f16, cf::f32, cf::f64};
  for (cf::DType t : types)
    for (int64_t n : {4, 5, 8, 12, 17, 31, 48, 64, 100, 255}) {
      auto full = random_array(t, {3001, n + 1}, cf::is_float(t) ? kFinite : kGeneral);
      for (bool offset : {false, true}) {
        // the offset view: rows of n starting one element in, so never 16-byte aligned
        auto a = offset ? full[{cf::slice(cf::none, cf::none), cf::slice(1, cf::none)}]
                        : full[{cf::slice(cf::none, cf::none), cf::slice(0, n)}].copy();
        const std::string what = std::string(cf::name(t)) + " rows of " + std::to_string(n) + (offset ? " offset" : "");
        INFO(what);
        const double tol = red_tol(cf::sum(a).dtype());
        const double atol = cf::is_float(t) ? sum_atol(a, n) : 0;
        CHECK(check_against_reference(cf::sum(a, 1), tol, "sum " + what, atol) == 0);
        CHECK(check_against_reference(cf::max(a, 1, true), 0, "max " + what) == 0);
        CHECK(check_against_reference(cf::any(a, 1), 0, "any " + what) == 0);
        CHECK(check_against_reference(cf::argmin(a, 1), 0, "argmin " + what) == 0);
        if (t == cf::bool_) continue;
        CHECK(check_against_reference(cf::var(a, 1), std::max(1024.0, 2.0 * n), "var " + what) == 0);
        // the mean's order-dependent error (integers: float64 sums of values up to 2^63)
        CHECK(check_against_reference(a - cf::mean(a, 1, true), 64, "centred rows " + what,
                                      cf::is_float(t) ? atol / double(n) : sum_atol(a.astype(cf::f64), n)) == 0);
        if (!cf::is_float(t)) continue;
        auto e = cf::exp(a - cf::max(a, 1, true));
        CHECK(check_against_reference(e / cf::sum(e, 1, true), 64, "softmax " + what, 1e-6) == 0);
      }
    }
}
