// cufuse/dist.hpp: arrays sharded over a mesh of devices (issue 32), in SPMD style: every
// shard is an ordinary lazy cufuse::Array on its device, so each shard's work fuses exactly
// as on one GPU; the collectives (NCCL's allreduce, allgather, reducescatter, alltoall,
// broadcast) come between those per-shard plans, chosen by the operands' shardings.
//
//   dist::init();                                         // all visible GPUs, one process
//   dist::Mesh mesh({2, 4}, {"node", "gpu"});             // 8 devices
//   auto x = dist::shard(a, mesh, {"gpu", dist::none});   // rows over "gpu", replicated over "node"
//   auto s = dist::sum(dist::exp(x) * 2, 0);              // one fused kernel per shard; a partial sum
//   std::cout << dist::plan_dump(s);                      // ... and one allreduce over "gpu"
//   dist::eval(s);                                        // the allreduce runs here
//   Array whole = dist::gather(s);                        // (a partial s: combined on this device)
//
// Worlds. init() takes the visible GPUs (NCCL, one communicator per device); init(World::Host,
// n) simulates n devices on the host reference backend (each shard a host array, the
// collectives done on the host: tests and CI); init(World::Plan, n) has no memory at all
// (shards are placeholders; for plan dumps and the CLI). Under mpirun, init() (seeing
// OMPI_COMM_WORLD_SIZE) or init(World::Mpi) starts one process per GPU: each rank drives the
// GPU of its local rank and holds its own shard (the others' are placeholders), NCCL's id is
// broadcast over MPI; it needs a build with MPI, else it is a NotSupportedError.
//
// Shards are even: a dimension sharded over a mesh axis of size k must be divisible by k,
// else a ValueError naming the dimension (NCCL's collectives take equal counts; NumPy's
// array_split rule is not used).
//
// When collectives run: a reduction over a sharded dimension is a *partial* result, lazy like
// any array, which becomes whole with an allreduce (or a reducescatter, when the consumer
// wants it sharded) only when something needs it whole (dist::eval, a reshard, an op that is
// not the same reduction); gather combines the partials on its own device instead (a peer
// copy each, no collective in a single process). A reshard (allgather, alltoall) that an op needs is a materialization point
// like a library call: the shards' pending work before it is evaluated when the op is built.
// plan_dump lists each step: per-shard kernels, then the collective with its bytes.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cufuse/array.hpp"
#include "cufuse/dtype.hpp"
#include "cufuse/error.hpp"
#include "cufuse/scalar.hpp"
#include "cufuse/shape.hpp"

namespace cufuse::dist {

// ------------------------------------------------------------------ the world
enum class World { Gpus, Host, Plan, Mpi };
// Gpus: the visible GPUs (devices 0 ..), `devices` of them when > 0. Host / Plan: `devices`
// simulated ones (> 0). Mpi: one process per GPU under mpirun (needs MPI in the build).
// A second init without finalize is a ValueError.
void init(World world = World::Gpus, int devices = 0);
void finalize();            // ends the world (NCCL communicators destroyed); safe to repeat
bool initialized();
World world();
int rank();                 // this process's rank (0 in a single process)
int world_size();           // devices in the world (over all processes)
// (The world is process state of the runtime context, StateSlot::DistWorld.)

// Failures. A collective that does not complete within CUFUSE_DIST_TIMEOUT seconds (a rank
// died or hangs), or that fails, raises a CollectiveError naming the collective and its ranks
// on every surviving rank, instead of hanging; the GPU worlds' communicators are aborted
// (ncclCommAbort) and the world is broken: every later collective raises at once, naming the
// first failure, until dist::finalize() (then init again).
class CollectiveError : public CudaError {  // a CudaError (ErrorKind::Cuda): NCCL is CUDA's library
 public:
  CollectiveError(const std::string& what, std::string collective, std::vector<int> ranks, bool timed_out);
  const std::string& collective() const noexcept { return collective_; }  // "allreduce over 'gpu'"
  const std::vector<int>& ranks() const noexcept { return ranks_; }       // the group's mesh devices
  bool timed_out() const noexcept { return timed_out_; }

