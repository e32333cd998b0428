// tests/test_dist_reference.cpp: small sharded programs on a host world (the reference
// backend, each shard a host array, the collectives done on the host) give the unsharded
// program's results; random creation per shard equals the unsharded generator's values;
// each shard's work is one fused kernel, counted.
#include "test_dist_helpers.hpp"
#include "test_sandbox.hpp"

namespace {
void check_close(const cf::Array& got, const cf::Array& want, double rtol = 1e-5) {
  REQUIRE(got.shape() == want.shape());
  cf::testing::assert_allclose(got, want, rtol, 1e-6);
}
}  // namespace

TEST_CASE("sum(exp(x)*2 + b, axis=0) over row shards equals the unsharded sum; one kernel per shard") {
  HostWorld w(4);
  dist::Mesh mesh({2, 2}, {"node", "gpu"});
  auto x = cf::random::uniform({8, 6}, cf::f32, 11);
  auto b = cf::random::uniform({6}, cf::f32, 12);
  x.eval();
  b.eval();
  auto dx = dist::shard(x, mesh, {"gpu", dist::none});
  auto db = dist::shard(b, mesh, {dist::none});
  auto s = dist::sum(dist::exp(dx) * 2.0 + db, 0);
  CHECK(s.is_partial());
  cf::reset_stats();
  auto got = dist::gather(s);
  got.eval();
  // gather combines a partial result where it lands, no allreduce: node 0's two partial sums
  // and their sum are one kernel (sibling reductions, the sum their epilogue).
  CHECK(cf::stats().kernels_launched == 1);
  check_close(got, cf::sum(cf::exp(x) * 2.0 + b, 0));
}

TEST_CASE("a reduction of temporary DArrays read back in the same statement: one kernel per shard") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  auto x = cf::random::normal({4096}, cf::f32, 21);
  auto y = cf::random::normal({4096}, cf::f32, 22);
  x.eval();
  y.eval();
  auto X = dist::shard(x, mesh, {"gpu"}), Y = dist::shard(y, mesh, {"gpu"});
  cf::reset_stats();
  // (X - Y) and its square live to the end of the statement: the operations drop their
  // by-value operands, so no handle names a shard of them while gather evaluates.
  const float got = dist::gather(dist::sum((X - Y) * (X - Y))).item<float>();
  CHECK(cf::stats().kernels_launched == 1);  // both shards' fused reductions, siblings, and their sum
  CHECK(got == doctest::Approx(cf::sum((x - y) * (x - y)).item<float>()).epsilon(1e-5));
  // Named operands stay whole and usable.
  auto D = X - Y;
  auto s = dist::sum(D * D);
  CHECK(D.defined());
  check_close(dist::gather(D), x - y);
  CHECK(dist::gather(s).item<float>() == doctest::Approx(got).epsilon(1e-5));
}

// gather of a partial result combines the partials where it lands (a peer copy each on GPUs),
// no allreduce: the same values as dist::eval's allreduce, NaN propagated by max and min, an
// integer sum exact.
TEST_CASE("gather combines a partial result where it lands: as the allreduce, NaN kept") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  auto x = cf::random::uniform({8, 5}, cf::f32, 7);
  x.eval();
  auto xn = cf::where(cf::arange(40).reshape({8, 5}) == 27, cf::full({}, std::nanf(""), cf::f32), x);  // row 5: shard 1
  auto d = dist::shard(xn, mesh, {"gpu", dist::none});
  for (int op = 0; op < 4; ++op) {
    CAPTURE(op);
    auto red = [&](const dist::DArray& a) {
      return op == 0 ? dist::sum(a, 0) : op == 1 ? dist::max(a, 0) : op == 2 ? dist::min(a, 0) : dist::prod(a, 0);
    };
    const cf::Array want = op == 0 ? cf::sum(xn, 0) : op == 1 ? cf::max(xn, 0) : op == 2 ? cf::min(xn, 0) : cf::prod(xn, 0);
    auto p = red(d);
    CHECK(p.is_partial());
    const cf::Array got = dist::gather(p);
    CHECK(p.is_partial());  // gather leaves the DArray as it was
    cf::testing::assert_allclose(got, want, 1e-6, 0, true);
    dist::eval(p);  // the allreduce
    cf::testing::assert_allclose(dist::gather(p), got, 1e-6, 0, true);
  }
  auto i = dist::shard(cf::arange(0, 1000, 1, cf::i32), mesh, {"gpu"});
  CHECK(dist::gather(dist::sum(i)).item<int64_t>() == 499500);
}

