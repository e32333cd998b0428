// src/cli/syntax.hpp: the program language of cufuse-dump-kernels: NumPy spelling, a small
// subset of Python expressions. Tokens and the lexer (lexer.cpp), the syntax tree and the
// parser (parser.cpp), source locations, and the one error type the tool reports with a
// caret under the offending spot (syntax errors, and cufuse's errors at the call that
// raised them).
//
//   program    := statement ((NEWLINE | ';') statement)*
//   statement  := target ('=' | AUGOP) exprlist | exprlist
//   target     := NAME | primary '[' subscripts ']'          (x, x[1:, ::-1], x.T[0])
//   AUGOP      := '+=' | '-=' | '*=' | '/=' | '//=' | '%=' | '**=' | '@=' | '&=' | '|=' | '^=' | '<<=' | '>>='
//   exprlist   := expr (',' expr)* [',']                   a bare tuple, as in Python
//   expr       := bitor [('<'|'<='|'>'|'>='|'=='|'!=') bitor]   (no chains: they mean `and`)
//   bitor      := bitxor ('|' bitxor)*     bitxor := bitand ('^' bitand)*
//   bitand     := shift ('&' shift)*       shift  := arith (('<<'|'>>') arith)*
//   arith      := term (('+'|'-') term)*   term   := factor (('*'|'/'|'//'|'%'|'@') factor)*
//   factor     := ('-'|'+'|'~') factor | power
//   power      := primary ['**' factor]
//   primary    := atom ('(' args ')' | '[' subscripts ']' | '.' NAME)*
//   atom       := NAME | NUMBER | STRING+ | True | False | None | '...' | '(' [exprlist] ')' | '[' [exprlist] ']'
//   args       := (expr | NAME '=' expr) (',' ...)* [',']
//   subscripts := (expr | [expr] ':' [expr] [':' [expr]]) (',' ...)* [',']
// Numbers: 12, 0x1f, 0o17, 0b101, 1_000, 1.5, .5, 1e-5. Strings: '...' or "..." with the
// usual backslash escapes. Comments run from '#' to the end of the line; newlines inside
// brackets, and after a backslash, do not end a statement.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cufuse/scalar.hpp"

namespace cufuse::cli {

// A place in the program text (1-based line and column, 0-based byte offset).
struct Loc {
  int line = 1;
  int column = 1;
  size_t offset = 0;
};

// An error in the program, at a place in its text: what the tool prints with a caret.
class ProgramError : public std::runtime_error {
 public:
  enum class Kind { Syntax, Semantic };
  ProgramError(Kind kind, const std::string& message, Loc loc, size_t length = 1)
      : std::runtime_error(message), kind_(kind), loc_(loc), length_(length ? length : 1) {}
  Kind kind() const { return kind_; }
  const Loc& loc() const { return loc_; }
  size_t length() const { return length_; }  // characters to underline

 private:
  Kind kind_;
  Loc loc_;
  size_t length_;
};

// "<where>:LINE:COL: syntax error: MESSAGE", then the line and a caret (^~~~) under the span.
std::string format_error(std::string_view source, const ProgramError& e, std::string_view where = "program");

// ------------------------------------------------------------------ tokens
enum class Tok { Name, Int, Float, String, Op, Newline, End };

struct Token {
  Tok kind;
  std::string text;  // Name: the name; String: the decoded value; Op: the spelling; numbers: as written
  Loc loc;
  size_t length = 0;  // characters in the source
  Scalar number;      // Int and Float tokens: the value (a weak Python scalar)
};

// Splits a program into tokens, ending with one Tok::End. Throws ProgramError (Syntax).
std::vector<Token> tokenize(std::string_view source);

// ------------------------------------------------------------------ syntax tree
enum class ExprKind {
  Name,       // text
  Number,     // number (True and False are bool numbers)
  String,     // text
  None,
  Ellipsis,
  Tuple,      // items
  List,       // items
  Unary,      // text = operator, items[0]
  Binary,     // text = operator, items[0] op items[1]; comparisons too
  Call,       // items[0] = callee, items[1..] = positional arguments; keywords
  Attribute,  // items[0] . text
  Subscript,  // items[0] [ items[1..] ]  (several items: x[a, b]; one Tuple item: x[(a, b)])
  Slice,      // items[0]:items[1]:items[2], absent parts null
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Keyword {
  std::string name;
  Loc loc;
  ExprPtr value;
};

struct Expr {
  ExprKind kind;
  Loc loc;          // where the expression starts (its source span is [loc.offset, end))
  Loc op_loc;       // Unary, Binary: the operator; Call: '('; Subscript: '['; Attribute: the name
  size_t end = 0;
  std::string text;
  Scalar number;
  std::vector<ExprPtr> items;
  std::vector<Keyword> keywords;
  uint32_t depth = 1;  // levels of the tree from here down (the parser bounds it)

  size_t span() const { return end > loc.offset ? end - loc.offset : 1; }
};

struct Statement {
  std::string target;  // the name assigned or written in place; empty for a bare expression or x[...] target
  Loc target_loc;
  ExprPtr subscript;   // an x[...] target (ExprKind::Subscript), else null
  std::string op;      // "=", an augmented operator ("+=", "//=" ...), or empty for a bare expression
  Loc op_loc;
  Loc loc;             // where the statement starts; it ends at `end` (a byte offset)
  size_t end = 0;
  ExprPtr value;

  bool writes() const { return subscript || (!target.empty() && op != "="); }  // in place, as NumPy does
};

struct Program {
  std::string source;
  std::vector<Statement> statements;
};

// Parses a program. Throws ProgramError (Syntax) pointing at the first bad token.
Program parse_program(std::string_view source);

// The expression as a compact string in Python spelling (for tests and labels).
std::string unparse(const Expr& e);

}  // namespace cufuse::cli
