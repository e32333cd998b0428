// tests/test_user_kernel.cpp: user kernels without a GPU: CuPy's parameter syntax and type
// rules, the errors, fusion with the lazy ops around them (kernel counts), the generated
// CUDA compiled by NVRTC for sm_90, distinct definitions never sharing a plan, the host
// reference refusing user code, and RawKernel / RawModule compilation.
#include "codegen/user_kernel.hpp"
#include "test_core_helpers.hpp"

namespace {

const cf::ElementwiseKernel& sqdiff_kernel() {
  static const cf::ElementwiseKernel k("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff");
  return k;
}

// Every kernel of the plan compiles for sm_90 (NVRTC, no device needed).
void compiles(const std::vector<cf::Array>& outs) {
  auto ex = plan_of(outs, /*compile=*/true);
  for (const auto& st : ex->steps)
    if (!st.call) CHECK(st.kernel != nullptr);
}

}  // namespace

TEST_CASE("ElementwiseKernel: fuses with the ops around it into one kernel that compiles") {
  auto x = cf::placeholder(cf::f32, {1 << 22});  // large enough for 16-byte vectors
  auto y = cf::placeholder(cf::f32, {1 << 22});
  auto z = cf::sqrt(sqdiff_kernel()(x * 2, y) + 1);
  CHECK(z.dtype() == cf::f32);
  auto ex = plan_of({z});
  REQUIRE(ex->steps.size() == 1);
  const std::string& src = ex->steps[0].spec.source;
  CHECK(src.find("z = (x - y) * (x - y)") != std::string::npos);
  CHECK(src.find("squared_diff") != std::string::npos);
  CHECK(src.find("typedef float T;") != std::string::npos);
  CHECK(ex->steps[0].spec.summary.find("16-byte vectors") != std::string::npos);
  compiles({z});
}

TEST_CASE("ElementwiseKernel: CuPy's type rules") {
  cf::ElementwiseKernel k("T x, U y, float64 w", "T z, float32 v", "z = x + (T)y; v = (float)(w * 2);", "mixed");
  auto x = cf::placeholder(cf::i32, {4, 8});
  auto y = cf::placeholder(cf::f16, {8});
  auto w = cf::placeholder(cf::f64, {4, 1});
  auto r = k.call({x, y, w});
  REQUIRE(r.size() == 2);
  CHECK(r[0].dtype() == cf::i32);
  CHECK(r[1].dtype() == cf::f32);
  CHECK(r[0].shape() == cf::Shape{4, 8});  // broadcast
  auto ex = plan_of({r[0], r[1]});
  CHECK(ex->steps.size() == 1);  // both outputs share the iteration space
  CHECK(ex->steps[0].spec.source.find("typedef int T; typedef float U;") != std::string::npos);
  compiles({r[0], r[1]});
  // a scalar takes its parameter's type; it does not bind a placeholder
  cf::ElementwiseKernel same("T a, T b", "T c", "c = a * b", "mul");
  CHECK(same(x, 2.5).dtype() == cf::i32);
  CHECK_THROWS_AS(k.call({x, 2.5, w}), cf::TypeError);  // U bound by nothing
  CHECK_THROWS_AS(k.call({2, y, w}), cf::TypeError);    // T bound by nothing
  // an explicit type must match exactly; a placeholder must agree with itself
  CHECK_THROWS_WITH_AS(k.call({x, y, cf::placeholder(cf::f32, {4, 1})}), doctest::Contains("mismatched"), cf::TypeError);
  CHECK_THROWS_WITH_AS(same(x, y), doctest::Contains("mismatched"), cf::TypeError);
  CHECK_THROWS_AS(same(x, cf::placeholder(cf::i32, {3})), cf::ValueError);  // does not broadcast
  CHECK_THROWS_WITH_AS(same(x), doctest::Contains("takes 2 input"), cf::ValueError);
  CHECK_THROWS_WITH_AS(k(x, y, w), doctest::Contains("use call()"), cf::ValueError);  // two outputs
}

TEST_CASE("ElementwiseKernel: syntax errors and what fused kernels cannot offer") {
  CHECK_THROWS_AS(cf::ElementwiseKernel("T", "T z", "z = 1", "k"), cf::ValueError);
  CHECK_THROWS_AS(cf::ElementwiseKernel("T x, T x", "T z", "z = x", "k"), cf::ValueError);
  CHECK_THROWS_AS(cf::ElementwiseKernel("floaty x", "T z", "z = x", "k"), cf::TypeError);
  CHECK_THROWS_AS(cf::ElementwiseKernel("T x", "T _cf_r", "_cf_r = x", "k"), cf::ValueError);
  CHECK_THROWS_WITH_AS(cf::ElementwiseKernel("raw T x", "T z", "z = x[0]", "k"), doctest::Contains("raw"),
                       cf::NotSupportedError);
  CHECK_THROWS_WITH_AS(cf::ElementwiseKernel("T x", "T z", "z = x * i", "k"), doctest::Contains("index"),
                       cf::NotSupportedError);
  CHECK_NOTHROW(cf::ElementwiseKernel("T x, T idx", "T z", "z = x * idx; z.i", "k"));  // names that contain i
  cf::ElementwiseKernel bad("T x", "T z", "z = x +* 1", "broken");
  auto x = cf::placeholder(cf::f32, {10});
  CHECK_THROWS_AS(plan_of({bad(x)}, true), cf::CompileError);
}

