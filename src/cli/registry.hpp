// src/cli/registry.hpp: how the program's function names reach cufuse. A FunctionRow names
// a function, its Python-style parameter list and its implementation; the rows live in ONE
// table, functions.cpp, so exposing a library function to the tool is one row there (plus a
// few lines of implementation). This file holds the machinery: binding positional and
// keyword arguments to parameters as Python does, converting arguments (shapes, axes,
// dtypes, operands) with errors that point at the argument, and finding rows by name.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/syntax.hpp"
#include "cli/value.hpp"
#include "cufuse/ops.hpp"

namespace cufuse::cli {

class Args;
using FunctionImpl = Value (*)(const Args&);

struct FunctionRow {
  const char* name;
  // Python-style parameters: "a, shape, order='C'". A parameter with a default is optional;
  // defaults are literals (None, True, False, numbers, strings). "*name" collects the
  // remaining positional arguments into a tuple (which may also be passed as name=...);
  // parameters after it are keyword-only.
  const char* params;
  FunctionImpl impl;
  bool method;       // also callable as array.name(...), the array being the first parameter
  const char* doc;   // one line for --list-functions
  const char* op = nullptr;  // elementwise rows: the op table's name (abs -> "absolute")
};

// An argument as written: its value and where it is in the program.
struct Arg {
  Value value;
  Loc loc;
  size_t length = 1;
};

// The arguments of one call, bound to the row's parameters.
class Args {
 public:
  Args(const FunctionRow& row, std::vector<std::string> names, std::vector<std::optional<Arg>> bound, Arg call)
      : row_(row), names_(std::move(names)), bound_(std::move(bound)), call_(std::move(call)) {}

  const FunctionRow& row() const { return row_; }
  const Loc& loc() const { return call_.loc; }

  const Value& get(std::string_view param) const;  // the value or the default (None if neither)
  bool given(std::string_view param) const;         // passed, and not None

  // Conversions; each throws a ProgramError at the argument when the value does not fit.
  cufuse::Array array(std::string_view param) const;     // an array (a number becomes a 0-d array)
  cufuse::Operand operand(std::string_view param) const; // an array or a number (refers into *this)
  Scalar number(std::string_view param) const;           // bool, int or float
  int64_t integer(std::string_view param) const;         // an int
  double real(std::string_view param) const;             // an int or float
  bool boolean(std::string_view param) const;
  std::string string(std::string_view param) const;
  Shape shape(std::string_view param) const;             // an int or a tuple/list of ints
  Axes axes(std::string_view param) const;               // an int or a tuple/list of ints
  std::optional<DType> dtype(std::string_view param) const;  // a dtype, a dtype name, or None

  [[noreturn]] void fail(std::string_view param, const std::string& message) const;

 private:
  int index(std::string_view param) const;
  const Arg& arg(std::string_view param) const;  // the call itself when param was not passed

  const FunctionRow& row_;
  std::vector<std::string> names_;
  std::vector<std::optional<Arg>> bound_;  // per parameter (defaults filled in)
  Arg call_;                                // the whole call, for errors about absent arguments
};

// The table (functions.cpp): every row the tool knows, op-table rows included.
const std::vector<FunctionRow>& function_table();
// An axes argument: an int or a tuple of ints (else a.fail naming param).
Axes to_axes(const Args& a, const char* param, const Value& v);
// The library rows (functions_library.cpp), part of function_table().
const std::vector<FunctionRow>& library_function_rows();
// The rows of issue 30's creation and comparison functions (functions_surface.cpp).
const std::vector<FunctionRow>& surface_function_rows();
// The rows of issue 30's joining, splitting, rearranging and random functions
// (functions_manipulation.cpp).
const std::vector<FunctionRow>& manipulation_function_rows();
const std::vector<FunctionRow>& indexing_function_rows();  // functions_indexing.cpp
const std::vector<FunctionRow>& statistics_function_rows();  // functions_statistics.cpp
const std::vector<FunctionRow>& sorting_function_rows();   // functions_sorting.cpp
const std::vector<FunctionRow>& fft_function_rows();       // functions_fft.cpp (rows "fft.<name>")
const FunctionRow* find_function(std::string_view name);
// Functions of the library that the tool does not have yet: a message saying so
// ("matmul is not available yet"), or nullopt.
std::optional<std::string> not_available_yet(std::string_view name);
// Names in the table (and the given extra names) close to `name`, for "did you mean".
std::vector<std::string> similar_names(std::string_view name, const std::vector<std::string>& extra = {});

// Binds the arguments to the row's parameters as Python does and calls it. `call` is the
// whole call expression (for errors about missing arguments). cufuse errors are left to the
// caller (which knows the call's place); binding errors are ProgramErrors.
Value call_function(const FunctionRow& row, std::vector<Arg> positional,
                    std::vector<std::pair<std::string, Arg>> keywords, const Arg& call);

// "reshape(a, *shape, order='C')"
std::string signature(const FunctionRow& row);

}  // namespace cufuse::cli
