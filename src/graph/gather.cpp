// src/graph/gather.cpp: gather views and scatter nodes (see gather.hpp): building them,
// pushing a gather below elementwise work, and the device error word of index checks.
#include "graph/gather.hpp"

#include <array>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "cufuse/backend.hpp"
#include "cufuse/error.hpp"
#include "core/op_table.hpp"
#include "core/walk.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/storage.hpp"
#include "runtime/transfer.hpp"

namespace cufuse::detail {

bool is_gather(const Node& n) {
  return n.k() == NodeKind::View && std::holds_alternative<std::shared_ptr<const GatherAttrs>>(n.attrs);
}
bool is_scatter(const Node& n) {
  return n.k() == NodeKind::Elementwise && std::holds_alternative<std::shared_ptr<const ScatterAttrs>>(n.attrs);
}
const GatherAttrs& gather_attrs(const Node& n) { return *std::get<std::shared_ptr<const GatherAttrs>>(n.attrs); }
const ScatterAttrs& scatter_attrs(const Node& n) { return *std::get<std::shared_ptr<const ScatterAttrs>>(n.attrs); }

const Node* scatter_pred(const Node& s) {
  const auto& a = scatter_attrs(s);
  return a.has_pred ? s.inputs[2 + a.size.size()].get() : nullptr;
}
const Node* gather_err(const Node& g) { return gather_attrs(g).has_err ? g.inputs.back().get() : nullptr; }
const Node* scatter_err(const Node& s) { return scatter_attrs(s).has_err ? s.inputs.back().get() : nullptr; }

std::string index_error_message(int64_t index, int64_t axis, int64_t size) {
  return fmt::format("index {} is out of bounds for axis {} with size {}", index, axis, size);
}

NodePtr iota_node(const Shape& shape, int axis) {
  GenParams p;
  p.istart = 0;
  p.istep_second = 1;
  p.num = shape[axis];
  Layout l;
  l.shape = shape;
  l.strides = Strides(static_cast<size_t>(shape.ndim()), 0);
  l.strides[axis] = 1;
  return make_generator(GenKind::Arange, DType::Int64, std::move(l), p);
}

int iota_axis_of(const Node& n) {
  if (n.k() != NodeKind::Generator || static_cast<GenKind>(n.op) != GenKind::Arange || n.dtype != DType::Int64) return -1;
  if (n.gen.istart != 0 || n.gen.istep_second != 1 || n.layout.offset != 0) return -1;
  int axis = -1;
  for (int d = 0; d < n.ndim(); ++d) {
    const int64_t st = n.layout.strides[d];
    if (n.shape()[d] == 1 || st == 0) continue;
    if (st != 1 || axis >= 0) return -1;
    axis = d;
  }
  if (axis < 0) {  // every dim of size 1 or broadcast: an iota along a dim of size 1 is 0 too
    for (int d = 0; d < n.ndim(); ++d)
      if (n.layout.strides[d] == 1) return d;
  }
  return axis;
}

NodePtr make_gather(NodePtr src, std::vector<NodePtr> E, const Shape& out, SmallVec<int64_t, 8> size,
                    SmallVec<int64_t, 8> axis, std::shared_ptr<const SubscriptOrigin> origin) {
  if (static_cast<int>(E.size()) != src->ndim() || size.size() != E.size() || axis.size() != E.size())
    throw InternalError("make_gather: one index node per source dim");
  auto n = new_node(NodeKind::View);
  n->dtype = src->dtype;
  n->layout = contiguous_layout(out);
  bool checked = false, placeholder = src->reads_placeholder || src->is_placeholder();
  for (size_t d = 0; d < E.size(); ++d) {
    if (!(E[d]->shape() == out) || !is_integer(E[d]->dtype))
      throw InternalError("make_gather: an index node is not an integer node of the gather's shape");
    checked |= size[d] >= 0;
    placeholder |= E[d]->reads_placeholder || E[d]->is_placeholder();
  }
  auto at = std::make_shared<GatherAttrs>();
  at->size = std::move(size);
  at->axis = std::move(axis);
  at->origin = std::move(origin);
  n->inputs.push_back(std::move(src));
  for (auto& e : E) n->inputs.push_back(std::move(e));
  if (checked && numel(out) > 0)
    if (NodePtr err = error_word_leaf(placeholder)) {
      n->inputs.push_back(std::move(err));
      at->has_err = true;
    }
  finish_node(*n);
  uint64_t h = hash_mix(n->hash, 0x6A7E);
  for (size_t d = 0; d < at->size.size(); ++d) h = hash_mix(hash_mix(h, static_cast<uint64_t>(at->size[d])), at->axis[d]);
  n->hash = h;
  n->attrs = std::move(at);
  return n;
}

namespace {

// A gather of one node that is read from a position (a leaf, a View, a Reduce/Library result).
NodePtr gather_leaf(const NodePtr& n, const GatherMove& m) {
  const int r = m.in.ndim();
  std::vector<NodePtr> E(static_cast<size_t>(r));
  SmallVec<int64_t, 8> size(static_cast<size_t>(r), -1), axis(static_cast<size_t>(r), 0);
  for (int d = 0; d < r; ++d) {
    if (m.iota_axis[d] >= 0) {
      E[d] = iota_node(m.out, m.iota_axis[d]);
    } else {
      E[d] = m.index[d];
      size[d] = m.size[d];
      axis[d] = m.axis[d];
    }
  }
  // An iota along an iota dim is that dim's output index: no memory, no gather.
  const int k = iota_axis_of(*n);
  if (k >= 0 && n->shape() == m.in && m.iota_axis[k] >= 0) return iota_node(m.out, m.iota_axis[k]);
  return make_gather(n, std::move(E), m.out, std::move(size), std::move(axis));
}

struct GatherPusher {
  const GatherMove& m;
  std::unordered_map<const Node*, NodePtr> memo;
  bool checked = false;  // a gather checking the move's indices was made

