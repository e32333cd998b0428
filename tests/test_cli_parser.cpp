// tests/test_cli_parser.cpp: the program language of cufuse-dump-kernels (src/cli): tokens,
// precedence, statements, error locations and carets, --arg specs, Python number folding,
// and the evaluator's mapping onto cufuse (shapes, dtypes, views, the function table).
#include <doctest/doctest.h>

#include <string>

#include "cli/evaluator.hpp"
#include "cli/numbers.hpp"
#include "cli/registry.hpp"
#include "cli/syntax.hpp"
#include "core/op_table.hpp"
#include "cufuse/cufuse.hpp"

namespace cli = cufuse::cli;
using cli::ExprKind;

namespace {

std::string parse1(const std::string& src) {
  auto p = cli::parse_program(src);
  REQUIRE(p.statements.size() == 1);
  return cli::unparse(*p.statements[0].value);
}

// The error a program raises (parse and run), or "" if none.
cli::ProgramError error_of(const std::string& src, std::vector<std::string> args = {}) {
  try {
    cli::Evaluator ev;
    for (const auto& a : args) ev.declare(cli::parse_arg_spec(a));
    ev.run(cli::parse_program(src));
  } catch (const cli::ProgramError& e) {
    return e;
  }
  FAIL("expected a ProgramError from: " << src);
  return cli::ProgramError(cli::ProgramError::Kind::Syntax, "", {});
}

cli::Evaluator run(const std::string& src, std::vector<std::string> args = {}) {
  cli::Evaluator ev;
  for (const auto& a : args) ev.declare(cli::parse_arg_spec(a));
  ev.run(cli::parse_program(src));
  return ev;
}

cufuse::Array result(const std::string& src, std::vector<std::string> args = {}) {
  auto ev = run(src, std::move(args));
  auto r = ev.results({});
  REQUIRE(r.size() == 1);
  return r[0].array;
}

}  // namespace

TEST_CASE("cli lexer: numbers, strings, operators, locations") {
  auto t = cli::tokenize("x1 = 0x1F + 1_000 * 1e-5 // .5\n'a\\'b' ** ...");
  REQUIRE(t.size() >= 12);
  CHECK(t[0].kind == cli::Tok::Name);
  CHECK(t[0].text == "x1");
  CHECK(t[2].kind == cli::Tok::Int);
  CHECK(t[2].number.to_int64() == 31);
  CHECK(t[4].number.to_int64() == 1000);
  CHECK(t[6].kind == cli::Tok::Float);
  CHECK(t[6].number.to_double() == doctest::Approx(1e-5));
  CHECK(t[7].text == "//");
  CHECK(t[8].number.to_double() == 0.5);
  CHECK(t[9].kind == cli::Tok::Newline);
  CHECK(t[10].kind == cli::Tok::String);
  CHECK(t[10].text == "a'b");
  CHECK(t[10].loc.line == 2);
  CHECK(t[10].loc.column == 1);
  CHECK(t[11].text == "**");
  CHECK(t[11].loc.column == 8);
  CHECK(t[12].text == "...");
  CHECK(t.back().kind == cli::Tok::End);
  // An int past int64 is a uint64 Python int; past uint64, an error.
  CHECK(cli::tokenize("18446744073709551615")[0].number.kind() == cufuse::Scalar::Kind::UInt);
  CHECK_THROWS_AS(cli::tokenize("18446744073709551616"), cli::ProgramError);
  CHECK(cli::tokenize("1j")[0].number.kind() == cufuse::Scalar::Kind::Complex);  // an imaginary literal
  CHECK_THROWS_AS(cli::tokenize("x $ y"), cli::ProgramError);
  // Newlines inside brackets do not end a statement; comments are skipped.
  auto p = cli::parse_program("a = maximum(x,\n  y)  # comment\nb = a");
  CHECK(p.statements.size() == 2);
}

