// tests/gpu/test_elementwise_gpu.cpp: the spine on a real device, against the host
// reference evaluator on fresh random inputs: every op and dtype, casts, layouts
// (strided, reversed, broadcast, remapped, unaligned, 0-d, past 2^31 elements),
// generators, multi-output kernels, the plan cache, in-place writes, the bounded loop.
#include <chrono>
#include <set>

#include "core/op_table.hpp"
#include "gpu_compare.hpp"
#include "op_cases.hpp"
#include "plan/scalar_forms.hpp"

using namespace cf::detail;

static const cf::DType kAll[] = {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8,  cf::u16,
                                 cf::u32,   cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};

// The row's precision class (cufuse/op_rows.hpp): how far device and host may lie apart.
static double tolerance(const OpRow& row, cf::DType result) { return compare_ulps(row.precision, result); }

TEST_CASE("every op, every dtype it takes, matches the reference") {
  const cf::Shape shape{3, 1031};
  cufuse_test::for_each_op_case([&](const OpRow& row, cf::DType t, const cf::DType* in, const OpTyping& ty) {
    auto a = random_array(in[0], shape);
    auto b = random_array(in[1], shape, cufuse_test::small_second_operand(row, t) ? 2 : 0);
    auto c = random_array(in[2], shape);
    cf::Array r = row.arity == 1 ? cf::apply(row.name, {a})
                : row.arity == 2 ? cf::apply(row.name, {a, b})
                                 : cf::apply(row.name, {a, b, c});
    const std::string what = std::string(row.name) + " " + std::string(cf::name(t));
    // logaddexp(x, y) = max + log1p(exp(-|x - y|)) cancels where the result nears 0 (as
    // NumPy's does): CUDA's exp/log1p differ from glibc's by an ulp of the larger operand,
    // so the device is held to a few ulps of the operands there, not of the result.
    double atol = 0;
    if ((row.id == Op::Logaddexp || row.id == Op::Logaddexp2) && cf::is_float(ty.result)) {
      const double big = std::max(cf::max(cf::abs(a)).item<double>(), cf::max(cf::abs(b)).item<double>());
      atol = 4 * ulp_of(ty.result, std::max(1.0, big));
    }
    CHECK_MESSAGE(check_against_reference(r, tolerance(row, ty.result), what, atol) == 0, what);
  });
}

TEST_CASE("every composite row of the op table, every dtype, matches the reference") {
  // sinc, round, nan_to_num, isclose: called by name as the CLI calls them, with NumPy's
  // defaults and with other parameters; their steps fuse into kernels like any expression.
  const cf::Shape shape{5, 611};
  const std::vector<std::vector<cf::OpParam>> variants = {
      {}, {{"decimals", cf::Scalar(int64_t{2})}, {"nan", cf::Scalar(-1.5)}, {"rtol", cf::Scalar(0.1)}},
      {{"decimals", cf::Scalar(int64_t{-1})}, {"posinf", cf::Scalar(7.0)}, {"equal_nan", cf::Scalar(true)}}};
  for (const OpFunction& f : op_functions()) {
    if (f.kind != OpFunction::Composite) continue;
    const Signature& sig = signature(f.sig);
    for (cf::DType t : kAll) {
      for (const auto& all : variants) {
        std::vector<cf::OpParam> params;  // those of the variant this op has
        for (const auto& p : all)
          for (int i = 0; i < sig.n_params; ++i)
            if (p.name == sig.params[i].name) params.push_back(p);
        std::vector<cf::Operand> args;
        for (int i = 0; i < sig.n_operands; ++i) args.push_back(random_array(t, shape));
        const std::string what = std::string(f.name) + " " + std::string(cf::name(t)) + " (" +
                                 std::to_string(params.size()) + " parameters)";
        cf::Array r;
        try {
          r = cf::apply(f.name, args, params);
        } catch (const cf::TypeError&) {
          continue;  // round(bool, decimals=2): NumPy's TypeError too
        }
        CHECK_MESSAGE(check_against_reference(r, compare_ulps(f.precision, r.dtype()), what) == 0, what);
      }
    }
  }
}

