// tests/test_indexing_writes.cpp: issue 30's writes through indices on the host reference
// backend: x[idx] = v, x[idx] += v, x[{idx, ...}] = v, x[mask] = v, x[mask] += v, put,
// add_at / maximum_at / minimum_at (duplicates accumulate), their casts and errors, and their
// kernel counts (a scatter is one kernel with the values' producers fused; x[mask] = v is one
// fused where, no count).
#include "graph/gather.hpp"
#include "graph/indexing.hpp"
#include "test_core_helpers.hpp"

#include "test_values.hpp"

namespace {
using test_values::f64;
using test_values::i64;
using test_values::iarr;
using test_values::message_of;
}  // namespace

TEST_CASE("x[idx] = v and x[idx] op= v scatter through the index") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::zeros({5}, cf::f32);
  x[iarr({1, -1})] = 7;
  CHECK(f64(x) == std::vector<double>{0, 7, 0, 0, 7});
  x[iarr({0, 2})] = cf::from_host(std::vector<float>{1.5f, 2.5f});
  CHECK(f64(x) == std::vector<double>{1.5, 7, 2.5, 0, 7});
  x[iarr({1, 1, 3})] += 1;  // NumPy: x[i] = x[i] + 1, duplicates not accumulated
  CHECK(f64(x) == std::vector<double>{1.5, 8, 2.5, 1, 7});
  // duplicates in an assignment: one of the values (the last, on the host)
  x[iarr({4, 4})] = cf::from_host(std::vector<float>{-1, -2});
  CHECK(f64(x)[4] == -2);
  // rows of a matrix, and a value broadcast over them
  auto m = cf::zeros({3, 2}, cf::i32);
  m[iarr({2, 0})] = cf::from_host(std::vector<int32_t>{5, 6});
  CHECK(i64(m) == std::vector<int64_t>{5, 6, 0, 0, 5, 6});
  m.index({cf::_, iarr({1})}) = 9;  // x[{...}] on a temporary writes through it too
  CHECK(i64(m) == std::vector<int64_t>{5, 9, 0, 9, 5, 9});
  m.index({iarr({0, 1}), iarr({0, 0})}) += 10;
  CHECK(i64(m) == std::vector<int64_t>{15, 9, 10, 9, 5, 9});
  // a named result is a copy (NumPy): writing it leaves m alone
  cf::Array g = m[iarr({0})];
  g += 100;
  CHECK(i64(m)[0] == 15);
  CHECK(i64(g)[0] == 115);
  // casts: unsafe for =, same_kind for op=
  m[iarr({1})] = 2.75;
  CHECK(i64(m)[2] == 2);
  CHECK_THROWS_AS(m[iarr({1})] += 0.5, cf::TypeError);
  // a lazy array is written too
  auto l = cf::arange(4) * 10;
  l[iarr({3})] = -1;
  CHECK(i64(l) == std::vector<int64_t>{0, 10, 20, -1});
  // errors
  CHECK(message_of([&] { x[iarr({5})] = 1; }) == "index 5 is out of bounds for axis 0 with size 5");
  CHECK_THROWS_AS(x[iarr({0, 1})] = cf::zeros({3}), cf::ValueError);
  auto z = cf::zeros({3});
  z.eval();
  auto ro = z.broadcast_to({2, 3});
  CHECK_THROWS_AS(ro[iarr({0})] = 1, cf::ValueError);
}

TEST_CASE("x[idx] = v reads its values before it writes (x[idx] = x[other])") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(5).astype(cf::f64);
  x[iarr({0, 1, 2, 3, 4})] = x[iarr({4, 3, 2, 1, 0})];
  CHECK(f64(x) == std::vector<double>{4, 3, 2, 1, 0});
}

