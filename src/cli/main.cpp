// src/cli/main.cpp: cufuse-dump-kernels — what cufuse makes of one NumPy-spelled program:
// the plan (groups and the rule that cut each), every kernel's CUDA source, and NVRTC's
// verdict (time, registers, spills) for an arch. Runs without a GPU.
//
//   cufuse-dump-kernels --arg x=f32[4096,4096] --arg y=f32[4096] 'sqrt(x*x + y)'
//   cufuse-dump-kernels --arg x=f16[1024,1024] --out a,b 'a = x * 2; b = exp(x)'   # one kernel, two outputs
//   cufuse-dump-kernels --arg x=f32[64,64] --arg y=f32[64] 'x[1:] += y; x'        # a write in place, then x
//   cufuse-dump-kernels --json ...    --dot plan.dot ...    --arch 80    --no-source
//   cufuse-dump-kernels --precompile programs.txt --arch 90     (fill the disk cache: cli/precompile.hpp)
//   cufuse-dump-kernels --mesh node=2,gpu=4 --shard x=gpu,none --arg x=f32[8192,8192] 'sum(exp(x) * 2, axis=0)'
//       (over a device mesh: per-shard kernels and the collectives with their bytes; dist_program.hpp)
//
// Exit status: 0 on success, 1 when a kernel failed to compile (reported and skipped),
// 2 for a bad program or command line (the error points at the line and column).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/dist_program.hpp"
#include "cli/precompile.hpp"
#include "cli/evaluator.hpp"
#include "cli/registry.hpp"
#include "cli/report.hpp"
#include "cli/syntax.hpp"
#include "compile/compiler.hpp"
#include "cufuse/error.hpp"
#include "cufuse/eval.hpp"
#include "runtime/context.hpp"

namespace cli = cufuse::cli;

