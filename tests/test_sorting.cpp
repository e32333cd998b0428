// tests/test_sorting.cpp: sort, argsort, partition, argpartition, lexsort, msort, searchsorted
// and digitize on the host reference backend: values against NumPy 2 (written out when this
// file was written), NaN and -0.0 order, every dtype, axes (None included), empty inputs,
// NumPy's errors, the plans (one sort node; producers and consumers fused around it) and NVRTC
// compiling the generated key, store, widening and search kernels for every dtype.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "codegen/sort_kernels.hpp"
#include "compile/compiler.hpp"
#include "library/cub_sort.hpp"
#include "test_core_helpers.hpp"
#include "sorting_test_values.hpp"
#include "test_values.hpp"

namespace {
using test_values::f64;
using test_values::i64;
using test_values::iarr;
using test_values::message_of;
using sorting_test_values::darr;
using sorting_test_values::kInf;
using sorting_test_values::kNaN;
using sorting_test_values::same_values;
}  // namespace

TEST_CASE("sort and argsort: NumPy's order, NaNs last, stable ties, every dtype") {
  cf::BackendScope ref(cf::Backend::Reference);
  const auto x = darr({3, kNaN, -1, 0.0, -kInf, 2, -0.0, kInf, -kNaN, 2});
  // np.sort / np.argsort(kind="stable") of the same values
  CHECK(same_values(f64(cf::sort(x)), {-kInf, -1, 0.0, -0.0, 2, 2, 3, kInf, kNaN, kNaN}));
  CHECK(i64(cf::argsort(x)) == std::vector<int64_t>{4, 2, 3, 6, 5, 9, 0, 7, 1, 8});
  // sort keeps the bits of -0.0 (before 0.0) and gives NaNs back as NaN
  auto s = f64(cf::sort(x));
  CHECK(std::signbit(s[2]));
  CHECK(!std::signbit(s[3]));
  for (cf::DType t : {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u16, cf::u32, cf::u64, cf::f16,
                      cf::bf16, cf::f32, cf::f64}) {
    CAPTURE(cf::name(t));
    auto v = iarr({5, 1, 4, 1, 0, 3, 2, 120}).astype(t);
    auto sv = cf::sort(v);
    CHECK(sv.dtype() == t);
    auto ai = cf::argsort(v);
    CHECK(ai.dtype() == cf::i64);
    if (t == cf::bool_) {
      CHECK(i64(sv) == std::vector<int64_t>{0, 1, 1, 1, 1, 1, 1, 1});
      CHECK(i64(ai) == std::vector<int64_t>{4, 0, 1, 2, 3, 5, 6, 7});
    } else {
      CHECK(i64(sv) == std::vector<int64_t>{0, 1, 1, 2, 3, 4, 5, 120});
      CHECK(i64(ai) == std::vector<int64_t>{4, 1, 3, 6, 5, 2, 0, 7});
    }
  }
  // negative integers and the extremes of each signed dtype
  auto neg = iarr({-128, 127, -1, 0, 5, -7}).astype(cf::i8);
  CHECK(i64(cf::sort(neg)) == std::vector<int64_t>{-128, -7, -1, 0, 5, 127});
  auto big = cf::from_host(std::vector<uint64_t>{~uint64_t(0), 0, uint64_t(1) << 63, 7});
  CHECK(cf::sort(big).to_host<uint64_t>() == std::vector<uint64_t>{0, 7, uint64_t(1) << 63, ~uint64_t(0)});
  // half types: NaN last, -inf first
  for (cf::DType t : {cf::f16, cf::bf16}) {
    auto h = darr({1.5, kNaN, -2, kInf, -kInf}).astype(t);
    CHECK(same_values(f64(cf::sort(h)), {-kInf, -2, 1.5, kInf, kNaN}));
    CHECK(i64(cf::argsort(h)) == std::vector<int64_t>{4, 2, 0, 3, 1});
  }
}

