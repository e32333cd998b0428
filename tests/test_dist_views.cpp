// tests/test_dist_views.cpp: views and writes of DArrays on a host world equal NumPy's on
// the unsharded array (the reference backend): basic indexing along replicated and sharded
// dimensions (aligned selections stay local with no collective; others gather only the
// selected elements, one allgather each), reshape and transpose, and in-place writes
// (d += e, d[idx] = v, d[idx] += v) with the sharding kept.
#include "test_dist_helpers.hpp"

namespace {

using cf::_;
using cf::slice;

cf::Array base(const cf::Shape& s, uint64_t seed) {
  auto x = cf::random::uniform(s, cf::f64, seed, -1.0, 1.0);
  x.eval();
  return x;
}

size_t n_collectives(const dist::DArray& d) { return collectives_of(d).size(); }

struct Case {
  const char* name;
  std::vector<cf::Index> idx;
};

std::vector<Case> cases_2d() {
  return {
      {"[:]", {_}},
      {"[3]", {3}},
      {"[-1]", {-1}},
      {"[::2]", {slice(cf::none, cf::none, 2)}},
      {"[1::2]", {slice(1, cf::none, 2)}},
      {"[2:7]", {slice(2, 7)}},
      {"[::-1]", {slice(cf::none, cf::none, -1)}},
      {"[6:1:-2]", {slice(6, 1, -2)}},
      {"[5:5]", {slice(5, 5)}},
      {"[:, 2]", {_, 2}},
      {"[:, 1:5:2]", {_, slice(1, 5, 2)}},
      {"[1, 4]", {1, 4}},
      {"[newaxis, 2:6, ...]", {cf::newaxis, slice(2, 6), cf::ellipsis}},
      {"[..., newaxis]", {cf::ellipsis, cf::newaxis}},
      {"[3:, ::-3]", {slice(3, cf::none), slice(cf::none, cf::none, -3)}},
  };
}

}  // namespace

TEST_CASE("DArray::index equals NumPy's x[idx] over every sharding of a (8, 6) array") {
  HostWorld w(4);
  dist::Mesh mesh({2, 2}, {"a", "b"});
  const auto x = base({8, 6}, 7);
  for (const auto& spec : {dist::Sharding{"a", dist::none}, dist::Sharding{dist::none, "b"}, dist::Sharding{"a", "b"},
                           dist::Sharding{"b", "a"}, dist::Sharding{dist::none, dist::none}}) {
    auto d = dist::shard(x, mesh, spec);
    for (const auto& c : cases_2d()) {
      CAPTURE(spec.str());
      CAPTURE(c.name);
      auto v = d.index(c.idx);
      const auto want = x.index(c.idx);
      CHECK(v.shape() == want.shape());
      cf::testing::assert_array_equal(dist::gather(v), want);
    }
  }
}

TEST_CASE("index: aligned selections stay local; others gather only the selection, once per sharded dim") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  const auto x = base({8, 6}, 3);
  auto d = dist::shard(x, mesh, {"gpu", dist::none});
  // Along the replicated dim, and shard-by-shard selections of the sharded one: no collective,
  // the sharding stays.
  for (const auto& idx : {std::vector<cf::Index>{_, slice(1, 4)}, std::vector<cf::Index>{slice(cf::none, cf::none, 2)},
                          std::vector<cf::Index>{slice(1, cf::none, 2), 0}}) {
    auto v = d.index(idx);
    CHECK(n_collectives(v) == 0);
    CHECK(v.sharding()[0] == "gpu");
    cf::testing::assert_array_equal(dist::gather(v), x.index(idx));
  }
  // x[2:6] falls shard by shard (rows 2, 3 on device 0; 4, 5 on device 1): local.
  CHECK(n_collectives(d.index({slice(2, 6)})) == 0);
  // x[1:5] crosses the shards (3 rows on device 0, 1 on device 1): one allgather of each
  // device's part padded to 3 rows (not the 4 of a shard), then the 4 rows shard again.
  dist::DArray v = d[{slice(1, 5)}];  // (auto would keep the subscript, which writes into d)
  auto cs = collectives_of(v);
  REQUIRE(cs.size() == 1);
  CHECK(cs[0].collective == "allgather");
  CHECK(cs[0].bytes == 3 * 6 * 8);
  CHECK(v.sharding()[0] == "gpu");
  CHECK(v.local_shape() == cf::Shape{2, 6});
  cf::testing::assert_array_equal(dist::gather(v), x.index({slice(1, 5)}));
  // x[5]: the row leaves the array; replicated on every device.
  dist::DArray r = d[{5}];
  CHECK(r.sharding().is_replicated());
  cf::testing::assert_array_equal(r.shard(0), x.index({5}));
  cf::testing::assert_array_equal(r.shard(1), x.index({5}));
  // x[1:4] (3 rows, odd): replicated.
  CHECK(d.index({slice(1, 4)}).sharding().is_replicated());
  cf::testing::assert_array_equal(dist::gather(d.index({slice(1, 4)})), x.index({slice(1, 4)}));
}

