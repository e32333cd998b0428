// src/dist/mesh.cpp: dist::Mesh (named axes over the world's devices, row-major) and
// dist::Sharding (per dimension a mesh axis or none), with their checks.
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cufuse/error.hpp"
#include "dist/world.hpp"

namespace cufuse::dist {

Mesh::Mesh(std::vector<int> sizes, std::vector<std::string> names) : sizes_(std::move(sizes)), names_(std::move(names)) {
  if (sizes_.empty()) throw ValueError("dist::Mesh: a mesh needs at least one axis");
  if (sizes_.size() != names_.size())
    throw ValueError(fmt::format("dist::Mesh: {} axis sizes but {} names", sizes_.size(), names_.size()));
  std::set<std::string> seen;
  int64_t n = 1;
  for (size_t i = 0; i < sizes_.size(); ++i) {
    if (names_[i].empty() || names_[i] == "none")
      throw ValueError(fmt::format("dist::Mesh: axis {} has no name ('' and 'none' mean replicated)", i));
    if (!seen.insert(names_[i]).second) throw ValueError(fmt::format("dist::Mesh: axis name '{}' repeated", names_[i]));
    if (sizes_[i] < 1) throw ValueError(fmt::format("dist::Mesh: axis '{}' has size {} (< 1)", names_[i], sizes_[i]));
    n *= sizes_[i];
    if (n > (int64_t(1) << 20)) throw ValueError("dist::Mesh: more than 2^20 devices");
  }
  const auto& w = detail::world_state();
  if (n > w.devices)
    throw ValueError(fmt::format("dist::Mesh: {} needs {} devices, but the world has {}", str(), n, w.devices));
}

int Mesh::size() const {
  int n = 1;
  for (int s : sizes_) n *= s;
  return n;
}

int Mesh::axis(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  throw ValueError(fmt::format("dist: '{}' is not an axis of {} (axes: {})", name, str(), fmt::join(names_, ", ")));
}

std::vector<int> Mesh::coords(int device) const {
  std::vector<int> c(sizes_.size());
  for (int i = ndim() - 1; i >= 0; --i) {
    c[i] = device % sizes_[i];
    device /= sizes_[i];
  }
  return c;
}

std::string Mesh::str() const {
  std::string s = "Mesh(";
  for (size_t i = 0; i < sizes_.size(); ++i) s += fmt::format("{}{}={}", i ? ", " : "", names_[i], sizes_[i]);
  return s + ")";
}

// ------------------------------------------------------------------ Sharding
namespace {
std::string canonical(std::string_view s) { return s == "none" ? std::string() : std::string(s); }
}  // namespace

Sharding::Sharding(std::initializer_list<std::string_view> dims) {
  for (auto d : dims) dims_.push_back(canonical(d));
}

Sharding::Sharding(std::vector<std::string> dims) : dims_(std::move(dims)) {
  for (auto& d : dims_) d = canonical(d);
}

Sharding Sharding::parse(std::string_view text) {
  std::vector<std::string> dims;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string_view part = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (part.empty()) throw ValueError(fmt::format("dist::Sharding: empty entry in '{}' (use 'none' for replicated)", text));
    dims.push_back(canonical(part));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return Sharding(std::move(dims));
}

bool Sharding::is_replicated() const {
  for (const auto& d : dims_)
    if (!d.empty()) return false;
  return true;
}

std::string Sharding::str() const {
  std::string s = "(";
  for (size_t i = 0; i < dims_.size(); ++i) s += (i ? ", " : "") + (dims_[i].empty() ? std::string("none") : dims_[i]);
  return s + (dims_.size() == 1 ? ",)" : ")");
}

const char* partial_op_name(PartialOp op) {
  switch (op) {
    case PartialOp::Sum: return "sum";
    case PartialOp::Prod: return "prod";
    case PartialOp::Max: return "max";
    case PartialOp::Min: return "min";
  }
  return "?";
}

}  // namespace cufuse::dist
