// tests/test_manipulation.cpp: joining, splitting and rearranging (cufuse/manipulation.hpp)
// on the host reference backend: values against hand-computed NumPy results, dtypes, errors
// with NumPy's types and messages, and the kernel counts that show they fuse (a
// concatenation of two expressions, then * 3, is one kernel). tests/oracle/gen_surface.py
// checks many more cases against NumPy itself.
#include <numeric>

#include "test_core_helpers.hpp"
#include "test_sandbox.hpp"

#include "test_values.hpp"

namespace {
using test_values::f64;
std::vector<double> iota(int n, double from = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}
}  // namespace

TEST_CASE("concatenate: values, promotion, negative axes, flattening, empty parts") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(6).reshape({2, 3});
  auto b = cf::arange(6, 12).reshape({2, 3}).astype(cf::f32);
  auto c0 = cf::concatenate({a, b});
  CHECK(c0.shape() == cf::Shape{4, 3});
  CHECK(c0.dtype() == cf::f64);  // int64 with float32 -> float64
  CHECK(f64(c0) == iota(12));
  auto c1 = cf::concatenate({a, b, a}, -1);
  CHECK(c1.shape() == cf::Shape{2, 9});
  CHECK(f64(c1) == std::vector<double>{0, 1, 2, 6, 7, 8, 0, 1, 2, 3, 4, 5, 9, 10, 11, 3, 4, 5});
  auto flat = cf::concatenate({a, cf::arange(2)}, std::nullopt);
  CHECK(flat.shape() == cf::Shape{8});
  CHECK(f64(flat) == std::vector<double>{0, 1, 2, 3, 4, 5, 0, 1});
  auto e = cf::concatenate({cf::zeros({0, 3}, cf::i8), a.astype(cf::i8), cf::zeros({0, 3}, cf::u8)});
  CHECK(e.dtype() == cf::i16);
  CHECK(f64(e) == iota(6));
  CHECK(cf::concatenate({cf::zeros({0, 3}), cf::zeros({0, 3})}).shape() == cf::Shape{0, 3});
  CHECK(cf::concatenate({a, b}, 0, cf::f32).dtype() == cf::f32);
  CHECK_THROWS_AS(cf::concatenate({a, b}, 0, cf::i32), cf::TypeError);  // float32 -> int32 is not same_kind
  auto bools = cf::concatenate({cf::array({true}), cf::array({false, true})});
  CHECK(bools.dtype() == cf::bool_);
  CHECK(bools.to_host<bool>() == std::vector<bool>{true, false, true});
  // many parts: written part by part (a kernel each)
  std::vector<cf::Array> many;
  for (int i = 0; i < 40; ++i) many.push_back(cf::full({1, 2}, i));
  cf::reset_stats();
  auto joined = cf::concatenate(many);
  joined.eval();
  CHECK(cf::stats().kernels_launched == 40);
  CHECK(f64(joined) == [] {
    std::vector<double> v;
    for (int i = 0; i < 40; ++i) v.insert(v.end(), {double(i), double(i)});
    return v;
  }());
}

TEST_CASE("concatenate's errors are NumPy's") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::zeros({2, 3}), b = cf::zeros({2, 4});
  CHECK_THROWS_WITH_AS(cf::concatenate({a, b}),
                       "all the input array dimensions except for the concatenation axis must match exactly, but "
                       "along dimension 1, the array at index 0 has size 3 and the array at index 1 has size 4",
                       cf::ValueError);
  CHECK_NOTHROW(cf::concatenate({a, b}, 1));
  CHECK_THROWS_AS(cf::concatenate({a, cf::zeros({3})}), cf::ValueError);
  CHECK_THROWS_AS(cf::concatenate({}), cf::ValueError);
  CHECK_THROWS_AS(cf::concatenate({cf::full({}, 1), cf::full({}, 2)}), cf::ValueError);
  CHECK_THROWS_AS(cf::concatenate({a, a}, 2), cf::IndexError);
  CHECK_THROWS_AS(cf::concatenate({a, a}, -3), cf::IndexError);
  CHECK_THROWS_AS(cf::stack({a, b}), cf::ValueError);
  CHECK_THROWS_AS(cf::stack({a, a}, 3), cf::IndexError);
  CHECK_THROWS_AS(cf::stack({}), cf::ValueError);
}

