// src/cli/writes.cpp: the program's in-place writes, x op= e, x[idx] = e and x[idx] op= e,
// with NumPy's semantics (op= is the ufunc with out=x: the result must have x's shape and
// cast to x's dtype under 'same_kind'; x[idx] = e broadcasts e and casts it 'unsafe'; when
// idx picks one element with an int per axis, x[idx] op= e is NumPy's scalar get, op and set,
// so its cast is unsafe too), done in the order cufuse does an eager write (graph/array.cpp
// writable_leaf, exec/executor.cpp write_into):
//   1. the array written becomes memory: a lazy one is computed into memory of its own, a
//      view of a lazy array computes the array it views (Evaluation::Materialize);
//   2. the pending values that read that memory are computed first, with the old values
//      (Evaluation::Settle); handles on them now see that memory;
//   3. the value, built from the handles as they now are, goes through a temporary when it
//      reads the memory other than element for element (NumPy's overlap rule;
//      Evaluation::Temporary); a library result for a view that is not dense is copied;
//   4. one evaluation computes the value into the memory through the view (Evaluation::Write),
//      and every handle that is a view of the memory is rebound to its new version.
// The memory model (placeholder slots and versions) is in writes.hpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_set>

#include <fmt/format.h>

#include "cli/eval_support.hpp"
#include "cli/evaluator.hpp"
#include "cli/numbers.hpp"
#include "core/node.hpp"
#include "cufuse/ops.hpp"
#include "graph/elementwise.hpp"
#include "graph/lazy_base.hpp"
#include "core/node.hpp"
#include "graph/views.hpp"

namespace cufuse::cli {

namespace {

using detail::Layout;
using detail::Node;
using detail::NodeKind;
using detail::NodePtr;

// A placeholder leaf: the memory of `slot` seen through `layout`.
Array leaf_on(int slot, DType t, const Layout& layout, bool read_only) {
  NodePtr n = detail::make_buffer(t, layout, nullptr);
  n->placeholder_slot = slot;
  n->read_only = read_only;
  return Array(std::move(n));
}

bool same_layout(const Layout& a, const Layout& b) {
  return a.shape == b.shape && a.strides == b.strides && a.offset == b.offset;
}

int memory_of(const Node& leaf, const std::vector<MemorySlot>& slots) {
  const int s = leaf.placeholder_slot;
  return s >= 0 && s < static_cast<int>(slots.size()) ? slots[static_cast<size_t>(s)].first_slot : -1;
}

// Does the graph under n read `memory` (any of its slots)?
bool reads_memory(const Node* n, const std::vector<MemorySlot>& slots, int memory,
                  std::unordered_set<const Node*>& seen) {
  if (!seen.insert(n).second) return false;
  if (n->is_placeholder()) return memory_of(*n, slots) == memory;
  for (const auto& in : n->inputs)
    if (reads_memory(in.get(), slots, memory, seen)) return true;
  return false;
}

// Does `n` read `memory` anywhere but element for element with the view written, `target`:
// through another layout, or under a view, reduction or library call (exec/executor.cpp's
// reads_misaligned)?
bool reads_misaligned(const Node* n, const std::vector<MemorySlot>& slots, int memory, const Layout& target,
                      bool under_view, std::set<std::pair<const Node*, bool>>& seen) {
  if (!seen.insert({n, under_view}).second) return false;
  if (n->is_placeholder()) return memory_of(*n, slots) == memory && (under_view || !same_layout(n->layout, target));
  const NodeKind k = n->k();
  const bool view = under_view || k == NodeKind::View || k == NodeKind::Reduce || k == NodeKind::Library;
  for (const auto& in : n->inputs)
    if (reads_misaligned(in.get(), slots, memory, target, view, seen)) return true;
  return false;
}

std::string at_text(const Loc& l) { return fmt::format("{}:{}", l.line, l.column); }

// NumPy's name of the ufunc in its casting message ("/" is true_divide, spelled divide).
std::string ufunc_name(const std::string& f) { return f == "true_divide" ? "divide" : f; }

// The range check NumPy 2 makes when a Python int or float is stored into an integer array.
void check_python_scalar(const Scalar& x, DType t) {
  if (!x.weak() || !is_integer(t) || t == DType::Bool) return;
  if (x.kind() == Scalar::Kind::Float) {
    const double d = x.to_double();
    if (std::isnan(d)) throw ValueError("cannot convert float NaN to integer");
    if (std::isinf(d)) throw OverflowError("cannot convert float infinity to integer");
    return;
  }
  if (x.kind() != Scalar::Kind::Int && x.kind() != Scalar::Kind::UInt) return;
  const int bits = static_cast<int>(itemsize(t)) * 8;
  bool ok;
  if (x.kind() == Scalar::Kind::UInt) {  // above int64's range
    ok = !is_signed_int(t) && bits == 64;
  } else {
    const int64_t v = x.to_int64();
    if (is_signed_int(t)) {
      ok = bits == 64 || (v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1)));
    } else {
      ok = v >= 0 && (bits == 64 || v < (int64_t(1) << bits));
    }
  }
  if (!ok) throw OverflowError(fmt::format("Python integer {} out of bounds for {}", x.str(), name(t)));
}