TEST_CASE("x[mask] = v and x[mask] op= v are one fused where, no count") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = cf::arange(6).astype(cf::f32);
  x.eval();
  cf::reset_stats();
  x[x > 2] = 0;
  x.eval();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(f64(x) == std::vector<double>{0, 1, 2, 0, 0, 0});
  cf::reset_stats();
  x[x < 2] += cf::full({}, 10, cf::f32);
  x.eval();
  CHECK(cf::stats().kernels_launched == 1);
  CHECK(f64(x) == std::vector<double>{10, 11, 2, 10, 10, 10});
  // a mask over rows with a row value broadcast
  auto m = cf::zeros({3, 2}, cf::i64);
  m[cf::from_host(std::vector<uint8_t>{1, 0, 1}.data(), cf::bool_, {3})] = cf::from_host(std::vector<int64_t>{7, 8});
  CHECK(i64(m) == std::vector<int64_t>{7, 8, 0, 0, 7, 8});
  // x.index({mask}) on a temporary writes through it too (a gather at the mask's indices)
  auto w = cf::arange(4).astype(cf::f32);
  w.index({w > 1.5f}) = -1;
  CHECK(f64(w) == std::vector<double>{0, 1, -1, -1});
  w.index({w < 0, cf::ellipsis}) += 5;
  CHECK(f64(w) == std::vector<double>{0, 1, 4, 4});
  // one value per selected element: through the mask's indices
  auto y = cf::arange(5);
  y[y >= 3] = cf::from_host(std::vector<int64_t>{30, 40});
  CHECK(i64(y) == std::vector<int64_t>{0, 1, 2, 30, 40});
  CHECK_THROWS_AS(y[y >= 0] = cf::from_host(std::vector<int64_t>{1, 2}), cf::ValueError);
  CHECK_THROWS_AS(y[cf::ones({4}, cf::bool_)] = 1, cf::IndexError);
  CHECK_THROWS_AS(y[y > 0] += 0.5, cf::TypeError);
  auto u = cf::zeros({2}, cf::u8);
  CHECK_THROWS_AS(u[u == 0] = 300, cf::OverflowError);
}

TEST_CASE("put with mode clip and wrap") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::zeros({5}, cf::f64);
  cf::put(a, iarr({-7, 9}), cf::from_host(std::vector<double>{10, 20}), "clip");
  CHECK(f64(a) == std::vector<double>{10, 0, 0, 0, 20});
  auto b = cf::zeros({5}, cf::f64);
  cf::put(b, iarr({-7, 9}), cf::from_host(std::vector<double>{10, 20}), "wrap");
  CHECK(f64(b) == std::vector<double>{0, 0, 0, 10, 20});
  auto e = cf::zeros({0}, cf::f32);
  CHECK(message_of([&] { cf::put(e, iarr({1}), 2, "wrap"); }) == "cannot replace elements of an empty array");
  CHECK(message_of([&] { cf::put(b, iarr({1}), 2, "nope"); }) ==
        "clipmode must be one of 'clip', 'raise', or 'wrap' (got 'nope')");
}

TEST_CASE("put: flat indices, values repeated, negative indices, errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::zeros({2, 3}, cf::i32);
  cf::put(a, iarr({0, -1, 2}), cf::from_host(std::vector<int64_t>{7, 8}));
  CHECK(i64(a) == std::vector<int64_t>{7, 0, 7, 0, 0, 8});
  cf::put(a, iarr({1}), 3.9);  // unsafe cast, as np.put
  CHECK(i64(a)[1] == 3);
  auto t = a.T();  // a strided view: written through a contiguous copy
  cf::put(t, iarr({1}), 5);
  CHECK(i64(t)[1] == 5);
  cf::put(a, iarr({}), 1);  // nothing to do
  CHECK(message_of([&] { cf::put(a, iarr({6}), 1); }) == "index 6 is out of bounds for axis 0 with size 6");
  CHECK_THROWS_AS(cf::put(a, cf::ones({1}, cf::f32), 1), cf::IndexError);
}

