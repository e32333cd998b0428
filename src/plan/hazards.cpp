// src/plan/hazards.cpp: the read-before-write check of plans that write into existing
// memory (see hazards.hpp).
#include "plan/hazards.hpp"

#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "runtime/storage.hpp"

namespace cufuse::detail {

namespace {

bool same_layout(const Layout& a, const Layout& b) {
  return a.shape == b.shape && a.strides == b.strides && a.offset == b.offset;
}

struct Written {
  const Target* target;
  int group;     // the group writing it
  int root;
};

}  // namespace

WriteHazard find_write_hazard(const Plan& p) {
  WriteHazard h;
  bool any = false;
  for (const Target* t : p.targets) any = any || t != nullptr;
  if (!any) return h;

  // Which group writes each targeted root; the groups' outputs, for "read from memory".
  std::vector<Written> writes;
  std::unordered_map<const Node*, int> produced;  // node -> group writing it
  for (size_t g = 0; g < p.groups.size(); ++g) {
    const Group& grp = p.groups[g];
    for (size_t k = 0; k < grp.outputs.size(); ++k) {
      produced.emplace(grp.outputs[k].get(), static_cast<int>(g));
      const int r = grp.output_root[k];
      if (r >= 0 && r < static_cast<int>(p.targets.size()) && p.targets[r])
        writes.push_back(Written{p.targets[r], static_cast<int>(g), r});
    }
  }
  auto target_of_root = [&](const Node* n) -> const Target* {
    for (size_t r = 0; r < p.roots.size() && r < p.targets.size(); ++r)
      if (p.roots[r].get() == n) return p.targets[r];
    return nullptr;
  };

  for (size_t gi = 0; gi < p.groups.size() && !h.unsafe; ++gi) {
    const Group& grp = p.groups[gi];
    const bool ew = grp.kind == GroupKind::Elementwise;
    std::vector<std::pair<const Node*, bool>> stack;  // (node, reached at the written element)
    std::unordered_set<uint64_t> seen;
    if (grp.kind == GroupKind::Library) {
      for (const auto& x : grp.lib_inputs) stack.emplace_back(x.get(), false);
    } else {
      // An elementwise output, and a reduction kernel's row or epilogue output, is computed
      // and stored by one thread per element, after the kernel's reductions: reads under it
      // are at the written element. Reads under a reduction are not (other threads, other
      // phases, other blocks).
      for (size_t k = 0; k < grp.outputs.size(); ++k) {
        const bool at_element = ew || (grp.kind == GroupKind::Reduction && k < grp.out_kinds.size() &&
                                       (grp.out_kinds[k] == OutKind::Row || grp.out_kinds[k] == OutKind::Epilogue));
        stack.emplace_back(grp.outputs[k].get(), at_element);
      }
      for (const auto& r : grp.reductions) stack.emplace_back(r.get(), false);
    }
    std::unordered_set<const Node*> starts;
    for (const auto& [n, a] : stack) starts.insert(n);
    while (!stack.empty() && !h.unsafe) {
      auto [x, aligned] = stack.back();
      stack.pop_back();
      const uint64_t key = reinterpret_cast<uintptr_t>(x) * 2 + (aligned ? 1 : 0);
      if (!seen.insert(key).second) continue;
      auto pit = produced.find(x);
      const bool from_memory = pit != produced.end() && x->k() != NodeKind::Generator &&
                               (grp.kind == GroupKind::Library ? pit->second != static_cast<int>(gi)
                                                               : pit->second < static_cast<int>(gi));
      if (from_memory && !starts.count(x)) {
        const Target* t = target_of_root(x);
        if (t && !t->layout.is_contiguous()) {
          h.unsafe = true;
          h.why = fmt::format("a later kernel reads a result written into a strided view {}",
                              to_string(t->layout.shape));
        }
        continue;
      }
      if (x->k() == NodeKind::Buffer) {
        if (!x->storage) continue;
        for (const Written& w : writes) {
          if (w.target->storage != x->storage) continue;
          if (w.group < static_cast<int>(gi)) {
            h.unsafe = true;
            h.why = fmt::format("kernel {} reads memory that kernel {} writes before it", gi, w.group);
          } else if (w.group == static_cast<int>(gi) && !(aligned && same_layout(x->layout, w.target->layout))) {
            h.unsafe = true;
            h.why = fmt::format("kernel {} reads the memory it writes at other elements ({} {} -> {} {})", gi,
                                to_string(x->layout.shape), to_string(x->layout.strides),
                                to_string(w.target->layout.shape), to_string(w.target->layout.strides));
          }
          if (h.unsafe) break;
        }
        continue;
      }
      // Below a reduction node (reached from an output) the reads are the reduction's.
      const bool keep = aligned && x->k() == NodeKind::Elementwise;
      for (const auto& in : x->inputs) stack.emplace_back(in.get(), keep);
    }
  }
  return h;
}

}  // namespace cufuse::detail
