// tests/gpu/test_manipulation_gpu.cpp: issue 30's joining, rearranging and random functions
// on the device against the host reference evaluator, on random inputs of every dtype:
// concatenate / stack (fused with their parts' expressions), tile, repeat, roll, pad in every
// mode, flip and rot90 (views), bit for bit; the kernel counts of the fused forms; and the new
// random generators (integers, exponential, poisson, permutation, shuffle), which must give
// the reference's values for the same seed (exponential within 4 ulps: libm's log).
#include "gpu_compare.hpp"

namespace {

const cf::DType kAll[] = {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u16,
                          cf::u32,   cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};

void check_same(const cf::Array& dev, const std::string& what, double ulps = 0) {
  const auto want = cf::detail::reference_evaluate(dev.node());
  CHECK_MESSAGE(compare_with(dev, want, ulps, what) == 0, what);
}

}  // namespace

TEST_CASE("joining and index maps on the device equal the reference in every dtype") {
  for (cf::DType t : kAll) {
    const std::string dn(cf::name(t));
    const cf::Array a = random_array(t, {37, 45}), b = random_array(t, {11, 45}), c = random_array(t, {37, 3});
    check_same(cf::concatenate({a, b}), "concatenate axis 0 " + dn);
    check_same(cf::concatenate({a, c, a}, -1), "concatenate axis -1 " + dn);
    check_same(cf::concatenate({a, b}, std::nullopt), "concatenate flattened " + dn);
    check_same(cf::stack({a, a}, 1), "stack axis 1 " + dn);
    check_same(cf::tile(c, {3, 2}), "tile " + dn);
    check_same(cf::repeat(a, 3, 1), "repeat " + dn);
    check_same(cf::repeat(c, std::vector<int64_t>{1, 0, 3}, 1), "repeat per element " + dn);
    check_same(cf::roll(a, {5, -7}, {0, 1}), "roll " + dn);
    check_same(cf::roll(a, 100), "roll flattened " + dn);
    for (const char* mode : {"constant", "edge", "reflect", "symmetric", "wrap"})
      check_same(cf::pad(a, {{3, 50}, {0, 2}}, mode), std::string("pad ") + mode + " " + dn);
    check_same(cf::flip(a).copy(), "flip " + dn);
    check_same(cf::rot90(a, 1).copy(), "rot90 " + dn);
  }
}

TEST_CASE("joins with a branch per part and merged coordinates equal the reference") {
  // codegen/view_coords.hpp and the if/else per part of elementwise_kernel.cpp: part
  // boundaries inside a vector, stacks whose parts merge dims, a part read through a
  // transpose (unravelled), pads past the input's length (the maps' slow paths).
  for (cf::DType t : {cf::f32, cf::f64, cf::i8, cf::f16}) {
    const std::string dn(cf::name(t));
    const cf::Array a = random_array(t, {5, 6, 70}), b = random_array(t, {5, 6, 70}), c = random_array(t, {5, 3, 70});
    for (int ax : {0, 1, 2, 3, -1}) check_same(cf::stack({a, b, a}, ax), "stack 3-D axis " + std::to_string(ax) + " " + dn);
    check_same(cf::concatenate({a, c, b}, 1), "concatenate 3 parts axis 1 " + dn);
    check_same(cf::concatenate({a.index({cf::_, cf::_, cf::slice(0, 33)}), b}, 2), "concatenate odd split " + dn);
    check_same(cf::stack({a, b.transpose({0, 2, 1}).copy().transpose({0, 2, 1})}, 1), "stack through a transpose " + dn);
    check_same(cf::stack({a, a.transpose({1, 0, 2}).transpose({1, 0, 2})}, 0), "stack of views " + dn);
    check_same(cf::tile(c, {2, 1, 3}), "tile 3-D " + dn);
    for (const char* mode : {"reflect", "symmetric", "wrap", "edge"})
      check_same(cf::pad(c, {{0, 0}, {7, 9}, {75, 140}}, mode), std::string("pad past the length ") + mode + " " + dn);
  }
  const cf::Array x = random_normal(cf::f32, {512, 1024}), y = random_normal(cf::f32, {512, 1024});
  check_same(cf::concatenate({x * 2, cf::exp(y), x - y}, 1) * 3, "concatenate axis 1, rows mode, vectors", 2);
  check_same(cf::stack({x, y}) + 1, "stack axis 0, rows mode, vectors");
}

