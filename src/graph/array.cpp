// src/graph/array.cpp: cufuse::Array: handles, facts, views, materialization and writes.
#include <cstring>
#include <unordered_set>

#include <fmt/format.h>

#include "cufuse/array.hpp"
#include "core/registry.hpp"
#include "core/slice_bounds.hpp"
#include "cufuse/ops.hpp"
#include "graph/elementwise.hpp"
#include "graph/gather.hpp"
#include "graph/indexing.hpp"
#include "graph/lazy_base.hpp"
#include "graph/realize.hpp"
#include "graph/views.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_chain.hpp"
#include "runtime/storage.hpp"
#include "runtime/transfer.hpp"

namespace cufuse {

using detail::Movement;
using detail::Node;
using detail::NodeKind;
using detail::NodePtr;

// ------------------------------------------------------------------ handles
static void acquire(const NodePtr& n) {
  if (n && n->array_refs.fetch_add(1) == 0 && !n->is_leaf()) detail::register_root(n);
}
// For a handle made from a node (`node` is its own): where that is the node's only reference,
// no other handle exists or can be copied meanwhile (an op's new node, most often), so a
// plain store counts it. Not for a copy: another thread may copy the same handle at once.
static void acquire_own(const NodePtr& node) {
  if (!node) return;
  if (node->refs.load(std::memory_order_acquire) != 1) return acquire(node);
  const int32_t before = node->array_refs.load(std::memory_order_relaxed);
  node->array_refs.store(before + 1, std::memory_order_relaxed);
  if (before == 0 && !node->is_leaf()) detail::register_root(node);
}
static void release(const NodePtr& n) {
  if (n) n->array_refs.fetch_sub(1);
}

Array::Array() = default;
Array::~Array() {
  if (named_) release(node_);
}
Array::Array(NodePtr node) : node_(std::move(node)) { acquire_own(node_); }
Array::Array(NodePtr node, std::shared_ptr<detail::LazyBase> base)
    : node_(std::move(node)), base_(std::move(base)) {
  acquire_own(node_);
}
Array::Array(const Array& o) : node_(o.node_), base_(o.base_) { acquire(node_); }
Array::Array(Array&& o) noexcept : node_(std::move(o.node_)), base_(std::move(o.base_)), named_(o.named_) {
  o.named_ = true;
}
Array& Array::operator=(const Array& o) & {
  if (this != &o) {
    acquire(o.node_);
    if (named_) release(node_);
    node_ = o.node_;
    base_ = o.base_;
    named_ = true;
  }
  return *this;
}
Array& Array::operator=(Array&& o) & noexcept {
  if (this != &o) {
    if (named_) release(node_);
    node_ = std::move(o.node_);
    base_ = std::move(o.base_);
    named_ = o.named_;
    o.named_ = true;
  }
  return *this;
}
// A temporary x[{idx, ...}] with integer index arrays writes through them (graph/scatter.cpp).
Array& Array::operator=(const Array& o) && {
  if (node_ && detail::write_through_subscript(*this, uint16_t(detail::Op::Cast), o)) return *this;
  return assign(o);
}
Array& Array::operator=(Array&& o) && {
  if (node_ && detail::write_through_subscript(*this, uint16_t(detail::Op::Cast), o)) return *this;
  return assign(std::move(o));
}
Array& Array::operator=(const Scalar& v) && {
  if (node_ && detail::write_through_subscript(*this, uint16_t(detail::Op::Cast), v)) return *this;
  return assign(v);
}

void Array::set_node(NodePtr n) {
  acquire(n);
  if (named_) release(node_);
  node_ = std::move(n);
  named_ = true;
}

void Array::unname() {
  if (named_ && node_) release(node_);
  named_ = false;
}

void Array::require_defined(const char* what) const {
  if (!node_) throw ValueError(fmt::format("{}: the Array handle is empty (default-constructed)", what));
}

// A view of a lazy array whose base has since been materialized becomes a strided leaf on
// the base's memory, so it sees writes made through the base (NumPy's view semantics).
// `named`: the handle counts as a name of its node (Array::unname).
static void rebind_if_base_ready(NodePtr& node, std::shared_ptr<detail::LazyBase>& base, bool named = true) {
  if (!base || !base->node->is_materialized()) return;
  std::lock_guard<std::recursive_mutex> lk(detail::graph_mutex());
  if (!base->node->is_materialized()) return;
  // The base is dense in memory (a new array, or a pending write into a dense array: views
  // of one into a strided view settle it first, see CUFUSE_VIEW_PRELUDE), from its offset.
  detail::Layout l = base->view;
  l.offset += base->node->layout.offset;
  auto leaf = detail::make_buffer(base->node->dtype, std::move(l), base->node->storage);
  leaf->read_only = base->read_only;
  if (named) {
    acquire(leaf);
    release(node);
  }
  node = std::move(leaf);
  base.reset();
}

NodePtr Array::take_node() && {
  if (base_ || !node_) return {};
  if (node_->storage && node_->storage->pending_write.load(std::memory_order_acquire))
    detail::settle_pending_write(node_);
  if (!named_) return std::move(node_);  // no name to give up
  Node* n = node_.get();
  // The only handle and the only reference: a temporary, which no other thread can copy.
  if (n->refs.load(std::memory_order_acquire) == 1 && n->array_refs.load(std::memory_order_relaxed) == 1)
    n->array_refs.store(0, std::memory_order_relaxed);
  else
    release(node_);
  return std::move(node_);
}

const NodePtr& Array::node() const {
  if (base_) rebind_if_base_ready(node_, base_, named_);
  if (node_ && node_->storage && node_->storage->pending_write.load(std::memory_order_acquire))
    detail::settle_pending_write(node_);
  return node_;
}

// ------------------------------------------------------------------ facts
DType Array::dtype() const {
  require_defined("dtype");
  return node_->dtype;
}
const Shape& Array::shape() const {
  require_defined("shape");
  return node_->shape();
}
int Array::ndim() const { return shape().ndim(); }
int64_t Array::size() const { return numel(shape()); }

static int normalize_axis(int axis, int ndim, const char* what) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError(fmt::format("{}: axis {} is out of bounds for array of dimension {}", what, axis, ndim));
  return axis < 0 ? axis + ndim : axis;
}

