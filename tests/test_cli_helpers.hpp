// tests/test_cli_helpers.hpp: running a program of the cufuse-dump-kernels language in a test
// (the CLI tests of issue 30's functions: test_cli_indexing, test_cli_surface,
// test_manipulation_cli): the evaluator after the run, its results, its one result, and the
// value a name was given.
#pragma once
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/evaluator.hpp"
#include "cli/registry.hpp"
#include "cli/syntax.hpp"
#include "cufuse/cufuse.hpp"

namespace cli_test {

namespace cli = cufuse::cli;

inline cli::Evaluator run(const std::string& src) {
  cli::Evaluator ev;
  ev.run(cli::parse_program(src));
  return ev;
}

inline std::vector<cli::NamedArray> results(const std::string& src) { return run(src).results({}); }

// The program's one result (its last statement's value).
inline cufuse::Array result(const std::string& src) {
  auto r = results(src);
  REQUIRE(r.size() == 1);
  return r[0].array;
}

// The value of a name the program assigned.
inline cli::Value value_of(const std::string& src, const std::string& name) {
  cli::Evaluator ev = run(src);
  const cli::Value* v = ev.lookup(name);
  REQUIRE(v != nullptr);
  return *v;
}

}  // namespace cli_test