TEST_CASE("joined and mapped expressions are one kernel on the device, with the reference's values") {
  const cf::Array x = random_normal(cf::f32, {300, 257}), y = random_normal(cf::f32, {300, 257});
  cf::eval(x, y);
  cf::reset_stats();
  auto c = cf::concatenate({x * 2, cf::exp(y)}) * 3;
  c.eval();
  CHECK(cf::stats().kernels_launched == 1);
  check_same(c, "concatenate({x * 2, exp(y)}) * 3", 2);
  cf::reset_stats();
  auto s = cf::stack({x * 2, y - 1}, 2) + 1;
  s.eval();
  CHECK(cf::stats().kernels_launched == 1);
  check_same(s, "stack");
  cf::reset_stats();
  auto p = cf::pad(x * 2, 1, "reflect") + cf::pad(y, 1);
  p.eval();
  CHECK(cf::stats().kernels_launched == 1);
  check_same(p, "pad reflect + pad constant");
  cf::reset_stats();
  auto r = cf::sum(cf::tile(x, {2, 1}) * cf::repeat(y, 2, 0), 1);
  r.eval();
  CHECK(cf::stats().kernels_launched == 1);
  check_same(r, "sum(tile * repeat)", 64);
  // a large one: rows of 4100 elements, the chain's coordinates straight from the iteration's
  const cf::Array big = random_normal(cf::f32, {3, 4096, 4096});
  check_same(cf::sum(cf::pad(big, {{0, 0}, {1, 1}, {2, 2}}, "wrap"), 0), "sum of a padded 50M-element array", 8);
}

TEST_CASE("joins by block ranges (rule block-partitioned-parts) and flat pads equal the reference, one kernel each") {
  // codegen/elementwise_parts.hpp: each part's piece on its own blocks, writing its region
  auto one_kernel = [](const cf::Array& e, const std::string& what, double ulps = 0) {
    const auto want = cf::detail::reference_evaluate(e.node());
    cf::reset_stats();
    CHECK_MESSAGE(compare_with(e, want, ulps, what) == 0, what);
    CHECK_MESSAGE(cf::stats().kernels_launched == 1, what);
  };
  for (cf::DType t : {cf::bool_, cf::i8, cf::u16, cf::i64, cf::f16, cf::bf16, cf::f64}) {  // (f32: below; all: above)
    const std::string dn(cf::name(t));
    const cf::Array a = random_array(t, {300, 1000}), b = random_array(t, {77, 1000});
    cf::eval(a, b);
    CHECK(cf::plan_dump({cf::concatenate({a, b})}).find("block ranges") != std::string::npos);
    one_kernel(cf::concatenate({a, b}), "parts axis 0 " + dn);
    one_kernel(cf::concatenate({a, a.index({cf::_, cf::slice(0, 333)})}, 1), "parts axis 1, unaligned rows " + dn);
    one_kernel(cf::stack({a, a, a}), "stack of 3 " + dn);
    one_kernel(cf::stack({b, b}, 1), "stack axis 1 " + dn);
  }
  // (small enough for the reference evaluator, which computes every part over the whole output:
  // the contiguous pieces take vectors only from 2^22 elements, which bench M1 and M2 check)
  const cf::Array x = random_normal(cf::f32, {160, 4100}), y = random_normal(cf::f32, {160, 4100});
  one_kernel(cf::concatenate({x * 2, cf::exp(y)}), "M1's form", 2);
  one_kernel(cf::concatenate({x * 2, cf::exp(y)}) * 3 + 1, "ops over the join", 2);
  one_kernel(cf::concatenate({x, y * 2, x - y}, 1), "3 parts along the rows", 2);
  one_kernel(cf::stack({x, y}, 1) - 1, "stack axis 1");
  std::vector<cf::Array> many;
  for (int i = 0; i < 16; ++i) many.push_back(i % 3 ? x.index({cf::slice(0, 3 + i)}) : y.index({cf::slice(i, 20)}));
  one_kernel(cf::concatenate(many), "16 parts of uneven lengths");
  const cf::Array row = random_normal(cf::f32, {1, 4100});
  one_kernel(cf::concatenate({x, row.broadcast_to({70, 4100}) + 1}), "a broadcast part");
  const cf::Array p = random_normal(cf::f32, {(1 << 16) + 1}), q = random_normal(cf::f32, {1 << 16});
  one_kernel(cf::concatenate({p, q}), "1-D, the second part unaligned");
  one_kernel(cf::concatenate({q, p, q}), "1-D, three parts");
  const cf::Array c3 = random_normal(cf::f64, {6, 40, 513});
  one_kernel(cf::stack({c3, c3 * 2}, 2), "a 3-D stack in the last but one axis");
  one_kernel(cf::concatenate({c3, c3}, 1), "3-D along the middle axis");
  // into a view of an array: the pieces' regions of the target
  cf::Array big = cf::zeros({322, 4100}, cf::f32);
  big.eval();
  const auto want = cf::detail::reference_evaluate(cf::concatenate({x * 2, y}).node());
  big.index({cf::slice(1, 321)}) = cf::concatenate({x * 2, y});
  big.eval();
  CHECK(compare_with(big.index({cf::slice(1, 321)}), want, 0, "written into a view") == 0);
  CHECK(cf::sum(cf::abs(big.index({cf::slice(0, 1)}))).item<float>() == 0);
  CHECK(cf::sum(cf::abs(big.index({cf::slice(321, 322)}))).item<float>() == 0);
  // flat mode (codegen/elementwise_kernel.cpp): pads whose rows take no 16-byte vectors
  one_kernel(cf::pad(x, 1, "reflect"), "flat reflect pad");
  one_kernel(cf::pad(x * 2, {{1, 2}, {3, 4}}, "symmetric"), "flat symmetric pad");
  one_kernel(cf::pad(c3, {{1, 1}, {2, 3}, {0, 0}}, "edge"), "flat 3-D edge pad");
  const cf::Array z = random_normal(cf::f32, {162, 4102});
  one_kernel(cf::pad(x, 1, "reflect") * z, "flat pad times an array (its vector loads)");
  // (normal's transcendentals: within 16 ulps of the host's, as tests/gpu/test_elementwise_gpu.cpp allows)
  one_kernel(cf::pad(cf::random::normal({37, 4097}, cf::f32, 5), 1, "wrap"), "flat wrap pad of a generator", 16);
}