TEST_CASE("ElementwiseKernel: parameter names cannot capture kernel variables") {
  // k, u, i-like names, p, n, v0: all are kernel variables somewhere
  cf::ElementwiseKernel k("T k, T u, T p, T n, T v0", "T z", "z = k + u * p - n / v0", "names");
  auto a = cf::placeholder(cf::f64, {1000});
  auto b = cf::placeholder(cf::f64, {1000, 1}).T();  // strided
  auto z = k(a, b, a, 2.0, a + 1);
  compiles({z});
  compiles({k(a, a, a, a, a)});
}

TEST_CASE("ElementwiseKernel: an output argument must be an array") {
  cf::ElementwiseKernel acc("T x", "T y", "y += x", "accumulate");
  auto x = cf::placeholder(cf::f32, {16});
  CHECK(acc.call({x})[0].node()->inputs.size() == 1);
  CHECK_THROWS_WITH_AS(acc.call({x, 3.0}), doctest::Contains("'y' must be an Array"), cf::TypeError);
}

TEST_CASE("ElementwiseKernel: two definitions never share a plan or a kernel") {
  cf::ElementwiseKernel add("T x, T y", "T z", "z = x + y", "k");
  cf::ElementwiseKernel sub("T x, T y", "T z", "z = x - y", "k");
  cf::ElementwiseKernel add2("T x, T y", "T z", "z = x + y", "k");
  auto x = cf::placeholder(cf::f32, {100});
  auto a = add(x, x), s = sub(x, x), a2 = add2(x, x);
  CHECK(a.node()->op != s.node()->op);
  CHECK(a.node()->op == a2.node()->op);  // the same definition is the same op
  cf::detail::GraphScan sa, ss;
  cf::detail::scan_graph({a.node()}, {}, sa);
  cf::detail::scan_graph({s.node()}, {}, ss);
  CHECK(sa.key != ss.key);
  CHECK(plan_of({a})->steps[0].spec.source != plan_of({s})->steps[0].spec.source);
  // pushed through views, a user node stays itself
  auto m = cf::placeholder(cf::f32, {8, 8});
  auto t = add(m, m).T();
  CHECK(cf::detail::is_user_node(*t.node()));
}

TEST_CASE("ElementwiseKernel: the host reference refuses user code, naming the kernel") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::from_host(std::vector<float>{1, 2, 3});
  auto z = sqdiff_kernel()(x, x);
  CHECK_THROWS_WITH_AS(z.eval(), doctest::Contains("squared_diff"), cf::NotSupportedError);
}

TEST_CASE("ReductionKernel: map, reduce and post-map fuse into one reduction kernel") {
  cf::ReductionKernel l2("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm");
  auto x = cf::placeholder(cf::f32, {64, 1000});
  auto rows = l2({x}, 1);
  CHECK(rows.shape() == cf::Shape{64});
  CHECK(rows.dtype() == cf::f32);
  auto ex = plan_of({rows});
  REQUIRE(ex->steps.size() == 1);
  const std::string& src = ex->steps[0].spec.source;
  CHECK(src.find("x * x") != std::string::npos);
  CHECK(src.find("sqrt(a)") != std::string::npos);
  CHECK(src.find("a + b") != std::string::npos);
  compiles({rows});
  auto all = l2(x);
  CHECK(all.ndim() == 0);
  compiles({all});  // a full reduction: split over blocks, partials combined by reduce_expr
  auto kept = l2({x * 2 + 1}, 0, /*keepdims=*/true);
  CHECK(kept.shape() == cf::Shape{1, 1000});
  CHECK(plan_of({kept})->steps.size() == 1);
  compiles({kept});
}

TEST_CASE("ReductionKernel: reduce_type, _in_ind.size() and types") {
  cf::ReductionKernel mean("T x", "float64 y", "x", "a + b", "y = a / _in_ind.size() * _out_ind.size()", "0",
                           "mean", "float64");
  auto x = cf::placeholder(cf::i32, {10, 30});
  auto m = mean({x}, 0);
  CHECK(m.dtype() == cf::f64);
  compiles({m});
  // the sizes are kernel parameters, not source text: another shape, the same kernel
  auto x2 = cf::placeholder(cf::i32, {20, 30});
  CHECK(plan_of({mean({x2}, 0)})->steps[0].spec.source == plan_of({m})->steps[0].spec.source);
  cf::ReductionKernel amax("T x", "T y", "x", "a > b ? a : b", "y = a", "-1e30", "amax");
  compiles({amax({cf::placeholder(cf::f64, {7, 300})}, 1)});
  CHECK_THROWS_AS(cf::ReductionKernel("T x", "T y", "x", "a + b", "y = a", "", "noid"), cf::ValueError);
  CHECK_THROWS_AS(cf::ReductionKernel("T x", "T y, T z", "x", "a + b", "y = a", "0", "two"), cf::NotSupportedError);
  CHECK_THROWS_AS(cf::ReductionKernel("T x", "T y", "x", "a + _in_ind.size()", "y = a", "0", "r"),
                  cf::NotSupportedError);
  CHECK_THROWS_AS(mean({x}, 2), cf::IndexError);
}

