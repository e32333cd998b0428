// tests/test_manipulation_parts.cpp: rule block-partitioned-parts (codegen/elementwise_parts.hpp):
// a concatenation's or stack's kernel gives each part its own range of blocks running the part's
// own code (no index maps, no per-element choice of part), still one kernel; where it applies, the
// pieces' modes and block counts, that every dtype's kernel compiles (NVRTC), where it falls back
// to the per-element form, that the graph key holds the part bounds the blocks are split at, and
// that a user's `arange(n) < i` never takes the rule (its bound stays a parameter: one plan a loop).
// tests/gpu/test_manipulation_gpu.cpp checks the values on the device.
#include "graph/manip_support.hpp"
#include "test_core_helpers.hpp"
#include "test_sandbox.hpp"

namespace {

struct Kernel {
  std::string summary, source;  // source: the pieces and the kernel, not the preamble
  unsigned grid = 0;
  size_t steps = 0;
};

Kernel kernel_of(const cf::Array& e, bool compile = false) {
  auto ex = plan_of({e}, compile);
  Kernel k;
  k.steps = ex->steps.size();
  if (k.steps != 1) return k;
  const auto& spec = ex->steps[0].spec;
  k.summary = spec.summary;
  const size_t cut = spec.source.find("// ---- end of the cufuse preamble ----");
  k.source = cut == std::string::npos ? spec.source : spec.source.substr(cut);
  k.grid = spec.dims.grid[0];
  return k;
}

bool partitioned(const Kernel& k, size_t parts) {
  return k.summary.find(std::to_string(parts) + " parts by block ranges") == 0 &&
         count_of(k.source, "__device__ __forceinline__ void") == parts;
}

}  // namespace

TEST_CASE("rule block-partitioned-parts: each part of a join on its own blocks, its own contiguous code") {
  const auto x = cf::placeholder(cf::f32, {1024, 4096}), y = cf::placeholder(cf::f32, {1024, 4096});
  // M1's form: two pieces of 1024 x 4096 elements, 2 x 4 a thread: 2048 blocks each
  const Kernel cat = kernel_of(cf::concatenate({x * 2, cf::exp(y)}), true);
  CHECK(cat.steps == 1);
  CHECK(partitioned(cat, 2));
  CHECK(cat.summary.find("along dim 0") != std::string::npos);
  CHECK(count_of(cat.summary, "contiguous, 2 x 4 elements per thread (16-byte vectors)") == 2);
  CHECK(cat.grid == 2 * 2048);
  CHECK(count_of(cat.source, "cf_imap") == 0);    // no index map read
  CHECK(count_of(cat.source, "} else {") == 0);   // no per-element choice
  CHECK(count_of(cat.source, "cf_vec<float, V>*>(p.a0") == 2);  // 16-byte loads of x and y
  CHECK(cat.source.find("__launch_bounds__(256)") != std::string::npos);
  // M2's: a stack along axis 0 is the same; along axis 1, each part is rows of the output's rows
  CHECK(partitioned(kernel_of(cf::stack({x, y})), 2));
  const Kernel st1 = kernel_of(cf::stack({x, y}, 1), true);
  CHECK(partitioned(st1, 2));
  CHECK(count_of(st1.summary, "rows rank 2") == 2);
  CHECK(st1.grid == 2 * 1024);  // a row of 4096 a block (4 x 4 elements a thread), 1024 rows each
  // ops over the join whose other operands are scalars go into every piece; any number of parts
  const Kernel c3 = kernel_of(cf::concatenate({x * 2, cf::exp(y), y}, 1) * 3 + 1, true);
  CHECK(partitioned(c3, 3));
  CHECK(count_of(c3.summary, "16-byte vectors") == 3);
  std::vector<cf::Array> many;
  for (int i = 0; i < 16; ++i) many.push_back(i % 2 ? x : y);
  CHECK(partitioned(kernel_of(cf::concatenate(many)), 16));
  // a broadcast part reads its row at stride 0; a 3-D stack in the middle axis
  const auto row = cf::placeholder(cf::f32, {1, 4096});
  CHECK(partitioned(kernel_of(cf::concatenate({x, row.broadcast_to({512, 4096}) + 1}), true), 2));
  const auto a3 = cf::placeholder(cf::f32, {4, 8, 64}), b3 = cf::placeholder(cf::f32, {4, 8, 64});
  CHECK(partitioned(kernel_of(cf::stack({a3, b3 * 2}, 1), true), 2));
}

TEST_CASE("rule block-partitioned-parts compiles in every dtype, aligned or not") {
  for (cf::DType t : {cf::bool_, cf::i8, cf::i16, cf::u32, cf::i64, cf::f16, cf::bf16, cf::f64, cf::c64, cf::c128}) {
    CAPTURE(cf::name(t));
    const auto a = cf::placeholder(t, {300, 64}), b = cf::placeholder(t, {77, 64});
    CHECK(partitioned(kernel_of(cf::concatenate({a, b}), true), 2));
    CHECK(partitioned(kernel_of(cf::concatenate({a, a}, 1), true), 2));
  }
  // complex scalars (16-byte aligned fields) in the pieces' structs
  const auto z = cf::placeholder(cf::c128, {300, 64});
  CHECK(partitioned(kernel_of(cf::concatenate({z * cf::Scalar(std::complex<double>(1, 2)), z}) + cf::Scalar(std::complex<double>(0, 1)), true), 2));
  // 1-D parts of odd lengths: the second starts unaligned, so it runs without vectors
  const auto p = cf::placeholder(cf::f32, {1 << 22}), q = cf::placeholder(cf::f32, {(1 << 22) + 1});
  const Kernel odd = kernel_of(cf::concatenate({q, p}), true);
  CHECK(partitioned(odd, 2));
  CHECK(count_of(odd.summary, "16-byte vectors") == 1);
}