// NumPy's x[...] = v: v's shape broadcast into the view's, leading 1s of v dropped first.
bool assignable(Shape from, const Shape& to) {
  while (from.ndim() > to.ndim()) {
    if (from[0] != 1) return false;
    from = Shape(std::vector<int64_t>(from.begin() + 1, from.end()));
  }
  for (int i = 0; i < from.ndim(); ++i) {
    const int64_t f = from[i], t = to[to.ndim() - from.ndim() + i];
    if (f != t && f != 1) return false;
  }
  return true;
}

}  // namespace

// ------------------------------------------------------------------ memory
int Evaluator::new_slot(const std::string& label, const std::string& memory, int first_slot, int written_by) {
  const int slot = static_cast<int>(placeholders_.size());
  placeholders_.push_back(label);
  slots_.push_back(MemorySlot{label, memory, first_slot, written_by});
  return slot;
}

// Calls f(array, name) on every array handle the program holds: its variables (tuple and
// list items too, and the arrays methods are bound to) and the last statement's value.
template <class F>
void Evaluator::for_each_array(F&& f) {
  auto visit = [&](auto& self, Value& v, const std::string& name) -> void {
    if (v.array.defined()) f(v.array, name);
    for (size_t i = 0; i < v.items.size(); ++i) self(self, v.items[i], fmt::format("{}[{}]", name, i));
  };
  for (auto& [k, v] : vars_) visit(visit, v, k);
  visit(visit, last_, last_name_);
}

// The memory `view` writes into, as a placeholder leaf: an --arg input or memory made earlier
// is written as it is; a lazy array is first computed into memory of its own, a view of a
// lazy array computes the array it views, and every handle on that array or a view of it
// is rebound to the memory (graph/array.cpp: writable_leaf).
Array Evaluator::writable(const Statement& st, const Array& view, const std::string& name) {
  const NodePtr n = view.node();
  if (n->is_placeholder() && memory_of(*n, slots_) >= 0) return view;
  const std::shared_ptr<detail::LazyBase> base = view.lazy_base();
  const NodePtr whole = base ? base->node : n;
  Evaluation ev;
  ev.kind = Evaluation::Kind::Materialize;
  ev.loc = st.loc;
  ev.why = fmt::format("`{}` at {} writes into {}, a lazy array: it is computed into memory of its own first",
                       text_of(st), at_text(st.loc), name);
  const int slot = new_slot(name, name, static_cast<int>(placeholders_.size()), static_cast<int>(evaluations_.size()));
  ev.roots.push_back(NamedArray{name, Array(whole)});
  ev.slots.push_back(slot);
  evaluations_.push_back(std::move(ev));
  const Layout dense = detail::contiguous_layout(whole->shape());
  for_each_array([&](Array& a, const std::string&) {
    const auto& b = a.lazy_base();
    if (a.node() == whole) a = leaf_on(slot, whole->dtype, dense, false);
    else if (b && b->node == whole) a = leaf_on(slot, whole->dtype, b->view, b->read_only);
  });
  return base ? leaf_on(slot, whole->dtype, base->view, base->read_only) : leaf_on(slot, whole->dtype, dense, false);
}

