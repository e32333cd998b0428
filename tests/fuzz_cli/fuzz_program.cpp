// tests/fuzz_cli/fuzz_program.cpp: libFuzzer target for the CLI's program language
// (src/cli/lexer.cpp, parser.cpp, numbers.cpp): any input either parses or throws
// ProgramError / cufuse::Error; nothing else (a crash, a stack overflow, a hang, a sanitizer
// report, another exception) is allowed. A program that parses must unparse to text that
// parses again to the same text, and every operator applied to two number literals folds or
// throws cufuse::Error (Python's integer and float rules, numbers.cpp).
// Built and run by scripts/fuzz-cli.sh; what it finds is kept in tests/fuzz_cli/corpus,
// which tests/test_cli_corpus.cpp replays in every CPU test run.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/numbers.hpp"
#include "cli/syntax.hpp"
#include "cufuse/error.hpp"

namespace cli = cufuse::cli;

namespace {

// Folds every Binary and Unary node whose operands are number literals (iteratively: the
// tree's depth is bounded by the parser, but this walk does not rely on it).
void fold_numbers(const cli::Expr& root) {
  std::vector<const cli::Expr*> stack{&root};
  while (!stack.empty()) {
    const cli::Expr* e = stack.back();
    stack.pop_back();
    for (const auto& it : e->items)
      if (it) stack.push_back(it.get());
    for (const auto& kw : e->keywords)
      if (kw.value) stack.push_back(kw.value.get());
    try {
      if (e->kind == cli::ExprKind::Binary && e->items[0]->kind == cli::ExprKind::Number &&
          e->items[1]->kind == cli::ExprKind::Number)
        (void)cli::number_binary(e->text, e->items[0]->number, e->items[1]->number);
      if (e->kind == cli::ExprKind::Unary && e->items[0]->kind == cli::ExprKind::Number)
        (void)cli::number_unary(e->text, e->items[0]->number);
    } catch (const cufuse::Error&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string src(reinterpret_cast<const char*>(data), size);
  cli::Program p;
  try {
    p = cli::parse_program(src);
  } catch (const cli::ProgramError& e) {
    (void)cli::format_error(src, e);  // the caret line must be printable for any error position
    return 0;
  } catch (const cufuse::Error&) {
    return 0;
  }
  for (const auto& st : p.statements) {
    if (!st.value) continue;
    fold_numbers(*st.value);
    const std::string text = cli::unparse(*st.value);
    std::string again;
    try {
      auto q = cli::parse_program(text);
      if (q.statements.size() != 1) std::abort();
      again = cli::unparse(*q.statements[0].value);
    } catch (const cli::ProgramError&) {
      std::abort();  // unparse wrote something the parser refuses
    }
    if (again != text) std::abort();
  }
  return 0;
}
