// tests/test_indexing.cpp: issue 30's advanced indexing on the host reference backend:
// take, take_along_axis, x[idx] and x[{idx, _, 0}] (values, shapes, NumPy's placement of the
// indexed dims, negative indices, every integer index dtype, empty arrays, IndexError
// messages), and that gathers fuse (kernel counts; the generated CUDA compiles with NVRTC).
// tests/oracle/gen_indexing.py checks many more cases against NumPy itself.
#include <algorithm>
#include <set>

#include "graph/gather.hpp"
#include "test_core_helpers.hpp"

#include "test_values.hpp"

namespace {
using test_values::f64;
using test_values::i64;
using test_values::iarr;
using test_values::message_of;
}  // namespace

TEST_CASE("take: flattened, along an axis, negative indices, every integer index dtype") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(12).astype(cf::f32).reshape({3, 4});
  auto t = cf::take(a, iarr({0, 5, -1}));
  CHECK(t.dtype() == cf::f32);
  CHECK(t.shape() == cf::Shape{3});
  CHECK(f64(t) == std::vector<double>{0, 5, 11});
  auto r = cf::take(a, iarr({2, 0, 2, 2}, cf::Shape{2, 2}), 0);
  CHECK(r.shape() == cf::Shape{2, 2, 4});
  CHECK(f64(r) == std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11, 8, 9, 10, 11});
  auto c = cf::take(a, iarr({-1, 1}), -1);
  CHECK(c.shape() == cf::Shape{3, 2});
  CHECK(f64(c) == std::vector<double>{3, 1, 7, 5, 11, 9});
  for (cf::DType t : {cf::i8, cf::i16, cf::i32, cf::u8, cf::u16, cf::u32, cf::u64}) {
    CAPTURE(cf::name(t));
    CHECK(f64(cf::take(a, iarr({3, 1}).astype(t), 1)) == std::vector<double>{3, 1, 7, 5, 11, 9});
  }
  // empty indices, empty result
  CHECK(cf::take(a, iarr({}), 1).shape() == cf::Shape{3, 0});
  CHECK(cf::take(cf::zeros({0, 2}), iarr({1}), 1).shape() == cf::Shape{0, 1});
  // a 0-d index drops the axis
  auto s = cf::take(a, cf::full({}, 2, cf::i64), 1);
  CHECK(s.shape() == cf::Shape{3});
  CHECK(f64(s) == std::vector<double>{2, 6, 10});
}

TEST_CASE("take: IndexError names the index and the axis, TypeError-like IndexError for float indices") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(5);
  CHECK(message_of([&] { cf::take(a, iarr({1, 7})).eval(); }) == "index 7 is out of bounds for axis 0 with size 5");
  CHECK(message_of([&] { cf::take(a, iarr({-6})).eval(); }) == "index -6 is out of bounds for axis 0 with size 5");
  auto m = cf::arange(6).reshape({2, 3});
  CHECK(message_of([&] { cf::take(m, iarr({3}), 1).eval(); }) == "index 3 is out of bounds for axis 1 with size 3");
  CHECK_THROWS_AS(cf::take(a, cf::ones({2}, cf::f32)), cf::IndexError);
  CHECK_THROWS_AS(cf::take(a, iarr({0}), 1), cf::IndexError);
  CHECK_THROWS_AS(cf::take(cf::zeros({0}), iarr({0})).eval(), cf::IndexError);
}