TEST_CASE("the new random generators give the reference's values for the same seed") {
  for (cf::DType t : {cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u16, cf::u32, cf::u64, cf::bool_})
    check_same(cf::random::integers(0, 2, {10007}, t, 17), "integers " + std::string(cf::name(t)));
  check_same(cf::random::integers(INT64_MIN, INT64_MAX, {10007}, cf::i64, 5), "integers full range");
  check_same(cf::random::integers(-1000, 1000, {10007}, cf::i16, 5), "integers int16");
  for (cf::DType t : {cf::f16, cf::bf16, cf::f32, cf::f64})
    check_same(cf::random::exponential(2.5, {10007}, t, 3), "exponential " + std::string(cf::name(t)), 4);
  for (double lam : {0.3, 7.0, 12.0, 5000.0})
    check_same(cf::random::poisson(lam, {10007}, cf::i64, 9), "poisson " + std::to_string(lam));
  for (int64_t n : {1, 7, 1000, 1 << 20}) check_same(cf::random::permutation(n, 4), "permutation " + std::to_string(n));
  check_same(cf::random::choice(1000, {10, 20}, false, 4), "choice without replacement");
  const cf::Array rows = random_array(cf::f32, {513, 31});
  check_same(cf::random::permutation(rows * 2, 8), "permutation of rows");
  auto g = cf::random::default_rng(99);
  check_same(g.poisson(3.0, {4096}), "Generator.poisson");
  check_same(g.integers(5, 10, {4096}, cf::i32), "Generator.integers");
  cf::Array s = random_array(cf::i32, {1000});
  s.eval();
  const auto before = cf::detail::reference_evaluate(s.node());
  cf::random::shuffle(s, 12);
  cf::Array host_s;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    host_s = cf::from_host(before.bytes.data(), cf::i32, {1000});
    cf::random::shuffle(host_s, 12);
  }
  CHECK(s.to_host<int32_t>() == host_s.to_host<int32_t>());
}