TEST_CASE("rule block-partitioned-parts falls back to the per-element form where it does not apply") {
  const auto x = cf::placeholder(cf::f32, {1024, 4096}), y = cf::placeholder(cf::f32, {1024, 4096});
  const auto z = cf::placeholder(cf::f32, {2048, 4096});
  auto per_element = [](const Kernel& k) {
    return k.steps == 1 && k.summary.find("block ranges") == std::string::npos && count_of(k.source, "} else {") >= 1;
  };
  // an operand over the join that is an array, not a scalar
  CHECK(per_element(kernel_of(cf::concatenate({x, y}) + z)));
  // a stack along the last axis interleaves its parts element by element
  CHECK(per_element(kernel_of(cf::stack({x, y}, 2))));
  // a part read transposed (its piece would need tiles)
  const auto w = cf::placeholder(cf::f32, {4096, 1024});
  CHECK(per_element(kernel_of(cf::concatenate({x, w.transpose()}, 1))));
  // turned off
  {
    cufuse_test::ScopedEnv off("CUFUSE_EW_PARTS", "0");
    CHECK(per_element(kernel_of(cf::concatenate({x * 2, cf::exp(y)}))));
  }
}

TEST_CASE("the graph key holds a join's part bound, never a user's arange bound: a loop over i keeps one plan") {
  const auto x = cf::placeholder(cf::f32, {64, 48}), y = cf::placeholder(cf::f32, {64, 48});
  auto key = [](const cf::Array& a) {
    cf::detail::GraphScan s;
    cf::detail::scan_graph({a.node()}, {}, s);
    return s.key;
  };
  // a join's coordinate: the bound it splits the blocks at is in the key
  const cf::Array coord = cf::detail::coordinate(cf::Shape{64, 48}, 0);
  CHECK(cf::detail::is_join_coordinate(*coord.node()));
  CHECK(key(cf::where(cf::less(coord, 3), x, y)) != key(cf::where(cf::less(coord, 5), x, y)));
  CHECK(key(cf::where(cf::less(coord, 3), x, y)) == key(cf::where(cf::less(coord, 3), x, y)));
  // a user's arange: the bound is a kernel parameter, one key (and one plan) for every value
  const cf::Array rows = cf::arange(64).reshape({64, 1}).broadcast_to({64, 48});
  CHECK_FALSE(cf::detail::is_join_coordinate(*rows.node()));
  CHECK(key(cf::where(cf::less(rows, 3), x, y)) == key(cf::where(cf::less(rows, 5), x, y)));
  CHECK(key(cf::where(cf::less(x, 3.0f), x, y)) == key(cf::where(cf::less(x, 5.0f), x, y)));
  // ... and never takes the rule, whose split would need the value in the key
  const cf::Array r1 = cf::arange(2048 * 64).reshape({2048, 64});
  const auto a = cf::placeholder(cf::f32, {2048, 64}), b = cf::placeholder(cf::f32, {2048, 64});
  const Kernel k = kernel_of(cf::where(cf::less(r1, 1000), a * 2, cf::exp(b)));
  CHECK(k.steps == 1);
  CHECK(k.summary.find("block ranges") == std::string::npos);
}

TEST_CASE("a loop over i of where(arange(n) < i, a, b) builds one plan and compiles one kernel") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int64_t n = 4096;
  const cf::Array a = cf::random::uniform({n}, cf::f32, 11), b = cf::random::uniform({n}, cf::f32, 12);
  a.eval();
  b.eval();
  const auto ha = a.to_host<float>(), hb = b.to_host<float>();
  cf::reset_stats();
  for (int64_t i = 100; i < 4096; i += 997) {
    const cf::Array r = cf::where(cf::less(cf::arange(n), i), a * 2, b);
    const auto h = r.to_host<float>();
    for (int64_t j : {int64_t(0), i - 1, i, n - 1}) CHECK(h[size_t(j)] == (j < i ? ha[size_t(j)] * 2 : hb[size_t(j)]));
  }
  CHECK(cf::stats().plans_built == 1);
  CHECK(cf::stats().plan_cache_hits >= 3);  // every later iteration (and any read back) a hit
  CHECK(cf::stats().kernels_compiled <= 1);
  // a concatenation in the same loop shape: one plan per split (its parts' shapes differ anyway)
  cf::reset_stats();
  for (int64_t i : {100, 1000, 100}) {
    const cf::Array c = cf::concatenate({a.index({cf::slice(0, i)}) * 2, b.index({cf::slice(i, n)})});
    const auto h = c.to_host<float>();
    CHECK(h[size_t(i - 1)] == ha[size_t(i - 1)] * 2);
    CHECK(h[size_t(i)] == hb[size_t(i)]);
  }
  CHECK(cf::stats().plans_built == 2);
}
