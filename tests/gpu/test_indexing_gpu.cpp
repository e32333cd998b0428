// tests/gpu/test_indexing_gpu.cpp: issue 30's advanced indexing, masks and scatters on the
// device against the host reference backend, on random inputs: take / take_along_axis / x[idx]
// fused with producers and consumers (one kernel), in every dtype with every index dtype and
// negative indices; x[mask], nonzero, argwhere, flatnonzero, extract, compress in both forms
// (one pass: one kernel with a decoupled look-back over tiles, the count read back; two
// passes: the mask's tile counts, their scan, the count read back, the compaction; lazy masks
// and values computed in those kernels; sizes around the tile and up to 2^24); put, x[idx] = v, x[mask] = v / += v; add_at /
// maximum_at / minimum_at with many duplicates (integers exactly; floats within the rounding
// of a different summation order); and the IndexError of an out-of-bounds index, recorded by
// the kernel and thrown at the next read-back.
#include "graph/gather.hpp"
#include "gpu_compare.hpp"
#include "test_sandbox.hpp"

namespace {

const cf::DType kAll[] = {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u16,
                          cf::u32,   cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};

// Random int64 indices in [-n, n) (negative ones wrap) or [0, n).
cf::Array random_index(int64_t n, const cf::Shape& s, bool negative = true) {
  std::uniform_int_distribution<int64_t> d(negative ? -n : 0, n - 1);
  std::vector<int64_t> v(static_cast<size_t>(cf::numel(s)));
  for (auto& x : v) x = d(rng());
  return cf::from_host(v, s);
}

// The same computation on the reference backend, from the same host data.
cf::Array on_host(const cf::Array& dev) {
  std::vector<unsigned char> b(static_cast<size_t>(dev.nbytes()));
  dev.copy_to_host(b.data(), b.size());
  cf::BackendScope ref(cf::Backend::Reference);
  return cf::from_host(b.data(), dev.dtype(), dev.shape());
}

void check_bits(const cf::Array& dev, const cf::Array& host, const std::string& what) {
  REQUIRE_MESSAGE(dev.shape() == host.shape(), what);
  std::vector<unsigned char> a(static_cast<size_t>(dev.nbytes())), b(static_cast<size_t>(host.nbytes()));
  dev.copy_to_host(a.data(), a.size());
  host.copy_to_host(b.data(), b.size());
  CHECK_MESSAGE(a == b, what);
}

void check_same(const cf::Array& dev, const std::string& what, double ulps = 0, double atol = 0) {
  const auto want = cf::detail::reference_evaluate(dev.node());
  CHECK_MESSAGE(compare_with(dev, want, ulps, what, atol) == 0, what);
}

}  // namespace

TEST_CASE("gathers on the device equal the reference, fused into one kernel") {
  for (cf::DType t : kAll) {
    const std::string dn(cf::name(t));
    const cf::Array a = random_array(t, {37, 53});
    for (cf::DType it : {cf::i8, cf::i32, cf::i64, cf::u16, cf::u64}) {
      const cf::Array i = random_index(37, {301}, !cf::is_unsigned_int(it)).astype(it);
      check_same(cf::take(a, i, 0), "take axis 0 " + dn);
    }
    const cf::Array j = random_index(53, {5, 7});
    check_same(cf::take(a, j, 1), "take axis 1 " + dn);
    check_same(cf::take(a, j), "take flat " + dn);
    check_same(a.index({random_index(37, {4, 1}), cf::_, }), "x[idx, :] " + dn);
    check_same(a.index({random_index(37, {3, 1}), random_index(53, {1, 6})}), "x[i, j] " + dn);
    check_same(cf::take_along_axis(a, random_index(53, {37, 9}), 1), "take_along_axis " + dn);
  }
  const cf::Array x = random_normal(cf::f32, {1 << 20});
  const cf::Array i = random_index(1 << 20, {1 << 18});
  x.eval();
  i.eval();
  cf::reset_stats();
  cf::Array y = cf::take(cf::exp(x), i) * 2;
  y.eval();
  CHECK(cf::stats().kernels_launched == 1);
  // exp is CUDA's on the device (the op table's precision class: 2 ulps, compared at twice
  // that), and a sum's order is the device's: neither is bit-exact against the host.
  check_same(cf::take(cf::exp(x), i) * 2, "take(exp(x), idx) * 2", 4);
  const double scale = cf::sum(cf::abs(cf::take(x, i))).astype(cf::f64).item<double>();
  check_same(cf::sum(cf::take(x, i)), "sum(take(x, idx))", 0, 1e-6 * scale);
  // a gather of a transposed, strided view, and a gather of a gather
  const cf::Array m = random_normal(cf::f64, {300, 200});
  check_same(cf::take(m.T().index({cf::slice(1, cf::none, 3)}), random_index(300, {50}), 1), "strided source");
  check_same(cf::take(cf::take(m, random_index(300, {40}), 0), random_index(200, {7}), 1), "gather of a gather");
}

