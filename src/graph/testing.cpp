// src/graph/testing.cpp: allclose, array_equal and numpy.testing's assert_allclose /
// assert_array_equal (cufuse/testing.hpp), ported from numpy/_core/numeric.py (isclose) and
// numpy/testing/_private/utils.py (assert_array_compare, build_err_msg).
//
// The checks are lazy expressions over the operands; what decides pass or fail is read back as
// a few scalars from sibling reductions of one iteration space (one fused kernel). Only a
// failure computes more: the first mismatched positions (a min-reduction each), the largest
// differences, and the reprs of the operands.
#include "cufuse/testing.hpp"

#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/print.hpp"
#include "cufuse/reduce.hpp"
#include "graph/print_format.hpp"

namespace cufuse {

namespace {

void testing_require(const Array& a, const char* what, const char* which) {
  if (!a.defined()) throw ValueError(fmt::format("{}: `{}` is an empty Array handle", what, which));
}

Array false_like() { return full(Shape{}, Scalar(false), DType::Bool); }

// NumPy's isclose(x, y, rtol, atol, equal_nan): y in a float dtype (result_type(y, 1.)), the
// tolerance computed in it (rtol, atol are weak Python floats there).
Array close_mask(const Array& x, const Array& y0, double rtol, double atol, bool equal_nan) {
  const Array y = is_float(y0.dtype()) ? y0 : astype(y0, DType::Float64);
  Array r = logical_or(logical_and(less_equal(absolute(subtract(x, y)), add(atol, multiply(rtol, absolute(y)))),
                                   isfinite(y)),
                       equal(x, y));
  if (equal_nan && is_float(x.dtype())) r = logical_or(r, logical_and(isnan(x), isnan(y)));
  return r;
}

// The mask is this file's own temporary: its handle goes before the evaluation, so that the
// mask is computed inside the reduction and never written to memory (a live handle would
// keep it: executor.cpp, gather_roots).
bool all_true(Array mask) {
  Array r = all(mask);
  mask = Array();
  return r.item<bool>();
}

Array scalar_array(const Scalar& s) { return full(Shape{}, s, s.dtype()); }

// ------------------------------------------------------------------ messages
std::string shape_str(const Shape& s) { return to_string(s); }

// One element of a (NumPy's str of the scalar), at a position of the broadcast shape.
std::string element_str(const Array& a, const std::vector<int64_t>& pos) {
  Array e = a;
  if (a.ndim() > 0) {
    std::vector<Index> idx;
    const int off = static_cast<int>(pos.size()) - a.ndim();
    for (int d = 0; d < a.ndim(); ++d) idx.emplace_back(a.shape(d) == 1 ? int64_t{0} : pos[off + d]);
    e = a.index(idx);
  }
  detail::HostValues v;
  v.dtype = e.dtype();
  v.resize(1);
  std::vector<unsigned char> raw(static_cast<size_t>(e.itemsize()));
  e.copy_to_host(raw.data(), raw.size());
  v.set_from_raw(0, raw.data(), 0);
  // NumPy formats these with an f-string, which makes a float16/float32 a Python float: the
  // shortest digits of the double (0.0204010009765625), not of the float16.
  if (v.dtype == DType::Float16 || v.dtype == DType::Float32) v.dtype = DType::Float64;
  return detail::scalar_str(v, 0);
}

// A 0-d array as numpy's array2string prints it (79., 0.33333333, 1, inf).
std::string zero_d_str(const Array& a) {
  detail::HostValues v;
  v.dtype = a.dtype();
  v.resize(1);
  std::vector<unsigned char> raw(static_cast<size_t>(a.itemsize()));
  a.copy_to_host(raw.data(), raw.size());
  v.set_from_raw(0, raw.data(), 0);
  return detail::element_formatter(v, 8, true)(0);
}

// build_err_msg: header, message, and the two reprs (precision 6, at most 3 lines each).
[[noreturn]] void fail(const std::string& header, const std::string& msg, const Array& x, const Array& y) {
  std::string out = header;
  if (!msg.empty()) {
    if (msg.find('\n') == std::string::npos && msg.size() < 79 - header.size()) out += " " + msg;
    else out += "\n" + msg;
  }
  PrintOptions o;
  o.precision = 6;
  const char* names[2] = {"ACTUAL", "DESIRED"};
  const Array* arrs[2] = {&x, &y};
  for (int i = 0; i < 2; ++i) {
    std::string r = array_repr(*arrs[i], o);
    size_t lines = 0, cut = std::string::npos;
    for (size_t p = 0; p < r.size(); ++p)
      if (r[p] == '\n' && ++lines == 3) cut = p;
    if (lines > 3) r = r.substr(0, cut) + "...";
    out += fmt::format("\n {}: {}", names[i], r);
  }
  throw AssertionError(out);
}

std::vector<int64_t> unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> pos(static_cast<size_t>(s.ndim()));
  for (int d = s.ndim() - 1; d >= 0; --d) {
    pos[d] = s[d] ? flat % s[d] : 0;
    flat = s[d] ? flat / s[d] : 0;
  }
  return pos;
}

std::string index_str(const std::vector<int64_t>& p) { return fmt::format("[{}]", fmt::join(p, ", ")); }

// numpy.testing's assert_array_compare, for a comparison given as a lazy mask maker.
template <class Compare>
void compare_arrays(const Array& x, const Array& y, Compare&& comparison, const std::string& header, bool equal_nan,
                    const std::string& err_msg) {
  const std::string pre = err_msg;
  if (!(x.ndim() == 0 || y.ndim() == 0 || x.shape() == y.shape()))
    fail(header, pre + fmt::format("\n(shapes {}, {} mismatch)", shape_str(x.shape()), shape_str(y.shape())), x, y);
  // Inexact dtypes (NumPy's): a complex NaN or inf is flagged as a real one is.
  const bool floats = is_float(x.dtype()) || is_float(y.dtype()) || is_complex(x.dtype()) || is_complex(y.dtype());
  // Flagged positions (nan at both, or the same inf at both) are left out of the comparison.
  Array nan_bad = false_like(), inf_loc_bad = false_like(), inf_val_bad = false_like(), flagged = false_like();
  if (floats) {
    Array nanx = isnan(x), nany = isnan(y);
    Array nanflag = false_like();
    if (equal_nan) {
      nan_bad = not_equal(nanx, nany);
      nanflag = nany;
    }
    Array infx = logical_and(isinf(x), logical_not(nanflag)), infy = logical_and(isinf(y), logical_not(nanflag));
    inf_loc_bad = not_equal(infx, infy);
    inf_val_bad = logical_and(infy, not_equal(x, y));
    flagged = logical_or(nanflag, infy);
  }
  const Array invalid = logical_and(logical_not(comparison(x, y)), logical_not(flagged));
  // One fused pass: the four counts are sibling reductions of one iteration space.
  Array counts[4] = {sum(nan_bad), sum(inf_loc_bad), sum(inf_val_bad), sum(invalid)};
  eval_all({counts[0], counts[1], counts[2], counts[3]});
  if (counts[0].item<int64_t>() > 0) fail(header, pre + "\nnan location mismatch:", x, y);
  if (counts[1].item<int64_t>() > 0) fail(header, pre + "\ninf location mismatch:", x, y);
  if (counts[2].item<int64_t>() > 0) fail(header, pre + "\ninf values mismatch:", x, y);
  const int64_t n_mismatch = counts[3].item<int64_t>();
  if (n_mismatch == 0) return;

  const Shape bshape = invalid.shape();
  const int64_t n = numel(bshape);
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.3g", 100.0 * static_cast<double>(n_mismatch) / static_cast<double>(n));
  std::vector<std::string> remarks{fmt::format("Mismatched elements: {} / {} ({}%)", n_mismatch, n, pct)};
  // The first (up to) five mismatches in row-major order: a min-reduction over their flat
  // positions each, past the one before.
  const int64_t kNone = std::numeric_limits<int64_t>::max();
  const Array flat_pos = bshape.ndim() ? arange(Scalar(n)).reshape(bshape) : full(Shape{}, Scalar(int64_t{0}), i64);
  const Array key = where(invalid, flat_pos, kNone);
  std::vector<int64_t> firsts;
  int64_t prev = -1;
  while (firsts.size() < 5) {
    const int64_t p = min(where(greater(key, prev), key, kNone)).item<int64_t>();
    if (p == kNone) break;
    firsts.push_back(p);
    prev = p;
  }
  if (bshape.ndim() > 0) {
    std::string lines;
    for (int64_t p : firsts) {
      const auto pos = unravel(p, bshape);
      lines += fmt::format("\n {}: {} (ACTUAL), {} (DESIRED)", index_str(pos), element_str(x, pos), element_str(y, pos));
    }
    const char* what = n_mismatch == 1 ? "Mismatch at index:" : (n_mismatch <= 5 ? "Mismatch at indices:"
                                                                                 : "First 5 mismatches are at indices:");
    remarks.push_back(what + lines);
  }
  if (x.dtype() != DType::Bool && y.dtype() != DType::Bool) {  // NumPy: bool subtract is a TypeError, no line
    Array error = absolute(subtract(x, y));
    if (is_unsigned_int(error.dtype())) error = minimum(error, absolute(subtract(y, x)));
    const Array zero = full(Shape{}, Scalar(0), error.dtype());
    const Array max_abs = max(where(invalid, error, zero));
    const Array nz_invalid = logical_and(invalid, not_equal(y, 0));
    Array rel = true_divide(error, absolute(y));
    const Array max_rel = max(where(nz_invalid, rel, full(Shape{}, Scalar(0), rel.dtype())));
    const Array any_nz = any(nz_invalid);
    eval_all({max_abs, max_rel, any_nz});
    remarks.push_back("Max absolute difference among violations: " + zero_d_str(max_abs));
    remarks.push_back("Max relative difference among violations: " +
                      (any_nz.item<bool>() ? zero_d_str(max_rel) : std::string("inf")));
    // Beyond NumPy: where the largest violation is, when it is not among the first five shown.
    if (bshape.ndim() > 0 && n_mismatch > 5) {
      const int64_t w = argmax(where(invalid, astype(error, DType::Float64), -1.0)).item<int64_t>();
      bool shown = false;
      for (int64_t p : firsts) shown |= p == w;
      if (!shown) {
        const auto pos = unravel(w, bshape);
        remarks.push_back(fmt::format("Largest absolute difference at index:\n {}: {} (ACTUAL), {} (DESIRED)",
                                      index_str(pos), element_str(x, pos), element_str(y, pos)));
      }
    }
  }
  fail(header, pre + "\n" + fmt::format("{}", fmt::join(remarks, "\n")), x, y);
}

std::string g_str(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

}  // namespace

bool allclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  testing_require(a, "allclose", "a");
  testing_require(b, "allclose", "b");
  return all_true(close_mask(a, b, rtol, atol, equal_nan));
}
bool allclose(const Array& a, const Scalar& b, double rtol, double atol, bool equal_nan) {
  return allclose(a, scalar_array(b), rtol, atol, equal_nan);
}