TEST_CASE("ReductionKernel: the host reference refuses it, naming the kernel") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::ReductionKernel l2("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "my_l2");
  auto x = cf::from_host(std::vector<float>{3, 4});
  CHECK_THROWS_WITH_AS(l2(x).eval(), doctest::Contains("my_l2"), cf::NotSupportedError);
}

TEST_CASE("RawKernel and RawModule compile through the kernel cache without a GPU") {
  const std::string src = R"(
extern "C" __global__ void scale(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
extern "C" __global__ void shift(float* y, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += b;
}
)";
  cf::RawKernel k(src, "scale");
  CHECK_NOTHROW(k.compile());
  CHECK(k.num_regs() > 0);
  cf::RawModule mod(src);
  CHECK_NOTHROW(mod.compile());
  CHECK(mod.get_function("shift").num_regs() > 0);
  cf::RawKernel broken("extern \"C\" __global__ void f(int* p) { p[0] = undefined_thing; }", "f");
  CHECK_THROWS_AS(broken.compile(), cf::CompileError);
  if (!cf::Device::available()) {
    auto x = cf::placeholder(cf::f32, {4});
    CHECK_THROWS_AS(k(128, 1, {x, x, 2.0f, 4}), cf::NoDeviceError);
  }
}

TEST_CASE("ElementwiseKernel: compiles for every dtype (multi-word C types such as long long)") {
  cf::ElementwiseKernel sq("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff");
  for (cf::DType t : {cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u16, cf::u32, cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64}) {
    INFO(cf::name(t));
    auto a = cf::placeholder(t, {100});
    compiles({sq(a, a)});
  }
}

TEST_CASE("User code on integers (bool included) is a __noinline__ call; on floats it is inline") {
  // ptxas fuses two 32-bit integer max/min into one VIMNMX3 and can drop a negation folded into
  // it (codegen/user_kernel.cpp): fused around a negation, `z = x > y ? x : y` twice gave x
  // for |x| on the device (fuzz seed 41573830922). A call boundary keeps ptxas from fusing.
  // On int64, NVVM folded a user's `z = -x` into a sign() reading it (sign(-x) = -sign(x), wrong
  // for INT64_MIN: seed 668319586329) and `x*y + x > x` into `x*y > 0` (seed 672694075134).
  cf::ElementwiseKernel pick("T x, T y", "T z", "z = x > y ? x : y", "pick");
  cf::ElementwiseKernel uneg("T x", "T z", "z = -x", "uneg");
  auto calls_in = [](const cf::Array& v) {
    auto ex = plan_of({v});
    REQUIRE(ex->steps.size() == 1);
    const std::string& src = ex->steps[0].spec.source;
    CHECK(src.find("z = ") != std::string::npos);
    size_t calls = 0;
    for (size_t pos = src.find("__noinline__"); pos != std::string::npos; pos = src.find("__noinline__", pos + 1)) ++calls;
    compiles({v});
    return calls;
  };
  for (cf::DType t : {cf::bool_, cf::i8, cf::u16, cf::i32, cf::u32, cf::i64, cf::u64, cf::f16, cf::f32, cf::f64}) {
    INFO(cf::name(t));
    auto x = cf::placeholder(t, {64, 33});
    const bool integral = t == cf::bool_ || cf::is_integer(t);
    CHECK((calls_in(pick(x, x) * 2) > 0) == integral);  // once per element a thread handles
    if (t != cf::bool_) CHECK((calls_in(cf::sign(uneg(x).index({cf::slice(1, cf::none, 2)}))) > 0) == integral);
  }
  // A ReductionKernel's map_expr on int32 is called; its reduce_expr stays inline.
  cf::ReductionKernel imax("T x", "T y", "x", "a > b ? a : b", "y = a", "-2147483647 - 1", "imax");
  auto x = cf::placeholder(cf::i32, {64, 1000});
  auto m = imax({-x}, 1);
  auto ex = plan_of({m});
  REQUIRE(ex->steps.size() == 1);
  const std::string& src = ex->steps[0].spec.source;
  CHECK(src.find("ReductionKernel (map_expr) 'imax' */ struct") != std::string::npos);
  CHECK(src.find("a > b ? a : b") != std::string::npos);
  compiles({m});
}
