// tests/gpu/test_typed_gpu.cpp: typed expressions (cufuse/typed.hpp) on a device: W7a and W7b
// give the dynamic expression's bits, one launch per evaluation (a CUDA graph launch of the
// plan their type made), no plan built or looked up after the first; strided, reversed and
// misaligned Tensors; scalars that change; softmax and layernorm rows with the dynamic
// form's kernel count and bits; run-time axes; several expressions evaluated together.
#include <tuple>

#include "cufuse/typed.hpp"
#include "gpu_compare.hpp"
#include "typed_forms.hpp"

namespace {

using namespace typed_forms;
uint64_t launches() { return cf::stats().kernels_launched; }
template <class F>
uint64_t kernels_of(F&& f) {
  cf::synchronize();
  const uint64_t before = launches();
  f();
  cf::synchronize();
  return launches() - before;
}

}  // namespace

TEST_CASE("typed gpu: W7a and W7b: the dynamic bits, one launch, no planning after the first") {
  for (int round = 0; round < 4; ++round) {
    auto x = cf::tensor_cast<float, 1>(random_array(cf::f32, {10000}));
    auto y = cf::tensor_cast<float, 1>(random_array(cf::f32, {10000}));
    cf::Tensor<float, 1> a = w7a(x, y);
    cf::Tensor<float, 1> b = w7b(x, y);
    CHECK(same_bits(a, w7a(x.array(), y.array())));
    CHECK(same_bits(b, w7b(x.array(), y.array())));
    CHECK(check_against_reference(w7b(x.array(), y.array()), 0, "W7b") == 0);
    cf::reset_stats();
    cf::Tensor<float, 1> c;
    CHECK(kernels_of([&] { c = w7b(x, y); }) == 1);
    CHECK(cf::stats().plans_built == 0);
    CHECK(cf::stats().plan_cache_hits == 0);
    CHECK(same_bits(c, b));
  }
}

TEST_CASE("typed gpu: strided, reversed and misaligned Tensors; scalars that change") {
  auto base = cf::tensor_cast<float, 1>(random_array(cf::f32, {10001}));
  auto x = base(cf::slice(1, cf::none));                 // misaligned
  auto y = base(cf::slice(cf::none, 10000));
  auto r = base(cf::slice(cf::none, cf::none, -2));      // reversed, strided
  auto s = base(cf::slice(cf::none, cf::none, 2));
  CHECK(same_bits(cf::Tensor<float, 1>(w7a(x, y)), w7a(x.array(), y.array())));
  CHECK(same_bits(cf::Tensor<float, 1>(w7b(r, s)), w7b(r.array(), s.array())));
  for (float k : {0.5f, -3.0f, 1e6f}) {
    cf::Tensor<float, 1> t = x * k + y;
    CHECK(same_bits(t, x.array() * k + y.array()));
  }
}

TEST_CASE("typed gpu: softmax and layernorm rows: the dynamic kernel count and bits") {
  for (const cf::Shape& shp : {cf::Shape{64, 1000}, cf::Shape{1000, 64}, cf::Shape{3, 70000}}) {
    auto z = cf::tensor_cast<float, 2>(random_normal(cf::f32, shp));
    cf::Tensor<float, 2> sm, ln;
    cf::Array smd, lnd;
    CHECK(kernels_of([&] { sm = softmax(z); }) == kernels_of([&] { smd = softmax_dyn(z.array()).eval(); }));
    CHECK(kernels_of([&] { ln = layernorm(z); }) == kernels_of([&] { lnd = layernorm_dyn(z.array()).eval(); }));
    CHECK(same_bits(sm, smd));
    CHECK(same_bits(ln, lnd));
    for (int axis : {0, 1}) {
      cf::Tensor<float, 1> s = cf::sum(z * 2, axis);
      CHECK(same_bits(s, cf::sum(z.array() * 2, axis)));
    }
  }
}

TEST_CASE("typed gpu: several expressions evaluated together share a kernel") {
  auto x = cf::tensor_cast<float, 1>(random_array(cf::f32, {5000}));
  auto y = cf::tensor_cast<float, 1>(random_array(cf::f32, {5000}));
  (void)cf::eval(x + y, x * y);  // the first: traced and compiled
  cf::Tensor<float, 1> a, b;
  CHECK(kernels_of([&] { std::tie(a, b) = cf::eval(x + y, cf::sin(x) * y); }) >= 1);
  CHECK(kernels_of([&] { std::tie(a, b) = cf::eval(x + y, cf::sin(x) * y); }) == 1);
  CHECK(same_bits(a, x.array() + y.array()));
  CHECK(same_bits(b, cf::sin(x.array()) * y.array()));
}
