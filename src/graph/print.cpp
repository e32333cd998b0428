// src/graph/print.cpp: array_repr / array_str / operator<< (cufuse/print.hpp): reads back the
// shown part of an array (all of it, or the edges of every axis of a summarised one, block by
// block) and lays it out as numpy/_core/arrayprint.py's _formatArray does: nested brackets,
// hanging indents, lines wrapped at the line width, "..." for summarised axes. The element
// texts come from graph/print_format.cpp.
#include "cufuse/print.hpp"

#include <ostream>

#include <fmt/format.h>

#include "graph/print_format.hpp"

namespace cufuse {

namespace {

using detail::HostValues;

// The part of an array that is shown, on the host (row-major over `shape`).
struct Shown {
  Shape full;   // the array's shape
  Shape shape;  // shown: per axis all of it, or 2 * edgeitems when summarised
  bool summarise = false;
  HostValues v;
};

Shown read_shown(const Array& a, const PrintOptions& o) {
  Shown s;
  s.full = a.shape();
  s.v.dtype = a.dtype();
  s.summarise = a.size() > o.threshold;
  const int nd = a.ndim();
  const int64_t isz = itemsize(a.dtype());
  std::vector<unsigned char> raw;
  if (!s.summarise) {
    s.shape = s.full;
    s.v.resize(a.size());
    raw.resize(static_cast<size_t>(a.nbytes()));
    a.copy_to_host(raw.data(), raw.size());
    for (int64_t k = 0; k < a.size(); ++k) s.v.set_from_raw(k, raw.data(), k);
    return s;
  }
  // Per axis: the ranges kept ([start, stop) pairs) and where each lands in the shown array.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges(static_cast<size_t>(nd));
  for (int d = 0; d < nd; ++d) {
    const int64_t n = s.full[d];
    if (n > 2 * o.edgeitems) {
      ranges[d] = {{0, o.edgeitems}, {n - o.edgeitems, n}};
      s.shape.push_back(2 * o.edgeitems);
    } else {
      ranges[d] = {{0, n}};
      s.shape.push_back(n);
    }
  }
  s.v.resize(numel(s.shape));
  Strides sst(static_cast<size_t>(nd), 1);
  for (int d = nd - 2; d >= 0; --d) sst[d] = sst[d + 1] * s.shape[d + 1];
  const Array m = Array(a).eval();
  // Every combination of one range per axis is one block, read as a view.
  std::vector<size_t> pick(static_cast<size_t>(nd), 0);
  while (true) {
    std::vector<Index> idx;
    Shape bshape;
    std::vector<int64_t> base(static_cast<size_t>(nd));
    for (int d = 0; d < nd; ++d) {
      auto [b, e] = ranges[d][pick[d]];
      idx.emplace_back(slice(b, e));
      bshape.push_back(e - b);
      base[d] = pick[d] == 0 ? 0 : o.edgeitems;
    }
    const Array block = m.index(idx);
    raw.resize(static_cast<size_t>(block.size() * isz));
    block.copy_to_host(raw.data(), raw.size());
    std::vector<int64_t> c(static_cast<size_t>(nd), 0);
    for (int64_t k = 0; k < block.size(); ++k) {
      int64_t at = 0;
      for (int d = 0; d < nd; ++d) at += (base[d] + c[d]) * sst[d];
      s.v.set_from_raw(at, raw.data(), k);
      for (int d = nd - 1; d >= 0; --d) {
        if (++c[d] < bshape[d]) break;
        c[d] = 0;
      }
    }
    int d = nd - 1;
    for (; d >= 0; --d) {
      if (++pick[d] < ranges[d].size()) break;
      pick[d] = 0;
    }
    if (d < 0) break;
  }
  return s;
}

std::string rstrip(const std::string& s) {
  size_t e = s.find_last_not_of(' ');
  return e == std::string::npos ? std::string() : s.substr(0, e + 1);
}

// numpy's _formatArray over the shown values.
struct Layout {
  const Shown& s;
  std::function<std::string(int64_t)> fmt;
  std::string sep;
  int64_t edge;
  Strides sst;

  void extend(std::string& out, std::string& line, const std::string& word, int width, const std::string& hang) const {
    bool wrap = static_cast<int>(line.size() + word.size()) > width;
    if (line.size() <= hang.size()) wrap = false;  // wrapping would not help
    if (wrap) {
      out += rstrip(line) + "\n";
      line = hang;
    }
    line += word;
  }

