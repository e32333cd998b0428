// tests/test_scalar_forms.cpp: the value-dependent kernel forms (src/plan/scalar_forms.hpp)
// without a GPU: which divisors take the exact-reciprocal form, that the graph key tells the
// forms apart (a plan for x / 2 serves x / 4, never x / 3), what the binder writes, and that a
// divisor bound to a fuse() argument never takes it. tests/gpu/test_elementwise_gpu.cpp
// checks the bits on the device.
#include <cmath>
#include <limits>

#include "exec/binding.hpp"
#include "fuse/engine.hpp"
#include "plan/scalar_forms.hpp"
#include "test_core_helpers.hpp"

using namespace cf::detail;

namespace {

std::vector<int64_t> key_of(const cf::Array& a) {
  GraphScan s;
  scan_graph({a.node()}, {}, s);
  return s.key;
}

std::string source_of(const cf::Array& a) {
  auto ex = plan_of({a});
  REQUIRE(ex->steps.size() == 1);
  return ex->steps[0].spec.source;
}

}  // namespace

TEST_CASE("exact reciprocals: powers of two whose reciprocal is normal in the register type") {
  CHECK(exact_reciprocal(2, cf::f32) == 0.5);
  CHECK(exact_reciprocal(-8, cf::f32) == -0.125);
  CHECK(exact_reciprocal(0.25, cf::f64) == 4);
  CHECK(exact_reciprocal(1, cf::f16) == 1);
  CHECK(exact_reciprocal(std::ldexp(1.0, 126), cf::f32) == std::ldexp(1.0, -126));
  CHECK(exact_reciprocal(std::ldexp(1.0, -126), cf::bf16) == std::ldexp(1.0, 126));
  CHECK(exact_reciprocal(std::ldexp(1.0, -1000), cf::f64) == std::ldexp(1.0, 1000));
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {3.0, 0.0, -0.0, 1.5, inf, -inf, std::nan(""), std::ldexp(1.0, 127), std::ldexp(1.0, -127)}) {
    INFO("v = " << v);
    CHECK(std::isnan(exact_reciprocal(v, cf::f32)));
  }
  CHECK(std::isnan(exact_reciprocal(std::ldexp(1.0, 1023), cf::f64)));
  CHECK(std::isnan(exact_reciprocal(2, cf::i32)));  // not a float compute type
}

TEST_CASE("exact reciprocals: which divisions take the form, in the source and in the key") {
  auto x = cf::placeholder(cf::f32, {1000});
  auto y = cf::placeholder(cf::f32, {1000});
  CHECK(divides_by_exact_reciprocal((x / 2).node().get()));
  CHECK(divides_by_exact_reciprocal((x / -0.0625).node().get()));
  CHECK_FALSE(divides_by_exact_reciprocal((x / 3).node().get()));
  CHECK_FALSE(divides_by_exact_reciprocal((x / 0.0).node().get()));
  CHECK_FALSE(divides_by_exact_reciprocal((x / y).node().get()));
  CHECK_FALSE(divides_by_exact_reciprocal((2 / x).node().get()));      // the scalar is the dividend
  CHECK_FALSE(divides_by_exact_reciprocal((x * 2).node().get()));
  CHECK_FALSE(divides_by_exact_reciprocal(cf::floor_divide(x, 2).node().get()));
  // the scalar as the array's dtype holds it: 2^-130 is 0 in float16, subnormal in float32
  CHECK_FALSE(divides_by_exact_reciprocal((x / std::ldexp(1.0, -130)).node().get()));
  CHECK(divides_by_exact_reciprocal((cf::placeholder(cf::f64, {8}) / std::ldexp(1.0, -130)).node().get()));
  CHECK(divides_by_exact_reciprocal((cf::placeholder(cf::f16, {8}) / 4).node().get()));
  CHECK(divides_by_exact_reciprocal((cf::placeholder(cf::i32, {8}) / 2).node().get()));  // computes in float64

  const std::string s2 = source_of(x / 2), s3 = source_of(x / 3);
  CHECK(count_of(s2, "a * p.rcp") == 1);
  CHECK(count_of(s2, "static_cast<R>(a / b)") == 0);
  CHECK(count_of(s3, "a * p.rcp") == 0);
  CHECK(count_of(s3, "static_cast<R>(a / b)") == 1);
  auto big = cf::placeholder(cf::f32, {1 << 22});
  CHECK(count_of(source_of(big / 2), "a * p.rcp") == 2);  // the vector body and the tail
  CHECK(key_of(x / 2) == key_of(x / 4));
  CHECK(key_of(x / 2) == key_of(x / 0.125));
  CHECK(key_of(x / 2) != key_of(x / 3));
  CHECK(key_of(x / 3) == key_of(x / 5));
  // W7b: the y / 2 of its body multiplies
  auto w = ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1);
  CHECK(count_of(source_of(w), "a * p.rcp") == 1);
  // mean divides by the count: a power of two multiplies, the reduction keeps its plan shape
  auto m = cf::mean(cf::placeholder(cf::f32, {64, 1024}), 1);
  CHECK(count_of(source_of(m), "a * p.rcp") >= 1);
}

