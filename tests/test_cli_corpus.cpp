// tests/test_cli_corpus.cpp: replays the fuzzing corpus of the CLI's program language
// (tests/fuzz_cli/corpus, grown by scripts/fuzz-cli.sh with libFuzzer, crashers included):
// every file parses or is a ProgramError / cufuse::Error; what parses unparses to text that
// parses to the same text; and the whole program run by the evaluator (on the reference
// backend, x and y declared) ends in a value or a ProgramError / UsageError / cufuse::Error.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/evaluator.hpp"
#include "cli/syntax.hpp"
#include "cufuse/cufuse.hpp"

namespace cli = cufuse::cli;
namespace fs = std::filesystem;

TEST_CASE("cli corpus: every fuzzed program parses, round-trips, and evaluates or is a clear error") {
  cufuse::BackendScope ref(cufuse::Backend::Reference);
  cufuse::Config saved = cufuse::config(), cfg = saved;
  cfg.max_pending_nodes = 1 << 30;  // as the tool runs: nothing evaluates on its own
  cufuse::set_config(cfg);
  const fs::path dir = fs::path(CUFUSE_SOURCE_DIR) / "tests" / "fuzz_cli" / "corpus";
  int files = 0, parsed = 0, evaluated = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    ++files;
    CAPTURE(e.path().string());
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string src = ss.str();
    cli::Program p;
    try {
      p = cli::parse_program(src);
    } catch (const cli::ProgramError& err) {
      CHECK_FALSE(cli::format_error(src, err).empty());
      continue;
    } catch (const std::exception& x) {
      FAIL_CHECK("not a ProgramError: " << std::string(x.what()));
      continue;
    }
    ++parsed;
    for (const auto& st : p.statements) {
      const std::string text = cli::unparse(*st.value);
      try {
        auto q = cli::parse_program(text);
        REQUIRE(q.statements.size() == 1);
        CHECK(cli::unparse(*q.statements[0].value) == text);
      } catch (const cli::ProgramError& err) {
        FAIL_CHECK("unparse gave '" << text << "', which does not parse: " << std::string(err.what()));
      }
    }
    try {
      cli::Evaluator ev;
      ev.declare(cli::parse_arg_spec("x=f32[4]"));
      ev.declare(cli::parse_arg_spec("y=f32[4,4]"));
      ev.run(p);
      ++evaluated;
    } catch (const cli::ProgramError&) {
    } catch (const cli::UsageError&) {
    } catch (const cufuse::Error&) {
    } catch (const std::exception& x) {
      FAIL_CHECK("the evaluator threw something else: " << std::string(x.what()));
    }
  }
  cufuse::set_config(saved);
  MESSAGE(files << " corpus programs: " << parsed << " parsed, " << evaluated << " evaluated");
  CHECK(files >= 15);
}
