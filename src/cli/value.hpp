// src/cli/value.hpp: the values a program computes with: cufuse arrays, Python numbers
// (cufuse::Scalar, weak like Python's), strings, tuples and lists, slices, dtypes, and
// functions (a registry row, bound to an array when it is a method).
#pragma once
#include <string>
#include <vector>

#include "cufuse/array.hpp"
#include "cufuse/dtype.hpp"
#include "cufuse/scalar.hpp"

namespace cufuse::cli {

struct FunctionRow;

struct Value {
  enum class Kind { None, Number, String, Array, Tuple, List, Slice, Ellipsis, DType, Function, Module };
  Kind kind = Kind::None;
  Scalar number;                          // Number (weak for literals; strong from float32(2))
  std::string text;                       // String; Module: its name ("np")
  cufuse::Array array;                    // Array; Function: the array a method is bound to
  std::vector<Value> items;               // Tuple, List; Slice: start, stop, step (None when absent)
  DType dtype = DType::Float64;           // DType
  const FunctionRow* function = nullptr;  // Function
  // An array an operator or call of the expression made (not a name's, not an input): passed
  // to the next op as a temporary, as C++ passes `x * y` in `x * y + z`, so that rule
  // contract-multiply-add (src/graph/elementwise.cpp) contracts what a C++ program would.
  bool temporary = false;

  static Value none() { return Value{}; }
  static Value of(const Scalar& s) {
    Value v;
    v.kind = Kind::Number;
    v.number = s;
    return v;
  }
  static Value of(const cufuse::Array& a) {
    Value v;
    v.kind = Kind::Array;
    v.array = a;
    return v;
  }
  static Value string(std::string s) {
    Value v;
    v.kind = Kind::String;
    v.text = std::move(s);
    return v;
  }
  static Value tuple(std::vector<Value> items, Kind k = Kind::Tuple) {
    Value v;
    v.kind = k;
    v.items = std::move(items);
    return v;
  }
  static Value of_dtype(DType t) {
    Value v;
    v.kind = Kind::DType;
    v.dtype = t;
    return v;
  }
  static Value ellipsis() {
    Value v;
    v.kind = Kind::Ellipsis;
    return v;
  }
  static Value module(std::string name) {
    Value v;
    v.kind = Kind::Module;
    v.text = std::move(name);
    return v;
  }
  static Value fn(const FunctionRow* f, const cufuse::Array& self = {}) {
    Value v;
    v.kind = Kind::Function;
    v.function = f;
    v.array = self;
    return v;
  }

  bool is_none() const { return kind == Kind::None; }
  bool is_array() const { return kind == Kind::Array; }
  bool is_number() const { return kind == Kind::Number; }
  bool is_int() const {  // a Python int (not bool, not float)
    return kind == Kind::Number && (number.kind() == Scalar::Kind::Int || number.kind() == Scalar::Kind::UInt);
  }
  bool is_sequence() const { return kind == Kind::Tuple || kind == Kind::List; }

  // Python's name for the type, as error messages spell it: "int", "str", "array", ...
  std::string type_name() const;
  // A short description for messages and results: "array float32 (3, 4)", "2.5", "(1, 2)".
  std::string describe() const;
};

// A result of the program: an array and the name the report gives it (the --out name, the
// assigned name, or the expression's text).
struct NamedArray {
  std::string name;
  cufuse::Array array;
};

}  // namespace cufuse::cli
