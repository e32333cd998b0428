// src/core/node.hpp: the node of the lazy expression DAG and the facts every stage reads.
//
// A node is made once and, apart from realization, never changes: op, dtype, shape and
// inputs are fixed, and its structural hash is computed when it is made. Realization
// (src/exec) turns an evaluated node into a Buffer leaf in place (under graph_mutex()),
// dropping its inputs so the memory they pin goes away.
//
// Leaves: Buffer (device or host memory with a strided layout; no storage = a placeholder
// for tracing and planning), Scalar (a kernel parameter), Generator (arange, linspace,
// counter-based random: a value computed from the element's index, so they fuse).
// Inner nodes: Elementwise (an op of src/core/op_table), View (a general index remap for
// what strides cannot express), Reduce and Library (issue 3 and 4 extensions).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include <boost/smart_ptr/intrusive_ptr.hpp>

#include "cufuse/enum_names.hpp"
#include "cufuse/dtype.hpp"
#include "cufuse/scalar.hpp"
#include "cufuse/shape.hpp"
#include "core/node_attrs.hpp"

namespace cufuse::detail {

struct Storage;  // src/runtime/storage.hpp
struct Node;
// Counted in the node (refs below): no control block, and a registry (core/registry.cpp)
// can take a reference to a live node from a plain pointer, which a weak_ptr per node made
// cost three atomic operations per op built.
using NodePtr = boost::intrusive_ptr<Node>;
using InputVec = SmallVec<NodePtr, 3>;

#define CUFUSE_NODE_KINDS(X)    \
  X(Buffer, "buffer")           \
  X(Scalar, "scalar")           \
  X(Generator, "generator")     \
  X(Elementwise, "elementwise") \
  X(View, "view")               \
  X(Reduce, "reduce")           \
  X(Library, "library")
enum class NodeKind : uint8_t { CUFUSE_NODE_KINDS(CUFUSE_ENUMERATOR) };
inline const char* kind_name(NodeKind k) { return CUFUSE_ENUM_NAME(CUFUSE_NODE_KINDS, k); }

// A strided map from a multi-index in `shape` to a linear position:
//   pos = offset + sum(idx[d] * strides[d]).
// For a Buffer leaf, pos is an element offset into its storage. For a Generator, pos is
// the logical element number the generator's formula takes. For a View node, pos is a
// row-major linear index into its input's logical shape.
struct Layout {
  Shape shape;
  Strides strides;
  int64_t offset = 0;