// A small partial block is combined on the host (CUFUSE_DIST_HOST_COMBINE bytes at most): the
// same bits as combining it on the gathering device, for every op and dtypes whose rounding
// differs (halves), integers, bools, NaN kept; the host's result is in memory at once, the
// device's lazy. Bigger blocks and complex dtypes stay on the device.
TEST_CASE("gather's host combine of a small partial result: the device combine's bits") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  auto x = cf::random::uniform({8, 5}, cf::f32, 17, -2.0, 2.0);
  auto xn = cf::where(cf::arange(40).reshape({8, 5}) == 31, cf::full({}, std::nanf(""), cf::f32), x);
  xn.eval();
  for (cf::DType t : {cf::f32, cf::f16, cf::bf16, cf::f64, cf::i8, cf::u16, cf::bool_}) {
    const cf::Array data = t == cf::i8 ? (xn * 40).astype(cf::i8) : xn.astype(t);
    auto d = dist::shard(data, mesh, {"gpu", dist::none});
    for (int op = 0; op < 5; ++op) {
      CAPTURE(cf::name(t));
      CAPTURE(op);
      auto red = [&] {
        return op == 0   ? dist::sum(d, 0)
               : op == 1 ? dist::max(d, 0)
               : op == 2 ? dist::min(d, 0)
               : op == 3 ? dist::prod(d, 0)
                         : dist::mean(d, 0);
      };
      const cf::Array on_host = dist::gather(red());
      CHECK((op == 4 || !on_host.is_lazy()));  // the mean's scale is lazy
      cf::Array on_device;
      {
        cufuse_test::ScopedEnv off("CUFUSE_DIST_HOST_COMBINE", "0");
        on_device = dist::gather(red());
        CHECK(on_device.is_lazy());
      }
      CHECK(on_host.dtype() == on_device.dtype());
      cf::testing::assert_array_equal(on_host, on_device);
    }
  }
  // Past the limit, or complex: the device combine (the result lazy).
  {
    cufuse_test::ScopedEnv small("CUFUSE_DIST_HOST_COMBINE", "16");
    auto d = dist::shard(xn, mesh, {"gpu", dist::none});
    CHECK(dist::gather(dist::sum(d, 0)).is_lazy());  // 5 floats: 20 bytes
  }
  // One element: a constant (full()), read back by item() with no kernel.
  {
    auto d = dist::shard(x, mesh, {"gpu", dist::none});
    const cf::Array total = dist::gather(dist::sum(d));
    cf::reset_stats();
    const float v = total.item<float>();
    CHECK(cf::stats().kernels_launched == 0);
    cufuse_test::ScopedEnv off("CUFUSE_DIST_HOST_COMBINE", "0");
    CHECK(v == dist::gather(dist::sum(d)).item<float>());
    CHECK(cf::full({}, 0.1, cf::f16).item<double>() == double(static_cast<float>(cf::half(0.1f))));  // made in its dtype
  }
  auto z = dist::shard(xn.astype(cf::c64), mesh, {"gpu", dist::none});
  const cf::Array zs = dist::gather(dist::sum(z, 0));
  CHECK(zs.is_lazy());
  cf::testing::assert_allclose(zs, cf::sum(xn.astype(cf::c64), 0), 1e-6, 0, true);
}

TEST_CASE("reductions over sharded and unsharded axes, on a 2-D mesh, equal NumPy's") {
  HostWorld w(4);
  dist::Mesh mesh({2, 2}, {"a", "b"});
  auto x = cf::random::uniform({8, 4, 6}, cf::f64, 3, 0.5, 1.5);
  x.eval();
  auto d = dist::shard(x, mesh, {"a", dist::none, "b"});
  check_close(dist::gather(dist::sum(d, 0)), cf::sum(x, 0));
  check_close(dist::gather(dist::sum(d, 1)), cf::sum(x, 1));  // local only
  check_close(dist::gather(dist::sum(d)), cf::sum(x));
  check_close(dist::gather(dist::mean(d, cf::Axes{0, 2})), cf::mean(x, cf::Axes{0, 2}));
  check_close(dist::gather(dist::max(d, 2)), cf::max(x, 2));
  check_close(dist::gather(dist::min(d, cf::Axes{0, 1})), cf::min(x, cf::Axes{0, 1}));
  check_close(dist::gather(dist::prod(d, 0)), cf::prod(x, 0));
  // A partial sum summed again stays partial: one allreduce over both axes.
  auto ss = dist::sum(dist::sum(d, 0), 1);
  CHECK(ss.partial_axes() == std::vector<std::string>{"a", "b"});
  check_close(dist::gather(ss), cf::sum(x, cf::Axes{0, 2}));
  CHECK(dist::gather(d).shape() == x.shape());
  cf::testing::assert_array_equal(dist::gather(d), x);
}

TEST_CASE("reshards: alltoall, allgather, reducescatter and slicing keep the values") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  auto x = cf::random::uniform({4, 6}, cf::f32, 5);
  x.eval();
  auto rows = dist::shard(x, mesh, {"gpu", dist::none});
  auto cols = dist::reshard(rows, {dist::none, "gpu"});
  CHECK(collectives_of(cols).at(0).collective == "alltoall");
  CHECK(cols.local_shape() == cf::Shape{4, 3});
  cf::testing::assert_array_equal(cols.shard(1), x.index({cf::_, cf::slice(3, 6)}));
  cf::testing::assert_array_equal(dist::gather(cols), x);
  auto rep = dist::reshard(cols, {dist::none, dist::none});
  CHECK(collectives_of(rep).back().collective == "allgather");
  cf::testing::assert_array_equal(rep.shard(0), x);
  cf::testing::assert_array_equal(rep.shard(1), x);
  auto back = dist::reshard(rep, {"gpu", dist::none});  // slicing only
  CHECK(collectives_of(back).size() == collectives_of(rep).size());
  cf::testing::assert_array_equal(back.shard(1), x.index({cf::slice(2, 4), cf::_}));
  auto p = dist::sum(rows, 0);
  auto rs = dist::reshard(p, {"gpu"});
  CHECK(collectives_of(rs).back().collective == "reducescatter");
  check_close(dist::gather(rs), cf::sum(x, 0));
  // Mixed shardings in one op: rows + cols, values of x + x.
  check_close(dist::gather(rows + cols), x + x);
  // Integer data through the host collectives.
  auto i = dist::arange(12, mesh, {"gpu"}, cf::i32);
  cf::testing::assert_array_equal(dist::gather(dist::sum(i)), cf::sum(cf::arange(0, 12, 1, cf::i32)));
}