// Computes the pending values that read `memory` before it is written: they keep the old
// values. Each becomes memory of its own, which the handles on it (and on views of it) see.
void Evaluator::settle_readers(const Statement& st, int memory) {
  std::vector<NodePtr> roots;
  std::vector<std::string> names;
  for_each_array([&](Array& a, const std::string& name) {
    const auto& b = a.lazy_base();
    const NodePtr r = b ? b->node : a.node();
    if (!r || r->is_leaf()) return;  // a view of memory (rebound after the write), a scalar, a generator
    for (const auto& x : roots)
      if (x == r) return;
    std::unordered_set<const Node*> seen;
    if (!reads_memory(r.get(), slots_, memory, seen)) return;
    roots.push_back(r);
    names.push_back(name);
  });
  if (roots.empty()) return;
  Evaluation ev;
  ev.kind = Evaluation::Kind::Settle;
  ev.loc = st.loc;
  ev.why = fmt::format("`{}` at {} writes into {}: first the pending values that read it are computed, with the "
                       "values from before the write",
                       text_of(st), at_text(st.loc), slots_[static_cast<size_t>(memory)].memory);
  const int index = static_cast<int>(evaluations_.size());
  for (size_t i = 0; i < roots.size(); ++i) {
    const int slot = new_slot(fmt::format("{} (computed before the write at {})", names[i], at_text(st.loc)), names[i],
                              static_cast<int>(placeholders_.size()), index);
    ev.roots.push_back(NamedArray{names[i], Array(roots[i])});
    ev.slots.push_back(slot);
  }
  for_each_array([&](Array& a, const std::string&) {
    const auto& b = a.lazy_base();
    const NodePtr own = a.node();
    for (size_t i = 0; i < roots.size(); ++i) {
      const Layout dense = detail::contiguous_layout(roots[i]->shape());
      if (own == roots[i]) a = leaf_on(ev.slots[i], own->dtype, dense, false);
      else if (b && b->node == roots[i]) a = leaf_on(ev.slots[i], own->dtype, b->view, b->read_only);
      else continue;
      return;
    }
  });
  evaluations_.push_back(std::move(ev));
}

// Writes `value` (the view's shape and dtype) into the memory `view` (a placeholder leaf)
// sees: through a temporary where it reads that memory other than element for element, then
// the write; the memory's handles then see its new version.
void Evaluator::store(const Statement& st, Array view, Array value, const std::string& target_text) {
  const NodePtr t = view.node();
  const int old_slot = t->placeholder_slot;
  const int memory = memory_of(*t, slots_);
  const std::string mem_name = slots_[static_cast<size_t>(memory)].memory;  // (a copy: new_slot grows slots_)
  NodePtr v = value.node();
  std::set<std::pair<const Node*, bool>> seen;
  if (reads_misaligned(v.get(), slots_, memory, t->layout, false, seen)) {
    Evaluation tmp;
    tmp.kind = Evaluation::Kind::Temporary;
    tmp.loc = st.loc;
    tmp.why = fmt::format("`{}` at {} reads {} other than element for element: the value goes to a temporary first",
                          text_of(st), at_text(st.loc), mem_name);
    const std::string label = fmt::format("temporary of the write at {}", at_text(st.loc));
    const int slot = new_slot(label, label, static_cast<int>(placeholders_.size()), static_cast<int>(evaluations_.size()));
    tmp.roots.push_back(NamedArray{label, value});
    tmp.slots.push_back(slot);
    evaluations_.push_back(std::move(tmp));
    v = leaf_on(slot, v->dtype, detail::contiguous_layout(v->shape()), false).node();
  }
  // A library call writes its result densely: into a view that is not, through a copy.
  if (v->k() == NodeKind::Library && !t->layout.is_contiguous()) v = detail::cast_node(v, v->dtype, /*always=*/true);
  Evaluation w;
  w.kind = Evaluation::Kind::Write;
  w.loc = st.loc;
  w.why = fmt::format("`{}` at {} writes into {}", text_of(st), at_text(st.loc), mem_name);
  w.memory = mem_name;
  w.target_slot = old_slot;
  w.shape = t->layout.shape;
  w.strides = t->layout.strides;
  w.offset = t->layout.offset;
  w.roots.push_back(NamedArray{target_text, Array(v)});
  const int next = new_slot(fmt::format("{} (after the write at {})", mem_name, at_text(st.loc)), mem_name, memory,
                            static_cast<int>(evaluations_.size()));
  w.slots.push_back(next);
  evaluations_.push_back(std::move(w));
  for_each_array([&](Array& a, const std::string&) {
    const NodePtr n = a.node();
    if (n && n->is_placeholder() && n->placeholder_slot == old_slot) a = leaf_on(next, n->dtype, n->layout, n->read_only);
  });
}