TEST_CASE("take with mode clip and wrap: NumPy's values, errors, and still one fused kernel") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(5).astype(cf::f32) * 10;
  CHECK(f64(cf::take(a, iarr({-7, 2, 9}), std::nullopt, "clip")) == std::vector<double>{0, 20, 40});
  CHECK(f64(cf::take(a, iarr({-7, 2, 9}), std::nullopt, "wrap")) == std::vector<double>{30, 20, 40});
  // NumPy takes the indices as intp: uint64's largest is -1, then wrapped or clipped
  CHECK(f64(cf::take(a, iarr({-1}).astype(cf::u64), 0, "wrap")) == std::vector<double>{40});
  CHECK(f64(cf::take(a, iarr({250}).astype(cf::u8), 0, "clip")) == std::vector<double>{40});
  auto m = cf::arange(6).reshape({2, 3});
  auto w = cf::take(m, iarr({-1, 5}, cf::Shape{1, 2}), 1, "wrap");
  CHECK(w.shape() == cf::Shape{2, 1, 2});
  CHECK(i64(w) == std::vector<int64_t>{2, 2, 5, 5});
  CHECK(message_of([&] { cf::take(a, iarr({0}), 0, "bogus"); }) ==
        "clipmode must be one of 'clip', 'raise', or 'wrap' (got 'bogus')");
  CHECK(message_of([&] { cf::take(cf::zeros({0, 3}), iarr({1}), 0, "clip"); }) ==
        "cannot do a non-empty take from an empty axes.");
  CHECK(cf::take(cf::zeros({0, 3}), iarr({}), 0, "wrap").shape() == cf::Shape{0, 3});
  auto x = cf::placeholder(cf::f32, {64}), i = cf::placeholder(cf::i32, {16});
  CHECK(plan_of({cf::take(x * 2, i, 0, "wrap") + 1})->steps.size() == 1);
  CHECK(plan_of({cf::take(x, i + 3, 0, "clip")}, /*compile=*/true)->steps.size() == 1);
}

TEST_CASE("take_along_axis gathers along one axis and broadcasts the others") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::from_host(std::vector<float>{10, 30, 20, 60, 40, 50}, cf::Shape{2, 3});
  auto i = iarr({0, 2, 1, 1, 2, 0}, cf::Shape{2, 3});  // np.argsort(a, 1)
  auto s = cf::take_along_axis(a, i, 1);
  CHECK(f64(s) == std::vector<double>{10, 20, 30, 40, 50, 60});
  auto m = cf::take_along_axis(a, cf::argmax(a, 1, true), 1);
  CHECK(m.shape() == cf::Shape{2, 1});
  CHECK(f64(m) == std::vector<double>{30, 60});
  auto b = cf::take_along_axis(a, iarr({2, 0}, cf::Shape{1, 2}), 1);  // broadcast along axis 0
  CHECK(b.shape() == cf::Shape{2, 2});
  CHECK(f64(b) == std::vector<double>{20, 10, 50, 60});
  auto neg = cf::take_along_axis(a, iarr({-1, -3}, cf::Shape{2, 1}), 1);
  CHECK(f64(neg) == std::vector<double>{20, 60});
  CHECK_THROWS_AS(cf::take_along_axis(a, iarr({0}), 1), cf::ValueError);
  CHECK(message_of([&] { cf::take_along_axis(a, iarr({3, 0}, cf::Shape{2, 1}), 1).eval(); }) ==
        "index 3 is out of bounds for axis 1 with size 3");
}