TEST_CASE("sort along axes: the axis, negative axes, axis None, 0-d and empty arrays") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = iarr({3, 1, 2, 9, 0, 5, 4, 8, 7, 6, 11, 10}, cf::Shape{3, 4});
  CHECK(i64(cf::sort(a)) == std::vector<int64_t>{1, 2, 3, 9, 0, 4, 5, 8, 6, 7, 10, 11});
  CHECK(i64(cf::sort(a, 0)) == std::vector<int64_t>{0, 1, 2, 8, 3, 5, 4, 9, 7, 6, 11, 10});
  CHECK(i64(cf::sort(a, -2)) == i64(cf::sort(a, 0)));
  CHECK(i64(cf::argsort(a, 0)) == std::vector<int64_t>{1, 0, 0, 1, 0, 1, 1, 0, 2, 2, 2, 2});
  CHECK(i64(cf::msort(a)) == i64(cf::sort(a, 0)));
  auto flat = cf::sort(a, std::nullopt);
  CHECK(flat.shape() == cf::Shape{12});
  CHECK(i64(flat) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(i64(cf::argsort(a, std::nullopt))[0] == 4);
  // 3-D, the middle axis
  auto b = cf::arange(24).reshape({2, 3, 4}) * -1;
  auto sb = cf::sort(b, 1);
  CHECK(sb.shape() == cf::Shape{2, 3, 4});
  CHECK(i64(sb.index({0, cf::_, 0})) == std::vector<int64_t>{-8, -4, 0});
  // 0-d: axis -1 is out of bounds (NumPy's AxisError), axis None gives (1,)
  auto z = cf::full({}, 3.0);
  CHECK_THROWS_AS(cf::sort(z), cf::IndexError);
  CHECK(cf::sort(z, std::nullopt).shape() == cf::Shape{1});
  CHECK_THROWS_AS(cf::argsort(a, 2), cf::IndexError);
  CHECK(message_of([&] { cf::sort(a, -3); }).find("axis -3 is out of bounds for array of dimension 2") !=
        std::string::npos);
  // empty
  CHECK(cf::sort(cf::zeros({0}, cf::f32)).shape() == cf::Shape{0});
  CHECK(cf::argsort(cf::zeros({3, 0})).shape() == cf::Shape{3, 0});
  CHECK(cf::sort(cf::zeros({0, 4}), 0).shape() == cf::Shape{0, 4});
}

TEST_CASE("the sort node: one kernel for the node, its producer and consumers fused around it") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(4096).astype(cf::f32).reshape({64, 64});
  x.eval();
  cf::reset_stats();
  cf::Array y = cf::sort(cf::sin(x) * 2, 1) + 1;  // a producer, the node, a consumer
  y.eval();
  // the producer's kernel writes the node's input, the node, one kernel after it
  CHECK(cf::stats().kernels_launched == 3);
  cf::reset_stats();
  cf::Array z = cf::sort(x, 1);  // a contiguous leaf: the node reads it as it is
  z.eval();
  CHECK(cf::stats().kernels_launched == 1);
  cf::reset_stats();
  cf::Array flat = cf::sort(x, std::nullopt);  // 1-D: the node's output is the result, no reshape copy
  flat.eval();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(flat.shape() == cf::Shape{4096});
  cf::reset_stats();
  cf::Array t = cf::sort(x.T(), 1);  // a transposed view: one copy kernel before the node
  t.eval();
  CHECK(cf::stats().kernels_launched == 2);
  CHECK(f64(t.index({0})) == f64(cf::sort(x.index({cf::_, 0}))));
  // a plan dump names the node and its CUB path
  auto ex = plan_of({cf::sort(x, 1)});
  int library = 0;
  for (const auto& g : ex->plan.groups)
    if (g.kind == cf::detail::GroupKind::Library) {
      ++library;
      CHECK(g.call->describe().find("segmented sort") != std::string::npos);
    }
  CHECK(library == 1);
}

TEST_CASE("partition and argpartition: kth in place, NumPy's kth errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = iarr({7, 2, 9, 4, 1, 8});
  auto p = i64(cf::partition(a, 2));
  CHECK(p[2] == 4);
  for (int i = 0; i < 2; ++i) CHECK(p[i] <= 4);
  for (int i = 3; i < 6; ++i) CHECK(p[i] >= 4);
  auto ap = i64(cf::argpartition(a, -1));
  CHECK(ap[5] == 2);
  CHECK(i64(cf::partition(a, std::vector<int64_t>{0, 5}))[0] == 1);
  CHECK(message_of([&] { cf::partition(a, 6); }) == "kth(=6) out of bounds (6)");
  CHECK_THROWS_AS(cf::argpartition(a, -7), cf::ValueError);
  CHECK_THROWS_AS(cf::partition(cf::full({}, 1.0), 0), cf::IndexError);
}

