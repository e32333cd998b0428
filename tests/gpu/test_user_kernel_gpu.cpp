// tests/gpu/test_user_kernel_gpu.cpp: user kernels on a device, against the equivalent cufuse
// expression evaluated by the host reference (the reference cannot run user CUDA) and, for
// reductions, against cufuse's own reduction on the device (same kernel shape, same order
// of operations, so the same bits). Fusion is checked by counting launches.
#include "gpu_compare.hpp"

namespace {

template <class T>
std::vector<T> host(const cf::Array& a) {
  return a.to_host<T>();
}

uint64_t launches() {
  cf::synchronize();
  return cf::stats().kernels_launched;
}

// Mismatches between a device result and the host reference of an equivalent expression.
int64_t compare(const cf::Array& got, const cf::Array& equivalent, double ulps, const std::string& what) {
  return compare_with(got, cf::detail::reference_evaluate(equivalent.node()), ulps, what);
}

// A user kernel's C++ is compiled as written (--fmad=false, no contraction), so the equivalent
// cufuse expressions are built without rule contract-multiply-add while this is alive.
struct NoFma {
  bool old = cf::config().contract_fma;
  NoFma() { set(false); }
  ~NoFma() { set(old); }
  static void set(bool on) {
    cf::Config c = cf::config();
    c.contract_fma = on;
    cf::set_config(c);
  }
};

const cf::ElementwiseKernel sqdiff("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff");

}  // namespace

TEST_CASE("ElementwiseKernel gpu: against the reference of the same expression, fused with its neighbours") {
  NoFma no_fma;
  for (cf::DType t : {cf::f32, cf::f64, cf::i32, cf::i64}) {
    const int kind = cf::is_float(t) ? 0 : 2;  // small integers: signed overflow is UB in user C++
    auto x = random_array(t, {3, 1031}, kind);
    auto y = random_array(t, {1031}, kind);  // broadcast
    CHECK(compare(sqdiff(x, y), (x - y) * (x - y), 0, std::string(cf::name(t))) == 0);
  }
  auto x = random_array(cf::f32, {1 << 16});
  auto y = random_array(cf::f32, {1 << 16});
  const uint64_t before = launches();
  auto z = cf::sqrt(sqdiff(x * 2, y) + 1);
  z.eval();
  CHECK(launches() - before == 1);  // one fused kernel; CuPy would launch four
  CHECK(compare(z, cf::sqrt((x * 2 - y) * (x * 2 - y) + 1), 0, "fused") == 0);
  // strided and reversed inputs
  auto m = random_array(cf::f64, {200, 300});
  auto r = m.T()[{cf::slice(cf::none, cf::none, -1)}];
  CHECK(compare(sqdiff(r, m.T()), (r - m.T()) * (r - m.T()), 0, "strided") == 0);
}

TEST_CASE("ElementwiseKernel gpu: parameter names that are kernel variables elsewhere") {
  NoFma no_fma;
  cf::ElementwiseKernel k("T k, T u, T p, T n, T v0", "T z", "z = k + u * p - n / v0", "names");
  auto a = random_array(cf::f64, {4099});
  auto b = random_array(cf::f64, {4099});
  auto c = random_array(cf::f64, {4099}, 1);
  CHECK(compare(k(a, b, a, b, c), a + b * a - b / c, 0, "contiguous") == 0);  // vector body: k, u in scope
  auto s = random_array(cf::f64, {4099, 2})(cf::_, 1);
  CHECK(compare(k(s, b, s, 2.0, c), s + b * s - 2.0 / c, 0, "strided") == 0);
}

TEST_CASE("ElementwiseKernel gpu: max chains around a fused negation (a ptxas VIMNMX3 miscompile) give NumPy's values") {
  // Fuzz seed 41573830922: pick(minimum(x, x), pick(x, -x)) in one kernel came out x, not |x|,
  // for int32: ptxas fused the two user maxes and dropped the negation. User code on narrow
  // integers is now a call (codegen/user_kernel.cpp).
  const cf::ElementwiseKernel pick("T x, T y", "T z", "z = x > y ? x : y", "pick");
  for (cf::DType t : {cf::i8, cf::i16, cf::i32, cf::u8, cf::u32, cf::i64}) {
    auto x = random_array(t, {64, 33}, 0);
    auto twin = [](const cf::Array& a, const cf::Array& b) { return cf::where(a > b, a, b); };
    auto x3 = x.expand_dims(0);
    auto got = pick(cf::minimum(x, x), pick(x3, -x3));
    CHECK(compare(got, twin(cf::minimum(x, x), twin(x3, -x3)), 0, std::string(cf::name(t))) == 0);
    auto chain = pick(pick(-x, x), pick(x, -x * 2));  // three maxes, two negations
    CHECK(compare(chain, twin(twin(-x, x), twin(x, -x * 2)), 0, std::string(cf::name(t)) + " chain") == 0);
    // where(a > b, a, b) is the same max to NVVM: the twins on the device too (each built
    // twice, so that the reference never reads a value the device computed)
    auto t1 = [&] { return twin(cf::minimum(x, x), twin(x3, -x3)); };
    CHECK(compare(t1(), t1(), 0, std::string(cf::name(t)) + " where") == 0);
    auto t2 = [&] { return twin(twin(-x, x), twin(x, -x * 2)); };
    CHECK(compare(t2(), t2(), 0, std::string(cf::name(t)) + " where chain") == 0);
    // the same chain with -x one node (as common-subexpression elimination makes it): NVVM
    // made both selects max.s32 around one negation, the pattern ptxas miscompiled
    auto t2s = [&] { const auto n = -x; return twin(twin(n, x), twin(x, n * 2)); };
    CHECK(compare(t2s(), t2s(), 0, std::string(cf::name(t)) + " where chain, shared -x") == 0);
    auto t3 = [&] { return cf::maximum(cf::abs(x), cf::maximum(x, -x)); };
    CHECK(compare(t3(), t3(), 0, std::string(cf::name(t)) + " maximum") == 0);
  }
}