 private:
  std::string collective_;
  std::vector<int> ranks_;
  bool timed_out_;
};
// The host world simulates failures (tests): from the `after_collectives`-th collective on
// that includes `device` (0: the next one), Dead: it never arrives (the others wait
// CUFUSE_DIST_TIMEOUT, then raise); Error: it reports an error at once. ValueError in other worlds.
enum class Failure { Dead, Error };
struct SimulatedFailure {
  int device = 0;
  Failure kind = Failure::Dead;
  int after = 0;
};
void simulate_failure(int device, Failure kind, int after_collectives = 0);

// ------------------------------------------------------------------ mesh and sharding
// Axis sizes and names over the world's first size() devices, row-major (the last axis
// varies fastest). ValueError: a mesh larger than the world, names repeated or empty, a size < 1.
class Mesh {
 public:
  Mesh(std::vector<int> sizes, std::vector<std::string> names);
  const std::vector<int>& sizes() const { return sizes_; }
  const std::vector<std::string>& names() const { return names_; }
  int ndim() const { return static_cast<int>(sizes_.size()); }
  int size() const;                           // devices in the mesh
  int axis(std::string_view name) const;      // index of a named axis; ValueError naming the known ones
  int axis_size(std::string_view name) const { return sizes_[axis(name)]; }
  std::vector<int> coords(int device) const;  // mesh coordinates of the mesh's device number
  std::string str() const;                    // "Mesh(node=2, gpu=4)"
  bool operator==(const Mesh& o) const { return sizes_ == o.sizes_ && names_ == o.names_; }

 private:
  std::vector<int> sizes_;
  std::vector<std::string> names_;
};

inline constexpr std::string_view none{};  // a replicated dimension in a Sharding

// Per dimension, the mesh axis it is split over, or none (replicated), like JAX's
// PartitionSpec: Sharding{"gpu", dist::none}. A mesh axis names one dimension at most.
class Sharding {
 public:
  Sharding() = default;
  Sharding(std::initializer_list<std::string_view> dims);  // "none" is also replicated
  explicit Sharding(std::vector<std::string> dims);
  static Sharding replicated(int ndim) { return Sharding(std::vector<std::string>(static_cast<size_t>(ndim))); }
  static Sharding parse(std::string_view text);  // "gpu,none"
  int ndim() const { return static_cast<int>(dims_.size()); }
  const std::string& operator[](int d) const { return dims_[static_cast<size_t>(d)]; }
  bool sharded(int d) const { return !dims_[static_cast<size_t>(d)].empty(); }
  bool is_replicated() const;
  const std::vector<std::string>& dims() const { return dims_; }
  std::string str() const;  // "(gpu, none)"
  bool operator==(const Sharding& o) const { return dims_ == o.dims_; }

 private:
  std::vector<std::string> dims_;  // "" = replicated
};

// ------------------------------------------------------------------ sharded arrays
enum class PartialOp { Sum, Prod, Max, Min };
const char* partial_op_name(PartialOp op);  // "sum", "prod", "max", "min"

namespace detail {
struct DArrayState;
}
class DSubscript;

// A global shape and dtype, a sharding over a mesh, and one local lazy Array per device of
// the mesh (devices that share a slice hold equal replicas). A partial result's shards hold
// terms still to be combined (allreduce) over the mesh axes partial_axes().
class DArray {
 public:
  DArray() = default;
  explicit DArray(std::shared_ptr<const detail::DArrayState> s) : s_(std::move(s)) {}
  bool defined() const { return s_ != nullptr; }
  const Mesh& mesh() const;
  const Sharding& sharding() const;
  const Shape& shape() const;
  DType dtype() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  Shape local_shape() const;                      // each shard's shape
  const std::vector<Array>& shards() const;       // by mesh device number
  const Array& shard(int device) const { return shards()[static_cast<size_t>(device)]; }
  bool is_partial() const;
  std::vector<std::string> partial_axes() const;  // mesh axes still to combine over
  std::optional<PartialOp> partial_op() const;    // how (none when whole)
  std::string str() const;  // "DArray(float32, (8, 4), (gpu, none) over Mesh(gpu=2))"
  const std::shared_ptr<const detail::DArrayState>& state() const { return s_; }

  // ---- views (NumPy's basic indexing: integers, slices, newaxis, ellipsis; integer or bool
  // arrays are a NotSupportedError). Along a replicated dimension each shard indexes itself
  // and the sharding stays; along a sharded one a slice that falls shard by shard on the
  // shards (x[::2], x[1::2], x[:]) stays local, any other (x[3], x[2:7], x[::-1]) gathers the
  // selected elements only (one allgather of each device's part) and keeps the dimension
  // sharded where its new size divides, else replicated. A local view shares the shards'
  // memory as NumPy's views do; one that needed a collective is a copy.
  DArray index(const std::vector<Index>& idx) const;
  DSubscript operator[](std::initializer_list<Index> idx);
  DArray operator[](std::initializer_list<Index> idx) const { return index(std::vector<Index>(idx)); }
  // Shard by shard where each sharded dimension leads its group of the new shape with a size
  // its axis divides ((8, 6) rows -> (48,), (8, 6) rows -> (4, 2, 6)); else the dimensions in
  // the way are gathered first (named in the plan). One -1 allowed.
  DArray reshape(const Shape& shape) const;
  DArray transpose(const Axes& axes = {}) const;  // the sharding permuted with the axes; local