TEST_CASE("lexsort: the last key primary, stable, NumPy's errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  // np.lexsort(([1,5,1,4,3,4,4], [9,4,0,4,0,2,1])) == [2, 4, 6, 5, 3, 1, 0]
  auto surnames = iarr({9, 4, 0, 4, 0, 2, 1});
  auto first = iarr({1, 5, 1, 4, 3, 4, 4});
  CHECK(i64(cf::lexsort(std::vector<cf::Array>{first, surnames})) == std::vector<int64_t>{2, 4, 6, 5, 3, 1, 0});
  CHECK(i64(cf::lexsort(cf::stack({first, surnames}))) == std::vector<int64_t>{2, 4, 6, 5, 3, 1, 0});
  // float keys with NaN
  auto k = darr({kNaN, 1, 1, -1});
  CHECK(i64(cf::lexsort(std::vector<cf::Array>{iarr({3, 2, 1, 0}), k})) == std::vector<int64_t>{3, 2, 1, 0});
  CHECK(message_of([] { cf::lexsort(std::vector<cf::Array>{}); }) == "need sequence of keys with len > 0 in lexsort");
  CHECK(message_of([&] { cf::lexsort(std::vector<cf::Array>{first, iarr({1, 2})}); }) ==
        "all keys need to be the same shape");
}

TEST_CASE("searchsorted and digitize: sides, sorter, NaN, dtypes, errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = darr({1, 2, 2, 3, kNaN});
  auto v = darr({2, 0, 4, kNaN, 3, -0.0}, cf::Shape{2, 3});
  auto l = cf::searchsorted(a, v);
  CHECK(l.shape() == cf::Shape{2, 3});
  CHECK(l.dtype() == cf::i64);
  CHECK(i64(l) == std::vector<int64_t>{1, 0, 4, 4, 3, 0});
  CHECK(i64(cf::searchsorted(a, v, "right")) == std::vector<int64_t>{3, 0, 4, 5, 4, 0});
  // -0.0 == 0.0 when searching
  CHECK(i64(cf::searchsorted(darr({-1, 0.0, 1}), darr({-0.0}), "right")) == std::vector<int64_t>{2});
  // a sorter, mixed dtypes (int a, float v: compared as float64)
  auto u = iarr({30, 10, 20});
  CHECK(i64(cf::searchsorted(u, darr({15, 25.5}), "left", iarr({1, 2, 0}))) == std::vector<int64_t>{1, 2});
  CHECK(message_of([&] { cf::searchsorted(a, v, "middle"); }) == "search side must be 'left' or 'right' (got 'middle')");
  CHECK(message_of([&] { cf::searchsorted(cf::zeros({2, 2}), v); }) == "object too deep for desired array");
  CHECK_THROWS_AS(cf::searchsorted(u, v, "left", iarr({0, 1})), cf::ValueError);
  CHECK(i64(cf::searchsorted(cf::zeros({0}), v)) == std::vector<int64_t>(6, 0));
  // digitize: np.digitize([0.2, 6.4, 3.0, 1.6], [0, 1, 2.5, 4, 10]) == [1, 4, 3, 2]
  auto x = darr({0.2, 6.4, 3.0, 1.6, 4.0});
  CHECK(i64(cf::digitize(x, darr({0, 1, 2.5, 4, 10}))) == std::vector<int64_t>{1, 4, 3, 2, 4});
  CHECK(i64(cf::digitize(x, darr({0, 1, 2.5, 4, 10}), true)) == std::vector<int64_t>{1, 4, 3, 2, 3});
  // decreasing bins: np.digitize(x, [10, 4, 2.5, 1, 0]) == [4, 1, 2, 3, 1]
  CHECK(i64(cf::digitize(x, darr({10, 4, 2.5, 1, 0}))) == std::vector<int64_t>{4, 1, 2, 3, 1});
  CHECK(i64(cf::digitize(x, darr({10, 4, 2.5, 1, 0}), true)) == std::vector<int64_t>{4, 1, 2, 3, 2});
  CHECK(message_of([&] { cf::digitize(x, darr({1, 3, 2})); }) == "bins must be monotonically increasing or decreasing");
  CHECK(i64(cf::digitize(x, darr({2, 2, 2}))) == std::vector<int64_t>{0, 3, 3, 0, 3});
}