TEST_CASE("cli parser: Python's precedence") {
  CHECK(parse1("a + b * c") == "(a + (b * c))");
  CHECK(parse1("a - b - c") == "(a - b - c)");  // left-associative: a chain of one level unbracketed
  CHECK(parse1("a - (b - c)") == "(a - (b - c))");
  CHECK(parse1("-a ** 2") == "-(a ** 2)");
  CHECK(parse1("a ** -b") == "(a ** -b)");
  CHECK(parse1("a ** b ** c") == "(a ** (b ** c))");
  CHECK(parse1("a & b | c ^ d") == "((a & b) | (c ^ d))");
  CHECK(parse1("a << 1 + 2") == "(a << (1 + 2))");
  CHECK(parse1("a < b + 1") == "(a < (b + 1))");
  CHECK(parse1("a @ b + c") == "((a @ b) + c)");
  CHECK(parse1("~a // b % c") == "(~a // b % c)");
  CHECK(parse1("x.T[:, None]") == "x.T[:, None]");
  CHECK(parse1("x[::-1, 1:, ..., 0]") == "x[::-1, 1:, ..., 0]");
  CHECK(parse1("sum(x, axis=1, keepdims=True)") == "sum(x, axis=1, keepdims=True)");
  CHECK(parse1("einsum(\"ij,ij->i\", a, b)") == "einsum('ij,ij->i', a, b)");
  CHECK(parse1("x.astype('f16').reshape(2, -1)") == "x.astype('f16').reshape(2, -1)");
  CHECK(parse1("(1,)") == "(1,)");
  CHECK(parse1("a, b") == "(a, b)");
  CHECK(parse1("[1, 2][0]") == "[1, 2][0]");
  CHECK(parse1("()") == "()");
}

TEST_CASE("cli parser: statements and separators") {
  auto p = cli::parse_program("a = x + 1; b = a * 2\n\n c = b;");
  REQUIRE(p.statements.size() == 3);
  CHECK(p.statements[0].target == "a");
  CHECK(p.statements[2].target == "c");
  CHECK(p.statements[2].target_loc.line == 3);
  CHECK(p.statements[2].target_loc.column == 2);
  CHECK(cli::parse_program("").statements.empty());
}

TEST_CASE("cli parser: syntax errors point at the spot") {
  auto err = [](const std::string& src) {
    try {
      cli::parse_program(src);
    } catch (const cli::ProgramError& e) {
      CHECK(e.kind() == cli::ProgramError::Kind::Syntax);
      return e;
    }
    FAIL("no syntax error in: " << src);
    return cli::ProgramError(cli::ProgramError::Kind::Syntax, "", {});
  };
  auto e = err("sqrt(x*x + )");
  CHECK(e.loc().column == 12);
  CHECK(std::string(e.what()).find("')'") != std::string::npos);
  CHECK(cli::format_error("sqrt(x*x + )", e) ==
        "program:1:12: syntax error: unexpected ')': expected an expression\n"
        "    sqrt(x*x + )\n"
        "               ^\n");
  e = err("a = 1\nb = (x + 2");
  CHECK(e.loc().line == 2);
  CHECK(e.loc().column == 5);
  CHECK(std::string(e.what()).find("never closed") != std::string::npos);
  e = err("x)");
  CHECK(std::string(e.what()).find("unmatched ')'") != std::string::npos);
  CHECK(std::string(err("a < b < c").what()).find("chained") != std::string::npos);
  CHECK(std::string(err("a and b").what()).find("&") != std::string::npos);
  // Assignment targets: a name or a subscript (in-place writes: tests/test_cli_inplace.cpp).
  CHECK(std::string(err("x.T += 1").what()).find("cannot assign to attribute 'T'") != std::string::npos);
  CHECK(std::string(err("a, b = 1, 2").what()).find("tuple unpacking is not supported") != std::string::npos);
  CHECK(std::string(err("f(x) = 1").what()).find("cannot assign to a function call") != std::string::npos);
  CHECK(std::string(err("True = 1").what()).find("cannot assign to True") != std::string::npos);
  CHECK(std::string(err("a = b = 1").what()).find("chained assignment") != std::string::npos);
  CHECK(std::string(err("x[0] += y += 1").what()).find("chained assignment") != std::string::npos);
  CHECK(err("x + 1 -= 2").loc().column == 1);
  CHECK(std::string(err("f(a=1, 2)").what()).find("positional argument follows keyword") != std::string::npos);
  CHECK(std::string(err("a if b else c").what()).find("where") != std::string::npos);
  err("1 = x");
  err("x[]");
  err("x.");
  err("{1: 2}");
  // The caret lines up under tabs and after multi-byte characters.
  e = err("\tx + )");
  CHECK(cli::format_error("\tx + )", e).find("\n    \t    ^\n") != std::string::npos);
}