  // ---- writes, NumPy's in-place semantics: the result is cast to this array's dtype (unsafe
  // casting), the value broadcasts to this shape, the sharding stays; each shard writes its
  // part (a DArray value of another sharding is resharded to this one first).
  DArray& operator+=(const DArray& v);
  DArray& operator-=(const DArray& v);
  DArray& operator*=(const DArray& v);
  DArray& operator/=(const DArray& v);
  DArray& operator+=(const Scalar& v);
  DArray& operator-=(const Scalar& v);
  DArray& operator*=(const Scalar& v);
  DArray& operator/=(const Scalar& v);
  // d[idx] = v (basic indexing as index()): each device writes the part of the selection its
  // shard holds, the value's matching part (a replicated Array or scalar, or a DArray).
  DArray& set(const std::vector<Index>& idx, const DArray& v);
  DArray& set(const std::vector<Index>& idx, const Array& v);
  DArray& set(const std::vector<Index>& idx, const Scalar& v);

 private:
  std::shared_ptr<const detail::DArrayState> s_;
};

// d[{idx...}] on a named DArray: reads as index() (converts to the view), writes into d:
// `d[{0, _}] = e; d[{_, cf::slice(1, 3)}] += 1;`. Name the type to take the view
// (`dist::DArray v = d[{0}];`): `auto` keeps the subscript.
class DSubscript {
 public:
  DSubscript(DArray& d, std::vector<Index> idx) : d_(d), idx_(std::move(idx)) {}
  operator DArray() const { return d_.index(idx_); }  // NOLINT: reads as the view
  DArray& operator=(const DArray& v) { return d_.set(idx_, v); }
  DArray& operator=(const Array& v) { return d_.set(idx_, v); }
  DArray& operator=(const Scalar& v) { return d_.set(idx_, v); }
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  DArray& operator=(T v) { return d_.set(idx_, Scalar(v)); }
  DArray& operator+=(const DArray& v);
  DArray& operator-=(const DArray& v);
  DArray& operator*=(const DArray& v);
  DArray& operator/=(const DArray& v);
  DArray& operator+=(const Scalar& v);
  DArray& operator-=(const Scalar& v);
  DArray& operator*=(const Scalar& v);
  DArray& operator/=(const Scalar& v);

