// tests/test_cli_limits.cpp: what a program for cufuse-dump-kernels cannot grow without bound
// (issue 38): nesting (brackets, calls, unary signs) and the syntax tree's depth are syntax
// errors past their limits, not a stack overflow; sequence repetition is bounded before it
// allocates; Python's integer corner cases (0 << 700, (-1) ** 3) fold as Python folds them.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "cli/evaluator.hpp"
#include "cli/numbers.hpp"
#include "cli/syntax.hpp"
#include "cufuse/cufuse.hpp"

namespace cli = cufuse::cli;

namespace {

std::string repeat(const std::string& s, int n) {
  std::string r;
  r.reserve(s.size() * size_t(n));
  for (int i = 0; i < n; ++i) r += s;
  return r;
}

// The message of the ProgramError that parsing and running `src` raises ("" if none).
std::string error_of(const std::string& src) {
  try {
    cli::Evaluator ev;
    ev.declare(cli::parse_arg_spec("x=f32[4]"));
    ev.declare(cli::parse_arg_spec("y=f32[4]"));
    ev.run(cli::parse_program(src));
  } catch (const cli::ProgramError& e) {
    return e.what();
  }
  return "";
}

// x op x op ... op x with `terms` terms.
std::string chain(const std::string& op, int terms) {
  std::string s = "x";
  for (int i = 1; i < terms; ++i) s += op + "x";
  return s;
}

}  // namespace

TEST_CASE("cli limits: deep nesting is a syntax error, not a stack overflow") {
  cufuse::BackendScope ref(cufuse::Backend::Reference);
  // Within the limits: 150 levels of each kind parse and evaluate.
  CHECK(error_of(repeat("(", 150) + "x" + repeat(")", 150)) == "");
  CHECK(error_of(repeat("-", 150) + "x") == "");
  CHECK(error_of(repeat("sin(", 150) + "x" + repeat(")", 150)) == "");
  CHECK(error_of(chain("+", 900)) == "");
  CHECK(error_of("x" + repeat("[0:]", 900)) == "");
  // Past them (the sizes of issue 38's crashes, and far past): a clear error.
  for (int n : {201, 5000, 100000}) {
    CAPTURE(n);
    CHECK(error_of(repeat("(", n) + "x" + repeat(")", n)).find("too deeply nested") != std::string::npos);
    CHECK(error_of(repeat("-", n) + "x").find("too deeply nested") != std::string::npos);
    CHECK(error_of(repeat("sin(", n) + "x" + repeat(")", n)).find("too deeply nested") != std::string::npos);
    CHECK(error_of(repeat("[", n) + "1" + repeat("]", n)).find("too deeply nested") != std::string::npos);
    CHECK(error_of("x" + repeat("**x", n)).find("too deeply nested") != std::string::npos);
  }
  // Left-associative chains grow the tree without recursing in the parser: their depth is bounded.
  for (int n : {1001, 4800, 100000}) {
    CAPTURE(n);
    CHECK(error_of(chain("+", n)).find("expression too deep") != std::string::npos);
    CHECK(error_of(chain("*", n)).find("expression too deep") != std::string::npos);
    CHECK(error_of("x" + repeat(".T", n)).find("expression too deep") != std::string::npos);
    CHECK(error_of("x" + repeat("[0:]", n)).find("expression too deep") != std::string::npos);
  }
  // Deep subtrees nested in brackets add up: 150 levels of 900-term chains are too deep.
  std::string nested = "x";
  for (int i = 0; i < 150; ++i) nested = "(" + nested + "+" + chain("+", 10) + ")";
  CHECK(error_of(nested).find("expression too deep") != std::string::npos);
  // The same work spelled as statements is fine: each statement is shallow.
  std::string stmts = "t = x";
  for (int i = 0; i < 3000; ++i) stmts += "\nt = t + x";
  CHECK(error_of(stmts) == "");
}

TEST_CASE("cli limits: sequence repetition is bounded before anything is allocated") {
  const auto t0 = std::chrono::steady_clock::now();
  for (const char* src : {"(x, y) * 0x7fffffffffffffff", "(1,)*100000000", "100000000*(1,)", "[1, 2] * 0xffffffffffffffff",
                          "t = (1,)*1048576\nt + t", "(1,)*(1<<62)"}) {
    CAPTURE(src);
    CHECK(error_of(src).find("MemoryError: a sequence of more than 1048576 items") != std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));
  // Python's small cases still work: empty for n <= 0, and shape arithmetic.
  CHECK(error_of("zeros((2,) * 3) + zeros((2,)*0 + (2, 2, 2))") == "");
  CHECK(error_of("zeros((2,) * -5 + (1,))") == "");
}

