// tests/test_dist_mesh.cpp: dist::init's worlds, Mesh and Sharding, and the clear errors of
// bad inputs: a mesh larger than the world, indivisible dimensions, unknown or repeated
// axes, operands on different meshes, a second init.
#include "dist/mpi.hpp"
#include "test_dist_helpers.hpp"

TEST_CASE("a mesh over a host world: sizes, names, coordinates") {
  HostWorld w(8);
  CHECK(dist::world() == dist::World::Host);
  CHECK(dist::world_size() == 8);
  CHECK(dist::rank() == 0);
  dist::Mesh mesh({2, 4}, {"node", "gpu"});
  CHECK(mesh.size() == 8);
  CHECK(mesh.str() == "Mesh(node=2, gpu=4)");
  CHECK(mesh.axis("gpu") == 1);
  CHECK(mesh.axis_size("node") == 2);
  CHECK(mesh.coords(6) == std::vector<int>{1, 2});  // row-major: the last axis fastest
  CHECK(mesh.coords(3) == std::vector<int>{0, 3});
  dist::Mesh small({3}, {"gpu"});  // a mesh may take fewer devices than the world has
  CHECK(small.size() == 3);
}

TEST_CASE("Sharding: like JAX's PartitionSpec, parsed from text") {
  dist::Sharding s{"gpu", dist::none};
  CHECK(s.ndim() == 2);
  CHECK(s.sharded(0));
  CHECK_FALSE(s.sharded(1));
  CHECK(s.str() == "(gpu, none)");
  CHECK(dist::Sharding::parse("gpu, none") == s);
  CHECK(dist::Sharding::parse("none,node").str() == "(none, node)");
  CHECK(dist::Sharding::replicated(3).is_replicated());
  CHECK(contains(error_of([] { dist::Sharding::parse("gpu,,none"); }, cf::ErrorKind::Value), "empty entry"));
}

TEST_CASE("bad worlds and meshes are ValueErrors that say what to do") {
  cf::BackendScope ref(cf::Backend::Reference);
  // No world yet.
  CHECK(contains(error_of([] { dist::Mesh({2}, {"gpu"}); }, cf::ErrorKind::Value), "dist::init"));
  WorldScope w(dist::World::Host, 4);
  CHECK(contains(error_of([] { dist::Mesh({2, 4}, {"node", "gpu"}); }, cf::ErrorKind::Value),
                 "Mesh(node=2, gpu=4) needs 8 devices, but the world has 4"));
  CHECK(contains(error_of([] { dist::Mesh({2, 2}, {"gpu", "gpu"}); }, cf::ErrorKind::Value), "repeated"));
  CHECK(contains(error_of([] { dist::Mesh({0}, {"gpu"}); }, cf::ErrorKind::Value), "size 0"));
  CHECK(contains(error_of([] { dist::Mesh({2}, {"none"}); }, cf::ErrorKind::Value), "no name"));
  CHECK(contains(error_of([] { dist::Mesh({2, 2}, {"gpu"}); }, cf::ErrorKind::Value), "2 axis sizes but 1 names"));
  CHECK(contains(error_of([] { dist::init(dist::World::Host, 2); }, cf::ErrorKind::Value), "already up"));
}

TEST_CASE("world kinds: the host world needs the reference backend; MPI and GPUs say why they are missing") {
  {
    cf::BackendScope cuda(cf::Backend::Cuda);
    CHECK(contains(error_of([] { dist::init(dist::World::Host, 2); }, cf::ErrorKind::Value), "reference backend"));
  }
  CHECK_FALSE(dist::initialized());
  // One process per GPU: without MPI in the build, NotSupported; with it (MPI starts as a
  // singleton here), the device check: no GPU on this machine.
  if (!cufuse::dist::detail::mpi_available())
    CHECK(contains(error_of([] { dist::init(dist::World::Mpi); }, cf::ErrorKind::NotSupported), "mpirun"));
  else if (!cf::Device::available())
    CHECK(contains(error_of([] { dist::init(dist::World::Mpi); }, cf::ErrorKind::NoDevice), "rank 0 of 1 has no GPU"));
  CHECK(contains(error_of([] { dist::init(dist::World::Host, 0); }, cf::ErrorKind::Value), "n > 0"));
  if (!cf::Device::available())  // this machine: no GPU, so a GPU world cannot start
    CHECK(contains(error_of([] { dist::init(); }, cf::ErrorKind::NoDevice), "no GPU"));
  CHECK_FALSE(dist::initialized());
  dist::finalize();  // harmless when nothing is up
}

TEST_CASE("shard: indivisible dimensions, unknown axes, wrong rank, an axis used twice") {
  HostWorld w(4);
  dist::Mesh mesh({4}, {"gpu"});
  dist::Mesh mesh2({2, 2}, {"a", "b"});
  auto x = cf::zeros({10, 8}, cf::f32);
  CHECK(contains(error_of([&] { dist::shard(x, mesh, {"gpu", dist::none}); }, cf::ErrorKind::Value),
                 "dimension 0 of size 10 is not divisible by mesh axis 'gpu' of size 4"));
  CHECK(contains(error_of([&] { dist::shard(x, mesh, {"tpu", dist::none}); }, cf::ErrorKind::Value),
                 "'tpu' is not an axis of Mesh(gpu=4)"));
  CHECK(contains(error_of([&] { dist::shard(x, mesh, {"gpu"}); }, cf::ErrorKind::Value), "has 1 entries"));
  CHECK(contains(error_of([&] { dist::shard(cf::zeros({8, 8}), mesh, {"gpu", "gpu"}); }, cf::ErrorKind::Value),
                 "shards two dimensions"));
  // Operands on different meshes.
  auto a = dist::shard(cf::zeros({8, 8}), mesh, {"gpu", dist::none});
  auto b = dist::shard(cf::zeros({8, 8}), mesh2, {"a", dist::none});
  CHECK(contains(error_of([&] { (void)(a + b); }, cf::ErrorKind::Value), "different meshes"));
  CHECK(contains(error_of([&] { dist::matmul(a, b); }, cf::ErrorKind::Value), "different meshes"));
  CHECK(contains(error_of([&] { dist::sum(a, 2); }, cf::ErrorKind::Index), "axis 2 is out of bounds"));
  CHECK(contains(error_of([&] { dist::matmul(a, dist::shard(cf::zeros({4, 8}), mesh, {"gpu", dist::none})); },
                          cf::ErrorKind::Value),
                 "not aligned"));
  CHECK(contains(error_of([&] { dist::plan(dist::DArray()); }, cf::ErrorKind::Value), "empty"));
}
