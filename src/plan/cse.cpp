// src/plan/cse.cpp: common-subexpression elimination (see cse.hpp). One walk, inputs
// first, gives every node of the graph a class: the first node met with the same value.
// A value hash (the node's structural hash, or a leaf's identity, mixed with its inputs'
// value hashes) picks the candidates; exact comparison decides. Only where some class has
// two members is anything changed: the graph's nodes then read one representative per
// class, and a duplicate root becomes a copy of its representative.
#include "plan/cse.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <typeinfo>

#include "core/library_call.hpp"
#include "core/op_table.hpp"
#include "core/reduce_attrs.hpp"
#include "runtime/context.hpp"
#include "runtime/log.hpp"

namespace cufuse::detail {

namespace {

// set_cse_enabled's override of CUFUSE_CSE: process state (runtime/context.hpp).
struct CseSwitch {
  static constexpr StateSlot kSlot = StateSlot::CseSwitch;
  std::atomic<int> on{-1};  // -1: none, CUFUSE_CSE decides
};

// Past this many nodes, lookups go through hash tables instead of linear searches.
constexpr size_t kSmall = 32;

uint64_t spread(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}

// uint64 key -> int (>= 0), open addressing with linear probing; its memory is kept for
// the thread's next graph.
struct FlatMap {
  struct Slot {
    uint64_t key;
    int val;  // -1: empty
  };
  std::vector<Slot> slots;
  size_t mask = 0, count = 0;

  void reset(size_t n) {
    size_t cap = 64;
    while (cap < 2 * n) cap <<= 1;
    slots.assign(cap, Slot{0, -1});
    mask = cap - 1;
    count = 0;
  }
  int find(uint64_t k) const {
    for (size_t i = spread(k) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots[i];
      if (s.val < 0) return -1;
      if (s.key == k) return s.val;
    }
  }
  void put(uint64_t k, int v) {
    if (2 * (count + 1) > slots.size()) grow();
    for (size_t i = spread(k) & mask;; i = (i + 1) & mask) {
      Slot& s = slots[i];
      if (s.val < 0) {
        s = Slot{k, v};
        ++count;
        return;
      }
      if (s.key == k) {
        s.val = v;
        return;
      }
    }
  }
  // k's value if present; otherwise inserts (k, v) and returns -1.
  int find_or_put(uint64_t k, int v) {
    if (2 * (count + 1) > slots.size()) grow();
    for (size_t i = spread(k) & mask;; i = (i + 1) & mask) {
      Slot& s = slots[i];
      if (s.val < 0) {
        s = Slot{k, v};
        ++count;
        return -1;
      }
      if (s.key == k) return s.val;
    }
  }
  void grow() {
    std::vector<Slot> old = std::move(slots);
    reset(old.size());  // twice the entries' room
    for (const Slot& s : old)
      if (s.val >= 0) put(s.key, s.val);
  }
};

struct CseEntry {
  Node* n;
  uint64_t vh;     // value hash: equal values hash equal
  int cls;         // the first entry of its class
  int in_begin;    // its inputs' entries: Scratch::ins[in_begin, in_begin + nin)
  int nin;
  int next_same;   // large graphs: the previous class start with the same vh, or -1
  bool leaf, mergeable, root;
};

struct Frame {
  Node* n;
  uint32_t next;        // next input to visit
  uint32_t args_begin;  // its inputs' entries start here in Scratch::args
};

// The screening walk's frame: an inner node and its value hash so far.
struct QuickFrame {
  Node* n;
  uint32_t next;
  uint64_t h;
};

struct Scratch {
  // The screening walk (inner nodes only): node, value hash.
  std::vector<Node*> qn;
  std::vector<uint64_t> qh;
  std::vector<QuickFrame> qstack;

  std::vector<CseEntry> e;
  std::vector<Node*> ptrs;   // e[i].n (small graphs: the linear search)
  std::vector<uint64_t> vhs; // e[i].vh
  std::vector<int> ins, args, rep;
  std::vector<Frame> stack;
  FlatMap index, by_vh;      // large graphs: node -> entry, vh -> class start
  bool big = false;
  size_t expect = 0;         // nodes expected (the tables' first size)
  std::vector<NodePtr> dropped;  // inputs let go of, released once the graph is consistent