TEST_CASE("matmul over the three strategies equals the unsharded matmul") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  auto A = cf::random::uniform({6, 8}, cf::f64, 1);
  auto B = cf::random::uniform({8, 4}, cf::f64, 2);
  A.eval();
  B.eval();
  const auto want = cf::matmul(A, B);
  check_close(dist::gather(dist::matmul(dist::shard(A, mesh, {"gpu", dist::none}), dist::shard(B, mesh, {dist::none, dist::none}))), want);
  check_close(dist::gather(dist::matmul(dist::shard(A, mesh, {dist::none, "gpu"}), dist::shard(B, mesh, {"gpu", dist::none}))), want);
  check_close(dist::gather(dist::matmul(dist::shard(A, mesh, {"gpu", dist::none}), dist::shard(B, mesh, {dist::none, "gpu"}))), want);
  check_close(dist::gather(dist::matmul(dist::shard(A, mesh, {dist::none, "gpu"}), dist::shard(B, mesh, {dist::none, dist::none}))), want);
  check_close(dist::gather(dist::matmul(dist::shard(A, mesh, {dist::none, dist::none}), dist::shard(B, mesh, {dist::none, "gpu"}))), want);
}

// A born-sharded array's shards are views of the lazy global generator; a collective reads
// nbytes from each shard's data_ptr() (the host world as NCCL), which for such a view names the
// generator's whole memory, strided. Column shards (MPI's allgather in dist::gather read them
// so: every row after the first wrong on the H200 pair).
TEST_CASE("a collective over shards that are views of a lazy array reads their own values") {
  HostWorld w(2);
  dist::Mesh mesh({2}, {"gpu"});
  auto want = cf::random::uniform({8, 12}, cf::f32, 42);
  auto u = dist::uniform({8, 12}, 42, mesh, {dist::none, "gpu"}, cf::f32);
  auto r = dist::reshard(u, dist::Sharding::replicated(2));
  cf::testing::assert_array_equal(r.shard(0), want);
  cf::testing::assert_array_equal(r.shard(1), want);
  // Strided views of an array in memory too (alltoall of row shards to column shards).
  auto x = cf::arange(96).astype(cf::f64).reshape({8, 12});
  auto dx = dist::shard(x, mesh, {"gpu", dist::none});
  cf::testing::assert_array_equal(dist::reshard(dx, {dist::none, "gpu"}).shard(1),
                                  x.index({cf::slice(cf::none, cf::none), cf::slice(6, 12)}));
}

TEST_CASE("creation: each shard's random numbers are the unsharded array's") {
  HostWorld w(4);
  dist::Mesh mesh({2, 2}, {"a", "b"});
  auto u = dist::uniform({6, 8}, 42, mesh, {"a", "b"}, cf::f32, -1.0, 1.0);
  auto want = cf::random::uniform({6, 8}, cf::f32, 42, -1.0, 1.0);
  cf::testing::assert_array_equal(dist::gather(u), want);
  cf::testing::assert_array_equal(u.shard(3), want.index({cf::slice(3, 6), cf::slice(4, 8)}));
  auto n = dist::normal({8, 2}, 9, mesh, {"b", dist::none}, cf::f64);
  cf::testing::assert_array_equal(dist::gather(n), cf::random::normal({8, 2}, cf::f64, 9));
  auto r = dist::arange(8, mesh, {"a"}, cf::i64);
  cf::testing::assert_array_equal(dist::gather(r), cf::arange(0, 8, 1, cf::i64));
  auto f = dist::full({4, 4}, 2.5, mesh, {dist::none, "b"}, cf::f32);
  cf::testing::assert_array_equal(dist::gather(f), cf::full({4, 4}, 2.5, cf::f32));
  auto z = dist::zeros({4}, mesh, {"a"}, cf::f32) + dist::ones({4}, mesh, {"a"}, cf::f32);
  cf::testing::assert_array_equal(dist::gather(z), cf::ones({4}, cf::f32));
  // dist::eval finishes a partial result and materializes the shards.
  auto s = dist::sum(u, 0);
  dist::eval(s);
  CHECK_FALSE(s.is_partial());
  check_close(dist::gather(s), cf::sum(want, 0));
  CHECK(dist::to_host<float>(s).size() == 8);
}