TEST_CASE("a Python int past an integer array's range in a float loop (int8 / 300, arctan2(uint8, -1))") {
  // NumPy 2 converts the int to the float loop's dtype; the kernel takes it as that float.
  for (cf::DType t : {cf::i8, cf::u8, cf::i16, cf::u16}) {
    auto a = random_array(t, {1000});
    CHECK(check_against_reference(a / 70000, 0, "x / 70000") == 0);
    CHECK(check_against_reference(cf::arctan2(a, -1), 4, "arctan2(x, -1)") == 0);
    CHECK(check_against_reference(cf::hypot(a, 70000), 4, "hypot(x, 70000)") == 0);
    CHECK(check_against_reference(cf::copysign(a, -70000), 0, "copysign(x, -70000)") == 0);
    CHECK((a / 70000).dtype() == cf::f64);
  }
}

TEST_CASE("casts between every pair of dtypes match the reference") {
  for (cf::DType from : kAll) {
    auto a = random_array(from, {2053});
    std::vector<cf::Array> outs;
    for (cf::DType to : kAll) {
      // float -> integer outside the target's range is undefined in NumPy; keep values in range
      cf::Array src = (cf::is_float(from) && !cf::is_float(to)) ? cf::clip(a, 0, 100) : a;
      auto r = src.astype(to);
      CHECK_MESSAGE(check_against_reference(r, 0, std::string("astype ") + std::string(cf::name(from)) + "->" +
                                                      std::string(cf::name(to))) == 0,
                    cf::name(from));
    }
  }
}

TEST_CASE("layouts: strided, reversed, broadcast, remapped, unaligned, 0-d") {
  auto m = random_array(cf::f32, {67, 129});
  auto v = random_array(cf::f32, {129});
  auto h = random_array(cf::f16, {67, 129});
  CHECK(check_against_reference(m.T() * 2 + 1, 0, "transpose") == 0);
  CHECK(check_against_reference(m[{cf::slice(cf::none, cf::none, -1), cf::slice(1, cf::none, 3)}] - v[{cf::slice(1, cf::none, 3)}], 0, "reversed") == 0);
  CHECK(check_against_reference(cf::sin(m + v), 8, "broadcast row") == 0);
  CHECK(check_against_reference(m + v.reshape({129, 1})[{cf::slice(0, 67)}], 0, "broadcast column") == 0);
  CHECK(check_against_reference((m.T().reshape({-1}) * 3).reshape({129, 67}), 0, "remap") == 0);
  CHECK(check_against_reference(m.reshape({-1})[{cf::slice(1, cf::none)}] * 2, 0, "unaligned") == 0);
  CHECK(check_against_reference(h * h + m, 0, "mixed f16 f32") == 0);
  CHECK(check_against_reference(m[{3, 4}] * 2, 0, "0-d") == 0);
  CHECK(check_against_reference(cf::where(m > 0, m, h.astype(cf::f32) * 2), 0, "where") == 0);
  auto big = random_array(cf::f32, {1 << 22});
  CHECK(check_against_reference(big * 0.5f + cf::sqrt(cf::abs(big)), 0, "4M contiguous") == 0);
}