// ------------------------------------------------------------------ values
// x[...] = v: v broadcast into the view and cast to its dtype ('unsafe', as NumPy's
// assignment); a Python number is range-checked as NumPy 2 does.
Value Evaluator::assigned_value(const Statement& st, const Array& view, const Value& v) {
  const size_t span = st.end > st.loc.offset ? st.end - st.loc.offset : 1;
  if (v.is_array()) {
    if (!assignable(v.array.shape(), view.shape()))
      fail_at(*st.value, fmt::format("ValueError: could not broadcast input array from shape {} into shape {}",
                                     to_string(v.array.shape()), to_string(view.shape())));
    return guarded(st.loc, span, [&] {
      Array a = v.array;
      if (a.ndim() > view.ndim()) a = a.reshape(Shape(std::vector<int64_t>(a.shape().end() - view.ndim(), a.shape().end())));
      a = a.broadcast_to(view.shape());
      return Value::of(a.dtype() == view.dtype() ? a : cufuse::astype(a, view.dtype()));
    });
  }
  if (v.is_number()) {
    return guarded(*st.value, [&] {
      check_python_scalar(v.number, view.dtype());
      return Value::of(Array(detail::make_scalar(v.number, view.dtype(), view.shape())));
    });
  }
  fail_at(*st.value, fmt::format("TypeError: cannot assign {} to an array (assign an array or a number)", v.type_name()));
}

// The ufunc of `op=` on (view, rhs). `checked`: NumPy's out= rules: the result has the view's
// shape, and casts to its dtype under 'same_kind' (then it is cast); else the bare result.
Value Evaluator::ufunc_value(const Statement& st, const Array& view, const Expr& target, const Value& rhs,
                             bool checked) {
  const size_t span = st.end > st.loc.offset ? st.end - st.loc.offset : 1;
  const std::string sym = st.op.substr(0, st.op.size() - 1);
  const std::string fname = binary_function(sym);
  const FunctionRow* f = find_function(fname);
  if (!f) {
    if (auto msg = not_available_yet(fname)) fail_at(st.op_loc, st.op.size(), *msg);
    fail_at(st.op_loc, st.op.size(), fmt::format("no function for operator {}", st.op));
  }
  if (!rhs.is_array() && !rhs.is_number())
    fail_at(*st.value, fmt::format("TypeError: unsupported operand type(s) for {}: 'array' and '{}'", st.op,
                                   rhs.type_name()));
  Value r = guarded(st.loc, span, [&] {
    return call_function(*f, {arg_of(target, Value::of(view)), arg_of(*st.value, rhs)}, {}, Arg{{}, st.loc, span});
  });
  if (!checked) return r;
  if (!(r.array.shape() == view.shape()))
    fail_at(st.loc, span, fmt::format("ValueError: non-broadcastable output operand with shape {} doesn't match the "
                                      "broadcast shape {}", to_string(view.shape()), to_string(r.array.shape())));
  if (!detail::can_cast_same_kind(r.array.dtype(), view.dtype()))
    fail_at(st.loc, span, fmt::format("TypeError: Cannot cast ufunc '{}' output from {} to {} with casting rule "
                                      "'same_kind'", ufunc_name(fname), name(r.array.dtype()), name(view.dtype())));
  if (r.array.dtype() != view.dtype()) r.array = cufuse::astype(r.array, view.dtype());
  return r;
}

