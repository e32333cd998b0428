// cufuse/typed_eval.hpp: evaluating typed expressions (cufuse/typed.hpp).
//
// An expression's type fixes its op tree, so its kernels are planned once per type: each
// tuple of expression types evaluated together has a function-local static set of caches
// (src/typed/typed_call.cpp, over fuse()'s engine: src/fuse), one per *shape key*:
// which leaves name the same Array (x in (x - y) * (x - y) is one argument, read once) and
// the run-time parameters (axes given at run time). The first evaluation of a key traces the
// expression (it rebuilds itself as a lazy DAG over placeholders) and plans it, as fuse()
// does; every later one does what a fuse() replay does: match the arguments' dtypes, shapes,
// strides and alignment against the entry, bind them into the kernels' parameters (scalars
// only where their values changed), allocate, one CUDA graph launch (src/exec/run_path.cpp).
// No graph, no planning, no hashing of the tree, no lock. The per-call host work is listing
// the leaves (collect), comparing the shape key with the last one used, and typed_call.
//
// A leaf not yet in memory (a lazy Tensor) evaluates the expression as the dynamic API would
// instead, so it fuses with the pending work that makes that leaf.
#pragma once
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "cufuse/typed_tensor.hpp"

namespace cufuse::typed {

template <class... E>
struct EvalKey {
  static constexpr int NL = (E::n_leaves + ...);
  static constexpr int NP = (E::n_params + ...);
  int8_t slot[NL];
  int64_t params[NP > 0 ? NP : 1];
  bool operator==(const EvalKey& o) const {
    return std::memcmp(slot, o.slot, sizeof slot) == 0 && std::memcmp(params, o.params, sizeof(int64_t) * NP) == 0;
  }
};

}  // namespace cufuse::typed

namespace cufuse::detail {
// src/typed/typed_call.cpp: the traces of one tuple of expression types and shape key, and
// their prepared replays.
struct TypedCache;
TypedCache* new_typed_cache();  // lives as long as the process
// Evaluates through the cache (a replay of the signature's plan; the first call of a
// signature traces it). False when an array argument is not in memory: the caller then
// evaluates the expression lazily.
bool typed_call(TypedCache& c, const void* fn, TraceThunk thunk, const FuseArg* args, int nargs, Array* out,
                int nout);
}  // namespace cufuse::detail