bool array_equal(const Array& a, const Array& b, bool equal_nan) {
  testing_require(a, "array_equal", "a1");
  testing_require(b, "array_equal", "a2");
  if (a.shape() != b.shape()) return false;
  Array eq = equal(a, b);
  if (equal_nan && (is_float(a.dtype()) || is_float(b.dtype())))
    eq = logical_or(eq, logical_and(isnan(a), isnan(b)));
  return all_true(std::move(eq));
}

namespace testing {

void assert_allclose(const Array& actual, const Array& desired, double rtol, double atol, bool equal_nan,
                     const std::string& err_msg) {
  testing_require(actual, "assert_allclose", "actual");
  testing_require(desired, "assert_allclose", "desired");
  const std::string header = fmt::format("Not equal to tolerance rtol={}, atol={}", g_str(rtol), g_str(atol));
  compare_arrays(
      actual, desired, [&](const Array& x, const Array& y) { return close_mask(x, y, rtol, atol, equal_nan); },
      header, equal_nan, err_msg);
}
void assert_allclose(const Array& actual, const Scalar& desired, double rtol, double atol, bool equal_nan,
                     const std::string& err_msg) {
  assert_allclose(actual, scalar_array(desired), rtol, atol, equal_nan, err_msg);
}

void assert_array_equal(const Array& actual, const Array& desired, const std::string& err_msg) {
  testing_require(actual, "assert_array_equal", "actual");
  testing_require(desired, "assert_array_equal", "desired");
  compare_arrays(
      actual, desired, [](const Array& x, const Array& y) { return equal(x, y); }, "Arrays are not equal", true,
      err_msg);
}
void assert_array_equal(const Array& actual, const Scalar& desired, const std::string& err_msg) {
  assert_array_equal(actual, scalar_array(desired), err_msg);
}

}  // namespace testing

}  // namespace cufuse