TEST_CASE("cli --arg specs") {
  auto a = cli::parse_arg_spec("x=f32[4096,4096]");
  CHECK(a.name == "x");
  CHECK(a.dtype == cufuse::f32);
  CHECK(a.shape == cufuse::Shape{4096, 4096});
  a = cli::parse_arg_spec("s=float64[]");
  CHECK(a.dtype == cufuse::f64);
  CHECK(a.shape.empty());
  a = cli::parse_arg_spec("m=bf16[8, 128,]");
  CHECK(a.dtype == cufuse::bf16);
  CHECK(a.shape == cufuse::Shape{8, 128});
  a = cli::parse_arg_spec("v=int8(3)");
  CHECK(a.shape == cufuse::Shape{3});
  CHECK_THROWS_AS(cli::parse_arg_spec("x"), cli::ProgramError);
  CHECK_THROWS_AS(cli::parse_arg_spec("x=f32"), cli::ProgramError);
  CHECK_THROWS_AS(cli::parse_arg_spec("x=f32[4"), cli::ProgramError);
  CHECK_THROWS_AS(cli::parse_arg_spec("x=f32[-1]"), cli::ProgramError);
  CHECK_THROWS_AS(cli::parse_arg_spec("1x=f32[1]"), cli::ProgramError);
  try {
    cli::parse_arg_spec("x=f99[4]");
    FAIL("f99 parsed");
  } catch (const cli::ProgramError& e) {
    CHECK(e.loc().column == 3);
    CHECK(e.length() == 3);
  }
}

TEST_CASE("cli numbers fold as in Python") {
  using cufuse::Scalar;
  auto b = [](const char* op, Scalar x, Scalar y) { return cli::number_binary(op, x, y); };
  CHECK(b("+", int64_t{2}, int64_t{3}).to_int64() == 5);
  CHECK(b("/", int64_t{1}, int64_t{2}).to_double() == 0.5);
  CHECK(b("//", int64_t{7}, int64_t{-2}).to_int64() == -4);
  CHECK(b("%", int64_t{-7}, int64_t{3}).to_int64() == 2);
  CHECK(b("//", 7.0, -2.0).to_double() == -4.0);
  CHECK(b("%", -7.0, 3.0).to_double() == 2.0);
  CHECK(b("**", int64_t{2}, int64_t{10}).to_int64() == 1024);
  CHECK(b("**", int64_t{2}, int64_t{-1}).to_double() == 0.5);
  CHECK(b("<", int64_t{1}, 1.5).to_bool());
  CHECK(b("&", true, false).kind() == Scalar::Kind::Bool);
  CHECK(b("<<", int64_t{1}, int64_t{40}).to_int64() == (int64_t{1} << 40));
  CHECK(cli::number_unary("-", int64_t{5}).to_int64() == -5);
  CHECK(cli::number_unary("~", int64_t{5}).to_int64() == -6);
  CHECK(b("*", int64_t{2}, int64_t{3}).weak());
  CHECK_THROWS_AS(b("//", int64_t{1}, int64_t{0}), cufuse::ValueError);
  CHECK_THROWS_AS(b("**", int64_t{10}, int64_t{40}), cufuse::OverflowError);
  CHECK_THROWS_AS(b("&", 1.0, int64_t{1}), cufuse::TypeError);
  // A strong scalar keeps its dtype next to a weak one.
  Scalar f = Scalar::typed(Scalar(2.0), cufuse::f32);
  CHECK(b("*", f, int64_t{3}).dtype() == cufuse::f32);
  CHECK(!b("*", f, int64_t{3}).weak());
}