TEST_CASE("cli limits: integer folding corner cases") {
  using cufuse::Scalar;
  CHECK(cli::number_binary("<<", Scalar(int64_t{0}), Scalar(int64_t{700})).to_int64() == 0);
  CHECK_THROWS_AS(cli::number_binary("<<", Scalar(int64_t{1}), Scalar(int64_t{700})), cufuse::OverflowError);
  CHECK_THROWS_AS(cli::number_binary("<<", Scalar(int64_t{-1}), Scalar(int64_t{64})), cufuse::OverflowError);
  CHECK(cli::number_binary("<<", Scalar(int64_t{-1}), Scalar(int64_t{63})).to_int64() == INT64_MIN);
  CHECK(cli::number_binary(">>", Scalar(int64_t{-5}), Scalar(int64_t{700})).to_int64() == -1);
  CHECK(cli::number_binary("**", Scalar(int64_t{-1}), Scalar(int64_t{3})).to_int64() == -1);
  CHECK(cli::number_binary("**", Scalar(int64_t{-1}), Scalar(int64_t{4})).to_int64() == 1);
  CHECK(cli::number_binary("**", Scalar(int64_t{-1}), Scalar(int64_t{0x7fffffffffffffff})).to_int64() == -1);
  CHECK(cli::number_binary("**", Scalar(int64_t{1}), Scalar(int64_t{0x7fffffffffffffff})).to_int64() == 1);
  CHECK(cli::number_binary("**", Scalar(int64_t{0}), Scalar(int64_t{0})).to_int64() == 1);
  CHECK(cli::number_binary("**", Scalar(int64_t{-2}), Scalar(int64_t{63})).to_int64() == INT64_MIN);
  CHECK(cli::number_binary("**", Scalar(int64_t{2}), Scalar(int64_t{63})).to_uint64() == uint64_t(1) << 63);
  CHECK_THROWS_AS(cli::number_binary("**", Scalar(int64_t{2}), Scalar(int64_t{64})), cufuse::OverflowError);
  CHECK_THROWS_AS(cli::number_unary("-", Scalar(uint64_t{0xffffffffffffffff})), cufuse::OverflowError);
  CHECK(cli::number_unary("-", Scalar(int64_t{INT64_MIN + 1})).to_int64() == INT64_MAX);
}

TEST_CASE("cli limits: unparse writes what parses back to the same tree (libFuzzer's finds)") {
  auto round = [](const std::string& src) {
    auto p = cli::parse_program(src);
    REQUIRE(p.statements.size() == 1);
    const std::string once = cli::unparse(*p.statements[0].value);
    auto q = cli::parse_program(once);
    REQUIRE(q.statements.size() == 1);
    CHECK(cli::unparse(*q.statements[0].value) == once);
    return once;
  };
  CHECK(round("1_000 .x5") == "(1_000).x5");  // "1_000.x5" would read as a float and a name
  CHECK(round("(-x) ** 2") == "((-x) ** 2)");  // "-x ** 2" is -(x ** 2)
  CHECK(round("-x ** 2") == "-(x ** 2)");
  CHECK(round("x*(-'f')\\\n(-'g')** -1") == "(x * ((-'f')(-'g') ** -1))");  // a call of a unary operation
  CHECK(round("(-x)[0] + (-x).T + 1[0]") == "((-x)[0] + (-x).T + (1)[0])");
  // A flat chain as long as the parser reads (300 subtractions, mixed with additions) unparses
  // flat: bracketing each left operand nested 300 deep, past the nesting limit of 200 (found by
  // libFuzzer: tests/fuzz_cli/corpus/crash-e5b5b7e2...).
  std::string chain = "63";
  for (int k = 0; k < 300; ++k) chain += k % 7 == 3 ? " + -.3" : " - 6";
  const std::string flat = round(chain);
  CHECK(flat.size() < chain.size() + 8);
  CHECK(round("a * b - c * d - (e - f) - g") == "((a * b) - (c * d) - (e - f) - g)");
  CHECK(round("f('a\\nb\\t\\0\\\\q\\'')") == "f('a\\nb\\t\\0\\\\q\\'')");
}
