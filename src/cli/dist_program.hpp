// src/cli/dist_program.hpp: cufuse-dump-kernels over a device mesh (issue 32):
//   --mesh node=2,gpu=4 --shard x=gpu,none --arg x=f32[8192,8192] 'sum(exp(x) * 2, axis=0)'
// plans the program on a dist::World::Plan world (no device, no memory): each --arg is a
// placeholder sharded as --shard says (replicated when not named), the program runs on
// DArrays (elementwise functions and operators, sum/mean/max/min/prod with axis, matmul and
// @), and the report lists each result's steps: per-shard kernels and the collectives with
// their bytes, named as NCCL names them (allreduce, allgather, reducescatter, alltoall).
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/evaluator.hpp"
#include "cufuse/dist.hpp"

namespace cufuse::cli {

// "node=2,gpu=4" -> sizes {2, 4}, names {"node", "gpu"}. Throws UsageError.
std::pair<std::vector<int>, std::vector<std::string>> parse_mesh_spec(std::string_view text);
// "x=gpu,none" -> {"x", Sharding{"gpu", none}}. Throws UsageError.
std::pair<std::string, dist::Sharding> parse_shard_spec(std::string_view text);

struct DistResult {
  std::string name;
  dist::DArray value;
};

struct DistInput {
  std::string name;
  dist::DArray value;
};

// Runs a program over DArrays. Errors: ProgramError at the expression (cufuse's errors
// included), UsageError for the command line.
class DistEvaluator {
 public:
  explicit DistEvaluator(dist::Mesh mesh) : mesh_(std::move(mesh)) {}
  void declare(const ArgSpec& a, const dist::Sharding& spec);  // UsageError on a bad spec
  void run(const Program& p);
  std::vector<DistResult> results(const std::vector<std::string>& out) const;
  const std::vector<DistInput>& inputs() const { return inputs_; }
  const dist::Mesh& mesh() const { return mesh_; }

  struct DValue {
    bool is_array = false;
    dist::DArray array;
    Scalar number;
  };

 private:
  dist::Mesh mesh_;
  std::vector<DistInput> inputs_;
  std::vector<std::pair<std::string, DValue>> vars_;
  DValue last_;
  std::string last_text_;
  std::string source_;

  DValue eval(const Expr& e);
  DValue eval_call(const Expr& e);
  DValue binary(const Expr& e, const std::string& op, const DValue& a, const DValue& b);
  const DValue* lookup(std::string_view name) const;
};

// The report: the mesh, the inputs' shardings, and per result its steps (plan_dump's text);
// --json: {"mesh", "inputs", "results": [{..., "steps": [...]}], "collectives": [...]}.
// with_source: each kernel's source after its preamble of shared helpers (full_source: all of it).
std::string render_dist_text(const DistEvaluator& ev, const std::vector<DistResult>& results, bool with_source,
                             bool full_source = false);
std::string render_dist_json(const DistEvaluator& ev, const std::vector<DistResult>& results, bool with_source);

}  // namespace cufuse::cli