TEST_CASE("ElementwiseKernel gpu: several outputs, output arrays, scalars, explicit types") {
  cf::ElementwiseKernel two("T x, T y, float64 s", "T sum, float64 prod", "sum = x + y; prod = (double)x * y * s;",
                            "two");
  auto x = random_array(cf::f32, {777});
  auto y = random_array(cf::f32, {777});
  auto r = two.call({x, y, 0.5});
  CHECK(compare(r[0], x + y, 0, "sum") == 0);
  CHECK(compare(r[1], x.astype(cf::f64) * y.astype(cf::f64) * 0.5, 0, "prod") == 0);
  cf::ElementwiseKernel acc("T x", "T y", "y += x * 2", "accumulate");
  auto out = random_array(cf::f32, {777});
  auto old = out.copy().eval();
  auto w = acc.call({x, out});
  CHECK(w[0].node() == out.node());
  CHECK(compare(out, old + x * 2, 0, "written into") == 0);
}

TEST_CASE("ReductionKernel gpu: the bits of cufuse's own reduction, every path") {
  cf::ReductionKernel l2("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm");
  for (auto shape : {cf::Shape{64, 1000}, cf::Shape{3, 70000}, cf::Shape{100000}, cf::Shape{40, 7, 33}}) {
    auto x = random_array(cf::f32, shape, kFinite);
    const int last = shape.ndim() - 1;
    CHECK(host<float>(l2({x}, last)) == host<float>(cf::sqrt(cf::sum(x * x, last))));
    CHECK(host<float>(l2(x)) == host<float>(cf::sqrt(cf::sum(x * x))));  // split: partials combined by a + b
    CHECK(host<float>(l2({x}, 0, true)) == host<float>(cf::sqrt(cf::sum(x * x, 0, true))));
    // against the float64 truth (the reference's float32 sum of 70000 terms in a row is the
    // coarser oracle): the sum's roundings, halved by the square root, plus the squares'
    const int64_t n = shape[last];
    auto truth = cf::sqrt(cf::sum(x.astype(cf::f64) * x.astype(cf::f64), last));
    const double rel = (sum_depth(n) + 4) * unit_roundoff(cf::f32) + static_cast<double>(n) * unit_roundoff(cf::f64);
    CHECK(check_against_truth(l2({x}, last), truth, truth, rel, "l2 vs float64") == 0);
  }
  cf::ReductionKernel mean("T x", "float64 y", "x", "a + b", "y = a / _in_ind.size() * _out_ind.size()", "0",
                           "mean", "float64");
  auto i = random_array(cf::i32, {50, 300});
  CHECK(compare(mean({i}, 1), cf::mean(i.astype(cf::f64), 1), 4, "mean") == 0);  // a/N*M: two roundings
  cf::ReductionKernel amax("T x", "T y", "x", "a > b ? a : b", "y = a", "-1e300", "amax");
  auto d = random_array(cf::f64, {33, 5000}, kFinite);
  CHECK(compare(amax({d}, 1), cf::max(d, 1), 0, "max") == 0);
  // fused: its prologue and epilogue, one launch
  const uint64_t before = launches();
  auto z = l2({d * 2 + 1}, 1) - 3;
  z.eval();
  CHECK(launches() - before == 1);
}

TEST_CASE("RawKernel gpu: launches, scalars, shared memory, modules; pending reads settled first") {
  const std::string src = R"(
extern "C" __global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
  extern __shared__ float s[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int k = 0; k < blockDim.x; ++k) t += s[k];
    out[blockIdx.x] = t;
  }
}
)";
  const int n = 5000;
  auto x = random_array(cf::f32, {n}, 1);  // finite, positive
  auto y = random_array(cf::f32, {n}, 1);
  auto y0 = y.copy().eval();
  auto pending = y * 1;  // lazy: must see y before the kernel writes it
  cf::RawKernel axpy(src, "axpy");
  axpy((n + 255) / 256, 256, {y, x, 2.0f, n});
  CHECK(host<float>(pending) == host<float>(y0));
  CHECK(compare(y, y0 + x * 2.0f, 0, "axpy") == 0);
  cf::RawModule mod(src);
  auto sums = cf::empty({(n + 127) / 128}, cf::f32);
  mod.get_function("block_sum").launch((n + 127) / 128, 128, {x, sums, n}, 128 * sizeof(float));
  auto hs = host<float>(sums);
  auto hx = host<float>(x);
  float first = 0;
  for (int k = 0; k < 128; ++k) first += hx[k];
  CHECK(hs[0] == doctest::Approx(first).epsilon(1e-5));
}
