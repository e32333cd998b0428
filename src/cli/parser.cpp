// src/cli/parser.cpp: recursive descent over the tokens of lexer.cpp into the syntax tree
// of syntax.hpp, with Python's operator precedence (the grammar is in syntax.hpp). Python
// constructs that have no meaning for lazy arrays (and/or/not, chained comparisons,
// conditional expressions) are syntax errors that say what to write. Assignment targets are
// a name or a subscript, with '=' or an augmented operator (in-place writes, evaluator).
#include <algorithm>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/syntax.hpp"

namespace cufuse::cli {

namespace {

ExprPtr make(ExprKind k, Loc loc) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->loc = loc;
  e->op_loc = loc;
  return e;
}

class Parser {
 public:
  Parser(std::string_view src, std::vector<Token> toks) : src_(src), t_(std::move(toks)) {}

  Program program() {
    Program p;
    p.source = std::string(src_);
    for (;;) {
      while (is_op(";") || peek().kind == Tok::Newline) next();
      if (peek().kind == Tok::End) break;
      p.statements.push_back(statement());
      if (is_op(";") || peek().kind == Tok::Newline || peek().kind == Tok::End) continue;
      unexpected("expected ';' or a new line after the statement");
    }
    return p;
  }

 private:
  std::string_view src_;
  std::vector<Token> t_;
  size_t i_ = 0;
  std::vector<const Token*> open_;  // open brackets, for "never closed" messages