namespace {

constexpr int kExitCompileFailed = 1;
constexpr int kExitBadProgram = 2;

// "80", "sm_80", "compute_80", "8.0" -> 80.
int parse_arch(std::string s) {
  for (const char* p : {"sm_", "compute_", "sm", "compute"})
    if (s.rfind(p, 0) == 0) {
      s = s.substr(std::string(p).size());
      break;
    }
  if (auto dot = s.find('.'); dot != std::string::npos) s.erase(dot, 1);
  if (s.empty() || s.size() > 3 || s.find_first_not_of("0123456789") != std::string::npos)
    throw CLI::ValidationError("--arch", "expected a compute capability such as 80, 90, sm_90 or 8.6");
  const int v = std::stoi(s);
  if (v < 50) throw CLI::ValidationError("--arch", fmt::format("sm_{} is older than NVRTC supports", v));
  return v;
}

std::vector<std::string> split_names(const std::vector<std::string>& outs) {
  std::vector<std::string> names;
  for (const auto& o : outs) {
    std::stringstream ss(o);
    std::string part;
    while (std::getline(ss, part, ',')) {
      const auto b = part.find_first_not_of(' '), e = part.find_last_not_of(' ');
      if (b != std::string::npos) names.push_back(part.substr(b, e - b + 1));
    }
  }
  return names;
}

int usage_error(const std::string& what) {
  std::cerr << "cufuse-dump-kernels: error: " << what << "\n";
  return kExitBadProgram;
}

void list_functions() {
  for (const auto& row : cli::function_table())
    std::cout << fmt::format("{:<52} {}{}\n", cli::signature(row), row.doc, row.method ? " [also a method]" : "");
}

// --mesh: the program over DArrays on a planning world (no device), per-shard kernels and
// collectives (src/cli/dist_program.hpp).
int run_dist(const std::string& mesh_text, const std::vector<std::string>& shard_specs,
             const std::vector<std::string>& arg_specs, const std::string& program, const std::vector<std::string>& outs,
             bool json, bool with_source, bool full_source) {
  std::string out;
  try {
    auto [sizes, names] = cli::parse_mesh_spec(mesh_text);
    int64_t n = 1;
    for (int s : sizes) n = std::min<int64_t>(n * std::max(s, 1), int64_t(1) << 20);
    cufuse::dist::init(cufuse::dist::World::Plan, static_cast<int>(n));
    struct Fin {
      ~Fin() { cufuse::dist::finalize(); }
    } fin;
    cli::DistEvaluator ev(cufuse::dist::Mesh(sizes, names));
    std::vector<std::pair<std::string, cufuse::dist::Sharding>> shards;
    for (const auto& s : shard_specs) shards.push_back(cli::parse_shard_spec(s));
    for (const auto& [name, spec] : shards) {
      bool found = false;
      for (const auto& a : arg_specs) found |= a.rfind(name + "=", 0) == 0;
      if (!found) throw cli::UsageError("--shard " + name + ": no --arg of that name");
    }
    for (const auto& spec : arg_specs) {
      cli::ArgSpec a;
      try {
        a = cli::parse_arg_spec(spec);
      } catch (const cli::ProgramError& e) {
        std::cerr << cli::format_error(spec, e, "--arg");
        return kExitBadProgram;
      }
      auto sharding = cufuse::dist::Sharding::replicated(static_cast<int>(a.shape.size()));
      for (const auto& [name, sp] : shards)
        if (name == a.name) sharding = sp;
      ev.declare(a, sharding);
    }
    try {
      ev.run(cli::parse_program(program));
    } catch (const cli::ProgramError& e) {
      std::cerr << cli::format_error(program, e);
      return kExitBadProgram;
    }
    const auto results = ev.results(outs);
    out = json ? cli::render_dist_json(ev, results, with_source)
               : cli::render_dist_text(ev, results, with_source, full_source);
  } catch (const cli::UsageError& e) {
    return usage_error(e.what());
  } catch (const cufuse::Error& e) {
    return usage_error(e.what());
  }
  std::cout << out;
  std::cout.flush();
  return std::cout.good() ? 0 : kExitBadProgram;
}

int run_tool(int argc, char** argv) {
  CLI::App app{"cufuse-dump-kernels: show the fusion plan, CUDA source and NVRTC result of a NumPy-spelled program.\n"
               "Functions go by their NumPy names (np. prefix optional); --list-functions lists them."};
  std::string program;
  std::vector<std::string> arg_specs, outs;
  std::string arch_text, dot_file;
  bool no_source = false, full_source = false, json = false, no_compile = false, no_cache = false, list = false;
  app.add_option("program", program,
                 "the program: expressions, NAME = expression, and in-place writes (x += e, x[1:, ::2] = e, "
                 "x[i] *= e) separated by ';' or new lines "
                 "('-' reads it from stdin; put a program that starts with '-' after --)");
  app.add_option("--arg", arg_specs, "NAME=DTYPE[SHAPE]: a placeholder input, e.g. x=f32[4096,4096] (s=f64[] is 0-d); repeat it for each input")
      ->allow_extra_args(false);
  app.add_option("--out", outs, "results to compute, by name: a,b (default: the last statement's value)")
      ->allow_extra_args(false);
  app.add_option("--arch", arch_text, "compile for this arch: 80, sm_90 ... (default: the current device's, else sm_90)");
  app.add_flag("--no-source", no_source, "omit the kernels' CUDA source");
  app.add_flag("--full-source", full_source, "print each kernel's whole source, with the preamble all kernels share");
  app.add_flag("--json", json, "print the plan as JSON (kernels, library_calls, results)");
  app.add_option("--dot", dot_file, "write the plan as a Graphviz graph (one cluster per kernel) to FILE");
  app.add_flag("--no-compile", no_compile, "plan and generate only; skip NVRTC");
  app.add_flag("--no-cache", no_cache, "ignore the disk kernel cache, so compile times are real (CUFUSE_CACHE=0)");
  app.add_flag("--list-functions", list, "list the functions a program can call, and exit");
  std::string precompile_file;
  app.add_option("--precompile", precompile_file,
                 "compile the kernels of every program in FILE into the disk cache (CUFUSE_CACHE_DIR) and print a "
                 "summary, so a service can ship a warm cache. FILE: one program per line, its inputs before a ':' "
                 "(x=f32[4096,4096] y=f32[4096] : sqrt(x*x + y); out=a,b names the results; ': arange(8) * 2' has "
                 "none), '\\' at a line's end continues it, '#' starts a comment; '-' reads standard input");
  std::string mesh_text;
  std::vector<std::string> shard_specs;
  app.add_option("--mesh", mesh_text, "plan over a device mesh, NAME=SIZE per axis: node=2,gpu=4 (no device needed)");
  app.add_option("--shard", shard_specs, "NAME=AXIS,...: how an --arg is sharded over --mesh, a mesh axis or none per "
                 "dimension (default: replicated); repeat it for each input")
      ->allow_extra_args(false);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    if (rc != 0 && program.empty() && std::string(e.what()).find("not expected: -") != std::string::npos)
      std::cerr << "(a program that starts with '-' goes after --: cufuse-dump-kernels --arg ... -- '-x')\n";
    return rc == 0 ? 0 : kExitBadProgram;
  }
  if (list) {
    list_functions();
    return 0;
  }
  if (program.empty() && precompile_file.empty()) {
    std::cerr << "cufuse-dump-kernels: error: no program given (try 'sqrt(x*x + y)' with --arg x=f32[64,64] --arg "
                 "y=f32[64]; --help for more)\n";
    return kExitBadProgram;
  }
  if (program == "-") program.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (no_cache) {
    ::setenv("CUFUSE_CACHE", "0", 1);
    cufuse::detail::runtime().reload_settings();  // the context may have read the environment already
  }

