// src/reference/evaluator.cpp: reference_evaluate() — walks the DAG below the roots once
// (iteratively, so deep chains do not overflow the stack), evaluates each node once in
// dependency order, and frees an intermediate result as soon as its last consumer in this
// evaluation has run. Holds graph_mutex() throughout, so realization cannot change a node
// mid-walk. The per-kind work lives in reference/eval_*.cpp.
#include "reference/evaluator.hpp"

#include <bit>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/user_kernel.hpp"
#include "graph/gather.hpp"
#include "reference/eval_nodes.hpp"
#include "reference/host_data.hpp"
#include "codegen/host_helpers.hpp"

namespace cufuse::detail {

static_assert(std::endian::native == std::endian::little, "the reference evaluator reads little-endian storage");

// ------------------------------------------------------------ HostArray
namespace {
void check_index(const HostArray& a, int64_t i) {
  if (i < 0 || i >= a.size())
    throw IndexError(fmt::format("index {} is out of bounds for a host array of {} elements", i, a.size()));
}
// f(value) with element i in its compute type (float for the half types, bool as bool).
template <class F>
decltype(auto) with_element(const HostArray& a, int64_t i, F&& f) {
  check_index(a, i);
  return ref::with_storage_type(a.dtype, [&](auto ts) -> decltype(auto) {
    using S = typename decltype(ts)::type;
    S s;
    std::memcpy(&s, a.bytes.data() + i * sizeof(S), sizeof(S));
    if constexpr (std::is_same_v<S, uint16_t>) {
      if (is_half(a.dtype)) return f(ref::half_bits_to_float(a.dtype, s));
      return f(s);
    } else if constexpr (std::is_same_v<S, uint8_t>) {
      if (a.dtype == DType::Bool) return f(s != 0);
      return f(s);
    } else {
      return f(s);
    }
  });
}
}  // namespace

double HostArray::get_double(int64_t i) const {
  return with_element(*this, i, [](auto v) {
    if constexpr (ref::is_cplx_v<decltype(v)>) return static_cast<double>(v.re);  // the real part
    else return static_cast<double>(v);
  });
}
int64_t HostArray::get_int64(int64_t i) const {
  return with_element(*this, i, [](auto v) -> int64_t { return ref_kern::cf_cast<long long>(v); });
}
uint64_t HostArray::get_uint64(int64_t i) const {
  return with_element(*this, i, [](auto v) -> uint64_t {
    using V = decltype(v);
    if constexpr (std::is_floating_point_v<V> || ref::is_cplx_v<V>) return ref_kern::cf_cast<unsigned long long>(v);
    else if constexpr (std::is_signed_v<V>) return static_cast<uint64_t>(static_cast<int64_t>(v));
    else return static_cast<uint64_t>(v);
  });
}

// ------------------------------------------------------------ the walk
namespace {

struct Slot {
  std::shared_ptr<HostArray> value;
  int consumers = 0;  // uses by nodes of this evaluation not yet evaluated
  bool root = false;
};

HostArray evaluate_one(const Node& n, const HostArray* const* inputs) {
  if (is_user_node(n)) throw_user_node_on_host(n);  // user CUDA cannot run here (codegen/user_kernel.hpp)
  if (is_gather(n)) return ref::eval_gather(n, inputs);
  if (is_scatter(n)) return ref::eval_scatter(n, inputs);
  switch (n.k()) {
    case NodeKind::Buffer: return ref::eval_buffer(n);
    case NodeKind::Scalar: return ref::eval_scalar(n);
    case NodeKind::Generator: return ref::eval_generator(n);
    case NodeKind::Elementwise: return ref::eval_elementwise(n, inputs);
    case NodeKind::View: return ref::eval_view(n, *inputs[0]);
    case NodeKind::Reduce: return ref::eval_reduce(n, *inputs[0]);
    case NodeKind::Library: return ref::eval_library(n, inputs);
  }
  throw InternalError("reference evaluator: unknown node kind");
}

// Inputs the node reads (none for a leaf: a realized node keeps no inputs it would read).
int input_count(const Node& n) {
  auto k = n.k();
  if (k == NodeKind::Buffer || k == NodeKind::Scalar || k == NodeKind::Generator) return 0;
  return static_cast<int>(n.inputs.size());
}

}  // namespace

std::vector<HostArray> reference_evaluate(const std::vector<NodePtr>& roots) {
  std::lock_guard<std::recursive_mutex> lock(graph_mutex());

  // Post-order of the nodes below the roots, each once; consumers counted per use.
  std::unordered_map<const Node*, Slot> slots;
  std::vector<const Node*> order;
  std::vector<std::pair<const Node*, int>> stack;  // node, next input to visit
  for (const auto& r : roots) {
    if (!r) throw ValueError("reference_evaluate: a root is null");
    auto [it, fresh] = slots.try_emplace(r.get());
    it->second.root = true;
    if (!fresh) continue;
    stack.emplace_back(r.get(), 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < input_count(*node)) {
        const Node* in = node->inputs[next++].get();
        if (!in) throw InternalError(fmt::format("reference evaluator: a {} node has a null input", kind_name(node->k())));
        auto [jt, first] = slots.try_emplace(in);
        jt->second.consumers++;
        if (first) stack.emplace_back(in, 0);
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  }

  for (const Node* n : order) {
    const HostArray* ins[8] = {};
    const int nin = input_count(*n);
    std::vector<const HostArray*> many;
    const HostArray* const* inputs = ins;
    if (nin > 8) {
      many.resize(static_cast<size_t>(nin));
      inputs = many.data();
    }
    for (int i = 0; i < nin; ++i) (nin > 8 ? many[i] : ins[i]) = slots.at(n->inputs[i].get()).value.get();
    auto value = std::make_shared<HostArray>(evaluate_one(*n, inputs));
    if (value->dtype != n->dtype || value->shape != n->shape())
      throw InternalError(fmt::format("reference evaluator: a {} node of {} {} evaluated to {} {}", kind_name(n->k()),
                                      name(n->dtype), to_string(n->shape()), name(value->dtype),
                                      to_string(value->shape)));
    slots.at(n).value = std::move(value);
    for (int i = 0; i < nin; ++i) {  // an input no later node reads is freed now
      Slot& s = slots.at(n->inputs[i].get());
      if (--s.consumers == 0 && !s.root) s.value.reset();
    }
  }

  std::vector<HostArray> out;
  out.reserve(roots.size());
  for (const auto& r : roots) {
    Slot& s = slots.at(r.get());
    // The last mention of a root takes its array; earlier duplicates copy it.
    bool later = false;
    for (size_t j = out.size() + 1; j < roots.size(); ++j) later |= roots[j].get() == r.get();
    if (later) out.push_back(*s.value);
    else out.push_back(std::move(*s.value));
  }
  return out;
}

HostArray reference_evaluate(const NodePtr& root) { return std::move(reference_evaluate(std::vector<NodePtr>{root})[0]); }

}  // namespace cufuse::detail
