// tests/test_cli_dist.cpp: cufuse-dump-kernels over a mesh, through the CLI's own pieces:
// --mesh / --shard parsing, the program run over DArrays on a planning world, and the text
// and JSON reports (collectives named as NCCL names them, with their bytes).
#include "cli/dist_program.hpp"
#include "cli/report.hpp"
#include "cli/syntax.hpp"
#include "test_dist_helpers.hpp"

namespace cli = cufuse::cli;

namespace {
struct Planned {
  WorldScope world;
  cli::DistEvaluator ev;
  std::vector<cli::DistResult> results;
  Planned(const std::string& mesh, const std::vector<std::pair<std::string, std::string>>& args, const std::string& program)
      : world(dist::World::Plan, 8), ev(dist::Mesh(cli::parse_mesh_spec(mesh).first, cli::parse_mesh_spec(mesh).second)) {
    for (const auto& [arg, shard] : args) {
      auto spec = cli::parse_arg_spec(arg);
      ev.declare(spec, shard.empty() ? dist::Sharding::replicated(static_cast<int>(spec.shape.size()))
                                     : cli::parse_shard_spec(spec.name + "=" + shard).second);
    }
    ev.run(cli::parse_program(program));
    results = ev.results({});
  }
};
}  // namespace

TEST_CASE("--mesh and --shard parse; bad ones are usage errors") {
  auto [sizes, names] = cli::parse_mesh_spec("node=2,gpu=4");
  CHECK(sizes == std::vector<int>{2, 4});
  CHECK(names == std::vector<std::string>{"node", "gpu"});
  CHECK_THROWS_AS(cli::parse_mesh_spec("node=2,gpu"), cli::UsageError);
  CHECK_THROWS_AS(cli::parse_mesh_spec("gpu=-1"), cli::UsageError);
  auto [name, spec] = cli::parse_shard_spec("x=gpu,none");
  CHECK(name == "x");
  CHECK(spec == dist::Sharding{"gpu", dist::none});
  CHECK_THROWS_AS(cli::parse_shard_spec("x"), cli::UsageError);
}

TEST_CASE("the issue's example: sum(exp(x) * 2, axis=0) over gpu rows: one kernel per shard, one allreduce") {
  Planned p("node=2,gpu=4", {{"x=f32[8192,8192]", "gpu,none"}}, "sum(exp(x) * 2, axis=0)");
  REQUIRE(p.results.size() == 1);
  const auto& r = p.results[0].value;
  CHECK(r.is_partial());
  CHECK(kernel_steps(r) == 1);
  const std::string text = cli::render_dist_text(p.ev, p.results, false);
  CHECK(contains(text, "mesh: Mesh(node=2, gpu=4) (8 devices)"));
  CHECK(contains(text, "input x: float32 (8192, 8192) sharded (gpu, none): each shard (2048, 8192)"));
  CHECK(contains(text, "allreduce sum over mesh axis gpu (4 ranks x 2 groups): 32768 bytes per rank"));
  CHECK(contains(text, "total: 1 kernel per shard, 1 collective (32768 bytes per rank)"));
  const std::string json = cli::render_dist_json(p.ev, p.results, false);
  CHECK(contains(json, "\"collectives\": [{\"kind\": \"collective\", \"collective\": \"allreduce\", \"op\": \"sum\", "
                       "\"mesh_axis\": \"gpu\", \"ranks\": 4, \"groups\": 2, \"bytes\": 32768"));
  CHECK(contains(json, "\"kernels_per_shard\": 1"));
  CHECK(contains(json, "\"sharding\": [\"gpu\", null]"));
  CHECK(contains(json, "\"partial\": {\"op\": \"sum\", \"axes\": [\"gpu\"]}"));
}

TEST_CASE("programs over a mesh: statements, elementwise rows, matmul, mismatched shardings") {
  Planned p("gpu=2", {{"x=f32[64,64]", "gpu,none"}, {"y=f32[64,64]", "none,gpu"}, {"b=f32[64]", ""}},
            "t = np.maximum(x, 0) + b\nu = t * y\nmean(u @ x, axis=1)");
  const auto& r = p.results[0].value;
  CHECK(r.shape() == cf::Shape{64});
  std::vector<std::string> names;
  for (const auto& s : collectives_of(r)) names.push_back(s.collective);
  CHECK(names == std::vector<std::string>{"alltoall", "allgather"});  // y to x's rows; then x gathered for a local GEMM
  CHECK(r.sharding() == dist::Sharding{"gpu"});
}

TEST_CASE("errors over a mesh point at the program") {
  WorldScope w(dist::World::Plan, 2);
  cli::DistEvaluator ev(dist::Mesh({2}, {"gpu"}));
  ev.declare(cli::parse_arg_spec("x=f32[4,4]"), dist::Sharding{"gpu", dist::none});
  CHECK_THROWS_AS(ev.declare(cli::parse_arg_spec("z=f32[3]"), dist::Sharding{"gpu"}), cli::UsageError);
  CHECK_THROWS_AS(ev.run(cli::parse_program("sort(x)")), cli::ProgramError);
  CHECK_THROWS_AS(ev.run(cli::parse_program("x += 1")), cli::ProgramError);
  CHECK_THROWS_AS(ev.run(cli::parse_program("q + 1")), cli::ProgramError);
  try {
    ev.run(cli::parse_program("sum(x, axis=3)"));
    FAIL("no error");
  } catch (const cli::ProgramError& e) {
    CHECK(contains(e.what(), "IndexError"));
  }
}
