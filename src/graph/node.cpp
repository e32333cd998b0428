// src/graph/node.cpp: node builders, structural hashes, and the pending-work counters
// that bound the size and pinned memory of a lazy graph.
#include "graph/node.hpp"

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

std::recursive_mutex& graph_mutex() {
  static std::recursive_mutex m;
  return m;
}

const char* kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::Buffer: return "buffer";
    case NodeKind::Scalar: return "scalar";
    case NodeKind::Generator: return "generator";
    case NodeKind::Elementwise: return "elementwise";
    case NodeKind::View: return "view";
    case NodeKind::Reduce: return "reduce";
    case NodeKind::Library: return "library";
  }
  return "?";
}

const char* gen_name(GenKind g) {
  switch (g) {
    case GenKind::Arange: return "arange";
    case GenKind::Linspace: return "linspace";
    case GenKind::RandomUniform: return "uniform";
    case GenKind::RandomNormal: return "normal";
  }
  return "?";
}

bool Layout::is_contiguous() const {
  int64_t expect = 1;
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

Layout contiguous_layout(const Shape& s) { return Layout{s, contiguous_strides(s), 0}; }

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
  for (int i = 0; i < o.n; ++i) add(o.ids[i], o.bytes[i]);
  extra += o.extra;
}
uint64_t PinSet::total() const {
  uint64_t t = extra;
  for (int i = 0; i < n; ++i) t += bytes[i];
  return t;
}

void finish_node(Node& n) {
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  uint64_t h = hash_mix(static_cast<uint64_t>(n.k()), n.op);
  h = hash_mix(h, static_cast<uint64_t>(n.dtype));
  for (auto d : n.layout.shape) h = hash_mix(h, static_cast<uint64_t>(d));
  const bool has_layout = n.k() == NodeKind::Buffer || n.k() == NodeKind::Generator || n.k() == NodeKind::View;
  if (has_layout)
    for (auto s : n.layout.strides) h = hash_mix(h, static_cast<uint64_t>(s));
  int64_t pending = n.is_leaf() ? 0 : 1;
  n.pins = PinSet{};
  if (n.k() == NodeKind::Buffer) {
    n.pins.add(n.storage.get(), storage_bytes(n));
    n.reads_placeholder = n.storage == nullptr;
  }
  for (const auto& in : n.inputs) {
    h = hash_mix(h, in->hash);
    pending += in->pending;
    n.pins.merge(in->pins);
    n.reads_placeholder |= in->reads_placeholder;
  }
  n.hash = h;
  n.pending = static_cast<int32_t>(std::min<int64_t>(pending, 1 << 30));
}

NodePtr make_buffer(DType t, Layout layout, std::shared_ptr<Storage> storage) {
  auto n = std::make_shared<Node>(NodeKind::Buffer);
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
  auto n = std::make_shared<Node>(NodeKind::Scalar);
  n->dtype = t;
  n->layout.shape = shape;
  n->scalar = value.weak() || value.dtype() != t ? Scalar::typed(value, t) : value;
  finish_node(*n);
  return n;
}

NodePtr make_generator(GenKind g, DType t, Layout layout, const GenParams& p) {
  auto n = std::make_shared<Node>(NodeKind::Generator);
  n->dtype = t;
  n->op = static_cast<uint16_t>(g);
  n->layout = std::move(layout);
  n->gen = p;
  finish_node(*n);
  return n;
}

NodePtr make_elementwise(uint16_t op, DType t, const Shape& shape, InputVec inputs) {
  auto n = std::make_shared<Node>(NodeKind::Elementwise);
  n->dtype = t;
  n->op = op;
  n->layout.shape = shape;
  n->inputs = std::move(inputs);
  finish_node(*n);
  return n;
}

NodePtr make_view(NodePtr input, Layout layout) {
  auto n = std::make_shared<Node>(NodeKind::View);
  n->dtype = input->dtype;
  n->layout = std::move(layout);
  n->inputs.push_back(std::move(input));
  finish_node(*n);
  return n;
}

}  // namespace cufuse::detail