 private:
  DArray& d_;
  std::vector<Index> idx_;
};

// Distributes a (its slice to each device; a copy per device on GPUs). ValueError: a spec of
// another rank, an unknown or repeated axis, a dimension not divisible by its axis.
DArray shard(const Array& a, const Mesh& mesh, const Sharding& spec);
// The same values with another sharding (allgather, alltoall, slicing; a partial one is
// reduced by allreduce or reducescatter). Named in plan_dump.
DArray reshard(const DArray& d, const Sharding& spec);
// The whole array on the current device (host under the reference backend): the shards are
// copied and joined; a partial one's partials are copied here and combined by its op (under
// mpirun, where other ranks hold them, allreduced first). The DArray stays as it was.
Array gather(const DArray& d);
template <class T>
std::vector<T> to_host(const DArray& d) {
  return gather(d).to_host<T>();
}
// Makes the shards' pending work (and a partial result's allreduce) happen now.
DArray& eval(DArray& d);

// Creation, born distributed: each shard made on its device.
DArray zeros(const Shape& shape, const Mesh& mesh, const Sharding& spec, DType dtype = f64);
DArray ones(const Shape& shape, const Mesh& mesh, const Sharding& spec, DType dtype = f64);
DArray full(const Shape& shape, const Scalar& value, const Mesh& mesh, const Sharding& spec,
            std::optional<DType> dtype = std::nullopt);
// arange(n) (1-D): each shard its part of the global sequence.
DArray arange(int64_t n, const Mesh& mesh, const Sharding& spec, DType dtype = i64);
// Philox generators are counter-based on the element number: each shard is the global
// generator read at its slice, so the values equal random::uniform(shape, dtype, seed)'s.
DArray uniform(const Shape& shape, uint64_t seed, const Mesh& mesh, const Sharding& spec, DType dtype = f64,
               double low = 0.0, double high = 1.0);
DArray normal(const Shape& shape, uint64_t seed, const Mesh& mesh, const Sharding& spec, DType dtype = f64,
              double mean = 0.0, double stddev = 1.0);

// ------------------------------------------------------------------ operations
// An elementwise function of the operands' local arrays, applied shard by shard: the result
// takes the operands' (broadcast) shape and the sharding that costs the least to reach; an
// operand of another sharding is resharded first. f must be elementwise (NumPy broadcasting).
using LocalFn = std::function<Array(const std::vector<Array>&)>;
DArray map(const LocalFn& f, const std::vector<DArray>& operands, std::string_view what = "map");

// The operations take their DArray operands by value and drop them once the result is built:
// a temporary's shards (`dist::sum((X - Y) * (X - Y))`) are then named by no handle while the
// statement evaluates, so each shard's work fuses into one kernel instead of keeping the
// temporaries in memory (as cufuse/reduce.hpp's reductions; a named operand is unaffected).
DArray operator+(DArray a, DArray b);
DArray operator-(DArray a, DArray b);
DArray operator*(DArray a, DArray b);
DArray operator/(DArray a, DArray b);
DArray operator+(DArray a, const Scalar& s);
DArray operator-(DArray a, const Scalar& s);
DArray operator*(DArray a, const Scalar& s);
DArray operator/(DArray a, const Scalar& s);
DArray operator+(const Scalar& s, DArray a);
DArray operator-(const Scalar& s, DArray a);
DArray operator*(const Scalar& s, DArray a);
DArray operator/(const Scalar& s, DArray a);
DArray operator-(DArray a);
DArray exp(DArray a);
DArray log(DArray a);
DArray sqrt(DArray a);
DArray sin(DArray a);
DArray cos(DArray a);
DArray tanh(DArray a);
DArray abs(DArray a);
DArray maximum(DArray a, DArray b);
DArray minimum(DArray a, DArray b);
DArray astype(DArray a, DType t);

// Reductions over `axes` (all when empty; negative axes count from the end): over sharded
// dimensions a partial result (combined lazily), over the others local work only.
DArray sum(DArray a, const Axes& axes = {});
DArray prod(DArray a, const Axes& axes = {});
DArray max(DArray a, const Axes& axes = {});
DArray min(DArray a, const Axes& axes = {});
DArray mean(DArray a, const Axes& axes = {});
inline DArray sum(DArray a, int axis) { return sum(std::move(a), Axes{axis}); }
inline DArray prod(DArray a, int axis) { return prod(std::move(a), Axes{axis}); }
inline DArray max(DArray a, int axis) { return max(std::move(a), Axes{axis}); }
inline DArray min(DArray a, int axis) { return min(std::move(a), Axes{axis}); }
inline DArray mean(DArray a, int axis) { return mean(std::move(a), Axes{axis}); }

// 2-D matmul. By the shardings: a local GEMM (rows of A or columns of B split, the contraction
// dimension whole), GEMM + allreduce (the contraction dimension split: a partial result), or
// allgather + GEMM (a split the GEMM cannot use). The plan names the choice.
DArray matmul(const DArray& a, const DArray& b);

// ------------------------------------------------------------------ introspection
// One step of the program that made a DArray: per-shard kernels, or a collective.
struct Step {
  std::string kind;        // "kernels", "collective", "slice", "gemm"
  std::string collective;  // NCCL's name: allreduce, allgather, reducescatter, alltoall, broadcast
  std::string op;          // a reduction's op (sum, max ...), or empty
  std::string mesh_axis;   // the mesh axis it runs over
  int ranks = 0;           // ranks in each group (the mesh axis's size)
  int groups = 0;          // independent groups (the mesh's other coordinates)
  int64_t bytes = 0;       // bytes each rank sends (NCCL's count times the item size)
  std::string why;         // what needed it
  int kernels = 0;         // "kernels": kernels per shard
  std::string detail;      // "kernels": the per-shard plan (shard 0's) as text
};
// The steps that made d, in order, ending with the pending ones (its shards' lazy work and a
// partial result's allreduce), without running anything.
std::vector<Step> plan(const DArray& d);
// The steps as text: each per-shard plan (with_source: the kernels' source) and each
// collective with its bytes.
std::string plan_dump(const DArray& d, bool with_source = false);

}  // namespace cufuse::dist
