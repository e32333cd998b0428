// tests/test_dist_plan.cpp: planning over a mesh without devices (dist::World::Plan: every
// shard a placeholder): sharding propagation, per-shard kernel counts, the collectives the
// plan chooses and their bytes.
#include "core/node.hpp"
#include "test_dist_helpers.hpp"

namespace {
dist::DArray input(const dist::Mesh& mesh, const cf::Shape& shape, const dist::Sharding& spec, int slot = 0) {
  return dist::shard(cf::Array(cf::detail::make_placeholder(cf::f32, shape, slot)), mesh, spec);
}
}  // namespace

TEST_CASE("sum(exp(x)*2 + b, axis=0) over row shards: one fused kernel per shard and one allreduce") {
  WorldScope w(dist::World::Plan, 8);
  dist::Mesh mesh({2, 4}, {"node", "gpu"});
  auto x = input(mesh, {8192, 8192}, {"gpu", dist::none}, 0);
  auto b = input(mesh, {8192}, {dist::none}, 1);
  CHECK(x.local_shape() == cf::Shape{2048, 8192});
  auto s = dist::sum(dist::exp(x) * 2.0 + b, 0);
  CHECK(s.shape() == cf::Shape{8192});
  CHECK(s.sharding() == dist::Sharding{dist::none});
  CHECK(s.is_partial());
  CHECK(s.partial_axes() == std::vector<std::string>{"gpu"});
  CHECK(kernel_steps(s) == 1);
  auto c = collectives_of(s);
  REQUIRE(c.size() == 1);
  CHECK(c[0].collective == "allreduce");
  CHECK(c[0].op == "sum");
  CHECK(c[0].mesh_axis == "gpu");
  CHECK(c[0].ranks == 4);
  CHECK(c[0].groups == 2);
  CHECK(c[0].bytes == 8192 * 4);
  const std::string dump = dist::plan_dump(s);
  CHECK(contains(dump, "1 kernel on each of 8 shards"));
  CHECK(contains(dump, "allreduce sum over mesh axis gpu (4 ranks x 2 groups): 32768 bytes per rank"));
}

TEST_CASE("elementwise ops keep the sharding; reductions over unsharded axes stay local") {
  WorldScope w(dist::World::Plan, 4);
  dist::Mesh mesh({4}, {"gpu"});
  auto x = input(mesh, {64, 32}, {"gpu", dist::none});
  auto y = dist::sqrt(dist::abs(x) + 1.0) * x;
  CHECK(y.sharding() == x.sharding());
  CHECK(y.local_shape() == cf::Shape{16, 32});
  CHECK(collectives_of(y).empty());
  auto r = dist::max(y, 1);  // along the rows' own elements
  CHECK(r.sharding() == dist::Sharding{"gpu"});
  CHECK_FALSE(r.is_partial());
  CHECK(collectives_of(r).empty());
  CHECK(kernel_steps(r) == 1);
  // Over every axis: partial over the sharded one.
  auto m = dist::mean(x);
  CHECK(m.shape().empty());
  CHECK(m.partial_axes() == std::vector<std::string>{"gpu"});
  CHECK(collectives_of(m).size() == 1);
  // A partial result reduced by its own op stays partial; by another op it is finished first.
  auto s2 = dist::sum(dist::sum(x, 0));
  CHECK(s2.is_partial());
  CHECK(collectives_of(s2).size() == 1);
  auto mx = dist::max(dist::sum(x, 0));
  CHECK_FALSE(mx.is_partial());
  REQUIRE(collectives_of(mx).size() == 1);
  CHECK(collectives_of(mx)[0].collective == "allreduce");
  CHECK(collectives_of(mx)[0].bytes == 32 * 4);
}

// map's common case (every operand of the output's shape and one sharding) weighs and reshards
// nothing; a partial operand of that shape is still finished first.
TEST_CASE("an op of operands with the output's shape and one sharding keeps it; a partial one is finished first") {
  WorldScope w(dist::World::Plan, 2);
  dist::Mesh mesh({2}, {"gpu"});
  auto a = input(mesh, {8, 6}, {dist::none, "gpu"}, 0);
  auto b = input(mesh, {8, 6}, {dist::none, "gpu"}, 1);
  auto z = a * b - a;
  CHECK(z.sharding() == a.sharding());
  CHECK(z.local_shape() == cf::Shape{8, 3});
  CHECK(collectives_of(z).empty());
  for (const auto& st : dist::plan(z)) CHECK(st.kind != "slice");
  auto p = dist::sum(input(mesh, {4, 6}, {"gpu", dist::none}, 2), 0);  // (6,) replicated, partial over gpu
  auto q = input(mesh, {6}, {dist::none}, 3);                            // (6,) replicated
  REQUIRE(p.is_partial());
  auto r = p + q;
  CHECK_FALSE(r.is_partial());
  CHECK(r.sharding() == q.sharding());
  REQUIRE(collectives_of(r).size() == 1);
  CHECK(collectives_of(r)[0].collective == "allreduce");
}

