// tests/gpu/test_surface_gpu.cpp: issue 30's creation, printing and testing functions on the
// device against the host reference evaluator: eye, identity, tri, triu, tril, diag, meshgrid
// and logspace in every dtype (bit for bit, logspace's floats within 4 ulps), fused with a
// producer and a consumer in one kernel; repr of device arrays (summarised ones read back by
// blocks) equal to the reference's; allclose / array_equal / assert_allclose on the device
// in one fused reduction.
#include "gpu_compare.hpp"

namespace {

const cf::DType kAll[] = {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u16,
                          cf::u32,   cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};

void check_same(const cf::Array& dev, const std::string& what, double ulps = 0) {
  const auto want = cf::detail::reference_evaluate(dev.node());
  CHECK_MESSAGE(compare_with(dev, want, ulps, what) == 0, what);
}

std::vector<unsigned char> device_bytes(const cf::Array& a) {
  std::vector<unsigned char> b(static_cast<size_t>(a.nbytes()));
  a.copy_to_host(b.data(), b.size());
  return b;
}

}  // namespace

TEST_CASE("eye, tri, triu, tril, diag, meshgrid, logspace on the device equal the reference") {
  for (cf::DType t : kAll) {
    const std::string dn(cf::name(t));
    check_same(cf::eye(37, 45, 3, t), "eye " + dn);
    check_same(cf::eye(45, 37, -4, t), "eye k<0 " + dn);
    check_same(cf::identity(17, t), "identity " + dn);
    check_same(cf::tri(33, 20, -2, t), "tri " + dn);
    const cf::Array a = random_array(t, {3, 41, 57});
    for (int64_t k : {-3, 0, 2, 60}) {
      check_same(cf::triu(a, k), "triu " + dn);
      check_same(cf::tril(a, k), "tril " + dn);
    }
    const cf::Array v = random_array(t, {29});
    for (int64_t k : {-2, 0, 5}) check_same(cf::diag(v, k), "diag 1-d " + dn);
    check_same(cf::diag(a.index({0}), 3).copy(), "diag 2-d " + dn);
    for (auto& g : cf::meshgrid({v, random_array(t, {7}), random_array(t, {3})}, "xy")) check_same(g, "meshgrid " + dn);
  }
  for (cf::DType t : {cf::f64, cf::f32, cf::f16, cf::bf16, cf::i32})
    check_same(cf::logspace(-3, 4, 1000, true, 10.0, t), "logspace " + std::string(cf::name(t)), 4);
}

TEST_CASE("triu(a * 2) is one kernel on the device, and so is eye * x + 1") {
  const cf::Array a = random_normal(cf::f32, {512, 512});
  a.eval();
  cf::reset_stats();
  auto t = cf::triu(a * 2, 1);
  t.eval();
  CHECK(cf::stats().kernels_launched == 1);
  check_same(t, "triu(a * 2)");
  cf::reset_stats();
  auto e = cf::eye(512, std::nullopt, 0, cf::f32) * a + 1;
  e.eval();
  CHECK(cf::stats().kernels_launched == 1);
}

TEST_CASE("repr of device arrays equals the reference's, summarised ones too") {
  for (cf::DType t : kAll) {
    const cf::Array small = random_array(t, {3, 4});
    const cf::Array big = random_array(t, {13, 17, 9});
    std::string ref_small, ref_big;
    {
      cf::BackendScope host(cf::Backend::Reference);
      auto hs = cf::from_host(device_bytes(small).data(), t, small.shape());
      auto hb = cf::from_host(device_bytes(big).data(), t, big.shape());
      ref_small = cf::to_string(hs);
      ref_big = cf::to_string(hb);
    }
    CHECK(cf::to_string(small) == ref_small);
    CHECK(cf::to_string(big) == ref_big);
    CHECK(cf::to_string(big).find("...") != std::string::npos);
  }
}

TEST_CASE("allclose and assert_allclose on the device: one fused reduction") {
  const cf::Array x = random_normal(cf::f32, {1 << 20});
  x.eval();
  // Arrays in memory: the comparison is one reduction with its mask fused (temporaries a
  // caller passes in are live handles while the call runs, so they are written too).
  const cf::Array a = (x * 2).eval(), b = (x + x).eval();
  cf::reset_stats();
  CHECK(cf::allclose(a, b));
  const auto launched = cf::stats().kernels_launched;
  CHECK_MESSAGE(launched == 1, "kernels: " << launched << ", evaluations: " << cf::stats().evaluations << "\n"
                                           << cf::plan_dump({cf::all(cf::isclose(x * 2, x + x))}, false));
  CHECK_FALSE(cf::allclose(x * 2, x + x + 1e-3f));
  CHECK(cf::array_equal(x * 2, x + x));
  cf::testing::assert_allclose(cf::sin(x) * 2, cf::sin(x) + cf::sin(x));
  CHECK_THROWS_AS(cf::testing::assert_allclose(x, x + 1.0f), cf::AssertionError);
}