TEST_CASE("exact reciprocals: the binder writes 1 / value, and refuses a value without one") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<float>(16, 3.0f));
  auto q = x / 8;
  GraphScan scan;
  scan_graph({q.node()}, {}, scan);
  auto ex = build_executable({q.node()}, {}, scan, false, 90);
  REQUIRE(ex->steps.size() == 1);
  const KernelSpec& spec = ex->steps[0].spec;
  const Patch* rp = nullptr;
  for (const Patch& p : spec.patches)
    if (p.src == PatchSrc::ScalarReciprocal) rp = &p;
  REQUIRE(rp != nullptr);
  std::vector<void*> bufs(ex->buffers.size() + 1, reinterpret_cast<void*>(0x1000));
  std::vector<unsigned char> bytes;
  apply_patches(bytes, spec, ScanSource(scan), bufs, nullptr);
  float r = 0;
  std::memcpy(&r, bytes.data() + rp->offset, sizeof r);
  CHECK(r == 0.125f);
  // another graph with the same key binds its own divisor
  auto q4 = x / 0.5;
  GraphScan scan4;
  scan_graph({q4.node()}, {}, scan4);
  REQUIRE(scan4.key == scan.key);
  apply_patches(bytes, spec, ScanSource(scan4), bufs, nullptr);
  std::memcpy(&r, bytes.data() + rp->offset, sizeof r);
  CHECK(r == 2.0f);
  // a divisor with no exact reciprocal reaching this kernel is an internal error, never a wrong value
  auto q3 = x / 3;
  GraphScan scan3;
  scan_graph({q3.node()}, {}, scan3);
  CHECK_THROWS_AS(apply_patches(bytes, spec, ScanSource(scan3), bufs, nullptr), cf::InternalError);
}

TEST_CASE("exact reciprocals: a fuse() scalar argument divides; a constant inside multiplies") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  auto f = cf::fuse([](const cf::Array& a, double s) { return a / s; });
  auto g = cf::fuse([](const cf::Array& a) { return a / 4; });
  CHECK(host<float>(f(x, 2.0)) == host<float>(x / 2));
  CHECK(host<float>(f(x, 3.0)) == host<float>(x / 3));  // the same plan: s is a parameter
  CHECK(f.stats().traces == 1);
  const std::string fs = f.engine()->entries.at(0)->ex->steps.at(0).spec.source;
  CHECK(count_of(fs, "static_cast<R>(a / b)") >= 1);
  CHECK(count_of(fs, "p.rcp") == 0);
  CHECK(host<float>(g(x)) == host<float>(x / 4));
  const std::string gs = g.engine()->entries.at(0)->ex->steps.at(0).spec.source;
  CHECK(count_of(gs, "a * p.rcp") >= 1);
}

TEST_CASE("unit numerators: 1 / x is the literal reciprocal, in the source and in the key") {
  auto x = cf::placeholder(cf::f64, {1000});
  auto y = cf::placeholder(cf::f64, {1000});
  CHECK(divides_one((1 / x).node().get()));
  CHECK(divides_one((1.0 / (1 + 0.25 * cf::abs(x))).node().get()));  // W15's cumulative normal
  CHECK(divides_one((1 / cf::placeholder(cf::f32, {8})).node().get()));
  CHECK_FALSE(divides_one((2 / x).node().get()));
  CHECK_FALSE(divides_one((-1 / x).node().get()));
  CHECK_FALSE(divides_one((x / 1).node().get()));  // the scalar divides: the exact reciprocal's form
  CHECK_FALSE(divides_one((y / x).node().get()));
  CHECK(divides_one((1 / cf::placeholder(cf::i32, {8})).node().get()));  // int / int computes in float64
  CHECK(division_form((x / 2).node().get()) == 1);
  CHECK(division_form((1 / x).node().get()) == 2);
  CHECK(division_form((3 / x).node().get()) == 0);
  const std::string s1 = source_of(1 / x), s3 = source_of(3 / x);
  CHECK(count_of(s1, "T(1) / b") == 1);
  CHECK(count_of(s3, "T(1) / b") == 0);
  CHECK(count_of(s3, "static_cast<R>(a / b)") == 1);
  // a plan made for 1 / x is never reused for 3 / x, nor the other way round
  CHECK(key_of(1 / x) != key_of(3 / x));
  CHECK(key_of(3 / x) == key_of(5 / x));
  // the reference and the host path agree with the plain division
  cf::BackendScope ref(cf::Backend::Reference);
  auto v = cf::linspace(-3, 3, 101);
  auto got = (1 / (1 + 0.2316419 * cf::abs(v))).to_host<double>();
  const auto vs = v.to_host<double>();
  // (1 + 0.2316419 * |v|: contracted, rule contract-multiply-add)
  for (size_t i = 0; i < vs.size(); ++i) CHECK(got[i] == 1 / std::fma(0.2316419, std::fabs(vs[i]), 1.0));
}