  std::string rec(int axis, int64_t flat, const std::string& hang, int width) const {
    const int nd = s.full.ndim();
    const int left = nd - axis;
    if (left == 0) return fmt(flat);
    const std::string next_hang = hang + " ";
    const int next_width = width - 1;
    const int64_t a_len = s.full[axis], shown_len = s.shape[axis];
    const bool summary = s.summarise && 2 * edge < a_len;
    const int64_t leading = summary ? edge : 0, trailing = summary ? edge : a_len;
    auto child = [&](int64_t i) { return rec(axis + 1, flat + i * sst[axis], next_hang, next_width); };
    std::string out;
    if (left == 1) {
      const int elem_width = width - std::max(static_cast<int>(rstrip(sep).size()), 1);
      std::string line = hang;
      for (int64_t i = 0; i < leading; ++i) {
        extend(out, line, child(i), elem_width, hang);
        line += sep;
      }
      if (summary) {
        extend(out, line, "...", elem_width, hang);
        line += sep;
      }
      for (int64_t i = trailing; i > 1; --i) {
        extend(out, line, child(shown_len - i), elem_width, hang);
        line += sep;
      }
      extend(out, line, child(shown_len - 1), elem_width, hang);
      out += line;
    } else {
      const std::string line_sep = rstrip(sep) + std::string(static_cast<size_t>(left - 1), '\n');
      for (int64_t i = 0; i < leading; ++i) out += hang + child(i) + line_sep;
      if (summary) out += hang + "..." + line_sep;
      for (int64_t i = trailing; i > 1; --i) out += hang + child(shown_len - i) + line_sep;
      out += hang + child(shown_len - 1);
    }
    return "[" + out.substr(hang.size()) + "]";
  }
};

std::string format_body(const Shown& s, const PrintOptions& o, const std::string& sep, const std::string& prefix,
                        int suffix_len) {
  Layout l{s, detail::element_formatter(s.v, o.precision, s.full.ndim() == 0), sep, o.edgeitems, {}};
  const int nd = s.shape.ndim();
  l.sst = Strides(static_cast<size_t>(nd), 1);
  for (int d = nd - 2; d >= 0; --d) l.sst[d] = l.sst[d + 1] * s.shape[d + 1];
  return l.rec(0, 0, " " + std::string(prefix.size(), ' '), o.linewidth - suffix_len);
}

bool dtype_is_implied(DType t) {
  return t == DType::Float64 || t == DType::Int64 || t == DType::Bool || t == DType::Complex128;
}

void print_require(const Array& a, const char* what) {
  if (!a.defined()) throw ValueError(fmt::format("{}: the Array handle is empty", what));
}

}  // namespace

std::string array_repr(const Array& a, const PrintOptions& o) {
  print_require(a, "array_repr");
  const std::string prefix = "array(";
  std::string lst;
  if (a.size() == 0) {
    lst = "[]";
  } else {
    const Shown s = read_shown(a, o);
    lst = format_body(s, o, ", ", prefix, 1);
  }
  std::vector<std::string> extras;
  if ((a.size() == 0 && !(a.ndim() == 1)) || a.size() > o.threshold) extras.push_back("shape=" + to_string(a.shape()));
  if (!dtype_is_implied(a.dtype()) || a.size() == 0) extras.push_back(fmt::format("dtype={}", name(a.dtype())));
  if (extras.empty()) return prefix + lst + ")";
  const std::string arr = prefix + lst + ",";
  const std::string extra = fmt::format("{})", fmt::join(extras, ", "));
  const size_t nl = arr.rfind('\n');
  const size_t last_len = nl == std::string::npos ? arr.size() : arr.size() - (nl + 1);
  const std::string spacer =
      static_cast<int>(last_len + extra.size() + 1) > o.linewidth ? "\n" + std::string(prefix.size(), ' ') : " ";
  return arr + spacer + extra;
}

std::string array_str(const Array& a, const PrintOptions& o) {
  print_require(a, "array_str");
  if (a.size() == 0) return "[]";
  const Shown s = read_shown(a, o);
  if (a.ndim() == 0) return detail::scalar_str(s.v, 0);
  return format_body(s, o, " ", "", 0);
}

std::string to_string(const Array& a) { return array_repr(a); }

std::ostream& operator<<(std::ostream& os, const Array& a) { return os << array_repr(a); }

}  // namespace cufuse