  void clear() {
    e.clear();
    ptrs.clear();
    vhs.clear();
    ins.clear();
    args.clear();
    stack.clear();
    big = false;
  }
  int find(const Node* n) const {
    if (big) return index.find(reinterpret_cast<uint64_t>(n));
    const size_t k = ptrs.size();
    for (size_t i = 0; i < k; ++i)
      if (ptrs[i] == n) return static_cast<int>(i);
    return -1;
  }
};

bool mergeable(const Node& n) {
  switch (n.k()) {
    case NodeKind::Buffer: return n.storage != nullptr;  // a placeholder is only itself
    case NodeKind::Scalar: return !n.varies;             // bound to a fuse() argument
    case NodeKind::Generator: return true;
    case NodeKind::Elementwise: return !is_user_op(n.op) && !has_attrs(n.attrs);
    case NodeKind::View: return !has_attrs(n.attrs);
    case NodeKind::Reduce: return has_attrs(n.attrs) && !is_user_op(n.op) && reduce_attrs(n).op != ReduceOp::User;
    case NodeKind::Library: return has_attrs(n.attrs);
  }
  return false;
}

uint64_t bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

uint64_t scalar_bits(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return s.payload().b ? 1 : 0;
    case Scalar::Kind::Int: return static_cast<uint64_t>(s.payload().i);
    case Scalar::Kind::UInt: return s.payload().u;
    case Scalar::Kind::Float: return bits(s.payload().f);
    case Scalar::Kind::Complex: return bits(s.payload().c.re) ^ (bits(s.payload().c.im) * 0x9E3779B97F4A7C15ull);
  }
  return 0;
}

bool same_scalar_value(const Scalar& a, const Scalar& b) {
  return a.kind() == b.kind() && a.weak() == b.weak() && a.dtype() == b.dtype() && scalar_bits(a) == scalar_bits(b) &&
         (a.kind() != Scalar::Kind::Complex || bits(a.payload().c.im) == bits(b.payload().c.im));
}

bool same_place(const Layout& a, const Layout& b) { return a.offset == b.offset && a.strides == b.strides; }

bool same_gen(const GenParams& a, const GenParams& b) {
  return bits(a.start) == bits(b.start) && bits(a.step) == bits(b.step) && bits(a.stop) == bits(b.stop) &&
         a.istart == b.istart && a.istep_second == b.istep_second && a.num == b.num && a.endpoint == b.endpoint &&
         a.seed == b.seed && a.counter == b.counter;
}

// A leaf's value hash: its structural hash (kind, dtype, shape, strides) with what makes
// it this value. (A realized node keeps the hash of what it was: two leaves on the same
// memory may then hash apart, a merge missed, never a wrong one.)
uint64_t leaf_hash(const Node& n) {
  switch (n.k()) {
    case NodeKind::Buffer:
      return hash_mix(hash_mix(n.hash, reinterpret_cast<uint64_t>(n.storage.get())), static_cast<uint64_t>(n.layout.offset));
    case NodeKind::Scalar:
      return hash_mix(hash_mix(n.hash, scalar_bits(n.scalar)), static_cast<uint64_t>(n.scalar.kind()) |
                                                                   uint64_t(n.scalar.weak()) << 8 |
                                                                   static_cast<uint64_t>(n.scalar.dtype()) << 16);
    default: {  // Generator
      const GenParams& g = n.gen;
      uint64_t h = hash_mix(hash_mix(n.hash, g.seed), g.counter + static_cast<uint64_t>(n.layout.offset));
      h = hash_mix(hash_mix(hash_mix(h, bits(g.start)), bits(g.step)), bits(g.stop));
      return hash_mix(hash_mix(h, static_cast<uint64_t>(g.istart) + 31 * static_cast<uint64_t>(g.istep_second)),
                      static_cast<uint64_t>(g.num) * 2 + g.endpoint);
    }
  }
}

// Two calls that compute the same from the same inputs: one object, or one class with
// equal attributes. attributes_hash is the identity the plan cache already relies on (a
// cached plan runs its first graph's call object for every later graph of the same key);
// comparing describe() as well cost 2.5 us a merge in formatting alone.
bool same_call(const LibraryAttrs& p, const LibraryAttrs& q) {
  if (p.output != q.output) return false;
  if (p.call == q.call) return true;
  const LibraryCall& c = *p.call;
  const LibraryCall& d = *q.call;
  return typeid(c) == typeid(d) && c.attributes_hash() == d.attributes_hash() && c.num_outputs() == d.num_outputs();
}

// a and b (a class start) are both mergeable, with equal value hashes.
bool same_value(const Scratch& s, const CseEntry& a, const CseEntry& b) {
  const Node& x = *a.n;
  const Node& y = *b.n;
  const NodeKind k = x.k();
  if (k != y.k() || x.dtype != y.dtype || x.op != y.op || x.layout.shape != y.layout.shape || a.nin != b.nin)
    return false;
  switch (k) {
    case NodeKind::Buffer: return x.storage == y.storage && same_place(x.layout, y.layout);
    case NodeKind::Scalar: return same_scalar_value(x.scalar, y.scalar);
    case NodeKind::Generator: return same_place(x.layout, y.layout) && same_gen(x.gen, y.gen);
    case NodeKind::View:
      if (!same_place(x.layout, y.layout)) return false;
      break;
    case NodeKind::Elementwise: break;
    case NodeKind::Reduce: {
      const ReduceAttrs& p = reduce_attrs(x);
      const ReduceAttrs& q = reduce_attrs(y);
      if (p.op != q.op || p.keepdims != q.keepdims || p.axes != q.axes) return false;
      break;
    }
    case NodeKind::Library:
      if (!same_call(library_attrs(x), library_attrs(y))) return false;
      break;
  }
  for (int j = 0; j < a.nin; ++j)
    if (s.e[s.ins[a.in_begin + j]].cls != s.e[s.ins[b.in_begin + j]].cls) return false;
  return true;
}

void go_big(Scratch& s) {
  s.big = true;
  const size_t n = std::max(s.e.size(), s.expect);
  s.index.reset(n);
  s.by_vh.reset(n);
  for (size_t i = 0; i < s.e.size(); ++i) {
    CseEntry& en = s.e[i];
    s.index.put(reinterpret_cast<uint64_t>(en.n), static_cast<int>(i));
    if (en.mergeable && en.cls == static_cast<int>(i)) {
      en.next_same = s.by_vh.find(en.vh);
      s.by_vh.put(en.vh, static_cast<int>(i));
    }
  }
}

// Adds node n, whose inputs' entries are s.args[b, end), and finds its class.
int add_entry(Scratch& s, Node* n, uint32_t b, int& dups) {
  CseEntry en;
  en.n = n;
  en.leaf = n->is_leaf();
  en.in_begin = static_cast<int>(s.ins.size());
  en.nin = static_cast<int>(s.args.size() - b);
  en.next_same = -1;
  en.root = false;
  en.mergeable = mergeable(*n);
  for (size_t j = b; j < s.args.size(); ++j) s.ins.push_back(s.args[j]);
  const int id = static_cast<int>(s.e.size());
  en.cls = id;
  if (!en.mergeable) {
    en.vh = spread(reinterpret_cast<uint64_t>(n));
  } else {
    if (en.leaf) {
      en.vh = leaf_hash(*n);
    } else {
      uint64_t h = n->hash;
      for (int j = 0; j < en.nin; ++j) h = hash_mix(h, s.vhs[static_cast<size_t>(s.ins[en.in_begin + j])]);
      en.vh = h;
    }
    if (s.big) {
      for (int c = s.by_vh.find(en.vh); c >= 0; c = s.e[c].next_same)
        if (same_value(s, en, s.e[c])) {
          en.cls = c;
          break;
        }
      if (en.cls == id) {
        en.next_same = s.by_vh.find(en.vh);
        s.by_vh.put(en.vh, id);
      }
    } else {
      for (int c = 0; c < id; ++c)
        if (s.vhs[c] == en.vh && s.e[c].cls == c && s.e[c].mergeable && same_value(s, en, s.e[c])) {
          en.cls = c;
          break;
        }
    }
    if (en.cls != id) ++dups;
  }
  s.e.push_back(en);
  s.ptrs.push_back(n);
  s.vhs.push_back(en.vh);
  if (s.big) s.index.put(reinterpret_cast<uint64_t>(n), id);
  else if (s.e.size() > kSmall) go_big(s);
  return id;
}

// The walk, inputs first (iterative: a long chain does not grow the stack).
int walk(Scratch& s, const std::vector<NodePtr>& roots) {
  int dups = 0;
  for (const auto& r : roots) {
    if (s.find(r.get()) >= 0) continue;
    s.stack.push_back(Frame{r.get(), 0, static_cast<uint32_t>(s.args.size())});
    while (!s.stack.empty()) {
      Frame& f = s.stack.back();
      Node* n = f.n;
      if (f.next < n->inputs.size()) {
        Node* in = n->inputs[f.next++].get();
        const int id = s.find(in);
        if (id >= 0) s.args.push_back(id);
        else s.stack.push_back(Frame{in, 0, static_cast<uint32_t>(s.args.size())});
        continue;
      }
      const uint32_t b = f.args_begin;
      s.stack.pop_back();
      const int id = add_entry(s, n, b, dups);
      s.args.resize(b);
      if (!s.stack.empty()) s.args.push_back(id);
    }
  }
  return dups;
}

// The screening walk: the value hashes of the inner nodes alone (a leaf's is computed where
// it is read: no entry, no lookup). Two equal nodes hash equal (a realized leaf that hashes
// apart from its equal only hides a merge), so with no two inner hashes equal there is
// nothing to merge, and this is all the pass costs.
bool may_have_duplicates(Scratch& s, const std::vector<NodePtr>& roots) {
  s.qn.clear();
  s.qh.clear();
  s.qstack.clear();
  bool big = false;
  auto find = [&](const Node* n) -> int {
    if (big) return s.index.find(reinterpret_cast<uint64_t>(n));
    const size_t k = s.qn.size();
    for (size_t i = 0; i < k; ++i)
      if (s.qn[i] == n) return static_cast<int>(i);
    return -1;
  };
  auto leaf_vh = [](const Node& n) { return mergeable(n) ? leaf_hash(n) : spread(reinterpret_cast<uint64_t>(&n)); };
  for (const auto& r : roots) {
    if (r->is_leaf() || find(r.get()) >= 0) continue;
    s.qstack.push_back(QuickFrame{r.get(), 0, r->hash});
    while (!s.qstack.empty()) {
      QuickFrame& f = s.qstack.back();
      if (f.next < f.n->inputs.size()) {
        Node* in = f.n->inputs[f.next++].get();
        if (in->is_leaf()) {
          f.h = hash_mix(f.h, leaf_vh(*in));
        } else if (const int id = find(in); id >= 0) {
          f.h = hash_mix(f.h, s.qh[static_cast<size_t>(id)]);
        } else {
          s.qstack.push_back(QuickFrame{in, 0, in->hash});
        }
        continue;
      }
      Node* n = f.n;
      const uint64_t h = mergeable(*n) ? f.h : spread(reinterpret_cast<uint64_t>(n));
      s.qstack.pop_back();
      if (!s.qstack.empty()) s.qstack.back().h = hash_mix(s.qstack.back().h, h);
      const int id = static_cast<int>(s.qn.size());
      if (big) {
        if (s.by_vh.find_or_put(h, id) >= 0) return true;
        s.index.put(reinterpret_cast<uint64_t>(n), id);
      } else {
        for (int c = 0; c < id; ++c)
          if (s.qh[static_cast<size_t>(c)] == h) return true;
        if (id + 1 > static_cast<int>(kSmall)) {
          big = true;
          const size_t want = std::max<size_t>(s.expect, kSmall + 1);
          s.index.reset(want);
          s.by_vh.reset(want);
          for (int c = 0; c < id; ++c) {
            s.index.put(reinterpret_cast<uint64_t>(s.qn[static_cast<size_t>(c)]), c);
            s.by_vh.put(s.qh[static_cast<size_t>(c)], c);
          }
          s.index.put(reinterpret_cast<uint64_t>(n), id);
          s.by_vh.put(h, id);
        }
      }
      s.qn.push_back(n);
      s.qh.push_back(h);
    }
  }
  return false;
}

// Node n (a root equal to rep) becomes an elementwise copy of rep: the same value, in
// memory of its own once realized.
void make_copy(Scratch& s, Node& n, Node* rep) {
  NodePtr src(rep);
  for (auto& in : n.inputs) s.dropped.push_back(std::move(in));
  n.inputs.clear();
  n.inputs.push_back(std::move(src));
  n.attrs = std::monostate{};
  n.op = static_cast<uint16_t>(Op::Cast);
  if (n.k() == NodeKind::View) {
    n.layout.strides = Strides{};
    n.layout.offset = 0;
  }
  n.kind.store(NodeKind::Elementwise, std::memory_order_release);
}

// Every representative reads representatives; duplicate roots become copies.
int rewrite(Scratch& s, const std::vector<NodePtr>& roots) {
  const int n = static_cast<int>(s.e.size());
  for (const auto& r : roots) s.e[static_cast<size_t>(s.find(r.get()))].root = true;
  s.rep.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) s.rep[i] = i;
  // A class with a root is represented by its first root: the value is written to memory
  // anyway, and the other members' readers read it there.
  for (const auto& r : roots) {
    const int i = s.find(r.get());
    const CseEntry& en = s.e[i];
    if (!en.leaf && en.mergeable && !s.e[s.rep[en.cls]].root) s.rep[en.cls] = i;
  }
  int copies = 0;
  for (int i = 0; i < n; ++i) {
    const CseEntry& en = s.e[i];
    if (en.leaf) continue;
    Node& node = *en.n;
    const int r = s.rep[en.cls];
    if (r == i) {
      for (int j = 0; j < en.nin; ++j) {
        Node* want = s.e[s.rep[s.e[s.ins[en.in_begin + j]].cls]].n;
        if (node.inputs[j].get() == want) continue;
        s.dropped.push_back(std::move(node.inputs[j]));
        node.inputs[j] = NodePtr(want);
      }
    } else if (en.root) {
      make_copy(s, node, s.e[r].n);
      ++copies;
    }
  }
  s.dropped.clear();
  return copies;
}

}  // namespace