TEST_CASE("x[idx] and x[{...}] with integer arrays: NumPy's shapes and placement") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(24).reshape({2, 3, 4});
  cf::Array g = x[iarr({1, 0, 1})];
  CHECK(g.shape() == cf::Shape{3, 3, 4});
  CHECK(i64(g)[0] == 12);
  CHECK(i64(g)[12] == 0);
  // an index array on a middle axis: its dims stay there
  auto m = x.index({cf::_, iarr({2, 0}), cf::_});
  CHECK(m.shape() == cf::Shape{2, 2, 4});
  CHECK(i64(m) == std::vector<int64_t>{8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 12, 13, 14, 15});
  // two index arrays broadcast together, adjacent: in place
  auto p = x.index({cf::_, iarr({0, 2}), iarr({1, 3})});
  CHECK(p.shape() == cf::Shape{2, 2});
  CHECK(i64(p) == std::vector<int64_t>{1, 11, 13, 23});
  // separated by a slice: the broadcast dims go first (x[[0, 1], :, [3, 0]] is (2, 3))
  auto q = x.index({iarr({0, 1}), cf::_, iarr({3, 0})});
  CHECK(q.shape() == cf::Shape{2, 3});
  CHECK(i64(q) == std::vector<int64_t>{3, 7, 11, 12, 16, 20});
  // an integer counts as an index array in the placement rule (x[0, :, [1, 2]] is (2, 3))
  auto r = x.index({0, cf::_, iarr({1, 2})});
  CHECK(r.shape() == cf::Shape{2, 3});
  CHECK(i64(r) == std::vector<int64_t>{1, 5, 9, 2, 6, 10});
  // with slices, new axes and an ellipsis
  auto s = x.index({cf::ellipsis, iarr({-1})});
  CHECK(s.shape() == cf::Shape{2, 3, 1});
  CHECK(i64(s) == std::vector<int64_t>{3, 7, 11, 15, 19, 23});
  auto t = x.index({cf::slice(1, 2), cf::newaxis, iarr({1, 1}, cf::Shape{2, 1})});
  CHECK(t.shape() == cf::Shape{1, 1, 2, 1, 4});
  CHECK(i64(t) == std::vector<int64_t>{16, 17, 18, 19, 16, 17, 18, 19});
  // 2-d index arrays
  auto u = x.index({1, iarr({0, 1, 2, 0}, cf::Shape{2, 2}), 3});
  CHECK(u.shape() == cf::Shape{2, 2});
  CHECK(i64(u) == std::vector<int64_t>{15, 19, 23, 15});
  CHECK_THROWS_AS(x.index({iarr({0, 1}), iarr({0, 1, 2})}), cf::IndexError);
  CHECK(message_of([&] { x.index({cf::_, iarr({3})}).eval(); }) == "index 3 is out of bounds for axis 1 with size 3");
  CHECK_THROWS_AS(x.index({0, 0, 0, iarr({0})}), cf::IndexError);
}

TEST_CASE("gathers fuse with producers and consumers (one kernel; CUDA compiles)") {
  auto x = cf::placeholder(cf::f32, {1 << 10});
  auto idx = cf::placeholder(cf::i64, {256});
  CHECK(plan_of({cf::take(cf::exp(x), idx) * 2}, true)->steps.size() == 1);
  CHECK(plan_of({cf::take(x, idx + 1) * cf::take(x, idx)}, true)->steps.size() == 1);
  auto m = cf::placeholder(cf::f64, {64, 32});
  auto i32 = cf::placeholder(cf::i32, {5, 3});
  CHECK(plan_of({m.index({i32, cf::slice(0, 16)}) + 1}, true)->steps.size() == 1);
  CHECK(plan_of({cf::take(m * 2, i32, 1).T()}, true)->steps.size() == 1);
  CHECK(plan_of({cf::take(cf::take(m, i32, 0), idx, -1)}, true)->steps.size() == 1);  // a gather of a gather
  CHECK(plan_of({cf::take(cf::arange(100).astype(cf::f32), idx)}, true)->steps.size() == 1);
  // a reduction reads a gather from memory: one kernel for the gather, one for the sum
  CHECK(plan_of({cf::sum(cf::take(x, idx) * 2)}, true)->steps.size() == 2);
  // a gather at an index a reduction computes: the reduction, then the gather
  CHECK(plan_of({cf::take_along_axis(m, cf::argmax(m, 1, true), 1)}, true)->steps.size() == 2);
}

TEST_CASE("gathers run the kernels they plan (reference backend)") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(100).astype(cf::f32);
  auto i = iarr({3, 99, -2});
  x.eval();
  i.eval();
  cf::reset_stats();
  auto y = cf::take(cf::exp(x * 0.01f), i) * 2;
  y.eval();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(f64(y)[0] == doctest::Approx(2 * std::exp(0.03f)));
}