  NodePtr rec(const NodePtr& root) {
    walk_post_order(
        root, [&](const NodePtr& n) { return memo.count(n.get()) != 0; },
        [&](const NodePtr& n) { return n->k() == NodeKind::Elementwise && !has_attrs(n->attrs); },
        [&](const NodePtr& n) { memo.emplace(n.get(), moved(n)); });
    return memo.at(root.get());
  }
  NodePtr moved(const NodePtr& n) {
    switch (n->k()) {
      case NodeKind::Scalar: return make_scalar(n->scalar, n->dtype, m.out);
      case NodeKind::Elementwise:
        if (!has_attrs(n->attrs)) {
          InputVec ins;
          for (const auto& in : n->inputs) ins.push_back(memo.at(in.get()));
          return make_elementwise(n->op, n->dtype, m.out, std::move(ins));
        }
        break;
      case NodeKind::View:
        if (is_gather(*n)) {  // gather the indices: src[E](idx) = src[E[idx]]
          const auto& at = gather_attrs(*n);
          std::vector<NodePtr> E;
          for (int d = 0; d < gather_rank(*n); ++d) E.push_back(apply_gather(n->inputs[1 + d], m));
          return make_gather(n->inputs[0], std::move(E), m.out, at.size, at.axis);
        }
        break;
      default: break;
    }
    NodePtr g = gather_leaf(n, m);
    checked |= is_gather(*g);
    return g;
  }
};

bool move_checks(const GatherMove& m) {
  for (size_t d = 0; d < m.iota_axis.size(); ++d)
    if (m.iota_axis[d] < 0 && m.size[d] >= 0) return true;
  return false;
}

}  // namespace

NodePtr apply_gather(const NodePtr& n, const GatherMove& move) {
  if (!(n->shape() == move.in)) throw InternalError("apply_gather: the node's shape is not the move's");
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  GatherPusher p{move, {}};
  NodePtr r = p.rec(n);
  if (p.checked || !move_checks(move) || numel(move.out) == 0) return r;
  // Nothing under n is read from memory (constants, iotas): the indices are still checked,
  // by a gather of an iota whose value the result waits for (where(check >= 0, r, r)).
  Shape in = move.in;
  NodePtr probe = make_gather(iota_node(in, 0), [&] {
    std::vector<NodePtr> E;
    for (int d = 0; d < in.ndim(); ++d) E.push_back(move.iota_axis[d] >= 0 ? iota_node(move.out, move.iota_axis[d]) : move.index[d]);
    return E;
  }(), move.out, move.size, move.axis);
  InputVec ge;
  ge.push_back(probe);
  ge.push_back(make_scalar(Scalar(int64_t(0)), DType::Int64, move.out));
  NodePtr cond = make_elementwise(static_cast<uint16_t>(Op::GreaterEqual), DType::Bool, move.out, std::move(ge));
  InputVec w;
  w.push_back(cond);
  w.push_back(r);
  w.push_back(r);
  return make_elementwise(static_cast<uint16_t>(Op::Where), r->dtype, move.out, std::move(w));
}

// ------------------------------------------------------------------ the device error word
namespace {
struct ErrorWords {
  static constexpr StateSlot kSlot = StateSlot::IndexErrors;
  std::mutex mu;
  std::unordered_map<int, std::shared_ptr<Storage>> words;  // device -> int64[4]
  uint64_t armed = 0;                                        // devices a checked node was made for
};
ErrorWords& error_words() { return runtime().state<ErrorWords>(); }
}  // namespace

NodePtr error_word_leaf(bool placeholder) {
  if (current_backend() == Backend::Reference) return nullptr;
  auto& w = error_words();
  std::lock_guard<std::mutex> lk(w.mu);
  int dev = -1;
  std::shared_ptr<Storage>* slot = nullptr;
  try {
    dev = current_device();
    slot = &w.words[dev];
    if (!*slot) {
      auto st = allocate_device(4 * sizeof(int64_t));
      memset_device(st->ptr, 0, 4 * sizeof(int64_t), current_stream());
      *slot = std::move(st);
    }
  } catch (const Error&) {
    // No device: a graph of placeholders (planning, dumps, compiling) gets a placeholder word,
    // with the same kernel code; anything else cannot run here anyway.
    if (slot && !*slot) w.words.erase(dev);
    if (placeholder) return make_placeholder(DType::Int64, Shape{4});
    throw;
  }
  const std::shared_ptr<Storage>& st = *slot;
  if (dev >= 0 && dev < 64) w.armed |= uint64_t(1) << dev;
  Layout l = contiguous_layout(Shape{4});
  return make_buffer(DType::Int64, std::move(l), st);
}

void check_index_errors() {
  auto& w = error_words();
  std::array<int64_t, 4> found{};
  bool any = false;
  {
    std::lock_guard<std::mutex> lk(w.mu);
    if (!w.armed) return;
    for (auto& [dev, st] : w.words) {
      if (dev < 0 || dev >= 64 || !(w.armed & (uint64_t(1) << dev))) continue;
      std::array<int64_t, 4> v{};
      copy_to_host(v.data(), st->ptr, sizeof(v), current_stream());
      if (v[0] != 0) {
        if (!any) found = v;
        any = true;
        memset_device(st->ptr, 0, sizeof(v), current_stream());
      }
    }
    // `armed` stays set: a checked node made before this call may launch after it.
  }
  if (any) throw IndexError(index_error_message(found[1], found[2], found[3]));
}

}  // namespace cufuse::detail