TEST_CASE("stack, vstack, hstack, dstack, column_stack") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(3), y = cf::arange(3, 6);
  auto s0 = cf::stack({x, y});
  CHECK(s0.shape() == cf::Shape{2, 3});
  CHECK(f64(s0) == iota(6));
  auto s1 = cf::stack({x, y}, -1);
  CHECK(s1.shape() == cf::Shape{3, 2});
  CHECK(f64(s1) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(cf::vstack({x, y}).shape() == cf::Shape{2, 3});
  CHECK(f64(cf::hstack({x, y})) == iota(6));
  auto m = cf::arange(4).reshape({2, 2});
  CHECK(f64(cf::hstack({m, m})) == std::vector<double>{0, 1, 0, 1, 2, 3, 2, 3});
  auto d = cf::dstack({x, y});
  CHECK(d.shape() == cf::Shape{1, 3, 2});
  CHECK(f64(d) == std::vector<double>{0, 3, 1, 4, 2, 5});
  auto cs = cf::column_stack({x, y});
  CHECK(cs.shape() == cf::Shape{3, 2});
  CHECK(f64(cs) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(cf::vstack({cf::full({}, 1), cf::full({}, 2)}).shape() == cf::Shape{2, 1});
}

TEST_CASE("split and array_split are views with NumPy's division rules") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(10);
  a.eval();
  auto p = cf::array_split(a, 3);
  REQUIRE(p.size() == 3);
  CHECK(f64(p[0]) == std::vector<double>{0, 1, 2, 3});
  CHECK(f64(p[1]) == std::vector<double>{4, 5, 6});
  CHECK(f64(p[2]) == std::vector<double>{7, 8, 9});
  CHECK_THROWS_WITH_AS(cf::split(a, 3), doctest::Contains("array split does not result in an equal division"),
                       cf::ValueError);
  auto q = cf::split(a, std::vector<int64_t>{2, 5, 20});
  REQUIRE(q.size() == 4);
  CHECK(f64(q[1]) == std::vector<double>{2, 3, 4});
  CHECK(q[3].shape() == cf::Shape{0});
  auto r = cf::split(a, std::vector<int64_t>{-3});
  CHECK(f64(r[1]) == std::vector<double>{7, 8, 9});
  // views: a split is no copy and no kernel
  cf::reset_stats();
  auto v = cf::split(a, 5);
  CHECK_FALSE(v[2].is_lazy());
  CHECK(cf::stats().kernels_launched == 0);
  auto m = cf::arange(24).reshape({2, 3, 4});
  auto h = cf::hsplit(m, 3);
  CHECK(h[1].shape() == cf::Shape{2, 1, 4});
  CHECK(cf::vsplit(m, 2)[1].shape() == cf::Shape{1, 3, 4});
  auto ds = cf::dsplit(m, std::vector<int64_t>{1});
  CHECK(ds[1].shape() == cf::Shape{2, 3, 3});
  CHECK(cf::hsplit(cf::arange(4), 2)[1].shape() == cf::Shape{2});
  CHECK_THROWS_AS(cf::vsplit(cf::arange(4), 2), cf::ValueError);
  CHECK_THROWS_AS(cf::dsplit(m.index({0}), 2), cf::ValueError);
  CHECK_THROWS_AS(cf::array_split(a, 0), cf::ValueError);
  CHECK_THROWS_AS(cf::split(a, 2, 1), cf::IndexError);
  CHECK(cf::array_split(a, 12).size() == 12);
  CHECK(cf::array_split(a, 12)[11].shape() == cf::Shape{0});
}