TEST_CASE("add_at, maximum_at, minimum_at accumulate duplicates") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::zeros({4}, cf::f64);
  cf::add_at(a, iarr({0, 1, 1, 3, 1, -1}), 1.0);
  CHECK(f64(a) == std::vector<double>{1, 3, 0, 2});
  cf::add_at(a, iarr({2, 2}), cf::from_host(std::vector<double>{0.5, 0.25}));
  CHECK(f64(a)[2] == 0.75);
  auto m = cf::zeros({3, 2}, cf::i32);
  cf::add_at(m, iarr({0, 2, 0}), cf::from_host(std::vector<int32_t>{1, 2}));  // rows, a row broadcast
  CHECK(i64(m) == std::vector<int64_t>{2, 4, 0, 0, 1, 2});
  auto mx = cf::full({3}, 5, cf::i16);
  cf::maximum_at(mx, iarr({0, 0, 2}), cf::from_host(std::vector<int16_t>{9, 7, 1}));
  CHECK(i64(mx) == std::vector<int64_t>{9, 5, 5});
  cf::minimum_at(mx, iarr({1, 1}), cf::from_host(std::vector<int16_t>{3, 4}));
  CHECK(i64(mx) == std::vector<int64_t>{9, 3, 5});
  auto f = cf::zeros({2}, cf::f32);
  cf::maximum_at(f, iarr({0}), cf::full({}, NAN, cf::f32));
  CHECK(std::isnan(f64(f)[0]));
  auto b = cf::zeros({3}, cf::bool_);
  cf::add_at(b, iarr({1, 1}), true);
  CHECK(b.to_host<bool>() == std::vector<bool>{false, true, false});
  auto h = cf::zeros({2}, cf::f16);
  cf::add_at(h, iarr({0, 0, 0}), 0.5);
  CHECK(f64(h)[0] == 1.5);
  // ufunc.at casts the values unsafely (as NumPy), and checks the index
  auto n = cf::zeros({3}, cf::i64);
  cf::add_at(n, iarr({0}), 1.5);
  CHECK(i64(n)[0] == 1);
  CHECK(message_of([&] { cf::add_at(n, iarr({3}), 1); }) == "index 3 is out of bounds for axis 0 with size 3");
  CHECK_THROWS_AS(cf::add_at(n, iarr({0, 1}), cf::ones({3}, cf::i64)), cf::ValueError);
}

TEST_CASE("a scatter is one kernel with its values' producer fused (reference run; CUDA compiles)") {
  {
    cf::BackendScope ref(cf::Backend::Reference);
    auto a = cf::zeros({1000}, cf::f32);
    auto v = cf::arange(100).astype(cf::f32);
    auto i = cf::remainder(cf::arange(100), 7);
    a.eval();
    v.eval();
    i.eval();
    cf::reset_stats();
    cf::add_at(a, i, cf::exp(v * 0.01f) * 2);
    CHECK(cf::stats().kernels_launched == 1);
    cf::reset_stats();
    a[i + 10] = v * 3;
    CHECK(cf::stats().kernels_launched == 1);
  }
  // the kernels compile (placeholders: planned and compiled, not run)
  namespace d = cf::detail;
  for (auto mode : {d::ScatterModeArg::Assign, d::ScatterModeArg::Add, d::ScatterModeArg::Max, d::ScatterModeArg::Min})
    for (cf::DType t : {cf::f32, cf::f64, cf::f16, cf::bf16, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u64,
                        cf::bool_}) {
      CAPTURE(cf::name(t));
      auto target = cf::placeholder(t, {64, 8});
      auto idx = cf::placeholder(cf::i32, {100});
      auto val = cf::placeholder(t, {100, 8});
      const cf::Shape iter{100, 8};
      std::vector<d::NodePtr> E{idx.reshape({100, 1}).broadcast_to(iter).node(), d::iota_node(iter, 1)};
      auto s = d::make_scatter(target.node(), E, {1, 0}, iter, (val + val).astype(t).node(), mode,
                               (val.astype(cf::f32) > 0).node());
      auto ex = plan_of({cf::Array(s)}, true);
      CHECK(ex->steps.size() == 1);
    }
}