TEST_CASE("tiled mode: transposed reads through shared memory, any size, dtype and batch") {
  // Edges that are and are not multiples of the 32-wide tile, both orders of R and C sizes.
  for (auto [r, c] : {std::pair<int64_t, int64_t>{16, 16}, {33, 47}, {64, 1000}, {1000, 17}, {257, 511}, {2048, 96}}) {
    INFO("shape " << r << " x " << c);
    auto x = random_array(cf::f32, {c, r});
    auto y = random_array(cf::f32, {r, c});
    CHECK(check_against_reference(x.T() * 2 + 1, 0, "x.T * 2 + 1") == 0);
    CHECK(check_against_reference(x.T() + y, 0, "x.T + y") == 0);
    CHECK(check_against_reference(cf::sin(x.T()) * y.T().T(), 8, "sin(x.T) * y") == 0);
  }
  for (cf::DType t : {cf::f16, cf::bf16, cf::f64, cf::i8, cf::u16, cf::i64, cf::bool_}) {
    INFO(cf::name(t));
    auto x = random_array(t, {70, 90});
    auto y = random_array(t, {90, 70});
    CHECK(check_against_reference(x.T().astype(t), 0, "transposed copy") == 0);
    CHECK(check_against_reference(cf::where(y > x.T(), y, x.T()), 0, "where of two layouts") == 0);
  }
  // batched permutes: (0, 2, 1) and (2, 1, 0), a reversed slice, a broadcast and an arange
  auto b = random_array(cf::f32, {3, 40, 70});
  auto h = random_array(cf::f16, {3, 40, 70});
  CHECK(check_against_reference(b.transpose({0, 2, 1}) * h.transpose({0, 2, 1}) + random_array(cf::f32, {3, 70, 40}), 0,
                                "two staged reads and a direct one") == 0);
  CHECK(check_against_reference(b.transpose({2, 1, 0}) - random_array(cf::f32, {3}), 0, "permute (2, 1, 0) minus a row") == 0);
  auto m = random_array(cf::f32, {200, 300});
  CHECK(check_against_reference(m[{cf::slice(cf::none, cf::none, -1)}].T() * cf::arange(200).astype(cf::f32), 0,
                                "reversed rows, transposed, times arange") == 0);
  // several outputs of one tiled kernel, evaluated together
  auto u = m.T() + 1, v = m.T() * m.T();
  auto ru = cf::detail::reference_evaluate(u.node()), rv = cf::detail::reference_evaluate(v.node());
  cf::eval(u, v);
  CHECK(compare_with(u, ru, 0, "output 1") == 0);
  CHECK(compare_with(v, rv, 0, "output 2") == 0);
  // a transposed expression assigned into an existing array (a target output)
  auto dst = cf::zeros({300, 200}, cf::f32).eval();
  auto want = cf::detail::reference_evaluate((m.T() * 3).node());
  dst.assign(m.T() * 3);
  CHECK(compare_with(dst, want, 0, "assign") == 0);
}

TEST_CASE("straight-line contiguous kernels: one and two elements per thread, every size boundary") {
  // one per thread up to 2^19, two (i0, i0 + 256, loads predicated) up to 2^22, vectors above;
  // sizes just around each boundary and around a whole number of 512-element blocks
  for (int64_t n : {int64_t(1), int64_t(255), int64_t(257), int64_t(1) << 19, (int64_t(1) << 19) + 1,
                    (int64_t(1) << 19) + 257, (int64_t(1) << 20) + 511, (int64_t(1) << 22) - 1}) {
    INFO("n = " << n);
    auto x = random_array(cf::f32, {n});
    auto y = random_array(cf::i64, {n});
    auto z = random_array(cf::f64, {n});
    CHECK(check_against_reference(((x - z) * (x + z) * 0.5 + x * 3 - z / 2) * (x * x + 1), 0, "W7b's expression") == 0);
    CHECK(check_against_reference(cf::where(x > 0, cf::sqrt(x) + y, cf::arange(n) * 0.5), 0, "mixed dtypes, arange") == 0);
    CHECK(check_against_reference(cf::abs(y) * 2 - (y >> 3), 0, "int64 only") == 0);
  }
}

