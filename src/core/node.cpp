// src/core/node.cpp: node builders, structural hashes, and the pending-work counters
// that bound the size and pinned memory of a lazy graph.
#include "core/node.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/registry.hpp"
#include "cufuse/error.hpp"
#include "core/registry.hpp"
#include "runtime/context.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

namespace {
// The graph's process state (runtime/context.hpp): the lock over its shared parts, and the
// next block of creation numbers.
struct GraphState {
  static constexpr StateSlot kSlot = StateSlot::GraphState;
  std::recursive_mutex mu;
  std::atomic<uint32_t> seq{0};
};
}  // namespace

Node::~Node() {
  if (dest && dest->storage) {  // a pending write that will never run no longer blocks its memory
    void* self = this;
    dest->storage->pending_write.compare_exchange_strong(self, nullptr);
  }
  // A chain of nodes each holding the next is released recursively, one stack frame per
  // node; past a depth, unwind it here instead: take over every input this node is the last
  // owner of.
  if (inputs.empty()) return;
  thread_local int depth = 0;
  if (depth < 256) {
    ++depth;
    inputs.clear();
    --depth;
    return;
  }
  std::vector<NodePtr> stack;
  for (auto& in : inputs) stack.push_back(std::move(in));
  inputs.clear();
  auto take_inputs = [&](Node& n) {
    for (auto& in : n.inputs) stack.push_back(std::move(in));
    n.inputs.clear();
  };
  while (!stack.empty()) {
    NodePtr n = std::move(stack.back());
    stack.pop_back();
    if (!n || n->refs.load(std::memory_order_acquire) != 1) continue;
    if (!n->registered.load(std::memory_order_relaxed)) {
      take_inputs(*n);  // the only reference: nobody else can see this node
    } else {
      RegistryLock lk;  // the registry takes references under this lock
      if (n->refs.load(std::memory_order_acquire) == 1) take_inputs(*n);
    }
  }
}

namespace {
// Fixed-size blocks of a Node's size recycled per thread (a block freed on another thread
// joins that thread's list: blocks of one size are interchangeable).
struct FreeList {
  void* head = nullptr;
  int count = 0;
  ~FreeList() {
    while (head) {
      void* next = *static_cast<void**>(head);
      ::operator delete(head);
      head = next;
    }
  }
  static FreeList& get() {
    thread_local FreeList fl;
    return fl;
  }
};
static_assert(sizeof(Node) >= sizeof(void*));
}  // namespace

NodePtr new_node(NodeKind k) {
  FreeList& fl = FreeList::get();
  void* p = fl.head;
  if (p) {
    fl.head = *static_cast<void**>(p);
    --fl.count;
  } else {
    p = ::operator new(sizeof(Node));
  }
  return NodePtr(new (p) Node(k), /*add_ref=*/false);  // refs starts at 1
}

static void free_node(Node* n) noexcept {
  n->~Node();
  FreeList& fl = FreeList::get();
  if (fl.count < 4096) {
    *static_cast<void**>(static_cast<void*>(n)) = fl.head;
    fl.head = n;
    ++fl.count;
    return;
  }
  ::operator delete(static_cast<void*>(n));
}

void destroy_node(Node* n) noexcept {
  unregister_root(n);
  free_node(n);
}

bool release_sole_registered(Node* n) noexcept {
  {
    RegistryLock lk;
    if (n->refs.load(std::memory_order_acquire) != 1) return false;
    n->refs.store(0, std::memory_order_relaxed);
    if (n->registered.load(std::memory_order_relaxed)) unregister_root_locked(n);
  }
  free_node(n);
  return true;
}

std::recursive_mutex& graph_mutex() { return runtime().state<GraphState>().mu; }

bool Layout::is_contiguous() const {
  int64_t expect = 1;
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

static Strides checked_contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (int i = s.ndim() - 1; i >= 0; --i) {
    st[i] = acc;
    // Saturated: only an empty array's shape can make the product overflow (its strides
    // address nothing), e.g. zeros((2**32, 2**32, 0)), which NumPy allows.
    if (__builtin_mul_overflow(acc, std::max<int64_t>(s[i], 1), &acc)) acc = INT64_MAX;
  }
  return st;
}

Layout contiguous_layout(const Shape& s) { return Layout{s, checked_contiguous_strides(s), 0}; }

uint64_t storage_bytes(const Node& n) { return n.storage ? n.storage->nbytes : 0; }

void PinSet::add(const void* id, uint64_t b) {
  if (!id || !b) return;
  for (int i = 0; i < n; ++i)
    if (ids[i] == id) return;
  if (n < 4) {
    ids[n] = id;
    bytes[n++] = b;
  } else {
    extra += b;
  }
}
void PinSet::merge(const PinSet& o) {
  if (o.n == 0 && o.extra == 0) return;
  if (n == 0 && extra == 0) {  // the first input's set, taken whole
    *this = o;
    return;
  }
  if (n == o.n && extra == 0 && o.extra == 0 && std::equal(ids, ids + n, o.ids)) return;  // the same leaves
  for (int i = 0; i < o.n; ++i) add(o.ids[i], o.bytes[i]);
  extra += o.extra;
}
uint64_t PinSet::total() const {
  uint64_t t = extra;
  for (int i = 0; i < n; ++i) t += bytes[i];
  return t;
}