TEST_CASE("tile and repeat") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::array({1, 2, 3});
  CHECK(f64(cf::tile(a, {2})) == std::vector<double>{1, 2, 3, 1, 2, 3});
  auto t = cf::tile(a, {2, 2});
  CHECK(t.shape() == cf::Shape{2, 6});
  CHECK(t.dtype() == cf::i32);
  CHECK(f64(t) == std::vector<double>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3});
  auto m = cf::array({{1, 2}, {3, 4}});
  CHECK(f64(cf::tile(m, {2})) == std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4});
  auto t3 = cf::tile(m, {2, 1, 1});
  CHECK(t3.shape() == cf::Shape{2, 2, 2});
  CHECK(f64(t3) == std::vector<double>{1, 2, 3, 4, 1, 2, 3, 4});
  CHECK(cf::tile(m, {0, 2}).shape() == cf::Shape{0, 4});
  CHECK_THROWS_AS(cf::tile(m, {-1}), cf::ValueError);
  CHECK(f64(cf::repeat(m, 2)) == std::vector<double>{1, 1, 2, 2, 3, 3, 4, 4});
  auto r1 = cf::repeat(m, 3, 1);
  CHECK(r1.shape() == cf::Shape{2, 6});
  CHECK(f64(r1) == std::vector<double>{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4});
  CHECK(f64(cf::repeat(m, 2, -2)) == std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4});
  CHECK(cf::repeat(m, 0, 0).shape() == cf::Shape{0, 2});
  auto rv = cf::repeat(m, std::vector<int64_t>{1, 2}, 0);
  CHECK(f64(rv) == std::vector<double>{1, 2, 3, 4, 3, 4});
  CHECK(f64(cf::repeat(cf::arange(4), std::vector<int64_t>{0, 2, 2, 1})) == std::vector<double>{1, 1, 2, 2, 3});
  CHECK_THROWS_AS(cf::repeat(m, -1), cf::ValueError);
  CHECK_THROWS_AS(cf::repeat(m, std::vector<int64_t>{1, 2, 3}, 0), cf::ValueError);
  CHECK_THROWS_AS(cf::repeat(m, 2, 2), cf::IndexError);
}

TEST_CASE("flip, fliplr, flipud and rot90 are views with negative strides") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto m = cf::arange(6).reshape({2, 3});
  m.eval();
  CHECK(f64(cf::flip(m)) == std::vector<double>{5, 4, 3, 2, 1, 0});
  CHECK(f64(cf::flip(m, 1)) == std::vector<double>{2, 1, 0, 5, 4, 3});
  CHECK(f64(cf::flip(m, {0, -1})) == std::vector<double>{5, 4, 3, 2, 1, 0});
  CHECK(f64(cf::fliplr(m)) == std::vector<double>{2, 1, 0, 5, 4, 3});
  CHECK(f64(cf::flipud(m)) == std::vector<double>{3, 4, 5, 0, 1, 2});
  CHECK_FALSE(cf::flip(m).is_lazy());  // a view of memory
  CHECK_THROWS_AS(cf::flip(m, 2), cf::IndexError);
  CHECK_THROWS_AS(cf::fliplr(cf::arange(3)), cf::ValueError);
  auto r = cf::rot90(m);
  CHECK(r.shape() == cf::Shape{3, 2});
  CHECK(f64(r) == std::vector<double>{2, 5, 1, 4, 0, 3});
  CHECK(f64(cf::rot90(m, 2)) == std::vector<double>{5, 4, 3, 2, 1, 0});
  CHECK(f64(cf::rot90(m, 3)) == std::vector<double>{3, 0, 4, 1, 5, 2});
  CHECK(f64(cf::rot90(m, -1)) == f64(cf::rot90(m, 3)));
  CHECK(f64(cf::rot90(m, 1, {1, 0})) == f64(cf::rot90(m, 3)));
  CHECK_THROWS_AS(cf::rot90(m, 1, {0, 0}), cf::ValueError);
  CHECK_THROWS_AS(cf::rot90(m, 1, {0, 2}), cf::ValueError);
}