TEST_CASE("rows mode: broadcasts along rows and columns, vectorized or not, any rank") {
  auto m = random_array(cf::f32, {300, 1024});
  auto col = random_array(cf::f32, {300});
  auto row = random_array(cf::f32, {1024});
  // W6's epilogue shape: a column vector, a matrix and a row vector
  CHECK(check_against_reference(cf::sqrt(cf::maximum(col[{cf::_, cf::newaxis}] - 2 * m + row[{cf::newaxis, cf::_}], 0)), 0,
                                "column - 2 m + row") == 0);
  CHECK(check_against_reference(col[{cf::_, cf::newaxis}] * row, 0, "outer product") == 0);
  auto odd = random_array(cf::f32, {77, 333});
  CHECK(check_against_reference(odd + random_array(cf::f32, {333}), 0, "row length not a multiple of 4") == 0);
  CHECK(check_against_reference(m[{cf::_, cf::slice(1, 1021)}] * 3, 0, "rows that start unaligned") == 0);
  CHECK(check_against_reference(m[{cf::slice(cf::none, cf::none, 3)}] - row, 0, "every third row") == 0);
  auto h = random_array(cf::f16, {64, 512});
  CHECK(check_against_reference(h * random_array(cf::f16, {512}), 0, "float16 rows (8-wide vectors)") == 0);
  auto d = random_array(cf::f64, {5, 7, 256});
  CHECK(check_against_reference(d + random_array(cf::f64, {5, 1, 256}), 0, "rank 3, broadcast middle axis") == 0);
  auto tall = random_array(cf::f32, {70000, 64});
  CHECK(check_against_reference(tall - random_array(cf::f32, {64}), 0, "more rows than gridDim.y allows") == 0);
}

TEST_CASE("more than 2^31 elements: 64-bit indexing") {
  const int64_t n = (int64_t(1) << 31) + 77;
  auto x = cf::arange(n).astype(cf::u8).eval();
  auto y = (x + 3).eval();
  std::vector<uint8_t> tail(77);
  auto t = y[{cf::slice(n - 77, cf::none)}];
  t.copy_to_host(tail.data(), tail.size());
  for (int i = 0; i < 77; ++i) CHECK(tail[i] == static_cast<uint8_t>(((n - 77 + i) & 255) + 3));
  auto s = y[{cf::slice(n - 1, cf::none)}].item<int>();
  CHECK(s == static_cast<uint8_t>(((n - 1) & 255) + 3));
}

TEST_CASE("generators match the reference") {
  for (cf::DType t : kAll) {
    if (t == cf::bool_) continue;
    CHECK(check_against_reference(cf::arange(0, 100, 3, t), 0, "arange") == 0);
    CHECK(check_against_reference(cf::linspace(-3, 7, 1001, true, t)[{cf::slice(cf::none, cf::none, -2)}], 0, "linspace") == 0);
    if (cf::is_float(t)) {
      CHECK(check_against_reference(cf::random::uniform({4099}, t, 11, -2, 5), 0, "uniform") == 0);
      // Box-Muller's cos near its zeros turns libm's last bits into a large relative error:
      // bound the absolute error by the scale instead
      CHECK(check_against_reference(cf::random::normal({4099}, t, 12, 1, 2), cf::is_half(t) ? 1 : 16, "normal",
                                    t == cf::f64 ? 1e-12 : 2e-5) == 0);
    }
  }
}

TEST_CASE("results sharing an iteration space come out of one launch; plans are reused") {
  auto x = random_array(cf::f32, {100000});
  auto y = random_array(cf::f32, {100000});
  for (int rep = 0; rep < 3; ++rep) {
    cf::reset_stats();
    auto a = (x - y) * (x - y);
    auto b = cf::sqrt(a) + x;
    auto c = cf::exp(-a);
    cf::eval(a, b, c);
    CHECK(cf::stats().kernels_launched == 1);
    if (rep > 0) {
      CHECK(cf::stats().plan_cache_hits == 1);
      CHECK(cf::stats().kernels_compiled == 0);
    }
    auto ah = a.to_host<float>();
    auto xh = x.to_host<float>(), yh = y.to_host<float>();
    CHECK(ah[777] == (xh[777] - yh[777]) * (xh[777] - yh[777]));
  }
}