TEST_CASE("cli evaluator: operators and functions build the right arrays") {
  const std::vector<std::string> xy = {"x=f32[4096,4096]", "y=f32[4096]"};
  auto r = result("sqrt(x*x + y)", xy);
  CHECK(r.dtype() == cufuse::f32);
  CHECK(r.shape() == cufuse::Shape{4096, 4096});
  // Python scalars are weak: f16 stays f16.
  CHECK(result("h * 2.5 + 1", {"h=f16[8]"}).dtype() == cufuse::f16);
  CHECK(result("i / 2", {"i=i32[8]"}).dtype() == cufuse::f64);
  CHECK(result("i // 2", {"i=i32[8]"}).dtype() == cufuse::i32);
  CHECK(result("x < y", xy).dtype() == cufuse::bool_);
  CHECK(result("where(x > 0, x, 0.0)", xy).dtype() == cufuse::f32);
  CHECK(result("fma(x, y, 1.0)", xy).dtype() == cufuse::f32);  // the op row fma (TERNARY)
  CHECK_THROWS_WITH(result("fma(i, i, i)", {"i=i32[8]"}), doctest::Contains("TypeError: ufunc 'fma'"));
  CHECK(result("clip(x, -1, 1)", xy).shape() == cufuse::Shape{4096, 4096});
  CHECK(result("clip(x, None, 1)", xy).dtype() == cufuse::f32);
  CHECK(result("maximum(x, y)", xy).shape() == cufuse::Shape{4096, 4096});
  CHECK(result("abs(-x)", xy).dtype() == cufuse::f32);
  CHECK(result("np.exp(x)", xy).dtype() == cufuse::f32);
  CHECK(result("~b | b", {"b=bool[3]"}).dtype() == cufuse::bool_);
  CHECK(result("i << 2 >> 1 ^ 3 & i", {"i=i64[3]"}).dtype() == cufuse::i64);
  CHECK(result("i ** 2 % 7", {"i=u8[3]"}).dtype() == cufuse::u8);
  // Casts: function, method, dtype objects, dtype calls.
  CHECK(result("astype(x, 'f16')", xy).dtype() == cufuse::f16);
  CHECK(result("x.astype('bfloat16')", xy).dtype() == cufuse::bf16);
  CHECK(result("x.astype(float16)", xy).dtype() == cufuse::f16);
  CHECK(result("x.astype(y.dtype)", {"x=i8[3]", "y=f64[3]"}).dtype() == cufuse::f64);
  CHECK(result("float16(x)", xy).dtype() == cufuse::f16);
  CHECK(result("x * float64(2)", xy).dtype() == cufuse::f64);
  // Creation.
  CHECK(result("arange(10)").dtype() == cufuse::i64);
  CHECK(result("arange(0, 1, 0.25)").shape() == cufuse::Shape{4});
  CHECK(result("arange(5, dtype='f32')").dtype() == cufuse::f32);
  CHECK(result("linspace(0, 1, 7)").shape() == cufuse::Shape{7});
  CHECK(result("zeros((2, 3))").dtype() == cufuse::f64);
  CHECK(result("ones(4, dtype=int32)").dtype() == cufuse::i32);
  CHECK(result("full((2, 2), 7, 'i16')").dtype() == cufuse::i16);
  CHECK(result("zeros_like(x) + ones_like(x, dtype='f64')", xy).dtype() == cufuse::f64);
}

TEST_CASE("cli evaluator: reductions and scans by their NumPy names") {
  const std::vector<std::string> a = {"x=f32[4,6]"};
  CHECK(result("sum(x, axis=1, keepdims=True)", a).shape() == cufuse::Shape{4, 1});
  CHECK(result("x.sum(1)", a).shape() == cufuse::Shape{4});
  CHECK(result("x.sum(axis=(0, 1))", a).shape().empty());
  CHECK(result("x.mean()", a).shape().empty());
  CHECK(result("sum(x, 0, 'f64')", a).dtype() == cufuse::f64);
  CHECK(result("var(x, axis=0, ddof=1)", a).shape() == cufuse::Shape{6});
  CHECK(result("x.std(axis=-1)", a).shape() == cufuse::Shape{4});
  CHECK(result("max(x, axis=0) - amin(x, axis=0)", a).shape() == cufuse::Shape{6});
  CHECK(result("argmax(x, axis=1)", a).dtype() == cufuse::i64);
  CHECK(result("x.argmin()", a).shape().empty());
  CHECK(result("cumsum(x, axis=1)", a).shape() == cufuse::Shape{4, 6});
  CHECK(result("(x > 0).any(axis=1)", a).dtype() == cufuse::bool_);
  CHECK(result("np.linalg.norm(x, axis=-1)", a).shape() == cufuse::Shape{4});
  CHECK(result("linalg.norm(x, ord=1)", a).shape().empty());
  CHECK(result("e = exp(x - x.max(axis=1, keepdims=True)); e / e.sum(axis=1, keepdims=True)", a).shape() ==
        cufuse::Shape{4, 6});
}