  bool is_contiguous() const;  // row-major dense (size-1 dims ignored)
};
Layout contiguous_layout(const Shape& s);

// Where a pending in-place write lands: the memory of the array written (a whole array or a
// view of it). A node with a WriteDest is that array's new version: evaluating it writes its
// value there (the plan's target for it), and it becomes a Buffer leaf on that memory.
struct WriteDest {
  std::shared_ptr<Storage> storage;
  Layout layout;
};

// Elementwise and Reduce nodes whose op is at or past kUserOpBase run user code: the id of a
// user op of codegen/user_kernel.hpp's registry (ElementwiseKernel, ReductionKernel).
inline constexpr uint16_t kUserOpBase = 0x8000;
inline bool is_user_op(uint16_t op) { return op >= kUserOpBase; }

#define CUFUSE_GEN_KINDS(X)           \
  X(Arange, "arange")                 \
  X(Linspace, "linspace")             \
  X(RandomUniform, "uniform")         \
  X(RandomNormal, "normal")           \
  X(RandomIntegers, "integers")       \
  X(RandomExponential, "exponential") \
  X(RandomPoisson, "poisson")         \
  X(RandomPermutation, "permutation")
enum class GenKind : uint8_t { CUFUSE_GEN_KINDS(CUFUSE_ENUMERATOR) };
inline const char* gen_name(GenKind g) { return CUFUSE_ENUM_NAME(CUFUSE_GEN_KINDS, g); }

// A generator's value at logical element number pos (pos = layout.offset + Σ idx·strides),
// computed with the helpers of codegen/device_helpers.inc, in the dtype's compute type T
// (float for float16/bfloat16, rounded to the dtype afterwards):
//   Arange        T = integer or bool: cf_arange<T>(pos, T(istart), T(istep_second))
//                 T = floating:        cf_arange<T>(pos, T(start),  T(step))
//                 (start/istart is the first value and step/istep_second the SECOND value,
//                 both already converted to the dtype, as NumPy's arange fill takes them)
//   Linspace      v = cf_linspace(pos, start, step, stop, last) in double, where
//                 last = (endpoint && num > 1) ? num - 1 : -1; integer dtypes take
//                 floor(v) then convert (NumPy floors), float dtypes convert v.
//   RandomUniform cf_random_uniform<T>(seed, pos + counter, T(start), T(stop))   [low, high)
//   RandomNormal  cf_random_normal<T>(seed, pos + counter, T(start), T(stop))    mean, stddev
//   RandomIntegers    cf_random_integers<T>(seed, pos + counter, istart, uint64(istep_second))
//                     [low, low + range) with low = istart, range = istep_second (0: 2^64)
//   RandomExponential cf_random_exponential<T>(seed, pos + counter, T(start))  scale
//   RandomPoisson     cf_random_poisson<T>(seed, pos + counter, start)         lam (integer T)
//   RandomPermutation cf_feistel(pos, num, cf_mix64(seed ^ cf_mix64(counter)))  n = num (int64)
// Uniform, normal and exponential take floating dtypes only; integers any integer or bool
// dtype; poisson integer dtypes; permutation int64.
struct GenParams {
  double start = 0, step = 0, stop = 0;
  int64_t istart = 0, istep_second = 0;
  int64_t num = 0;
  bool endpoint = true;
  uint64_t seed = 0, counter = 0;
};

// The distinct leaf storages an unrealized subgraph holds (the first few exactly, the rest
// summed), to bound the memory a growing lazy graph keeps alive.
struct PinSet {
  const void* ids[4] = {};
  uint64_t bytes[4] = {};
  uint8_t n = 0;
  uint64_t extra = 0;
  void add(const void* id, uint64_t b);
  void merge(const PinSet& o);
  uint64_t total() const;
};

struct Node {
  // First, beside kind: one cache line for what every reference and release touches.
  std::atomic<int32_t> refs{0};      // NodePtr references (intrusive_ptr_add_ref/release)
  std::atomic<bool> registered{false};  // in the pending-roots registry; changed only under
                                        // its lock (core/registry.cpp)
  int32_t reg_slot = -1;             // its place there (under the registry's lock)
  std::atomic<NodeKind> kind;  // changes only at realization (-> Buffer), under graph_mutex()
  DType dtype;
  uint16_t op = 0;             // Elementwise: op id of src/core/op_table; Generator: GenKind
  Layout layout;               // shape always; strides/offset for Buffer, Generator, View
  InputVec inputs;
  std::shared_ptr<Storage> storage;  // Buffer leaf; null for a placeholder
  Scalar scalar;                     // Scalar leaf; also the weak-ness of a C++ scalar operand
  GenParams gen;
  NodeAttrs attrs;                   // Reduce / Library attributes (core/node_attrs.hpp)
  std::shared_ptr<WriteDest> dest;   // a pending in-place write (see WriteDest); null otherwise
  uint64_t hash = 0;                 // structural: kind, op, dtype, shape, layout class, inputs
  int32_t pending = 0;               // at least the unrealized nodes below and including this one
                                     // (an upper bound: see finish_node)
  uint32_t seq_lo = 0, seq_hi = 0;   // the oldest and newest creation numbers among them
  PinSet pins;                       // leaf memory the unrealized subgraph keeps alive
  bool reads_placeholder = false;    // some leaf below is a placeholder (cannot be evaluated)
  std::atomic<int32_t> array_refs{0};// Array handles on this node (roots of pending work)
  std::atomic<int32_t> lazy_views{0};// views of this lazy node that Array handles hold (LazyBase)
  int32_t placeholder_slot = -1;     // for fuse() tracing: which argument this placeholder is
  bool read_only = false;            // a Buffer leaf seen through broadcast_to (NumPy: read-only)
  bool varies = false;               // a Scalar leaf bound to a fuse() argument: no value-dependent
                                     // kernel form (src/plan/scalar_forms.hpp)
  int16_t device = -2;               // device of the memory the node reads (-1 host, -2 none):
                                     // for the mixed-device check of core/node_device.hpp