TEST_CASE("in-place writes on the device keep lazy values and NumPy's overlap rules") {
  auto x = cf::from_host(std::vector<float>{1, 2, 3, 4});
  auto y = x * 2;
  x += 10;
  CHECK(y.to_host<float>() == std::vector<float>{2, 4, 6, 8});
  x[{cf::slice(1, cf::none)}] += x[{cf::slice(cf::none, -1)}];
  CHECK(x.to_host<float>() == std::vector<float>{11, 23, 25, 27});
  auto m = random_array(cf::f64, {33, 33});
  auto mh = m.to_host<double>();
  m += m.T();
  auto r = m.to_host<double>();
  CHECK(r[1 * 33 + 2] == mh[1 * 33 + 2] + mh[2 * 33 + 1]);
  auto z = cf::zeros({5}, cf::i32);
  z[{cf::slice(cf::none, cf::none, 2)}] = 7;
  CHECK(z.to_host<int32_t>() == std::vector<int32_t>{7, 0, 7, 0, 7});
}

TEST_CASE("x = x + 1 a million times stays bounded on the device") {
  auto x = cf::zeros({1024}, cf::f32).eval();
  cf::synchronize();
  const size_t used0 = cf::memory::used_bytes();
  cf::reset_stats();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000000; ++i) x = x + 1;
  x.eval();
  cf::synchronize();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(x[{5}].item<float>() == 1000000.0f);
  // Bounded by the plan's shape, not by the count: each auto-evaluation (Config's 8192 pending
  // nodes) is cut into kernels of at most 1024 ops (kernel-size), so its plan holds the kernel of
  // 1024 adds 8 times and one tail kernel; the last evaluation (1e6 = 122 x 8193 + 454 adds)
  // one more. NVRTC runs at most those 3 times (0 with a warm disk cache).
  CHECK(cf::stats().kernels_compiled <= 3);
  CHECK(cf::memory::used_bytes() <= used0 + (1 << 20));
  MESSAGE("1e6 lazy steps: " << s << " s, " << cf::stats().kernels_launched << " launches");
}

TEST_CASE("results over thousands of arrays: kernels cut to CUDA's parameter limit (rule param-space)") {
  // Without the cut, one kernel would need ~100 KB of parameters and NVRTC would refuse it.
  const cf::Config saved = cf::config();
  cf::Config c = saved;
  c.max_pending_nodes = 1 << 30;  // no early evaluation: the planner alone must cut
  cf::set_config(c);
  std::vector<cf::Array> xs;
  for (int i = 0; i < 3000; ++i) xs.push_back(random_array(cf::f32, {33, 5}, kFinite));
  cf::Array z = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) z = z + xs[i] * 0.5f;
  std::vector<cf::Array> outs;
  for (size_t i = 0; i < xs.size(); i += 2) outs.push_back(xs[i] - xs[i + 1]);
  cf::Array w = xs[1];
  for (size_t i = 2; i < xs.size(); ++i) w = w * 0.75f + xs[i];
  cf::reset_stats();
  CHECK(check_against_reference(z, 0, "sum of 3000 arrays") == 0);
  CHECK(cf::stats().kernels_launched > 1);
  CHECK(check_against_reference(cf::sum(w, 1), 2, "a reduction over a cut chain") == 0);
  std::vector<std::pair<size_t, cf::detail::HostArray>> refs;  // before the device writes them
  for (size_t k = 0; k < outs.size(); k += 151) refs.emplace_back(k, cf::detail::reference_evaluate(outs[k].node()));
  cf::eval_all(outs);
  for (const auto& [k, ref] : refs) CHECK(compare_with(outs[k], ref, 0, "one of 1500 results") == 0);
  cf::set_config(saved);
}

TEST_CASE("bad input on the device: errors, not crashes") {
  auto x = random_array(cf::f32, {4});
  CHECK_THROWS_AS(x + random_array(cf::f32, {5}), cf::ValueError);
  CHECK_THROWS_AS(cf::empty({int64_t(1) << 50}, cf::f32), cf::OutOfMemoryError);
  auto e = cf::zeros({0, 3}, cf::f32) + 1;
  CHECK(e.to_host<float>().empty());
}