bool cse_enabled() {
  const int v = runtime().state<CseSwitch>().on.load(std::memory_order_relaxed);
  // On unless CUFUSE_CSE=0. (It was off for a while: an int32 where() chain differed on the
  // H100 with it on. The pass was right; sharing -x let NVVM make two max.s32 that ptxas
  // miscompiles, now kept apart by cf_where in codegen/device_helpers.inc.)
  return v < 0 ? settings().cse : v != 0;
}

void set_cse_enabled(bool on) { runtime().state<CseSwitch>().on.store(on ? 1 : 0, std::memory_order_relaxed); }

int eliminate_common_subexpressions(const std::vector<NodePtr>& roots) {
  if (!cse_enabled()) return 0;
  // One pending node in all (pending counts shared nodes once per use, so this is an upper
  // bound): no two inner nodes to merge.
  int64_t pending = 0;
  for (const auto& r : roots) pending += r->pending;
  if (pending < 2) return 0;
  thread_local Scratch s;
  s.clear();
  // The tables' first size (pending counts a shared node once per use: capped, they grow).
  s.expect = static_cast<size_t>(std::min<int64_t>(pending, 1024));
  if (!may_have_duplicates(s, roots)) return 0;
  s.expect *= 2;  // about as many leaves as ops; the tables grow past that
  const int dups = walk(s, roots);
  if (dups == 0) return 0;
  const int copies = rewrite(s, roots);
  log(LogChannel::Plan, "cse: {} node(s) equal to an earlier one, {} root(s) now a copy of another",
      dups, copies);
  return dups;
}

}  // namespace cufuse::detail
