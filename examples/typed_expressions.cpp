// examples/typed_expressions.cpp: typed expression templates (cufuse/typed.hpp) beside the
// dynamic API: the same W7 expressions over cf::Tensor<float, 1> (dtype and rank checked
// at compile time, planned once per expression type, then replayed like fuse()) and over
// cf::Array (built and looked up every call), with the time per call of each, and a
// softmax over rows as one kernel. Without a GPU it runs a small host version and says so.
#include <chrono>
#include <cstdio>
#include <optional>

#include <cufuse/cufuse.hpp>

namespace cf = cufuse;

// Written once for Tensors and Arrays (Tensors by reference: an expression keeps their address).
auto w7a = [](const auto& x, const auto& y) { return (x - y) * (x - y); };
auto w7b = [](const auto& x, const auto& y) { return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1); };

template <class F>
double us_per_call(F f, int n) {
  f();  // the first call plans (and compiles)
  cf::synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  cf::synchronize();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
}

int main() {
  const bool gpu = cf::Device::available();
  std::optional<cf::BackendScope> host;
  if (!gpu) {
    std::printf("No CUDA device here (%s): a small host version on the reference backend.\n",
                cf::Device::unavailable_reason().c_str());
    host.emplace(cf::Backend::Reference);
  }
  const int64_t n = gpu ? 10000 : 1000;
  const int calls = gpu ? 20000 : 200;
  cf::Array x = cf::random::normal({n}, cf::f32, 1), y = cf::random::normal({n}, cf::f32, 2);
  cf::eval(x, y);
  auto tx = cf::tensor_cast<float, 1>(x), ty = cf::tensor_cast<float, 1>(y);  // checked at run time

  for (int which = 0; which < 2; ++which) {
    const char* name = which ? "W7b ((x-y)*(x+y)*0.5 + x*3 - y/2) * (x*x+1)" : "W7a (x-y)*(x-y)";
    const double dyn = us_per_call([&] { (which ? w7b(x, y) : w7a(x, y)).eval(); }, calls);
    const double typed = us_per_call(
        [&] {
          cf::Tensor<float, 1> z = which ? cf::Tensor<float, 1>(w7b(tx, ty)) : cf::Tensor<float, 1>(w7a(tx, ty));
          (void)z;
        },
        calls);
    std::printf("%s: dynamic %.2f us per call, typed %.2f us per call\n", name, dyn, typed);
  }

  // softmax over rows: one kernel, typed as the dynamic form is
  auto z = cf::tensor_cast<float, 2>(cf::random::normal({64, 1000}, cf::f32, 3).eval());
  auto e = cf::exp(z - cf::max<1>(z, cf::keepdims));
  cf::reset_stats();
  cf::Tensor<float, 2> sm = e / cf::sum<1>(e, cf::keepdims);
  const auto kernels = static_cast<unsigned long long>(cf::stats().kernels_launched);
  std::printf("softmax of (64, 1000): %llu kernel(s), row 0 sums to %.6f\n", kernels, cf::sum(sm(0, cf::_)).item());
  return 0;
}
