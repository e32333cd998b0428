// tests/test_indexing_compaction.cpp: the two-pass tiled compaction behind selections by mask
// (src/library/compaction_call.hpp): results against a plain host loop at sizes around the
// tile (8192): smaller than one tile, whole tiles, partly full tiles, all True, all False,
// rows with tails and coordinates; its kernel counts; NVRTC compiles every kernel variant.
#include <random>

#include "codegen/compaction_kernels.hpp"
#include "compile/compiler.hpp"
#include "test_core_helpers.hpp"
#include "test_values.hpp"

namespace {
using test_values::i64;

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

TEST_CASE("x[mask] by tiles: odd sizes, partly full tiles, all True, all False, one tile or less") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t T = cf::detail::kCompactTile;
  uint32_t seed = 1;
  for (int64_t n : {int64_t(1), int64_t(31), int64_t(33), T - 1, T, T + 1, 3 * T + 77}) {
    for (int pattern = 0; pattern < 4; ++pattern) {
      for (double p : {0.5, 0.03}) {
        if (pattern != 0 && p != 0.5) continue;
        CAPTURE(n);
        CAPTURE(pattern);
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
        // int64 and complex128 values (8 and 16 bytes), and a bool (1 byte)
        CHECK(i64(x.astype(cf::i64)[m]) == want);
        CHECK(i64(cf::real(x.astype(cf::c128)[m])) == want);
        CHECK(cf::count_nonzero(m[m]).item<int64_t>() == static_cast<int64_t>(want.size()));
      }
    }
  }
}

TEST_CASE("rows and coordinates by tiles: masks over leading dims, argwhere past one tile") {
  cf::BackendScope ref(cf::Backend::Reference);
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
  // a strided (transposed) mask is copied first; a mask at an odd offset is read byte by byte
  CHECK(i64(cf::argwhere(m2.T())).size() == coords.size());
  const cf::Array odd = bools(hm, cf::Shape{R}).index({cf::slice(1, cf::none)});
  CHECK(cf::flatnonzero(odd).size() == cf::count_nonzero(odd).item<int64_t>());
}

TEST_CASE("x[mask] of arrays in memory: the tile counts, their scan, one count read back, one compaction kernel") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = 3 * cf::detail::kCompactTile + 11;
  const cf::Array x = cf::arange(n).astype(cf::f32), m = cf::remainder(cf::arange(n), 3) == 0;
  cf::eval(x, m);
  cf::reset_stats();
  cf::Array s = x[m];
  CHECK(cf::stats().kernels_launched == 2);  // counts, their cumsum (read back: a copy)
  s.eval();
  CHECK(cf::stats().kernels_launched == 3);
  CHECK(s.size() == (n + 2) / 3);
  CHECK(s.index({-1}).item<float>() == static_cast<float>((n - 1) / 3 * 3));
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
  cf::reset_stats();
  cf::Array s = x[cf::any(b, 1)];
  CHECK(cf::stats().kernels_launched == 2);  // the reduction (written: a handle names it), the tile count
  CHECK(i64(s) == want);
  CHECK(cf::stats().kernels_launched == 4);  // the compaction, then i64's cast
  // any over axis 0 of the transpose, reshaped: a view of a result, copied first
  cf::Array r = x[cf::any(b.T(), 0).reshape({3, 100}).reshape({300})];
  CHECK(i64(r) == want);
}

TEST_CASE("NVRTC compiles the count and every compact kernel") {
  auto compiles = [](const cf::detail::CompactKernel& k) {
    CAPTURE(k.name);
    CHECK(!cf::detail::compile_kernel(k.source, k.name, 80)->cubin.empty());
  };
  compiles(cf::detail::compact_count_kernel());
  using cf::detail::CompactValues;
  for (CompactValues v : {CompactValues::Bits, CompactValues::Coords, CompactValues::Index})
    for (int bytes : {1, 2, 4, 8, 16}) {
      if (v != CompactValues::Bits && bytes != 8) continue;
      for (bool one : {true, false})
        for (bool idx32 : {true, false}) {
          if (v == CompactValues::Index && !one) continue;
          compiles(cf::detail::compact_kernel({v, bytes, false, one, idx32}));
        }
    }
  compiles(cf::detail::compact_kernel({CompactValues::Bits, 4, true, true, false}));
}
