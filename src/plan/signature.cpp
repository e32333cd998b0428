// src/plan/signature.cpp: the structural key of a pending graph (see signature.hpp).
#include "plan/signature.hpp"

#include <unordered_map>

#include "codegen/op_table.hpp"
#include "codegen/scalar_forms.hpp"
#include "graph/reduce_attrs.hpp"
#include "library/library_call.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

bool is_aligned16(const Node* n) {
  // A placeholder plans for the common case, except a fuse() argument's: its offset carries
  // the argument's address mod 16 (in elements), so the plan knows its alignment.
  if (!n->storage) return n->placeholder_slot < 0 || (n->layout.offset * itemsize(n->dtype)) % 16 == 0;
  auto p = reinterpret_cast<uintptr_t>(n->storage->ptr) + static_cast<uintptr_t>(n->layout.offset * itemsize(n->dtype));
  return p % 16 == 0;
}

int GraphScan::leaf_index(const Node* n) const {
  for (const auto& [node, id] : ids)
    if (node == n) return id;
  return -1;
}

namespace {
enum : int64_t { kBuf = 1, kScal, kGen, kEw, kView, kRed, kLib, kRoots, kTarget, kAlias };

struct Walker {
  GraphScan& s;
  bool value_forms = true;
  std::unordered_map<const Node*, int> big;  // used once the graph is large
  int next_id = 0;

  int find(const Node* n) {
    if (!big.empty()) {
      auto it = big.find(n);
      return it == big.end() ? -1 : it->second;
    }
    for (const auto& [node, id] : s.node_ids)
      if (node == n) return id;
    return -1;
  }
  void remember(const Node* n, int id) {
    if (!big.empty()) {
      big.emplace(n, id);
      return;
    }
    s.node_ids.emplace_back(n, id);
    if (s.node_ids.size() > 48) big.insert(s.node_ids.begin(), s.node_ids.end());
  }
  std::vector<const void*> calls;  // library calls in order of first sight
  int64_t call_ordinal(const void* c) {
    for (size_t i = 0; i < calls.size(); ++i)
      if (calls[i] == c) return static_cast<int64_t>(i);
    calls.push_back(c);
    return static_cast<int64_t>(calls.size() - 1);
  }

  void put_shape(const Shape& sh) {
    s.key.push_back(sh.ndim());
    for (auto d : sh) s.key.push_back(d);
  }
  void put_layout(const Layout& l) {
    for (auto st : l.strides) s.key.push_back(st);
    s.key.push_back(l.offset);
  }

  int visit(Node* n) {
    int id = find(n);
    if (id >= 0) return id;
    const NodeKind k = n->k();
    switch (k) {
      case NodeKind::Buffer:
        s.key.push_back(kBuf);
        s.key.push_back(static_cast<int64_t>(n->dtype));
        put_shape(n->shape());
        for (auto st : n->layout.strides) s.key.push_back(st);
        s.key.push_back(is_aligned16(n) ? 1 : 0);
        break;
      case NodeKind::Scalar:
        s.key.push_back(kScal);
        s.key.push_back(static_cast<int64_t>(n->dtype));
        put_shape(n->shape());
        break;
      case NodeKind::Generator:
        s.key.push_back(kGen);
        s.key.push_back(static_cast<int64_t>(n->dtype) * 16 + n->op);
        put_shape(n->shape());
        put_layout(n->layout);
        s.key.push_back(n->gen.num * 2 + (n->gen.endpoint ? 1 : 0));
        break;
      default: {
        int in_ids[8];
        int nin = 0;
        for (const auto& in : n->inputs) {
          int iid = visit(in.get());
          if (nin < 8) in_ids[nin] = iid;
          ++nin;
        }
        s.key.push_back(k == NodeKind::Elementwise ? kEw : k == NodeKind::View ? kView : k == NodeKind::Reduce ? kRed : kLib);
        s.key.push_back(static_cast<int64_t>(n->dtype) * 65536 + n->op);
        put_shape(n->shape());
        if (k == NodeKind::View) put_layout(n->layout);
        s.key.push_back(nin);
        for (int i = 0; i < nin && i < 8; ++i) s.key.push_back(in_ids[i]);
        if (nin > 8)
          for (int i = 8; i < nin; ++i) s.key.push_back(find(n->inputs[i].get()));
        if (k == NodeKind::Library) {
          const auto& at = library_attrs(*n);
          s.key.push_back(static_cast<int64_t>(at.call->attributes_hash()));
          s.key.push_back(call_ordinal(at.call.get()));
          s.key.push_back(at.output);
        } else if (k == NodeKind::Reduce) {
          // Reduce attributes (op, axes, keepdims): not the node's structural hash, which
          // covers the history of its inputs (a realized input keeps the hash of the graph it
          // was computed from), so a loop's plans would never repeat.
          const ReduceAttrs& ra = reduce_attrs(*n);
          uint64_t h = hash_mix(static_cast<uint64_t>(ra.op) + 1, ra.keepdims ? 7 : 3);
          for (int a : ra.axes) h = hash_mix(h, static_cast<uint64_t>(a) + 1000);
          s.key.push_back(static_cast<int64_t>(h));
        } else if (n->attrs) {
          s.key.push_back(static_cast<int64_t>(n->hash));
        }
        if (value_forms && k == NodeKind::Elementwise && n->op == static_cast<uint16_t>(Op::TrueDivide))
          s.key.push_back(divides_by_exact_reciprocal(n) ? 1 : 0);
        break;
      }
    }
    id = next_id++;
    remember(n, id);
    s.nodes.push_back(n);
    if (n->is_leaf()) {
      s.ids.emplace_back(n, static_cast<int>(s.leaves.size()));
      s.leaves.push_back(n);
    }
    return id;
  }
};
}  // namespace

void scan_graph(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets, GraphScan& out,
                bool value_forms) {
  out.clear();
  Walker w{out, value_forms, {}, 0, {}};
  std::vector<int>& root_ids = out.root_ids;
  for (const auto& r : roots) root_ids.push_back(w.visit(r.get()));
  out.key.push_back(kRoots);
  for (size_t i = 0; i < roots.size(); ++i) {
    out.key.push_back(root_ids[i]);
    const Target* t = i < targets.size() ? targets[i] : nullptr;
    if (t) {
      out.key.push_back(kTarget);
      for (auto st : t->layout.strides) out.key.push_back(st);
      auto p = reinterpret_cast<uintptr_t>(t->storage->ptr) +
               static_cast<uintptr_t>(t->layout.offset * itemsize(roots[i]->dtype));
      out.key.push_back(p % 16 == 0 ? 1 : 0);
    }
  }
  // Leaves on memory the plan writes, and whether each reads it at the written elements:
  // whether the writes can be made in place depends on it (plan/hazards.hpp).
  for (size_t i = 0; i < roots.size() && i < targets.size(); ++i) {
    const Target* t = targets[i];
    if (!t) continue;
    for (size_t l = 0; l < out.leaves.size(); ++l) {
      const Node* n = out.leaves[l];
      if (n->k() != NodeKind::Buffer || n->storage != t->storage) continue;
      const bool same = n->layout.shape == t->layout.shape && n->layout.strides == t->layout.strides &&
                        n->layout.offset == t->layout.offset;
      out.key.push_back(kAlias);
      out.key.push_back(static_cast<int64_t>(l) * 4096 + static_cast<int64_t>(i) * 2 + (same ? 1 : 0));
    }
  }
}

}  // namespace cufuse::detail
