// tests/test_core_views.cpp: views, slicing and reshape with NumPy's memory semantics
// (reference backend: host memory, same planner and codegen).
#include "test_core_helpers.hpp"

using cf::_;
using cf::none;
using cf::slice;

TEST_CASE("views share memory with a materialized array") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(12).astype(cf::f32).eval();
  auto b = a.reshape({3, 4});
  CHECK_FALSE(b.is_lazy());
  b[{1, 2}] = 100.0f;
  CHECK(host<float>(a)[6] == 100.0f);
  auto col = b[{_, 1}];
  col += 1;
  auto ah = host<float>(a);
  CHECK(ah[1] == 2.0f);
  CHECK(ah[5] == 6.0f);
  CHECK(ah[9] == 10.0f);
  // a reshape NumPy must copy does not share memory
  auto c = b.T().reshape({12});
  c[{0}] = -5.0f;
  CHECK(host<float>(a)[0] == 0.0f);
  CHECK(host<float>(c)[0] == -5.0f);
  CHECK(host<float>(c)[1] == 4.0f);
}

TEST_CASE("basic indexing: ints, slices with negative steps, newaxis, ellipsis") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto m = cf::arange(24).reshape({2, 3, 4});
  CHECK(m[{1}].shape() == cf::Shape{3, 4});
  CHECK(m[{cf::ellipsis, 0}].shape() == cf::Shape{2, 3});
  CHECK(m[{_, cf::newaxis, 1}].shape() == cf::Shape{2, 1, 4});
  auto r = m[{1, slice(none, none, -1), slice(3, 0, -2)}];
  CHECK(r.shape() == cf::Shape{3, 2});
  // m[1, ::-1, 3:0:-2] = [[23, 21], [19, 17], [15, 13]]
  CHECK(host<int64_t>(r) == std::vector<int64_t>{23, 21, 19, 17, 15, 13});
  CHECK(host<int64_t>(m[{-1, -1, -1}]) == std::vector<int64_t>{23});
  CHECK(m[{slice(5, 10)}].shape() == cf::Shape{0, 3, 4});
  CHECK(host<int64_t>(m[{0, 0, slice(-100, 100, 3)}]) == std::vector<int64_t>{0, 3});
  CHECK(m[{1, 2, 3}].item_scalar().kind() == cf::Scalar::Kind::Int);
  CHECK(m[{1, 2, 3}].item<int>() == 23);
}

TEST_CASE("bad indexing and bad views are errors that say what was wrong") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto m = cf::zeros({2, 3});
  CHECK_THROWS_WITH_AS((m[{0, 0, 0}]), doctest::Contains("too many indices"), cf::IndexError);
  CHECK_THROWS_WITH_AS((m[{2}]), doctest::Contains("index 2 is out of bounds for axis 0 with size 2"), cf::IndexError);
  CHECK_THROWS_AS((m[{slice(0, 2, 0)}]), cf::ValueError);
  CHECK_THROWS_AS((m[{cf::ellipsis, cf::ellipsis}]), cf::IndexError);
  CHECK_THROWS_WITH_AS(m.reshape({4, 2}), doctest::Contains("cannot reshape array of size 6 into shape (4, 2)"),
                       cf::ValueError);
  CHECK_THROWS_AS(m.reshape({-1, -1}), cf::ValueError);
  CHECK_THROWS_WITH_AS(m.transpose({0, 2}), doctest::Contains("out of bounds"), cf::IndexError);
  CHECK_THROWS_AS(m.transpose({0, 0}), cf::ValueError);
  CHECK_THROWS_AS(m.squeeze({0}), cf::ValueError);
  CHECK_THROWS_AS(m.broadcast_to({3, 3}), cf::ValueError);
  CHECK_THROWS_AS(m.expand_dims(4), cf::IndexError);
  CHECK_THROWS_AS(m.item<float>(), cf::ValueError);
  CHECK_THROWS_AS(m.to_host<int32_t>(), cf::TypeError);
  cf::Array empty_handle;
  CHECK_THROWS_AS(empty_handle.shape(), cf::ValueError);
  CHECK_THROWS_AS(cf::zeros({-1}), cf::ValueError);
}

TEST_CASE("reshape, transpose, broadcast, expand_dims, squeeze") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::arange(6).reshape({2, 3});
  CHECK(host<int64_t>(a.T()) == std::vector<int64_t>{0, 3, 1, 4, 2, 5});
  CHECK(host<int64_t>(a.reshape({3, -1})) == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  CHECK(host<int64_t>(a.T().reshape({-1})) == std::vector<int64_t>{0, 3, 1, 4, 2, 5});
  CHECK(host<int64_t>(a[{_, 0}].broadcast_to({2, 2})) == std::vector<int64_t>{0, 3, 0, 3});
  CHECK(a.expand_dims(0).shape() == cf::Shape{1, 2, 3});
  CHECK(a.expand_dims(-1).shape() == cf::Shape{2, 3, 1});
  CHECK(a.expand_dims(1).squeeze().shape() == cf::Shape{2, 3});
  CHECK(a.swapaxes(0, 1).shape() == cf::Shape{3, 2});
  CHECK(cf::zeros({2, 3, 4}).moveaxis(0, -1).shape() == cf::Shape{3, 4, 2});
  auto b = cf::arange(4).astype(cf::f32).eval();
  auto bb = b.broadcast_to({3, 4});
  CHECK(host<float>(bb)[9] == 1.0f);
  CHECK_THROWS_WITH_AS((bb[{0, 0}] = 1.0f), doctest::Contains("read-only"), cf::ValueError);
  CHECK(a.flatten().shape() == cf::Shape{6});
}

TEST_CASE("a view of a lazy array: writes through the view land in the array") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(5).astype(cf::f32);
  auto z = x + 1;  // lazy
  auto v = z[{slice(1, 3)}];
  v += 10;
  CHECK(host<float>(z) == std::vector<float>{1, 12, 13, 4, 5});
  // and a write to the array is seen through a view made while it was lazy
  auto q = cf::zeros({4}, cf::f32);
  auto w = q[{slice(2, 4)}];
  q += 1;
  CHECK(host<float>(w) == std::vector<float>{1, 1});
  // while an expression written before the write keeps the old values
  auto e = cf::zeros({3}, cf::f32);
  auto before = e * 2 + 1;
  e += 5;
  CHECK(host<float>(before) == std::vector<float>{1, 1, 1});
}

TEST_CASE("zero-size arrays") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto z = cf::zeros({0, 5}, cf::f32);
  auto y = cf::exp(z) + 1;
  CHECK(y.shape() == cf::Shape{0, 5});
  CHECK(host<float>(y).empty());
  CHECK(y.reshape({5, 0, 3}).shape() == cf::Shape{5, 0, 3});
  auto e = cf::empty({0}, cf::i32);
  e += 1;
  CHECK(e.size() == 0);
}