namespace {
// Creation numbers of unrealized nodes: each thread takes them in blocks, so they are
// distinct across threads and increase along each thread's program.
constexpr uint32_t kSeqBlock = 1u << 16;
uint32_t next_seq() {
  thread_local uint32_t next = 0, end = 0;
  if (next == end) {
    next = runtime().state<GraphState>().seq.fetch_add(kSeqBlock, std::memory_order_relaxed);
    end = next + kSeqBlock;
  }
  return next++;
}
}  // namespace

void finish_node(Node& n) {
  // No lock: an input's hash, pending count and pins never change once made (realization
  // leaves them), and a realized input (kind Buffer, published with release order) is
  // accounted as the leaf it now is.
  //
  // `pending` bounds the unrealized nodes a graph holds from above, the smaller of two
  // bounds, both cheap: the sum over the inputs (exact for a chain or a tree, but a graph
  // reading one value twice counts it twice, and a loop whose statements each read the
  // others' last values, `p = p - q*dt; q = q + p*dt`, doubles it every step), and the
  // range of creation numbers under the node (nodes made since its oldest unrealized one:
  // exact for a program built statement by statement, an over-count where unrelated work is
  // built in between). The budget (exec/executor.cpp: maybe_auto_eval) then counts a long
  // program by its nodes, not by its uses.
  uint64_t h = hash_mix(static_cast<uint64_t>(n.k()), n.op);
  h = hash_mix(h, static_cast<uint64_t>(n.dtype));
  for (auto d : n.layout.shape) h = hash_mix(h, static_cast<uint64_t>(d));
  const bool has_layout = n.k() == NodeKind::Buffer || n.k() == NodeKind::Generator || n.k() == NodeKind::View;
  if (has_layout)
    for (auto s : n.layout.strides) h = hash_mix(h, static_cast<uint64_t>(s));
  const bool leaf = n.is_leaf();
  int64_t pending = leaf ? 0 : 1;
  uint32_t lo = 0, hi = 0;
  if (!leaf) lo = hi = next_seq();
  n.pins = PinSet{};
  if (n.k() == NodeKind::Buffer) {
    n.pins.add(n.storage.get(), storage_bytes(n));
    n.reads_placeholder = n.storage == nullptr;
    n.device = n.storage ? static_cast<int16_t>(n.storage->device) : int16_t(-2);
  }
  for (const auto& in : n.inputs) {
    h = hash_mix(h, in->hash);
    if (n.device == -2)  // the first input that reads memory names the device
      n.device = in->k() != NodeKind::Buffer ? in->device
                 : in->storage                ? static_cast<int16_t>(in->storage->device)
                                              : int16_t(-2);
    if (in->k() == NodeKind::Buffer) {
      n.pins.add(in->storage.get(), storage_bytes(*in));
      n.reads_placeholder |= in->storage == nullptr;
    } else {
      pending += in->pending;
      if (in->pending > 0) {  // unrealized: its creation numbers count
        lo = std::min(lo, in->seq_lo);
        hi = std::max(hi, in->seq_hi);
      }
      n.pins.merge(in->pins);
      n.reads_placeholder |= in->reads_placeholder;
    }
  }
  n.hash = h;
  if (!leaf) pending = std::min<int64_t>(pending, int64_t(hi - lo) + 1);  // (numbers wrapped under it: a huge range)
  n.pending = static_cast<int32_t>(std::min<int64_t>(pending, 1 << 30));
  n.seq_lo = lo;
  n.seq_hi = hi;
}

NodePtr make_buffer(DType t, Layout layout, std::shared_ptr<Storage> storage) {
  auto n = new_node(NodeKind::Buffer);
  n->dtype = t;
  n->layout = std::move(layout);
  n->storage = std::move(storage);
  finish_node(*n);
  return n;
}

NodePtr make_placeholder(DType t, const Shape& shape, int slot) {
  auto n = make_buffer(t, contiguous_layout(shape), nullptr);
  n->placeholder_slot = slot;
  return n;
}

NodePtr make_scalar(const Scalar& value, DType t, const Shape& shape) {
  auto n = new_node(NodeKind::Scalar);
  n->dtype = t;
  n->layout.shape = shape;
  n->scalar = value.weak() || value.dtype() != t ? Scalar::typed(value, t) : value;
  finish_node(*n);
  return n;
}

NodePtr make_generator(GenKind g, DType t, Layout layout, const GenParams& p) {
  auto n = new_node(NodeKind::Generator);
  n->dtype = t;
  n->op = static_cast<uint16_t>(g);
  n->layout = std::move(layout);
  n->gen = p;
  finish_node(*n);
  return n;
}

NodePtr new_elementwise(uint16_t op, DType t, const Shape& shape) {
  auto n = new_node(NodeKind::Elementwise);
  n->dtype = t;
  n->op = op;
  n->layout.shape = shape;
  return n;
}

NodePtr make_elementwise(uint16_t op, DType t, const Shape& shape, InputVec inputs) {
  auto n = new_elementwise(op, t, shape);
  n->inputs = std::move(inputs);
  finish_node(*n);
  return n;
}

NodePtr make_view(NodePtr input, Layout layout) {
  auto n = new_node(NodeKind::View);
  n->dtype = input->dtype;
  n->layout = std::move(layout);
  n->inputs.push_back(std::move(input));
  finish_node(*n);
  return n;
}

}  // namespace cufuse::detail
