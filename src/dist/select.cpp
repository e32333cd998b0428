// src/dist/select.cpp: basic indexing resolved per dimension (Python's slice rules) and a
// selection's part in one shard (select.hpp).
#include "dist/select.hpp"

#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "core/slice_bounds.hpp"
#include "cufuse/error.hpp"

namespace cufuse::dist::detail {

namespace {
int64_t floor_div(int64_t a, int64_t b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }  // b > 0

DimSel resolve_slice(const Slice& s, int64_t n) {
  const auto b = cufuse::detail::slice_bounds(s, n);
  return DimSel{b.start, b.step, b.len, false};
}
}  // namespace

Selection resolve(const Shape& shape, const std::vector<Index>& idx, const char* what) {
  const int nd = static_cast<int>(shape.size());
  for (const auto& i : idx)
    if (std::holds_alternative<std::shared_ptr<const Array>>(i.get()))
      throw NotSupportedError(fmt::format("{}: integer or bool array indices on a DArray (gather the array, or use "
                                          "basic indexing: integers, slices, newaxis, ellipsis)",
                                          what));
  const int consumed = cufuse::detail::consumed_dims(idx, nd);
  Selection sel;
  sel.dims.resize(static_cast<size_t>(nd));
  int d = 0;
  auto keep_whole = [&] {
    sel.dims[static_cast<size_t>(d)] = DimSel{0, 1, shape[d], false};
    sel.out_of.push_back(d);
    sel.out_shape.push_back(shape[d]);
    ++d;
  };
  for (const auto& i : idx) {
    const auto& v = i.get();
    if (auto p = std::get_if<int64_t>(&v)) {
      int64_t k = *p;
      if (k < -shape[d] || k >= shape[d])
        throw IndexError(fmt::format("index {} is out of bounds for axis {} with size {}", k, d, shape[d]));
      if (k < 0) k += shape[d];
      sel.dims[static_cast<size_t>(d)] = DimSel{k, 1, 1, true};
      ++d;
    } else if (auto s = std::get_if<Slice>(&v)) {
      sel.dims[static_cast<size_t>(d)] = resolve_slice(*s, shape[d]);
      sel.out_of.push_back(d);
      sel.out_shape.push_back(sel.dims[static_cast<size_t>(d)].len);
      ++d;
    } else if (std::holds_alternative<NewAxis>(v)) {
      sel.out_of.push_back(-1);
      sel.out_shape.push_back(1);
    } else {
      for (int k = 0; k < nd - consumed; ++k) keep_whole();
    }
  }
  while (d < nd) keep_whole();
  return sel;
}

LocalPart local_part(const DimSel& s, int64_t lo, int64_t n) {
  // Positions j with lo <= start + step * j < lo + n, within [0, len).
  int64_t j0, j1;
  if (s.step > 0) {
    j0 = ceil_div(lo - s.start, s.step);
    j1 = ceil_div(lo + n - s.start, s.step);
  } else {
    const int64_t a = -s.step;
    j0 = floor_div(s.start - (lo + n), a) + 1;
    j1 = floor_div(s.start - lo, a) + 1;
  }
  j0 = std::clamp<int64_t>(j0, 0, s.len);
  j1 = std::clamp<int64_t>(j1, 0, s.len);
  if (j1 < j0) j1 = j0;
  return LocalPart{j0, j1, j1 > j0 ? s.start + s.step * j0 - lo : 0};
}

Slice local_slice(const DimSel& s, const LocalPart& p) {
  if (p.count() == 0) return Slice{0, 0, 1};
  const int64_t last = p.first + s.step * (p.count() - 1);
  const int64_t stop = last + (s.step > 0 ? 1 : -1);
  return Slice{p.first, stop < 0 ? std::nullopt : std::optional<int64_t>(stop), s.step};
}

bool aligned(const DimSel& s, int64_t n, int k) {
  if (s.dropped || s.len % k != 0) return false;
  const int64_t part = n / k, q = s.len / k;
  for (int r = 0; r < k; ++r) {
    const LocalPart p = local_part(s, r * part, part);
    if (p.j0 != r * q || p.j1 != (r + 1) * q) return false;
  }
  return true;
}

}  // namespace cufuse::dist::detail
