// src/cli/lexer.cpp: splits a program into tokens (names, numbers, strings, operators,
// statement ends) with their line and column, and formats a ProgramError as the line it
// points into with a caret under the spot.
#include <cerrno>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "cli/syntax.hpp"

namespace cufuse::cli {

namespace {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// Operators, longest first so that "**" wins over "*".
constexpr std::string_view kOps[] = {
    "**=", "//=", ">>=", "<<=", "...", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=", "/=",
    "%=",  "@=",  "&=",  "|=",  "^=",  "->", ":=", "+",  "-",  "*",  "/",  "%",  "@",  "&",  "|",  "^",
    "~",   "<",   ">",   "(",   ")",   "[",  "]",  "{",  "}",  ",",  ":",  ".",  "=",  ";"};

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  std::vector<Token> run() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        advance();
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') advance();
      } else if (c == '\\') {
        Loc at = loc();
        advance();
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r')) advance();
        if (i_ >= s_.size() || s_[i_] != '\n')
          throw ProgramError(ProgramError::Kind::Syntax, "unexpected character after line continuation '\\'", at);
        advance();
      } else if (c == '\n') {
        Loc at = loc();
        advance();
        if (depth_ == 0 && !out_.empty() && out_.back().kind != Tok::Newline) push(Tok::Newline, "\\n", at, 1);
      } else if (is_name_start(c)) {
        Loc at = loc();
        size_t b = i_;
        while (i_ < s_.size() && is_name_char(s_[i_])) advance();
        push(Tok::Name, std::string(s_.substr(b, i_ - b)), at, i_ - b);
      } else if (is_digit(c) || (c == '.' && i_ + 1 < s_.size() && is_digit(s_[i_ + 1]))) {
        number();
      } else if (c == '\'' || c == '"') {
        string();
      } else {
        op();
      }
    }
    Loc at = loc();
    if (depth_ == 0 && !out_.empty() && out_.back().kind != Tok::Newline) push(Tok::Newline, "\\n", at, 1);
    push(Tok::End, "", at, 1);
    return std::move(out_);
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
  int depth_ = 0;
  std::vector<Token> out_;

  Loc loc() const { return Loc{line_, col_, i_}; }
  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else if ((static_cast<unsigned char>(s_[i_]) & 0xC0) != 0x80) {
      ++col_;  // columns count UTF-8 code points, not bytes
    }
    ++i_;
  }
  void push(Tok k, std::string text, Loc at, size_t len, Scalar num = Scalar()) {
    out_.push_back(Token{k, std::move(text), at, len, num});
  }
  [[noreturn]] void fail(const std::string& msg, Loc at, size_t len = 1) {
    throw ProgramError(ProgramError::Kind::Syntax, msg, at, len);
  }

  void number() {
    const Loc at = loc();
    const size_t b = i_;
    std::string digits;  // without underscores
    auto take_digits = [&](auto pred) {
      bool any = false;
      while (i_ < s_.size() && (pred(s_[i_]) || (s_[i_] == '_' && any && i_ + 1 < s_.size() && pred(s_[i_ + 1])))) {
        if (s_[i_] != '_') digits += s_[i_];
        any = true;
        advance();
      }
      return any;
    };
    auto check_end = [&] {
      if (i_ < s_.size() && (s_[i_] == 'j' || s_[i_] == 'J'))
        fail("complex numbers are not supported", at, i_ - b + 1);
      if (i_ < s_.size() && is_name_char(s_[i_])) fail("invalid number literal", at, i_ - b + 1);
    };
    // 0x / 0o / 0b
    if (s_[i_] == '0' && i_ + 1 < s_.size() && std::string_view("xXoObB").find(s_[i_ + 1]) != std::string_view::npos) {
      const char kind = static_cast<char>(s_[i_ + 1] | 0x20);
      const int base = kind == 'x' ? 16 : (kind == 'o' ? 8 : 2);
      advance();
      advance();
      auto pred = [base](char ch) {
        if (base == 16) return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
        return ch >= '0' && ch < static_cast<char>('0' + base);
      };
      if (i_ < s_.size() && s_[i_] == '_') advance();
      if (!take_digits(pred)) fail("invalid number literal", at, i_ - b + 1);
      check_end();
      push_int(digits, base, at, i_ - b);
      return;
    }
    bool is_float = false;
    take_digits(is_digit);
    if (i_ < s_.size() && s_[i_] == '.' && !(i_ + 2 < s_.size() && s_[i_ + 1] == '.' && s_[i_ + 2] == '.')) {
      is_float = true;
      digits += '.';
      advance();
      take_digits(is_digit);
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      const size_t save_i = i_;
      const int save_line = line_, save_col = col_;
      std::string exp = "e";
      advance();
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) {
        exp += s_[i_];
        advance();
      }
      if (i_ < s_.size() && is_digit(s_[i_])) {
        is_float = true;
        digits += exp;
        take_digits(is_digit);
      } else {
        i_ = save_i;
        line_ = save_line;
        col_ = save_col;
        fail("invalid number literal (exponent without digits)", at, i_ - b + 1);
      }
    }
    if (i_ < s_.size() && (s_[i_] == 'j' || s_[i_] == 'J')) {  // an imaginary literal: 2j, 1.5e3J
      advance();
      if (i_ < s_.size() && is_name_char(s_[i_])) fail("invalid number literal", at, i_ - b + 1);
      const double im = std::strtod(digits.c_str(), nullptr);
      push(Tok::Float, std::string(s_.substr(b, i_ - b)), at, i_ - b, Scalar(std::complex<double>(0.0, im)));
      return;
    }
    check_end();
    if (!is_float) {
      push_int(digits, 10, at, i_ - b);
      return;
    }
    errno = 0;
    const double v = std::strtod(digits.c_str(), nullptr);  // overflows to inf, as Python's 1e999
    push(Tok::Float, std::string(s_.substr(b, i_ - b)), at, i_ - b, Scalar(v));
  }

  void push_int(const std::string& digits, int base, Loc at, size_t len) {
    unsigned __int128 v = 0;
    for (char ch : digits) {
      int d = is_digit(ch) ? ch - '0' : ((ch | 0x20) - 'a' + 10);
      v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
      if (v > std::numeric_limits<uint64_t>::max())
        fail("integer literal too large (cufuse's integers are at most 64 bits)", at, len);
    }
    const std::string text(s_.substr(at.offset, len));
    if (v <= static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max()))
      push(Tok::Int, text, at, len, Scalar(static_cast<int64_t>(v)));
    else
      push(Tok::Int, text, at, len, Scalar(static_cast<uint64_t>(v)));
  }

  void string() {
    const Loc at = loc();
    const size_t b = i_;
    const char q = s_[i_];
    advance();
    std::string v;
    for (;;) {
      if (i_ >= s_.size() || s_[i_] == '\n') fail("unterminated string literal", at, 1);
      const char c = s_[i_];
      if (c == q) {
        advance();
        break;
      }
      if (c != '\\') {
        v += c;
        advance();
        continue;
      }
      advance();
      if (i_ >= s_.size()) fail("unterminated string literal", at, 1);
      const char e = s_[i_];
      advance();
      switch (e) {
        case 'n': v += '\n'; break;
        case 't': v += '\t'; break;
        case 'r': v += '\r'; break;
        case '0': v += '\0'; break;
        case '\\': v += '\\'; break;
        case '\'': v += '\''; break;
        case '"': v += '"'; break;
        case '\n': break;  // line continuation inside a string
        default: v += '\\'; v += e; break;  // Python keeps unknown escapes as written
      }
    }
    push(Tok::String, std::move(v), at, i_ - b);
  }

  void op() {
    const Loc at = loc();
    for (std::string_view o : kOps) {
      if (s_.substr(i_, o.size()) == o) {
        for (size_t k = 0; k < o.size(); ++k) advance();
        if (o == "(" || o == "[" || o == "{") ++depth_;
        if ((o == ")" || o == "]" || o == "}") && depth_ > 0) --depth_;
        push(Tok::Op, std::string(o), at, o.size());
        return;
      }
    }
    const unsigned char c = static_cast<unsigned char>(s_[i_]);
    if (c >= 0x80) fail("unexpected non-ASCII character (names are ASCII)", at);
    if (c < 0x20 || c == 0x7f) fail(fmt::format("unexpected control character (code {})", int(c)), at);
    fail(fmt::format("unexpected character '{}'", static_cast<char>(c)), at);
  }
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