// The two-pass form for a scope (CUFUSE_SELECT_ONE_PASS_BYTES=0), or the default one pass.
struct SelectForm {
  std::optional<cufuse_test::ScopedEnv> env;
  explicit SelectForm(bool two) {
    if (two) env.emplace("CUFUSE_SELECT_ONE_PASS_BYTES", "0");
  }
};

static void selections_equal_reference(bool two) {
  CAPTURE(two);
  SelectForm form(two);
  for (cf::DType t : kAll) {
    const std::string dn(cf::name(t));
    const cf::Array a = random_array(t, {61, 47});
    const cf::Array m = random_array(cf::bool_, {61, 47});
    const cf::Array ha = on_host(a), hm = on_host(m);
    cf::Array s = a[m];
    cf::Array hs;
    {
      cf::BackendScope ref(cf::Backend::Reference);
      hs = ha[hm];
    }
    check_bits(s, hs, "x[mask] " + dn);
    cf::Array nz = cf::argwhere(a), hnz;
    {
      cf::BackendScope ref(cf::Backend::Reference);
      hnz = cf::argwhere(ha);
    }
    check_bits(nz, hnz, "argwhere " + dn);
    // a lazy mask and lazy values, computed in the passes (rule fused-input)
    cf::Array lz = cf::where(m, a, a)[cf::logical_not(m)], hlz;
    {
      cf::BackendScope ref(cf::Backend::Reference);
      hlz = cf::where(hm, ha, ha)[cf::logical_not(hm)];
    }
    check_bits(lz, hlz, "where(m, a, a)[~m] " + dn);
  }
  const cf::Array x = random_normal(cf::f32, {1 << 22});
  x.eval();
  cf::reset_stats();
  cf::Array s = (x * 2)[cf::sin(x) > 0];
  // one pass: one kernel (mask and x * 2 computed there); two: the tile counts (the mask
  // computed there), their scan, then the compaction (mask and x * 2 computed there)
  CHECK(cf::stats().kernels_launched == (two ? 2u : 1u));
  s.eval();
  CHECK(cf::stats().kernels_launched == (two ? 3u : 1u));
  cf::Array hs;
  {
    const cf::Array hx = on_host(x);
    cf::BackendScope ref(cf::Backend::Reference);
    hs = (hx * 2)[cf::sin(hx) > 0];
  }
  CHECK(s.shape() == hs.shape());
  const cf::Array r = random_array(cf::i32, {1000, 3});
  const cf::Array hr = on_host(r);
  cf::Array f = cf::flatnonzero(r), e = cf::extract(r > 0, r), c = cf::compress(r.index({cf::_, 0}) > 0, r, 0);
  cf::BackendScope ref(cf::Backend::Reference);
  check_bits(f, cf::flatnonzero(hr), "flatnonzero");
  check_bits(e, cf::extract(hr > 0, hr), "extract");
  check_bits(c, cf::compress(hr.index({cf::_, 0}) > 0, hr, 0), "compress");
}

TEST_CASE("selections by mask on the device equal the reference in one pass: one kernel") {
  selections_equal_reference(false);
}

TEST_CASE("selections by mask on the device equal the reference in two passes: tile counts, their scan, one compaction") {
  selections_equal_reference(true);
}

static void selections_by_tiles(bool two) {
  CAPTURE(two);
  SelectForm form(two);
  const int64_t T = 8192;  // codegen/compaction_kernels.hpp: kCompactTile
  for (int64_t n : {int64_t(1), int64_t(33), T - 1, T, T + 1, 5 * T + 123, int64_t(1) << 20, int64_t(1) << 24}) {
    for (int pattern = 0; pattern < 4; ++pattern) {
      CAPTURE(n);
      CAPTURE(pattern);
      const cf::Array x = random_array(cf::f32, {n});
      // 0 random, 1 all True, 2 none, 3 about 1% (the one pass copies its rows out of the buffer)
      const cf::Array m = pattern == 0   ? random_array(cf::bool_, {n})
                          : pattern == 3 ? random_normal(cf::f32, {n}) > 2.3f
                                         : cf::full({n}, pattern == 1, cf::bool_);
      cf::eval(x, m);
      const cf::Array hx = on_host(x), hm = on_host(m);
      const cf::Array s = x[m], f = cf::flatnonzero(m), c = x.astype(cf::c128)[m];
      const cf::Array odd = cf::flatnonzero(m.index({cf::slice(1, cf::none)}));  // a mask at an odd offset
      cf::BackendScope ref(cf::Backend::Reference);
      check_bits(s, hx[hm], "x[mask]");
      check_bits(f, cf::flatnonzero(hm), "flatnonzero");
      check_bits(c, hx.astype(cf::c128)[hm], "x[mask] complex128");
      check_bits(odd, cf::flatnonzero(hm.index({cf::slice(1, cf::none)})), "flatnonzero at an odd offset");
    }
  }
  // rows with tails and coordinates past one tile
  const cf::Array a = random_array(cf::i16, {3 * T + 7, 5});
  const cf::Array rm = random_array(cf::bool_, {3 * T + 7});
  const cf::Array b = random_array(cf::bool_, {2000, 31});
  const cf::Array ha = on_host(a), hrm = on_host(rm), hb = on_host(b);
  const cf::Array rows = a[rm], aw = cf::argwhere(b);
  cf::BackendScope ref(cf::Backend::Reference);
  check_bits(rows, ha[hrm], "rows by a leading mask");
  check_bits(aw, cf::argwhere(hb), "argwhere");
}