TEST_CASE("roll on one axis, on the flattened array, and on several axes") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(10);
  CHECK(f64(cf::roll(x, 2)) == std::vector<double>{8, 9, 0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(f64(cf::roll(x, -12)) == std::vector<double>{2, 3, 4, 5, 6, 7, 8, 9, 0, 1});
  auto m = x.reshape({2, 5});
  CHECK(f64(cf::roll(m, 1)) == std::vector<double>{9, 0, 1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(f64(cf::roll(m, 1, 0)) == std::vector<double>{5, 6, 7, 8, 9, 0, 1, 2, 3, 4});
  CHECK(f64(cf::roll(m, -1, 1)) == std::vector<double>{1, 2, 3, 4, 0, 6, 7, 8, 9, 5});
  CHECK(f64(cf::roll(m, {1, 1}, {1, 0})) == std::vector<double>{9, 5, 6, 7, 8, 4, 0, 1, 2, 3});
  CHECK(f64(cf::roll(m, {2}, {1, 1})) == f64(cf::roll(m, 4, 1)));
  CHECK(cf::roll(cf::zeros({0, 3}), 1, 0).shape() == cf::Shape{0, 3});
  CHECK_THROWS_AS(cf::roll(m, 1, 2), cf::IndexError);
  CHECK_THROWS_AS(cf::roll(m, {1, 2, 3}, {0, 1}), cf::ValueError);
}

TEST_CASE("pad in every mode") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::array({1, 2, 3});
  CHECK(f64(cf::pad(a, 2)) == std::vector<double>{0, 0, 1, 2, 3, 0, 0});
  CHECK(f64(cf::pad(a, {1, 2}, "constant", 9)) == std::vector<double>{9, 1, 2, 3, 9, 9});
  CHECK(f64(cf::pad(a, 2, "edge")) == std::vector<double>{1, 1, 1, 2, 3, 3, 3});
  CHECK(f64(cf::pad(a, 2, "reflect")) == std::vector<double>{3, 2, 1, 2, 3, 2, 1});
  CHECK(f64(cf::pad(a, 2, "symmetric")) == std::vector<double>{2, 1, 1, 2, 3, 3, 2});
  CHECK(f64(cf::pad(a, 2, "wrap")) == std::vector<double>{2, 3, 1, 2, 3, 1, 2});
  CHECK(f64(cf::pad(a, 5, "reflect")) == std::vector<double>{2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2});
  auto m = cf::array({{1.f, 2.f}, {3.f, 4.f}});
  auto pm = cf::pad(m, {{1, 0}, {0, 1}}, "constant", 7.5);
  CHECK(pm.dtype() == cf::f32);
  CHECK(f64(pm) == std::vector<double>{7.5, 7.5, 7.5, 1, 2, 7.5, 3, 4, 7.5});
  auto pr = cf::pad(m, 1, "reflect");
  CHECK(f64(pr) == std::vector<double>{4, 3, 4, 3, 2, 1, 2, 1, 4, 3, 4, 3, 2, 1, 2, 1});
  CHECK(f64(cf::pad(a, 1, "constant", 2.7)) == std::vector<double>{2, 1, 2, 3, 2});  // cast to int32
  CHECK(f64(cf::pad(cf::zeros({0}), 2)) == std::vector<double>{0, 0, 0, 0});
  CHECK_THROWS_AS(cf::pad(cf::zeros({0}), 2, "edge"), cf::ValueError);
  CHECK_THROWS_AS(cf::pad(a, 1, "median"), cf::ValueError);
  CHECK_THROWS_AS(cf::pad(a, -1), cf::ValueError);
  CHECK_THROWS_AS(cf::pad(m, {{1, 1}, {1, 1}, {1, 1}}), cf::ValueError);
  CHECK_THROWS_AS(cf::pad(a.astype(cf::i8), 1, "constant", 300), cf::OverflowError);
}

TEST_CASE("broadcast_arrays and atleast_nd") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto b = cf::broadcast_arrays({cf::arange(3), cf::arange(2).reshape({2, 1})});
  CHECK(b[0].shape() == cf::Shape{2, 3});
  CHECK(f64(b[1]) == std::vector<double>{0, 0, 0, 1, 1, 1});
  CHECK_THROWS_AS(cf::broadcast_arrays({cf::arange(3), cf::arange(2)}), cf::ValueError);
  auto s = cf::full({}, 4.0);
  CHECK(cf::atleast_1d(s).shape() == cf::Shape{1});
  CHECK(cf::atleast_2d(cf::arange(3)).shape() == cf::Shape{1, 3});
  CHECK(cf::atleast_3d(cf::arange(3)).shape() == cf::Shape{1, 3, 1});
  CHECK(cf::atleast_3d(cf::zeros({2, 3})).shape() == cf::Shape{2, 3, 1});
  CHECK(cf::moveaxis(cf::zeros({2, 3, 4}), 0, -1).shape() == cf::Shape{3, 4, 2});
  CHECK(cf::swapaxes(cf::zeros({2, 3}), 0, 1).shape() == cf::Shape{3, 2});
  CHECK(cf::expand_dims(cf::zeros({2}), 0).shape() == cf::Shape{1, 2});
  CHECK(cf::squeeze(cf::zeros({1, 2, 1})).shape() == cf::Shape{2});
}

TEST_CASE("joining and index maps fuse with producers and consumers (kernel counts)") {
  auto x = cf::placeholder(cf::f32, {64, 48}), y = cf::placeholder(cf::f32, {64, 48});
  CHECK(plan_of({cf::concatenate({x * 2, cf::exp(y)}) * 3})->steps.size() == 1);
  CHECK(plan_of({cf::concatenate({x * 2, cf::exp(y)}, 1) * 3})->steps.size() == 1);
  CHECK(plan_of({cf::stack({x * 2, cf::exp(y)}, 1) + 1})->steps.size() == 1);
  CHECK(plan_of({cf::sum(cf::concatenate({x, y}), 0)})->steps.size() == 1);
  CHECK(plan_of({cf::tile(x + y, {2, 3}) - 1})->steps.size() == 1);
  CHECK(plan_of({cf::repeat(cf::sin(x), 2, 1) * y.index({cf::_, cf::slice(0, 1)})})->steps.size() == 1);
  CHECK(plan_of({cf::roll(x * y, 5, 1) + x})->steps.size() == 1);
  CHECK(plan_of({cf::pad(x * 2, 1, "reflect") + 1})->steps.size() == 1);
  CHECK(plan_of({cf::pad(x * 2, 1) + 1})->steps.size() == 1);
  CHECK(plan_of({cf::pad(cf::pad(x, 1, "wrap"), 2, "edge") * 2})->steps.size() == 1);
  CHECK(plan_of({cf::flip(x * 2) + cf::rot90(y, 2)})->steps.size() == 1);
  CHECK(plan_of({cf::sum(cf::pad(x, 1, "symmetric"))})->steps.size() == 1);
  // a reduction's result seen through a map: the reduction, then the kernel that reads it
  CHECK(plan_of({cf::tile(cf::sum(x, 1, true), {1, 4}) + 1})->steps.size() == 2);
}

TEST_CASE("the fused kernels compile (NVRTC) and the reference runs them: one kernel each") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(12).astype(cf::f32).reshape({3, 4}), y = cf::arange(12, 24).astype(cf::f32).reshape({3, 4});
  cf::eval(x, y);
  cf::reset_stats();
  auto c = cf::concatenate({x * 2, y + 1}) * 3;
  c.eval();
  CHECK(cf::stats().kernels_launched == 1);
  std::vector<double> want;
  for (int i = 0; i < 12; ++i) want.push_back(i * 2 * 3);
  for (int i = 12; i < 24; ++i) want.push_back((i + 1) * 3);
  CHECK(f64(c) == want);
  cf::reset_stats();
  auto p = cf::pad(x * 2, 1, "reflect") + cf::pad(y, 1, "constant", -1);
  p.eval();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(p.shape() == cf::Shape{5, 6});
  CHECK(f64(p)[0] == 10 * 1 + -1);  // x[1, 1] * 2 (reflected corner) + the constant
  auto xp = cf::placeholder(cf::f32, {64, 48}), yp = cf::placeholder(cf::f32, {64, 48});
  for (const auto& e : {cf::concatenate({xp * 2, cf::exp(yp)}) * 3, cf::stack({xp, yp}, 2),
                        cf::tile(xp, {3, 1}), cf::repeat(xp, 3, 0), cf::roll(xp, {3, -2}, {0, 1}),
                        cf::pad(xp, {{1, 2}, {3, 4}}, "symmetric"), cf::pad(xp, 2, "wrap") * cf::pad(yp, 2, "edge"),
                        cf::sum(cf::concatenate({xp, yp}, 1), 1), cf::random::permutation(xp, 7)}) {
    auto ex = plan_of({e}, /*compile=*/true);
    CHECK(ex->steps.size() == 1);
  }
}