int64_t Array::shape(int axis) const { return shape()[normalize_axis(axis, ndim(), "shape")]; }

bool Array::is_lazy() const {
  require_defined("is_lazy");
  return !node_->is_materialized();
}

static const detail::Storage* first_storage(const Node* n, int depth = 0) {
  if (n->k() == NodeKind::Buffer) return n->storage.get();
  if (depth > 64) return nullptr;
  for (const auto& in : n->inputs)
    if (auto s = first_storage(in.get(), depth + 1)) return s;
  return nullptr;
}

int Array::device() const {
  require_defined("device");
  std::lock_guard<std::recursive_mutex> lk(detail::graph_mutex());
  if (auto s = first_storage(node_.get())) return s->device;
  return -1;
}

Strides Array::strides() const {
  const_cast<Array*>(this)->eval();
  return node_->layout.strides;
}

bool Array::is_contiguous() const {
  // As data_ptr() will see it: a view of a lazy array lives in its base's memory once the base
  // is computed (io/foreign.cpp), not in the private copy that evaluating it alone makes.
  if (base_ && !base_->node->is_materialized()) detail::realize({base_->node});
  const_cast<Array*>(this)->eval();
  return node_->layout.is_contiguous();
}

std::string Array::str() const {
  if (!node_) return "Array(<empty handle>)";
  return fmt::format("Array({}, {}, {})", name(dtype()), to_string(shape()),
                     node_->is_placeholder() ? "placeholder" : (is_lazy() ? "lazy" : "in memory"));
}