TEST_CASE("cli evaluator: views, slices and attributes") {
  const std::vector<std::string> a = {"x=f32[4,6]"};
  CHECK(result("x.T", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("x[:, None]", a).shape() == cufuse::Shape{4, 1, 6});
  CHECK(result("x[None, ..., None]", a).shape() == cufuse::Shape{1, 4, 6, 1});
  CHECK(result("x[1]", a).shape() == cufuse::Shape{6});
  CHECK(result("x[-1, ::2]", a).shape() == cufuse::Shape{3});
  CHECK(result("x[::-1, 1:5:3]", a).shape() == cufuse::Shape{4, 2});
  CHECK(result("x[(0, 1)]", a).shape().empty());
  CHECK(result("x.reshape(2, -1)", a).shape() == cufuse::Shape{2, 12});
  CHECK(result("x.reshape((3, 8))", a).shape() == cufuse::Shape{3, 8});
  CHECK(result("reshape(x, (24,))", a).shape() == cufuse::Shape{24});
  CHECK(result("reshape(x, shape=[8, 3])", a).shape() == cufuse::Shape{8, 3});
  CHECK(result("transpose(x)", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("x[None].transpose(2, 0, 1)", a).shape() == cufuse::Shape{6, 1, 4});
  CHECK(result("transpose(x[None], (1, 2, 0))", a).shape() == cufuse::Shape{4, 6, 1});
  CHECK(result("swapaxes(x, 0, 1)", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("x.swapaxes(0, -1)", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("expand_dims(x, (0, -1))", a).shape() == cufuse::Shape{1, 4, 6, 1});
  CHECK(result("x.expand_dims(1)", a).shape() == cufuse::Shape{4, 1, 6});
  CHECK(result("squeeze(x[:, None])", a).shape() == cufuse::Shape{4, 6});
  CHECK(result("x[:, None].squeeze(axis=1)", a).shape() == cufuse::Shape{4, 6});
  CHECK(result("broadcast_to(x[0], (3, 6))", a).shape() == cufuse::Shape{3, 6});
  CHECK(result("x[0].broadcast_to((2, 6))", a).shape() == cufuse::Shape{2, 6});
  CHECK(result("ravel(x)", a).shape() == cufuse::Shape{24});
  CHECK(result("x.flatten()", a).shape() == cufuse::Shape{24});
  CHECK(result("copy(x)", a).shape() == cufuse::Shape{4, 6});
  CHECK(result("x.copy()", a).shape() == cufuse::Shape{4, 6});
  CHECK(result("moveaxis(x, 0, -1)", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("zeros(x.shape + (2,))", a).shape() == cufuse::Shape{4, 6, 2});
  CHECK(result("zeros(x.shape[::-1])", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("ones(x.shape[-1] * 2)", a).shape() == cufuse::Shape{12});
  CHECK(result("x.reshape(x.size)", a).shape() == cufuse::Shape{24});
}

TEST_CASE("cli evaluator: results, statements and --out") {
  auto ev = run("a = x + 1; b = a * 2\nc = sqrt(b)", {"x=f32[8]"});
  auto r = ev.results({});
  REQUIRE(r.size() == 1);
  CHECK(r[0].name == "c");
  r = ev.results({"a", "c"});
  REQUIRE(r.size() == 2);
  CHECK(r[0].name == "a");
  CHECK_THROWS_AS(ev.results({"nope"}), cli::UsageError);
  // A bare tuple gives one result per element, named by its text.
  auto ev2 = run("x + 1, x * 2", {"x=f32[8]"});
  r = ev2.results({});
  REQUIRE(r.size() == 2);
  CHECK(r[0].name == "x + 1");
  CHECK(r[1].name == "x * 2");
  auto ev3 = run("n = 3; x", {"x=f32[8]"});
  CHECK_THROWS_AS(ev3.results({"n"}), cli::UsageError);
  CHECK(ev3.placeholder_names() == std::vector<std::string>{"x"});
}

TEST_CASE("cli evaluator: semantic errors name the problem and the call") {
  const std::vector<std::string> a = {"x=f32[3]", "y=f32[4]"};
  auto e = error_of("z = 1\nsqrt(x + y)", a);
  CHECK(e.kind() == cli::ProgramError::Kind::Semantic);
  CHECK(e.loc().line == 2);
  CHECK(e.loc().column == 6);  // the whole `x + y`
  CHECK(e.length() == 5);
  CHECK(std::string(e.what()).find("ValueError: operands could not be broadcast") != std::string::npos);
  CHECK(std::string(e.what()).find("(3,) (4,)") != std::string::npos);

  e = error_of("frobnicate(x)", a);
  CHECK(std::string(e.what()).find("name 'frobnicate' is not defined") != std::string::npos);
  CHECK(e.loc().column == 1);
  e = error_of("sqr(x)", a);
  CHECK(std::string(e.what()).find("did you mean") != std::string::npos);
  e = error_of("x.astype('f99')", a);
  CHECK(std::string(e.what()).find("f99") != std::string::npos);
  CHECK(e.loc().column == 10);  // at the argument
  e = error_of("kron(x, x)", a);
  CHECK(std::string(e.what()) == "kron is not available yet");
  CHECK(e.loc().column == 1);
  e = error_of("np.linalg.vector_norm(x)", a);
  CHECK(std::string(e.what()) == "linalg.vector_norm is not available yet");
  e = error_of("x @ y", a);  // matmul exists now: NumPy's shape error, over the whole `x @ y`
  CHECK(std::string(e.what()).find("ValueError: matmul: Input operand 1 has a mismatch") != std::string::npos);
  CHECK(e.loc().column == 1);
  e = error_of("sum(x, axis=3)", a);
  CHECK(std::string(e.what()).find("axis 3 is out of bounds") != std::string::npos);
  e = error_of("reshape(x, (2, 2))", a);
  CHECK(std::string(e.what()).find("cannot reshape array of size 3") != std::string::npos);
  e = error_of("maximum(x)", a);
  CHECK(std::string(e.what()).find("missing required argument 'x2'") != std::string::npos);
  e = error_of("maximum(x, y, x)", a);
  CHECK(std::string(e.what()).find("takes 2 positional arguments but 3 were given") != std::string::npos);
  e = error_of("zeros(3, dtpye='f32')", a);
  CHECK(std::string(e.what()).find("unexpected keyword argument 'dtpye' (did you mean 'dtype'?)") != std::string::npos);
  e = error_of("x[5]", a);
  CHECK(std::string(e.what()).find("IndexError") != std::string::npos);
  e = error_of("x[x > 0]", a);  // a selection by mask needs data (issue 30)
  CHECK(std::string(e.what()).find("a placeholder has none") != std::string::npos);
  e = error_of("x.sqrt()", a);
  CHECK(std::string(e.what()).find("write sqrt(x)") != std::string::npos);
  e = error_of("'a' + x", a);
  CHECK(std::string(e.what()).find("unsupported operand type(s) for +: 'str' and 'array'") != std::string::npos);
  e = error_of("1 // 0", a);
  CHECK(std::string(e.what()).find("division by zero") != std::string::npos);
  e = error_of("x(1)", a);
  CHECK(std::string(e.what()).find("not callable") != std::string::npos);
  e = error_of("p, q = 1, 2", a);
  CHECK(e.kind() == cli::ProgramError::Kind::Syntax);
}

TEST_CASE("cli function table: every op of the op table is callable by name") {
  for (int i = 0; i < cufuse::detail::kNumOps; ++i) {
    const auto& op = cufuse::detail::op_row(static_cast<cufuse::detail::Op>(i));
    if (op.id == cufuse::detail::Op::Cast) {
      CHECK(cli::find_function("astype") != nullptr);
      continue;
    }
    CAPTURE(op.name);
    CHECK(cli::find_function(op.name) != nullptr);
    std::string call = std::string(op.name) + (op.arity == 1 ? "(x)" : op.arity == 2 ? "(x, y)" : "(x > 0, x, y)");
    // bitwise ops need ints or bools
    const bool ints = (op.accepts & cufuse::detail::kKF) == 0;
    auto r = result(call, ints ? std::vector<std::string>{"x=i32[2,3]", "y=i32[3]"}
                               : std::vector<std::string>{"x=f32[2,3]", "y=f32[3]"});
    CHECK(r.shape() == cufuse::Shape{2, 3});
  }
  // Aliases and composites too, with NumPy's keyword parameters.
  for (const auto& f : cufuse::detail::op_functions()) {
    if (f.sig == cufuse::detail::Sig::CAST) continue;
    CAPTURE(f.name);
    REQUIRE(cli::find_function(f.name) != nullptr);
    CHECK(std::string(cli::find_function(f.name)->params) == cufuse::detail::python_params(f.sig));
  }
  const std::vector<std::string> xy = {"x=f32[2,3]", "y=f32[3]", "i=i8[3]"};
  CHECK(result("isclose(x, y, rtol=0.1, atol=0, equal_nan=True)", xy).dtype() == cufuse::DType::Bool);
  CHECK(result("np.round(x, 2)", xy).dtype() == cufuse::DType::Float32);
  CHECK(result("round(i, decimals=-1)", xy).dtype() == cufuse::DType::Int8);
  CHECK(result("nan_to_num(x, posinf=1, neginf=-1)", xy).shape() == cufuse::Shape{2, 3});
  CHECK(result("bitwise_left_shift(i, 1) + pow(x, 2) + atan2(x, y) + sinc(y)", xy).shape() == cufuse::Shape{2, 3});
  CHECK(result("logaddexp(i, i)", xy).dtype() == cufuse::DType::Float16);
  // Rows are unique by name, and each parameter list parses.
  for (const auto& row : cli::function_table()) {
    CAPTURE(row.name);
    CHECK(cli::find_function(row.name) == &row);
    CHECK(!cli::signature(row).empty());
  }
}

TEST_CASE("cli evaluator: contractions and linear algebra by their NumPy names") {
  const std::vector<std::string> a = {"a=f32[6,6]", "b=f32[6,6]", "v=f32[6]", "r=f32[6,4]", "t=f32[2,3,4]",
                                      "i=i32[6,6]"};
  // Contractions.
  CHECK(result("a @ b.T", a).shape() == cufuse::Shape{6, 6});
  CHECK(result("matmul(a, v)", a).shape() == cufuse::Shape{6});
  CHECK(result("np.matmul(a, r)", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("2 * a @ r", a).dtype() == cufuse::f32);
  CHECK(result("dot(v, v)", a).shape().empty());
  CHECK(result("a.dot(r)", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("vdot(a, b)", a).shape().empty());
  CHECK(result("inner(a, r.T)", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("outer(v, r)", a).shape() == cufuse::Shape{6, 24});
  CHECK(result("tensordot(a, r, 1)", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("tensordot(t, t, axes=((1, 2), (1, 2)))", a).shape() == cufuse::Shape{2, 2});
  CHECK(result("tensordot(a, r, axes=(0, 0))", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("tensordot(a, b, axes=0)", a).shape() == cufuse::Shape{6, 6, 6, 6});
  CHECK(result("einsum('ij,jk->ik', a, r)", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("einsum('ij,jk,kl->il', a, b, r)", a).shape() == cufuse::Shape{6, 4});
  CHECK(result("einsum('ij,ij->i', a, b)", a).shape() == cufuse::Shape{6});
  CHECK(result("einsum('ii', a)", a).shape().empty());
  CHECK(result("einsum('...j,j', t, t[0, 0], optimize=True)", a).shape() == cufuse::Shape{2, 3});
  CHECK(result("trace(a)", a).shape().empty());
  CHECK(result("a.trace(offset=1, dtype='f64')", a).dtype() == cufuse::f64);
  CHECK(result("diagonal(t, 0, 1, 2)", a).shape() == cufuse::Shape{2, 3});
  CHECK(result("a.diagonal(-1)", a).shape() == cufuse::Shape{5});
  CHECK(result("relu(a @ b)", a).shape() == cufuse::Shape{6, 6});
  CHECK(result("gelu(a @ b + v)", a).shape() == cufuse::Shape{6, 6});
  // Linear algebra: arrays, and tuples where NumPy gives tuples.
  CHECK(result("np.linalg.det(a)", a).shape().empty());
  CHECK(result("linalg.inv(a)", a).shape() == cufuse::Shape{6, 6});
  CHECK(result("linalg.inv(i)", a).dtype() == cufuse::f64);
  CHECK(result("linalg.solve(a, v)", a).shape() == cufuse::Shape{6});
  CHECK(result("linalg.cholesky(a, upper=True)", a).shape() == cufuse::Shape{6, 6});
  CHECK(result("linalg.qr(r, mode='r')", a).shape() == cufuse::Shape{4, 4});
  CHECK(result("linalg.svd(r, compute_uv=False)", a).shape() == cufuse::Shape{4});
  CHECK(result("linalg.svdvals(r)", a).shape() == cufuse::Shape{4});
  CHECK(result("linalg.eigvalsh(a, UPLO='U')", a).shape() == cufuse::Shape{6});
  CHECK(result("linalg.pinv(r, rcond=1e-6)", a).shape() == cufuse::Shape{4, 6});
  CHECK(result("linalg.matrix_rank(r, tol=None)", a).dtype() == cufuse::i64);
  CHECK(result("linalg.matrix_norm(t, ord='nuc', keepdims=True)", a).shape() == cufuse::Shape{2, 1, 1});
  CHECK(result("linalg.matrix_norm(t, ord=-inf)", a).shape() == cufuse::Shape{2});
  CHECK(result("linalg.norm(a, 'fro')", a).shape().empty());
  CHECK(result("linalg.norm(t, ord='nuc', axis=(0, 2))", a).shape() == cufuse::Shape{3});
  CHECK(result("linalg.norm(t, 2, axis=(2, 1), keepdims=True)", a).shape() == cufuse::Shape{2, 1, 1});
  CHECK(result("linalg.norm(a, inf)", a).shape().empty());
  auto shapes = [&](const std::string& src) {
    auto ev = run(src, a);
    std::vector<cufuse::Shape> out;
    for (const auto& r : ev.results({})) out.push_back(r.array.shape());
    return out;
  };
  using S = std::vector<cufuse::Shape>;
  CHECK(shapes("linalg.slogdet(a)") == S{{}, {}});
  CHECK(shapes("linalg.qr(r)") == S{{6, 4}, {4, 4}});
  CHECK(shapes("linalg.qr(r, 'complete')") == S{{6, 6}, {6, 4}});
  CHECK(shapes("linalg.svd(r)") == S{{6, 6}, {4}, {4, 4}});
  CHECK(shapes("linalg.svd(r, full_matrices=False)") == S{{6, 4}, {4}, {4, 4}});
  CHECK(shapes("linalg.eigh(a)") == S{{6}, {6, 6}});
  CHECK(shapes("linalg.eigh(a)[1]") == S{{6, 6}});
  // lstsq on placeholders: the rank is a 0-d int64 array; residuals as for a full-rank a.
  auto ls = run("linalg.lstsq(r, v)", a).results({});
  REQUIRE(ls.size() == 4);
  CHECK(ls[0].array.shape() == cufuse::Shape{4});
  CHECK(ls[1].array.shape() == cufuse::Shape{1});
  CHECK(ls[2].array.dtype() == cufuse::i64);
  CHECK(ls[3].array.shape() == cufuse::Shape{4});
  CHECK(shapes("linalg.lstsq(r.T, r.T, rcond=1e-3)") == S{{6, 6}, {0}, {}, {4}});
}

TEST_CASE("cli evaluator: bad arguments of the library functions point at the argument") {
  const std::vector<std::string> a = {"a=f32[6,6]", "v=f32[6]", "r=f32[6,4]", "h=f16[4,4]"};
  auto what = [](const cli::ProgramError& e) { return std::string(e.what()); };
  auto e = error_of("linalg.svd(a, full_matrix=False)", a);
  CHECK(what(e).find("linalg.svd(): got an unexpected keyword argument 'full_matrix'") != std::string::npos);
  CHECK(e.loc().column == 15);
  e = error_of("linalg.eigh(a, uplo='U')", a);
  CHECK(what(e).find("linalg.eigh(): got an unexpected keyword argument 'uplo'") != std::string::npos);
  e = error_of("linalg.eigh(a, UPLO='X')", a);
  CHECK(what(e).find("UPLO must be 'L' or 'U'") != std::string::npos);
  CHECK(e.loc().column == 16);
  e = error_of("linalg.qr(a, mode='raw')", a);
  CHECK(what(e).find("unrecognized mode 'raw'") != std::string::npos);
  CHECK(e.loc().column == 14);
  e = error_of("linalg.inv(r)", a);
  CHECK(what(e).find("must be square") != std::string::npos);
  CHECK(e.loc().column == 12);
  e = error_of("linalg.det(h)", a);
  CHECK(what(e).find("float16 is unsupported in linalg") != std::string::npos);
  e = error_of("linalg.cholesky(v)", a);
  CHECK(what(e).find("1-dimensional array given") != std::string::npos);
  e = error_of("a @ 2", a);
  CHECK(what(e).find("input operand 1 does not have enough dimensions") != std::string::npos);
  CHECK(e.loc().column == 5);
  e = error_of("tensordot(a, r, axes='x')", a);
  CHECK(what(e).find("axes must be an int or a pair") != std::string::npos);
  e = error_of("tensordot(a, r, axes=((0, 1), (0,)))", a);
  CHECK(what(e).find("shape-mismatch for sum") != std::string::npos);
  e = error_of("einsum(a, a)", a);
  CHECK(what(e).find("argument 'subscripts' must be a string") != std::string::npos);
  e = error_of("einsum('ij')", a);
  CHECK(what(e).find("at least one operand") != std::string::npos);
  e = error_of("einsum('ij,jk->ik', a, 'r')", a);
  CHECK(what(e).find("operands must be arrays") != std::string::npos);
  e = error_of("einsum('ij,jk->iq', a, r)", a);
  CHECK(what(e).find("ValueError") != std::string::npos);
  e = error_of("linalg.norm(a, 'foo')", a);
  CHECK(what(e).find("invalid norm order 'foo'") != std::string::npos);
  e = error_of("linalg.norm(a, 'fro', axis=1)", a);
  CHECK(what(e).find("for vectors") != std::string::npos);
  e = error_of("linalg.norm(a, 3, axis=(0, 1))", a);
  CHECK(what(e).find("invalid norm order 3 for matrices") != std::string::npos);
  e = error_of("linalg.norm(v, 'nuc')", a);
  CHECK(what(e).find("improper number of dimensions") != std::string::npos);
  e = error_of("linalg.matrix_norm(v)", a);
  CHECK(what(e).find("at least two-dimensional") != std::string::npos);
  e = error_of("linalg.lstsq(a, r[:4])", a);
  CHECK(what(e).find("incompatible dimensions") != std::string::npos);
  e = error_of("linalg.pinv(a, hermitian=True)", a);
  CHECK(what(e).find("hermitian=True is not supported") != std::string::npos);
  e = error_of("trace(v)", a);
  CHECK(what(e).find("at least two-dimensional") != std::string::npos);
  e = error_of("trace(a, offset=0.5)", a);
  CHECK(what(e).find("argument 'offset' must be an int") != std::string::npos);
}