  const Token& peek(size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  const Token& next() { return t_[std::min(i_++, t_.size() - 1)]; }
  bool is_op(std::string_view o, size_t k = 0) const { return peek(k).kind == Tok::Op && peek(k).text == o; }
  bool is_name(std::string_view n) const { return peek().kind == Tok::Name && peek().text == n; }
  size_t prev_end() const { return i_ == 0 ? 0 : t_[i_ - 1].loc.offset + t_[i_ - 1].length; }

  [[noreturn]] void fail(const std::string& msg, const Token& at) {
    throw ProgramError(ProgramError::Kind::Syntax, msg, at.loc, at.length);
  }
  [[noreturn]] void unexpected(const std::string& expected) {
    const Token& t = peek();
    if (t.kind == Tok::End) {
      if (!open_.empty())
        fail(fmt::format("'{}' was never closed", open_.back()->text), *open_.back());
      fail(fmt::format("unexpected end of program: {}", expected), t);
    }
    std::string what = t.kind == Tok::Newline ? (peek(1).kind == Tok::End ? "end of program" : "end of line") : fmt::format("'{}'", std::string_view(src_).substr(t.loc.offset, t.length));
    if (t.kind == Tok::Op && (t.text == ")" || t.text == "]" || t.text == "}") && open_.empty())
      fail(fmt::format("unmatched '{}'", t.text), t);
    fail(fmt::format("unexpected {}: {}", what, expected), t);
  }
  void expect_op(std::string_view o, const std::string& what) {
    if (!is_op(o)) unexpected(what);
    next();
  }
  void open(const Token& t) { open_.push_back(&t); }

  // Limits on what a program can nest. The parser recurses once per level of brackets, call
  // arguments, subscripts, unary signs and '**' (each passes through factor()); the syntax
  // tree's depth (left-associative chains such as x+x+...+x grow it without recursing here)
  // is what the evaluator, unparse and the tree's destructor recurse over. Past either limit
  // the program is a syntax error, as in Python ("too many nested parentheses"), not a crash.
  static constexpr int kMaxNesting = 200;
  static constexpr uint32_t kMaxDepth = 1000;
  int nesting_ = 0;
  struct Nest {
    Parser& p;
    explicit Nest(Parser& parser) : p(parser) {
      if (++p.nesting_ > kMaxNesting) {
        --p.nesting_;
        p.fail(fmt::format("too deeply nested: more than {} levels of brackets, calls, subscripts or unary "
                           "operators (name a part: t = ...; then use t)",
                           kMaxNesting),
               p.peek());
      }
    }
    ~Nest() { --p.nesting_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
  };
  // Ends a node at the last token read: its span and its depth (1 + its deepest child's).
  void finish(Expr& e) {
    e.end = prev_end();
    uint32_t d = 0;
    for (const auto& it : e.items)
      if (it) d = std::max(d, it->depth);
    for (const auto& kw : e.keywords)
      if (kw.value) d = std::max(d, kw.value->depth);
    e.depth = d + 1;
    if (e.depth > kMaxDepth)
      throw ProgramError(ProgramError::Kind::Syntax,
                         fmt::format("expression too deep: more than {} nested operations in one expression (split "
                                     "it into statements: t = ...; then use t)",
                                     kMaxDepth),
                         e.op_loc, 1);
  }
  void close(std::string_view o) {
    if (!is_op(o)) {
      if (peek().kind == Tok::End) unexpected("");
      unexpected(fmt::format("expected '{}' to close '{}' at line {}, column {}", o, open_.back()->text,
                             open_.back()->loc.line, open_.back()->loc.column));
    }
    next();
    open_.pop_back();
  }

  // target ('=' | AUGOP) exprlist | exprlist. The target is a name or a subscript
  // (x[1:] += y writes into x, as in NumPy); anything else on the left is an error.
  Statement statement() {
    Statement s;
    s.loc = peek().loc;
    const Token& first = peek();
    ExprPtr lhs = exprlist();
    if (is_op("=") || is_augmented(peek())) {
      const Token& op = next();
      switch (lhs->kind) {
        case ExprKind::Name:
          check_not_keyword(first);
          s.target = lhs->text;
          s.target_loc = lhs->loc;
          break;
        case ExprKind::Subscript:
          s.target_loc = lhs->loc;
          s.subscript = std::move(lhs);
          break;
        case ExprKind::Tuple:
          fail(op.text == "=" ? "only a single name or subscript can be assigned to (tuple unpacking is not supported)"
                              : "illegal expression for augmented assignment (a tuple)",
               op);
        case ExprKind::Attribute:
          throw ProgramError(ProgramError::Kind::Syntax,
                             fmt::format("cannot assign to attribute '{}' (write through a subscript: x[...] {} ...)",
                                         lhs->text, op.text),
                             lhs->op_loc, lhs->text.size());
        default:
          throw ProgramError(ProgramError::Kind::Syntax,
                             fmt::format("cannot assign to {} (the left side of '{}' is a name or x[...])",
                                         describe_target(*lhs), op.text),
                             lhs->loc, lhs->span());
      }
      s.op = op.text;
      s.op_loc = op.loc;
      s.value = exprlist();
      if (is_op("=") || is_augmented(peek()))
        fail("chained assignment is not supported: one target per statement (NAME or x[...])", peek());
    } else {
      s.value = std::move(lhs);
    }
    s.end = prev_end();
    return s;
  }

  static std::string describe_target(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Call: return "a function call";
      case ExprKind::Number: return e.number.kind() == Scalar::Kind::Bool ? (e.number.to_bool() ? "True" : "False") : "a literal";
      case ExprKind::String: return "a literal";
      case ExprKind::None: return "None";
      case ExprKind::Ellipsis: return "ellipsis";
      case ExprKind::List: return "a list";
      default: return "an expression";
    }
  }

  static bool is_augmented(const Token& t) {
    static constexpr std::string_view ops[] = {"+=", "-=", "*=", "/=", "//=", "%=", "**=",
                                               "@=", "&=", "|=", "^=", "<<=", ">>="};
    if (t.kind != Tok::Op) return false;
    for (auto o : ops)
      if (t.text == o) return true;
    return false;
  }

  void check_not_keyword(const Token& t) {
    static constexpr std::string_view kw[] = {"True", "False", "None", "and", "or", "not", "if", "else",
                                              "lambda", "for", "in", "is", "def", "return", "import"};
    for (auto k : kw)
      if (t.text == k) fail(fmt::format("cannot assign to '{}'", t.text), t);
  }

  // expr (',' expr)* [','] — a tuple when there is a comma.
  ExprPtr exprlist() {
    const Loc start = peek().loc;
    ExprPtr first = expr();
    if (!is_op(",")) return first;
    auto tup = make(ExprKind::Tuple, start);
    tup->items.push_back(std::move(first));
    while (is_op(",")) {
      next();
      if (!starts_expr()) break;
      tup->items.push_back(expr());
    }
    finish(*tup);
    return tup;
  }

  bool starts_expr() const {
    const Token& t = peek();
    if (t.kind == Tok::Name || t.kind == Tok::Int || t.kind == Tok::Float || t.kind == Tok::String) return true;
    if (t.kind != Tok::Op) return false;
    return t.text == "(" || t.text == "[" || t.text == "-" || t.text == "+" || t.text == "~" || t.text == "...";
  }

  ExprPtr expr() {
    if (is_name("not")) fail("'not' on arrays is ambiguous: use ~x or logical_not(x)", peek());
    if (is_name("lambda")) fail("lambda is not supported", peek());
    ExprPtr e = comparison();
    if (is_name("and") || is_name("or"))
      fail(fmt::format("'{}' on arrays is ambiguous: use {} (with parentheses: (a < b) {} (c < d)) or logical_{}",
                       peek().text, peek().text == "and" ? "&" : "|", peek().text == "and" ? "&" : "|", peek().text),
           peek());
    if (is_name("if")) fail("conditional expressions are not supported: use where(condition, x, y)", peek());
    if (is_name("in") || is_name("is")) fail(fmt::format("'{}' is not supported", peek().text), peek());
    return e;
  }

  static bool is_compare(const Token& t) {
    return t.kind == Tok::Op &&
           (t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=" || t.text == "==" || t.text == "!=");
  }

  ExprPtr binary(ExprPtr lhs, const Token& op, ExprPtr rhs) {
    auto e = make(ExprKind::Binary, lhs->loc);
    e->op_loc = op.loc;
    e->text = op.text;
    e->items.push_back(std::move(lhs));
    e->items.push_back(std::move(rhs));
    finish(*e);
    return e;
  }

  ExprPtr comparison() {
    ExprPtr lhs = bitor_();
    if (!is_compare(peek())) return lhs;
    const Token& op = next();
    ExprPtr rhs = bitor_();
    if (is_compare(peek()))
      fail("chained comparisons mean 'and', which is ambiguous on arrays: write (a < b) & (b < c)", peek());
    return binary(std::move(lhs), op, std::move(rhs));
  }

  template <class Sub>
  ExprPtr left_assoc(Sub sub, std::initializer_list<std::string_view> ops) {
    ExprPtr lhs = (this->*sub)();
    for (;;) {
      bool hit = false;
      for (auto o : ops) hit |= is_op(o);
      if (!hit) return lhs;
      const Token& op = next();
      ExprPtr rhs = (this->*sub)();
      lhs = binary(std::move(lhs), op, std::move(rhs));
    }
  }
  ExprPtr bitor_() { return left_assoc(&Parser::bitxor_, {"|"}); }
  ExprPtr bitxor_() { return left_assoc(&Parser::bitand_, {"^"}); }
  ExprPtr bitand_() { return left_assoc(&Parser::shift, {"&"}); }
  ExprPtr shift() { return left_assoc(&Parser::arith, {"<<", ">>"}); }
  ExprPtr arith() { return left_assoc(&Parser::term, {"+", "-"}); }
  ExprPtr term() { return left_assoc(&Parser::factor, {"*", "/", "//", "%", "@"}); }

  ExprPtr factor() {
    Nest nest(*this);
    if (is_op("-") || is_op("+") || is_op("~")) {
      const Token& op = next();
      auto e = make(ExprKind::Unary, op.loc);
      e->text = op.text;
      e->items.push_back(factor());
      finish(*e);
      return e;
    }
    return power();
  }

  ExprPtr power() {
    ExprPtr base = primary();
    if (!is_op("**")) return base;
    const Token& op = next();
    ExprPtr exp = factor();  // right-associative; 2 ** -1 is allowed
    return binary(std::move(base), op, std::move(exp));
  }

  ExprPtr primary() {
    ExprPtr e = atom();
    for (;;) {
      if (is_op("(")) {
        const Token& lp = next();
        open(lp);
        auto call = make(ExprKind::Call, e->loc);
        call->op_loc = lp.loc;
        call->items.push_back(std::move(e));
        arguments(*call);
        close(")");
        finish(*call);
        e = std::move(call);
      } else if (is_op("[")) {
        const Token& lb = next();
        open(lb);
        auto sub = make(ExprKind::Subscript, e->loc);
        sub->op_loc = lb.loc;
        sub->items.push_back(std::move(e));
        if (is_op("]")) unexpected("expected an index");
        for (;;) {
          sub->items.push_back(subscript_item());
          if (!is_op(",")) break;
          next();
          if (is_op("]")) break;
        }
        close("]");
        finish(*sub);
        e = std::move(sub);
      } else if (is_op(".")) {
        next();
        if (peek().kind != Tok::Name) unexpected("expected an attribute name after '.'");
        const Token& name = next();
        auto at = make(ExprKind::Attribute, e->loc);
        at->op_loc = name.loc;
        at->text = name.text;
        at->items.push_back(std::move(e));
        finish(*at);
        e = std::move(at);
      } else {
        return e;
      }
    }
  }

  void arguments(Expr& call) {
    bool seen_keyword = false;
    while (!is_op(")")) {
      if (is_op("*") || is_op("**")) fail("*args and **kwargs are not supported", peek());
      if (peek().kind == Tok::Name && is_op("=", 1)) {
        const Token& name = next();
        next();  // '='
        for (const auto& k : call.keywords)
          if (k.name == name.text) fail(fmt::format("keyword argument repeated: {}", name.text), name);
        call.keywords.push_back(Keyword{name.text, name.loc, expr()});
        seen_keyword = true;
      } else {
        if (!starts_expr()) unexpected("expected an argument or ')'");
        const Token& at = peek();
        ExprPtr a = expr();
        if (seen_keyword) fail("positional argument follows keyword argument", at);
        call.items.push_back(std::move(a));
      }
      if (!is_op(",")) break;
      next();
    }
  }

  ExprPtr subscript_item() {
    const Loc start = peek().loc;
    ExprPtr first;
    if (!is_op(":")) {
      first = expr();
      if (!is_op(":")) return first;
    }
    auto sl = make(ExprKind::Slice, start);
    sl->items.resize(3);
    sl->items[0] = std::move(first);
    next();  // ':'
    if (!is_op(":") && !is_op(",") && !is_op("]")) sl->items[1] = expr();
    if (is_op(":")) {
      next();
      if (!is_op(",") && !is_op("]")) sl->items[2] = expr();
    }
    finish(*sl);
    return sl;
  }

  ExprPtr atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Name: {
        next();
        ExprPtr e;
        if (t.text == "True" || t.text == "False") {
          e = make(ExprKind::Number, t.loc);
          e->number = Scalar(t.text == "True");
        } else if (t.text == "None") {
          e = make(ExprKind::None, t.loc);
        } else {
          static constexpr std::string_view kw[] = {"and", "or", "not", "if", "else", "for", "in", "is", "lambda",
                                                    "def", "return", "import", "from", "while", "class", "with"};
          for (auto k : kw)
            if (t.text == k) fail(fmt::format("unexpected keyword '{}'", t.text), t);
          e = make(ExprKind::Name, t.loc);
        }
        e->text = t.text;
        finish(*e);
        return e;
      }
      case Tok::Int:
      case Tok::Float: {
        next();
        auto e = make(ExprKind::Number, t.loc);
        e->number = t.number;
        e->text = t.text;
        finish(*e);
        return e;
      }
      case Tok::String: {
        auto e = make(ExprKind::String, t.loc);
        while (peek().kind == Tok::String) e->text += next().text;  // "a" "b" is "ab"
        finish(*e);
        return e;
      }
      case Tok::Op: {
        if (t.text == "...") {
          next();
          auto e = make(ExprKind::Ellipsis, t.loc);
          finish(*e);
          return e;
        }
        if (t.text == "(") {
          const Token& lp = next();
          open(lp);
          if (is_op(")")) {  // ()
            next();
            open_.pop_back();
            auto e = make(ExprKind::Tuple, lp.loc);
            finish(*e);
            return e;
          }
          ExprPtr inner = exprlist();
          close(")");
          inner->loc = lp.loc;  // the span includes the parentheses
          finish(*inner);
          return inner;
        }
        if (t.text == "[") {
          const Token& lb = next();
          open(lb);
          auto e = make(ExprKind::List, lb.loc);
          while (!is_op("]")) {
            if (!starts_expr()) unexpected("expected a list element or ']'");
            e->items.push_back(expr());
            if (!is_op(",")) break;
            next();
          }
          close("]");
          finish(*e);
          return e;
        }
        if (t.text == "{") fail("dicts and sets are not supported", t);
        break;
      }
      default: break;
    }
    unexpected("expected an expression");
  }
};

void unparse_into(const Expr& e, std::string& out);

// The object of a call, subscript or attribute: a unary operation or a number literal goes
// in parentheses ((-f)(x) is not -f(x); "1.real" would read as the float "1." then a name).
void unparse_object(const Expr& e, std::string& out) {
  const bool wrap = e.kind == ExprKind::Unary || e.kind == ExprKind::Number;
  if (wrap) out += '(';
  unparse_into(e, out);
  if (wrap) out += ')';
}

void unparse_list(const std::vector<ExprPtr>& items, size_t from, std::string& out) {
  for (size_t k = from; k < items.size(); ++k) {
    if (k > from) out += ", ";
    unparse_into(*items[k], out);
  }
}

// The level of a left-associative binary operator (parser: bitor_ ... term), 0 for the rest
// ('**' is right-associative, comparisons do not chain).
int left_assoc_level(std::string_view op) {
  if (op == "|") return 1;
  if (op == "^") return 2;
  if (op == "&") return 3;
  if (op == "<<" || op == ">>") return 4;
  if (op == "+" || op == "-") return 5;
  if (op == "*" || op == "/" || op == "//" || op == "%" || op == "@") return 6;
  return 0;
}

// A binary operation's left operand. A chain of one level (x - y - z, parsed as (x - y) - z)
// is written without brackets round its left operands: bracketing each would nest them as
// deep as the chain is long, past the parser's nesting limit, for a chain it read flat (a
// libFuzzer find: 200 subtractions). The walk down the chain is a loop.
void unparse_binary_lhs(const Expr& e, std::string& out) {
  const int level = left_assoc_level(e.text);
  std::vector<const Expr*> chain{&e};  // e, its left operand, that one's left operand, ...
  while (level > 0) {
    const Expr& l = *chain.back()->items[0];
    if (l.kind != ExprKind::Binary || left_assoc_level(l.text) != level) break;
    chain.push_back(&l);
  }
  const Expr& first = *chain.back()->items[0];
  if (e.text == "**" && first.kind == ExprKind::Unary) {  // (-x) ** 2 is not -x ** 2
    out += '(';
    unparse_into(first, out);
    out += ')';
  } else {
    unparse_into(first, out);
  }
  for (size_t k = chain.size() - 1; k >= 1; --k) {  // the inner operations, innermost first
    out += ' ' + chain[k]->text + ' ';
    unparse_into(*chain[k]->items[1], out);
  }
}

void unparse_into(const Expr& e, std::string& out) {
  switch (e.kind) {
    case ExprKind::Name: out += e.text; break;
    case ExprKind::Number:
      if (!e.text.empty()) out += e.text;
      else out += e.number.kind() == Scalar::Kind::Bool ? (e.number.to_bool() ? "True" : "False") : e.number.str();
      break;
    case ExprKind::String: {
      out += '\'';
      for (char c : e.text) {  // escaped as the lexer reads them back (a new line may not appear raw)
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c == '\0') out += "\\0";
        else {
          if (c == '\'' || c == '\\') out += '\\';
          out += c;
        }
      }
      out += '\'';
      break;
    }
    case ExprKind::None: out += "None"; break;
    case ExprKind::Ellipsis: out += "..."; break;
    case ExprKind::Tuple:
      out += '(';
      unparse_list(e.items, 0, out);
      if (e.items.size() == 1) out += ',';
      out += ')';
      break;
    case ExprKind::List:
      out += '[';
      unparse_list(e.items, 0, out);
      out += ']';
      break;
    case ExprKind::Unary:
      out += e.text;
      unparse_into(*e.items[0], out);
      break;
    case ExprKind::Binary:
      out += '(';
      unparse_binary_lhs(e, out);
      out += ' ' + e.text + ' ';
      unparse_into(*e.items[1], out);
      out += ')';
      break;
    case ExprKind::Call:
      unparse_object(*e.items[0], out);
      out += '(';
      unparse_list(e.items, 1, out);
      for (size_t k = 0; k < e.keywords.size(); ++k) {
        if (k > 0 || e.items.size() > 1) out += ", ";
        out += e.keywords[k].name + "=";
        unparse_into(*e.keywords[k].value, out);
      }
      out += ')';
      break;
    case ExprKind::Attribute:
      unparse_object(*e.items[0], out);
      out += '.' + e.text;
      break;
    case ExprKind::Subscript:
      unparse_object(*e.items[0], out);
      out += '[';
      unparse_list(e.items, 1, out);
      out += ']';
      break;
    case ExprKind::Slice:
      if (e.items[0]) unparse_into(*e.items[0], out);
      out += ':';
      if (e.items[1]) unparse_into(*e.items[1], out);
      if (e.items[2]) {
        out += ':';
        unparse_into(*e.items[2], out);
      }
      break;
  }
}

}  // namespace

Program parse_program(std::string_view source) { return Parser(source, tokenize(source)).program(); }

std::string unparse(const Expr& e) {
  std::string s;
  unparse_into(e, s);
  return s;
}

}  // namespace cufuse::cli