// ------------------------------------------------------------------ statements
// NAME op= e. An array is written in place (every handle on it sees the write); a Python
// number or tuple is immutable, so the name is rebound to NAME op e, as in Python.
void Evaluator::augmented_name(const Statement& st) {
  const Value* cur = lookup(st.target);
  Expr name_e;
  name_e.kind = ExprKind::Name;
  name_e.text = st.target;
  name_e.loc = st.target_loc;
  name_e.end = st.target_loc.offset + st.target.size();
  const Value lhs = cur ? *cur : eval_name(name_e);  // (raises "name 'x' is not defined")
  last_item_names_.clear();
  if (!lhs.is_array()) {
    Value rhs = eval(*st.value);
    Expr whole;
    whole.kind = ExprKind::Binary;
    whole.loc = st.loc;
    whole.end = st.end;
    whole.op_loc = st.op_loc;
    whole.text = st.op.substr(0, st.op.size() - 1);
    Value r = binary_values(whole, name_e, *st.value, lhs, rhs);
    vars_[st.target] = r;
    last_name_ = st.target;
    last_ = std::move(r);
    return;
  }
  Array view = writable(st, lhs.array, st.target);
  check_writable(st, view);
  if (view.size() > 0) settle_readers(st, memory_of(*view.node(), slots_));
  const Value rhs = eval(*st.value);
  const Value value = ufunc_value(st, view, name_e, rhs, /*checked=*/true);
  if (view.size() > 0) store(st, view, value.array, text_of(st));
  last_name_ = st.target;
  last_ = *lookup(st.target);
}

// x[idx] = e and x[idx] op= e.
void Evaluator::write_statement(const Statement& st) {
  if (!st.subscript) return augmented_name(st);
  const Expr& target = *st.subscript;
  const Expr& base_e = *target.items[0];
  const Value obj = eval(base_e);
  const std::vector<std::pair<Value, const Expr*>> idx = subscript_items(target);
  if (!obj.is_array())
    fail_at(target, fmt::format("TypeError: '{}' object does not support item assignment", obj.type_name()));
  for (const auto& [v, where] : idx)
    if (v.is_array())
      fail_at(*where, "writes through an index array or a mask (x[idx] = v, x[mask] += v) are not modelled here: a "
                      "scatter is carried out at once on memory, and placeholders have none (use put or add.at on data)");
  const std::vector<Index> ix = array_indices(idx);
  // One int per axis picks an element: NumPy gets a scalar, applies op to it and sets it back.
  bool element = static_cast<int>(idx.size()) == obj.array.ndim();
  for (const auto& [v, where] : idx) element = element && v.is_int();
  const Array picked = guarded(target, [&] { return obj.array.index(ix); });
  const Array view = writable(st, picked, text_of(base_e));
  check_writable(st, view);
  if (view.size() > 0) settle_readers(st, memory_of(*view.node(), slots_));
  const Value rhs = eval(*st.value);
  Value value;
  if (st.op == "=") value = assigned_value(st, view, rhs);
  else if (element) value = assigned_value(st, view, ufunc_value(st, view, target, rhs, /*checked=*/false));
  else value = ufunc_value(st, view, target, rhs, /*checked=*/true);
  if (view.size() > 0) store(st, view, value.array, text_of(st));
  // The statement's value, for a program that ends with it: the array written into, as now.
  last_item_names_.clear();
  last_name_ = text_of(base_e);
  last_ = eval(base_e);
}

// NumPy refuses to write through a broadcast view.
void Evaluator::check_writable(const Statement& st, const Array& view) {
  const NodePtr& n = view.node();
  if (std::string why = cufuse::detail::read_only_what(*n); !why.empty())
    fail_at(st.target_loc, (st.subscript ? st.subscript->span() : st.target.size()),
            "ValueError: assignment destination is read-only: " + why);
}

}  // namespace cufuse::cli