// ------------------------------------------------------------------ views
namespace {
// The view is a view of the lazy array the handle views (its base), if any, else of the
// handle's own lazy node. A handle with a base whose own node is in memory was evaluated
// alone (`v = y.reshape(s); v.eval()`): that memory is a private copy that the handle drops
// for the base's once the base is in memory (rebind_if_base_ready), so a view of it keeps the
// base too; a write through the view then goes into the base's memory, where every handle on
// the base and its views sees it (NumPy: `v.T[...] /= 2` changes y and v).
Array apply_view(const Array& a, NodePtr node, std::shared_ptr<detail::LazyBase> base, const Movement& m) {
  NodePtr out = detail::apply_movement(node, m);
  std::shared_ptr<detail::LazyBase> nb;
  if (base || (!node->is_materialized() && !node->is_placeholder())) {
    detail::Layout l = base ? base->view : detail::contiguous_layout(node->shape());
    if (detail::apply_to_layout(l, m))
      nb = std::make_shared<detail::LazyBase>(base ? base->node : node, std::move(l),
                                              (base && base->read_only) || m.kind == Movement::Broadcast);
  }
  return Array(std::move(out), std::move(nb));
}
}  // namespace

// A view of a pending write into a strided view of an array is made after that write (a
// lazy view's positions are those of a dense base). A view of memory that a pending write
// (through another handle) changes is made after that write too, as node() reads it: the
// view is a leaf on that memory, which the planner would take for a read of the old values.
#define CUFUSE_VIEW_PRELUDE(what)                                                               \
  require_defined(what);                                                                        \
  auto node = node_;                                                                            \
  auto base = base_;                                                                            \
  rebind_if_base_ready(node, base);                                                             \
  if (node->storage && node->storage->pending_write.load(std::memory_order_acquire))            \
    detail::settle_pending_write(node);                                                         \
  if (node->dest && !node->dest->layout.is_contiguous()) detail::realize({node});

Array Array::reshape(const Shape& newshape) const {
  CUFUSE_VIEW_PRELUDE("reshape");
  Shape s = newshape;
  int infer = -1;
  int64_t known = 1;
  bool too_big = false, empty = false;  // a zero dimension makes any product 0, as NumPy allows
  for (int i = 0; i < s.ndim(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) throw ValueError("reshape: can only specify one unknown dimension");
      infer = i;
    } else if (s[i] < 0) {
      throw ValueError(fmt::format("reshape: negative dimension in {}", to_string(newshape)));
    } else {
      empty |= s[i] == 0;
      too_big |= __builtin_mul_overflow(known, s[i], &known);
    }
  }
  if (empty) known = 0;
  else if (too_big)
    throw ValueError(fmt::format("reshape: array is too big; shape {} has more than 2^63 elements", to_string(newshape)));
  const int64_t n = size();
  if (infer >= 0) {
    if (known == 0 || n % known != 0)
      throw ValueError(fmt::format("cannot reshape array of size {} into shape {}", n, to_string(newshape)));
    s[infer] = n / known;
  }
  if (empty ? n != 0 : numel(s) != n)
    throw ValueError(fmt::format("cannot reshape array of size {} into shape {}", n, to_string(newshape)));
  if (s == shape()) return Array(node, base);
  return apply_view(*this, node, base, Movement{Movement::Reshape, s, {}, {}, {}, {}});
}

Array Array::ravel() const { return reshape({-1}); }
Array Array::flatten() const { return ravel().copy(); }

Array Array::transpose() const {
  Axes ax(static_cast<size_t>(ndim()));
  for (int i = 0; i < ndim(); ++i) ax[i] = ndim() - 1 - i;
  return transpose(ax);
}