namespace cufuse::typed {

// The cache of one tuple of expression types, by shape key. The last one used is found with
// one atomic load and a compare of the key; others under a lock.
template <class... E>
detail::TypedCache& cache_for(const EvalKey<E...>& key) {
  struct Slot {
    EvalKey<E...> key;
    detail::TypedCache* cache;
  };
  static std::atomic<Slot*> last{nullptr};
  Slot* s = last.load(std::memory_order_acquire);
  if (s && s->key == key) [[likely]]
    return *s->cache;
  static std::mutex mu;
  // Never shrinks (`last` may point at any) and never destroyed: the caches live as long as the
  // process, and a static vector's destructor at exit would leave `last` dangling and drop the
  // only pointer to each cache (LeakSanitizer's "direct leak" from new_typed_cache).
  static auto& slots = *new std::vector<std::unique_ptr<Slot>>;
  std::lock_guard<std::mutex> lk(mu);
  s = nullptr;
  for (auto& x : slots)
    if (x->key == key) s = x.get();
  if (!s) {
    slots.push_back(std::make_unique<Slot>(Slot{key, detail::new_typed_cache()}));
    s = slots.back().get();
  }
  last.store(s, std::memory_order_release);
  return *s->cache;
}

// What a trace runs: the expressions rebuilt over the call's arguments.
template <class... E>
struct EvalCtx {
  std::tuple<const E*...> e;
  const int8_t* slot;
  static void thunk(const void* fn, const detail::FuseArg* args, std::vector<Array>& out) {
    const EvalCtx& c = *static_cast<const EvalCtx*>(fn);
    Build b{args, c.slot};
    std::apply([&](const E*... e) { (out.push_back(e->build(b)), ...); }, c.e);
  }
};

// Evaluates expressions together (one plan: results of one iteration space share a kernel).
template <class... E>
void eval_into(Array* out, const E&... e) {
  constexpr int NL = EvalKey<E...>::NL;
  static_assert(NL <= 127, "cufuse typed: an expression of more than 127 leaves");
  ArgStorage<NL> storage;
  detail::FuseArg* args = storage.get();
  EvalKey<E...> key;
  Collect k{args, key.slot, key.params};
  (e.collect(k), ...);
  const EvalCtx<E...> ctx{{&e...}, key.slot};
  if (detail::typed_call(cache_for<E...>(key), &ctx, &EvalCtx<E...>::thunk, args, k.nargs, out,
                         static_cast<int>(sizeof...(E)))) [[likely]]
    return;
  // pending work makes a leaf: the dynamic path, which fuses with it
  Build b{args, key.slot};
  int i = 0;
  ((out[i++] = e.build(b)), ...);
  eval_all(std::vector<Array>(out, out + sizeof...(E)));
}

template <class E>
Tensor<typename E::value_type, E::rank> eval_one(const E& e) {
  Array out[1];
  eval_into(out, e);
  return Tensor<typename E::value_type, E::rank>(std::move(out[0]), 0);
}

// ---- the members that evaluate
template <class Op, class... C>
Array Node<Op, C...>::lazy() const {
  ArgStorage<n_leaves> storage;
  detail::FuseArg* args = storage.get();
  int8_t slot[n_leaves];
  int64_t params[n_params > 0 ? n_params : 1];
  Collect k{args, slot, params};
  collect(k);
  Build b{args, slot};
  return build(b);
}
template <class Op, class... C>
Tensor<typename Node<Op, C...>::value_type, Node<Op, C...>::rank> Node<Op, C...>::eval() const {
  return eval_one(*this);
}
template <class Op, class... C>
template <class T>
T Node<Op, C...>::item() const {
  return eval_one(*this).array().template item<T>();
}
template <class Op, class... C>
std::vector<typename Node<Op, C...>::value_type> Node<Op, C...>::to_host() const {
  return eval_one(*this).to_host();
}

template <class T, int N>
template <class E>
  requires Expr<E>
Tensor<T, N>::Tensor(const E& e) {
  static_assert(assign_check<Tensor, E::dtype, E::rank>::ok);
  Array out[1];
  eval_into(out, e);
  a_ = std::move(out[0]);
}

}  // namespace cufuse::typed

namespace cufuse {

// cf::eval(e1, e2, ...): the expressions evaluated together, as Tensors (one: a Tensor;
// several: a std::tuple). Results of one iteration space come out of one kernel. (Two
// overloads: the first is more constrained than cufuse::eval(A&...) of arrays.)
namespace typed {
template <class... E>
auto eval_tensors(const E&... e) {
  Array out[sizeof...(E)];
  eval_into(out, e...);
  if constexpr (sizeof...(E) == 1) {
    using X = std::tuple_element_t<0, std::tuple<E...>>;
    return Tensor<typename X::value_type, X::rank>(std::move(out[0]), 0);
  } else {
    size_t i = 0;
    return std::tuple<Tensor<typename E::value_type, E::rank>...>{
        Tensor<typename E::value_type, E::rank>(std::move(out[i++]), 0)...};
  }
}
}  // namespace typed
template <class... E>
  requires(sizeof...(E) > 0 && (typed::Expr<std::remove_cvref_t<E>> && ...))
auto eval(E&... e) {
  return typed::eval_tensors(static_cast<const std::remove_cvref_t<E>&>(e)...);
}
template <class... E>
  requires(sizeof...(E) > 0 && (typed::Expr<E> && ...))
auto eval(const E&... e) {
  return typed::eval_tensors(e...);
}

}  // namespace cufuse