TEST_CASE("NVRTC compiles the key, store, widening and search kernels of every dtype") {
  for (cf::DType t : {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u16, cf::u32, cf::u64, cf::f16,
                      cf::bf16, cf::f32, cf::f64}) {
    CAPTURE(cf::name(t));
    for (const auto& k : {cf::detail::sort_load_kernel(t, true), cf::detail::sort_load_kernel(t, false),
                          cf::detail::sort_load_kernel(t, true, 4), cf::detail::sort_load_kernel(t, false, 4),
                          cf::detail::sort_store_kernel(t), cf::detail::search_kernel(t), cf::detail::sort_widen_kernel()}) {
      auto c = cf::detail::compile_kernel(k.source, k.name, 90);
      CHECK(!c->cubin.empty());
    }
  }
}

TEST_CASE("the host keys order like NumPy and map back to the values") {
  using cf::detail::sort_key;
  using cf::detail::sort_key_bits;
  auto kt = cf::detail::sort_key_type(cf::f32);
  auto bits = [](float f) { uint32_t u; std::memcpy(&u, &f, 4); return uint64_t(u); };
  const float vals[] = {-std::numeric_limits<float>::infinity(), -3.5f, -0.0f, 0.0f, 1e-40f, 2.0f,
                        std::numeric_limits<float>::infinity()};
  for (size_t i = 0; i + 1 < std::size(vals); ++i)
    CHECK(sort_key(bits(vals[i]), kt, false) < sort_key(bits(vals[i + 1]), kt, false));
  CHECK(sort_key(bits(-0.0f), kt, true) == sort_key(bits(0.0f), kt, true));
  CHECK(sort_key(bits(-std::nanf("")), kt, false) == sort_key(bits(std::nanf("")), kt, false));
  CHECK(sort_key(bits(std::numeric_limits<float>::infinity()), kt, false) < sort_key(bits(std::nanf("")), kt, false));
  for (float f : vals) CHECK(sort_key_bits(sort_key(bits(f), kt, false), kt) == bits(f));
}

// CUB sorts one row (or a few long rows) by the elements' bits itself (library/cub_sort.cu's
// NumericTraits): its key for each bit pattern must order as the reference's sort_key, and the
// bits it writes back must be the reference's (the default quiet NaN for every NaN; -0.0 kept by
// a sort of values, written as 0.0 by argsort's keys).
TEST_CASE("CUB's own key mapping is the reference's, bit for bit") {
  using cf::detail::CubKeyKind;
  using cf::detail::CubSortArgs;
  using cf::detail::sort_key;
  using cf::detail::sort_key_bits;
  std::mt19937_64 gen(33);
  for (cf::DType t : {cf::i8, cf::i16, cf::i32, cf::i64, cf::f16, cf::bf16, cf::f32, cf::f64}) {
    CAPTURE(cf::name(t));
    const auto kt = cf::detail::sort_key_type(t);
    for (bool pairs : {false, true}) {  // keys alone: a sort of values; with values: argsort (zeros equal)
      CAPTURE(pairs);
      CubSortArgs a;
      a.key_bytes = kt.bytes;
      a.kind = kt.kind == 1 ? CubKeyKind::Signed : CubKeyKind::Float;
      a.bfloat = t == cf::bf16;
      a.vals_in = pairs ? reinterpret_cast<const void*>(uintptr_t(256)) : nullptr;
      const uint64_t sign = kt.sign, ones = kt.ones();
      // every special pattern of the width, then random ones
      std::vector<uint64_t> bits = {0, sign, kt.inf, kt.inf | sign, kt.qnan, kt.qnan | sign, kt.qnan | 1,
                                    kt.qnan | sign | 1, kt.inf + 1, (kt.inf + 1) | sign, ones, ones >> 1, 1, sign | 1,
                                    kt.inf - 1, (kt.inf - 1) | sign};
      for (int i = 0; i < 4000; ++i) bits.push_back(gen() & ones);
      if (kt.bytes == 2)
        for (uint64_t b = 0; b <= ones; ++b) bits.push_back(b);  // every half and bfloat16
      for (uint64_t b : bits) {
        CAPTURE(b);
        const uint64_t k = cf::detail::cub_key_in(a, b & ones);
        REQUIRE(k == sort_key(b & ones, kt, pairs));
        REQUIRE(cf::detail::cub_key_out(a, k) == sort_key_bits(k, kt));
      }
    }
  }
}