TEST_CASE("index: errors as NumPy's; array indices are NotSupported") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  auto d = dist::shard(base({4, 2}, 1), mesh, {"gpu", dist::none});
  CHECK(contains(error_of([&] { (void)d.index({4}); }, cf::ErrorKind::Index), "out of bounds for axis 0 with size 4"));
  CHECK(contains(error_of([&] { (void)d.index({0, 0, 0}); }, cf::ErrorKind::Index), "too many indices"));
  CHECK(contains(error_of([&] { (void)d.index({slice(0, 2, 0)}); }, cf::ErrorKind::Value), "step cannot be zero"));
  CHECK(contains(error_of([&] { (void)d.index({cf::ellipsis, cf::ellipsis}); }, cf::ErrorKind::Index), "single ellipsis"));
  const auto idx = cf::arange(0, 2, 1, cf::i64);
  CHECK(contains(error_of([&] { (void)d.index({cf::Index(idx)}); }, cf::ErrorKind::NotSupported), "integer or bool"));
}

TEST_CASE("reshape keeps a leading sharded dimension local; transpose permutes the sharding") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  const auto x = base({8, 6}, 5);
  auto rows = dist::shard(x, mesh, {"gpu", dist::none});
  for (const cf::Shape& s : {cf::Shape{48}, cf::Shape{4, 2, 6}, cf::Shape{16, 3}, cf::Shape{2, 24}, cf::Shape{8, 2, 3},
                             cf::Shape{-1, 12}}) {
    CAPTURE(cf::to_string(s));
    auto v = rows.reshape(s);
    CHECK(n_collectives(v) == 0);
    cf::testing::assert_array_equal(dist::gather(v), x.reshape(s));
  }
  // Columns merged into the rows before them: gathered first (one alltoall or allgather).
  auto cols = dist::shard(x, mesh, {dist::none, "gpu"});
  auto flat = cols.reshape({48});
  CHECK(n_collectives(flat) == 1);
  cf::testing::assert_array_equal(dist::gather(flat), x.reshape({48}));
  auto kept = cols.reshape({8, 2, 3});  // columns split: the leading part keeps the axis
  CHECK(n_collectives(kept) == 0);
  CHECK(kept.sharding()[1] == "gpu");
  cf::testing::assert_array_equal(dist::gather(kept), x.reshape({8, 2, 3}));
  CHECK(contains(error_of([&] { (void)rows.reshape({7, 7}); }, cf::ErrorKind::Value), "cannot reshape array of size 48"));
  auto t = rows.transpose();
  CHECK(t.sharding() == dist::Sharding{dist::none, "gpu"});
  CHECK(n_collectives(t) == 0);
  cf::testing::assert_array_equal(dist::gather(t), x.transpose());
  auto x3 = base({2, 4, 6}, 8);
  auto d3 = dist::shard(x3, mesh, {dist::none, "gpu", dist::none});
  cf::testing::assert_array_equal(dist::gather(d3.transpose({2, 0, 1})), x3.transpose({2, 0, 1}));
  CHECK(contains(error_of([&] { (void)d3.transpose({0, 0, 1}); }, cf::ErrorKind::Value), "repeated axis"));
}