TEST_CASE("joins and pads compile to kernels without per-element unravelling (issue 30's M1-M3)") {
  // the joins' per-element form (rule block-partitioned-parts off: tests/test_manipulation_parts.cpp has it on)
  cufuse_test::ScopedEnv parts("CUFUSE_EW_PARTS", "0");
  auto x = cf::placeholder(cf::f32, {64, 48}), y = cf::placeholder(cf::f32, {64, 48});
  auto source = [](const cf::Array& e) {
    auto ex = plan_of({e}, /*compile=*/true);
    REQUIRE(ex->steps.size() == 1);
    auto spec = ex->steps[0].spec;
    spec.source = spec.source.substr(spec.source.find("extern \"C\""));  // the kernel, not the preamble
    return spec;
  };
  // pad: rows mode over (66, 52), the row reflected once per row, the column by a compare
  const auto pad = source(cf::pad(x, {{1, 1}, {2, 2}}, "reflect"));
  CHECK(pad.summary.find("rows rank 2") != std::string::npos);
  CHECK(pad.summary.find("16-byte vectors") != std::string::npos);
  CHECK(count_of(pad.source, "_sh[") == 0);
  CHECK(count_of(pad.source, "cf_imap_reflect<int>") == 2);
  // rows of 66 take no 16-byte vectors: flat mode, the coordinates from each vector's flat
  // index (one division), the lanes' by a carry (and once more in the tail's element code)
  const auto flat = source(cf::pad(x, 1, "reflect"));
  CHECK(flat.summary.find("flat rank 2: 2 x 4 elements per thread (16-byte vectors)") != std::string::npos);
  CHECK(count_of(flat.source, "_sh[") == 0);
  CHECK(count_of(flat.source, "cf_imap_reflect<int>") == 4);
  CHECK(count_of(flat.source, "q_ % (I)p.shape[1]") == 2);
  // stack along axis 0: (2, 64*48) in rows mode, each part read at (c0, c1), one part per element
  const auto st = source(cf::stack({x, y}));
  CHECK(st.summary.find("rows rank 2") != std::string::npos);
  CHECK(count_of(st.source, "_sh[") == 0);
  CHECK(count_of(st.source, "} else {") == 1);
  // concatenate along either axis: an if/else per part boundary, no unravel
  const auto c0 = source(cf::concatenate({x * 2, cf::exp(y), y}) * 3);
  CHECK(count_of(c0.source, "} else {") == 2);
  CHECK(count_of(c0.source, "_sh[") == 0);
  const auto c1 = source(cf::concatenate({x * 2, cf::exp(y)}, 1));
  CHECK(count_of(c1.source, "} else {") == 1);
  // a 3-D stack in the middle: dims (1, 2) merge for the parts, axis 1 stays apart
  auto a3 = cf::placeholder(cf::f32, {4, 8, 16}), b3 = cf::placeholder(cf::f32, {4, 8, 16});
  const auto s3 = source(cf::stack({a3, b3}, 1) + 1);
  CHECK(count_of(s3.source, "_sh[") == 0);
  // a part that is a transposed view cannot take merged coordinates: it unravels, still one kernel
  const auto tr = source(cf::stack({a3, b3.transpose({0, 2, 1}).reshape({4, 8, 16})}, 1));
  CHECK(!tr.source.empty());
  // tile's wrap takes the 32-bit remainder
  CHECK(count_of(source(cf::tile(x, {2, 3})).source, "cf_imap_wrap<int>") == 2);
}

