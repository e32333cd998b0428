// tests/test_cli_precompile.cpp: cufuse-dump-kernels --precompile FILE (src/cli/precompile.hpp)
// in process: the file's syntax (inputs ':' program, out=, continued lines, comments), its
// errors with the line, and a run into a private disk cache: compiled the first time, found
// on disk the second (a fresh memory cache: a new process). tests/cli.cmake's `precompile`
// case runs the tool itself twice.
#include <doctest/doctest.h>

#include <sstream>

#include "cli/evaluator.hpp"
#include "cli/precompile.hpp"
#include "compile/compiler.hpp"
#include "test_sandbox.hpp"

namespace cli = cufuse::cli;

TEST_CASE("precompile file: entries, inputs with spaced shapes, out=, continued lines and comments") {
  const auto e = cli::parse_precompile_file(
      "# a comment\n"
      "\n"
      "x=f32[64, 64] y=f32[64] : sqrt(x*x + y)\n"
      "x=f16[8,8] out=a,b : a = x * 2; \\\n"
      "   b = exp(x)\n"
      "  : arange(8)[1:] * 2\r\n");
  REQUIRE(e.size() == 3);
  CHECK(e[0].line == 3);
  CHECK(e[0].args == std::vector<std::string>{"x=f32[64, 64]", "y=f32[64]"});
  CHECK(e[0].program == "sqrt(x*x + y)");
  CHECK(e[0].outs.empty());
  CHECK(e[1].line == 4);
  CHECK(e[1].outs == std::vector<std::string>{"a", "b"});
  CHECK(e[1].program == "a = x * 2;     b = exp(x)");
  CHECK(e[2].line == 6);
  CHECK(e[2].args.empty());
  CHECK(e[2].program == "arange(8)[1:] * 2");  // the first ':' separates; slices keep theirs

  CHECK_THROWS_WITH_AS(cli::parse_precompile_file("x=f32[4] x * 2\n"), doctest::Contains("line 1: expected 'INPUTS : PROGRAM'"),
                       cli::UsageError);
  CHECK_THROWS_WITH_AS(cli::parse_precompile_file("\n\nx=f32[4] :   \n"), doctest::Contains("line 3: no program"),
                       cli::UsageError);
  CHECK_THROWS_WITH_AS(cli::parse_precompile_file("x=f32[4] out= : x\n"), doctest::Contains("out= names no result"),
                       cli::UsageError);
  CHECK_THROWS_WITH_AS(cli::parse_precompile_file("x=f32[4] : x * \\\n"), doctest::Contains("inside a continued line"),
                       cli::UsageError);
}

TEST_CASE("precompile file: a run compiles into the disk cache; a second run finds every kernel on disk") {
  cufuse_test::Sandbox sandbox;
  const std::string file =
      "x=f32[256,512] : e = exp(x - max(x, axis=1, keepdims=True)); e / sum(e, axis=1, keepdims=True)\n"
      "x=f32[1024] y=f32[1024] out=a,b : a = x * y; b = sqrt(x * x + y)\n";
  std::ostringstream out, err;
  CHECK(cli::run_precompile("p.txt", file, 90, out, err) == 0);
  CHECK(err.str().empty());
  CHECK(out.str().find("p.txt line 1: 1 kernel(s): 1 compiled, 0 from the disk cache, 0 already in memory") != std::string::npos);
  CHECK(out.str().find("p.txt line 2: 1 kernel(s): 1 compiled") != std::string::npos);
  CHECK(out.str().find("precompiled 2 program(s) for sm_90: 2 kernel(s), 2 compiled by NVRTC, 0 found on disk, 0 in memory") !=
        std::string::npos);

  cufuse::detail::clear_memory_cache();
  std::ostringstream out2, err2;
  CHECK(cli::run_precompile("p.txt", file, 90, out2, err2) == 0);
  CHECK(out2.str().find("2 kernel(s), 0 compiled by NVRTC, 2 found on disk, 0 in memory") != std::string::npos);
  std::ostringstream out3, err3;  // and a third, in the same process: in memory
  CHECK(cli::run_precompile("p.txt", file, 90, out3, err3) == 0);
  CHECK(out3.str().find("0 compiled by NVRTC, 0 found on disk, 2 in memory") != std::string::npos);
}

TEST_CASE("precompile file: a bad program is reported at its line, the others still compile; exit status 2") {
  cufuse_test::Sandbox sandbox;
  std::ostringstream out, err;
  const int rc = cli::run_precompile("p.txt", "x=f32[16] : sqrt(x*x + )\nx=f32[16] : x * 3\nx=f32[3] y=f32[4] : x + y\n"
                                     "x=q32[4] : x\n", 90, out, err);
  CHECK(rc == 2);
  CHECK(err.str().find("p.txt line 1") != std::string::npos);
  CHECK(err.str().find("p.txt line 3") != std::string::npos);  // shapes that do not broadcast
  CHECK(err.str().find("p.txt line 4 input") != std::string::npos);
  CHECK(out.str().find("p.txt line 2: 1 kernel(s): 1 compiled") != std::string::npos);
  CHECK(out.str().find("precompiled 1 program(s)") != std::string::npos);

  cufuse_test::ScopedEnv off("CUFUSE_CACHE", "0");
  cufuse::detail::reset_disk_cache_settings();
  std::ostringstream out4, err4;
  CHECK(cli::run_precompile("p.txt", "x=f32[16] : x * 3\n", 90, out4, err4) == 2);
  CHECK(err4.str().find("--precompile fills the disk kernel cache, which is off") != std::string::npos);
  cufuse::detail::reset_disk_cache_settings();
}