// The edges the device's direct CUB sort meets, on the reference: NaNs of both signs and with
// payloads (last, written as the default quiet NaN), -0.0 and 0.0 (sort: -0.0 first, each
// keeping its sign; argsort: equal, in their order), infinities, empty and odd lengths.
TEST_CASE("sort and argsort: NaNs of both signs, signed zeros, infinities, odd and empty lengths") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto bits_of = [](float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; };
  auto from_bits = [](uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; };
  const float inf = std::numeric_limits<float>::infinity();
  const float neg_nan = from_bits(0xffc00001u), pos_nan = from_bits(0x7fc00007u);
  const std::vector<float> x = {0.0f, neg_nan, -0.0f, inf, -1.0f, pos_nan, -inf, 0.0f, -0.0f, 2.5f, neg_nan};
  auto xs = cf::from_host(x);
  auto s = cf::sort(xs).to_host<float>();
  // np.sort's values; its NaNs keep their bits, cufuse writes the default quiet NaN (as CuPy's
  // CUB sort, and as cufuse's own copies of a NaN do not promise payloads)
  const std::vector<uint32_t> want = {bits_of(-inf), bits_of(-1.0f), bits_of(-0.0f), bits_of(-0.0f), bits_of(0.0f),
                                      bits_of(0.0f), bits_of(2.5f), bits_of(inf), 0x7fc00000u, 0x7fc00000u, 0x7fc00000u};
  std::vector<uint32_t> got;
  for (float f : s) got.push_back(bits_of(f));
  CHECK(got == want);
  // np.argsort(x, kind="stable"): -0.0 == 0.0 in their order; NaNs last in theirs
  CHECK(i64(cf::argsort(xs)) == std::vector<int64_t>{6, 4, 0, 2, 7, 8, 9, 3, 1, 5, 10});
  // float64, float16 and bfloat16 alike
  for (cf::DType t : {cf::f64, cf::f16, cf::bf16}) {
    CAPTURE(cf::name(t));
    auto v = xs.astype(t);
    CHECK(same_values(f64(cf::sort(v)), {-kInf, -1, -0.0, -0.0, 0.0, 0.0, 2.5, kInf, kNaN, kNaN, kNaN}));
    auto sv = f64(cf::sort(v));
    CHECK(std::signbit(sv[2]));
    CHECK(std::signbit(sv[3]));
    CHECK(!std::signbit(sv[4]));
    for (int i = 8; i < 11; ++i) CHECK(!std::signbit(sv[static_cast<size_t>(i)]));
    CHECK(i64(cf::argsort(v)) == std::vector<int64_t>{6, 4, 0, 2, 7, 8, 9, 3, 1, 5, 10});
  }
  // odd lengths around a tile, one element, empty
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(3), int64_t(4097), int64_t(12345)}) {
    CAPTURE(n);
    std::vector<float> h(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) h[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 1001) - 500.0f;
    if (n > 2) h[1] = neg_nan;
    auto sorted = cf::sort(cf::from_host(h)).to_host<float>();
    REQUIRE(static_cast<int64_t>(sorted.size()) == n);
    for (int64_t i = 1; i + 1 < n; ++i) CHECK(sorted[static_cast<size_t>(i - 1)] <= sorted[static_cast<size_t>(i)]);
    if (n > 2) CHECK(bits_of(sorted.back()) == 0x7fc00000u);
    CHECK(cf::argsort(cf::from_host(h)).shape() == cf::Shape{n});
  }
}