TEST_CASE("the join and pad kernels' values on the reference backend, on shapes that merge dims") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(2 * 3 * 4).astype(cf::f32).reshape({2, 3, 4}), b = cf::arange(100, 124).astype(cf::f32).reshape({2, 3, 4});
  auto s = cf::stack({a, b * 2}, 1);
  CHECK(s.shape() == cf::Shape{2, 2, 3, 4});
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int part = 0; part < 2; ++part)
      for (int k = 0; k < 12; ++k) want.push_back(part == 0 ? i * 12 + k : (100 + i * 12 + k) * 2);
  CHECK(f64(s) == want);
}

TEST_CASE("a kernel reading through index maps a vector at a time asks for 6 blocks an SM; one that defers its stores does not") {
  // (codegen/elementwise_kernel.cpp: its bytes in flight are its threads'; CUFUSE_EW_VIEW_BLOCKS)
  cufuse_test::ScopedEnv parts("CUFUSE_EW_PARTS", "0");  // the join's per-element form
  const auto x = cf::placeholder(cf::f32, {64, 4096}), y = cf::placeholder(cf::f32, {64, 4096});
  const std::string cat = cf::plan_dump({cf::concatenate({x * 2, cf::exp(y)})}, true);
  CHECK(cat.find("4 x 4 elements per thread") != std::string::npos);
  CHECK(cat.find("__launch_bounds__(256, 6)") != std::string::npos);
  // a pad's 8 elements a thread are all computed before their stores: the compiler's choice
  const std::string pad = cf::plan_dump({cf::pad(x, 1, "reflect")}, true);
  CHECK(pad.find("__launch_bounds__(256)") != std::string::npos);
  CHECK(pad.find("__launch_bounds__(256, ") == std::string::npos);
  // a plain elementwise kernel keeps the compiler's choice
  const std::string plain = cf::plan_dump({x * 2 + y}, true);
  CHECK(plain.find("__launch_bounds__(256, ") == std::string::npos);
}