TEST_CASE("selections by mask on the device by tiles in one pass: odd sizes, partly full tiles, all, none or few True") {
  selections_by_tiles(false);
}

TEST_CASE("selections by mask on the device by tiles in two passes") { selections_by_tiles(true); }

TEST_CASE("scatters on the device equal the reference") {
  for (cf::DType t : kAll) {
    const std::string dn(cf::name(t));
    cf::Array a = random_array(t, {64, 5});
    cf::Array h = on_host(a);
    // distinct indices: assignment is well defined
    std::vector<int64_t> perm(64);
    for (int64_t k = 0; k < 64; ++k) perm[k] = k - 32;
    std::shuffle(perm.begin(), perm.end(), rng());
    perm.resize(40);
    const cf::Array i = cf::from_host(perm), v = random_array(t, {40, 5});
    const cf::Array hi = on_host(i), hv = on_host(v);
    a[i] = v;
    {
      cf::BackendScope ref(cf::Backend::Reference);
      h[hi] = hv;
    }
    check_bits(a, h, "x[idx] = v " + dn);
    const cf::Array m = random_array(cf::bool_, {64, 5});
    const cf::Array hm = on_host(m);
    a[m] = v.index({0, 0});
    {
      cf::BackendScope ref(cf::Backend::Reference);
      h[hm] = hv.index({0, 0});
    }
    check_bits(a, h, "x[mask] = v " + dn);
    cf::put(a, i, v.index({cf::_, 1}));
    {
      cf::BackendScope ref(cf::Backend::Reference);
      cf::put(h, hi, hv.index({cf::_, 1}));
    }
    check_bits(a, h, "put " + dn);
  }
  // many duplicates: integers exactly, floats within the rounding of another order
  for (cf::DType t : {cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u32, cf::u64}) {
    cf::Array a = random_array(t, {100}), h = on_host(a);
    const cf::Array i = random_index(100, {20000}), v = random_array(t, {20000});
    const cf::Array hi = on_host(i), hv = on_host(v);
    cf::add_at(a, i, v);
    cf::maximum_at(a, i.index({cf::slice(0, 500)}), v.index({cf::slice(0, 500)}));
    {
      cf::BackendScope ref(cf::Backend::Reference);
      cf::add_at(h, hi, hv);
      cf::maximum_at(h, hi.index({cf::slice(0, 500)}), hv.index({cf::slice(0, 500)}));
    }
    check_bits(a, h, std::string("add_at / maximum_at ") + std::string(cf::name(t)));
  }
  cf::Array bins = cf::zeros({1 << 10}, cf::f32);
  bins.eval();  // in memory first: the scatter is then its one kernel
  const cf::Array i = random_index(1 << 10, {1 << 20}, false), v = random_normal(cf::f32, {1 << 20});
  cf::reset_stats();
  cf::add_at(bins, i, cf::exp(v * 0.1f));
  CHECK(cf::stats().kernels_launched == 1);
  cf::Array want = cf::zeros({1 << 10}, cf::f64);
  cf::add_at(want, i, cf::exp(v * 0.1f).astype(cf::f64));
  CHECK(cf::allclose(bins.astype(cf::f64), want, 1e-4, 1e-3));
}

TEST_CASE("an index out of bounds on the device is an IndexError at the next read-back") {
  const cf::Array x = random_normal(cf::f32, {100});
  cf::Array y = cf::take(x, cf::from_host(std::vector<int64_t>{3, 250, 7}));
  y.eval();  // the kernel ran; the error waits for the read-back
  try {
    (void)y.to_host<float>();
    FAIL("no IndexError");
  } catch (const cf::IndexError& e) {
    CHECK(std::string(e.what()) == "index 250 is out of bounds for axis 0 with size 100");
  }
  CHECK(cf::take(x, cf::from_host(std::vector<int64_t>{-100})).item<float>() == x.index({0}).item<float>());  // cleared
  cf::Array a = cf::zeros({10}, cf::f64);
  cf::add_at(a, cf::from_host(std::vector<int64_t>{1, -11}), 1.0);
  CHECK_THROWS_AS((void)a.to_host<double>(), cf::IndexError);
}
