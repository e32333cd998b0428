// src/plan/signature.cpp: the structural key of a pending graph (see signature.hpp).
#include "plan/signature.hpp"


#include "core/library_call.hpp"
#include "core/op_table.hpp"
#include "core/reduce_attrs.hpp"
#include "graph/index_map.hpp"
#include "plan/scalar_forms.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

bool is_aligned16(const Node* n) {
  // A placeholder plans for the common case, except a fuse() argument's: its offset carries
  // the argument's address mod 16 (in elements), so the plan knows its alignment.
  // (Byte offsets in unsigned arithmetic: only their value mod 16 matters, never an overflow.)
  const uintptr_t off = static_cast<uintptr_t>(n->layout.offset) * static_cast<uintptr_t>(itemsize(n->dtype));
  if (!n->storage) return n->placeholder_slot < 0 || off % 16 == 0;
  auto p = reinterpret_cast<uintptr_t>(n->storage->ptr) + off;
  return p % 16 == 0;
}

int GraphScan::leaf_index(const Node* n) const {
  for (const auto& [node, id] : ids)
    if (node == n) return id;
  return -1;
}

namespace {
enum : int64_t { kBuf = 1, kScal, kGen, kEw, kView, kRed, kLib, kRoots, kTarget, kAlias };

// Node -> id once a graph is large: open addressing (linear probing) in a table each thread
// keeps between scans, emptied by a new generation number, so that a scan of a large graph
// allocates nothing and finds a node in about one probe. (std::unordered_map cost ~100 ns a
// node here, most of the walk's time.)
class IdTable {
 public:
  void start() {
    if (++gen_ == 0) {  // the numbers wrapped: empty the table for real
      for (auto& sl : slots_) sl.gen = 0;
      gen_ = 1;
    }
    used_ = 0;
    if (slots_.empty()) grow(256);
  }
  int find(const Node* n) const {
    for (size_t i = slot(n);; i = (i + 1) & mask_) {
      const Slot& sl = slots_[i];
      if (sl.gen != gen_) return -1;
      if (sl.node == n) return sl.id;
    }
  }
  void insert(const Node* n, int id) {  // n is not in the table
    if (2 * (used_ + 1) > slots_.size()) grow(2 * slots_.size());
    put(n, id);
  }

 private:
  struct Slot {
    const Node* node;
    int32_t id;
    uint32_t gen;
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0, used_ = 0;
  uint32_t gen_ = 0;

  size_t slot(const Node* n) const {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(n) >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask_;
  }
  void put(const Node* n, int id) {
    size_t i = slot(n);
    while (slots_[i].gen == gen_) i = (i + 1) & mask_;
    slots_[i] = Slot{n, id, gen_};
    ++used_;
  }
  void grow(size_t cap) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{nullptr, -1, 0});
    mask_ = cap - 1;
    used_ = 0;
    for (const Slot& sl : old)
      if (sl.gen == gen_) put(sl.node, sl.id);
  }
};

struct Walker {
  GraphScan& s;
  bool value_forms = true;
  IdTable* big = nullptr;  // used once the graph is large (the thread's)
  int next_id = 0;

  int find(const Node* n) {
    if (big) return big->find(n);
    for (const auto& [node, id] : s.node_ids)
      if (node == n) return id;
    return -1;
  }
  void remember(const Node* n, int id) {
    if (big) {
      big->insert(n, id);
      return;
    }
    s.node_ids.emplace_back(n, id);
    if (s.node_ids.size() > 48) {
      thread_local IdTable table;
      big = &table;
      big->start();
      for (const auto& [node, nid] : s.node_ids) big->insert(node, nid);
    }
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

  // A node's id, given after the ids (and key entries) of everything below it: inputs first,
  // in input order, each node once. With an explicit stack (a chain is as deep as a user
  // makes it), the thread's, kept between scans (no allocation on the per-call path).
  struct Frame {
    Node* n;
    uint32_t next;  // the next input to visit
    int nin;        // inputs visited
    int in_ids[8];  // the first eight inputs' ids (the others are found again at the end)
  };
  static bool walks_inputs(NodeKind k) {
    return k != NodeKind::Buffer && k != NodeKind::Scalar && k != NodeKind::Generator;
  }

  int visit(Node* root) {
    int id = find(root);
    if (id >= 0) return id;
    thread_local std::vector<Frame> frames;
    frames.clear();
    frames.push_back(Frame{root, 0, 0, {}});
    for (;;) {
      Frame& f = frames.back();
      if (walks_inputs(f.n->k()) && f.next < f.n->inputs.size()) {
        Node* in = f.n->inputs[f.next].get();
        const int iid = find(in);
        if (iid < 0) {
          frames.push_back(Frame{in, 0, 0, {}});  // f is stale from here
          continue;
        }
        if (f.nin < 8) f.in_ids[f.nin] = iid;
        ++f.nin;
        ++f.next;
        continue;
      }
      id = put_node(f);
      frames.pop_back();
      if (frames.empty()) return id;
      Frame& u = frames.back();  // its user: the input is done
      if (u.nin < 8) u.in_ids[u.nin] = id;
      ++u.nin;
      ++u.next;
    }
  }

  // The key entries of f's node, its inputs' ids known; gives the node its id.
  int put_node(const Frame& f) {
    Node* n = f.n;
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
        const int nin = f.nin;
        s.key.push_back(k == NodeKind::Elementwise ? kEw : k == NodeKind::View ? kView : k == NodeKind::Reduce ? kRed : kLib);
        s.key.push_back(static_cast<int64_t>(n->dtype) * 65536 + n->op);
        put_shape(n->shape());
        if (k == NodeKind::View) {
          put_layout(n->layout);
          if (const IndexMap* m = index_map_of(*n))  // a mapped view: its maps are kernel parameters
            for (const auto& a : m->axes) {
              s.key.push_back(static_cast<int64_t>(a.kind));
              s.key.push_back(a.shift);
              s.key.push_back(a.n);
              s.key.push_back(a.r);
              s.key.push_back(static_cast<int64_t>(a.seed));
            }
        }
        s.key.push_back(nin);
        for (int i = 0; i < nin && i < 8; ++i) s.key.push_back(f.in_ids[i]);
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
        } else if (has_attrs(n->attrs)) {
          s.key.push_back(static_cast<int64_t>(n->hash));
        }
        if (value_forms && k == NodeKind::Elementwise && n->op == static_cast<uint16_t>(Op::TrueDivide))
          s.key.push_back(division_form(n));  // plan/scalar_forms.hpp
        if (int64_t v[3]; value_forms && k == NodeKind::Elementwise && part_bound(n, v))
          s.key.insert(s.key.end(), v, v + 3);  // plan/scalar_forms.hpp
        break;
      }
    }
    const int id = next_id++;
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
  Walker w{out, value_forms, nullptr, 0, {}};
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