TEST_CASE("division by a power-of-two scalar multiplies by its reciprocal with the reference's bits") {
  // Edge values (signed zeros, infinities, NaN, the largest and the smallest normals, whose
  // quotients overflow or go subnormal) then random ones.
  const double inf = INFINITY;
  const std::vector<double> edge = {0.0, -0.0, inf, -inf, NAN, 3.4e38, -3.4e38, 1.2e-38, -1.2e-38, 1e-45, 1.0, -3.0};
  for (cf::DType t : {cf::f32, cf::f64, cf::f16, cf::bf16, cf::i32}) {
    auto x = random_array(t, {100003});
    if (cf::is_float(t)) x[{cf::slice(0, int64_t(edge.size()))}] = cf::from_host(edge).astype(t);
    for (double d : {2.0, 0.25, -8.0, std::ldexp(1.0, -100), std::ldexp(1.0, 100), 3.0}) {
      auto q = x / d;
      INFO(cf::name(t) << " / " << d << ", reciprocal form " << divides_by_exact_reciprocal(q.node().get()));
      CHECK(check_against_reference(q, 0, "x / d") == 0);
    }
  }
  // 1 / x takes the literal reciprocal (rcp.rn): the bits of the division, edges included
  for (cf::DType t : {cf::f32, cf::f64, cf::f16, cf::bf16, cf::i32}) {
    auto x = random_array(t, {100003});
    if (cf::is_float(t)) x[{cf::slice(0, int64_t(edge.size()))}] = cf::from_host(edge).astype(t);
    for (double n : {1.0, 3.0}) {
      auto q = n / x;
      INFO(n << " / " << cf::name(t) << ", unit-numerator form " << divides_one(q.node().get()));
      CHECK(check_against_reference(q, 0, "n / x") == 0);
    }
  }
  // a fused function's scalar argument stays a division: other values reuse the plan
  auto f = cf::fuse([](auto x, auto s) { return x / s; });
  auto x = random_array(cf::f32, {4099});
  for (double s : {2.0, 3.0, 0.5, -7.0}) CHECK(same_bits(f(x, s), x / s));
  CHECK(f.stats().traces == 1);
}

TEST_CASE("fmin / fmax of a zero the compiler can fold keep the reference's signed zero") {
  // Fuzz seed 856427902198: z = v1 - v1 (int64, folded to 0 by NVVM) made fmin(z, y * z) a
  // min.f64 against +0, which returns -0 where y < 0; cf_fmin returns +0. 2.5 / it shows the sign.
  auto v1 = random_array(cf::i64, {1, 1, 1});
  auto y = random_array(cf::f32, {4, 1, 1});
  y[{0}] = cf::full({1, 1}, -1.5f);
  y[{1}] = cf::full({1, 1}, 2.0f);
  for (int k = 0; k < 4; ++k) {
    auto z = v1 - v1;
    auto e = k == 0 ? cf::fmin(z, y * z) : k == 1 ? cf::fmax(z, y * z) : k == 2 ? cf::fmin(y * z, z) : cf::fmax(y * z, z);
    auto q = 2.5 / e.broadcast_to({2, 4, 3, 1});
    CHECK(check_against_reference(q, 0, "2.5 / f(0, y * 0), f #" + std::to_string(k)) == 0);
    for (cf::DType t : {cf::f32, cf::f16}) {  // and on a float zero folded from x - x
      auto zf = v1.astype(t) - v1.astype(t);
      auto yt = y.astype(t);
      auto ef = k % 2 == 0 ? cf::fmin(zf, yt * zf) : cf::fmax(zf, yt * zf);
      CHECK(check_against_reference(2.5 / ef, 0, std::string(cf::name(t)) + " float zero") == 0);
    }
  }
}

