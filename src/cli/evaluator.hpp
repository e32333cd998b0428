// src/cli/evaluator.hpp: runs a parsed program by calling cufuse: names bound by --arg are
// placeholders, operators and calls go through the function table (registry.hpp), numbers
// are folded on the host (numbers.hpp), subscripts and attributes become views. Errors
// cufuse raises come back as ProgramErrors at the expression that raised them.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/syntax.hpp"
#include "cli/value.hpp"

namespace cufuse::cli {

// A command-line mistake that is not at a place in the program (--out naming nothing).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// --arg NAME=DTYPE[SHAPE]: "x=f32[4096,4096]", "s=float64[]", "m=bf16[8, 128]".
struct ArgSpec {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
};
// Throws ProgramError pointing into `spec` (format it with format_error(spec, e, "--arg")).
ArgSpec parse_arg_spec(std::string_view spec);

class Evaluator {
 public:
  Evaluator();

  // Binds NAME to a placeholder of the spec's dtype and shape (the report names it NAME).
  // Throws UsageError for a bad or repeated name.
  void declare(const ArgSpec& a);
  // Runs the statements in order. Throws ProgramError.
  void run(const Program& p);
  // The program's results: the variables named in `out`, or, when `out` is empty, the last
  // statement's value (each array of a tuple, for `a + 1, a * 2`). Throws UsageError.
  std::vector<NamedArray> results(const std::vector<std::string>& out) const;

  Value eval(const Expr& e);
  const Value* lookup(std::string_view name) const;
  // Placeholder names by slot (Node::placeholder_slot), for the report.
  const std::vector<std::string>& placeholder_names() const { return placeholders_; }

 private:
  std::map<std::string, Value, std::less<>> vars_;
  std::vector<std::string> placeholders_;
  // The last statement: its value, and its text (or tuple items' texts) for naming results.
  Value last_;
  std::string last_name_;
  std::vector<std::string> last_item_names_;
  std::string source_;

  Value eval_name(const Expr& e);
  Value eval_unary(const Expr& e);
  Value eval_binary(const Expr& e);
  Value eval_call(const Expr& e);
  Value eval_attribute(const Expr& e);
  Value eval_subscript(const Expr& e);
  Value module_attribute(const Value& m, const Expr& e);
  std::string text_of(const Expr& e) const;
};

}  // namespace cufuse::cli