Array Array::transpose(const Axes& axes) const {
  CUFUSE_VIEW_PRELUDE("transpose");
  const int nd = ndim();
  if (axes.ndim() != nd)
    throw ValueError(fmt::format("transpose: axes don't match array: {} axes for an array of dimension {}",
                                 axes.ndim(), nd));
  Axes p(axes.size());
  std::vector<bool> seen(static_cast<size_t>(nd), false);
  bool identity = true;
  for (int i = 0; i < nd; ++i) {
    p[i] = normalize_axis(axes[i], nd, "transpose");
    if (seen[p[i]]) throw ValueError("transpose: repeated axis in transpose");
    seen[p[i]] = true;
    identity &= p[i] == i;
  }
  if (identity) return Array(node, base);
  return apply_view(*this, node, base, Movement{Movement::Permute, {}, p, {}, {}, {}});
}

Array Array::swapaxes(int a, int b) const {
  const int nd = ndim();
  a = normalize_axis(a, nd, "swapaxes");
  b = normalize_axis(b, nd, "swapaxes");
  Axes p(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) p[i] = i;
  std::swap(p[a], p[b]);
  return transpose(p);
}

Array Array::moveaxis(int src, int dst) const {
  const int nd = ndim();
  src = normalize_axis(src, nd, "moveaxis");
  dst = normalize_axis(dst, nd, "moveaxis");
  std::vector<int> order;
  for (int i = 0; i < nd; ++i)
    if (i != src) order.push_back(i);
  order.insert(order.begin() + dst, src);
  return transpose(Axes(order.begin(), order.end()));
}

Array Array::broadcast_to(const Shape& target) const {
  CUFUSE_VIEW_PRELUDE("broadcast_to");
  (void)detail::broadcast_node(node, target);  // validates with NumPy's message
  if (target == shape()) return Array(node, base);
  return apply_view(*this, node, base, Movement{Movement::Broadcast, target, {}, {}, {}, {}});
}

Array Array::expand_dims(int axis) const {
  const int nd = ndim() + 1;
  axis = normalize_axis(axis, nd, "expand_dims");
  Shape s = shape();
  s.insert_at(static_cast<size_t>(axis), 1);
  return reshape(s);
}

Array Array::squeeze() const {
  Shape s;
  for (auto d : shape())
    if (d != 1) s.push_back(d);
  return reshape(s);
}

Array Array::squeeze(const Axes& axes) const {
  const int nd = ndim();
  std::vector<bool> drop(static_cast<size_t>(nd), false);
  for (int a : axes) {
    int ax = normalize_axis(a, nd, "squeeze");
    if (shape()[ax] != 1)
      throw ValueError(fmt::format("cannot select an axis to squeeze out which has size not equal to one "
                                   "(axis {} of shape {})", a, to_string(shape())));
    drop[ax] = true;
  }
  Shape s;
  for (int i = 0; i < nd; ++i)
    if (!drop[i]) s.push_back(shape()[i]);
  return reshape(s);
}

Array Array::index(std::initializer_list<Index> idx) const { return index(std::vector<Index>(idx)); }

Array Array::index(const std::vector<Index>& idx) const {
  for (const auto& i : idx)  // integer or bool arrays: advanced indexing (graph/indexing.cpp)
    if (std::holds_alternative<std::shared_ptr<const Array>>(i.get())) {
      require_defined("index");
      return detail::advanced_index(*this, idx, true);
    }
  CUFUSE_VIEW_PRELUDE("index");
  const Shape& in = node->shape();
  const int nd = in.ndim();
  const int consumed = detail::consumed_dims(idx, nd);
  Movement sl{Movement::Slice, {}, {}, {}, {}, {}};
  sl.start.resize(nd, 0);
  sl.step.resize(nd, 1);
  sl.len.resize(nd, 0);
  for (int d = 0; d < nd; ++d) sl.len[d] = in[d];
  bool any_slice = false;
  Shape out;
  int d = 0;
  for (const auto& i : idx) {
    const auto& v = i.get();
    if (auto p = std::get_if<int64_t>(&v)) {
      int64_t k = *p;
      if (k < -in[d] || k >= in[d])
        throw IndexError(fmt::format("index {} is out of bounds for axis {} with size {}", k, d, in[d]));
      if (k < 0) k += in[d];
      sl.start[d] = k;
      sl.len[d] = 1;
      any_slice = true;
      ++d;
    } else if (auto s = std::get_if<Slice>(&v)) {
      const int64_t n = in[d];
      const auto [start, step, len] = detail::slice_bounds(*s, n);  // Python's PySlice_AdjustIndices
      sl.start[d] = start;
      sl.step[d] = step;
      sl.len[d] = len;
      any_slice |= !(start == 0 && step == 1 && len == n);
      out.push_back(len);
      ++d;
    } else if (std::holds_alternative<NewAxis>(v)) {
      out.push_back(1);
    } else {  // ellipsis: the dims no other index consumes
      for (int k = 0; k < nd - consumed; ++k) out.push_back(in[d++]);
    }
  }
  for (; d < nd; ++d) out.push_back(in[d]);
  Array r(node, base);
  if (any_slice) r = apply_view(*this, node, base, sl);
  if (r.shape() != out) r = r.reshape(out);
  return r;
}