TEST_CASE("d op= e writes each shard in place: NumPy's casting and broadcasting; the sharding stays") {
  HostWorld w(4);
  dist::Mesh mesh({2, 2}, {"a", "b"});
  const auto x = base({8, 6}, 9), y = base({8, 6}, 10), b = base({6}, 11);
  auto d = dist::shard(x, mesh, {"a", "b"});
  auto want = x.copy();
  d += dist::shard(y, mesh, {"b", dist::none});  // another sharding: resharded to d's
  want += y;
  d *= 2.0;
  want *= 2.0;
  d -= dist::shard(b, mesh, {dist::none});  // broadcast
  want -= b;
  d /= 4;
  want /= 4;
  CHECK(d.sharding() == dist::Sharding{"a", "b"});
  cf::testing::assert_allclose(dist::gather(d), want, 1e-12, 1e-12);
  // Integer arrays keep their dtype; a float result does not go into them ('same_kind'), but
  // d[idx] = float does (setitem casts unsafely), as NumPy.
  auto i = dist::arange(8, mesh, {"a"}, cf::i32);
  i += 3;
  CHECK(i.dtype() == cf::i32);
  CHECK(contains(error_of([&] { i += 1.5; }, cf::ErrorKind::Type), "Cannot cast ufunc 'add' output from float64 to int32"));
  CHECK(contains(error_of([&] { i[{cf::slice(0, 4)}] *= 0.5; }, cf::ErrorKind::Type), "'multiply'"));
  i[{cf::slice(2, 6)}] = 9.75;
  auto iw = cf::arange(0, 8, 1, cf::i32);
  iw += 3;
  iw.index({cf::slice(2, 6)}) = 9.75;
  cf::testing::assert_array_equal(dist::gather(i), iw);
  // An operand that broadcasts d to a larger shape: NumPy's error.
  auto small = dist::shard(b, mesh, {dist::none});
  CHECK(contains(error_of([&] { small += d; }, cf::ErrorKind::Value), "non-broadcastable output operand"));
}

TEST_CASE("d[idx] = v and d[idx] += v write each device's part; equal NumPy's") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  const auto x = base({8, 6}, 12), v = base({8, 6}, 13);
  for (const auto& spec : {dist::Sharding{"gpu", dist::none}, dist::Sharding{dist::none, "gpu"}}) {
    CAPTURE(spec.str());
    auto d = dist::shard(x, mesh, spec);
    auto want = x.copy();
    d[{3}] = 7.0;  // a scalar into one row: one device holds it under row shards
    want.index({3}) = 7.0;
    d[{_, slice(1, 5, 2)}] = -1;
    want.index({_, slice(1, 5, 2)}) = -1;
    const auto part = v.index({slice(2, 7), slice(0, 6, 3)});
    d[{slice(2, 7), slice(0, 6, 3)}] = part;  // a replicated Array, cut per device
    want.index({slice(2, 7), slice(0, 6, 3)}) = part;
    d[{slice(cf::none, cf::none, -2)}] += dist::shard(v, mesh, spec).index({slice(0, 4)});  // a DArray, gathered
    want.index({slice(cf::none, cf::none, -2)}) += v.index({slice(0, 4)});
    d[{slice(cf::none, cf::none, 2)}] *= dist::shard(v, mesh, spec).index({slice(cf::none, cf::none, 2)});
    want.index({slice(cf::none, cf::none, 2)}) *= v.index({slice(cf::none, cf::none, 2)});
    const auto row = v.index({0});
    d[{cf::newaxis, 5}] = row;  // newaxis in the target
    want.index({5}) = row;
    CHECK(d.sharding() == spec);
    cf::testing::assert_allclose(dist::gather(d), want, 1e-12, 1e-12);
  }
  auto d = dist::shard(x, mesh, {"gpu", dist::none});
  CHECK(contains(error_of([&] { d[{slice(0, 3)}] = base({2, 6}, 1); }, cf::ErrorKind::Value), "could not broadcast"));
}

TEST_CASE("a local view shares the shard's memory: a write into the DArray shows through it") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  auto d = dist::shard(base({4, 4}, 21), mesh, {"gpu", dist::none});
  dist::eval(d);
  auto col = d.index({_, 1});  // local: no collective
  REQUIRE(n_collectives(col) == 0);
  d[{_, 1}] = 3.0;
  cf::testing::assert_array_equal(dist::gather(col), cf::full({4}, 3.0, cf::f64));
}