TEST_CASE("mismatched shardings: the cheapest reshard is named (alltoall, allgather, slicing)") {
  WorldScope w(dist::World::Plan, 2);
  dist::Mesh mesh({2}, {"gpu"});
  auto rows = input(mesh, {8, 6}, {"gpu", dist::none}, 0);
  auto cols = input(mesh, {8, 6}, {dist::none, "gpu"}, 1);
  auto z = rows + cols;  // one of them moves: an alltoall of its local block
  auto c = collectives_of(z);
  REQUIRE(c.size() == 1);
  CHECK(c[0].collective == "alltoall");
  CHECK(c[0].bytes == 4 * 6 * 4);  // a local block: (8/2) x 6 float32
  CHECK(z.sharding() == rows.sharding());
  // A replicated operand is sliced locally: no communication.
  auto rep = input(mesh, {8, 6}, {dist::none, dist::none}, 2);
  CHECK(collectives_of(rows * rep).empty());
  CHECK((rows * rep).sharding() == rows.sharding());
  // Resharding to replicated gathers.
  auto g = dist::reshard(rows, {dist::none, dist::none});
  REQUIRE(collectives_of(g).size() == 1);
  CHECK(collectives_of(g)[0].collective == "allgather");
  CHECK(collectives_of(g)[0].bytes == 4 * 6 * 4);
  // A partial result wanted sharded: reducescatter instead of allreduce.
  auto p = dist::sum(rows, 0);  // (6,) partial over gpu
  auto rs = dist::reshard(p, {"gpu"});
  REQUIRE(collectives_of(rs).size() == 1);
  CHECK(collectives_of(rs)[0].collective == "reducescatter");
  CHECK(collectives_of(rs)[0].bytes == 6 * 4);
  CHECK_FALSE(rs.is_partial());
  CHECK(rs.local_shape() == cf::Shape{3});
}

TEST_CASE("matmul: local GEMM, GEMM + allreduce, allgather + GEMM by the operands' shardings") {
  WorldScope w(dist::World::Plan, 2);
  dist::Mesh mesh({2}, {"gpu"});
  auto a_rows = input(mesh, {64, 32}, {"gpu", dist::none}, 0);
  auto b_rep = input(mesh, {32, 16}, {dist::none, dist::none}, 1);
  auto local = dist::matmul(a_rows, b_rep);
  CHECK(local.sharding() == dist::Sharding{"gpu", dist::none});
  CHECK_FALSE(local.is_partial());
  CHECK(collectives_of(local).empty());
  CHECK(contains(dist::plan_dump(local), "local GEMM"));

  auto a_k = input(mesh, {64, 32}, {dist::none, "gpu"}, 0);
  auto b_k = input(mesh, {32, 16}, {"gpu", dist::none}, 1);
  auto red = dist::matmul(a_k, b_k);
  CHECK(red.is_partial());
  REQUIRE(collectives_of(red).size() == 1);
  CHECK(collectives_of(red)[0].collective == "allreduce");
  CHECK(collectives_of(red)[0].bytes == 64 * 16 * 4);
  CHECK(contains(dist::plan_dump(red), "GEMM per shard + allreduce over 'gpu'"));

  auto b_cols = input(mesh, {32, 16}, {dist::none, "gpu"}, 1);
  auto ag = dist::matmul(a_rows, b_cols);  // rows and columns on one axis: B's columns gathered
  CHECK(ag.sharding() == dist::Sharding{"gpu", dist::none});
  REQUIRE(collectives_of(ag).size() == 1);
  CHECK(collectives_of(ag)[0].collective == "allgather");
  CHECK(contains(dist::plan_dump(ag), "allgather + GEMM"));
}

TEST_CASE("creation born distributed, planned: zeros and random shards are local generators") {
  WorldScope w(dist::World::Plan, 4);
  dist::Mesh mesh({2, 2}, {"a", "b"});
  auto u = dist::uniform({8, 8}, 7, mesh, {"a", "b"}, cf::f32);
  CHECK(u.local_shape() == cf::Shape{4, 4});
  auto z = dist::zeros({8, 8}, mesh, {"a", dist::none}, cf::f32);
  CHECK(z.local_shape() == cf::Shape{4, 8});
  auto t = dist::sum(u * 2.0, cf::Axes{0, 1});
  CHECK(t.partial_axes() == std::vector<std::string>{"a", "b"});
  REQUIRE(collectives_of(t).size() == 1);
  CHECK(collectives_of(t)[0].mesh_axis == "a,b");
  CHECK(collectives_of(t)[0].ranks == 4);
  CHECK(collectives_of(t)[0].groups == 1);
  CHECK(kernel_steps(t) == 1);
}