Array Array::astype(DType t) const {
  require_defined("astype");
  return cufuse::astype(*this, t);
}

Array Array::copy() const { return astype(dtype()); }

// ------------------------------------------------------------------ materialization
Array& Array::eval() {
  require_defined("eval");
  (void)node();  // rebinds a view of a lazy array; settles a write into its memory by another handle
  if (!node_->is_materialized()) detail::realize({node_});
  rebind_if_base_ready(node_, base_, named_);
  return *this;
}
const Array& Array::eval() const { return const_cast<Array*>(this)->eval(); }

void eval_all(const std::vector<Array>& arrays) {
  std::vector<NodePtr> roots;
  for (const auto& a : arrays) {
    if (!a.defined()) throw ValueError("eval: an Array handle is empty (default-constructed)");
    if (!a.node()->is_materialized()) roots.push_back(a.node());
  }
  if (!roots.empty()) detail::realize(roots);
}

void Array::check_host_type(DType t) const {
  if (t != dtype())
    throw TypeError(fmt::format("to_host<{}>: the array's dtype is {}; convert with astype({}) first", name(t),
                                name(dtype()), name(t)));
}

void Array::copy_to_host(void* dst, size_t nbytes_) const {
  require_defined("to_host");
  if (nbytes_ != static_cast<size_t>(nbytes()))
    throw ValueError(fmt::format("to_host: destination has {} bytes, the array {} of {} needs {}", nbytes_,
                                 to_string(shape()), name(dtype()), nbytes()));
  if (nbytes_ == 0) return;
  eval();
  NodePtr leaf = node_;
  // The copy runs on the array's device (its current stream there), whatever is current here.
  detail::DeviceGuard on(leaf->storage && !leaf->storage->on_host() ? leaf->storage->device : -1);
  if (!leaf->layout.is_contiguous()) {
    // Gather a strided view into new contiguous memory first.
    auto tmp = detail::make_buffer(
        leaf->dtype, detail::contiguous_layout(leaf->shape()),
        leaf->storage->on_host() ? detail::allocate_host(nbytes_) : detail::allocate_device(nbytes_));
    detail::write_into(tmp, leaf);
    leaf = tmp;
  }
  const auto& st = *leaf->storage;
  const char* src = static_cast<const char*>(st.ptr) + leaf->layout.offset * itemsize();
  if (st.on_host()) {
    std::memcpy(dst, src, nbytes_);
  } else {
    detail::copy_to_host(dst, src, nbytes_, detail::current_stream());
    detail::check_index_errors();  // an index out of bounds a kernel met (graph/gather.hpp)
  }
}

Scalar Array::item_scalar() const {
  if (size() != 1)
    throw ValueError(fmt::format("can only convert an array of size 1 to a scalar (shape {})", to_string(shape())));
  // A constant (full(), a Scalar leaf) is its own value, made in its dtype: no device work.
  if (node_ && node_->k() == NodeKind::Scalar) return Scalar::typed(node_->scalar, dtype());
  alignas(16) unsigned char buf[16] = {};
  copy_to_host(buf, static_cast<size_t>(itemsize()));
  return Scalar::from_bytes(buf, dtype());
}

