// src/cli/evaluator.hpp: runs a parsed program by calling cufuse: names bound by --arg are
// placeholders, operators and calls go through the function table (registry.hpp), numbers
// are folded on the host (numbers.hpp), subscripts and attributes become views, in-place
// writes are recorded as the evaluations cufuse runs for them (writes.hpp, writes.cpp).
// Errors cufuse raises come back as ProgramErrors at the expression that raised them.
#pragma once
#include <map>
#include <utility>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/syntax.hpp"
#include "cli/value.hpp"
#include "cli/writes.hpp"

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
  // Placeholder names by slot (Node::placeholder_slot), for the report: the --arg names,
  // then the memories the program's writes made (writes.hpp).
  const std::vector<std::string>& placeholder_names() const { return placeholders_; }
  const std::vector<MemorySlot>& slots() const { return slots_; }
  // The evaluations cufuse runs at the program's writes, in order (none without writes).
  const std::vector<Evaluation>& evaluations() const { return evaluations_; }

 private:
  std::map<std::string, Value, std::less<>> vars_;
  std::vector<std::string> placeholders_;  // labels by slot
  std::vector<MemorySlot> slots_;
  std::vector<Evaluation> evaluations_;
  // The last statement: its value, and its text (or tuple items' texts) for naming results.
  Value last_;
  std::string last_name_;
  std::vector<std::string> last_item_names_;
  std::string source_;

  void run_statement(const Statement& st);
  Value eval_name(const Expr& e);
  Value eval_unary(const Expr& e);
  Value eval_binary(const Expr& e);
  Value binary_values(const Expr& e, const Expr& lhs, const Expr& rhs, Value a, Value b);
  Value eval_call(const Expr& e);
  Value eval_attribute(const Expr& e);
  Value eval_subscript(const Expr& e);
  Value module_attribute(const Value& m, const Expr& e);
  std::vector<std::pair<Value, const Expr*>> subscript_items(const Expr& e);
  std::string text_of(const Expr& e) const;
  std::string text_of(const Statement& st) const;

  // writes.cpp: in-place writes and the memory model behind them.
  void write_statement(const Statement& st);
  void augmented_name(const Statement& st);
  Array writable(const Statement& st, const Array& view, const std::string& name);
  void settle_readers(const Statement& st, int memory);
  void check_writable(const Statement& st, const Array& view);
  void store(const Statement& st, Array view, Array value, const std::string& target_text);
  Value assigned_value(const Statement& st, const Array& view, const Value& v);
  Value ufunc_value(const Statement& st, const Array& view, const Expr& target, const Value& rhs, bool checked);
  int new_slot(const std::string& label, const std::string& memory, int first_slot, int written_by);
  template <class F>
  void for_each_array(F&& f);
};

}  // namespace cufuse::cli