  // Made with its first reference counted (new_node): a node nobody else can see yet needs
  // no atomic read-modify-write for it.
  explicit Node(NodeKind k) : refs(1), kind(k) {}
  ~Node();  // releases long input chains without recursing (see node.cpp)
  const Shape& shape() const { return layout.shape; }
  int ndim() const { return layout.shape.ndim(); }
  int64_t numel() const { return cufuse::numel(layout.shape); }
  NodeKind k() const { return kind.load(std::memory_order_acquire); }
  bool is_leaf() const {
    auto kk = k();
    return kk == NodeKind::Buffer || kk == NodeKind::Scalar || kk == NodeKind::Generator;
  }
  bool is_materialized() const { return k() == NodeKind::Buffer && storage != nullptr; }
  bool is_placeholder() const { return k() == NodeKind::Buffer && storage == nullptr; }
};

// Unregisters (core/registry.cpp), destroys and gives the block back to the thread's pool.
void destroy_node(Node* n) noexcept;
// For the only reference to a registered node: under the registry's lock, where no other
// reference can be taken, destroys the node if that is still so (true) or does nothing.
bool release_sole_registered(Node* n) noexcept;
inline void intrusive_ptr_add_ref(Node* n) noexcept { n->refs.fetch_add(1, std::memory_order_relaxed); }
inline void intrusive_ptr_release(Node* n) noexcept {
  // The only reference (refs read first: its acquire makes a registration by the thread that
  // dropped the other references visible). To a node no registry can find, nobody can take
  // another, so no atomic read-modify-write (shared_ptr's fast path does the same).
  if (n->refs.load(std::memory_order_acquire) == 1) {
    if (!n->registered.load(std::memory_order_relaxed)) {
      destroy_node(n);
      return;
    }
    if (release_sole_registered(n)) return;
  }
  if (n->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_node(n);
}

// The one lock for node mutation (realization) and evaluation. Graph building takes it only
// where it walks nodes that realization may change (pushing views through lazy nodes).
std::recursive_mutex& graph_mutex();

// A new node, from a per-thread free list of node blocks (building an expression makes
// one node per op; malloc/free would be a fifth of the host time of a small expression).
NodePtr new_node(NodeKind k);

// ------------------------------------------------------------- builders
NodePtr make_buffer(DType t, Layout layout, std::shared_ptr<Storage> storage);
NodePtr make_placeholder(DType t, const Shape& shape, int slot = -1);
NodePtr make_scalar(const Scalar& value, DType t, const Shape& shape = {});  // held as dtype t
// Two scalars equal in kind, weak-ness, dtype and bits (core/dtype.cpp): one Scalar leaf serves both.
bool same_scalar(const Scalar& a, const Scalar& b);
NodePtr make_generator(GenKind g, DType t, Layout layout, const GenParams& p);
NodePtr make_elementwise(uint16_t op, DType t, const Shape& shape, InputVec inputs);
// make_elementwise in two steps, for a builder that puts the inputs in place (no InputVec
// moved through: a fifth of an op's build time): push them into `inputs`, then finish_node.
NodePtr new_elementwise(uint16_t op, DType t, const Shape& shape);
NodePtr make_view(NodePtr input, Layout layout);  // general remap, see Layout
// Fills hash, pending (with seq_lo/hi), pins and reads_placeholder from the inputs; called by
// every builder.
// (These describe the node while unrealized; realization does not touch them.)
void finish_node(Node& n);

// Bytes of the storage behind a Buffer leaf (0 for a placeholder).
uint64_t storage_bytes(const Node& n);

// hash helpers
inline uint64_t hash_mix(uint64_t h, uint64_t v) {
  v *= 0x9E3779B97F4A7C15ull;
  v ^= v >> 29;
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h;
}

}  // namespace cufuse::detail