TEST_CASE("int16 negation of the lowest value stays wrapped where the result is widened or compared") {
  // ptxas took the result of a neg.s16 as sign-extended: -(-32768) widened came out +32768
  // (fuzz seed 890965425964: max(-(-x)) over int16 gave -32768). tests/test_ptx_patterns.cpp
  // checks the PTX; this checks the values, against the reference, with both extremes in x.
  auto x = random_array(cf::i16, {3, 700});
  auto y = random_array(cf::i16, {3, 700});
  x[{cf::_, cf::slice(0, 4)}] = cf::from_host(std::vector<int16_t>{-32768, 32767, -1, -32767}, cf::Shape{4});
  y[{cf::_, cf::slice(0, 4)}] = cf::from_host(std::vector<int16_t>{-1, -32768, 1, 0}, cf::Shape{4});
  auto i32 = random_array(cf::i32, {3, 700});
  const std::vector<std::pair<std::string, cf::Array>> cases = {
      {"max(-x)", cf::max(-x)},
      {"max(-x, axis=1)", cf::max(-x, 1)},
      {"max(-(-x)), large", cf::max(-(-x.broadcast_to({200, 3, 700})))},
      {"-x > 0", (-x) > 0},
      {"abs(x) as int32", cf::abs(x).astype(cf::i32)},
      {"-x + int32", -x + i32},
      {"(x - x) - y, widened", ((x - x) - y).astype(cf::i64)},
      {"~x + 1, widened", (~x + (x == x).astype(cf::i16)).astype(cf::f32)},
      {"x * -1, widened", (x * ~(y - y)).astype(cf::i32)},
      {"x * y, widened", (x * y).astype(cf::i64)},
      {"floor_divide(x, y) < 0", cf::floor_divide(x, y) < 0},
      {"sum(-x)", cf::sum(-x, 1)},
  };
  for (const auto& [what, v] : cases) CHECK(check_against_reference(v, 0, what) == 0);
  // User code negating int16 (a __noinline__ call), its result widened and reduced.
  cf::ElementwiseKernel neg("T x", "T z", "z = -x", "neg16");
  // The reference cannot run user CUDA: it evaluates the lazy twin.
  const auto twin1 = cf::detail::reference_evaluate(cf::max((-x).astype(cf::i32), 1).node());
  const auto twin2 = cf::detail::reference_evaluate(((-x) > 0).node());
  CHECK(compare_with(cf::max(neg(x).astype(cf::i32), 1), twin1, 0, "user -x, widened, max") == 0);
  CHECK(compare_with(neg(x) > 0, twin2, 0, "user -x > 0") == 0);
}

// Issue 38, fuzz seed 786083882611: NVVM widened 8-bit results of wrapping arithmetic (and |x|
// of a vector-loaded byte) without re-extending them from their low byte. Every such op on
// int8 and uint8 values read by 16-byte vector loads (rows of 16, the failing layout), its
// result converted to float32 and summed per row, and elementwise to int64, against the
// reference, on random bytes that overflow.
TEST_CASE("8-bit wrapping arithmetic from vector loads, widened to float and to int64") {
  for (cf::DType t : {cf::i8, cf::u8}) {
    CAPTURE(cf::name(t));
    auto x = random_array(t, {64, 16});
    auto y = random_array(t, {64, 16});
    x.eval();
    y.eval();
    const std::vector<std::pair<std::string, cf::Array>> forms = {
        {"x + y", x + y}, {"x - y", x - y}, {"x * y", x * y}, {"-x", -x}, {"abs(x)", cf::abs(x)},
        {"x << 3", cf::left_shift(x, 3)}, {"x ** 3", cf::power(x, 3)},
        // (-1 is out of range for uint8: NumPy's OverflowError; x // 7 there)
        {"x // -1 or 7", cf::floor_divide(x, t == cf::i8 ? -1 : 7)}};
    for (const auto& [what, r] : forms) {
      CHECK(check_against_reference(cf::sum(r.astype(cf::f32), 1), 4, what + " summed as float32") == 0);
      CHECK(check_against_reference(r.astype(cf::i64) * 3, 0, what + " as int64") == 0);
      CHECK(check_against_reference(cf::hypot(cf::max(r, 0), r), 4, what + " in hypot") == 0);
    }
  }
}