// ------------------------------------------------------------------ writes
// A write is lazy: the array's handle moves to a new version, a node whose value is the
// expression and whose WriteDest is the array's memory (node.hpp). The next materialization
// point writes it there, fused with the rest of its work (exec/executor.cpp); the planner
// keeps reads of the old values right (plan/hazards.hpp). Storage::pending_write names the
// one pending write into a block of memory: a read of that memory through any other handle,
// or a second write into it, carries the first one out before (settle_pending_write).

// The memory a write into this array lands in, as a Buffer leaf (under graph_mutex()): a
// view of a lazy array materializes the array it views; a lazy array is materialized; a
// pending write into the memory made through another handle is carried out first.
static NodePtr writable_leaf(NodePtr& node, std::shared_ptr<detail::LazyBase>& base) {
  if (node->is_placeholder()) throw ValueError("cannot write into a placeholder array");
  if (base && !base->node->is_materialized()) {
    if (base->node->is_placeholder()) throw ValueError("cannot write into a view of a placeholder array");
    detail::realize({base->node});
  }
  rebind_if_base_ready(node, base);
  if (!node->is_materialized()) detail::realize({node});
  detail::settle_pending_write(node);
  if (std::string why = detail::read_only_what(*node); !why.empty())
    throw ValueError("assignment destination is read-only: " + why);
  return node;
}

namespace detail {
std::string read_only_what(const Node& n) {
  const auto& l = n.layout;
  for (int i = 0; i < l.shape.ndim(); ++i)
    if (l.strides[i] == 0 && l.shape[i] > 1)
      return fmt::format("a broadcast view of shape {} (its elements share memory; write into a copy: x.copy())",
                         to_string(l.shape));
  if (!n.read_only) return "";
  if (n.storage && n.storage->release)
    return fmt::format("read-only memory of shape {} (imported as read-only)", to_string(l.shape));
  return fmt::format("a read-only view of shape {} (diagonal() and broadcast_to() return read-only views, as in "
                     "NumPy; write into a copy, or index the array itself: a[i, i] = v)",
                     to_string(l.shape));
}
}  // namespace detail
// Does `value` read a leaf on memory that has a pending write (one it was built before, so
// it must read the old values)? A pending write's own node is not a leaf: reading it is
// reading the new values. Each node once, with an explicit stack.
static bool reads_pending_write_memory(const NodePtr& value) {
  if (value->is_leaf() || detail::pending_write_count() == 0) return false;
  std::vector<const Node*> stack{value.get()};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->k() == NodeKind::Buffer) {
      if (n->storage && n->storage->pending_write.load(std::memory_order_acquire)) return true;
      continue;
    }
    for (const auto& in : n->inputs) stack.push_back(in.get());
  }
  return false;
}

// A node only the caller references (made for this write): it may become the new version
// itself. Anything else (another array's node, a leaf) is copied by an elementwise node.
static NodePtr own_node(NodePtr value) {
  if (!value->is_leaf() && value->refs.load(std::memory_order_acquire) == 1 &&
      value->array_refs.load(std::memory_order_relaxed) == 0 && value->lazy_views.load() == 0 && !value->dest)
    return value;
  detail::InputVec ins;
  ins.push_back(value);
  return detail::make_elementwise(static_cast<uint16_t>(detail::Op::Cast), value->dtype, value->shape(), std::move(ins));
}

