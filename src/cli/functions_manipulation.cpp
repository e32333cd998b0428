// src/cli/functions_manipulation.cpp: the function table's rows for issue 30's joining,
// splitting and rearranging functions (cufuse/manipulation.hpp) and the random additions
// (cufuse/random.hpp: random.integers, random.choice, ...). functions.cpp appends these rows
// to THE function table.
#include <fmt/format.h>

#include "cli/registry.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/random.hpp"

namespace cufuse::cli {

namespace {

std::vector<Array> arrays_of(const Args& a, const char* p) {
  const Value& v = a.get(p);
  if (!v.is_sequence()) a.fail(p, fmt::format("expected a sequence of arrays, got {}", v.type_name()));
  std::vector<Array> xs;
  for (const auto& it : v.items) {
    if (it.kind == Value::Kind::Number) xs.push_back(cufuse::full(Shape{}, it.number, it.number.dtype()));
    else if (it.kind == Value::Kind::Array) xs.push_back(it.array);
    else a.fail(p, fmt::format("expected arrays, got {}", it.type_name()));
  }
  return xs;
}
std::vector<Array> star_arrays(const Args& a, const char* p) {
  const Value& v = a.get(p);  // *arys: a tuple of the arguments
  if (v.items.size() == 1 && v.items[0].is_sequence()) {
    Value inner = v.items[0];
    std::vector<Array> xs;
    for (const auto& it : inner.items)
      xs.push_back(it.kind == Value::Kind::Array ? it.array : cufuse::full(Shape{}, it.number, it.number.dtype()));
    return xs;
  }
  return arrays_of(a, p);
}
Value arrays_tuple(const std::vector<Array>& xs) {
  std::vector<Value> out;
  for (const auto& x : xs) out.push_back(Value::of(x));
  return Value::tuple(std::move(out), Value::Kind::List);
}
std::optional<int> opt_axis_arg(const Args& a, const char* p) {
  return a.given(p) ? std::optional<int>(static_cast<int>(a.integer(p))) : std::nullopt;
}
std::vector<int64_t> ints_of(const Args& a, const char* p) {
  const Value& v = a.get(p);
  std::vector<int64_t> r;
  if (v.is_int()) return {v.number.to_int64()};
  if (!v.is_sequence()) a.fail(p, fmt::format("expected an int or a sequence of ints, got {}", v.type_name()));
  for (const auto& it : v.items) {
    if (!it.is_int()) a.fail(p, fmt::format("expected ints, got {}", it.type_name()));
    r.push_back(it.number.to_int64());
  }
  return r;
}
std::optional<uint64_t> opt_seed(const Args& a) {
  return a.given("seed") ? std::optional<uint64_t>(static_cast<uint64_t>(a.integer("seed"))) : std::nullopt;
}
Shape size_of(const Args& a) { return a.given("size") ? a.shape("size") : Shape{}; }

// ---- joining
Value fn_concatenate(const Args& a) {
  return Value::of(cufuse::concatenate(arrays_of(a, "arrays"), opt_axis_arg(a, "axis"), a.dtype("dtype")));
}
Value fn_stack(const Args& a) {
  return Value::of(cufuse::stack(arrays_of(a, "arrays"), static_cast<int>(a.integer("axis")), a.dtype("dtype")));
}
Value fn_vstack(const Args& a) { return Value::of(cufuse::vstack(arrays_of(a, "tup"))); }
Value fn_hstack(const Args& a) { return Value::of(cufuse::hstack(arrays_of(a, "tup"))); }
Value fn_dstack(const Args& a) { return Value::of(cufuse::dstack(arrays_of(a, "tup"))); }
Value fn_column_stack(const Args& a) { return Value::of(cufuse::column_stack(arrays_of(a, "tup"))); }

// ---- splitting: an int is a number of sections, a sequence the split points
template <auto Sections, auto Indices>
Value splitter(const Args& a, int axis) {
  const Array x = a.array("ary");
  if (a.get("indices_or_sections").is_int()) return arrays_tuple(Sections(x, a.integer("indices_or_sections"), axis));
  return arrays_tuple(Indices(x, ints_of(a, "indices_or_sections"), axis));
}
std::vector<Array> split_n(const Array& x, int64_t n, int ax) { return cufuse::split(x, n, ax); }
std::vector<Array> split_i(const Array& x, const std::vector<int64_t>& i, int ax) { return cufuse::split(x, i, ax); }
std::vector<Array> asplit_n(const Array& x, int64_t n, int ax) { return cufuse::array_split(x, n, ax); }
std::vector<Array> asplit_i(const Array& x, const std::vector<int64_t>& i, int ax) {
  return cufuse::array_split(x, i, ax);
}
Value fn_split(const Args& a) { return splitter<split_n, split_i>(a, static_cast<int>(a.integer("axis"))); }
Value fn_array_split(const Args& a) { return splitter<asplit_n, asplit_i>(a, static_cast<int>(a.integer("axis"))); }
template <auto N, auto I>
Value dir_split(const Args& a) {
  const Array x = a.array("ary");
  if (a.get("indices_or_sections").is_int()) return arrays_tuple(N(x, a.integer("indices_or_sections")));
  return arrays_tuple(I(x, ints_of(a, "indices_or_sections")));
}
std::vector<Array> hs_n(const Array& x, int64_t n) { return cufuse::hsplit(x, n); }
std::vector<Array> hs_i(const Array& x, const std::vector<int64_t>& i) { return cufuse::hsplit(x, i); }
std::vector<Array> vs_n(const Array& x, int64_t n) { return cufuse::vsplit(x, n); }
std::vector<Array> vs_i(const Array& x, const std::vector<int64_t>& i) { return cufuse::vsplit(x, i); }
std::vector<Array> ds_n(const Array& x, int64_t n) { return cufuse::dsplit(x, n); }
std::vector<Array> ds_i(const Array& x, const std::vector<int64_t>& i) { return cufuse::dsplit(x, i); }

// ---- rearranging
Value fn_tile(const Args& a) { return Value::of(cufuse::tile(a.array("A"), ints_of(a, "reps"))); }
Value fn_repeat(const Args& a) {
  const Value& r = a.get("repeats");
  if (r.is_int()) return Value::of(cufuse::repeat(a.array("a"), r.number.to_int64(), opt_axis_arg(a, "axis")));
  return Value::of(cufuse::repeat(a.array("a"), ints_of(a, "repeats"), opt_axis_arg(a, "axis")));
}
Value fn_flip(const Args& a) {
  if (!a.given("axis")) return Value::of(cufuse::flip(a.array("m")));
  return Value::of(cufuse::flip(a.array("m"), a.axes("axis")));
}
Value fn_fliplr(const Args& a) { return Value::of(cufuse::fliplr(a.array("m"))); }
Value fn_flipud(const Args& a) { return Value::of(cufuse::flipud(a.array("m"))); }
Value fn_roll(const Args& a) {
  const Value& s = a.get("shift");
  if (!a.given("axis")) {
    if (!s.is_int()) a.fail("shift", "a sequence of shifts needs as many axes");
    return Value::of(cufuse::roll(a.array("a"), s.number.to_int64()));
  }
  const auto ax = ints_of(a, "axis");
  return Value::of(cufuse::roll(a.array("a"), ints_of(a, "shift"), std::vector<int>(ax.begin(), ax.end())));
}
Value fn_rot90(const Args& a) {
  const auto ax = a.given("axes") ? ints_of(a, "axes") : std::vector<int64_t>{0, 1};
  if (ax.size() != 2) a.fail("axes", "len(axes) must be 2.");
  return Value::of(cufuse::rot90(a.array("m"), static_cast<int>(a.integer("k")),
                                 {static_cast<int>(ax[0]), static_cast<int>(ax[1])}));
}
Value fn_pad(const Args& a) {
  const Value& w = a.get("pad_width");
  std::vector<std::pair<int64_t, int64_t>> pw;
  auto pair_of = [&](const Value& v) -> std::pair<int64_t, int64_t> {
    if (v.is_int()) return {v.number.to_int64(), v.number.to_int64()};
    if (v.is_sequence() && v.items.size() == 1 && v.items[0].is_int())
      return {v.items[0].number.to_int64(), v.items[0].number.to_int64()};
    if (v.is_sequence() && v.items.size() == 2 && v.items[0].is_int() && v.items[1].is_int())
      return {v.items[0].number.to_int64(), v.items[1].number.to_int64()};
    a.fail("pad_width", "pad_width must be an int, (before, after) or ((before, after), ...)");
  };
  if (w.is_sequence() && !w.items.empty() && w.items[0].is_sequence()) {
    for (const auto& it : w.items) pw.push_back(pair_of(it));
  } else {
    pw.push_back(pair_of(w));
  }
  const Scalar cv = a.given("constant_values") ? a.number("constant_values") : Scalar(0);
  return Value::of(cufuse::pad(a.array("array"), pw, a.string("mode"), cv));
}
template <Array (*F)(const Array&)>
Value atleast(const Args& a) {
  const auto xs = star_arrays(a, "arys");
  if (xs.size() == 1) return Value::of(F(xs[0]));
  std::vector<Array> out;
  for (const auto& x : xs) out.push_back(F(x));
  return arrays_tuple(out);
}
Array at1(const Array& x) { return cufuse::atleast_1d(x); }
Array at2(const Array& x) { return cufuse::atleast_2d(x); }
Array at3(const Array& x) { return cufuse::atleast_3d(x); }

// ---- random
Value fn_integers(const Args& a) {
  int64_t low = a.integer("low"), high;
  if (a.given("high")) high = a.integer("high");
  else high = low, low = 0;
  return Value::of(cufuse::random::integers(low, high, size_of(a), a.dtype("dtype").value_or(DType::Int64), opt_seed(a)));
}
Value fn_exponential(const Args& a) {
  return Value::of(cufuse::random::exponential(a.real("scale"), size_of(a), a.dtype("dtype").value_or(DType::Float64),
                                               opt_seed(a)));
}
Value fn_poisson(const Args& a) {
  return Value::of(cufuse::random::poisson(a.real("lam"), size_of(a), a.dtype("dtype").value_or(DType::Int64), opt_seed(a)));
}
Value fn_choice(const Args& a) {
  return Value::of(cufuse::random::choice(a.integer("a"), size_of(a), a.boolean("replace"), opt_seed(a)));
}
Value fn_permutation(const Args& a) {
  const Value& x = a.get("x");
  if (x.is_int()) return Value::of(cufuse::random::permutation(x.number.to_int64(), opt_seed(a)));
  return Value::of(cufuse::random::permutation(a.array("x"), opt_seed(a)));
}
Value fn_normal(const Args& a) {
  return Value::of(cufuse::random::normal(size_of(a), a.dtype("dtype").value_or(DType::Float64), opt_seed(a),
                                          a.real("loc"), a.real("scale")));
}
Value fn_uniform(const Args& a) {
  return Value::of(cufuse::random::uniform(size_of(a), a.dtype("dtype").value_or(DType::Float64), opt_seed(a),
                                           a.real("low"), a.real("high")));
}

}  // namespace

const std::vector<FunctionRow>& manipulation_function_rows() {
  static const std::vector<FunctionRow> rows = {
    // joining: one fused kernel selecting each element's part by its coordinate
    {"concatenate", "arrays, axis=0, dtype=None", fn_concatenate, false, "join along an axis (None: flattened)"},
    {"stack", "arrays, axis=0, dtype=None", fn_stack, false, "join along a new axis"},
    {"vstack", "tup", fn_vstack, false, "join along axis 0 (1-d arrays as rows)"},
    {"hstack", "tup", fn_hstack, false, "join along axis 1 (axis 0 for 1-d arrays)"},
    {"dstack", "tup", fn_dstack, false, "join along axis 2"},
    {"column_stack", "tup", fn_column_stack, false, "1-d arrays as columns"},
    // splitting: views (a list)
    {"split", "ary, indices_or_sections, axis=0", fn_split, false, "equal sections or at indices (views)"},
    {"array_split", "ary, indices_or_sections, axis=0", fn_array_split, false, "sections, the first ones longer"},
    {"hsplit", "ary, indices_or_sections", dir_split<hs_n, hs_i>, false, "split along axis 1"},
    {"vsplit", "ary, indices_or_sections", dir_split<vs_n, vs_i>, false, "split along axis 0"},
    {"dsplit", "ary, indices_or_sections", dir_split<ds_n, ds_i>, false, "split along axis 2"},
    // rearranging: index maps fused with their producers and consumers, or strided views
    {"tile", "A, reps", fn_tile, false, "A repeated reps times per axis"},
    {"repeat", "a, repeats, axis=None", fn_repeat, true, "each element repeated"},
    {"flip", "m, axis=None", fn_flip, false, "reversed along axes (a view)"},
    {"fliplr", "m", fn_fliplr, false, "reversed along axis 1"},
    {"flipud", "m", fn_flipud, false, "reversed along axis 0"},
    {"roll", "a, shift, axis=None", fn_roll, false, "shifted cyclically"},
    {"rot90", "m, k=1, axes=None", fn_rot90, false, "rotated by 90 degrees k times (axes default (0, 1))"},
    {"pad", "array, pad_width, mode='constant', constant_values=0", fn_pad, false,
     "padded: constant, edge, reflect, symmetric, wrap"},
    {"atleast_1d", "*arys", atleast<at1>, false, "at least 1-d"},
    {"atleast_2d", "*arys", atleast<at2>, false, "at least 2-d"},
    {"atleast_3d", "*arys", atleast<at3>, false, "at least 3-d"},
    // random: counter-based, lazy, the same values on the host and the GPU
    {"random.integers", "low, high=None, size=None, dtype=None, seed=None", fn_integers, false,
     "integers in [low, high)"},
    {"random.exponential", "scale=1.0, size=None, dtype=None, seed=None", fn_exponential, false, "exponential"},
    {"random.poisson", "lam=1.0, size=None, dtype=None, seed=None", fn_poisson, false, "poisson (int64)"},
    {"random.choice", "a, size=None, replace=True, seed=None", fn_choice, false, "draws from arange(a)"},
    {"random.permutation", "x, seed=None", fn_permutation, false, "a permutation of arange(x), or of x's rows"},
    {"random.normal", "loc=0.0, scale=1.0, size=None, dtype=None, seed=None", fn_normal, false, "normal"},
    {"random.uniform", "low=0.0, high=1.0, size=None, dtype=None, seed=None", fn_uniform, false, "uniform in [low, high)"},
  };
  return rows;
}

}  // namespace cufuse::cli