  int arch = 0;
  try {
    arch = arch_text.empty() ? cufuse::detail::default_arch() : parse_arch(arch_text);
  } catch (const CLI::Error& e) {
    std::cerr << "cufuse-dump-kernels: error: " << e.what() << "\n";
    return kExitBadProgram;
  }
  // Planning never evaluates: keep the graph-size budget from evaluating anything on its own.
  cufuse::Config cfg = cufuse::config();
  cfg.max_pending_nodes = std::numeric_limits<int32_t>::max();
  cfg.max_pinned_bytes = std::numeric_limits<uint64_t>::max();
  cufuse::set_config(cfg);

  if (!precompile_file.empty()) {
    if (!program.empty() || !arg_specs.empty() || !outs.empty() || !mesh_text.empty() || no_compile || no_cache)
      return usage_error("--precompile takes its programs, inputs and results from FILE (no program, --arg, --out, "
                         "--mesh, --no-compile or --no-cache beside it)");
    std::string text;
    if (precompile_file == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      std::ifstream f(precompile_file, std::ios::binary);
      if (!f) return usage_error("cannot read " + precompile_file);
      text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    const int rc = cli::run_precompile(precompile_file, text, arch, std::cout, std::cerr);
    std::cout.flush();
    return rc;
  }

  if (!mesh_text.empty() || !shard_specs.empty()) {
    if (mesh_text.empty()) {
      std::cerr << "cufuse-dump-kernels: error: --shard needs --mesh\n";
      return kExitBadProgram;
    }
    return run_dist(mesh_text, shard_specs, arg_specs, program, split_names(outs), json, !no_source, full_source);
  }

  cli::Evaluator ev;
  for (const auto& spec : arg_specs) {
    try {
      ev.declare(cli::parse_arg_spec(spec));
    } catch (const cli::ProgramError& e) {
      std::cerr << cli::format_error(spec, e, "--arg");
      return kExitBadProgram;
    } catch (const cli::UsageError& e) {
      std::cerr << "cufuse-dump-kernels: error: " << e.what() << "\n";
      return kExitBadProgram;
    }
  }

  std::vector<cufuse::cli::NamedArray> results;
  try {
    cli::Program p = cli::parse_program(program);
    ev.run(p);
    results = ev.results(split_names(outs));
  } catch (const cli::ProgramError& e) {
    std::cerr << cli::format_error(program, e);
    return kExitBadProgram;
  } catch (const cli::UsageError& e) {
    return usage_error(e.what());
  } catch (const cufuse::Error& e) {
    return usage_error(e.what());
  }

  cli::Report report;
  try {
    cli::ReportOptions opt;
    opt.arch = arch;
    opt.compile = !no_compile;
    opt.placeholder_names = ev.placeholder_names();
    opt.slots = ev.slots();
    report = cli::build_report(ev.evaluations(), results, opt);
  } catch (const cufuse::Error& e) {
    std::cerr << "cufuse-dump-kernels: error while planning: " << e.what() << "\n";
    return kExitBadProgram;
  }

  if (!dot_file.empty()) {
    std::ofstream f(dot_file, std::ios::binary | std::ios::trunc);
    f << cli::render_dot(report);
    f.close();  // flushes: a write that fails (a full disk, /dev/full) fails here
    if (f.fail()) {
      std::cerr << "cufuse-dump-kernels: error: cannot write " << dot_file << "\n";
      return kExitBadProgram;
    }
  }
  std::cout << (json ? cli::render_json(report, !no_source) : cli::render_text(report, no_source     ? cli::SourceMode::None
                                                                : full_source ? cli::SourceMode::Full
                                                                              : cli::SourceMode::Body));
  std::cout.flush();
  if (!std::cout.good()) {
    std::cerr << "cufuse-dump-kernels: error: cannot write the report to standard output\n";
    return kExitBadProgram;
  }
  const int failed = report.failed_compiles();
  if (failed) {
    std::cerr << fmt::format("cufuse-dump-kernels: {} kernel{} failed to compile for sm_{}\n", failed,
                             failed == 1 ? "" : "s", arch);
    return kExitCompileFailed;
  }
  return 0;
}

}  // namespace

// No exception leaves the tool: cufuse's are reported where they arise above; anything else
// (an allocation that fails, a bug) is one line and exit status 2, never std::terminate.
int main(int argc, char** argv) {
  try {
    return run_tool(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "cufuse-dump-kernels: error: out of host memory\n";
  } catch (const cufuse::Error& e) {
    std::cerr << "cufuse-dump-kernels: error: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "cufuse-dump-kernels: internal error: " << e.what() << "\n";
  }
  return kExitBadProgram;
}