// The new version's node: `value` as the array's shape and dtype, made for this write into
// memory laid out as `dest`.
static NodePtr version_of(NodePtr value, const Node& target, const detail::Layout& dest) {
  NodePtr v = detail::cast_node(detail::broadcast_node(value, target.shape()), target.dtype);
  value.reset();  // v may be the same node: one reference, so it may become the write itself
  value = own_node(std::move(v));
  if (value->k() == NodeKind::Library && !dest.is_contiguous()) {
    // A library call writes its result densely from the pointer it gets: the version is an
    // elementwise copy of it, which the plan scatters into any view.
    detail::InputVec ins;
    ins.push_back(value);
    value = detail::make_elementwise(static_cast<uint16_t>(detail::Op::Cast), value->dtype, value->shape(), std::move(ins));
  }
  return value;
}

// A write into device memory while the user captures the current stream into a CUDA graph
// is made now: the capture must hold it (CUDA knows nothing of pending work).
static void settle_if_captured(const NodePtr& w) {
  if (w->dest->storage->on_host()) return;
  if (detail::stream_is_capturing(detail::current_stream())) detail::realize({w});
}

Array& Array::write(NodePtr value) {
  std::lock_guard<std::recursive_mutex> lk(detail::graph_mutex());
  rebind_if_base_ready(node_, base_, named_);
  Node* cur = node_.get();
  // No other handle names this array's value, and no view of it is lazy.
  const bool sole = !base_ && cur->array_refs.load() == 1 && cur->lazy_views.load() == 0;
  // The handle's own pending write, named by no other handle: the new version replaces it
  // (`m *= b1; m += g`: one write of m, of the second value).
  if (sole && cur->dest && !cur->is_materialized()) {
    value = version_of(std::move(value), *cur, cur->dest->layout);
    value->dest = std::move(cur->dest);
    value->dest->storage->pending_write.store(value.get(), std::memory_order_release);
    detail::add_pending_write(value);
    set_node(value);
    settle_if_captured(value);
    detail::maybe_auto_eval(value);
    return *this;
  }
  // A lazy array that no other handle names and no view needs in memory: its new value is
  // just a new lazy node, one of its own: a node another handle names is that array, which
  // a later write through that handle makes memory and changes (`a.assign(b); b += 1` must
  // leave a as it was), so it is copied by an elementwise node (own_node).
  if (sole && !cur->is_leaf() && !cur->dest) {
    NodePtr v = detail::cast_node(detail::broadcast_node(value, cur->shape()), cur->dtype);
    value.reset();
    set_node(own_node(std::move(v)));
    return *this;
  }
  NodePtr target;
  {
    // writable_leaf may evaluate (the lazy target or its base, with every pending write of
    // the thread): a value that reads memory one of those writes changes must see the old
    // values, so it is a live pending root meanwhile, which that evaluation computes before
    // the write (`y = x * x; x[...] = m; y &= y[:, :-1]`: the view of the lazy y reads x).
    // Only where writable_leaf will evaluate (the walk costs as much as that evaluation's own
    // walk there, and nothing on the path of a write into memory already in hand).
    const bool evaluates = (base_ && !base_->node->is_materialized()) || !node_->is_materialized() ||
                           (node_->storage && node_->storage->pending_write.load(std::memory_order_acquire) &&
                            node_->storage->pending_write.load(std::memory_order_acquire) != node_.get());
    const Array hold = evaluates && reads_pending_write_memory(value) ? Array(value) : Array();
    target = writable_leaf(node_, base_);
  }
  if (numel(target->shape()) == 0) return *this;
  value = version_of(std::move(value), *target, target->layout);
  value->dest = std::make_shared<detail::WriteDest>(detail::WriteDest{target->storage, target->layout});
  target->storage->pending_write.store(value.get(), std::memory_order_release);
  detail::add_pending_write(value);
  set_node(value);
  settle_if_captured(value);
  detail::maybe_auto_eval(value);
  return *this;
}

Array& Array::assign(const Array& value) {
  require_defined("assign");
  if (!value.defined()) throw ValueError("assign: the value is an empty Array handle");
  // value's shape must broadcast to ours (NumPy's message from broadcast_node). Both handles
  // are rebound first (node(): a view of a lazy array moves to its base's memory) and the
  // shape copied: shape() is a reference into the node, which a rebinding frees (v5.assign(v5)
  // read a freed node's shape, fuzz seed 50566).
  const NodePtr v = value.node();
  (void)node();
  (void)detail::broadcast_node(v, Shape(shape()));
  return write(v);
}