std::string format_error(std::string_view source, const ProgramError& e, std::string_view where) {
  const Loc& l = e.loc();
  std::string out = fmt::format("{}:{}:{}: {}: {}\n", where, l.line, l.column,
                                e.kind() == ProgramError::Kind::Syntax ? "syntax error" : "error", e.what());
  // The line holding the error.
  size_t b = std::min(l.offset, source.size());
  while (b > 0 && source[b - 1] != '\n') --b;
  size_t end = source.find('\n', b);
  if (end == std::string_view::npos) end = source.size();
  std::string_view line = source.substr(b, end - b);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  out += "    ";
  out += line;
  out += "\n    ";
  // Padding that keeps tabs, so the caret lines up under the same column.
  for (size_t k = b; k < std::min(l.offset, b + line.size()); ++k) {
    const unsigned char ch = static_cast<unsigned char>(source[k]);
    if ((ch & 0xC0) == 0x80) continue;
    out += ch == '\t' ? '\t' : ' ';
  }
  out += '^';
  // Underline the rest of the span, up to the end of the line.
  size_t stop = std::min(l.offset + e.length(), b + line.size());
  for (size_t k = l.offset + 1; k < stop; ++k)
    if ((static_cast<unsigned char>(source[k]) & 0xC0) != 0x80) out += '~';
  out += '\n';
  return out;
}

}  // namespace cufuse::cli