TEST_CASE("gather nodes: views and further gathers move their indices") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(20).reshape({4, 5});
  auto g = cf::take(a, iarr({3, 1, 0}), 0);  // (3, 5)
  CHECK(cf::detail::is_gather(*g.node()));
  CHECK(i64(g.T().index({cf::slice(1, 3)})) == std::vector<int64_t>{16, 6, 1, 17, 7, 2});
  CHECK(i64(g.reshape({15}).index({cf::slice(4, 7)})) == std::vector<int64_t>{19, 5, 6});
  CHECK(i64(cf::take(g, iarr({2, 0}), 0)) == std::vector<int64_t>{0, 1, 2, 3, 4, 15, 16, 17, 18, 19});
  CHECK(i64(cf::diagonal(g)) == std::vector<int64_t>{15, 6, 2});
}

namespace {
// Whether any View under n reads an unmaterialized gather (its index nodes would be skipped).
bool view_over_gather(const cf::detail::Node* root) {
  std::vector<const cf::detail::Node*> stack{root};
  std::set<const cf::detail::Node*> seen;
  while (!stack.empty()) {
    const auto* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->k() == cf::detail::NodeKind::View && !cf::detail::is_gather(*n) && !n->inputs.empty() &&
        cf::detail::is_gather(*n->inputs[0]))
      return true;
    for (const auto& in : n->inputs) stack.push_back(in.get());
  }
  return false;
}
}  // namespace

// Issue 33's unique on the device: a concatenation part (an index map) over a gather read the
// gather's source at the mapped positions, never its indices. Index maps now move the indices.
TEST_CASE("gather nodes: index maps (concatenation, flip, roll, pad, tile) move their indices") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<int8_t> x(40);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 37) % 11);
  const cf::Array xs = cf::from_host(x);
  const cf::Array sv = cf::take(xs, cf::argsort(xs));
  const cf::Array hi = sv.index({cf::slice(1, 40)}), lo = sv.index({cf::slice(0, 39)});
  const cf::Array starts = cf::concatenate({cf::ones(cf::Shape{1}, cf::DType::Bool), cf::not_equal(hi, lo)});
  CHECK_FALSE(view_over_gather(starts.node().get()));
  // where each new value of the sorted values starts, from the host
  std::vector<int64_t> want(40, 0);
  std::vector<int8_t> s = x;
  std::sort(s.begin(), s.end());
  for (size_t i = 0; i < s.size(); ++i) want[i] = i == 0 || s[i] != s[i - 1];
  CHECK(i64(starts.astype(cf::i64)) == want);
  auto a = cf::arange(20).reshape({4, 5});
  auto g = cf::take(a, iarr({3, 1, 0}), 0);  // rows 15.., 5.., 0..
  for (const cf::Array& m : {cf::flip(g, 0), cf::roll(g, 1, 1), cf::pad(g, 1), cf::tile(g, {2, 1})})
    CHECK_FALSE(view_over_gather(m.node().get()));
  CHECK(i64(cf::flip(g, 0)).front() == 0);
  CHECK(i64(cf::roll(g, 1, 1)).front() == 19);
  CHECK(i64(cf::pad(g, 1)).at(8) == 15);
  CHECK(i64(cf::tile(g, {2, 1})).at(15) == 15);
  // the generated CUDA of each form compiles (a gather inside a view chain is an InternalError there)
  auto p = cf::placeholder(cf::i8, {64});
  auto ps = cf::take(p, cf::argsort(p));
  CHECK(plan_of({cf::concatenate({cf::ones(cf::Shape{1}, cf::DType::Bool),
                                  cf::not_equal(ps.index({cf::slice(1, 64)}), ps.index({cf::slice(0, 63)}))})},
                true)
            ->steps.size() >= 1);
}