Array& Array::assign(Array&& value) {
  require_defined("assign");
  if (!value.defined()) throw ValueError("assign: the value is an empty Array handle");
  (void)node();  // rebound first (see above)
  (void)detail::broadcast_node(value.node(), Shape(shape()));
  // A temporary's node (`out[...] = cf::matmul(a, b)`) may become the write itself: a library
  // call then writes straight into a dense target.
  if (NodePtr n = std::move(value).take_node()) return write(std::move(n));
  return write(value.node());
}

Array& Array::assign(const Scalar& value) {
  require_defined("assign");
  Scalar v = value;
  // NumPy 2 (NEP 50): a Python int out of an integer array's range raises (a[...] = -2, uint32)
  if (v.weak() && (v.kind() == Scalar::Kind::Int || v.kind() == Scalar::Kind::UInt) && is_integer(dtype()) && !v.fits(dtype()))
    throw OverflowError(fmt::format("Python integer {} out of bounds for {} (in assign)", v.str(), name(dtype())));
  if (!v.weak() && v.dtype() != dtype()) v = Scalar::typed(v, dtype());
  return write(detail::make_scalar(v, dtype(), shape()));
}

Array& Array::inplace(uint16_t op, const Operand& o) {
  require_defined("in-place operator");
  rebind_if_base_ready(node_, base_, named_);
  if (node_->is_placeholder()) throw ValueError("cannot write into a placeholder array");
  const Operand self(*this);
  // A temporary right-hand side (`m += k * g`) is the statement's own, passed on as the
  // operators pass theirs, so a product in it is contracted as in `m + k * g` (rule
  // contract-multiply-add, graph/elementwise.cpp): the in-place form keeps the functional bits.
  std::optional<Operand> temp;
  if (o.is_array() && !o.array().named_) temp.emplace(Array(o.array()), detail::Transient{});
  const Operand* args[2] = {&self, temp ? &*temp : &o};
  NodePtr value = detail::elementwise_node(static_cast<detail::Op>(op), args, 2);
  if (value->shape() != shape())
    throw ValueError(fmt::format("non-broadcastable output operand with shape {} doesn't match the broadcast "
                                 "shape {}", to_string(shape()), to_string(value->shape())));
  if (!detail::can_cast_same_kind(value->dtype, dtype()))
    throw TypeError(fmt::format("Cannot cast ufunc '{}' output from {} to {} with casting rule 'same_kind'",
                                detail::op_row(op).name, name(value->dtype), name(dtype())));
  return write(std::move(value));
}

#define CUFUSE_INPLACE_DEF(sym, op)                                                               \
  Array& Array::operator sym(const Operand& o) & { return inplace(uint16_t(detail::Op::op), o); } \
  Array& Array::operator sym(const Operand& o) && {                                               \
    if (detail::write_through_subscript(*this, uint16_t(detail::Op::op), o)) return *this;        \
    return inplace(uint16_t(detail::Op::op), o);                                                  \
  }
CUFUSE_INPLACE_DEF(+=, Add)
CUFUSE_INPLACE_DEF(-=, Subtract)
CUFUSE_INPLACE_DEF(*=, Multiply)
CUFUSE_INPLACE_DEF(/=, TrueDivide)
CUFUSE_INPLACE_DEF(%=, Remainder)
CUFUSE_INPLACE_DEF(&=, BitwiseAnd)
CUFUSE_INPLACE_DEF(|=, BitwiseOr)
CUFUSE_INPLACE_DEF(^=, BitwiseXor)
CUFUSE_INPLACE_DEF(<<=, LeftShift)
CUFUSE_INPLACE_DEF(>>=, RightShift)
#undef CUFUSE_INPLACE_DEF

}  // namespace cufuse
