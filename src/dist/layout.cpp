// src/dist/layout.cpp: shard placement (even shards, ValueError naming an indivisible
// dimension), slices of a shard and the groups of a collective.
#include <set>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "dist/layout.hpp"

namespace cufuse::dist::detail {

void check_spec(const Mesh& mesh, const Sharding& spec, const Shape& shape, std::string_view what) {
  if (spec.ndim() != static_cast<int>(shape.size()))
    throw ValueError(fmt::format("{}: sharding {} has {} entries for an array of {} dimensions {}", what, spec.str(),
                                 spec.ndim(), shape.size(), to_string(shape)));
  std::set<std::string> used;
  for (int d = 0; d < spec.ndim(); ++d) {
    if (!spec.sharded(d)) continue;
    const int ax = mesh.axis(spec[d]);
    if (!used.insert(spec[d]).second)
      throw ValueError(fmt::format("{}: mesh axis '{}' shards two dimensions of {}", what, spec[d], spec.str()));
    const int k = mesh.sizes()[ax];
    if (shape[d] % k != 0)
      throw ValueError(fmt::format("{}: dimension {} of size {} is not divisible by mesh axis '{}' of size {} "
                                   "(shards are even)",
                                   what, d, shape[d], spec[d], k));
  }
}

Shape local_shape(const Mesh& mesh, const Sharding& spec, const Shape& shape) {
  Shape s = shape;
  for (int d = 0; d < spec.ndim(); ++d)
    if (spec.sharded(d)) s[d] /= mesh.axis_size(spec[d]);
  return s;
}

std::vector<std::pair<int64_t, int64_t>> local_range(const Mesh& mesh, const Sharding& spec, const Shape& shape,
                                                     int device) {
  const auto c = mesh.coords(device);
  std::vector<std::pair<int64_t, int64_t>> r(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    r[d] = {0, shape[d]};
    if (!spec.sharded(static_cast<int>(d))) continue;
    const int ax = mesh.axis(spec[static_cast<int>(d)]);
    const int64_t n = shape[d] / mesh.sizes()[ax];
    r[d] = {c[ax] * n, (c[ax] + 1) * n};
  }
  return r;
}

Array slice_to(const Array& a, const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  bool whole = true;
  std::vector<Index> idx;
  for (size_t d = 0; d < ranges.size(); ++d) {
    whole &= ranges[d].first == 0 && ranges[d].second == a.shape()[d];
    idx.emplace_back(slice(ranges[d].first, ranges[d].second));
  }
  return whole ? a : a.index(idx);
}

std::vector<std::vector<int>> groups_over(const Mesh& mesh, const std::vector<std::string>& axes) {
  std::vector<bool> in(static_cast<size_t>(mesh.ndim()), false);
  for (const auto& a : axes) in[static_cast<size_t>(mesh.axis(a))] = true;
  std::vector<std::vector<int>> groups;
  std::vector<std::vector<int>> keys;
  for (int dev = 0; dev < mesh.size(); ++dev) {  // row-major: members come in rank order
    auto c = mesh.coords(dev);
    std::vector<int> key;
    for (int i = 0; i < mesh.ndim(); ++i)
      if (!in[i]) key.push_back(c[i]);
    size_t g = 0;
    while (g < keys.size() && keys[g] != key) ++g;
    if (g == keys.size()) {
      keys.push_back(key);
      groups.emplace_back();
    }
    groups[g].push_back(dev);
  }
  return groups;
}

int ranks_over(const Mesh& mesh, const std::vector<std::string>& axes) {
  int n = 1;
  for (const auto& a : axes) n *= mesh.axis_size(a);
  return n;
}

}  // namespace cufuse::dist::detail
